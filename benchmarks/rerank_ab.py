#!/usr/bin/env python3
"""A/B: what the re-rank stage (``suzent_cli.index.rerank``: the top candidates' own text encoded against the
query) costs a warm recall with the bundled model, in one process, queries alternated so machine noise hits both.

The home: ``--rows`` synthetic facts (the vocabulary of benchmarks/index_throughput.py) indexed with the bundled
all-MiniLM-L6-v2 by the real indexer (``benchmarks/recall_latency.py``'s ``build``, cached under ``--cache``). Warm
as ``suzent serve`` holds it: one ReadStore, one loaded model encoding on one torch thread. Each query runs hybrid
with the stage on (``rerank_top = rerank.TOP``, the setting ``recall.rerank``) and off (0, the default), order
alternated; the first ``--warmup``
queries are not timed. Prints p50/p95 of each, the ratio and the command.

``--stage question`` compares the question step instead (:func:`suzent_cli.recall.asks` and
:data:`~suzent_cli.recall.QUESTION_FACTOR`, on by default) with that step off (``asks`` answering False), the re-rank
off in both.

Usage: python benchmarks/rerank_ab.py [--rows 2000] [--queries 80] [--warmup 10] [--stage rerank|question]
"""

from __future__ import annotations

import argparse
import random
import shlex
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_latency import build, queries

from suzent_cli import recall
from suzent_cli.index import rerank
from suzent_cli.index.embed import load_embedder
from suzent_cli.index.store import ReadStore


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=80)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/suzent-rerank-ab"))
    ap.add_argument("--stage", choices=("rerank", "question"), default="rerank")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)  # as the warm server encodes queries (suzent_cli/server/warm.py)
    embedder = load_embedder("all-MiniLM-L6-v2")
    settings, built = build(args.cache, args.rows, embedder, "auto")
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    top = rerank.TOP
    stage = "re-rank" if args.stage == "rerank" else "question step"
    on, off = f"{stage} on", f"{stage} off"
    times: dict[str, list[float]] = {on: [], off: []}
    asks = recall.asks
    asked = queries(args.queries + args.warmup, seed=5, days=max(1, args.rows // 100))
    rng = random.Random(9)
    for i, query in enumerate(asked):
        order = [on, off]
        rng.shuffle(order)
        for name in order:
            if args.stage == "question":
                recall.asks = asks if name == on else (lambda content: False)
            t0 = time.perf_counter()
            recall.search(store, embedder, query, mode="hybrid", limit=10,
                          rerank_top=top if name == on and args.stage == "rerank" else 0)
            if i >= args.warmup:
                times[name].append((time.perf_counter() - t0) * 1000)
    print("command: python benchmarks/rerank_ab.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"home: {store.count()} rows, all-MiniLM-L6-v2, one torch thread; re-rank TOP = {top}"
          + (f"; built in {built:.0f} s" if built else "; cached"))
    print("| variant | p50 | p95 | mean |\n|---|---|---|---|")
    for name, values in times.items():
        values.sort()
        print(f"| {name} | {statistics.median(values):.1f} ms | {values[int(0.95 * (len(values) - 1))]:.1f} ms | "
              f"{statistics.fmean(values):.1f} ms |")
    recall.asks = asks
    ratio = statistics.median(times[on]) / statistics.median(times[off])
    print(f"ratio p50 (on / off): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
