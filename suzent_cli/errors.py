"""Typed errors, named as states. The CLI translates each into a one-line message and an exit code."""

from __future__ import annotations

from suzent_cli import exit_codes


class SuzentError(Exception):
    """Base class for every error suzent reports to a user (exit code 1 unless overridden; the codes are
    :mod:`suzent_cli.exit_codes`'s table)."""

    exit_code = exit_codes.FAILED


class ConfigInvalid(SuzentError):
    """config.toml, an environment variable or a flag holds a value suzent cannot use."""

    exit_code = exit_codes.BAD_INPUT


class InputInvalid(SuzentError):
    """Input given to a command (a fact, a turn, a date) cannot be used."""

    exit_code = exit_codes.BAD_INPUT


class LockTimeout(SuzentError):
    """A file lock could not be taken in time; nothing was written."""

    exit_code = exit_codes.BUSY


class IndexUnreadable(SuzentError):
    """LanceDB cannot read the index (corrupt or truncated files); it can be rebuilt from markdown."""


class EmbedderUnavailable(SuzentError):
    """The embedding model cannot be loaded (missing package, bad checksum, bad path)."""


class EmbeddingFailed(SuzentError):
    """The embedder raised while encoding; the indexer keeps the old rows of that file."""


class IndexMissing(SuzentError):
    """There is no search index yet (run ``suzent index``)."""


class IndexIncompatible(SuzentError):
    """The LanceDB table was built by another embedder or with another schema."""


class ExtractorUnavailable(SuzentError):
    """The requested fact extractor cannot run (e.g. claude without an API key): a configuration problem."""

    exit_code = exit_codes.BAD_INPUT


class ExtractionFailed(SuzentError):
    """The extractor could not produce facts (API or network error, unusable reply); nothing was written."""


class DreamFailed(SuzentError):
    """A dream engine could not finish a run (timeout, API error, turn limit, unwritable page): not productive."""


class EngineUnreachable(DreamFailed):
    """A dream engine's service could not be reached or would not serve now (a connection error, 429, 5xx): a
    transient failure the runner backs off from instead of counting it toward skipping the batch."""


class DreamBusy(SuzentError):
    """Another dream or lint holds the consolidation lock."""

    exit_code = exit_codes.BUSY


class LegacyUnexported(SuzentError):
    """``retire-legacy --apply`` refused: some legacy rows are recorded nowhere in markdown (export them first).
    ``rows``: ``{id, created_at, content}`` of each."""

    def __init__(self, message: str, rows: list | None = None):
        super().__init__(message)
        self.rows = rows or []


class CloneFailed(SuzentError):
    """``suzent dry-run`` could not build a faithful, self-contained copy of the data (unreadable file, a symlink
    loop, a layout it cannot copy); nothing live was touched."""


class LiveDataChanged(SuzentError):
    """A file of the live home, vault, memory dir or index changed while ``suzent dry-run`` worked on its copy
    (most likely a concurrent writer: capture, dream, index). The dry run itself writes only to its clone."""

    exit_code = exit_codes.LIVE_DATA_CHANGED

    def __init__(self, message: str, changed: tuple[str, ...] = (), report: object = None):
        super().__init__(message)
        self.changed = changed
        self.report = report
