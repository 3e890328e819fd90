#!/usr/bin/env python3
"""Index throughput against the raw encoder, in the same run.

Target (issue): a full index pass embeds at >= 0.9x the facts/s of the raw encoder.

Setup: N synthetic facts (realistic sentence lengths, 6-30 words) over D daily logs. Each round times

* ``raw``   — ``embedder.encode(texts)`` over exactly the texts the indexer embeds (with the settings'
  ``index.context_window``, the preceding facts of the log are part of each text; the embedder's own batch size,
  which is what the indexer's calls use too), and
* ``index`` — a full indexer pass (:func:`suzent_cli.index.api.run_index`) into a fresh index dir, with the same
  loaded embedder: read + parse the logs, embed, build the Arrow rows, LanceDB commits, the BM25 index, state.

Rounds alternate the order (raw first, then index first, ...) so drift in machine load hits both alike. The
index pass is also split into time spent inside ``encode`` and everything else (the indexer's overhead).

Usage: python benchmarks/index_throughput.py [--facts 5000] [--logs 50] [--rounds 3] [--model ...] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import os
import pstats
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suzent_cli import archive  # noqa: E402
from suzent_cli.archive import Fact  # noqa: E402
from suzent_cli.config import resolve_settings  # noqa: E402
from suzent_cli.index import embed as embed_mod  # noqa: E402
from suzent_cli.index.api import run_index  # noqa: E402
from suzent_cli.index.embed import load_embedder  # noqa: E402
from suzent_cli.index.sources import discover, documents  # noqa: E402

TODAY = dt.date(2026, 11, 29)
TARGET = 0.9

_WORDS = ("the user prefers morning meetings before ten and dislikes long calls after lunch on fridays when the "
          "team ships releases she is training for a half marathon in april and eats vegetarian most weekdays "
          "their daughter starts school in september near the new apartment in lyon budget for the kitchen "
          "renovation is twelve thousand euros he uses neovim with a dark theme and types on a split keyboard "
          "allergic to penicillin and peanuts works remotely from porto in winter plays cello in an amateur "
          "orchestra on tuesday evenings planning a trip to japan with two friends next spring").split()
_CATS = ["preference", "personal", "work", "health", "project", "travel", "finance"]


class TimedEmbedder:
    """Wraps an embedder; accumulates seconds spent in ``encode``."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seconds = 0.0

    def encode(self, texts):
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.seconds += time.perf_counter() - t0


def sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 30))]
    return " ".join(words).capitalize()


def write_logs(archive_dir: Path, n_facts: int, n_logs: int, seed: int) -> None:
    rng = random.Random(seed)
    archive_dir.mkdir(parents=True, exist_ok=True)
    per_log = [n_facts // n_logs + (1 if i < n_facts % n_logs else 0) for i in range(n_logs)]
    i = 0
    for d, n in enumerate(per_log):
        day = TODAY - dt.timedelta(days=n_logs - d)
        parts, minute = [archive.log_header(day)], 0
        while n > 0:
            k = min(n, rng.randint(1, 3))
            facts = [Fact(f"{sentence(rng)} ({i + j})", rng.choice(_CATS), (rng.choice(_CATS),)).clean()
                     for j in range(k)]
            parts.append(archive.render_entry(facts, f"{8 + minute // 60:02d}:{minute % 60:02d}", f"s{d}"))
            i, n, minute = i + k, n - k, minute + 1
        (archive_dir / f"{day.isoformat()}.md").write_text("".join(parts), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=5000)
    ap.add_argument("--logs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="embedder spec (all-MiniLM-L6-v2, hash[:DIM], dir)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile one extra index pass, print the top functions")
    args = ap.parse_args()
    command = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/index_throughput.py", *sys.argv[1:]])

    t0 = time.perf_counter()
    embedder = load_embedder(args.model)
    print(f"embedder {embedder.name} (dim {embedder.dim}) loaded in {time.perf_counter() - t0:.1f}s")
    try:
        import torch

        threads = torch.get_num_threads()
    except ImportError:
        threads = None

    with tempfile.TemporaryDirectory(prefix="suzent-thru-") as tmp:
        home = Path(tmp) / "home"
        base = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
        write_logs(base.paths.archive_dir, args.facts, args.logs, args.seed)
        window = base.context_window  # what the indexer will use: embed texts carry the preceding facts
        texts = [d.embed_text for s in discover(base.paths) for d in documents(s, frozenset(), window)[0]]
        assert len(texts) == args.facts, len(texts)
        mean_words = statistics.mean(len(t.split()) for t in texts)
        fact_words = statistics.mean(len(d.content.split()) for s in discover(base.paths)
                                     for d in documents(s, frozenset(), 0)[0])
        embedder.encode(texts[:128])  # warm-up (first-call allocations)
        warm = Path(tmp) / "warm"  # warm-up index pass: imports lancedb/pyarrow once, outside the timings
        write_logs(resolve_settings(home=str(warm), env={}).paths.archive_dir, 100, 2, args.seed + 1)
        run_index(resolve_settings(home=str(warm), today=TODAY.isoformat(), env={}), embedder=embedder)

        rounds = []
        for r in range(args.rounds):
            res = {}
            for kind in (("raw", "index") if r % 2 == 0 else ("index", "raw")):
                if kind == "raw":
                    t0, c0 = time.perf_counter(), time.process_time()
                    vectors = embedder.encode(texts)
                    res["raw"], res["raw_cpu"] = time.perf_counter() - t0, time.process_time() - c0
                    assert vectors.shape == (len(texts), embedder.dim)
                else:
                    settings = resolve_settings(home=str(home), index_dir=str(Path(tmp) / f"index-{r}"),
                                                today=TODAY.isoformat(), env={})
                    timed = TimedEmbedder(embedder)
                    t0, c0 = time.perf_counter(), time.process_time()
                    report = run_index(settings, embedder=timed)
                    res["index"], res["index_cpu"] = time.perf_counter() - t0, time.process_time() - c0
                    res["index_encode"] = timed.seconds
                    assert report.embeddings == len(texts) and report.total_rows == len(texts) and not report.errors
            rounds.append(res)
            print(f"  round {r + 1}: raw {res['raw']:.2f}s, index {res['index']:.2f}s "
                  f"(encode {res['index_encode']:.2f}s)")

        profile_text = None
        if args.profile:
            settings = resolve_settings(home=str(home), index_dir=str(Path(tmp) / "index-profile"),
                                        today=TODAY.isoformat(), env={})
            prof = cProfile.Profile()
            prof.enable()
            run_index(settings, embedder=embedder)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
            profile_text = buf.getvalue()

    n = args.facts
    print()
    print(f"command: {command}")
    print(f"{n} facts over {args.logs} daily logs (mean {fact_words:.1f} words a fact; index.context_window "
          f"{window}, so {mean_words:.1f} words an embedded text), embedder {embedder.name}, "
          f"encode batch size {embed_mod.BATCH_SIZE}, torch threads {threads}, {args.rounds} rounds alternating order")
    print()
    print("| round | raw encode facts/s | index pass facts/s | index / raw (wall) | index / raw (CPU) | "
          "pass: encode s | pass: other s | encode share of pass |")
    print("|---|---|---|---|---|---|---|---|")
    ratios, cpu_ratios, shares = [], [], []
    for i, r in enumerate(rounds, 1):
        ratios.append(r["raw"] / r["index"])
        cpu_ratios.append(r["raw_cpu"] / r["index_cpu"])
        shares.append(r["index_encode"] / r["index"])
        print(f"| {i} | {n / r['raw']:.0f} | {n / r['index']:.0f} | {ratios[-1]:.3f} | {cpu_ratios[-1]:.3f} | "
              f"{r['index_encode']:.2f} | {r['index'] - r['index_encode']:.2f} | {shares[-1]:.3f} |")
    raw_all = sum(r["raw"] for r in rounds)
    idx_all = sum(r["index"] for r in rounds)
    enc_all = sum(r["index_encode"] for r in rounds)
    cpu_all = sum(r["raw_cpu"] for r in rounds) / sum(r["index_cpu"] for r in rounds)
    print(f"| pooled | {n * len(rounds) / raw_all:.0f} | {n * len(rounds) / idx_all:.0f} | {raw_all / idx_all:.3f} | "
          f"{cpu_all:.3f} | {enc_all:.2f} | {idx_all - enc_all:.2f} | {enc_all / idx_all:.3f} |")
    print()
    med, med_cpu = statistics.median(ratios), statistics.median(cpu_ratios)
    print(f"index/raw: wall median of rounds {med:.3f} (pooled {raw_all / idx_all:.3f}); CPU median {med_cpu:.3f}; "
          f"encode share of the pass (the ratio if encode ran at raw speed) median {statistics.median(shares):.3f}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    print(f"target: index >= {TARGET}x raw encoder (wall, median of rounds): {'MET' if med >= TARGET else 'NOT MET'}")
    if profile_text:
        print()
        print(profile_text)


if __name__ == "__main__":
    main()
