#!/usr/bin/env python3
"""A/B: a hybrid recall's three runs at once (``recall._all_runs``, the default) vs one after another, in one process
on one warm ReadStore, queries alternated so machine noise hits both alike. Prints p50/p95 of each and the command.

Needs a table built by ``benchmarks/recall_latency.py`` (its cache, default ``/tmp/suzent-recall-latency``).

Usage: python benchmarks/recall_parallel_ab.py [--table /tmp/suzent-recall-latency/100000-hash_384-ann_auto]
       [--queries 120]
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

from suzent_cli import recall
from suzent_cli.index.embed import HashEmbedder
from suzent_cli.index.store import ReadStore

WORDS = ("trip lisbon march quarterly report spanish lessons budget laptop dentist appointment dark mode editor "
         "manager coffee berlin desk running sunday").split()


def sequential(store, embedder, mode, query, pool, where):
    return [recall._run(store, embedder, name, query, pool, where) for name in recall.RUNS[mode]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", type=Path, default=Path("/tmp/suzent-recall-latency/100000-hash_384-ann_auto"))
    ap.add_argument("--queries", type=int, default=120)
    args = ap.parse_args()
    index_dir = next(p for p in args.table.rglob("archival_memories.lance")).parent
    store = ReadStore.open_existing(index_dir)
    embedder = HashEmbedder(store.vector_dim() or 384)
    variants = {"parallel": recall._all_runs, "sequential": sequential}
    times: dict[str, list[float]] = {name: [] for name in variants}
    rng = random.Random(3)
    for i in range(args.queries):
        query = " ".join(rng.sample(WORDS, 4))
        for name in (list(variants) if i % 2 else list(reversed(variants))):
            recall._all_runs = variants[name]
            t0 = time.perf_counter()
            recall.search(store, embedder, query, mode="hybrid", limit=10)
            if i >= 10:  # warm-up
                times[name].append((time.perf_counter() - t0) * 1000)
    recall._all_runs = variants["parallel"]
    print("command: python benchmarks/recall_parallel_ab.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"table: {index_dir} ({store.count()} rows)")
    for name, values in times.items():
        values.sort()
        print(f"{name:<10} p50 {statistics.median(values):6.1f} ms  p95 {values[int(0.95 * (len(values) - 1))]:6.1f} ms")
    print(f"ratio p50: {statistics.median(times['parallel']) / statistics.median(times['sequential']):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
