#!/usr/bin/env python3
"""Embedding amplification: embeddings computed per captured fact over a replay of many appends to one day.

Target (issue): <= 1.02 embeddings per captured fact.

Replay: a home with some older history (already indexed before the replay starts, not counted), then N captures
of 1-3 ready fact lines each, all into today's log, each followed by an indexer pass. The embedder is the real
bundled all-MiniLM-L6-v2 (``--model hash`` for a quick run) wrapped in a counter of texts passed to ``encode``.
Three ways of keeping the index fresh are replayed, each in its own fresh home:

* ``capture --index``  — :func:`suzent_cli.index.api.reindex_files` on the touched log after every capture
* ``suzent index``     — :func:`suzent_cli.index.api.run_index` (changed files by mtime/size) after every capture
* ``suzent index``, ``context_window = 0`` — the same without neighbouring-fact context (the first two use the
  default ``index.context_window`` of the settings, which puts the preceding facts into each embedding text)

"naive" is what re-embedding the whole touched file at every step would cost (sum over steps of the facts in the
file), i.e. the amplification the row-id diff avoids.

Usage: python benchmarks/embed_amplification.py [--captures 300] [--model all-MiniLM-L6-v2|hash]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import synthetic_fact  # noqa: E402

from suzent_cli import archive  # noqa: E402
from suzent_cli.archive import Fact  # noqa: E402
from suzent_cli.capture import write_facts  # noqa: E402
from suzent_cli.config import resolve_settings  # noqa: E402
from suzent_cli.index.api import reindex_files, run_index  # noqa: E402
from suzent_cli.index.embed import load_embedder  # noqa: E402

TODAY = dt.date(2026, 11, 29)
TARGET = 1.02

class CountingEmbedder:
    """Wraps an embedder; counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.texts = 0
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.encode(texts)


def fact(rng: random.Random, i: int) -> Fact:
    return synthetic_fact(rng, i, "capture")


def seed_history(settings, rng: random.Random, days: int, per_day: int) -> None:
    for d in range(days, 0, -1):
        day = TODAY - dt.timedelta(days=d)
        for k in range(0, per_day, 3):
            archive.append_entry(settings.paths.archive_dir, day, f"{9 + k // 60:02d}:{k % 60:02d}", "seed",
                                 [fact(rng, k).clean() for _ in range(min(3, per_day - k))], timeout=10)


def replay(mode: str, embedder, captures: int, seed: int, history_days: int, history_per_day: int) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="suzent-amp-") as tmp:
        settings = resolve_settings(home=tmp, today=TODAY.isoformat(), env={})
        if mode == "index, context_window=0":
            settings = dataclasses.replace(settings, context_window=0)
        seed_history(settings, rng, history_days, history_per_day)
        counter = CountingEmbedder(embedder)
        setup = run_index(settings, embedder=counter)
        counter.texts = counter.calls = 0
        captured = naive = 0
        step_seconds = []
        for i in range(captures):
            facts = [fact(rng, i) for _ in range(rng.randint(1, 3))]
            minute = 8 * 60 + i
            result = write_facts(settings, facts, time=f"{(minute // 60) % 24:02d}:{minute % 60:02d}",
                                 session=f"s{i // 10}")
            captured += len(result.facts)
            in_file = len(archive.read_log(result.path))
            naive += in_file
            t0 = time.perf_counter()
            if mode == "capture --index":
                report = reindex_files(settings, [result.path], embedder=counter)
            else:
                report = run_index(settings, embedder=counter)
            step_seconds.append(time.perf_counter() - t0)
            if report.errors:
                raise SystemExit(f"indexer errors: {report.errors}")
        final = run_index(settings, embedder=counter)  # nothing left to do: must embed nothing more
        return {"mode": mode, "context_window": settings.context_window, "captures": captures, "facts": captured, "embeddings": counter.texts,
                "encode_calls": counter.calls, "naive": naive, "final_extra": final.embeddings,
                "rows": final.total_rows, "history_rows": setup.total_rows,
                "step_median": statistics.median(step_seconds), "in_file": in_file}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=300)
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="embedder spec (all-MiniLM-L6-v2, hash[:DIM], dir)")
    ap.add_argument("--history-days", type=int, default=30)
    ap.add_argument("--history-per-day", type=int, default=40)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    command = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/embed_amplification.py", *sys.argv[1:]])

    t0 = time.perf_counter()
    embedder = load_embedder(args.model)
    print(f"embedder {embedder.name} (dim {embedder.dim}) loaded in {time.perf_counter() - t0:.1f}s")
    results = []
    for mode in ("capture --index", "index", "index, context_window=0"):
        t0 = time.perf_counter()
        results.append(replay(mode, embedder, args.captures, args.seed, args.history_days, args.history_per_day))
        print(f"  replayed `{mode}` in {time.perf_counter() - t0:.1f}s")

    print()
    print(f"command: {command}")
    print(f"replay: {args.captures} captures of 1-3 facts into one day's log, an indexer pass after each; older "
          f"history {args.history_days} logs x {args.history_per_day} facts indexed beforehand (not counted)")
    print()
    print("| refresh after each capture | context window | facts captured | embeddings | embeddings / fact | naive full-file "
          "re-embeds | naive / fact | avoided | median pass s | final pass extra |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for r in results:
        amp = r["embeddings"] / r["facts"]
        worst = max(worst, amp)
        print(f"| `{r['mode']}` | {r['context_window']} | {r['facts']} | {r['embeddings']} | {amp:.3f} | {r['naive']} | "
              f"{r['naive'] / r['facts']:.1f} | {r['naive'] / max(r['embeddings'], 1):.0f}x | {r['step_median']:.3f} | "
              f"{r['final_extra']} |")
    print()
    print(f"today's log ends with {results[0]['in_file']} facts; index rows at the end: "
          + ", ".join(f"{r['mode']}: {r['rows']} ({r['history_rows']} history)" for r in results))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    print(f"target: <= {TARGET} embeddings per captured fact: {'MET' if worst <= TARGET else 'NOT MET'} "
          f"(worst {worst:.3f})")


if __name__ == "__main__":
    main()
