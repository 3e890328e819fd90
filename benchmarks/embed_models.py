#!/usr/bin/env python3
"""Embedding models side by side, in one process: index-side throughput and warm query-encode latency.

For each model spec given, loaded once (load time reported): rounds alternate the models (ABAB..., the order
reversed every round) so drift in machine load hits all alike, and each round times

* ``passages/s`` — ``encode`` over N synthetic facts as the indexer sends them (each with its two preceding facts
  as context, as ``index.context_window = 2`` does), in the embedder's batch size; all torch threads;
* ``query ms`` — ``encode_query`` of one short question at a time on ONE torch thread, as the warm server does
  (suzent_cli/server/warm.py); the median over Q questions.

The ratio of each model to the first one is printed too; absolute numbers depend on the machine's load, the ratios
much less. Usage::

    python benchmarks/embed_models.py all-MiniLM-L6-v2 multilingual-e5-small-q4 [--facts 512] [--queries 40]
                                      [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_throughput import sentence  # noqa: E402

from suzent_cli.index.embed import encode_query, load_embedder  # noqa: E402

QUESTIONS = ("which editor does the user use", "when is the kitchen renovation due", "what is the user allergic to",
             "where does she work in winter", "what instrument does he play", "who is going to japan next spring",
             "what does the user eat on weekdays", "when does the daughter start school")


def passages(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    facts = [sentence(rng) for _ in range(n)]
    return [" ".join(facts[max(0, i - 2):i + 1]) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="embedder specs; the first is the reference of the ratios")
    ap.add_argument("--facts", type=int, default=512)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()

    import torch

    threads = torch.get_num_threads()
    texts = passages(args.facts, args.seed)
    loaded = {}
    for spec in args.models:
        t0 = time.perf_counter()
        embedder = load_embedder(spec)
        embedder.encode(["warm up"])
        encode_query(embedder, ["warm up"])
        loaded[spec] = embedder
        print(f"{spec}: {embedder.name}, dim {embedder.dim}, load + first encode {time.perf_counter() - t0:.1f} s")
    rate: dict[str, list[float]] = {s: [] for s in args.models}
    query_ms: dict[str, list[float]] = {s: [] for s in args.models}
    for r in range(args.rounds):
        order = args.models if r % 2 == 0 else list(reversed(args.models))
        for spec in order:
            embedder = loaded[spec]
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            embedder.encode(texts)
            rate[spec].append(len(texts) / (time.perf_counter() - t0))
            torch.set_num_threads(1)
            for i in range(args.queries):
                t0 = time.perf_counter()
                encode_query(embedder, [QUESTIONS[i % len(QUESTIONS)]])
                query_ms[spec].append((time.perf_counter() - t0) * 1000)
            torch.set_num_threads(threads)
    ref = args.models[0]
    ref_rate, ref_ms = statistics.median(rate[ref]), statistics.median(query_ms[ref])
    print(f"\n{args.facts} passages (context window 2), {args.queries} queries x {args.rounds} rounds, "
          f"{threads} torch threads for passages, 1 for queries")
    print(f"{'model':<28} {'passages/s':>11} {'x ref':>6} {'query ms (median)':>18} {'p90':>7} {'x ref':>6}")
    for spec in args.models:
        r_med, q_med = statistics.median(rate[spec]), statistics.median(query_ms[spec])
        q90 = statistics.quantiles(query_ms[spec], n=10)[-1]
        print(f"{loaded[spec].name:<28} {r_med:>11.1f} {r_med / ref_rate:>6.2f} {q_med:>18.1f} {q90:>7.1f} "
              f"{q_med / ref_ms:>6.2f}")


if __name__ == "__main__":
    main()
