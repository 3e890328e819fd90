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

Survival only, for quick work on the extractor (no home, no index, no recall; seconds, not minutes)::

    PYTHONPATH=. python benchmarks/locomo_e2e.py ../shared/data/locomo/locomo-dev.json [--conversations N]
                                                 [--skip N] [--json OUT] [--dropped OUT.jsonl]

Each turn is parsed and extracted exactly as :func:`extract_and_write` does (the same JSON, ``parse_turn``, the
offline extractor) and the facts it returns are counted; nothing is written, so the write-path classifier does not
run. That classifier needs the recall set (an index) and only turns a word-for-word restatement of a known fact
into a confirmation instead of a log line (11 of 4,124 dev turns in the full run), so the counts here can be a
few turns above the full mode's. ``--dropped`` writes each evidence turn that left no fact (one JSON line:
sample, dia_id, category, words) to look at.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def extracted_per_turn(conv) -> dict[str, dict[str, int]]:
    """``dia_id -> {"facts": n, "confirmations": 0}`` for the turns of ``conv`` the offline extractor keeps facts
    from, each turn handed over as :func:`capture_through_extractor` hands it (:func:`turn_input`, ``parse_turn``),
    nothing written. Turns that leave no fact are absent (the shape of :func:`kept_per_turn`)."""
    from suzent_cli.capture.extract.offline import OfflineExtractor
    from suzent_cli.capture.extract.turns import parse_turn

    extractor = OfflineExtractor()
    out: dict[str, dict[str, int]] = {}
    for _, _, dia_id, _ in conv.turns:
        facts = extractor.extract(parse_turn(turn_input(conv.said[dia_id][1])), [])
        if facts:
            out[dia_id] = {"facts": len(facts), "confirmations": 0}
    return out


def render_survival(sv: dict) -> str:
    """The survival table of a :meth:`Survival.summary` as markdown (the shape ``locomo.py`` prints)."""
    lines = [f"{sv['turns']} turns, {sv['turns_with_facts']} with at least one fact, {sv['turns_dropped']} "
             f"dropped; {sv['facts']} facts ({sv['facts_per_turn']:.2f} a turn)", "",
             "| category | evidence turns | kept | kept % | questions | all evidence kept % | any evidence kept % | "
             "recall ceiling |", "|---|---|---|---|---|---|---|---|"]
    for name, row in [*sv["by_category"].items(), ("all", sv["all"])]:
        lines.append(f"| {name} | {row['evidence']} | {row['evidence_kept']} | {row['evidence_kept_pct']} | "
                     f"{row['questions']} | {row['all_evidence_kept_pct']} | {row['any_evidence_kept_pct']} | "
                     f"{row['recall_ceiling']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Survival only (see the module docstring). Exit 0, or 2 with one line when the data cannot be read."""
    import locomo  # the sibling script: the loader and the categories

    parser = argparse.ArgumentParser(description="LoCoMo: how many evidence turns the offline extractor keeps")
    parser.add_argument("data", type=Path, help="path to locomo-dev.json (or locomo10.json)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N conversations (before --conversations)")
    parser.add_argument("--json", type=Path, default=None, help="also write the summary as JSON here")
    parser.add_argument("--dropped", type=Path, default=None,
                        help="write the evidence turns that left no fact here (JSON lines)")
    args = parser.parse_args(argv)
    try:
        convs = locomo.load_conversations(args.data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: cannot read LoCoMo data {args.data}: {str(exc).splitlines()[0] if str(exc) else exc!r}",
              file=sys.stderr)
        return 2
    convs = convs[args.skip:]
    if args.conversations is not None:
        convs = convs[:args.conversations]
    survival = Survival(locomo.CATEGORIES)
    dropped = []
    started = time.perf_counter()
    for conv in convs:
        kept = extracted_per_turn(conv)
        survival.add(conv, kept)
        seen: set[str] = set()
        for q in conv.questions:
            for e in sorted(q.evidence - set(kept) - seen):
                seen.add(e)
                dropped.append({"sample": conv.sample_id, "dia_id": e, "category": locomo.CATEGORIES[q.category],
                                "words": conv.said[e][1]})
    summary = survival.summary()
    print(f"survival only (offline extractor, no classifier): {len(convs)} conversations, "
          f"{time.perf_counter() - started:.1f} s\n")
    print(render_survival(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.dropped:
        args.dropped.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dropped),
                                encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
