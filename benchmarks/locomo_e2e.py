"""LoCoMo end to end: each turn captured through the offline extractor, as a Claude Code hook hands it over, and
what survives extraction. Used by ``benchmarks/locomo.py --capture extractor``; nothing here is product code.

A turn goes in as ``capture --turn-from`` JSON with one user message, the speaker's words (the shape
:meth:`suzent_cli.hooks.transcript.Turn.as_input` builds from a transcript), through
:func:`suzent_cli.capture.extract_and_write` — the function ``suzent capture --turn-from`` and the hooks call —
with the offline extractor (no key, no network) and the write-path classifier's recall set
(:func:`suzent_cli.capture.known.recall_set_for`, what the CLI passes). It is written on the turn's session date
and time with ``session`` = the turn's dia_id, so every logged fact maps back to its turn. The index is brought up to
date after each LoCoMo session (sessions lie days apart; a scheduled ``suzent index`` or the server's watcher does
the same), so the classifier sees the earlier sessions as a real home would.

What a hook would not hand over is not handed over: the speaker's name (a hook's user is always the one person)
and a shared photo's caption (an image block is not text the extractor reads).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

SURVIVAL_FILE = ".locomo-survival.json"  # in a benchmark home: what capture kept of each turn (read back on reuse)


def turn_input(text: str) -> str:
    """One LoCoMo turn's words as ``capture --turn-from`` JSON: ``[{"role": "user", "content": text}]``."""
    return json.dumps([{"role": "user", "content": text}], ensure_ascii=False)


def capture_through_extractor(settings, conv, embedder) -> tuple[float, float]:
    """Capture every turn of ``conv`` (a :class:`locomo.Conversation`) through the offline extractor into the home
    of ``settings``, indexing with ``embedder`` after each session. Returns ``(capture s, index s)``: the seconds
    spent in :func:`extract_and_write` (extraction, recall-set lookup, classification, the locked appends) and in
    the indexer passes between sessions. Raises ``SystemExit`` when an indexer pass reports errors."""
    from suzent_cli.capture import extract_and_write
    from suzent_cli.capture.known import recall_set_for
    from suzent_cli.index.api import run_index

    known = recall_set_for(settings)
    capture_s = index_s = 0.0
    session = None
    for day, hhmm, dia_id, _ in conv.turns:
        number, words = conv.said[dia_id]
        if session is not None and number != session:
            started = time.perf_counter()
            report = run_index(settings, embedder=embedder)
            index_s += time.perf_counter() - started
            if report.errors:
                raise SystemExit(f"indexing {conv.sample_id} failed: {report.errors}")
        session = number
        started = time.perf_counter()
        extract_and_write(settings, turn_input(words), extractor_name="offline", known_facts=known,
                          day=day, time=hhmm, session=dia_id)
        capture_s += time.perf_counter() - started
    return capture_s, index_s


def kept_per_turn(settings) -> dict[str, dict[str, int]]:
    """``dia_id -> {"facts": n, "confirmations": n}`` read from the home: the fact lines logged under each session
    (the daily logs) and the restatements the classifier recorded instead (``confirmations.jsonl``; read it
    before a dream, which folds and empties it). Turns with neither are absent."""
    from suzent_cli.archive import list_logs, read_log
    from suzent_cli.vault.state.handoff import read_confirmations

    out: dict[str, dict[str, int]] = {}
    for _, path in list_logs(settings.paths.archive_dir):
        for fact in read_log(path):
            out.setdefault(fact.session, {"facts": 0, "confirmations": 0})["facts"] += 1
    for record in read_confirmations(settings.paths.state_dir):
        if record and record.get("session"):
            out.setdefault(record["session"], {"facts": 0, "confirmations": 0})["confirmations"] += 1
    return out


def save_survival(home: Path, kept: dict) -> None:
    (home / SURVIVAL_FILE).write_text(json.dumps(kept, sort_keys=True) + "\n", encoding="utf-8")


def load_survival(home: Path) -> dict | None:
    """What :func:`save_survival` wrote, or None (a home built before this file existed)."""
    try:
        return json.loads((home / SURVIVAL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Survival:
    """Sums over conversations of what extraction kept: turns, facts, and per category the evidence turns of the
    questions (one count per question and evidence id) that left at least one fact in the logs."""

    def __init__(self, categories: dict[int, str]) -> None:
        self.categories = categories
        self.turns = self.kept_turns = self.confirmed_only = self.facts = self.confirmations = 0
        self.evidence: Counter = Counter()
        self.evidence_kept: Counter = Counter()
        self.questions: Counter = Counter()
        self.questions_all: Counter = Counter()  # every evidence turn kept
        self.questions_any: Counter = Counter()  # at least one evidence turn kept
        self.ceiling: Counter = Counter()  # sum of per-question kept shares: the recall@∞ the capture allows

    def add(self, conv, kept: dict[str, dict[str, int]]) -> None:
        """Count ``conv``'s turns and questions against ``kept`` (:func:`kept_per_turn`)."""
        for _, _, dia_id, _ in conv.turns:
            k = kept.get(dia_id, {"facts": 0, "confirmations": 0})
            self.turns += 1
            self.facts += k["facts"]
            self.confirmations += k["confirmations"]
            self.kept_turns += k["facts"] > 0
            self.confirmed_only += k["facts"] == 0 and k["confirmations"] > 0
        for q in conv.questions:
            alive = {e for e in q.evidence if kept.get(e, {}).get("facts", 0) > 0}
            self.evidence[q.category] += len(q.evidence)
            self.evidence_kept[q.category] += len(alive)
            self.questions[q.category] += 1
            self.questions_all[q.category] += alive == q.evidence
            self.questions_any[q.category] += bool(alive)
            self.ceiling[q.category] += len(alive) / len(q.evidence)

    def summary(self) -> dict:
        """Counts and percentages (one decimal), overall and by category name."""
        pct = lambda a, b: round(100.0 * a / b, 1) if b else None  # noqa: E731

        def row(cats) -> dict:
            ev, kept = sum(self.evidence[c] for c in cats), sum(self.evidence_kept[c] for c in cats)
            qs = sum(self.questions[c] for c in cats)
            return {"evidence": ev, "evidence_kept": kept, "evidence_kept_pct": pct(kept, ev), "questions": qs,
                    "all_evidence_kept_pct": pct(sum(self.questions_all[c] for c in cats), qs),
                    "any_evidence_kept_pct": pct(sum(self.questions_any[c] for c in cats), qs),
                    "recall_ceiling": pct(sum(self.ceiling[c] for c in cats), qs)}

        return {"turns": self.turns, "turns_with_facts": self.kept_turns,
                "turns_confirmation_only": self.confirmed_only,
                "turns_dropped": self.turns - self.kept_turns - self.confirmed_only,
                "facts": self.facts, "facts_per_turn": round(self.facts / self.turns, 3) if self.turns else None,
                "confirmations": self.confirmations,
                "by_category": {name: row([c]) for c, name in self.categories.items()},
                "all": row(list(self.categories))}
