#!/usr/bin/env python3
"""The index build against a hand-rolled sqlite-vec + FTS5 build of the same rows, in one run (issue 25, item 5).

Target (issue 25): a full ``suzent index`` build of N rows within 2x the peer's build of the same rows.

Both sides start from the same N synthetic facts over N/100 daily logs (``recall_latency.py``'s corpus) and the
same embedder (``--embedder``, default ``hash:384``: the bundled model's width; embedding 100k texts with the model
on 2 shared cores would take most of an hour and costs both sides the same):

* ``suzent``: :func:`suzent_cli.index.api.run_index` into a fresh home (parse the logs, embed each fact with its
  context, LanceDB commits, both BM25 indexes, the BTree on ``source``, the ANN index from 20k rows);
* ``peer``: the texts the indexer embeds (:func:`suzent_cli.index.sources.documents`, so parsing is counted), the
  same ``encode`` calls, then one SQLite file with a ``vec0`` table (sqlite-vec, cosine) and an FTS5 table over
  ``content`` and ``search_text`` (porter stemmer), in one transaction.

The order alternates round by round (``--rounds``). sqlite-vec is a benchmark-only dependency (``pip install
--target DIR sqlite-vec pysqlite3-binary``, then ``--deps DIR``; pysqlite3 only where Python's own sqlite3 cannot
load extensions).

After the timed builds (the temp dir still there): suzent's fragment count, whether its pass compacted, and the
ANN index's recall@10/@100 against exact vector search (``--ann-recall N`` queries, default 100).

Usage: python benchmarks/build_floor.py [--rows 100000] [--rounds 1] [--deps DIR] [--ann-recall 100]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from index_throughput import TODAY, write_logs  # noqa: E402

from suzent_cli.config import resolve_settings  # noqa: E402
from suzent_cli.index.api import run_index  # noqa: E402
from suzent_cli.index.embed import load_embedder  # noqa: E402
from suzent_cli.index.sources import discover, documents  # noqa: E402
from suzent_cli.index.store import ReadStore  # noqa: E402


def suzent_build(logs: Path, home: Path, embedder) -> float:
    settings = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
    settings.paths.archive_dir.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(logs, settings.paths.archive_dir)
    t0 = time.perf_counter()
    report = run_index(settings, embedder=embedder)
    assert not report.errors, report.as_dict()
    seconds = time.perf_counter() - t0
    BUILT[str(home)] = settings, report
    return seconds


BUILT: dict[str, tuple] = {}  # home -> (settings, IndexReport) of each suzent build


def ann_recall(settings, embedder, n: int, rows: int) -> str:
    """Recall@10 and @100 of the built table's vector search (:meth:`ReadStore.vector_search`: the ANN index
    with recall's probes and exact re-rank) against exact search over every vector (lance, index bypassed), on
    ``n`` of recall_latency.py's queries; outside the timed build."""
    import statistics

    from recall_latency import queries

    from suzent_cli.index.embed import encode_query
    from suzent_cli.index.store import ReadStore

    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    parts = []
    for k in (10, 100):
        shares = []
        for q in queries(n, 7, max(1, rows // 100)):
            v = encode_query(embedder, [q])[0]
            got = {r["id"] for r in store.vector_search(v, k, columns=["id"])}
            exact = {r["id"] for r in store._table.search(v, vector_column_name="vector").distance_type("cosine")
                     .bypass_vector_index().limit(k).select(["id", "_distance"]).to_list()}
            shares.append(len(got & exact) / k)
        parts.append(f"recall@{k} {statistics.mean(shares):.3f} (all {k} found: {sum(x == 1 for x in shares)} of "
                     f"{n} queries)")
    return f"ANN ({store.vector_index_kind() or 'none: exact'}) vs exact vector search: " + ", ".join(parts)


def peer_build(logs: Path, home: Path, embedder) -> float:
    import sqlite_vec

    sqlite3 = _sqlite()
    settings = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
    settings.paths.archive_dir.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(logs, settings.paths.archive_dir)
    t0 = time.perf_counter()
    docs = [d for source in discover(settings.paths)
            for d in documents(source, frozenset(), settings.context_window)[0]]
    texts = [d.embed_text for d in docs]
    vectors = embedder.encode(texts)
    db = sqlite3.connect(home / "peer.sqlite")
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{embedder.dim}] distance_metric=cosine)")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(content, search_text, tokenize='porter')")
    with db:
        db.executemany("INSERT INTO vec(rowid, embedding) VALUES (?, ?)",
                       ((i + 1, v.astype("float32").tobytes()) for i, v in enumerate(vectors)))
        db.executemany("INSERT INTO fts(rowid, content, search_text) VALUES (?, ?, ?)",
                       ((i + 1, d.content, d.search_text) for i, d in enumerate(docs)))
    db.close()
    return time.perf_counter() - t0


def _sqlite():
    """A sqlite3 module that can load extensions: the standard one when its build allows it, else pysqlite3."""
    import sqlite3

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    import pysqlite3  # pip install pysqlite3-binary: this Python's sqlite3 was built without extension loading

    return pysqlite3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--embedder", default="hash:384")
    ap.add_argument("--deps", default=None, help="a directory to import sqlite_vec from (pip install --target DIR)")
    ap.add_argument("--ann-recall", type=int, default=100, metavar="N",
                    help="after the builds, the ANN index's recall@10/@100 against exact search on N queries (0: no)")
    args = ap.parse_args()
    if args.deps:
        sys.path.insert(0, args.deps)
    try:
        import sqlite_vec  # noqa: F401

        _sqlite()
    except ImportError:
        sys.exit("sqlite-vec (and, for a Python whose sqlite3 cannot load extensions, pysqlite3-binary) is not "
                 "installed: pip install sqlite-vec pysqlite3-binary (benchmark-only dependencies), or --deps DIR")
    embedder = load_embedder(args.embedder)
    times: dict[str, list[float]] = {"suzent": [], "peer": []}
    with tempfile.TemporaryDirectory(prefix="suzent-build-floor-") as tmp:
        logs = Path(tmp) / "logs"
        write_logs(logs, args.rows, max(1, args.rows // 100), seed=11)
        for r in range(args.rounds):
            order = [("suzent", suzent_build), ("peer", peer_build)]
            for name, fn in order if r % 2 == 0 else order[::-1]:
                seconds = fn(logs, Path(tmp) / f"{name}-{r}", embedder)
                times[name].append(seconds)
                print(f"round {r + 1}: {name} {seconds:.1f} s", flush=True)
        print()
        print("command: python " + shlex.join(["benchmarks/build_floor.py", *sys.argv[1:]]))
        print(f"{args.rows} rows, embedder {embedder.name}, {args.rounds} round(s), order alternated")
        best = {k: min(v) for k, v in times.items()}
        print("| build | seconds (each round) | best |")
        print("|---|---|---|")
        for name, values in times.items():
            print(f"| {name} | {' / '.join(f'{v:.1f}' for v in values)} | {best[name]:.1f} |")
        print(f"ratio suzent / peer (best): **{best['suzent'] / best['peer']:.2f}x**")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
        settings, report = next(iter(BUILT.values()))
        print(f"suzent's pass: {report.rows_added} rows, vector index {report.vector_index}, "
              f"{ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim).fragments()} fragments, "
              f"{report.fragments_compacted and 'compacted ' + str(report.fragments_compacted) or 'not compacted'}")
        if args.ann_recall:
            print(ann_recall(settings, embedder, args.ann_recall, args.rows))


if __name__ == "__main__":
    main()
