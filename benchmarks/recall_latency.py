#!/usr/bin/env python3
"""Warm recall latency: ``suzent_cli.recall.search`` in-process, as ``suzent serve`` runs it.

Target (issue 15): hybrid recall through the warm server, p50 <= 50 ms at 100k rows on this machine (goal 20 ms).

Setup per size N (rows): N synthetic facts (6-30 words, the vocabulary of benchmarks/index_throughput.py) over
N/100 daily logs, indexed by the real indexer (:func:`suzent_cli.index.api.run_index`: real table, BM25 indexes,
metadata, and the ANN vector index when N reaches the indexer's threshold). Built homes are cached under
``--cache`` (default ``/tmp/suzent-recall-latency``, outside the repo) and reused on reruns.

Warm means what the server holds: ONE :class:`ReadStore` and ONE loaded embedder, reused for every query; ``--warmup``
queries run first, untimed. Then ``--queries`` varied queries (3-7 vocabulary words, a quarter with an explicit
date) are timed per mode (hybrid, fts, vector), query embedding included. Each query's time is also split into its
parts: the query encode, the three searches (``fts_content``, ``fts``, ``vector``), ``neighbours`` (the rows next
to the candidates), ``rows`` (rows only a neighbour brought in) and the rest (fusion, normalization, hits) — by
timing wrappers around the store and embedder. One more hybrid pass ("hybrid, new version") runs as the first
queries after a commit do: neighbours read from the files involved, not from the per-version positions cache.

The big tables are embedded with ``--table-embedder`` (default ``hash:384``: same dimension as the bundled
all-MiniLM-L6-v2, so the lance vector search costs the same; embedding 100k facts with MiniLM on 2 shared cores
would take most of an hour). The bundled model's query encode is measured on its own (``--model``, p50/p95 over
the same queries) and added to the hash-table hybrid p50 in the "with MiniLM encode" column.

Usage: python benchmarks/recall_latency.py [--sizes 1000,10000] [--queries 60] [--modes hybrid,fts,vector]
       [--model all-MiniLM-L6-v2 | none] [--ann auto|off] [--profile]
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_throughput import _WORDS, TODAY, write_logs  # noqa: E402

from suzent_cli.config import resolve_settings  # noqa: E402
from suzent_cli.index import indexer as indexer_mod  # noqa: E402
from suzent_cli.index import store as store_mod  # noqa: E402
from suzent_cli.index.api import run_index  # noqa: E402
from suzent_cli.index.embed import load_embedder  # noqa: E402
from suzent_cli.index.store import ReadStore  # noqa: E402
from suzent_cli.recall import search  # noqa: E402

PARTS = ("encode", "fts_content", "fts", "vector", "neighbours", "rows")


class Clock:
    """Accumulates seconds per part while a query runs."""

    def __init__(self):
        self.parts: dict[str, float] = {}

    def add(self, part: str, seconds: float) -> None:
        self.parts[part] = self.parts.get(part, 0.0) + seconds


class TimedEmbedder:
    def __init__(self, inner, clock: Clock):
        self.inner, self.name, self.dim, self.clock = inner, inner.name, inner.dim, clock

    def encode(self, texts):
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.clock.add("encode", time.perf_counter() - t0)


class TimedStore:
    """Delegates to one ReadStore; times the four methods recall's ``search`` calls."""

    def __init__(self, inner: ReadStore, clock: Clock):
        self._inner, self._clock = inner, clock

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _timed(self, part, fn, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self._clock.add(part, time.perf_counter() - t0)

    def vector_search(self, *args, **kwargs):
        return self._timed("vector", self._inner.vector_search, *args, **kwargs)

    def fts_search(self, text, limit, where=None, column="search_text", **kwargs):
        part = "fts_content" if column == "content" else "fts"
        return self._timed(part, self._inner.fts_search, text, limit, where, column, **kwargs)

    def neighbourhood(self, *args, **kwargs):
        return self._timed("neighbours", self._inner.neighbourhood, *args, **kwargs)

    def positions(self, *args, **kwargs):  # what main's recall called instead of neighbourhood
        return self._timed("neighbours", self._inner.positions, *args, **kwargs)

    def rows_at(self, *args, **kwargs):
        return self._timed("rows", self._inner.rows_at, *args, **kwargs)

    def rows_by_id(self, *args, **kwargs):
        return self._timed("rows", self._inner.rows_by_id, *args, **kwargs)


def queries(n: int, seed: int, days: int) -> list[str]:
    """``n`` varied queries: 3-7 words of the corpus vocabulary; every 4th names a date inside the corpus."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = " ".join(rng.sample(_WORDS, rng.randint(3, 7)))
        if i % 4 == 3:
            day = TODAY - dt.timedelta(days=rng.randint(1, days))
            words = f"what did they say about {words} on {day.strftime('%d %B, %Y')}"
        out.append(words)
    return out


def build(cache: Path, rows: int, embedder, ann: str) -> tuple[object, float | None]:
    """The settings of a home with ``rows`` facts indexed with ``embedder`` (built once, then reused).
    Returns (settings, seconds the build took or None when cached)."""
    home = cache / f"{rows}-{embedder.name.replace(':', '_')}-ann_{ann}"
    settings = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
    done = home / ".built"
    if done.exists():  # a pass without changes: brings the indexes up to date as this code keeps them
        report = run_index(settings, embedder=embedder)
        assert report.total_rows == rows and not report.errors and not report.rows_added, report.as_dict()
        return settings, None
    logs = max(1, rows // 100)
    write_logs(settings.paths.archive_dir, rows, logs, seed=11)
    t0 = time.perf_counter()
    report = run_index(settings, embedder=embedder)
    assert report.total_rows == rows and not report.errors, report.as_dict()
    done.write_text(f"{rows}\n", encoding="utf-8")
    return settings, time.perf_counter() - t0


def locomo_check(data: Path, cache: Path, model_spec: str, modes: list[str]) -> None:
    """Recall@10 on LoCoMo with exact vector search vs the ANN index, in one run.

    Each conversation's home is captured and indexed once with exact search (``<cache>/locomo-exact``, reused);
    a copy of it (``<cache>/locomo-ann``) gets the ANN index from one indexer pass with ``ANN_MIN_ROWS = 1`` (a
    conversation has ~600 rows, far under the product threshold: the index is forced). Both are then asked every
    question of categories 1-4 with the same loaded model."""
    import shutil
    import tempfile

    import locomo

    convs = locomo.load_conversations(data)
    model = load_embedder(model_spec)
    exact = {m: locomo.ModeScores() for m in modes}
    ann = {m: locomo.ModeScores() for m in modes}
    same_top10 = total_q = 0
    kinds = set()
    for conv in convs:
        indexer_mod.ANN_MIN_ROWS = 10**12
        with tempfile.TemporaryDirectory(prefix="suzent-locomo-") as tmp:
            settings, _c, _i = locomo.home_for(conv, Path(tmp), model, None, cache / "locomo-exact")
        ann_home = cache / "locomo-ann" / settings.paths.home.name
        if not ann_home.exists():
            shutil.copytree(settings.paths.home, ann_home, symlinks=True)
        ann_settings = resolve_settings(home=str(ann_home), env={})
        indexer_mod.ANN_MIN_ROWS = 1
        report = run_index(ann_settings, embedder=model)
        assert not report.errors and report.rows_added == 0, report.as_dict()
        stores = {}
        for label, st in (("exact", settings), ("ann", ann_settings)):
            stores[label] = ReadStore.open(st.paths.index_dir, model.name, model.dim)
        kinds.add(stores["ann"].vector_index_kind())
        assert stores["exact"].vector_index_kind() is None and stores["ann"].vector_index_kind() is not None
        locomo.evaluate(stores["exact"], model, conv.questions, modes, exact)
        locomo.evaluate(stores["ann"], model, conv.questions, modes, ann)
        for q in conv.questions:
            a = [h.id for h in search(stores["exact"], model, q.text, mode="hybrid", limit=10)]
            b = [h.id for h in search(stores["ann"], model, q.text, mode="hybrid", limit=10)]
            same_top10 += a == b
            total_q += 1
        print(f"  {conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", flush=True)
    print()
    print(f"LoCoMo ({len(convs)} conversations, {total_q} questions, categories 1-4), {model.name}; ANN index "
          f"{', '.join(sorted(k for k in kinds if k))} forced (ANN_MIN_ROWS=1), nprobes/refine as in store.py")
    print()
    print("| mode | R@10 exact | R@10 ANN | ANN - exact (points) | R@25 exact | R@25 ANN |")
    print("|---|---|---|---|---|---|")
    for m in modes:
        e, a = exact[m].summary(), ann[m].summary()
        print(f"| {m} | {e['recall']['@10']:.1f} | {a['recall']['@10']:.1f} | "
              f"{a['recall']['@10'] - e['recall']['@10']:+.1f} | {e['recall']['@25']:.1f} | {a['recall']['@25']:.1f} |")
    print(f"hybrid top-10 identical (same rows, same order) for {same_top10} of {total_q} questions")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def ms(x: float) -> str:
    return f"{x * 1000:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated row counts (add 100000 for the target)")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--modes", default="hybrid,fts,vector")
    ap.add_argument("--table-embedder", default="hash:384", help="embedder the tables are built and searched with")
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="model whose query encode is timed apart ('none')")
    ap.add_argument("--ann", choices=("auto", "off"), default="auto",
                    help="auto: the indexer's ANN threshold applies; off: exact (flat) vector search at every size")
    ap.add_argument("--cache", default="/tmp/suzent-recall-latency")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--profile", action="store_true", help="cProfile hybrid at the largest size, print the top")
    ap.add_argument("--locomo", type=Path, default=None, metavar="JSON",
                    help="instead: recall@10 on LoCoMo (path to locomo-dev.json), exact vs the ANN index forced")
    args = ap.parse_args()
    if args.locomo is not None:
        if not args.locomo.is_file():
            sys.exit(f"LoCoMo data not found at {args.locomo} (never copy it into this repository)")
        print(f"command: python {shlex.join(['benchmarks/recall_latency.py', *sys.argv[1:]])}")
        locomo_check(args.locomo, Path(args.cache), args.model, [m for m in args.modes.split(",") if m])
        return
    command = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/recall_latency.py", *sys.argv[1:]])
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m for m in args.modes.split(",") if m]
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args.ann == "off":
        indexer_mod.ANN_MIN_ROWS = 10**12  # never crossed: every table keeps exact search

    table_embedder = load_embedder(args.table_embedder)
    results: dict[int, dict] = {}
    for n in sizes:
        settings, built = build(cache, n, table_embedder, args.ann)
        print(f"{n} rows: {'built in ' + format(built, '.0f') + ' s' if built else 'cached'} "
              f"({settings.paths.home})", flush=True)
        clock = Clock()
        store = TimedStore(ReadStore.open(settings.paths.index_dir, table_embedder.name, table_embedder.dim,
                                          home=settings.paths.home), clock)
        embedder = TimedEmbedder(table_embedder, clock)
        qs = queries(args.queries, args.seed, max(1, n // 100))
        warm = queries(args.warmup, args.seed + 1, max(1, n // 100))
        kind = getattr(store._inner, "vector_index_kind", lambda: None)()
        res = {"ann": kind or "none (exact)"}
        for mode in modes:
            for q in warm:
                search(store, embedder, q, mode=mode, limit=10, today=TODAY)
            times, parts = [], {p: [] for p in PARTS}
            for q in qs:
                clock.parts = {}
                t0 = time.perf_counter()
                search(store, embedder, q, mode=mode, limit=10, today=TODAY)
                times.append(time.perf_counter() - t0)
                for p in PARTS:
                    parts[p].append(clock.parts.get(p, 0.0))
            res[mode] = {"p50": pct(times, 0.5), "p95": pct(times, 0.95),
                         "parts": {p: statistics.median(v) for p, v in parts.items()},
                         "rest": statistics.median([t - sum(parts[p][i] for p in PARTS) for i, t in enumerate(times)])}
            print(f"  {mode}: p50 {ms(res[mode]['p50'])} ms, p95 {ms(res[mode]['p95'])} ms", flush=True)
        if "hybrid" in modes and hasattr(store_mod, "POSITIONS_CACHE_AFTER"):
            # as the first queries after a commit run: neighbours read per query from the files involved
            keep = store_mod.POSITIONS_CACHE_AFTER
            store_mod.POSITIONS_CACHE_AFTER = 10**12
            store._inner._cache.pop("positions", None)
            times, parts = [], {p: [] for p in PARTS}
            for q in qs:
                clock.parts = {}
                t0 = time.perf_counter()
                search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)
                times.append(time.perf_counter() - t0)
                for p in PARTS:
                    parts[p].append(clock.parts.get(p, 0.0))
            store_mod.POSITIONS_CACHE_AFTER = keep
            t0 = time.perf_counter()
            store._inner._table_positions()
            res["positions_build"] = time.perf_counter() - t0
            res["hybrid, new version"] = {
                "p50": pct(times, 0.5), "p95": pct(times, 0.95),
                "parts": {p: statistics.median(v) for p, v in parts.items()},
                "rest": statistics.median([t - sum(parts[p][i] for p in PARTS) for i, t in enumerate(times)])}
            print(f"  hybrid, new version: p50 {ms(res['hybrid, new version']['p50'])} ms", flush=True)
        results[n] = res
        if args.profile and n == max(sizes):
            prof = cProfile.Profile()
            prof.enable()
            for q in qs:
                search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
            results[n]["profile"] = buf.getvalue()

    model_enc = None
    if args.model != "none":
        t0 = time.perf_counter()
        model = load_embedder(args.model)
        model.encode(["warm up"])
        load_s = time.perf_counter() - t0
        for q in queries(args.warmup, args.seed + 1, 10):
            model.encode([q])
        times = []
        for q in queries(args.queries, args.seed, 10):
            t0 = time.perf_counter()
            model.encode([q])
            times.append(time.perf_counter() - t0)
        model_enc = {"name": model.name, "p50": pct(times, 0.5), "p95": pct(times, 0.95), "load": load_s}
        try:  # one query is a tiny batch: on 2 busy cores a second torch thread mostly waits for the first
            import torch

            default_threads = torch.get_num_threads()
            torch.set_num_threads(1)
            one = []
            for q in queries(args.queries, args.seed, 10):
                t0 = time.perf_counter()
                model.encode([q])
                one.append(time.perf_counter() - t0)
            torch.set_num_threads(default_threads)
            model_enc.update(threads=default_threads, p50_1=pct(one, 0.5), p95_1=pct(one, 0.95))
        except ImportError:
            pass

    print()
    print(f"command: {command}")
    print(f"tables built with {table_embedder.name} by run_index (synthetic daily logs, 100 facts a log); "
          f"{args.queries} queries per mode after {args.warmup} warm-up; one ReadStore + one embedder reused; "
          f"limit 10; times in ms")
    print()
    print("| rows | vector index | mode | p50 | p95 | encode | fts_content | fts | vector | neighbours | rows | "
          "rest | hybrid p50 with MiniLM encode |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, res in results.items():
        for mode in [*modes, "hybrid, new version"]:
            if mode not in res:
                continue
            r = res[mode]
            extra = ""
            if mode.startswith("hybrid") and model_enc:
                extra = ms(r["p50"] - r["parts"]["encode"] + model_enc["p50"])
            print(f"| {n} | {res['ann']} | {mode} | {ms(r['p50'])} | {ms(r['p95'])} | "
                  + " | ".join(ms(r["parts"][p]) for p in PARTS) + f" | {ms(r['rest'])} | {extra} |")
    print("(part columns: medians over the queries, so they need not add up to p50; 'hybrid, new version': as the "
          "first queries after a commit, neighbours read from the files involved instead of the per-version cache)")
    for n, res in results.items():
        if "positions_build" in res:
            print(f"{n} rows: reading the whole table's positions for the per-version cache took "
                  f"{ms(res['positions_build'])} ms (once per version, after {store_mod.POSITIONS_CACHE_AFTER} queries)")
    if model_enc:
        print(f"query encode with {model_enc['name']} alone: p50 {ms(model_enc['p50'])} ms, p95 "
              f"{ms(model_enc['p95'])} ms with torch's {model_enc.get('threads')} threads (model load "
              f"{model_enc['load']:.1f} s, once per server)")
        if "p50_1" in model_enc:
            print(f"  the same with torch.set_num_threads(1): p50 {ms(model_enc['p50_1'])} ms, p95 "
                  f"{ms(model_enc['p95_1'])} ms")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    for n, res in results.items():
        if "profile" in res:
            print(f"\ncProfile, hybrid at {n} rows:\n{res['profile']}")


if __name__ == "__main__":
    main()
