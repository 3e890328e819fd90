"""LoCoMo evidence retrieval: how well does recall find the dialog turns that answer a question?

Usage::

    python benchmarks/locomo.py ../shared/data/locomo/locomo-dev.json [--conversations N] [--modes hybrid,fts]
                                [--skip N] [--context-window N] [--cache DIR] [--json OUT]

``--skip 4`` starts after the first 4 conversations (with ``--conversations 4``: the split-half protocol's tuning
half is ``--conversations 4``, its check half ``--skip 4``). ``--cache DIR`` keeps each conversation's home (its
captured logs and index) under ``DIR/<sample_id>-cw<window>`` and reuses it on the next run, so ranking changes
can be measured without re-embedding; delete the directory after changing capture or indexing code.

The data set (Maharana et al., ACL 2024; CC BY-NC 4.0) is NOT part of this repository: it is read from the path
given, and the benchmark exits with a message when that file is absent.

For each conversation, in a fresh temporary home: every turn is captured as one fact on its session's date and
time (``session`` = the turn's dia_id, so a hit maps back to its turn), the index is built with the library API,
and every question of categories 1-4 is recalled in each mode. Scores, averaged over questions:

* ``recall@k``: share of the question's evidence turns among the top k hits;
* ``any@k``: 1 if at least one evidence turn is among the top k hits.

Malformed or dangling evidence ids are skipped (a question left with none is skipped) and counted in the report.
Nothing in the product knows about LoCoMo: this script only formats turns as facts (capture-side formatting).
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
    """Turns as ``(session date, HH:MM, dia_id, fact content)`` in conversation order, and the questions."""

    sample_id: str
    turns: list[tuple[dt.date, str, str, str]]
    questions: list[Question]
    skipped_ids: int = 0
    skipped_questions: int = 0


@dataclass
class ModeScores:
    """Sums of per-question scores of one mode (divide by ``n``), per-category recall@10 sums, recall seconds."""

    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    any: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    cat_n: dict[int, int] = field(default_factory=lambda: {c: 0 for c in CATEGORIES})
    cat_recall10: dict[int, float] = field(default_factory=lambda: {c: 0.0 for c in CATEGORIES})
    seconds: float = 0.0
    times: list[float] = field(default_factory=list)

    def add(self, question: Question, ranked: list[str]) -> None:
        """Score one question given the ranked dia_ids of its hits."""
        self.n += 1
        ev = question.evidence
        for k in KS:
            found = len(ev & set(ranked[:k]))
            self.recall[k] += found / len(ev)
            self.any[k] += 1.0 if found else 0.0
        self.cat_n[question.category] += 1
        self.cat_recall10[question.category] += len(ev & set(ranked[:10])) / len(ev)

    def summary(self) -> dict:
        """Percentages (one decimal) of every score, and the mean recall time per query in milliseconds."""
        pct = lambda s, n: round(100.0 * s / n, 1) if n else None  # noqa: E731
        return {
            "questions": self.n,
            "recall": {f"@{k}": pct(v, self.n) for k, v in self.recall.items()},
            "any": {f"@{k}": pct(v, self.n) for k, v in self.any.items()},
            "recall@10_by_category": {CATEGORIES[c]: pct(self.cat_recall10[c], self.cat_n[c]) for c in CATEGORIES},
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
        for n in sessions:
            stamp = conv.get(f"session_{n}_date_time")
            if not stamp or not conv[f"session_{n}"]:
                continue
            day, hhmm = parse_session_datetime(stamp)
            turns += [(day, hhmm, t["dia_id"], turn_content(t)) for t in conv[f"session_{n}"]]
        known = {t[2] for t in turns}
        c = Conversation(sample["sample_id"], turns, [])
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


def build_home(conv: Conversation, home: Path, embedder, context_window: int | None = None) -> tuple[object, float, float]:
    """Capture every turn of ``conv`` into a fresh home and index it. Returns ``(settings, capture s, index s)``."""
    if context_window is not None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(f"[index]\ncontext_window = {context_window}\n", encoding="utf-8")
    settings = resolve_settings(home=home, env={})
    started = time.perf_counter()
    for day, hhmm, dia_id, content in conv.turns:
        write_facts(settings, [Fact(content=content)], day=day, time=hhmm, session=dia_id)
    captured = time.perf_counter()
    report = run_index(settings, embedder=embedder)
    if report.errors:
        raise SystemExit(f"indexing {conv.sample_id} failed: {report.errors}")
    return settings, captured - started, time.perf_counter() - captured


def home_for(conv: Conversation, tmp: Path, embedder, context_window: int | None,
             cache: Path | None, dream: bool = False) -> tuple[object, float, float]:
    """A captured and indexed home for ``conv``: a fresh one under ``tmp``, or with ``cache`` the one kept there
    (built on first use; a home whose build did not finish is rebuilt). Returns ``(settings, capture s, index s)``."""
    suffix = "-dream" if dream else ""
    if cache is None:
        built = build_home(conv, tmp / "home", embedder, context_window)
        if dream:
            dream_home(built[0], embedder, conv)
        return built
    home = cache / f"{conv.sample_id}-cw{'default' if context_window is None else context_window}{suffix}"
    done = home / ".locomo-built"
    if done.is_file():
        return resolve_settings(home=home, env={}), 0.0, 0.0
    if home.exists():
        shutil.rmtree(home)
    built = build_home(conv, home, embedder, context_window)
    if dream:
        dream_home(built[0], embedder, conv)
    done.write_text(embedder.name + "\n", encoding="utf-8")
    return built


_SOURCE = re.compile(r"· source: (\d{4}-\d{2}-\d{2}\.md):(\d+)")


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


def provenance_map(settings) -> dict[tuple[str, int], str]:
    """``(log file name, line) -> dia_id`` (the session each turn was captured with), to map vault claims back."""
    from suzent_cli.archive import list_logs, read_log

    return {(path.name, f.line): f.session for _, path in list_logs(settings.paths.archive_dir)
            for f in read_log(path) if f.session}


def ranked_turns(hits, provenance: dict[tuple[str, int], str] | None) -> list[str]:
    """The dia_ids a ranked hit list shows, in order: a log row is its turn; a vault chunk is every turn its claims
    cite (``· source: F:L``), so a chunk holding ten claims uses ten of the k places."""
    out: list[str] = []
    for h in hits:
        if h.session:
            out.append(h.session)
        elif provenance is not None:
            out += [provenance[(f, int(n))] for f, n in _SOURCE.findall(h.content) if (f, int(n)) in provenance]
    return out


def evaluate(store: ReadStore, embedder, questions: list[Question], modes: list[str], scores: dict[str, ModeScores],
             search_fn=search, provenance: dict[tuple[str, int], str] | None = None) -> None:
    """Recall every question in every mode and add its scores to ``scores[mode]``."""
    for mode in modes:
        acc = scores[mode]
        for q in questions:
            started = time.perf_counter()
            hits = search_fn(store, embedder, q.text, mode=mode, limit=max(KS))
            took = time.perf_counter() - started
            acc.seconds += took
            acc.times.append(took)
            acc.add(q, ranked_turns(hits, provenance))


def render(result: dict) -> str:
    """The report as plain text: one table of all modes and k, per-category recall@10, times, anchors."""
    lines = [f"LoCoMo evidence retrieval — {result['conversations']} conversations, {result['turns']} turns, "
             f"{result['questions']} questions (categories 1-4){'; after a dream' if result.get('dream') else ''}; skipped {result['skipped_evidence_ids']} evidence ids "
             f"and {result['skipped_questions']} questions without resolvable evidence; context_window="
             f"{result['context_window']}", ""]
    head = "| mode | " + " | ".join(f"R@{k}" for k in KS) + " | " + " | ".join(f"any@{k}" for k in KS) + " | ms/query |"
    lines += [head, "|" + "---|" * (2 + 2 * len(KS))]
    for mode, s in result["modes"].items():
        lines.append(f"| {mode} | " + " | ".join(f"{s['recall'][f'@{k}']:.1f}" for k in KS) + " | "
                     + " | ".join(f"{s['any'][f'@{k}']:.1f}" for k in KS) + f" | {s['ms_per_query']:.1f} |")
    lines.append("median ms/query: " + ", ".join(f"{m} {s['ms_median']:.1f}" for m, s in result["modes"].items()))
    default = result["modes"].get(DEFAULT_MODE) or next(iter(result["modes"].values()))
    lines += ["", f"recall@10 by category ({DEFAULT_MODE if DEFAULT_MODE in result['modes'] else 'first mode'}): "
              + ", ".join(f"{c} {v:.1f}" for c, v in default["recall@10_by_category"].items()),
              f"wall time: capture {result['seconds']['capture']:.1f} s, index {result['seconds']['index']:.1f} s, "
              f"recall {result['seconds']['recall']:.1f} s, model load {result['seconds']['model_load']:.1f} s",
              "published anchors (LoCoMo paper, DRAGON, dialog turns): R@5 56.7, R@10 66.2, R@25 76.7",
              f"command: {result['command']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report (and write ``--json``). Exit 2 when the data file is absent."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="path to locomo-dev.json (or locomo10.json)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N conversations (before --conversations)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep (and reuse) each conversation's captured and indexed home under this directory")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    parser.add_argument("--context-window", type=int, default=None,
                        help="index.context_window for the temporary homes (default: the product default)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="embedder spec (default: the bundled model)")
    parser.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    parser.add_argument("--dream", action="store_true",
                        help="run the dream (rules engine + reconcile) over each home before recalling; vault hits "
                             "map back to turns through their claims' provenance")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}: download locomo10.json from snap-research/locomo "
              "(CC BY-NC 4.0; never copy it into this repository) and pass its path.", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes must be a subset of {','.join(MODES)}")

    convs = load_conversations(args.data)[args.skip:]
    convs = convs[: args.conversations] if args.conversations is not None else convs
    started = time.perf_counter()
    embedder = load_embedder(args.model)
    model_load = time.perf_counter() - started
    scores = {m: ModeScores() for m in modes}
    capture_s = index_s = 0.0
    window = None
    for conv in convs:
        with tempfile.TemporaryDirectory(prefix="suzent-locomo-") as tmp:
            settings, c_s, i_s = home_for(conv, Path(tmp), embedder, args.context_window, args.cache, args.dream)
            window = settings.context_window
            capture_s += c_s
            index_s += i_s
            store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
            evaluate(store, embedder, conv.questions, modes, scores,
                     provenance=provenance_map(settings) if args.dream else None)
        print(f"  {conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions, "
              f"capture {c_s:.1f} s, index {i_s:.1f} s", file=sys.stderr)

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
        "seconds": {"model_load": round(model_load, 2), "capture": round(capture_s, 2), "index": round(index_s, 2),
                    "recall": round(sum(s.seconds for s in scores.values()), 2)},
        "modes": {m: scores[m].summary() for m in modes},
    }
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
