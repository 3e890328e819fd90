"""The indexer: the only writer of the LanceDB search index.

One pass (:meth:`Indexer.run`) under ``<index_dir>/.indexer.lock``:

1. Open the table, or create it when there is none. A table folder without a manifest (no committed version: what
   a first pass that failed on a full disk leaves) is no index yet: :func:`clear_uncommitted` removes it, or moves
   it to ``<home>/backups/`` when it holds any file, and the table is created. Check the table is whole
   (:meth:`ReadStore.verify`: every data file readable, else refuse naming the file and ``--rebuild``). Load the index state (``<index_dir>/index_state.json``: version, embedder, tombstone
   fingerprint, ``rows`` — how many rows derived from markdown the table held after the last commit — and the
   ``{label:filename: {mtime_ns, size}}`` of every file indexed). A missing, unversioned or older state, or one
   written for another embedder, is discarded and the pass becomes a full one; so does a state that does not
   match the table (the table was deleted or replaced while the state stayed: its rows are rebuilt from markdown,
   derived data, with one warning). An unreadable state file is named in a warning. Before the table is
   opened, the pass refuses (:class:`TombstonesUnreadable`) when ``tombstones.jsonl`` lacks a tombstone the state
   records as applied (``applied_tombstones``, see :func:`lost_tombstones`): a deleted or older tombstone file
   would otherwise bring forgotten text back. ``--rebuild`` moves the state aside, so it starts over.
2. Pick the files to look at: changed since the state (mtime/size), all of them with ``full`` or when the
   tombstone set changed, or exactly ``only``.
3. Per file, build documents and diff them against the row ids already in the table: embed only the new ones
   (all files' embeddings are computed before any row of theirs is deleted), then add the new rows and delete the
   vanished ones in ONE atomic commit per batch. Rows of deleted files go too. Legacy rows (no ``source``) are
   never touched, ``--full`` included.
4. Record each file's stat (taken before it was read) only after its rows are committed; then seal the daily
   logs (:func:`suzent_cli.index.seals.seal_logs`: each log's length and the sha256 of those bytes, for ``suzent
   verify``).
5. Bring the search indexes up to date: the BM25 indexes (after new rows, on a full pass, and whenever one is
   missing, e.g. a pass that committed its rows and then failed to build it), the BTree index on ``source`` (recall's neighbour read),
   and, from :data:`ANN_MIN_ROWS` rows on, the ANN vector index (:meth:`TableWriter.ensure_vector_index`): trained
   when the table first reaches the threshold, again when it has doubled since (``ann_trained_rows`` in the state)
   and on a full pass; new rows folded into it (lance ``optimize``) once more than 5% are outside it. Rows outside
   the index are still found: every vector query also compares them exhaustively. A failure of the last two is a
   warning: the rows are committed, and search stays correct (a filter scans, vector search stays exact).

Crash at any point: the table holds the old or the new rows of each batch, and the state only names files whose
rows are committed, so the next pass redoes exactly the unfinished files. Embedding failure: that file's old
rows stay, its state is not recorded, the error is reported, and it is retried next pass.

Legacy rows leave the table only through :func:`delete_legacy_rows` (``suzent retire-legacy --apply``), under the
same lock, after a backup copy of the table. ``index --rebuild`` moves the table and the state aside through
:func:`move_table_aside`, under the same lock too.

This module is the only one that builds a :class:`~suzent_cli.index.store.TableWriter` (the table with its write
methods); every other module opens a :class:`~suzent_cli.index.store.ReadStore` and writes, when it must, through
:mod:`suzent_cli.index.api` (``tests/test_index_writer.py``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.errors import EmbeddingFailed, SuzentError
from suzent_cli.files import atomic_write, locked
from suzent_cli.index.embed import Embedder
from suzent_cli.index.seals import seal_logs
from suzent_cli.index.sources import Document, Source, discover, documents, source_for_path
from suzent_cli.index.store import (
    BLOCKS_TABLE,
    FTS_COLUMNS,
    TABLE,
    TableWriter,
    index_error,
    lance_message,
    quote,
    temp_dir,
    uncommitted_tables,
)
from suzent_cli.vault import skipped_warning as vault_skipped_warning
from suzent_cli.vault.forgotten import Forgotten
from suzent_cli.vault.state import TOMBSTONES, TombstonesUnreadable, read_tombstones

STATE_FILE = "index_state.json"
STATE_VERSION = 3  # 3: vault pages chunked per section with stamped importance (a v2 state forces one full pass)
LOCK_FILE = ".indexer.lock"
# Files are embedded and committed in batches of at least this many new rows (one embed call, one commit, one
# fragment each): a first build of 1M rows makes ~31 fragments, under COMPACT_FRAGMENTS, so it is not rewritten
# whole by a compaction at its end (4096 made 245). A crash redoes at most the batch it interrupted (~50 MB of
# rows and vectors in memory at 384 dims).
BATCH_TEXTS = 32768
# Every commit adds a fragment; `capture --index` on every turn would leave thousands and slow every query.
COMPACT_FRAGMENTS = 64
KEEP_VERSIONS = dt.timedelta(hours=1)
# From this many rows on, the indexer keeps an ANN index on the vectors (TableWriter.ensure_vector_index): exact
# search costs ~0.8-1.2 ms per 1k rows on this machine (18 ms at 10k, 80-127 ms at 100k), the index 20-40 ms at
# 100k (BENCHMARKS.md, issue 15), so they cross near 20k rows. Below it, vector search stays exact.
ANN_MIN_ROWS = 20_000
Progress = Callable[[int, int, str], None]


@dataclass
class IndexReport:
    """What one pass did. ``errors`` lists ``(source key, message)`` of files left for the next pass."""

    files_checked: int = 0
    files_updated: int = 0
    files_removed: int = 0
    rows_added: int = 0
    rows_removed: int = 0
    embeddings: int = 0
    legacy_rows: int = 0
    total_rows: int = 0
    full: bool = False
    fts_rebuilt: bool = False
    vector_index: str | None = None  # "built" (trained) or "appended" (new rows added to it) by this pass
    fragments_compacted: tuple[int, int] | None = None
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["errors"] = [{"source": s, "error": e} for s, e in self.errors]
        return d


# Bumped when the filter's rules change (2: a forgotten text hides the lines holding it), so one sweep applies them.
FILTER_VERSION = "filter-2"


def _tombstone_fingerprint(tombstones: frozenset[str]) -> str:
    return hashlib.sha256("\n".join([FILTER_VERSION, *sorted(tombstones)]).encode()).hexdigest()


def tombstone_hashes(tombstones: frozenset[str]) -> list[str]:
    """Sorted short hashes (first 16 hex chars of the sha256 of each normalized text) of ``tombstones``: what the
    index state records as applied (``applied_tombstones``), compact and without the forgotten text itself."""
    return sorted({hashlib.sha256(t.encode("utf-8")).hexdigest()[:16] for t in tombstones})


def lost_tombstones(index_dir: Path, tombstones: frozenset[str]) -> int:
    """How many tombstones ``<index_dir>/index_state.json`` records as applied that ``tombstones`` (the current
    set, from :func:`read_tombstones`) no longer holds. 0 when there is no state, it cannot be read, or it was
    written by a suzent that kept no record (nothing to compare: the next pass records it). Never raises."""
    try:
        state = json.loads((index_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return 0
    applied = state.get("applied_tombstones") if isinstance(state, dict) else None
    if not isinstance(applied, list):
        return 0
    return len({h for h in applied if isinstance(h, str)} - set(tombstone_hashes(tombstones)))


def lost_tombstones_message(index_dir: Path, state_dir: Path, lost: int) -> str:
    """The one line naming ``lost`` tombstones the index applied that ``tombstones.jsonl`` no longer holds."""
    return (f"the index at {index_dir} applied {lost} tombstone(s) that {state_dir / TOMBSTONES} no longer holds "
            "(deleted, or restored from an older copy); refusing to go on, or forgotten text would come back "
            "(restore that file from a backup, or run `suzent index --rebuild` to start over from the markdown "
            "and accept that those forgotten texts come back)")


class Indexer:
    """Derives the search index from the markdown tiers. ``context_window``: preceding log facts added to a fact's
    search/embedding text."""

    def __init__(self, settings: Settings, embedder: Embedder, *, context_window: int = 0):
        self.settings = settings
        self.paths = settings.paths
        self.embedder = embedder
        self.context_window = context_window

    @property
    def state_path(self) -> Path:
        return self.paths.index_dir / STATE_FILE

    def _load_state(self) -> dict | None:
        """The index state, or None (the pass becomes a full one). A state file that exists but cannot be read or
        is not a state sets ``self._state_problem`` (one line naming the file) for the pass to report."""
        self._state_problem = None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            self._state_problem = f"{self.state_path} is unreadable ({why}): re-indexing every file"
            return None
        if not isinstance(state, dict) or not isinstance(state.get("files"), dict):
            self._state_problem = f"{self.state_path} is not an index state: re-indexing every file"
            return None
        if state.get("version") != STATE_VERSION:
            return None
        if state.get("embedder") != self.embedder.name or state.get("context_window") != self.context_window:
            return None
        files = state["files"]
        bad = [k for k, v in files.items() if not (isinstance(v, dict) and all(
            isinstance(v.get(f), int) and not isinstance(v.get(f), bool) for f in ("mtime_ns", "size")))]
        if bad:  # such a file is simply not recorded: it is re-indexed, the rest of the state stands
            for key in bad:
                del files[key]
            self._state_problem = (f"{self.state_path}: {len(bad)} unusable record(s) dropped (first {bad[0]!r}); "
                                   "those files are re-indexed")
        return state

    def _save_state(self, state: dict) -> None:
        atomic_write(self.state_path, json.dumps(state, indent=1, sort_keys=True, ensure_ascii=False) + "\n")

    def run(self, *, full: bool = False, only: list[Path] | None = None, progress: Progress | None = None) -> IndexReport:
        """Bring the index up to date with the markdown tiers; see the module docstring for the contract.

        ``only``: reindex exactly these files (e.g. the log ``capture --index`` just appended to), whatever their
        mtime. Raises :class:`LockTimeout`, :class:`IndexIncompatible`, :class:`EmbedderUnavailable`.
        """
        started = time.perf_counter()
        report = IndexReport(full=full)
        self.paths.index_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.paths.index_dir / LOCK_FILE, self.settings.lock_timeout), temp_dir(self.paths.index_dir):
            try:
                self._run_locked(report, full, only, progress)
            except SuzentError:
                raise
            except Exception as exc:
                raise index_error(self.paths.index_dir, exc, home=self.paths.home, doing="update") from exc
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def optimize(self, keep_versions_for: dt.timedelta) -> dict:
        """Compact the table and delete versions older than ``keep_versions_for``, under the indexer lock.

        Returns ``{"fragments_before", "fragments_after", "versions_before", "versions_after"}``. Raises
        :class:`IndexMissing` when no index exists, LockTimeout, or :class:`IndexUnreadable` on a lance failure.
        """
        with locked(self.paths.index_dir / LOCK_FILE, self.settings.lock_timeout), temp_dir(self.paths.index_dir):
            store = TableWriter.open_existing(self.paths.index_dir, home=self.paths.home)
            try:
                versions_before = store.version_count()
                before, after = store.compact(keep_versions_for)
                versions_after = store.version_count()
            except Exception as exc:
                raise index_error(self.paths.index_dir, exc, home=self.paths.home, doing="compact") from exc
        return {"fragments_before": before, "fragments_after": after, "versions_before": versions_before,
                "versions_after": versions_after}

    def _run_locked(self, report: IndexReport, full: bool, only: list[Path] | None, progress: Progress | None) -> None:
        # Tombstones first: an unreadable file (TombstonesUnreadable) stops the pass before the table is touched.
        tombstones = read_tombstones(self.paths.state_dir)
        lost = lost_tombstones(self.paths.index_dir, tombstones)
        if lost:  # the file was deleted or replaced by an older copy: a sweep would bring forgotten text back
            raise TombstonesUnreadable(lost_tombstones_message(self.paths.index_dir, self.paths.state_dir, lost))
        fingerprint = _tombstone_fingerprint(tombstones)
        cleared = clear_uncommitted(self.paths.index_dir, self.paths.home / "backups")
        if cleared:
            report.warnings.append(cleared)
        store = TableWriter.open_or_create(self.paths.index_dir, self.embedder.name, self.embedder.dim,
                                           home=self.paths.home)
        derived = 0 if store.created else store.verify(home=self.paths.home)[1]
        state = self._load_state()
        if self._state_problem:
            report.warnings.append(self._state_problem)
        mismatch = self._state_mismatch(store, state, derived)
        if mismatch:
            report.warnings.append(mismatch)
            state = None
        if state is None:
            state, full, report.full = {"files": {}}, True, True
        self._rows = derived
        sweep = full or state.get("tombstones") != fingerprint
        # The current set holds every recorded one (checked above), so the record only grows; each save keeps it.
        state.update(version=STATE_VERSION, embedder=self.embedder.name, context_window=self.context_window,
                     applied_tombstones=tombstone_hashes(tombstones))
        files: dict = state["files"]
        self._state = state

        refused: list[str] = []
        skipped: list[str] = []
        sources = discover(self.paths, refused, skipped)
        report.warnings += refused
        if skipped:
            report.warnings.append(vault_skipped_warning(skipped))
        if only is not None:
            wanted = {s.key for p in only if (s := source_for_path(self.paths, p))}
            todo = [s for s in sources if s.key in wanted]
        else:
            todo = [s for s in sources if sweep or self._changed(s, files.get(s.key))]
        report.files_checked = len(sources) if only is None else len(todo)

        try:
            existing: dict | None = store.ids_by_source() if (todo or only is None) else {}
            report.legacy_rows = len(existing.get(None, ()))
        except Exception as exc:  # noqa: BLE001 - no diff possible: replace each file's rows whole
            existing = None
            report.warnings.append(f"could not read existing row ids ({exc}); changed files replaced whole")
        existing_keys = set(existing) if existing is not None else set()
        removed = []
        if only is None:
            present = {s.key for s in sources}
            removed = sorted(k for k in existing_keys | set(files) if k is not None and k not in present)
        self._process(store, todo, existing, removed, files, report, progress)
        if only is None and not report.errors:  # only a complete, clean sweep has applied these tombstones everywhere
            state["tombstones"] = fingerprint
        state["rows"] = self._rows
        self._save_state(state)
        try:  # the daily logs' seals (suzent_cli.index.seals): what `suzent verify` proves no log was rewritten by
            named = None if only is None else [s.filename for s in todo if s.label == "archive"]
            report.warnings += seal_logs(self.paths.index_dir, self.paths.archive_dir, only=named)
        except OSError as exc:  # the rows are committed; an unsealed log is sealed by the next pass
            report.warnings.append(f"the daily logs' seals were not all written ({exc.strerror or exc}); the next "
                                   "pass writes them")
        # A BM25 index missing from a table with rows (a pass that committed its rows, then failed to build the
        # index, e.g. on a full disk) is built by the next pass, rows added or not.
        missing_fts = not all(store.has_fts_index(c) for c in FTS_COLUMNS)
        report.fts_rebuilt = store.ensure_fts_index(rebuild_ratio=0.0 if report.full else 0.2) \
            if (report.rows_added or report.full or missing_fts) else False
        # Every pass (a count and an index listing when nothing is due): a table that crossed the threshold, or
        # was built before suzent kept these indexes, gets them at the next pass, changed rows or not.
        try:
            store.ensure_source_index()
            report.vector_index = store.ensure_vector_index(ANN_MIN_ROWS, state.get("ann_trained_rows"),
                                                            keep_versions_for=KEEP_VERSIONS)
        except Exception as exc:  # noqa: BLE001 - the rows are committed; without these indexes search stays right
            report.warnings.append(f"the source or vector index was not brought up to date ({lance_message(exc)}); "
                                   "recall stays correct (exact vector search) until the next pass")
        if report.vector_index == "built":
            state["ann_trained_rows"] = store.count()
            self._save_state(state)
        if (report.rows_added or report.rows_removed) and report.vector_index != "appended" \
                and store.fragments() > COMPACT_FRAGMENTS:
            report.fragments_compacted = store.compact(KEEP_VERSIONS)
        report.total_rows = store.count()

    def _state_mismatch(self, store: TableWriter, state: dict | None, derived: int) -> str | None:
        """One line when ``state`` names indexed files the table cannot hold: the table was created just now
        (deleted while the state stayed), or it holds another number of markdown-derived rows than the state
        recorded after the last commit (replaced, restored from a copy, or a crash between a commit and the state
        save). None when they agree or the state records no row count (written by an older suzent)."""
        if state is None or not state["files"]:
            return None
        named = len(state["files"])
        if store.created:
            return (f"the index table was missing from {self.paths.index_dir} while {self.state_path.name} named {named} "
                    "indexed file(s): re-indexing every file from markdown")
        recorded = state.get("rows")
        if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded != derived:
            return (f"the index at {self.paths.index_dir} holds {derived} row(s) from markdown but "
                    f"{self.state_path.name} recorded {recorded}: re-indexing every file")
        return None

    @staticmethod
    def _changed(source: Source, recorded: dict | None) -> bool:
        if not recorded:
            return True
        try:
            st = source.path.stat()
        except OSError:
            return True
        return st.st_mtime_ns != recorded.get("mtime_ns") or st.st_size != recorded.get("size")

    def _process(self, store: TableWriter, todo: list[Source], existing: dict | None, removed: list[str], files: dict,
                 report: IndexReport, progress: Progress | None) -> None:
        tombstones = read_tombstones(self.paths.state_dir)
        forgotten = Forgotten.from_state(self.paths.state_dir)
        batch: list[tuple[Source, object, list[Document], set[str]]] = []
        batch_texts = 0
        for n, source in enumerate(todo, start=1):
            try:
                docs, st = documents(source, tombstones, self.context_window, forgotten, report.warnings.append)
            except OSError as exc:
                report.errors.append((source.key, f"cannot read: {exc}"))
                continue
            if existing is None:  # fallback: embed everything, replace every row of the file in the same commit
                new_docs, stale = docs, None
            else:
                have = existing.get(source.key, set())
                desired = {d.id for d in docs}
                new_docs = [d for d in docs if d.id not in have]
                stale = have - desired
            if not new_docs and stale is not None and not stale:
                files[source.key] = {"mtime_ns": st.st_mtime_ns, "size": st.st_size}
            else:
                batch.append((source, st, new_docs, stale))
                batch_texts += len(new_docs)
            if batch_texts >= BATCH_TEXTS:
                self._flush(store, batch, [], files, report)
                batch, batch_texts = [], 0
            if progress:
                progress(n, len(todo), source.key)
        if batch or removed:
            self._flush(store, batch, removed, files, report)

    def _embed(self, batch, report: IndexReport) -> list[tuple[Source, object, list[Document], set[str], object]]:
        """Embed all new documents of ``batch``; on failure retry per file so one bad file cannot block others."""
        texts = [d.embed_text for _, _, docs, _ in batch for d in docs]
        try:
            vectors = self.embedder.encode(texts) if texts else None
            report.embeddings += len(texts)
            out, offset = [], 0
            for source, st, docs, stale in batch:
                out.append((source, st, docs, stale, vectors[offset:offset + len(docs)] if docs else []))
                offset += len(docs)
            return out
        except EmbeddingFailed:
            if len(batch) == 1:
                report.errors.append((batch[0][0].key, "embedding failed; old rows kept, retried next pass"))
                return []
        out = []
        for item in batch:
            out += self._embed([item], report)
        return out

    def _columns(self, docs: list[Document], vectors: list) -> dict:
        """The rows of ``docs`` as columns for :meth:`TableWriter.commit` (``vector``: the embeddings stacked,
        ``(len(docs), dim)``; the columns the indexer leaves empty, ``chat_id`` and ``accessed_at``, absent)."""
        import numpy as np  # with the embedder loaded, already imported

        n = len(docs)
        return {
            "id": [d.id for d in docs], "content": [d.content for d in docs],
            "vector": np.concatenate(vectors) if vectors else np.zeros((0, self.embedder.dim), np.float32),
            "user_id": [self.settings.user_id] * n,
            "metadata": [json.dumps(d.metadata, ensure_ascii=False) for d in docs],
            "importance": [d.importance for d in docs], "created_at": [d.created_at for d in docs],
            "updated_at": [dt.datetime.now(dt.UTC)] * n, "access_count": [0] * n,
            "source": [d.source for d in docs], "locator": [d.locator for d in docs],
            "source_date": [d.source_date for d in docs], "search_text": [d.search_text for d in docs],
        }

    def _flush(self, store: TableWriter, batch, removed: list[str], files: dict, report: IndexReport) -> None:
        embedded = self._embed(batch, report) if batch else []
        stale_ids, replaced, docs_all, vectors_all = [], [], [], []
        for source, _st, docs, stale, vectors in embedded:
            if stale is None:
                replaced.append(source.key)
            else:
                stale_ids += sorted(stale)
            if docs:
                docs_all += docs
                vectors_all.append(vectors)
        rows = self._columns(docs_all, vectors_all)
        clauses = []
        if stale_ids:
            clauses.append("id IN (" + ", ".join(quote(i) for i in stale_ids) + ")")
        if removed or replaced:
            clauses.append("source IN (" + ", ".join(quote(k) for k in [*removed, *replaced]) + ")")
        try:
            added, deleted = store.commit(rows, " OR ".join(clauses) if clauses else None)
        except Exception as exc:
            cause = index_error(self.paths.index_dir, exc, home=self.paths.home, doing="write")
            raise type(cause)(f"nothing committed, state unchanged: {cause}") from exc
        report.rows_added += added
        report.rows_removed += deleted
        self._rows += added - deleted  # only markdown-derived rows are added or deleted here
        self._state["rows"] = self._rows
        for source, st, _docs, _stale, _vec in embedded:
            files[source.key] = {"mtime_ns": st.st_mtime_ns, "size": st.st_size}
            report.files_updated += 1
        for key in removed:
            files.pop(key, None)
            report.files_removed += 1
        self._save_state(self._state)  # only now do these files count as indexed


def delete_legacy_rows(index_dir: Path, rows: Mapping[str, str | None], *, timeout: float,
                       backup_to: Path | None = None, owns: Callable[[dict], bool] | None = None) -> int:
    """Delete legacy rows (see :meth:`ReadStore.legacy_rows`) for ``suzent retire-legacy --apply``; never any other.

    ``rows`` maps each row id to the content the caller checked is recorded in markdown. Under the indexer lock
    (no pass can interleave): first, with ``backup_to``, the table directories (``archival_memories.lance`` and
    ``memory_blocks.lance`` when present) are copied into it (a new directory; a failed copy deletes nothing);
    then the legacy rows are read again and only those still legacy, named in ``rows`` and with the same content
    are deleted, in chunks of at most 1000 ids (``owns``: as :meth:`ReadStore.legacy_rows`). Works on any schema (the original app's included): the table is
    opened without the embedder check. Returns the number of rows deleted. Raises LockTimeout,
    :class:`IndexMissing`, :class:`IndexUnreadable`, OSError (backup).
    """
    with locked(index_dir / LOCK_FILE, timeout):
        store = TableWriter.open_any(index_dir)
        if backup_to is not None:
            backup_to.mkdir(parents=True, exist_ok=False)
            for name in (TABLE, BLOCKS_TABLE):
                if (index_dir / f"{name}.lance").is_dir():
                    shutil.copytree(index_dir / f"{name}.lance", backup_to / f"{name}.lance", symlinks=True)
        try:
            current = store.legacy_rows(owns)
            targets = [r["id"] for r in current if r["id"] in rows and rows[r["id"]] == r["content"]]
            return store.delete_ids(targets) if targets else 0
        except SuzentError:
            raise
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            kept = f"; the copy at {backup_to} is whole" if backup_to is not None else ""
            raise SuzentError(f"deleting legacy rows from {index_dir} failed ({first}){kept}") from exc


def _new_backup(backups_dir: Path) -> Path:
    """A new, empty ``<backups_dir>/index-<UTC YYYYmmddTHHMMSSZ>[-N]/`` (made here). Raises OSError."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    backups_dir.mkdir(parents=True, exist_ok=True)
    for n in range(100):
        backup = backups_dir / (f"index-{stamp}" + (f"-{n}" if n else ""))
        try:
            backup.mkdir()
            return backup
        except FileExistsError:
            continue
    raise FileExistsError(f"{backups_dir}/index-{stamp}: 100 backups in one second")


def _empty_folders(path: Path) -> list[str] | None:
    """The folders of the tree at ``path``, deepest first, when it holds nothing but folders (no file, no
    symlink); None when it holds anything else or cannot be walked whole."""
    def fail(exc: OSError) -> None:
        raise exc

    folders: list[str] = []
    try:
        for root, dirs, files in os.walk(path, topdown=False, onerror=fail):
            if files or any(os.path.islink(os.path.join(root, d)) for d in dirs):
                return None
            folders.append(root)
    except OSError:
        return None
    return folders


def clear_uncommitted(index_dir: Path, backups_dir: Path) -> str | None:
    """Clear the table folders of ``index_dir`` that hold no committed version
    (:func:`~suzent_cli.index.store.uncommitted_tables`), so the pass creates the tables anew: a table with no
    manifest is no index yet. A folder of empty folders only (what a first commit that failed on a full disk
    leaves) is removed; one holding any file (a transaction file, data files without a manifest) is moved whole
    into a new ``<backups_dir>/index-<UTC timestamp>/``: nothing is deleted, though no committed row can be in it.
    Call it under the indexer lock. Returns one line saying what was moved where, or None (nothing moved).
    A table folder with a manifest is never touched here, whatever else is wrong with it (opening it reports
    that). Crash: a folder is removed or moved whole, or is still a folder without a manifest that the next pass
    clears. Raises OSError when the backup cannot be made or the move fails (the folder then stays)."""
    moved: list[Path] = []
    for table_dir in uncommitted_tables(index_dir):
        folders = _empty_folders(table_dir)
        try:
            for folder in folders or ():
                os.rmdir(folder)
        except OSError:
            folders = None
        if folders is None and table_dir.exists():
            moved.append(table_dir)
    if not moved:
        return None
    backup = _new_backup(backups_dir)
    for table_dir in moved:
        shutil.move(str(table_dir), str(backup / table_dir.name))
    names = " and ".join(t.name for t in moved)
    return (f"{names} in {index_dir} held no committed version (a first index pass that failed, e.g. on a full "
            f"disk): moved to {backup}, and the index is built anew")


def move_table_aside(index_dir: Path, backups_dir: Path, *, timeout: float) -> Path | None:
    """Move the table and the index state out of ``index_dir`` into ``<backups_dir>/index-<UTC timestamp>/``
    (nothing is deleted), under the indexer lock, so the next pass rebuilds from markdown (a fresh state: no
    tombstones recorded as applied). Returns the backup dir, or None if there was neither a table nor a state.
    Raises LockTimeout, OSError (the backup dir cannot be made)."""
    table = index_dir / f"{TABLE}.lance"
    if not table.exists() and not (index_dir / STATE_FILE).exists():
        return None
    backup = _new_backup(backups_dir)
    with locked(index_dir / LOCK_FILE, timeout):
        if table.exists():
            shutil.move(str(table), str(backup / table.name))
        if (index_dir / STATE_FILE).exists():
            shutil.move(str(index_dir / STATE_FILE), str(backup / STATE_FILE))
    return backup
