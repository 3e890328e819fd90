"""What the dream runner hands an engine, and what an engine hands back.

An engine folds a batch of daily logs into vault pages. It may write content pages only: never ``log.md``,
``.state/``, the daily logs or the index. It reports the log fact lines it folded into existing claims
(the *superseded* hand-off); the runner, not the engine, records them and advances the watermark.

Engines: ``rules`` (:mod:`.rules`, offline, deterministic) and ``claude`` (:mod:`.claude_agent`, a tool-use agent).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class BatchFact:
    """One fact of a daily log in the batch: ``raw`` is its line exactly as in the log (no newline);
    ``line`` is 1-based. Tombstoned facts are never in a batch. ``late``: the ``ts`` of the ``late_lines.jsonl``
    record that brought a line appended to an already consolidated day (None for a fact of a pending day)."""

    day: dt.date
    line: int
    raw: str
    category: str
    content: str
    tags: tuple[str, ...] = ()
    time: str | None = None
    session: str | None = None
    late: str | None = None

    @property
    def source(self) -> str:
        """Provenance as written on pages: ``YYYY-MM-DD.md:LINE``."""
        return f"{self.day.isoformat()}.md:{self.line}"


@dataclass(frozen=True)
class IngestBatch:
    """The work of one run: logs dated ``start`` (exclusive; None = from the beginning) to ``end`` (inclusive).

    ``logs`` maps each day to its log text with tombstoned fact lines removed; ``facts`` are its parsed facts in
    (day, line) order. ``deadline`` is a :func:`time.monotonic` instant the engine must finish by.
    ``confirmations``: records of ``confirmations.jsonl`` (restatements the write path did not log; fold each into its
    claim's marker). ``revisit``: vault-relative pages past their ``stale_after`` (soonest first), then personal
    pages with none — to re-confirm against these logs or leave for review, never to delete. ``archive_dir`` lets
    an engine read a log line a claim's provenance names (read-only). ``late``: days at or below the watermark
    whose logs grew since they were consolidated, mapped to the first new line; ``logs`` holds only those new
    lines for them (fold them as statements of their own date: older than most of the vault).

    ``scope`` and ``folder``: the one scope every fact, confirmation and revisit page of the batch belongs to
    (:func:`split_by_scope` made it): PERSON (``""``) with folder ``""``, or a project key with its folder under
    ``1_Projects/`` (:func:`suzent_cli.vault.projects.folder_for`). ``scope=None``: not split yet (the facts may
    belong to several scopes; an engine splits it before folding anything).
    """

    vault_dir: Path
    run_date: dt.date
    start: dt.date | None
    end: dt.date
    days: tuple[dt.date, ...]
    logs: dict[dt.date, str]
    facts: tuple[BatchFact, ...]
    deadline: float
    confirmations: tuple[dict, ...] = ()
    revisit: tuple[str, ...] = ()
    archive_dir: Path | None = None
    late: dict[dt.date, int] = field(default_factory=dict)
    scope: str | None = None
    folder: str = ""

    def log_line(self, source: str | None) -> str | None:
        """The raw line a ``YYYY-MM-DD.md:LINE`` provenance points at (read-only), or None (:func:`log_line`)."""
        return log_line(self.archive_dir, source)


def log_line(archive_dir: Path | None, source: str | None) -> str | None:
    """The raw line of the daily logs in ``archive_dir`` that a ``YYYY-MM-DD.md:LINE`` provenance points at
    (read-only, bad UTF-8 replaced), or None: no source, no archive, no such file or line, or the file unreadable."""
    if not source or archive_dir is None or ":" not in source:
        return None
    name, _, number = source.rpartition(":")
    try:
        lines = (archive_dir / name).read_bytes().decode("utf-8", errors="replace").split("\n")
        return lines[int(number) - 1].rstrip("\r") if number.isdigit() and 0 < int(number) <= len(lines) else None
    except OSError:
        return None


@dataclass
class IngestResult:
    """What an engine reports: ``superseded`` raw log lines folded into existing claims, ``pages`` it wrote
    (vault-relative POSIX paths), a short human ``summary``, and ``warnings``."""

    summary: str = ""
    superseded: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LintJob:
    """A lint pass over ``vault_dir`` on ``run_date``, to finish by ``deadline`` (monotonic)."""

    vault_dir: Path
    run_date: dt.date
    deadline: float


@dataclass
class LintFindings:
    """An engine's contribution to a lint pass: contradictions found (and marked on their pages)."""

    contradictions: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    summary: str = ""
    warnings: list[str] = field(default_factory=list)


class Engine(Protocol):
    """A dream engine. Both methods raise :class:`~suzent_cli.errors.DreamFailed` when they cannot finish;
    whatever they wrote before that stays (pages are written atomically, one at a time)."""

    name: str

    def ingest(self, batch: IngestBatch) -> IngestResult: ...

    def lint(self, job: LintJob) -> LintFindings: ...
