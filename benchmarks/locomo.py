"""LoCoMo evidence retrieval: how well does recall find the dialog turns that answer a question?

Usage::

    python benchmarks/locomo.py ../shared/data/locomo/locomo-dev.json [--conversations N] [--modes hybrid,fts]
                                [--skip N] [--context-window N] [--cache DIR] [--json OUT]
                                [--capture fact,extractor] [--dream [after|both]] [--resident] [--subject-boost B]
                                [--when-boost B]

``--skip 4`` starts after the first 4 conversations (with ``--conversations 4``: the split-half protocol's tuning
half is ``--conversations 4``, its check half ``--skip 4``). ``--cache DIR`` keeps each conversation's home (its
captured logs and index) under ``DIR/<sample_id>-cw<window>[-extractor][-dream]`` and reuses it on the next run, so
ranking changes can be measured without re-embedding; delete the directory after changing capture, indexing or
dream code.

The data set (Maharana et al., ACL 2024; CC BY-NC 4.0) is NOT part of this repository: it is read from the path
given, and the benchmark exits with a message when that file is absent.

For each conversation, in a fresh temporary home, the turns are captured on their session's date and time with
``session`` = the turn's dia_id, so a hit maps back to its turn:

* ``--capture fact`` (default): every turn is one fact ``"<speaker>: <text>"`` (plus a shared photo's caption);
* ``--capture extractor``: every turn goes through the offline extractor and the write-path classifier as a hook
  hands it over (:mod:`locomo_e2e`); a turn may leave several facts, a reworded one, or none. The report then
  says how many evidence turns left at least one fact (per category) and the recall ceiling that allows.

The index is built with the library API, and every question of categories 1-4 is recalled in each mode. With
``--dream`` the rules dream (and its reconcile follow-up) runs over the home first; ``--dream both`` recalls before
and after it on the same capture. A hit shows the turns it carries (:func:`hit_turns`): a log row its session, a
vault claim the turns its ``source: F:L`` citations point at, any other row (MEMORY.md) the turns that logged its
lines' exact text. Scores, averaged over questions, overall and per category:

* ``recall@k``: share of the question's evidence turns among the turns the top hits show (the first k);
* ``any@k``: 1 if at least one evidence turn is among them.

Malformed or dangling evidence ids are skipped (a question left with none is skipped) and counted in the report.
Nothing in the product knows about LoCoMo: this script only hands turns to capture (capture-side formatting).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import locomo_e2e  # the sibling module: the extractor capture

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import load_embedder
from suzent_cli.index.store import ReadStore
from suzent_cli.recall import MODES, search

KS = (1, 5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_MODE = "hybrid"
_EVIDENCE = re.compile(r"^D\d+:\d+$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass
class Question:
    """One scored question: its text, category and the set of evidence dia_ids that exist in the conversation."""

    text: str
    category: int
    evidence: set[str]


@dataclass
class Conversation:
    """Turns as ``(session date, HH:MM, dia_id, fact content)`` in conversation order, and the questions.
    ``said`` maps each dia_id to ``(session number, the speaker's words)``: what a hook would hand the extractor."""

    sample_id: str
    turns: list[tuple[dt.date, str, str, str]]
    questions: list[Question]
    skipped_ids: int = 0
    skipped_questions: int = 0
    said: dict[str, tuple[int, str]] = field(default_factory=dict)


@dataclass
class ModeScores:
    """Sums of per-question scores of one mode (divide by ``n``), the same per category, recall seconds."""

    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    any: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    cat_n: dict[int, int] = field(default_factory=lambda: {c: 0 for c in CATEGORIES})
    cat_recall: dict[int, dict[int, float]] = field(
        default_factory=lambda: {c: {k: 0.0 for k in KS} for c in CATEGORIES})
    cat_any: dict[int, dict[int, float]] = field(
        default_factory=lambda: {c: {k: 0.0 for k in KS} for c in CATEGORIES})
    seconds: float = 0.0
    times: list[float] = field(default_factory=list)

    def add(self, question: Question, ranked: list[str]) -> None:
        """Score one question given the ranked dia_ids of its hits."""
        self.n += 1
        ev = question.evidence
        self.cat_n[question.category] += 1
        for k in KS:
            found = len(ev & set(ranked[:k]))
            self.recall[k] += found / len(ev)
            self.any[k] += 1.0 if found else 0.0
            self.cat_recall[question.category][k] += found / len(ev)
            self.cat_any[question.category][k] += 1.0 if found else 0.0

    def summary(self) -> dict:
        """Percentages (one decimal) of every score, overall and by category, and the mean and median recall time
        per query in milliseconds."""
        pct = lambda s, n: round(100.0 * s / n, 1) if n else None  # noqa: E731
        return {
            "questions": self.n,
            "recall": {f"@{k}": pct(v, self.n) for k, v in self.recall.items()},
            "any": {f"@{k}": pct(v, self.n) for k, v in self.any.items()},
            "recall@10_by_category": {CATEGORIES[c]: pct(self.cat_recall[c][10], self.cat_n[c]) for c in CATEGORIES},
            "by_category": {CATEGORIES[c]: {"questions": self.cat_n[c],
                                            **{f"R@{k}": pct(self.cat_recall[c][k], self.cat_n[c]) for k in KS},
                                            **{f"any@{k}": pct(self.cat_any[c][k], self.cat_n[c]) for k in KS}}
                            for c in CATEGORIES},
            "ms_per_query": round(1000.0 * self.seconds / self.n, 1) if self.n else None,
            "ms_median": round(1000.0 * statistics.median(self.times), 1) if self.times else None,
        }


def parse_session_datetime(text: str) -> tuple[dt.date, str]:
    """``"1:56 pm on 8 May, 2023"`` -> ``(date(2023, 5, 8), "13:56")``."""
    stamp = dt.datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return stamp.date(), stamp.strftime("%H:%M")


def turn_content(turn: dict) -> str:
    """A conversation turn as one fact: ``"<speaker>: <text>"`` plus the caption of a shared photo, if any."""
    content = f"{turn['speaker']}: {turn['text']}"
    caption = (turn.get("blip_caption") or "").strip()
    if caption:
        content += f" [shares a photo: {caption}]"
    return content


def load_conversations(path: Path) -> list[Conversation]:
    """Read the LoCoMo JSON at ``path`` into :class:`Conversation` objects (categories 1-4 only)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for sample in data:
        conv = sample["conversation"]
        sessions = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.match(key)))
        turns = []
        said: dict[str, tuple[int, str]] = {}
        for n in sessions:
            stamp = conv.get(f"session_{n}_date_time")
            if not stamp or not conv[f"session_{n}"]:
                continue
            day, hhmm = parse_session_datetime(stamp)
            turns += [(day, hhmm, t["dia_id"], turn_content(t)) for t in conv[f"session_{n}"]]
            said.update({t["dia_id"]: (n, t["text"]) for t in conv[f"session_{n}"]})
        known = {t[2] for t in turns}
        c = Conversation(sample["sample_id"], turns, [], said=said)
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            ids = [str(e).strip() for e in qa.get("evidence") or []]
            good = {e for e in ids if _EVIDENCE.match(e) and e in known}
            c.skipped_ids += sum(1 for e in ids if not (_EVIDENCE.match(e) and e in known))
            if not good:
                c.skipped_questions += 1
                continue
            c.questions.append(Question(qa["question"], qa["category"], good))
        out.append(c)
    return out


CAPTURES = ("fact", "extractor")


def build_home(conv: Conversation, home: Path, embedder, context_window: int | None = None,
               capture: str = "fact") -> tuple[object, float, float]:
    """Capture every turn of ``conv`` into a fresh home and index it. ``capture``: ``fact`` (each turn one fact,
    :func:`write_facts`) or ``extractor`` (each turn through the offline extractor, :mod:`locomo_e2e`, indexed
    after each session). What capture kept of each turn is saved in the home (``locomo_e2e.SURVIVAL_FILE``).
    Returns ``(settings, capture s, index s)``."""
    if context_window is not None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(f"[index]\ncontext_window = {context_window}\n", encoding="utf-8")
    settings = resolve_settings(home=home, env={})
    if capture == "extractor":
        capture_s, index_s = locomo_e2e.capture_through_extractor(settings, conv, embedder)
    else:
        started = time.perf_counter()
        for day, hhmm, dia_id, content in conv.turns:
            write_facts(settings, [Fact(content=content)], day=day, time=hhmm, session=dia_id)
        capture_s, index_s = time.perf_counter() - started, 0.0
    started = time.perf_counter()
    report = run_index(settings, embedder=embedder)
    if report.errors:
        raise SystemExit(f"indexing {conv.sample_id} failed: {report.errors}")
    index_s += time.perf_counter() - started
    locomo_e2e.save_survival(home, locomo_e2e.kept_per_turn(settings))
    return settings, capture_s, index_s


@dataclass
class Built:
    """A home ready to recall from, the seconds it took here (0 when reused from ``--cache``), and what capture
    kept of each turn (:func:`locomo_e2e.kept_per_turn`, as saved before any dream)."""

    settings: object
    capture: float = 0.0
    index: float = 0.0
    dream: float = 0.0
    kept: dict | None = None


def home_name(conv: Conversation, context_window: int | None, capture: str = "fact", dream: bool = False) -> str:
    """The ``--cache`` directory name of a home: ``<sample_id>-cw<window>[-<capture>][-dream]`` (``fact`` homes
    keep the names they had before ``--capture`` existed)."""
    window = "default" if context_window is None else context_window
    return f"{conv.sample_id}-cw{window}{'' if capture == 'fact' else '-' + capture}{'-dream' if dream else ''}"


_DONE = ".locomo-built"


def prepare(conv: Conversation, tmp: Path, embedder, context_window: int | None, cache: Path | None,
            capture: str = "fact", dream: bool = False, before: Built | None = None) -> Built:
    """The home to recall from for one capture mode, before or after a dream.

    Without ``cache`` the home lives under ``tmp``: built there, and for ``dream`` the ``before`` home (already
    recalled from) is dreamed in place, or a new one built and dreamed. With ``cache`` the home kept under
    ``cache/<home_name>`` is reused when its build finished (a half-built one is rebuilt); a dreamed home is made
    from a copy of ``before`` when given, so capture and index run once for both phases."""
    if cache is None:
        if dream and before is not None:
            return Built(before.settings, dream=dream_home(before.settings, embedder, conv), kept=before.kept)
        home = tmp / f"home-{capture}"
        settings, c_s, i_s = build_home(conv, home, embedder, context_window, capture)
        built = Built(settings, c_s, i_s, kept=locomo_e2e.load_survival(home))
        if dream:
            built.dream = dream_home(settings, embedder, conv)
        return built
    home = cache / home_name(conv, context_window, capture, dream)
    if (home / _DONE).is_file():
        return Built(resolve_settings(home=home, env={}), kept=locomo_e2e.load_survival(home))
    if home.exists():
        shutil.rmtree(home)
    if dream and before is not None:
        shutil.copytree(before.settings.paths.home, home, symlinks=True)
        (home / _DONE).unlink(missing_ok=True)
        built = Built(resolve_settings(home=home, env={}), kept=before.kept)
    else:
        settings, c_s, i_s = build_home(conv, home, embedder, context_window, capture)
        built = Built(settings, c_s, i_s, kept=locomo_e2e.load_survival(home))
    if dream:
        built.dream = dream_home(built.settings, embedder, conv)
    (home / _DONE).write_text(embedder.name + "\n", encoding="utf-8")
    return built


def home_for(conv: Conversation, tmp: Path, embedder, context_window: int | None,
             cache: Path | None, dream: bool = False, capture: str = "fact") -> tuple[object, float, float]:
    """:func:`prepare` as ``(settings, capture s, index s)`` (for ``recall_latency.py``)."""
    built = prepare(conv, tmp, embedder, context_window, cache, capture, dream)
    return built.settings, built.capture, built.index


def dream_home(settings, embedder, conv: Conversation) -> float:
    """Run the dream (rules engine, with its reconcile follow-up) over every log of the home, as cron would the
    day after the last session. Returns seconds."""
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner

    last = max(day for day, _, _, _ in conv.turns)
    dreamer = resolve_settings(home=settings.paths.home, now=f"{last + dt.timedelta(days=1)}T12:00", env={})
    runner = DreamRunner(dreamer, DreamConfig(), engine="rules", embedder=embedder)
    started = time.perf_counter()
    while (result := runner.tick(force=True)).outcome == "ingested":
        failed = [step for step in result.steps if not step.ok]
        if failed:
            raise SystemExit(f"dream follow-up failed for {conv.sample_id}: {failed[0].error}")
    return time.perf_counter() - started


_SOURCE = re.compile(r"· source: (\d{4}-\d{2}-\d{2}\.md):(\d+)")
_BULLET = re.compile(r"^\s*[-*+]\s+(?:\[[^\]\n]*\]\s+)?")


@dataclass
class Provenance:
    """Where each logged fact came from: ``lines`` maps ``(log file name, line)`` to the session (dia_id) it was
    captured under; ``texts`` maps a fact's :func:`~suzent_cli.vault.claims.claim_key` to the sessions that logged
    that exact text (for a row that restates facts without citing them, such as a MEMORY.md line)."""

    lines: dict[tuple[str, int], str] = field(default_factory=dict)
    texts: dict[str, list[str]] = field(default_factory=dict)


def provenance_map(settings) -> Provenance:
    """The :class:`Provenance` of every fact line in the daily logs of ``settings``' home."""
    from suzent_cli.archive import list_logs, read_log
    from suzent_cli.vault.claims import claim_key

    prov = Provenance()
    for _, path in list_logs(settings.paths.archive_dir):
        for f in read_log(path):
            if f.session:
                prov.lines[(path.name, f.line)] = f.session
                sessions = prov.texts.setdefault(claim_key(f.content), [])
                if f.session not in sessions:
                    sessions.append(f.session)
    return prov


def hit_turns(hit, provenance: Provenance | None) -> list[str]:
    """The turns (dia_ids) one hit shows, in order, each once.

    * A daily-log row: its session, the turn it was captured from (also when the extractor reworded the turn).
    * A vault row: the session of every log line its claims cite (``hit.cites``, else ``· source: F:L`` in its
      text), so a chunk holding ten claims shows ten turns.
    * Any other row (a MEMORY.md chunk, a vault row citing nothing known): each of its lines whose text, without
      a list marker or category, is exactly a logged fact shows the turns that logged it.

    An unknown citation or line shows nothing. Without ``provenance`` only the session is used."""
    from suzent_cli.vault.claims import claim_key

    if hit.session and hit.source_type != "notebook":
        return [hit.session]
    if provenance is None:
        return [hit.session] if hit.session else []
    out: list[str] = []
    cites = list(getattr(hit, "cites", None) or []) or [f"{f}:{n}" for f, n in _SOURCE.findall(hit.content)]
    for cite in cites:
        name, _, line = cite.rpartition(":")
        turn = provenance.lines.get((name, int(line))) if line.isdigit() else None
        if turn and turn not in out:
            out.append(turn)
    if not out:
        from suzent_cli.vault.claims import plain_content

        for line in plain_content(hit.content).split("\n"):
            for turn in provenance.texts.get(claim_key(_BULLET.sub("", line)), []) if line.strip() else []:
                if turn not in out:
                    out.append(turn)
    return out


def ranked_turns(hits, provenance: Provenance | None) -> list[str]:
    """The dia_ids a ranked hit list shows, in order (:func:`hit_turns` of each hit, concatenated): a hit that
    shows several turns uses several of the k places."""
    return [turn for h in hits for turn in hit_turns(h, provenance)]


def evaluate(store: ReadStore, embedder, questions: list[Question], modes: list[str], scores: dict[str, ModeScores],
             search_fn=search, provenance: Provenance | None = None, rerank_top: int = 0,
             subject_boost: float | None = None, when_boost: float | None = None) -> None:
    """Recall every question in every mode and add its scores to ``scores[mode]`` (``rerank_top``: the setting
    ``recall.rerank``; ``subject_boost`` / ``when_boost``: the settings ``recall.subject_boost`` /
    ``recall.when_boost``, None for their default; all passed
    to :func:`suzent_cli.recall.search`)."""
    extra = {"rerank_top": rerank_top} if rerank_top else {}
    if subject_boost is not None:
        extra["subject_boost"] = subject_boost
    if when_boost is not None:
        extra["when_boost"] = when_boost
    for mode in modes:
        acc = scores[mode]
        for q in questions:
            started = time.perf_counter()
            hits = search_fn(store, embedder, q.text, mode=mode, limit=max(KS), **extra)
            took = time.perf_counter() - started
            acc.seconds += took
            acc.times.append(took)
            acc.add(q, ranked_turns(hits, provenance))


def _phase(dreamed: bool) -> str:
    return "after dream" if dreamed else "no dream"


def render(result: dict) -> str:
    """The report as plain text: one table of every run (capture mode × dream) and mode, the same by category,
    what extraction kept, times, anchors."""
    lines = [f"LoCoMo evidence retrieval — {result['conversations']} conversations, {result['turns']} turns, "
             f"{result['questions']} questions (categories 1-4); skipped {result['skipped_evidence_ids']} evidence ids "
             f"and {result['skipped_questions']} questions without resolvable evidence; context_window="
             f"{result['context_window']}; embedder {result['embedder']}", ""]
    head = ("| capture | dream | mode | " + " | ".join(f"R@{k}" for k in KS) + " | "
            + " | ".join(f"any@{k}" for k in KS) + " | ms/query |")
    lines += [head, "|" + "---|" * (4 + 2 * len(KS))]
    for run in result["runs"]:
        for mode, s in run["modes"].items():
            lines.append(f"| {run['capture']} | {_phase(run['dream'])} | {mode} | "
                         + " | ".join(f"{s['recall'][f'@{k}']:.1f}" for k in KS) + " | "
                         + " | ".join(f"{s['any'][f'@{k}']:.1f}" for k in KS) + f" | {s['ms_per_query']:.1f} |")
    lines += ["", "by category, R@5 / R@10 (any@5 / any@10):", "",
              "| capture | dream | mode | " + " | ".join(f"{c} (n)" for c in CATEGORIES.values()) + " |",
              "|" + "---|" * (3 + len(CATEGORIES))]
    for run in result["runs"]:
        for mode, s in run["modes"].items():
            cells = [f"{v['R@5']:.1f} / {v['R@10']:.1f} ({v['any@5']:.1f} / {v['any@10']:.1f}; {v['questions']})"
                     for v in s["by_category"].values()]
            lines.append(f"| {run['capture']} | {_phase(run['dream'])} | {mode} | " + " | ".join(cells) + " |")
    for capture, sv in result["survival"].items():
        lines += ["", f"what capture kept ({capture}): {sv['turns']} turns, {sv['turns_with_facts']} with at least one "
                  f"logged fact, {sv['turns_confirmation_only']} only confirmations, {sv['turns_dropped']} dropped; "
                  f"{sv['facts']} facts ({sv['facts_per_turn']:.2f} a turn), {sv['confirmations']} confirmations", "",
                  "| category | evidence turns | kept | kept % | questions | all evidence kept % | "
                  "any evidence kept % | recall ceiling |", "|---|---|---|---|---|---|---|---|"]
        for name, row in [*sv["by_category"].items(), ("all", sv["all"])]:
            lines.append(f"| {name} | {row['evidence']} | {row['evidence_kept']} | {row['evidence_kept_pct']} | "
                         f"{row['questions']} | {row['all_evidence_kept_pct']} | {row['any_evidence_kept_pct']} | "
                         f"{row['recall_ceiling']} |")
    lines += ["", "| capture | dream | capture s | index s | dream s | recall s |", "|---|---|---|---|---|---|"]
    for run in result["runs"]:
        t = run["seconds"]
        lines.append(f"| {run['capture']} | {_phase(run['dream'])} | {t['capture']:.1f} | {t['index']:.1f} | "
                     f"{t['dream']:.1f} | {t['recall']:.1f} |")
    lines += ["", f"model load {result['seconds']['model_load']:.1f} s; times are 0 for homes reused from --cache",
              "published anchors (LoCoMo paper, DRAGON, dialog turns): R@5 56.7, R@10 66.2, R@25 76.7",
              f"command: {result['command']}"]
    return "\n".join(lines)


@dataclass
class Run:
    """The scores and seconds of one capture mode, before or after the dream."""

    capture: str
    dream: bool
    scores: dict[str, ModeScores]
    seconds: dict[str, float] = field(default_factory=lambda: {"capture": 0.0, "index": 0.0, "dream": 0.0})

    def as_dict(self) -> dict:
        return {"capture": self.capture, "dream": self.dream,
                "seconds": {**{k: round(v, 2) for k, v in self.seconds.items()},
                            "recall": round(sum(s.seconds for s in self.scores.values()), 2)},
                "modes": {m: s.summary() for m, s in self.scores.items()}}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report (and write ``--json``). Exit 2 when the data file is absent."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="path to locomo-dev.json (or locomo10.json)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N conversations (before --conversations)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep (and reuse) each conversation's captured and indexed home under this directory")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    parser.add_argument("--capture", default="fact",
                        help="comma-separated subset of fact,extractor: each turn logged as one fact (default), "
                             "or each turn through the offline extractor as a hook hands it over")
    parser.add_argument("--context-window", type=int, default=None,
                        help="index.context_window for the temporary homes (default: the product default)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="embedder spec (default: the bundled model)")
    parser.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    parser.add_argument("--resident", action="store_true",
                        help="recall through a store kept resident, as a warm server's (ReadStore.keep_resident: "
                             "BM25 and, under the ANN threshold, vectors from memory)")
    parser.add_argument("--rerank", type=int, default=0, metavar="N",
                        help="re-rank the top N candidates by their own text (the setting recall.rerank; 0: off)")
    parser.add_argument("--subject-boost", type=float, default=None, metavar="B",
                        help="relevance a row whose subject is a name the query uses gains (the setting "
                             "recall.subject_boost; default: its default; 0: off, the ranking before issue 27)")
    parser.add_argument("--when-boost", type=float, default=None, metavar="B",
                        help="relevance a row that says when gains for a query asking when (the setting "
                             "recall.when_boost; default: its default; 0: off, the ranking before its second pass)")
    parser.add_argument("--dream", nargs="?", const="after", default=None, choices=("after", "both"),
                        help="run the dream (rules engine + reconcile) over each home before recalling ('both': "
                             "recall before and after it, on the same capture); vault hits map back to turns "
                             "through their claims' provenance")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}: download locomo10.json from snap-research/locomo "
              "(CC BY-NC 4.0; never copy it into this repository) and pass its path.", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes must be a subset of {','.join(MODES)}")
    captures = [c.strip() for c in args.capture.split(",") if c.strip()]
    if not captures or any(c not in CAPTURES for c in captures) or len(set(captures)) < len(captures):
        parser.error(f"--capture must be a subset of {','.join(CAPTURES)}")
    phases = {None: [False], "after": [True], "both": [False, True]}[args.dream]

    try:
        convs = load_conversations(args.data)[args.skip:]
    except (ValueError, KeyError, TypeError) as exc:
        print(f"{args.data} is not LoCoMo JSON ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    convs = convs[: args.conversations] if args.conversations is not None else convs
    started = time.perf_counter()
    embedder = load_embedder(args.model)
    model_load = time.perf_counter() - started
    runs = {(c, d): Run(c, d, {m: ModeScores() for m in modes}) for c in captures for d in phases}
    survival = {c: locomo_e2e.Survival(CATEGORIES) for c in captures}
    window = None
    for conv in convs:
        with tempfile.TemporaryDirectory(prefix="suzent-locomo-") as tmp:
            for capture in captures:
                before = None
                for dreamed in phases:
                    built = prepare(conv, Path(tmp), embedder, args.context_window, args.cache, capture, dreamed,
                                    before)
                    before = before or built
                    settings = built.settings
                    window = settings.context_window
                    run = runs[(capture, dreamed)]
                    for key in ("capture", "index", "dream"):
                        run.seconds[key] += getattr(built, key)
                    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
                    if args.resident and not store.keep_resident(wait=True):
                        print(f"  {conv.sample_id}: no resident copy (over the cap): lance answers", file=sys.stderr)
                    evaluate(store, embedder, conv.questions, modes, run.scores, provenance=provenance_map(settings),
                             rerank_top=args.rerank, subject_boost=args.subject_boost,
                             when_boost=args.when_boost)
                    if dreamed == phases[0]:
                        survival[capture].add(conv, built.kept if built.kept is not None
                                              else locomo_e2e.kept_per_turn(settings))
                    print(f"  {conv.sample_id} {capture} {_phase(dreamed)}: {len(conv.turns)} turns, "
                          f"{len(conv.questions)} questions, capture {built.capture:.1f} s, index {built.index:.1f} s,"
                          f" dream {built.dream:.1f} s", file=sys.stderr, flush=True)

    result = {
        "command": shlex.join([Path(sys.executable).name, *sys.argv]) if argv is None
        else shlex.join(["python", "benchmarks/locomo.py", *argv]),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "embedder": embedder.name,
        "dream": args.dream,
        "context_window": window,
        "conversations": len(convs),
        "turns": sum(len(c.turns) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "skipped_evidence_ids": sum(c.skipped_ids for c in convs),
        "skipped_questions": sum(c.skipped_questions for c in convs),
        "seconds": {"model_load": round(model_load, 2)},
        "runs": [run.as_dict() for run in runs.values()],
        "survival": {c: s.summary() for c, s in survival.items()},
    }
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
