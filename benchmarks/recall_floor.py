#!/usr/bin/env python3
"""Warm hybrid recall against the physical floor, in one run, query by query alternated (issue 25, item 5).

Target: ``suzent_cli.recall.search`` (hybrid, limit 10, warm: ONE ReadStore and ONE embedder reused, as
``suzent serve`` holds them) at most 1.5x the floor at 100k rows.

The floor is what any hybrid retriever over the same rows has to do at least: the query's embedding, an exact
cosine top-25 over every row's vector held in a numpy matrix (rows L2-normalised, one matrix-vector product and an
``argpartition``) and a BM25 top-25 of the query's content words (``recall.fts_query``) over both text fields
(``content`` and ``search_text``) in one tantivy query (English stemmer), in memory. Nothing of fusion,
neighbours, dates or the hits' columns: those are ours to make cheap.

Per query the two alternate (ours, floor; the next query floor, ours), so machine load hits both alike; each
side's p50/p95 and the ratios of the p50s and p95s are printed, plus the median of the per-query ratios.

Table: N synthetic facts over N/100 daily logs built by the real indexer (``benchmarks/recall_latency.py``'s
``build``: BM25 indexes, BTree on ``source``, the ANN index from 20k rows), cached under ``--cache`` (default
``/tmp/suzent-recall-floor``, outside the repo) and reused. Embedded with ``--table-embedder`` (default
``hash:384``, a deterministic embedder of the bundled all-MiniLM-L6-v2's dimension: embedding 100k facts with
the model on 2 shared cores would take most of an hour, and the search costs depend on the width, not on the
values). The query encode is the same embedder on both sides.

``--after-commit``: also time the first recalls on a new table version (a copy of the home gets one more fact
indexed, then recall runs against it): what a server pays after each capture.

tantivy is a benchmark-only dependency (not suzent's): ``pip install tantivy`` (or ``pip install --target DIR
tantivy`` and ``--deps DIR``).

``--warm-only``: on a table cached by an earlier run, a process holding only the warm store (as a server does):
warm p50/p95 and its resident memory, without the index pass and the floor that share the process otherwise.

Usage: python benchmarks/recall_floor.py [--rows 100000] [--queries 60] [--warmup 10] [--deps DIR]
       [--after-commit] [--warm-only]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_throughput import TODAY  # noqa: E402
from recall_latency import build, pct, queries  # noqa: E402

from suzent_cli.index.embed import encode_query, load_embedder  # noqa: E402
from suzent_cli.index.store import ReadStore  # noqa: E402
from suzent_cli.recall import fts_query, search  # noqa: E402

K = 25


class Floor:
    """Exact numpy cosine top-K and one tantivy BM25 top-K over both text fields, all in memory."""

    def __init__(self, store: ReadStore, embedder):
        import numpy as np
        import tantivy

        data = store.scan(["id", "content", "search_text", "vector"])
        self.ids = data["id"].to_pylist()
        flat = data["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(len(self.ids), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
        self.embedder = embedder
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("row", stored=True, indexed=False, fast=True)
        builder.add_text_field("content", stored=False, tokenizer_name="en_stem")
        builder.add_text_field("search_text", stored=False, tokenizer_name="en_stem")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)  # in RAM
        writer = self.index.writer(heap_size=100_000_000, num_threads=1)
        for i, (content, text) in enumerate(zip(data["content"].to_pylist(), data["search_text"].to_pylist(),
                                                strict=True)):
            writer.add_document(tantivy.Document(row=i, content=content or "", search_text=text or ""))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, query: str) -> tuple[list[str], list[str]]:
        import numpy as np

        vector = encode_query(self.embedder, [query])[0]
        sims = self.matrix @ (vector / (np.linalg.norm(vector) or 1.0))
        top = np.argpartition(-sims, K)[:K]
        top = top[np.argsort(-sims[top])]
        words = fts_query(query)
        parsed = self.index.parse_query(words, ["content", "search_text"])
        found = self.searcher.search(parsed, K).hits
        bm25 = [self.ids[self.searcher.doc(address)["row"][0]] for _score, address in found]
        return [self.ids[i] for i in top], bm25


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def alternate(qs: list[str], *sides) -> list[list[float]]:
    """Each query through every side, the order rotated query by query; seconds per side and query."""
    times: list[list[float]] = [[] for _ in sides]
    for i, q in enumerate(qs):
        for k in range(len(sides)):
            j = (i + k) % len(sides)
            t0 = time.perf_counter()
            sides[j](q)
            times[j].append(time.perf_counter() - t0)
    return times


def report(label: str, a: list[float], b: list[float]) -> None:
    ratios = [x / y for x, y in zip(a, b, strict=True) if y > 0]
    print(f"| {label} | {pct(a, .5) * 1000:.1f} | {pct(a, .95) * 1000:.1f} | {pct(b, .5) * 1000:.1f} | "
          f"{pct(b, .95) * 1000:.1f} | **{pct(a, .5) / pct(b, .5):.2f}** | {pct(a, .95) / pct(b, .95):.2f} | "
          f"{statistics.median(ratios):.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--table-embedder", default="hash:384")
    ap.add_argument("--cache", default="/tmp/suzent-recall-floor")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--deps", default=None, help="a directory to import tantivy from (pip install --target DIR)")
    ap.add_argument("--no-resident", dest="resident", action="store_false",
                    help="leave out the store with the resident copy (ReadStore.keep_resident)")
    ap.add_argument("--resident-ann", action="store_true",
                    help="also time a kept store whose copy leaves vector search to lance's ANN index "
                         "(keep_resident(exact_vectors=False))")
    ap.add_argument("--after-commit", action="store_true",
                    help="also time the first recalls after a commit, on a copy of the home")
    ap.add_argument("--warm-only", action="store_true",
                    help="no index pass and no floor: open the cached table as a server does (keep_resident), "
                         "time the warm recalls and print this process's RSS (what a server holding the store pays)")
    args = ap.parse_args()
    if args.warm_only:
        warm_only(args)
        return
    if args.deps:
        sys.path.insert(0, args.deps)
    try:
        import tantivy  # noqa: F401
    except ImportError:
        sys.exit("tantivy is not installed: pip install tantivy (a benchmark-only dependency), or --deps DIR")
    command = "python " + shlex.join(["benchmarks/recall_floor.py", *sys.argv[1:]])
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    embedder = load_embedder(args.table_embedder)
    settings, built = build(cache, args.rows, embedder, "auto")
    print(f"{args.rows} rows: {'built in ' + format(built, '.0f') + ' s' if built else 'cached'} "
          f"({settings.paths.home})", flush=True)
    rss0 = rss_mb()
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim, home=settings.paths.home)
    rss1 = rss_mb()
    kept = None
    if args.resident:
        kept = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim, home=settings.paths.home)
        t0 = time.perf_counter()
        kept.keep_resident(wait=True)
        resident_read = time.perf_counter() - t0
        rss2 = rss_mb()
    qs = queries(args.queries, args.seed, max(1, args.rows // 100))
    warm = queries(args.warmup, args.seed + 1, max(1, args.rows // 100))

    def ours(q: str) -> list:
        return search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)

    def ours_kept(q: str) -> list:
        return search(kept, embedder, q, mode="hybrid", limit=10, today=TODAY)

    for q in warm:  # warm the stores before the floor exists, so this RSS is what a server holding them pays
        ours(q)
        if kept is not None:
            ours_kept(q)
    rss_warm = rss_mb()
    t0 = time.perf_counter()
    floor = Floor(store, embedder)
    floor_build = time.perf_counter() - t0

    ann = None
    if args.resident_ann:
        ann = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim, home=settings.paths.home)
        ann.keep_resident(wait=True, exact_vectors=False)

    def ours_ann(q: str) -> list:
        return search(ann, embedder, q, mode="hybrid", limit=10, today=TODAY)

    sides = [ours, floor.search] + ([ours_kept] if kept is not None else []) + ([ours_ann] if ann is not None else [])
    for q in warm:
        for side in sides:
            side(q)
    times = alternate(qs, *sides)
    results = [("hybrid, warm, lance (a kept store without the resident copy)", times[0], times[1])]
    if kept is not None:
        results.insert(0, ("**hybrid, warm, resident (the server's store)**", times[2], times[1]))
        same = sum([h.id for h in ours(q)] == [h.id for h in ours_kept(q)] for q in qs)
    if ann is not None:
        results.insert(1, ("hybrid, warm, resident with lance's ANN for vectors", times[-1], times[1]))
    if args.after_commit:
        results.append(("hybrid, first 3 recalls after each commit", *after_commit(settings, embedder, qs, floor)))
    print()
    print(f"command: {command}")
    print(f"{args.rows} rows ({store.vector_index_kind() or 'exact'} vector index), table embedder {embedder.name}; "
          f"{len(qs)} queries after {args.warmup} warm-up, alternated; ours = recall.search hybrid limit 10 on one "
          f"warm ReadStore; floor = numpy exact cosine top-{K} + tantivy BM25 top-{K} over both fields (in RAM, "
          f"built in {floor_build:.1f} s); times in ms")
    print()
    print("| case | ours p50 | ours p95 | floor p50 | floor p95 | p50 ratio | p95 ratio | median per-query ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for label, x, y in results:
        report(label, x, y)
    if kept is not None:
        copy = (f"{kept._resident.nbytes / 2**20:.0f} MB of arrays" if kept._resident is not None else
                "none made (over RESIDENT_MAX_BYTES): both stores answer through lance")
        print(f"resident copy: read in {resident_read:.1f} s, {copy}"
              f"{(' (' + _parts(kept) + ')') if kept._resident is not None else ''}; "
              f"RSS {rss0:.0f} MB before opening, {rss1:.0f} MB with one store, {rss2:.0f} MB with the resident "
              f"copy too")
        print(f"top-10 identical (ids, order), resident vs lance: {same} of {len(qs)} queries")
    print(f"RSS with the store(s) warm ({args.warmup} recalls each), before the floor was built: {rss_warm:.0f} MB")
    print(f"RSS at the end: {rss_mb():.0f} MB (floor's matrix and tantivy index included)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")


def _parts(store: ReadStore) -> str:
    """What the resident copy's arrays hold, MB (older code without BM25 postings: the vectors and columns)."""
    segments = store._resident.segments
    vectors = sum(s.matrix.nbytes for s in segments if getattr(s, "matrix", None) is not None)
    columns = sum(s.data.nbytes for s in segments)
    postings = sum(p.nbytes for s in segments for p in getattr(s, "postings", {}).values())
    return f"vectors {vectors / 2**20:.0f}, result columns {columns / 2**20:.0f}, BM25 postings {postings / 2**20:.0f}"


def warm_only(args) -> None:
    """``--warm-only``: the cached table of ``--rows`` opened in this process alone, as ``suzent serve`` holds it
    (one ReadStore, ``keep_resident``, one embedder), ``--warmup`` recalls, then ``--queries`` timed ones; p50/p95
    and VmRSS after each step. No index pass runs here (its reads would stay in the process's memory)."""
    from suzent_cli.config import resolve_settings

    embedder = load_embedder(args.table_embedder)
    home = Path(args.cache) / f"{args.rows}-{embedder.name.replace(':', '_')}-ann_auto"
    if not (home / ".built").exists():
        sys.exit(f"no cached table at {home}: run once without --warm-only to build it")
    settings = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
    rss0 = rss_mb()
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim, home=settings.paths.home)
    kept = store.keep_resident(wait=True)
    rss1 = rss_mb()
    for q in queries(args.warmup, args.seed + 1, max(1, args.rows // 100)):
        search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)
    rss2 = rss_mb()
    times = []
    for q in queries(args.queries, args.seed, max(1, args.rows // 100)):
        t0 = time.perf_counter()
        search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)
        times.append(time.perf_counter() - t0)
    print("command: python " + shlex.join(["benchmarks/recall_floor.py", *sys.argv[1:]]))
    print(f"{args.rows} rows ({store.vector_index_kind() or 'exact'} vector index), table embedder {embedder.name}, "
          f"resident copy {'kept' if kept else 'not made (over RESIDENT_MAX_BYTES: lance answers)'}")
    print(f"hybrid recall, limit 10, warm, {len(times)} queries after {args.warmup} warm-up: "
          f"p50 {pct(times, .5) * 1000:.1f} ms, p95 {pct(times, .95) * 1000:.1f} ms")
    print(f"RSS: {rss0:.0f} MB before opening (Python and the embedder; lancedb loads with the store), {rss1:.0f} MB with the store open, "
          f"{rss2:.0f} MB after the warm-up, {rss_mb():.0f} MB after the timed recalls")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")


def after_commit(settings, embedder, qs: list[str], floor: Floor) -> tuple[list[float], list[float]]:
    """On a copy of the home: per round one fact captured and indexed (a new table version), then three recalls
    on the server's store (refreshed to the new version), each alternated with the floor."""
    import shutil
    import tempfile

    from suzent_cli.archive import Fact
    from suzent_cli.capture import write_facts
    from suzent_cli.config import resolve_settings
    from suzent_cli.index.api import run_index

    a: list[float] = []
    b: list[float] = []
    with tempfile.TemporaryDirectory(prefix="suzent-floor-commit-") as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(settings.paths.home, home, symlinks=True)
        copy = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
        store = ReadStore.open(copy.paths.index_dir, embedder.name, embedder.dim, home=copy.paths.home)
        if hasattr(store, "keep_resident"):  # as the server keeps its store
            store.keep_resident(wait=True)
        for q in qs[:5]:
            search(store, embedder, q, mode="hybrid", limit=10, today=TODAY)
        for r in range(0, len(qs) - 2, 3):
            write_facts(copy, [Fact(f"the user mentioned a new fact number {r}", "personal", ())])
            run_index(copy, embedder=embedder)
            store.refresh()
            x, y = alternate(qs[r:r + 3], lambda q: search(store, embedder, q, mode="hybrid", limit=10, today=TODAY),
                             floor.search)
            a += x
            b += y
    return a, b


if __name__ == "__main__":
    main()
