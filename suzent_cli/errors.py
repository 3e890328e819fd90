"""Typed errors, named as states, and the one table of exit codes they map to.

The CLI translates each error into a one-line message (:func:`describe` words any exception on one line) and an
exit code. Every exit status a command returns is one of :data:`EXIT_CODES`: each error class names one, the dream
runner maps a tick's outcome to one, and ``scripts/gen_docs.py`` writes the table into every man page; docs/cli.md's
"Exit codes" table is checked against it by ``tests/test_exit_codes.py``.
"""

from __future__ import annotations

# --- the exit codes ----------------------------------------------------------------------------------------------

OK = 0
FAILED = 1
BAD_INPUT = 2
BUSY = 3
IDLE = 4
RUN_FAILED = 5
LIVE_DATA_CHANGED = 6
VIOLATED = 7
INTERRUPTED = 130
TERMINATED = 143

# (code, name, meaning): the documented table, in order.
EXIT_CODES: tuple[tuple[int, str, str], ...] = (
    (OK, "OK", "success, including \"nothing to capture\" and a dream/lint run that ingested, skipped a wedged batch "
               "or linted"),
    (FAILED, "FAILED", "an operation failed (e.g. an index error, a dry-run clone that could not be built, "
                       "retire-legacy --apply refused, forget TEXT matched no whole fact: the closest rows are "
                       "listed); nothing already stored was lost"),
    (BAD_INPUT, "BAD_INPUT", "bad input or configuration: one line `Error: …` on stderr, never a traceback "
                             "(SUZENT_DEBUG=1 shows it)"),
    (BUSY, "BUSY", "a lock could not be taken in time, or another dream holds the consolidation lock, or another "
                   "suzent serve runs on the home; nothing was written"),
    (IDLE, "IDLE", "dream, lint, dry-run: nothing due (the gate stayed idle)"),
    (RUN_FAILED, "RUN_FAILED", "dream, lint, dry-run: the run failed (not productive) and was counted for a retry"),
    (LIVE_DATA_CHANGED, "LIVE_DATA_CHANGED", "dry-run: the live data changed while the dry run worked on its clone "
                                             "(a concurrent writer?)"),
    (VIOLATED, "VIOLATED", "verify: an invariant of the home does not hold (one line per violation; with --repair: "
                           "one still does after the safe repairs)"),
    (INTERRUPTED, "INTERRUPTED", "interrupted (Ctrl-C; for loop: stopped by SIGINT, or a second SIGINT)"),
    (TERMINATED, "TERMINATED", "loop: a second SIGTERM while finishing the current stage (the first one stops "
                               "cleanly with 0)"),
)

CODES: frozenset[int] = frozenset(code for code, _, _ in EXIT_CODES)


def name_of(code: int) -> str:
    """The table's name for ``code`` (``"IDLE"`` for 4); raises ``KeyError`` for a code not in the table."""
    return {c: n for c, n, _ in EXIT_CODES}[code]


# --- one line per error --------------------------------------------------------------------------------------------

def one_line(text: object, limit: int = 500) -> str:
    """``text`` folded to one line (every run of whitespace, newlines included, becomes one space), at most
    ``limit`` characters (a longer text is cut and ends with ``…``)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(exc: BaseException, limit: int = 500) -> str:
    """``exc`` on one line (:func:`one_line`, at most ``limit`` characters), for a message or a warning.

    A :class:`SuzentError` is worded for a user already: its message as is. Anything else is
    ``"TypeName: message"`` (``"TypeName: no details"`` when it has none); an ``OSError`` naming a file is
    ``"TypeName: strerror: filename"``."""
    if isinstance(exc, SuzentError):
        return one_line(exc, limit)
    text = " ".join(str(exc).split()) or "no details"
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.strerror or text}: {exc.filename}"
    return one_line(f"{type(exc).__name__}: {text}", limit)


def message_of(exc: BaseException) -> str:
    """The text a command prints for the error that ends it (after ``Error: ``, or ``suzent: `` in a hook): a
    :class:`SuzentError`'s message as is; an ``OSError``'s ``strerror`` (its text without one) and, when it names
    a file, ``": <filename>"``; anything else ``str(exc)``."""
    if isinstance(exc, OSError) and not isinstance(exc, SuzentError):
        return f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)


def report(exc: BaseException) -> tuple[str, int]:
    """The one report of an error that ends a command: ``("Error: <message>", exit code)`` (:func:`message_of`;
    a :class:`SuzentError`'s ``exit_code``, :data:`FAILED` for anything else). The CLI's error handler
    (:func:`suzent_cli.cli.app.main`) and the capture fast path (:mod:`suzent_cli.cli.capture_run`) print the
    line on stderr and exit with the code."""
    return f"Error: {message_of(exc)}", exc.exit_code if isinstance(exc, SuzentError) else FAILED


# --- the error tree ------------------------------------------------------------------------------------------------


class SuzentError(Exception):
    """Base class for every error suzent reports to a user (exit code 1 unless overridden; the codes are the
    :data:`EXIT_CODES` table above)."""

    exit_code = FAILED


class ConfigInvalid(SuzentError):
    """config.toml, an environment variable or a flag holds a value suzent cannot use."""

    exit_code = BAD_INPUT


class ClaudeUnavailable(ConfigInvalid):
    """A claude stage (extractor, dream engine, promote engine) cannot use the Anthropic API: no API key is
    configured (worded by :func:`missing_key`), or the ``anthropic`` package is missing."""


def missing_key(user: str, instead: str, remote: str | None = None) -> ClaudeUnavailable:
    """The one error for a claude stage run without an API key. ``user`` names the stage ("the claude extractor"),
    ``instead`` the option that avoids the API ("--extractor offline"); ``remote``: the base URL set, which is not
    local (a local one needs no key), already without credentials (:func:`suzent_cli.config.masked_url`)."""
    if remote:
        return ClaudeUnavailable(f"{user} needs ANTHROPIC_API_KEY for the remote server {remote} (only "
                                 "a local base_url, localhost or a loopback address, goes without one); set it, "
                                 f"or use {instead}")
    return ClaudeUnavailable(f"{user} needs ANTHROPIC_API_KEY (or [claude] api_key in config.toml, or a local "
                             f"[claude] base_url); set it, or use {instead}")


class InputInvalid(SuzentError):
    """Input given to a command (a fact, a turn, a date) cannot be used."""

    exit_code = BAD_INPUT


class LockTimeout(SuzentError):
    """A file lock could not be taken in time; nothing was written."""

    exit_code = BUSY


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

    exit_code = BAD_INPUT


class ExtractionFailed(SuzentError):
    """The extractor could not produce facts (API or network error, unusable reply); nothing was written."""


class DreamFailed(SuzentError):
    """A dream engine could not finish a run (timeout, API error, turn limit, unwritable page): not productive."""


class EngineUnreachable(DreamFailed):
    """A dream engine's service could not be reached or would not serve now (a connection error, 429, 5xx): a
    transient failure the runner backs off from instead of counting it toward skipping the batch."""


class DreamBusy(SuzentError):
    """Another dream or lint holds the consolidation lock."""

    exit_code = BUSY


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

    exit_code = LIVE_DATA_CHANGED

    def __init__(self, message: str, changed: tuple[str, ...] = (), report: object = None):
        super().__init__(message)
        self.changed = changed
        self.report = report
