"""Entry points to the indexer used by other stages and the CLI (load the embedder, run one pass, compact, move
the index aside, retire legacy rows). Every write to the index goes through here to
:mod:`suzent_cli.index.indexer`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from suzent_cli.config import Settings, context_window_of
from suzent_cli.errors import SuzentError
from suzent_cli.index.embed import Embedder, lazy_embedder
from suzent_cli.index.indexer import Indexer, IndexReport, Progress, delete_legacy_rows, move_table_aside


def embedder_name(settings: Settings, model: str | None = None, *, use_recorded: bool = True) -> str:
    """Which embedder to use: ``model`` (a ``--model`` flag) > one configured by flag, env or config.toml > the
    one the existing index was built with (so an index built with ``--model hash:64`` keeps working for every
    command without repeating the flag) > the default. Reading the recorded one opens the table (lancedb)."""
    if model:
        return model
    if settings.origins.get("embedder", "default") != "default" or not use_recorded:
        return settings.embedder
    from suzent_cli.index.store import ReadStore, table_exists

    if table_exists(settings.paths.index_dir):
        try:
            recorded, _dim = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home).recorded_embedder()
        except SuzentError:
            recorded = None  # another tool's or an unreadable table: the indexer reports it
        if recorded:
            return recorded
    return settings.embedder


def make_indexer(settings: Settings, model: str | None = None, embedder: Embedder | None = None, *,
                 use_recorded: bool = True) -> Indexer:
    """An :class:`Indexer` for ``settings`` with ``embedder`` or the one :func:`embedder_name` picks."""
    return Indexer(settings, embedder or lazy_embedder(embedder_name(settings, model, use_recorded=use_recorded)),
                   context_window=context_window_of(settings))


def index_embedder(settings: Settings, model: str | None = None) -> Embedder:
    """The embedder every pass over this index would use (lazy: the model loads on first encode). Share one
    across several passes (reconcile's groups, its sweep) so the model is loaded and checksummed once."""
    return lazy_embedder(embedder_name(settings, model))


def run_index(settings: Settings, *, full: bool = False, model: str | None = None, embedder: Embedder | None = None,
              progress: Progress | None = None) -> IndexReport:
    """One indexer pass over every source (changed files by mtime, or all with ``full``)."""
    return make_indexer(settings, model, embedder).run(full=full, progress=progress)


def reindex_files(settings: Settings, files: list[Path], *, embedder: Embedder | None = None) -> IndexReport:
    """Reindex exactly ``files`` (e.g. a log just appended to), whatever their mtime."""
    return make_indexer(settings, embedder=embedder).run(only=files)


def optimize_index(settings: Settings, keep_versions_for: dt.timedelta) -> dict:
    """Compact the index and drop old versions (see :meth:`Indexer.optimize`); loads no model."""
    return make_indexer(settings).optimize(keep_versions_for)


def move_index_aside(settings: Settings) -> Path | None:
    """Move the table and the index state to ``<home>/backups/index-<UTC timestamp>/`` under the indexer lock
    (nothing is deleted; see :func:`suzent_cli.index.indexer.move_table_aside`), so the next pass rebuilds from
    markdown. Returns the backup dir, or None if there was neither a table nor a state."""
    return move_table_aside(settings.paths.index_dir, settings.paths.home / "backups", timeout=settings.lock_timeout)


def retire_legacy_rows(settings: Settings, rows: dict[str, str | None], backup_to: Path,
                       owns: Callable[[dict], bool] | None = None) -> int:
    """Copy the table to ``backup_to`` and delete these legacy rows (id → checked content), under the indexer
    lock (see :func:`suzent_cli.index.indexer.delete_legacy_rows`); loads no model."""
    return delete_legacy_rows(settings.paths.index_dir, rows, timeout=settings.lock_timeout, backup_to=backup_to,
                              owns=owns)


def reseal_logs(settings: Settings, names: list[str]) -> list[str]:
    """Seal the current content of the daily logs ``names`` (``YYYY-MM-DD.md``) under the indexer lock, whatever
    their seals held (:func:`suzent_cli.index.seals.reseal_logs`): after a legitimate rewrite (a sync merge) or a
    person's inspection. Returns the names resealed (or unsealed: a log that no longer exists). Raises LockTimeout,
    OSError."""
    from suzent_cli.files import locked
    from suzent_cli.index.indexer import LOCK_FILE
    from suzent_cli.index.seals import reseal_logs as reseal

    paths = settings.paths
    paths.index_dir.mkdir(parents=True, exist_ok=True)
    with locked(paths.index_dir / LOCK_FILE, settings.lock_timeout):
        return reseal(paths.index_dir, paths.archive_dir, names, timeout=settings.lock_timeout)
