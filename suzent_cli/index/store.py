"""LanceDB access: the only module that imports lancedb.

Table ``archival_memories`` keeps the original suzent columns (``id, content, vector, user_id, chat_id, metadata,
importance, created_at, updated_at, accessed_at, access_count``; ``metadata`` is a JSON string with
``source_type, source_file, category, tags, …``) and adds four of suzent's own:

* ``source`` — ``label:filename`` of the markdown file a row was derived from (``archive:2026-06-01.md``,
  ``notebook:3_Personal/Food.md``, ``facts:MEMORY.md``). NULL marks a *legacy* row that suzent did not create;
  no indexer pass ever deletes one (``--full`` included); only ``suzent retire-legacy --apply`` does, through
  :func:`suzent_cli.index.indexer.delete_legacy_rows`, once each is recorded in markdown.
* ``locator`` — 1-based line of a daily-log fact, or chunk index of a page.
* ``source_date`` — ``YYYY-MM-DD`` for daily-log rows.
* ``search_text`` — what BM25 full-text search sees (content plus context); ``content`` is what recall returns.

Two BM25 indexes: one on ``search_text`` (the fact with its neighbouring-turn context) and one on ``content`` (the
fact alone), so recall can weight a match in the fact itself above a match in its context (field weighting).

From ``suzent_cli.index.indexer.ANN_MIN_ROWS`` rows on, the indexer keeps an ANN index (IVF_SQ, cosine) on
``vector``; :meth:`ReadStore.vector_search` then re-ranks its candidates by exact distance. Below it, vector search
compares every row (exact).

The embedder's name and dimension are stored in the table's schema metadata (``suzent.embedder``,
``suzent.dim``).

Two types open the table. :class:`ReadStore` is what every reader gets (recall, forget, status, dryrun, legacy,
hooks, …): searches, counts and scans, and no write method at all (the lance table itself is private to this
module). :class:`TableWriter` adds the writes (create the table, commit rows, delete legacy ids, compact, build the
BM25 and vector indexes); only :mod:`suzent_cli.index.indexer` builds one, under its lock, and
``tests/test_index_writer.py`` fails when any other module names it or calls a write.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from suzent_cli.errors import IndexIncompatible, IndexMissing, IndexUnreadable

TABLE = "archival_memories"
BLOCKS_TABLE = "memory_blocks"
SCHEMA_VERSION = "2"
FTS_COLUMN = "search_text"
CONTENT_FTS_COLUMN = "content"
FTS_COLUMNS = (FTS_COLUMN, CONTENT_FTS_COLUMN)
OWN_COLUMNS = ("source", "locator", "source_date", "search_text")
# A row's scope (suzent_cli.scope): "" the person's, else a project key. Added in place to a table built before it
# (TableWriter.ensure_scope_column, under the indexer lock); a reader of a table without it reads every row as the
# person's (which each one is: no line had a project tag before the column existed).
SCOPE_COLUMN = "scope"
# Named by every refusal to open a table suzent did not build (one line, see ReadStore.check).
MIGRATION_PATH = ("to keep its legacy rows run `suzent retire-legacy` (check) → `--export` (into the daily logs) → "
                  "`--apply`; or run `suzent index --rebuild`, which moves the table whole to <home>/backups/ and "
                  "builds a fresh one from markdown")
LEGACY_CHUNK = 1000  # ids per delete predicate
# The ANN vector index (IVF_SQ, cosine: ANN_PARTITION_ROWS), built by the indexer once a table holds enough rows (see
# suzent_cli.index.indexer.ANN_MIN_ROWS). A query asks its partitions for ANN_REFINE x limit candidates and re-ranks
# them by exact distance: on 100k rows its top 10 matched exact search's in 100 of 100 queries (BENCHMARKS.md).
ANN_NPROBES = 20
ANN_REFINE = 5
VECTOR_INDEX = "vector_idx"
# recall's neighbour read: after this many queries on one table version, that version's row positions are read
# whole and kept (ReadStore.neighbourhood)
POSITIONS_CACHE_AFTER = 3
# A store kept resident (ReadStore.keep_resident: a warm server's) holds every row's vector, result columns and
# BM25 postings in memory while their vectors take at most this many bytes (384-dim float32: ~350k rows, ~730 MB
# of arrays in all); above it (a 1M-row table: 1.5 GB of vectors, ~2.1 GB in all), lance serves.
RESIDENT_MAX_BYTES = 512 * 1024 * 1024
COUNT_CACHE = 64  # filtered row counts kept per store (a server's: one per project it answers for)
RESIDENT_SEGMENTS = 4  # a resident copy holds at most this many segments (each costs a search one more call)


class IncompatibleNoLegacy(IndexIncompatible):
    """Another tool's table in which every row names its source file: a rebuild loses nothing."""


TEMP_DIR = ".tmp"  # lance's spill/temp files, inside the index dir (see temp_dir)
LOG_ENV = "LANCEDB_LOG"  # env_logger filter of lancedb's Rust side (lance included); read once, at import


def _lancedb():
    # lancedb's Rust logger prints WARN lines (e.g. "loading legacy FTS index") to stderr unless told otherwise;
    # the failures that matter reach us as exceptions. A person who sets LANCEDB_LOG keeps their choice.
    os.environ.setdefault(LOG_ENV, "error")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="lancedb")
    import lancedb  # heavy, lazy by design

    return lancedb


@contextlib.contextmanager
def temp_dir(index_dir: Path) -> Iterator[None]:
    """Point lance's temporary files at ``<index_dir>/.tmp`` for the duration of a write (merge-insert spills,
    index builds), restoring ``TMPDIR`` afterwards.

    lance creates them with Rust's ``std::env::temp_dir()``, i.e. ``$TMPDIR`` or ``/tmp`` (it has no setting of
    its own), so a read-only ``/tmp`` or a ``TMPDIR`` naming a missing directory would fail every index pass. The
    index dir is writable whenever a write can succeed at all. When ``.tmp`` cannot be made, ``TMPDIR`` is left
    as it is (the write then fails with its own message)."""
    tmp = index_dir / TEMP_DIR
    try:
        tmp.mkdir(parents=True, exist_ok=True)
    except OSError:
        yield
        return
    try:  # Python caches its temp dir on first use: fix it now, so only lance (which reads $TMPDIR per call) moves
        tempfile.gettempdir()
    except OSError:  # no usable one at all: whatever Python picks inside this block is the better choice
        pass
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(tmp)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before


def archival_schema(dim: int, embedder: str):
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("content", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            pa.field("user_id", pa.string()),
            pa.field("chat_id", pa.string()),
            pa.field("metadata", pa.string()),
            pa.field("importance", pa.float32()),
            pa.field("created_at", ts),
            pa.field("updated_at", ts),
            pa.field("accessed_at", ts),
            pa.field("access_count", pa.int32()),
            pa.field("source", pa.string()),
            pa.field("locator", pa.int32()),
            pa.field("source_date", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field(SCOPE_COLUMN, pa.string()),
        ],
        metadata={"suzent.embedder": embedder, "suzent.dim": str(dim), "suzent.schema": SCHEMA_VERSION},
    )


def blocks_schema():
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema([pa.field("label", pa.string()), pa.field("content", pa.string()), pa.field("chat_id", pa.string()),
                      pa.field("user_id", pa.string()), pa.field("created_at", ts), pa.field("updated_at", ts)])


def quote(value: str) -> str:
    """A SQL string literal for a LanceDB filter (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


# ", /root/.cargo/registry/src/…/local.rs:273:40" and "/rustc/<hash>/library/…": where in lance's build an error
# was raised, which tells a person nothing
_BUILD_PATH = re.compile(r",?\s*(?:/\S*?/(?:\.cargo|rustc)/|/rustc/)\S*?\.rs:\d+(?::\d+)?")
_NOT_FOUND = re.compile(r"Not found: (\S+?\.\w+)(?:,|\s|$)")
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
LANCE_MAGIC = b"LANC"  # the last 4 bytes of every whole lance file


def lance_message(exc: BaseException) -> str:
    """The first line of a lance error, without the Rust source locations of lance's build, at most 200 chars."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return _BUILD_PATH.sub("", first).strip().rstrip(",")[:200] or type(exc).__name__


def _damaged_file(index_dir: Path, message: str) -> tuple[str, str] | None:
    """``(path relative to index_dir, "missing" | "cut short" | "incomplete")`` of the table file an error is
    about: the one a "Not found" names (for a full-text index, its directory: lance then names the file of an
    older index format it fell back to), else the first data or index file that does not end with lance's magic
    bytes. None when neither points at a file."""
    found = _damaged_named(index_dir, message)
    if found and f"{TABLE}.lance/_indices/" in found[0]:
        parts = found[0].split("/")
        cut = parts.index("_indices") + 2
        return "/".join(parts[:cut]) + "/", "incomplete"
    return found or _damaged_footer(index_dir)


def _damaged_named(index_dir: Path, message: str) -> tuple[str, str] | None:
    """The file a lance "Not found: <path>" names (lance drops the leading ``/``), relative to ``index_dir``."""
    found = _NOT_FOUND.search(message)
    if found:
        named = Path("/" + found.group(1).lstrip("/"))
        table = index_dir / f"{TABLE}.lance"
        for root in (index_dir.absolute(), index_dir.resolve()):
            try:
                return str(named.relative_to(root)), "missing"
            except ValueError:
                continue
        if f"{TABLE}.lance/" in found.group(1):
            return f"{TABLE}.lance/" + found.group(1).split(f"{TABLE}.lance/", 1)[1], "missing"
        if not table.is_dir():
            return f"{TABLE}.lance", "missing"
    return None


def _damaged_footer(index_dir: Path) -> tuple[str, str] | None:
    """The first data or index file of the table that does not end with lance's magic bytes (cut short)."""
    for sub in ("data", "_indices"):
        for path in sorted((index_dir / f"{TABLE}.lance" / sub).rglob("*.lance")):
            try:
                with path.open("rb") as fh:
                    size = fh.seek(0, os.SEEK_END)
                    fh.seek(max(0, size - len(LANCE_MAGIC)))
                    whole = size >= len(LANCE_MAGIC) and fh.read() == LANCE_MAGIC
            except OSError:
                whole = False
            if not whole:
                return str(path.relative_to(index_dir)), "cut short"
    return None


def index_error(index_dir: Path, exc: BaseException, *, home: Path | None = None, doing: str = "read") -> IndexUnreadable:
    """The one-line error for a lance failure on the table in ``index_dir``, naming its real cause and the fix.

    Permission denied, a read-only file system and a full disk are problems of the directory, not of the index:
    the hint names the directory and no rebuild. A missing or cut-short table file is named (relative to the index
    dir) with ``suzent index --rebuild`` as the fix (derived data: the rebuild moves the table to
    ``<home>/backups/`` and builds it again from markdown). ``doing``: ``read`` or ``write``, for the wording."""
    message = lance_message(exc)
    backups = f"{home}/backups/" if home is not None else "<home>/backups/"
    rebuild = (f"It is derived data: `suzent index --rebuild` moves it to {backups} and rebuilds it from the daily logs "
               "and the vault")
    code = _OS_ERROR.search(str(exc))
    errno = int(code.group(1)) if code else None
    if errno == 13 or "Permission denied" in message:
        return IndexUnreadable(f"cannot {doing} the index at {index_dir}: permission denied ({message}); give your user "
                               f"read and write access to {index_dir}")
    if errno == 30 or "Read-only file system" in message:
        return IndexUnreadable(f"cannot {doing} the index at {index_dir}: read-only file system ({message}); the index "
                               "dir must be writable (set index_dir / SUZENT_INDEX_DIR to a writable directory)")
    if errno == 28 or "No space left" in message:
        return IndexUnreadable(f"cannot {doing} the index at {index_dir}: the disk is full ({message}); free some "
                               "space and run `suzent index` again (nothing was committed)")
    if "temp dir" in message.lower() or "tempfile" in message.lower():
        return IndexUnreadable(f"cannot {doing} the index at {index_dir}: no usable temporary directory ({message}); "
                               f"make {index_dir / TEMP_DIR} or $TMPDIR writable")
    damaged = _damaged_file(index_dir, str(exc))
    if damaged:
        name, how = damaged
        return IndexUnreadable(f"cannot read the index at {index_dir}: {name} is {how}. {rebuild}")
    return IndexUnreadable(f"cannot {doing} the index at {index_dir} ({message}). {rebuild}")


def unreadable(index_dir: Path, exc: BaseException, *, home: Path | None = None) -> IndexUnreadable:
    """The one message for a table LanceDB cannot read (see :func:`index_error`); ``home`` names the real
    ``<home>/backups/`` in the hint (None: the placeholder)."""
    return index_error(index_dir, exc, home=home)


MANIFEST = ".manifest"  # a committed table version: ``_versions/<n>.manifest`` (``_latest.manifest``: older lance)


def committed(table_dir: Path) -> bool:
    """True when the lance table folder ``table_dir`` (``<name>.lance``) holds a committed version: a
    ``*.manifest`` file in its ``_versions/`` (or an older lance's ``_latest.manifest``).

    lance writes a version's manifest last (through a staging file renamed into place), so a folder without one
    holds no committed row: it is what a first commit that failed leaves (a full disk: ``_versions/`` and
    ``_transactions/``, empty or with a transaction file), and lance itself answers "Table … was not found" for
    it. False when the folder is missing. A ``_versions`` that cannot be listed (permission denied, not a
    folder) counts as committed: opening the table then fails with lance's own message, and nothing treats it as
    absent. One ``scandir``, stopped at the first manifest."""
    if not table_dir.is_dir():
        return False
    if (table_dir / f"_latest{MANIFEST}").exists():
        return True
    try:
        with os.scandir(table_dir / "_versions") as entries:
            return any(entry.name.endswith(MANIFEST) for entry in entries)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def table_exists(index_dir: Path) -> bool:
    """True when ``index_dir`` holds a committed ``archival_memories`` table (:func:`committed`). A table folder
    with no manifest is no index yet: readers get :class:`IndexMissing` ("run `suzent index`"), and the indexer
    clears the folder (removed when empty, else moved to ``<home>/backups/``) and creates the table
    (:func:`uncommitted_tables`)."""
    return committed(index_dir / f"{TABLE}.lance")


def uncommitted_tables(index_dir: Path) -> list[Path]:
    """The table folders of ``index_dir`` (``archival_memories.lance``, ``memory_blocks.lance``) that exist but hold
    no committed version (:func:`committed`): what a failed first commit leaves. The indexer clears them before it
    creates the tables (:func:`suzent_cli.index.indexer.clear_uncommitted`)."""
    return [index_dir / f"{name}.lance" for name in (TABLE, BLOCKS_TABLE)
            if (index_dir / f"{name}.lance").is_dir() and not committed(index_dir / f"{name}.lance")]


def table_stamp(index_dir: Path) -> tuple[int, int, int] | None:
    """A cheap fingerprint of the table's committed state, without lancedb: ``(inode of the table dir, inode and
    mtime in ns of its ``_versions`` dir)``. Every commit (and every cleanup of old versions) adds or removes a
    manifest in ``_versions``, which changes that directory's mtime; a table moved aside and rebuilt has another
    inode. Two ``stat`` calls (a few microseconds). None when there is no table; a table without ``_versions``
    (not lance's usual layout) gets a stamp of "now", i.e. always changed."""
    table = index_dir / f"{TABLE}.lance"
    try:
        top = os.stat(table)
    except OSError:
        return None
    try:
        versions = os.stat(table / "_versions")
    except OSError:  # not lance's usual layout: a stamp that always looks new, so the reader always refreshes
        return top.st_ino, 0, time.time_ns()
    return top.st_ino, versions.st_ino, versions.st_mtime_ns


class _Positions:
    """Where rows sit within their files: ``id, source, locator, _rowid`` rows (an arrow table) sorted by
    ``(source, locator, id)`` (rows without a source or locator left out), with each source's slice. The three
    columns are kept as Python lists (made once: a query looks up a few hundred rows, each a bisect and a few list
    reads, ~1 ms for recall's ~270 candidates at 100k rows)."""

    def __init__(self, data):
        import numpy as np
        import pyarrow.compute as pc

        data = data.filter(pc.and_(pc.is_valid(data["source"]), pc.is_valid(data["locator"])))
        data = data.sort_by([("source", "ascending"), ("locator", "ascending"), ("id", "ascending")])
        self._ids = data["id"].to_pylist()
        self._locators = data["locator"].to_pylist()
        self._row_ids = data["_rowid"].to_pylist()
        # each row's scope ("" the person's; all "" for a table without the column)
        self._scopes = [s or "" for s in data[SCOPE_COLUMN].to_pylist()] if SCOPE_COLUMN in data.column_names \
            else None
        self._slices: dict[str, tuple[int, int]] = {}
        if data.num_rows:
            encoded = data["source"].combine_chunks().dictionary_encode()
            codes = encoded.indices.to_numpy()
            names = encoded.dictionary.to_pylist()
            cuts = np.flatnonzero(np.diff(codes)) + 1
            starts = np.concatenate([[0], cuts])
            ends = np.concatenate([cuts, [len(codes)]])
            self._slices = {names[codes[a]]: (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}

    def _index(self, rid: str, source: str, locator: int) -> tuple[int, int, int] | None:
        """``(index of the row, start, end of its source's slice)``, or None when this version lacks it."""
        import bisect

        span = self._slices.get(source)
        if span is None:
            return None
        start, end = span
        locators, ids = self._locators, self._ids
        i = bisect.bisect_left(locators, locator, start, end)
        while i < end and locators[i] == locator:
            if ids[i] == rid:
                return i, start, end
            i += 1
        return None

    def around(self, rows: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
        wanted: dict[int, str] = {}
        for rid, source, locator in rows:
            if source is None or locator is None:
                continue
            found = self._index(rid, source, int(locator))
            if found is None:
                continue
            i, start, end = found
            for j in (i - 1, i, i + 1):
                if start <= j < end:
                    wanted[j] = source
        ids, locators, addresses, scopes = self._ids, self._locators, self._row_ids, self._scopes
        return [{"id": ids[j], "source": source, "locator": locators[j], "_rowid": addresses[j],
                 SCOPE_COLUMN: scopes[j] if scopes is not None else ""} for j, source in sorted(wanted.items())]


# What recall's runs read of each candidate (the wide result columns are read only for the hits: ReadStore.rows_at).
CANDIDATE_COLUMNS = ["id", "source", "locator", "source_date"]


class _Segment:
    """Rows of the table in memory, sorted by ``_rowid`` (their lance address: fragment << 32 | offset; a fragment
    never changes once written and its id is never reused, so an address names the same row in every version that
    still holds it): L2-normalised vectors (``matrix``, float32), the result columns (``data``, an arrow table;
    the candidate columns also as Python lists in ``columns``) and each text field inverted (``postings``). Never
    changed once made: which of its rows a version still holds is the version's business (:attr:`_Resident.live`)."""

    def __init__(self, data, dim: int, fts: dict[str, Any] | None = None, postings: dict[str, Any] | None = None,
                 matrix=None):
        import pyarrow.compute as pc

        from suzent_cli.index.bm25 import Postings

        addresses = data["_rowid"].to_numpy()
        if len(addresses) > 1 and not (addresses[1:] > addresses[:-1]).all():  # a scan comes in address order
            order = pc.sort_indices(data["_rowid"])
            data = data.take(order)
            order = order.to_numpy()
            matrix = matrix[order] if matrix is not None else None
            postings = {c: Postings.merged([(p, order)]) for c, p in (postings or {}).items()}
        self.row_ids = data["_rowid"].to_numpy()
        # L2-normalised vectors (given ones in ``data``'s row order, sorted with it), None without a "vector" column
        self.matrix = matrix if matrix is not None else \
            _normalised(data["vector"], dim) if "vector" in data.column_names else None
        # one chunk per column: a take of the hits' rows from a scan's hundred chunks costs ~10x more
        self.data = data.select([c for c in _RESULT_COLUMNS if c in data.column_names]).combine_chunks()
        # each text field with a full-text index, inverted (bm25.Postings; the text itself is not kept): from the
        # texts through ``fts`` (column -> bm25.Analyzer), or given (``postings``, in ``data``'s row order)
        self.postings: dict[str, Any] = dict(postings or {})
        for column, analyzer in (fts or {}).items():
            if column not in self.postings:
                self.postings[column] = Postings.build(data[column].to_pylist(), analyzer)
        # the candidate columns as Python lists: a search turns a hundred rows into dicts, a cell at a time
        self.columns = {c: data[c].to_pylist() for c in CANDIDATE_COLUMNS}
        self._scope_masks: dict[frozenset, Any] = {}  # scopes -> boolean mask of the rows in them (scope_mask)

    def scope_mask(self, scopes: frozenset):
        """A boolean mask of this segment's rows whose scope is one of ``scopes`` (a row without the column, or a
        null one, is the person's ``""``); None when every row is. Made once per set of scopes (a segment never
        changes; a server answers for a handful of projects)."""
        if scopes in self._scope_masks:
            return self._scope_masks[scopes]
        import numpy as np

        if SCOPE_COLUMN not in self.data.column_names:
            mask = None if "" in scopes else np.zeros(len(self.row_ids), dtype=bool)
        else:
            import pyarrow as pa
            import pyarrow.compute as pc

            column = pc.fill_null(self.data[SCOPE_COLUMN], "")
            found = pc.is_in(column, value_set=pa.array(sorted(scopes), pa.string()))
            mask = np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
            mask = None if mask.all() else mask
        if len(self._scope_masks) > 64:
            self._scope_masks.clear()
        self._scope_masks[scopes] = mask
        return mask

    @classmethod
    def scanned(cls, table, dim: int, vectors: bool, fts: dict[str, Any]) -> _Segment | None:
        """A segment of every row of ``table`` (checked out at the version wanted), read batch by batch in two
        scans: the result and text columns (each batch's texts inverted as it comes: the texts are not kept), then
        the vectors alone (each batch normalised as it comes), so neither the whole scan nor lance's read-ahead of
        it piles up while the slow part runs (~300 MB at 100k rows). None for no row."""
        import numpy as np
        import pyarrow as pa

        from suzent_cli.index.bm25 import PostingsBuilder

        def batches(columns: list[str]):
            for batch in table.search().select(columns).with_row_id(True).limit(None).to_batches():
                if batch.num_rows:
                    yield pa.Table.from_batches([batch])

        tables, builders = [], {c: PostingsBuilder(analyzer) for c, analyzer in fts.items()}
        for part in batches(_resident_columns(False, fts, table.schema.names)):
            for column, builder in builders.items():
                builder.add(part[column].to_pylist())
            tables.append(part.select([c for c in part.column_names if c not in fts or c in _RESULT_COLUMNS]))
        if not tables:
            return None
        data = pa.concat_tables(tables)
        matrix = None
        if vectors:
            addresses, matrices = [], []
            for part in batches(["vector"]):
                addresses.append(part["_rowid"].to_numpy())
                matrices.append(_normalised(part["vector"], dim))
            matrix = np.concatenate(matrices) if matrices else np.zeros((0, dim), dtype=np.float32)
            found = np.concatenate(addresses) if addresses else np.zeros(0, dtype=np.uint64)
            rows = data["_rowid"].to_numpy()
            if len(found) != len(rows) or not (found == rows).all():  # the two scans' orders: one row order
                by_address = np.argsort(found)
                where = np.minimum(np.searchsorted(found[by_address], rows), max(len(found) - 1, 0))
                if len(found) != len(rows) or not (found[by_address][where] == rows).all():
                    raise IndexUnreadable("the two scans of one table version returned other rows")  # no copy
                matrix = matrix[by_address][where]
        return cls(data, dim, postings={c: builder.done() for c, builder in builders.items()}, matrix=matrix)

    @property
    def nbytes(self) -> int:
        return int((self.matrix.nbytes if self.matrix is not None else 0) + self.data.nbytes
                   + sum(p.nbytes for p in self.postings.values()))


class _Resident:
    """Every row of one table version in memory (a kept store's first stage, :meth:`ReadStore.keep_resident`):
    :class:`_Segment` s and, for each, the rows this version still holds (``live``: a boolean mask, None for all).
    Exact cosine search is one matrix-vector product per segment; the hits' columns and the neighbour positions
    are read from memory. Never changed once made: the next version gets a new one that shares the segments it
    can (:meth:`following`)."""

    def __init__(self, version: int, dim: int, segments: list[_Segment], live: list[Any], vectors: bool = True,
                 fts: dict[str, Any] | None = None):
        self.version, self.dim, self.segments, self.live, self.vectors = version, dim, segments, live, vectors
        self.fts: dict[str, Any] = fts or {}  # text column -> bm25.Analyzer: the columns BM25 is answered for
        self._positions: _Positions | None = None  # where each row sits in its file (positions())

    @classmethod
    def read(cls, table, version: int, dim: int, vectors: bool = True,
             fts: dict[str, Any] | None = None) -> _Resident:
        """Every row of ``table`` (checked out at ``version``): one scan of the result columns (and the vectors,
        with ``vectors``; and the text columns of ``fts``, tokenised and inverted, not kept)."""
        segment = _Segment.scanned(table, dim, vectors, fts or {})
        return cls(version, dim, [segment] if segment else [], [None] if segment else [], vectors, fts)

    def following(self, table, version: int) -> _Resident:
        """The resident rows of ``table`` (checked out at ``version``), from these: one narrow scan lists the
        row addresses the version holds; rows held here stay (those it deleted masked out), the others are read by
        address into one new segment. Segments left with no row are dropped; with more than
        :data:`RESIDENT_SEGMENTS` the rest is merged into one (a search pays per segment)."""
        import numpy as np

        holds = np.sort(table.search().select(["locator"]).with_row_id(True).limit(None).to_arrow()["_rowid"]
                        .to_numpy())
        segments: list[_Segment] = []
        live: list[Any] = []
        known = np.zeros(len(holds), dtype=bool)
        for seg in self.segments:
            mask = np.isin(seg.row_ids, holds, assume_unique=True)
            if not mask.any():
                continue
            found = np.searchsorted(holds, seg.row_ids[mask])
            known[found] = True
            segments.append(seg)
            live.append(None if mask.all() else mask)
        new = holds[~known]
        if len(new):
            data = table.take_row_ids([int(r) for r in new]).select(_resident_columns(self.vectors, self.fts,
                                                                                      table.schema.names)) \
                .with_row_id().to_arrow()
            if data.num_rows:
                segments.append(_Segment(data, self.dim, self.fts))
                live.append(None)
        if len(segments) > RESIDENT_SEGMENTS:
            segments, live = _merged(segments, live, self.dim)
        return _Resident(version, self.dim, segments, live, self.vectors, self.fts)

    @property
    def rows(self) -> int:
        return sum(len(s.row_ids) if m is None else int(m.sum()) for s, m in zip(self.segments, self.live, strict=True))

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)

    def _masks(self, scopes: frozenset | None) -> list[Any]:
        """Per segment, the rows a search may return: those this version holds (:attr:`live`) and, with
        ``scopes``, whose scope is one of them (:meth:`_Segment.scope_mask`); None for all of a segment's rows."""
        if scopes is None:
            return list(self.live)
        out = []
        for seg, live in zip(self.segments, self.live, strict=True):
            mask = seg.scope_mask(scopes)
            out.append(live if mask is None else mask if live is None else (live & mask))
        return out

    def nearest(self, vector, limit: int, scopes: frozenset | None = None) -> list[dict[str, Any]]:
        """The ``limit`` rows nearest to ``vector`` by exact cosine distance (``_distance``: 1 - cosine),
        nearest first (ties by row address): :data:`CANDIDATE_COLUMNS` and ``_rowid``. ``scopes``: only rows of
        these scopes take part (a mask applied before the ranking)."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        query = query / norm if norm > 0 else query
        found: list[tuple[float, int, int, int]] = []  # (-similarity, row address, segment, index)
        for k, (seg, mask) in enumerate(zip(self.segments, self._masks(scopes), strict=True)):
            sims = seg.matrix @ query
            if mask is not None:
                sims = np.where(mask, sims, -np.inf)
            n = min(limit, len(sims))
            top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
            found += [(-float(sims[i]), int(seg.row_ids[i]), k, int(i)) for i in top.tolist() if sims[i] > -np.inf]
        found.sort()
        out = []
        for neg, _rid, k, i in found[:limit]:
            row = self._row(k, i)
            row["_distance"] = 1.0 + neg
            out.append(row)
        return out

    def bm25(self, text: str, limit: int, column: str, scopes: frozenset | None = None) -> list[dict[str, Any]]:
        """The ``limit`` best rows for ``text`` by BM25 over ``column`` (one of :attr:`fts`), as lance's
        full-text search scores them (:mod:`suzent_cli.index.bm25`): :data:`CANDIDATE_COLUMNS`, ``_rowid`` and
        ``_score``, best first (equal scores by row address). ``scopes``: only rows of these scopes are matched
        (a mask before the ranking; the statistics stay those of every row the version holds, as lance's
        prefiltered search keeps them: ``tests/test_scope_recall.py`` compares the two)."""
        from suzent_cli.index import bm25

        query = self.fts[column].query(text)
        parts = [(seg.postings[column], mask) for seg, mask in zip(self.segments, self.live, strict=True)]
        keep = [seg.scope_mask(scopes) for seg in self.segments] if scopes is not None else None
        out = []
        for score, k, i in bm25.search(parts, query, limit, keep):
            row = self._row(k, i)
            row["_score"] = score
            out.append(row)
        out.sort(key=lambda r: (-r["_score"], r["_rowid"]))
        return out

    def _row(self, k: int, i: int) -> dict[str, Any]:
        seg = self.segments[k]
        row = {c: seg.columns[c][i] for c in CANDIDATE_COLUMNS}
        row["_rowid"] = int(seg.row_ids[i])
        return row

    def _locate(self, row_id: int) -> tuple[int, int] | None:
        """``(segment, index)`` of the row at ``row_id`` when this version holds it."""
        import numpy as np

        for k, (seg, mask) in enumerate(zip(self.segments, self.live, strict=True)):
            i = int(np.searchsorted(seg.row_ids, np.uint64(row_id)))
            if i < len(seg.row_ids) and int(seg.row_ids[i]) == row_id:
                return None if mask is not None and not mask[i] else (k, i)
        return None

    def rows_at(self, row_ids: list[int]) -> list[dict[str, Any]]:
        """The result columns of the rows at these addresses that this version holds, in address order."""
        import numpy as np

        by_segment: dict[int, list[int]] = {}
        for rid in sorted({int(r) for r in row_ids}):
            where = self._locate(rid)
            if where is not None:
                by_segment.setdefault(where[0], []).append(where[1])
        out = []
        for k in sorted(by_segment):
            out += self.segments[k].data.take(np.asarray(by_segment[k], dtype=np.int64)).to_pylist()
        return out

    def positions(self) -> _Positions:
        """Where every row this version holds sits in its file (a :class:`_Positions`: sorted by
        ``(source, locator, id)``, each file's span): made once per version, by the thread that reads the copy
        (:meth:`ReadStore._read_resident`) before the copy is used, so no query pays it."""
        positions = self._positions
        if positions is None:
            import pyarrow as pa

            parts = []
            for seg, mask in zip(self.segments, self.live, strict=True):
                columns = {"id": seg.data["id"], "source": seg.data["source"], "locator": seg.data["locator"],
                           "_rowid": pa.array(seg.row_ids)}
                if SCOPE_COLUMN in seg.data.column_names:
                    columns[SCOPE_COLUMN] = seg.data[SCOPE_COLUMN]
                part = pa.table(columns)
                parts.append(part if mask is None else part.filter(pa.array(mask)))
            # a segment read before the scope column existed has none: its rows are the person's (null scope)
            positions = self._positions = _Positions(pa.concat_tables(parts, promote_options="default") if parts
                                                     else pa.table({
                "id": pa.array([], pa.string()), "source": pa.array([], pa.string()),
                "locator": pa.array([], pa.int32()), "_rowid": pa.array([], pa.uint64())}))
        return positions

    def around(self, rows: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
        """As :meth:`_Positions.around`: each row and the rows just before and after it in its file (by locator,
        then id), as ``id, source, locator, _rowid``, ordered by ``(source, locator, id)``."""
        return self.positions().around(rows)


def _normalised(column, dim: int):
    """A ``vector`` column (fixed-size lists, chunked or not) as an L2-normalised float32 matrix, one row per
    vector (a null vector: zeros), made chunk by chunk into one new array (no combined copy of the column)."""
    import numpy as np
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.zeros((len(column), dim), dtype=np.float32)
    at = 0
    for chunk in chunks:
        n = len(chunk)
        valid = np.asarray(chunk.is_valid())
        if valid.all():  # a view of arrow's buffer
            part = np.asarray(chunk.flatten(), dtype=np.float32).reshape(-1, dim)
        else:
            part = np.zeros((n, dim), dtype=np.float32)
            if valid.any():
                part[valid] = np.asarray(chunk.filter(pa.array(valid)).flatten(), dtype=np.float32).reshape(-1, dim)
        norms = np.linalg.norm(part, axis=1, keepdims=True)
        np.divide(part, np.where(norms > 0, norms, 1.0), out=out[at:at + n])
        at += n
    return out


def _with_columns(resident: _Resident, rows: list[dict[str, Any]], columns: list[str] | None) -> list[dict[str, Any]]:
    """``rows`` of a resident search (:data:`CANDIDATE_COLUMNS`, ``_rowid`` and a score) with ``columns`` (None:
    the result columns) when they ask for more than the candidate columns, read from the copy."""
    if columns is not None and set(columns) <= set(CANDIDATE_COLUMNS):
        return rows
    full = {r["id"]: r for r in resident.rows_at([r["_rowid"] for r in rows])}
    return [{**full[r["id"]], **{k: v for k, v in r.items() if k.startswith("_")}} for r in rows if r["id"] in full]


# The options of a full-text index (lance's ``index_details``) the resident copy scores as lance does: passed to
# ``lancedb.tokenize`` as they are; an index with any other option set (another base tokenizer, identifier or
# number splitting, ...) is left to lance.
_FTS_OPTIONS = ("language", "max_token_length", "lower_case", "stem", "remove_stop_words", "custom_stop_words",
                "ascii_folding")
_FTS_OFF = ("split_identifiers", "split_on_numerics", "preserve_original", "index_operators")


def fts_options(details: dict[str, Any] | None) -> dict[str, Any] | None:
    """The tokenizer options of a full-text index from its ``index_details`` (``list_indices``), for
    :func:`fts_tokenizer`; None when the index uses what the resident copy does not reproduce: a base tokenizer
    other than ``simple``, a lance tokenizer other than ``text``, or one of the splitting options."""
    if not isinstance(details, dict) or details.get("base_tokenizer", "simple") != "simple" \
            or details.get("lance_tokenizer") not in (None, "text") or any(details.get(k) for k in _FTS_OFF):
        return None
    return {k: details[k] for k in _FTS_OPTIONS if k in details}


def fts_tokenizer(options: dict[str, Any]) -> Callable[[str], list[str]]:
    """lance's analyzer of a full-text index with ``options`` (:func:`fts_options`): ``text -> [token, ...]``,
    exactly the tokens lance indexes (``lancedb.tokenize``)."""
    tokenize = _lancedb().tokenize

    def tokens(text: str) -> list[str]:
        return [t.text for t in tokenize(text, base_tokenizer="simple", **options)]

    return tokens


def _resident_columns(vectors: bool, fts: dict[str, Any] | None = None, names=None) -> list[str]:
    columns = [*_RESULT_COLUMNS, "vector"] if vectors else list(_RESULT_COLUMNS)
    columns += [c for c in (fts or {}) if c not in columns]
    return columns if names is None or SCOPE_COLUMN in names else [c for c in columns if c != SCOPE_COLUMN]


def _merged(segments: list[_Segment], live: list[Any], dim: int) -> tuple[list[_Segment], list[Any]]:
    """The largest segment as it is, and the live rows of all the others merged into one (rebuilt from their
    arrays: no lance read; the new segment sorts the rows, their vectors and postings by address together)."""
    import numpy as np
    import pyarrow as pa

    from suzent_cli.index.bm25 import Postings

    big = max(range(len(segments)), key=lambda k: len(segments[k].row_ids))
    parts, kept, matrices = [], [], []
    for k, (seg, mask) in enumerate(zip(segments, live, strict=True)):
        if k == big:
            continue
        keep = np.arange(len(seg.row_ids)) if mask is None else np.flatnonzero(mask)
        parts.append(seg.data.take(keep).append_column("_rowid", pa.array(seg.row_ids[keep])))
        kept.append((seg, keep))
        if seg.matrix is not None:
            matrices.append(seg.matrix[keep])
    matrix = np.concatenate(matrices) if matrices and len(matrices) == len(kept) else None
    postings = {column: Postings.merged([(seg.postings[column], keep) for seg, keep in kept])
                for column in segments[big].postings}
    merged = pa.concat_tables(parts, promote_options="default")  # segments from before the scope column: null
    return [segments[big], _Segment(merged, dim, postings=postings, matrix=matrix)], [live[big], None]


def release_freed_heap() -> None:
    """Give the C heap that a resident read freed back to the system (glibc's ``malloc_trim(0)``; a no-op
    elsewhere). Reading the copy builds and drops a few hundred MB of scan batches and token lists; glibc keeps
    that heap mapped, so a warm server at 100k rows held ~600 MB more than the copy itself without this. Never
    raises."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).malloc_trim(0)  # the process's own symbols: glibc's when it is the C library
    except (OSError, AttributeError):  # musl and others have no malloc_trim: nothing to give back this way
        pass


class ReadStore:
    """An open ``archival_memories`` table, read-only: what every module but the indexer gets.

    It has no write method, and the lance table it wraps is private (``_table``), so a reader cannot write by
    accident; writes go through the indexer (:mod:`suzent_cli.index.api`)."""

    def __init__(self, index_dir: Path, table, *, home: Path | None = None):
        self.index_dir = index_dir
        self._table = table
        self.home = home  # the suzent home, for hints naming <home>/backups/ (None: the placeholder)
        self._cache: dict[str, tuple[int, Any]] = {}  # what -> (table version, value): see _cached
        self._seen: tuple[int, int] = (-1, 0)  # (table version, neighbourhood calls on it): see neighbourhood
        self._cache_lock = threading.Lock()
        self._resident: _Resident | None = None  # see keep_resident
        self._resident_max = 0  # bytes of vectors a resident copy may take; 0: none is kept
        self._resident_exact = True  # the copy holds the vectors even with an ANN index (keep_resident)
        self._resident_thread: threading.Thread | None = None
        self._resident_missed: int | None = None  # a version whose read left no copy (too large, failed): not retried
        self._version_read: int | None = None  # the table version, read once (see _version)

    def _version(self) -> int:
        """The table version this store reads. lance's ``table.version`` costs ~0.2-1 ms a call (more under load)
        and recall asks several times a query; the table (opened without a read-consistency interval) only moves
        when :meth:`refresh` moves it, so it is read once and again after each refresh."""
        version = self._version_read
        if version is None:
            version = self._version_read = int(self._table.version)
        return version

    def _cached(self, what: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per table version of this store (a version never changes once committed; a store
        moved to a newer one, e.g. by ``checkout_latest``, computes it again). Thread-safe: concurrent queries on
        one store build it once."""
        version = self._version()
        hit = self._cache.get(what)
        if hit is not None and hit[0] == version:
            return hit[1]
        with self._cache_lock:
            hit = self._cache.get(what)
            if hit is None or hit[0] != version:
                hit = (version, make())
                self._cache[what] = hit
            return hit[1]

    # ---- opening -------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, index_dir: Path, embedder_name: str, dim: int, *, home: Path | None = None) -> ReadStore:
        """Open the table in ``index_dir``, checked against the embedder it will be used with. ``home``: the
        suzent home, named in the hints of the errors below (None: ``<home>``).

        Raises :class:`IndexMissing` when there is no table, :class:`IndexUnreadable` when lance cannot read it,
        :class:`IndexIncompatible` when it was written by another tool/schema or another embedder.
        """
        if not table_exists(index_dir):
            raise IndexMissing(f"no search index at {index_dir} yet: run `suzent index` first")
        try:
            db = _lancedb().connect(str(index_dir))
            store = cls(index_dir, db.open_table(TABLE), home=home)
            store._table.schema  # noqa: B018 - forces the manifest to be read
        except Exception as exc:
            raise unreadable(index_dir, exc, home=home) from exc
        store.check(embedder_name, dim)
        return store

    @classmethod
    def open_existing(cls, index_dir: Path, *, home: Path | None = None) -> ReadStore:
        """Open the table for reading whatever embedder it records (for full-text search, which needs no
        embedder). Raises :class:`IndexMissing`, :class:`IndexIncompatible`, :class:`IndexUnreadable` (``home``
        as for :meth:`open`)."""
        if not table_exists(index_dir):
            raise IndexMissing(f"no search index at {index_dir} yet: run `suzent index` first")
        try:
            store = cls(index_dir, _lancedb().connect(str(index_dir)).open_table(TABLE), home=home)
            name, dim = store.recorded_embedder()
        except Exception as exc:
            raise unreadable(index_dir, exc, home=home) from exc
        store.check(name or "", dim or 0)
        return store

    @classmethod
    def open_any(cls, index_dir: Path, *, home: Path | None = None) -> ReadStore:
        """Open the table whatever wrote it (this schema, an older one, the original suzent app's), WITHOUT the
        schema/embedder check: for ``retire-legacy`` only, which reads a few columns (and, through the indexer's
        :class:`TableWriter`, deletes legacy rows).
        Raises :class:`IndexMissing`, :class:`IndexUnreadable` (``home`` as for :meth:`open`)."""
        if not table_exists(index_dir):
            raise IndexMissing(f"no search index at {index_dir}: nothing to retire")
        try:
            store = cls(index_dir, _lancedb().connect(str(index_dir)).open_table(TABLE), home=home)
            store._table.schema  # noqa: B018 - forces the manifest to be read
        except Exception as exc:
            raise unreadable(index_dir, exc, home=home) from exc
        return store

    def recorded_embedder(self) -> tuple[str | None, int | None]:
        meta = self._table.schema.metadata or {}
        name = meta.get(b"suzent.embedder")
        dim = meta.get(b"suzent.dim")
        return (name.decode() if name else None, int(dim) if dim else None)

    def check(self, embedder_name: str, dim: int) -> None:
        names = set(self._table.schema.names)
        name, recorded_dim = self.recorded_embedder()
        if not set(OWN_COLUMNS) <= names or name is None:
            try:
                legacy = len(self.legacy_rows())
            except Exception:  # noqa: BLE001 - only sharpens the message below
                legacy = None
            if legacy == 0:
                raise IncompatibleNoLegacy(
                    f"the index at {self.index_dir} was written by another tool (e.g. the original suzent app); every "
                    "row names the markdown file it came from (no legacy rows), so `suzent index --rebuild` replaces "
                    f"it safely: it moves the table whole to {self.home or '<home>'}/backups/ and builds a fresh one "
                    "from markdown")
            raise IndexIncompatible(
                f"the index at {self.index_dir} was written by another tool (e.g. the original suzent app) and its rows "
                f"may be the only copy of that content, so suzent will not rewrite it (for a separate index now, point "
                f"--index-dir at a fresh directory); {MIGRATION_PATH}")
        if name != embedder_name or recorded_dim != dim:
            raise IndexIncompatible(
                f"the index at {self.index_dir} was built with embedder {name} (dim {recorded_dim}), not "
                f"{embedder_name} (dim {dim}); use `--model {name}`, or {MIGRATION_PATH}")

    def verify(self, *, home: Path | None = None) -> tuple[int, int]:
        """Check that every data file of the table can be read: count the rows (manifest), scan the ``id`` and
        ``source`` columns (which opens every fragment's data file) and run one tiny query through each index
        (BM25, the BTree on ``source``, the ANN vector index). Returns ``(rows, rows derived from markdown)`` (the second: rows with a ``source``). Raises
        :class:`IndexUnreadable` naming the missing or cut-short file and ``suzent index --rebuild`` (or the
        directory's problem, see :func:`index_error`). Reads two string columns, never the vectors."""
        columns = [c for c in ("id", "source") if c in self._table.schema.names]
        try:
            total = self.count()
            data = self._table.search().select(columns).limit(None).to_arrow()
            for column in FTS_COLUMNS:
                if total and self.has_fts_index(column):
                    self._table.search("suzent", query_type="fts", fts_columns=column).limit(1).select(["id", "_score"]).to_list()
            kinds = {columns: kind for columns, kind in self._list_indices()}
            sources = data.column("source").drop_null() if "source" in columns else None
            known = sources[0].as_py() if sources is not None and len(sources) else None
            if known is not None and ("source",) in kinds:  # one lookup through the BTree index (lookup + page)
                self._table.search().where(f"source = {quote(known)}").limit(1).select(["id"]).to_list()
            dim = self.vector_dim()
            if total and ("vector",) in kinds and dim:  # one query through the ANN index
                probe = [1.0] + [0.0] * (dim - 1)
                self._table.search(probe, vector_column_name="vector").distance_type("cosine").limit(1) \
                    .select(["id"]).to_list()
        except Exception as exc:
            raise index_error(self.index_dir, exc, home=home or self.home) from exc
        if data.num_rows != total:
            raise IndexUnreadable(f"cannot read the index at {self.index_dir}: its manifest counts {total} rows but "
                                  f"{data.num_rows} can be read. `suzent index --rebuild` moves it to "
                                  f"{home if home is not None else '<home>'}/backups/ and rebuilds it from markdown")
        derived = total - data.column("source").null_count if "source" in columns else 0
        return total, derived

    # ---- the resident first stage (a warm server's) ----------------------------------------------------------
    def keep_resident(self, max_bytes: int = RESIDENT_MAX_BYTES, *, wait: bool = False,
                      exact_vectors: bool = True) -> bool:
        """Keep every row of the table in memory for this store's queries (a store that lives across many
        queries: ``suzent serve``'s): the result columns, so :meth:`rows_at` and :meth:`neighbourhood` read
        memory, and the vectors as L2-normalised float32 matrices, so :meth:`vector_search` is exact cosine in
        numpy: one matrix-vector product per segment, cheaper than lance's ANN search at 100k rows (23 vs 104 ms
        at load 5, 27 vs 29 ms at load 3: BENCHMARKS.md) and exact. ``exact_vectors=False`` holds them only while
        the table has no ANN index (under ``indexer.ANN_MIN_ROWS`` rows) and leaves ANN search to lance. Both BM25 runs (``content`` and
        ``search_text``, without a ``where``) are answered from memory too, for each text column whose full-text
        index has options the copy reproduces (:func:`fts_options`): its rows inverted through lance's own analyzer
        and scored as lance's BM25 (:mod:`suzent_cli.index.bm25`; the statistics of the rows the version holds).

        The copy is read by a background thread (``wait``: in this call) and followed version by version: after a
        commit, one narrow scan lists the row addresses the new version holds; rows already held are kept (those it
        deleted masked out) and only the others are read, by address (after a compaction: all of them). Until the
        copy matches the version the store reads, queries go to lance as without it, so a query never waits for the
        copy and never sees an older version. Nothing is kept while the vectors would take more than ``max_bytes``
        (:data:`RESIDENT_MAX_BYTES`; 384-dim vectors: ~350k rows); lance then answers everything. At 100k rows the
        copy is ~216 MB of arrays: vectors 154 MB, result columns 37 MB, BM25 postings of both fields ~25 MB
        (BENCHMARKS.md). Returns True when the copy matches the store's version on return. Read-only: the table is never written."""
        self._resident_max = max(0, int(max_bytes))
        self._resident_exact = bool(exact_vectors)
        self._resident_now()
        if wait:
            self.settle_resident()
        return self._resident is not None and self._resident.version == self._version()

    def settle_resident(self, timeout: float | None = None) -> None:
        """Wait for the background read of the resident copy, if one runs (tests and benchmarks)."""
        thread = self._resident_thread
        if thread is not None:
            thread.join(timeout)
        if self._resident_max and (self._resident is None or self._resident.version != self._version()):
            self._resident_now()
            thread = self._resident_thread
            if thread is not None:
                thread.join(timeout)

    def _resident_now(self) -> _Resident | None:
        """The resident copy when it matches the version this store reads, else None (and a background read of
        that version is started, unless one runs)."""
        if not self._resident_max:
            return None
        version = self._version()
        resident = self._resident
        if resident is not None and resident.version == version:
            return resident
        if self._resident_missed == version:
            return None
        with self._cache_lock:
            running = self._resident_thread
            if running is None or not running.is_alive():
                self._resident_thread = threading.Thread(target=self._read_resident, args=(version,), daemon=True,
                                                         name="suzent-resident")
                self._resident_thread.start()
        return None

    def _read_resident(self, version: int) -> None:
        """Read (or follow) the resident copy at ``version`` through a table handle of its own (the store's may
        move to a newer version meanwhile). A failure leaves the copy as it was: lance keeps answering, and that
        version is not tried again (the next one is)."""
        try:
            dim = self.vector_dim()
            table = _lancedb().connect(str(self.index_dir)).open_table(TABLE)
            table.checkout(version)
            if not dim or int(table.count_rows()) * dim * 4 > self._resident_max:
                self._resident, self._resident_missed = None, version
                return
            # The vectors are held (and searched exactly) whatever the indexes: at 100k rows one numpy product
            # costs less than lance's ANN search, and far less under load (BENCHMARKS.md, issue 25, item 5);
            # exact_vectors=False holds them only while the table has no ANN index (the benchmark's comparison).
            indices = table.list_indices()
            vectors = self._resident_exact or not any("vector" in idx.columns for idx in indices)
            base = self._resident
            fts = self._analyzers(indices, base.fts if base is not None else {})
            same = base is not None and base.dim == dim and base.vectors == vectors and base.fts == fts
            made = base.following(table, version) if same else _Resident.read(table, version, dim, vectors, fts)
            made.positions()  # the neighbour positions of this version, made here rather than by a query
            if self._resident is None or self._resident.version <= version:
                self._resident = made
        except Exception:  # noqa: BLE001 - an optimisation: without the copy, lance answers every query
            self._resident_missed = version
        finally:
            release_freed_heap()

    @staticmethod
    def _analyzers(indices, known: dict[str, Any]) -> dict[str, Any]:
        """``{text column: bm25.Analyzer}`` for each of :data:`FTS_COLUMNS` whose full-text index the resident
        copy can score as lance does (:func:`fts_tokenizer` of its options); an analyzer of ``known`` with the
        same options is reused (its vocabulary holds the ids the segments use)."""
        from suzent_cli.index.bm25 import Analyzer

        out: dict[str, Any] = {}
        if not callable(getattr(_lancedb(), "tokenize", None)):  # a lancedb without it: lance answers BM25
            return out
        made: dict[tuple, Any] = {}
        for idx in indices:
            columns = tuple(idx.columns)
            if len(columns) != 1 or columns[0] not in FTS_COLUMNS or str(idx.index_type).upper() != "FTS":
                continue
            options = fts_options(getattr(idx, "index_details", None))
            if options is None:
                continue
            key = tuple(sorted(options.items(), key=lambda kv: kv[0]))
            old = known.get(columns[0])
            if old is not None and old.options == key:
                made.setdefault(key, old)
            if key not in made:
                limit = options.get("max_token_length")
                digits = (limit if limit is not None else 1 << 30) if options.get("custom_stop_words") is None else None
                made[key] = Analyzer(fts_tokenizer(options), key, digits)
            out[columns[0]] = made[key]
        return out

    # ---- reads ---------------------------------------------------------------------------------------------
    def count(self, where: str | None = None) -> int:
        """The number of rows (matching ``where``, a LanceDB filter); counted once per table version and filter
        (recall asks on every query, with the scope's filter; at most :data:`COUNT_CACHE` filters are kept)."""
        if where:
            key = "count:" + where
            if key in self._cache or sum(k.startswith("count:") for k in list(self._cache)) < COUNT_CACHE:
                return self._cached(key, lambda: int(self._table.count_rows(where)))
            return int(self._table.count_rows(where))
        return self._cached("count", lambda: int(self._table.count_rows()))

    def scope_counts(self) -> dict[str, int]:
        """``{scope: rows}`` over the whole table (``""`` the person's; every row is, without the column). One scan
        of one narrow column."""
        if not self.has_scope():
            return {"": self.count()} if self.count() else {}
        import pyarrow.compute as pc

        column = pc.fill_null(self.scan([SCOPE_COLUMN])[SCOPE_COLUMN], "")
        counts = pc.value_counts(column).to_pylist()
        return {c["values"]: int(c["counts"]) for c in counts}

    def ids_by_source(self) -> dict[str | None, set[str]]:
        """``{source: {row id, …}}`` for every row (legacy rows under ``None``). One column scan."""
        data = self._table.to_arrow().select(["id", "source"]).to_pydict() if self.count() else {"id": [], "source": []}
        out: dict[str | None, set[str]] = {}
        for rid, source in zip(data["id"], data["source"], strict=False):
            out.setdefault(source, set()).add(rid)
        return out

    def vector_search(self, vector, limit: int, where: str | None = None,
                      columns: list[str] | None = None, scopes: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """The ``limit`` rows nearest to ``vector`` by cosine distance (``_distance``: 1 - cosine similarity),
        nearest first, each with ``columns`` (None: the result columns) and its ``_rowid`` (its address in this
        table version, for :meth:`rows_at`). Recall asks for :data:`CANDIDATE_COLUMNS` only: reading the wide
        columns of a whole candidate pool costs more than the search.

        With the resident copy (:meth:`keep_resident`) and no ``where``: exact cosine over every row in memory.
        ``scopes`` (None: every row): only rows of these scopes (:mod:`suzent_cli.scope`) take part, filtered before
        the ranking (a mask over the resident copy, else lance's prefilter, :meth:`scope_where`).

        Without a vector index (tables under :data:`ANN_MIN_ROWS` rows) every vector is compared: exact. With one
        (built by the indexer, see :meth:`TableWriter.ensure_vector_index`) the index proposes
        ``ANN_REFINE * limit`` candidates from ``ANN_NPROBES`` partitions, and lance re-ranks them by their exact
        distance, so ``_distance`` is always the exact one; rows added since the index was last refreshed are
        compared exhaustively and merged in (lance's default, never ``fast_search``), so a new row is found at
        once."""
        resident = self._resident_now() if where is None else None
        if resident is not None and resident.vectors:
            keep = frozenset(scopes) if scopes is not None else None
            return _with_columns(resident, resident.nearest(vector, limit, keep), columns)
        q = self._table.search(vector, vector_column_name="vector").distance_type("cosine").limit(limit)
        if self.vector_index_kind() is not None:
            q = q.nprobes(ANN_NPROBES).refine_factor(ANN_REFINE)
        where = _both(where, self.scope_where(scopes))
        if where:
            q = q.where(where, prefilter=True)
        return q.select([*self._present(columns or _RESULT_COLUMNS), "_distance"]).with_row_id(True).to_list()

    def fts_search(self, text: str, limit: int, where: str | None = None, column: str = FTS_COLUMN,
                   columns: list[str] | None = None, scopes: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """BM25 search of ``text`` over ``column`` (``search_text`` or ``content``), best first, each row with
        ``columns`` (None: the result columns), ``_score`` and ``_rowid``; [] when ``column`` has no index yet.
        ``scopes``: as :meth:`vector_search`'s (filtered before the ranking)."""
        if not self.has_fts_index(column):
            return []
        resident = self._resident_now() if where is None else None
        if resident is not None and column in resident.fts:
            try:
                keep = frozenset(scopes) if scopes is not None else None
                return _with_columns(resident, resident.bm25(text, limit, column, keep), columns)
            except Exception:  # noqa: BLE001 - an optimisation (lance's tokenizer on a text it refuses?): lance answers
                pass
        q = self._table.search(text, query_type="fts", fts_columns=column).limit(limit)
        where = _both(where, self.scope_where(scopes))
        if where:
            q = q.where(where, prefilter=True)
        return q.select([*self._present(columns or _RESULT_COLUMNS), "_score"]).with_row_id(True).to_list()

    def has_scope(self) -> bool:
        """Does the table have the ``scope`` column (:data:`SCOPE_COLUMN`)? Without it (a table built before
        scopes, not yet migrated by an index pass) every row is the person's. Read once per table version."""
        return self._cached("has_scope", lambda: SCOPE_COLUMN in self._table.schema.names)

    def _present(self, columns: list[str]) -> list[str]:
        """``columns`` without ``scope`` when the table has no such column."""
        return list(columns) if SCOPE_COLUMN not in columns or self.has_scope() else \
            [c for c in columns if c != SCOPE_COLUMN]

    def scope_where(self, scopes: tuple[str, ...] | list[str] | frozenset | None) -> str | None:
        """The lance prefilter keeping rows of ``scopes`` (``scope IN (…)``; a null scope counts as the person's),
        or None: no filter (``scopes`` None, or a table without the column when ``scopes`` holds the person's, since
        every row there is). A table without the column and ``scopes`` without the person's: a filter nothing
        passes."""
        if scopes is None:
            return None
        wanted = sorted(set(scopes))
        if not self.has_scope():
            return None if "" in wanted else "id IS NULL AND id IS NOT NULL"
        clause = f"{SCOPE_COLUMN} IN (" + ", ".join(quote(s) for s in wanted) + ")" if wanted else "FALSE"
        return f"({clause} OR {SCOPE_COLUMN} IS NULL)" if "" in wanted else clause

    def _indices(self) -> list[tuple[tuple[str, ...], str]]:
        """``[(columns, index type upper-cased)]`` of the table's indexes. Listed once per table version (an index
        change is a new version), so a store kept open across queries (a warm server's) does not ask lance on every
        query."""
        return self._cached("indices", self._list_indices)

    def _list_indices(self) -> list[tuple[tuple[str, ...], str]]:
        return self._list_indices_of(self._table)

    @staticmethod
    def _list_indices_of(table) -> list[tuple[tuple[str, ...], str]]:
        return [(tuple(idx.columns), str(idx.index_type).upper()) for idx in table.list_indices()]

    def has_fts_index(self, column: str = FTS_COLUMN) -> bool:
        """True when ``column`` has a full-text index."""
        return any(column in columns and kind == "FTS" for columns, kind in self._indices())

    def vector_index_kind(self) -> str | None:
        """The type of the ``vector`` column's ANN index as lance names it (e.g. ``IVFPQ``), or None (exact
        search)."""
        return next((kind for columns, kind in self._indices() if "vector" in columns), None)

    def positions(self, sources: list[str]) -> list[dict[str, Any]]:
        """``id, source, locator`` of every row of ``sources``: where each row sits within its file, so recall can
        find a hit's neighbouring facts or chunks."""
        if not sources:
            return []
        where = "source IN (" + ", ".join(quote(s) for s in sorted(set(sources))) + ")"
        return self._table.search().where(where).select(self._present(["id", "source", "locator", SCOPE_COLUMN])) \
            .limit(None).to_arrow().to_pylist()

    def neighbourhood(self, rows: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
        """``id, source, locator, _rowid`` of each of ``rows`` (``(id, source, locator)``) and of the rows just
        before and just after it in its file (ordered by locator, then id): all that recall's neighbour step
        (:func:`suzent_cli.recall.spread_to_neighbours`) can read or change. ``_rowid`` addresses the row in this
        table version (for :meth:`rows_at`). A row this version does not hold is left out.

        The first :data:`POSITIONS_CACHE_AFTER` calls on a table version read the files involved (three narrow
        columns, through the indexer's BTree index on ``source``); from the next one on, the positions of the whole
        table are read once and kept for that version, and answers come from memory. So a store kept open for many
        queries (a server's) gets the fast path, while one that sees a new version after nearly every query (a
        server indexing each capture, then recalling once) never pays the whole-table read. Only the rows returned
        become Python objects.

        A store with a resident copy of this version (:meth:`keep_resident`) answers from it; one whose copy lags
        reads the files involved (never the whole table: the copy is being brought up to date instead)."""
        resident = self._resident_now()
        if resident is not None:
            return resident.around(rows)
        if self._resident_max:
            return self._file_positions(rows).around(rows)
        cached = self._cache.get("positions")
        version = self._version()
        if cached is None or cached[0] != version:
            with self._cache_lock:
                seen = self._seen[1] + 1 if self._seen[0] == version else 1
                self._seen = (version, seen)
            if seen <= POSITIONS_CACHE_AFTER:
                return self._file_positions(rows).around(rows)
        return self._cached("positions", self._table_positions).around(rows)

    def _file_positions(self, rows: list[tuple[str, str, int]]) -> _Positions:
        import pyarrow as pa

        sources = sorted({source for _, source, locator in rows if source is not None and locator is not None})
        if not sources:
            return _Positions(pa.table({"id": pa.array([], pa.string()), "source": pa.array([], pa.string()),
                                        "locator": pa.array([], pa.int32()), "_rowid": pa.array([], pa.uint64())}))
        where = "source IN (" + ", ".join(quote(s) for s in sources) + ")"
        return _Positions(self._table.search().where(where).select(self._present(["id", "source", "locator",
                                                                                   SCOPE_COLUMN]))
                          .with_row_id(True).limit(None).to_arrow())

    def _table_positions(self) -> _Positions:
        return _Positions(self._table.search().select(self._present(["id", "source", "locator", SCOPE_COLUMN]))
                          .with_row_id(True).limit(None).to_arrow())

    def rows_at(self, row_ids: list[int]) -> list[dict[str, Any]]:
        """The result columns of the rows at these ``_rowid`` addresses of this table version (from
        :meth:`neighbourhood`; any order): a direct read, no scan."""
        if not row_ids:
            return []
        resident = self._resident_now()
        if resident is not None:
            return resident.rows_at(row_ids)
        return self._table.take_row_ids(sorted(set(row_ids))).select(self._present(_RESULT_COLUMNS)).to_arrow() \
            .to_pylist()

    def rows_by_id(self, ids: list[str]) -> list[dict[str, Any]]:
        """The result columns of the rows with these ``ids`` (any order)."""
        if not ids:
            return []
        where = "id IN (" + ", ".join(quote(i) for i in sorted(set(ids))) + ")"
        return self._table.search().where(where).select(self._present(_RESULT_COLUMNS)).limit(None).to_arrow() \
            .to_pylist()

    # ---- legacy rows (retire-legacy) -------------------------------------------------------------------------
    @property
    def schema_kind(self) -> str:
        """``suzent`` when the table has suzent's ``source`` column, else ``app`` (the original app's schema)."""
        return "suzent" if "source" in self._table.schema.names else "app"

    def vector_dim(self) -> int | None:
        """The fixed size of the ``vector`` column (from the schema; no data read), or None."""
        names = self._table.schema.names
        if "vector" not in names:
            return None
        size = getattr(self._table.schema.field("vector").type, "list_size", None)
        return int(size) if size and size > 0 else None

    def legacy_rows(self, owns: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
        """Every legacy row as ``{id, content, created_at, category, tags}``, in table order.

        A legacy row is one the indexer did not derive from a markdown file: in suzent's schema ``source IS NULL``;
        in the original app's (no ``source`` column) a row whose ``metadata`` JSON has no non-empty string
        ``source_file`` (unparsable or missing metadata counts as legacy), or — with ``owns(metadata)`` — one whose
        ``source_file`` names no file the indexer owns (e.g. a log that no longer exists). Only ``id, content, metadata,
        created_at`` (and ``source``, ``source_date`` when present) are read, never ``vector``: a table of
        3072-dimensional rows costs no more than one of 8. ``created_at`` is an aware UTC datetime, or None when
        the row has none; a missing one falls back to a ``source_date`` column or the metadata's ``source_date`` /
        ``timestamp`` (its date at 00:00 UTC).
        """
        names = set(self._table.schema.names)
        if "id" not in names:
            raise IndexUnreadable(f"the table at {self.index_dir} has no id column; suzent cannot address its rows")
        cols = [c for c in ("id", "content", "metadata", "created_at", "source_date") if c in names]
        query = self._table.search()
        if "source" in names:
            query = query.where("source IS NULL")
        data = query.select(cols).limit(None).to_arrow().to_pydict()
        out: list[dict[str, Any]] = []
        n = len(data["id"])
        for i in range(n):
            raw = data["metadata"][i] if "metadata" in data else None
            meta = raw if isinstance(raw, dict) else row_metadata({"metadata": raw if isinstance(raw, str) else None})
            if "source" not in names:
                source_file = meta.get("source_file")
                if isinstance(source_file, str) and source_file.strip() and (owns is None or owns(meta)):
                    continue
            created = _aware(data["created_at"][i]) if "created_at" in data else None
            if created is None:
                created = _aware((data.get("source_date") or [None] * n)[i] or meta.get("source_date")
                                 or meta.get("timestamp"))
            tags = meta.get("tags")
            if isinstance(tags, str):
                tags = tags.split()
            out.append({"id": str(data["id"][i]), "content": data["content"][i] if "content" in data else None,
                        "created_at": created,
                        "category": str(meta.get("category") or "").strip() or None,
                        "tags": [str(t) for t in tags] if isinstance(tags, list) else []})
        return out

    def fragments(self) -> int:
        """How many fragments (data files) the table has now; each commit adds one until a compaction."""
        stats = self._table.stats()
        return int(stats["fragment_stats"]["num_fragments"])

    @property
    def version(self) -> int:
        """The table version this store reads (each commit makes a new one)."""
        return self._version()

    def refresh(self) -> bool:
        """Move this store to the latest committed version of its table (one manifest read; for a store that
        lives across many queries, e.g. ``suzent serve``'s). True when the version changed. Raises
        :class:`IndexUnreadable` when lance cannot read the table any more (the caller reopens it)."""
        before = self._version()
        try:
            self._table.checkout_latest()
        except Exception as exc:
            self._version_read = None
            raise unreadable(self.index_dir, exc, home=self.home) from exc
        self._version_read = None
        return self._version() != before

    def version_count(self) -> int:
        """How many table versions are kept on disk (compaction drops the old ones)."""
        return len(self._table.list_versions())

    def scan(self, columns: list[str] | None = None):
        """Every row of ``columns`` (None: all, vectors included) as a ``pyarrow.Table``, in table order."""
        if columns is None:
            return self._table.to_arrow()
        return self._table.search().select(columns).limit(None).to_arrow()

    def rows(self, columns: list[str] | None = None) -> list[dict[str, Any]]:
        """Every row of ``columns`` (None: all) as dicts, in table order: a whole-table read, for small tables."""
        return self.scan(columns).to_pylist()


def arrow_rows(rows: list[dict[str, Any]] | Mapping[str, Any], schema):
    """``rows`` as a pyarrow table of ``schema``: from row dicts, or from columns ``{column: values}`` where
    ``vector`` is an ``(n, dim)`` array-like of floats (converted to float32 in one step) and a column of
    ``schema`` that is absent is all nulls. Raises ValueError on columns of different lengths or a vector of
    another width, pyarrow's errors on values that do not fit a column's type."""
    import numpy as np
    import pyarrow as pa

    if not isinstance(rows, Mapping):
        return pa.Table.from_pylist(rows, schema=schema)
    n = len(rows["id"])
    columns = []
    for f in schema:
        values = rows.get(f.name)
        if values is None:
            columns.append(pa.nulls(n, f.type))
        elif f.name == "vector":
            dim = f.type.list_size
            matrix = np.ascontiguousarray(values, dtype=np.float32).reshape(n, -1) if n else \
                np.zeros((0, dim), np.float32)
            if matrix.shape[1] != dim:
                raise ValueError(f"vectors of width {matrix.shape[1]}, the table holds {dim}")
            columns.append(pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1), pa.float32()), dim))
        else:
            if len(values) != n:
                raise ValueError(f"column {f.name} holds {len(values)} values, id {n}")
            columns.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)


# The ANN index the writer trains (TableWriter.ensure_vector_index): IVF_SQ, one partition per ANN_PARTITION_ROWS
# rows (lance's own default size), k-means and the scalar quantizer trained on ANN_SAMPLE_RATE rows per partition
# (lance's default 256 took 7 s at 100k rows, 64 takes 2.5 s; faiss warns below 39). IVF_HNSW_SQ (the index before)
# spent 80 s of a 103 s build of 100k rows on its graph (one partition up to 1M rows); with ANN_NPROBES partitions
# probed and the exact re-rank, IVF_SQ's top 10 matched exact search on 100 of 100 queries there (BENCHMARKS.md,
# issue 25 item 5).
# A table indexed by an older suzent keeps its IVF_HNSW_SQ index (still correct) until it is trained again.
ANN_PARTITION_ROWS = 8192
ANN_SAMPLE_RATE = 64


class TableWriter(ReadStore):
    """The table with its writes: built by :mod:`suzent_cli.index.indexer` only, under the indexer lock
    (``tests/test_index_writer.py`` fails when another module names this class or calls a write method)."""

    def __init__(self, index_dir: Path, table, *, created: bool = False, home: Path | None = None):
        super().__init__(index_dir, table, home=home)
        self.created = created  # True when this open created the table (there was none)

    def _version(self) -> int:
        """The table version now: every write of the writer makes a new one (never cached)."""
        return int(self._table.version)

    @classmethod
    def open_or_create(cls, index_dir: Path, embedder_name: str, dim: int, *,
                       home: Path | None = None) -> TableWriter:
        """Open the table as :meth:`ReadStore.open` does, creating it when there is none (no committed version:
        :func:`table_exists`); ``created`` is then True. The compat ``memory_blocks`` table is created too when it
        has none. Raises as :meth:`ReadStore.open`, minus IndexMissing."""
        if table_exists(index_dir):
            store, db = cls.open(index_dir, embedder_name, dim, home=home), None
            store.ensure_scope_column()
        else:
            index_dir.mkdir(parents=True, exist_ok=True)
            db = _lancedb().connect(str(index_dir))
            table = db.create_table(TABLE, schema=archival_schema(dim, embedder_name), exist_ok=True)
            store = cls(index_dir, table, created=True, home=home)
            store.check(embedder_name, dim)
        if not committed(index_dir / f"{BLOCKS_TABLE}.lance"):
            # compat only (suzent never writes it): made when missing or left without a manifest by a failed first
            # pass; an existing one — e.g. the original app's, whose timestamps have no time zone — is left as it is
            (db or _lancedb().connect(str(index_dir))).create_table(BLOCKS_TABLE, schema=blocks_schema(),
                                                                    exist_ok=True)
        return store

    def ensure_scope_column(self) -> bool:
        """Add the ``scope`` column (:data:`SCOPE_COLUMN`) to a table built before it, every row ``''`` (the
        person's: no line had a project tag then), in one commit (lance ``add_columns``: no row is rewritten,
        ids and vectors stay, so nothing is re-embedded). A crash before the commit leaves the table as it was (the
        next pass adds it); readers see the table before or after. Called under the indexer lock
        (:meth:`open_or_create`). True when it was added."""
        if SCOPE_COLUMN in self._table.schema.names:
            return False
        self._table.add_columns({SCOPE_COLUMN: "CAST('' AS STRING)"})
        self._cache.clear()
        return True

    def delete_ids(self, ids: list[str]) -> int:
        """Delete the rows with these ``ids``, at most :data:`LEGACY_CHUNK` per commit; in suzent's schema only
        rows with ``source IS NULL`` (a legacy id can never take a markdown row with it). Returns the number of
        rows gone. Called by :func:`suzent_cli.index.indexer.delete_legacy_rows` (under the indexer lock)."""
        unique = sorted(set(ids))
        only_legacy = " AND source IS NULL" if "source" in self._table.schema.names else ""
        before = self.count()
        for start in range(0, len(unique), LEGACY_CHUNK):
            chunk = unique[start:start + LEGACY_CHUNK]
            self._table.delete("id IN (" + ", ".join(quote(i) for i in chunk) + ")" + only_legacy)
        return before - self.count()

    def commit(self, rows: list[dict[str, Any]] | Mapping[str, Any], delete_where: str | None) -> tuple[int, int]:
        """Add ``rows`` and delete the rows matching ``delete_where`` in ONE atomic commit (merge-insert on id: a
        row whose id the table holds already is not added twice).

        ``rows``: a list of row dicts, or columns (:func:`arrow_rows`: ``{column: values}``, ``vector`` an
        ``(n, dim)`` float array; the indexer's form, which skips a Python float per vector element). Readers see
        the table before or after, never between. Returns ``(inserted, deleted)``. Raises lance's errors, and
        ValueError/pyarrow's errors on rows that do not fit the schema (nothing committed).
        """
        if not (len(rows["id"]) if isinstance(rows, Mapping) else len(rows)) and not delete_where:
            return 0, 0
        data = arrow_rows(rows, self._table.schema)
        merge = self._table.merge_insert("id").when_not_matched_insert_all()
        if delete_where:
            merge = merge.when_not_matched_by_source_delete(delete_where)
        result = merge.execute(data)
        return int(result.num_inserted_rows), int(result.num_deleted_rows)

    def compact(self, keep_versions_for: dt.timedelta) -> tuple[int, int]:
        """Merge small fragments, bring the indexes (BM25, ``source``, vector) up to date and drop table versions
        older than ``keep_versions_for`` (readers holding an older version would lose it, so keep this well above a
        query's lifetime). Returns fragments ``(before, after)``.

        lance drops old versions before it updates the indexes, and updating one commits a version of its own; so
        with ``keep_versions_for`` of zero (forget: no old version may keep forgotten text) the drop runs once more
        and only the latest version is left."""
        before = self.fragments()
        with warnings.catch_warnings():
            # lancedb warns that cleanup_older_than=0 can fail a concurrent reader; forget asks for exactly that on
            # purpose (old versions still hold the forgotten text: privacy wins), so the warning is not news
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)", category=UserWarning)
            self._table.optimize(cleanup_older_than=keep_versions_for)
            if keep_versions_for <= dt.timedelta(0) and len(self._table.list_versions()) > 1:
                self._table.optimize(cleanup_older_than=keep_versions_for)
        return before, self.fragments()

    def ensure_vector_index(self, min_rows: int, trained_rows: int | None, *, keep_versions_for: dt.timedelta,
                            append_ratio: float = 0.05, retrain_growth: float = 2.0) -> str | None:
        """Keep the ANN index of the ``vector`` column fit for the table (called by the indexer after a pass).

        * fewer than ``min_rows`` rows and no index: nothing (exact search is fast enough; returns None);
        * ``min_rows`` or more and no index, or ``retrain_growth`` times the rows it was trained on
          (``trained_rows``, from the index state; None: unknown): train a new one (``"built"``);
        * more than ``append_ratio`` of the rows not in it yet: add them to it (``"appended"``, lance's
          ``optimize``: :meth:`compact` with ``keep_versions_for``);
        * else None. Until then rows not in the index are still found: lance compares them exhaustively and
          merges them in on every query.

        A table that shrinks under ``min_rows`` keeps its index (still correct). Raises lance's errors."""
        total = self.count()
        kind = next((k for columns, k in self._list_indices() if "vector" in columns), None)
        if kind is None and total < min_rows:
            return None
        if kind is None or (trained_rows and total >= retrain_growth * trained_rows) or not trained_rows:
            from lancedb.index import IvfSq

            partitions = max(1, round(total / ANN_PARTITION_ROWS))
            config = IvfSq(distance_type="cosine", num_partitions=partitions, sample_rate=ANN_SAMPLE_RATE)
            self._table.create_index("vector", config=config, replace=True, name=VECTOR_INDEX)
            return "built"
        try:
            stats = self._table.index_stats(VECTOR_INDEX)
            unindexed = int(getattr(stats, "num_unindexed_rows", 0) or 0)
        except Exception:  # noqa: BLE001 - stats are advisory: without them nothing is appended now
            unindexed = 0
        if unindexed > append_ratio * total:
            self.compact(keep_versions_for)
            return "appended"
        return None

    def ensure_source_index(self) -> bool:
        """Create the BTree index on ``source`` if missing (recall's neighbour read filters on it; so do the
        indexer's deletes). Rows added later are filtered by a scan of their fragments until :meth:`compact` folds
        them in. True if it was built."""
        if any(columns == ("source",) for columns, _kind in self._list_indices()) or not self.count():
            return False
        from lancedb.index import BTree

        self._table.create_index("source", config=BTree(), replace=True)
        return True

    def ensure_fts_index(self, *, rebuild_ratio: float = 0.2) -> bool:
        """Create the BM25 indexes on ``search_text`` and ``content`` if missing; rebuild one when more than
        ``rebuild_ratio`` of the rows are not yet covered (unindexed rows are still searched, by a slower flat scan).
        True if any was (re)built."""
        total = self.count()
        if total == 0:
            return False
        from lancedb.index import FTS

        built = False
        for column in FTS_COLUMNS:
            if self.has_fts_index(column):
                try:
                    stats = self._table.index_stats(f"{column}_idx")
                    unindexed = int(getattr(stats, "num_unindexed_rows", 0) or 0)
                except Exception:  # noqa: BLE001 - stats are advisory
                    unindexed = 0
                if unindexed <= rebuild_ratio * total:
                    continue
            self._table.create_index(column, config=FTS(language="English", stem=True, remove_stop_words=True,
                                                       with_position=False), replace=True)
            built = True
        return built


_RESULT_COLUMNS = ["id", "content", "metadata", "importance", "created_at", "source", "locator", "source_date",
                   "chat_id", SCOPE_COLUMN]


def _both(a: str | None, b: str | None) -> str | None:
    """Two lance filters joined with AND (either may be None)."""
    return f"({a}) AND ({b})" if a and b else a or b


def row_metadata(row: dict[str, Any]) -> dict[str, Any]:
    try:
        meta = json.loads(row.get("metadata") or "{}")
        return meta if isinstance(meta, dict) else {}
    except ValueError:
        return {}


def _aware(value: Any) -> dt.datetime | None:
    """A timestamp cell (aware or naive datetime, date, ISO string, epoch seconds) as an aware UTC datetime;
    naive means UTC. None when absent or unreadable."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return dt.datetime.fromtimestamp(float(value), dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
