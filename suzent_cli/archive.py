"""Tier 1, the capture buffer: append-only daily logs ``archive/YYYY-MM-DD.md``.

Format (byte-compatible with the original suzent app)::

    # Daily Log - 2026-06-01

    ## 14:05 — abcdefgh

    - [personal] Lives in Berlin `location city`
    - [preference] Likes tea

Each append is one entry: ``\\n## HH:MM — <session>\\n\\n`` + fact lines + ``\\n``. A fact line is
``- [<category>] <content>`` plus, when there are tags, one space and ONE backtick span of space-joined tags.
This module is the only appender of daily logs; logs are never rewritten.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.files import append_held, atomic_write_bytes, locked, read_text
from suzent_cli.text import clean_input, fold_line, repair

FACT_RE = re.compile(r"^-\s*\[([^\]]+)\]\s*(.*)$")
TAGS_RE = re.compile(r"`([^`]*)`\s*$")
HEADING_RE = re.compile(r"^##\s+(\d{1,2}:\d{2})\s+\u2014\s+(.*?)\s*$")
LOG_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
DEFAULT_CATEGORY = "general"
APPEND_LOCK = ".append.lock"


@dataclass(frozen=True)
class Fact:
    """One claim to record: ``category`` (default ``general``), one-line ``content``, ``tags``."""

    content: str
    category: str = DEFAULT_CATEGORY
    tags: tuple[str, ...] = field(default_factory=tuple)

    def clean(self) -> Fact:
        """The fact as it will be written: lone surrogates replaced by U+FFFD and control characters dropped
        (:func:`~suzent_cli.text.clean_input`: no caller can hand the appender a record UTF-8 cannot hold), folded
        to one line, brackets out of the category, tags split."""
        category = fold_line(clean_input(self.category)).replace("[", "").replace("]", "").strip()
        category = category or DEFAULT_CATEGORY
        tags: list[str] = []
        for tag in self.tags:
            tags.extend(fold_line(clean_input(tag).replace("`", "")).split())
        return Fact(content=fold_line(clean_input(self.content)), category=category, tags=tuple(tags))


@dataclass(frozen=True)
class LoggedFact:
    """A fact as read back from a daily log, with its provenance (``line`` is 1-based)."""

    day: dt.date
    line: int
    time: str | None
    session: str | None
    category: str
    content: str
    tags: tuple[str, ...]


def render_fact(fact: Fact) -> str:
    """The log line for ``fact`` (already :meth:`Fact.clean`). Round-trips through :func:`parse_fact_line`."""
    line = f"- [{fact.category}] {fact.content}"
    if fact.tags:
        return f"{line} `{' '.join(fact.tags)}`"
    if TAGS_RE.search(fact.content):
        # Content that itself ends in a backtick span would be read back as tags: an empty span protects it.
        return f"{line} ``"
    return line


def render_entry(facts: list[Fact], time: str, session: str) -> str:
    """One appended entry: heading ``## HH:MM — session`` and the fact lines."""
    lines = "\n".join(render_fact(f) for f in facts)
    return f"\n## {time} \u2014 {session}\n\n{lines}\n"


def clean_session(session: object) -> str:
    """``session`` as it is written in an entry heading: invalid UTF-8 (lone surrogates from argv bytes) replaced,
    control characters dropped, HTML comments and stamp shapes cut (an unclosed ``<!--`` in a heading would hide
    every later entry of the log from a person reading it rendered), secrets redacted (a key given as a session id
    would be kept in the log, the index and ``confirmations.jsonl``), folded to one line; ``cli`` when nothing is
    left. Never raises."""
    from suzent_cli.guard.markup import strip_markup  # stdlib only
    from suzent_cli.guard.secrets import redact  # the detectors load only for a candidate token

    text, _ = repair(session if isinstance(session, str) else str(session))
    return fold_line(redact(strip_markup(fold_line(text))[0])[0]) or "cli"


def log_header(day: dt.date) -> str:
    return f"# Daily Log - {day.isoformat()}\n"


def parse_fact_line(line: str) -> tuple[str, str, tuple[str, ...]] | None:
    """Parse one log line into ``(category, content, tags)``; None for non-fact lines or empty content."""
    m = FACT_RE.match(line.strip())
    if not m:
        return None
    category, rest = m.group(1).strip(), m.group(2)
    tags: tuple[str, ...] = ()
    t = TAGS_RE.search(rest)
    if t:
        tags = tuple(t.group(1).split())
        rest = rest[: t.start()]
    content = rest.strip()
    if not content:
        return None
    return category, content, tags


def parse_log(text: str, day: dt.date) -> list[LoggedFact]:
    """Every fact of a daily log's ``text``, in file order, with line number, entry time and session."""
    facts: list[LoggedFact] = []
    time = session = None
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        h = HEADING_RE.match(stripped)
        if h:
            time, session = h.group(1), h.group(2) or None
            continue
        parsed = parse_fact_line(stripped)
        if parsed:
            category, content, tags = parsed
            facts.append(LoggedFact(day, number, time, session, category, content, tags))
    return facts


def log_day(path: Path) -> dt.date | None:
    """The date a daily log file name stands for, or None if the name is not ``YYYY-MM-DD.md``."""
    m = LOG_NAME_RE.match(path.name)
    if not m:
        return None
    try:
        return dt.date.fromisoformat(m.group(1))
    except ValueError:
        return None


def list_logs(archive_dir: Path) -> list[tuple[dt.date, Path]]:
    """All daily logs in ``archive_dir``, oldest first (missing dir → empty)."""
    if not archive_dir.is_dir():
        return []
    out = [(d, p) for p in archive_dir.glob("????-??-??.md") if p.is_file() and (d := log_day(p))]
    return sorted(out)


def read_log(path: Path) -> list[LoggedFact]:
    """Parse the daily log at ``path`` (bad bytes replaced). Raises OSError if unreadable."""
    day = log_day(path)
    if day is None:
        raise ValueError(f"{path.name} is not a daily log name (YYYY-MM-DD.md)")
    return parse_log(read_text(path), day)


def append_entry(archive_dir: Path, day: dt.date, time: str, session: str, facts: list[Fact], *, timeout: float,
                 on_appended: Callable[[int], None] | None = None) -> Path:
    """Append one entry of ``facts`` to the log of ``day``, as a single locked, fsynced write.

    ``facts`` must be non-empty and already cleaned. The log is created with its header if needed. Concurrent
    appenders (threads or processes) serialize on ``archive/.append.lock``. Raises :class:`LockTimeout`/OSError
    with nothing written. Returns the log path.

    ``on_appended(from_line)``: called after the write, still under the lock, with the 1-based line the entry
    starts at (used to record a late append to a past day; see :func:`suzent_cli.vault.state.append_late_lines`). If it
    raises, the entry stays written and the exception propagates.
    """
    if not facts:
        raise ValueError("append_entry needs at least one fact")
    path = archive_dir / f"{day.isoformat()}.md"
    record = render_entry(facts, time, clean_session(session))
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(archive_dir / APPEND_LOCK, timeout):
        from_line = 1
        if on_appended is not None and path.is_file():
            with open(path, "rb") as fh:
                from_line = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1
        append_held(path, record, header=log_header(day))
        if on_appended is not None:
            on_appended(from_line)
    return path


@dataclass(frozen=True)
class LogMerge:
    """What :func:`merge_into_log` did to one log: ``appended`` (new lines only added at the end), ``moved`` (the
    file was replaced: some of its lines now stand further down), ``from_line`` (the first 1-based line that
    differs from before; 0 when nothing changed), ``lines_added``."""

    path: Path
    appended: bool
    moved: bool
    from_line: int
    lines_added: int


def _text_of(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def merge_into_log(archive_dir: Path, day: dt.date, merge: Callable[[str], str], *, timeout: float,
                   on_changed: Callable[[int], None] | None = None) -> LogMerge:
    """Bring the log of ``day`` to ``merge(live text)`` under the append lock every capture takes, for ``suzent
    sync`` (entries another machine or a folder-sync conflict copy holds). The one writer of a log besides
    :func:`append_entry`.

    When the merged text extends the live one, only the new bytes are appended (one locked, fsynced write: the
    log stays append-only). Otherwise the merge moved lines (entries of another machine now stand before this
    machine's newest ones): the file is replaced atomically (temp file, fsync, rename; mode 0600), and only after
    checking that every line of the live text is still there as often: ``ValueError`` and nothing written when it
    is not. ``on_changed(from_line)`` is called under the lock with the first line that differs (for the late-line
    record of a past day). Raises :class:`LockTimeout`/OSError with the log as it was."""
    from collections import Counter

    path = archive_dir / f"{day.isoformat()}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(archive_dir / APPEND_LOCK, timeout):
        try:
            live = _text_of(path.read_bytes())
        except FileNotFoundError:
            live = ""
        merged = merge(live)
        if merged == live:
            return LogMerge(path, appended=False, moved=False, from_line=0, lines_added=0)
        old_lines, new_lines = live.splitlines(), merged.splitlines()
        added = len(new_lines) - len(old_lines)
        if merged.startswith(live) and (not live or live.endswith("\n")):
            from_line = live.count("\n") + 1
            tail = merged[len(live):]
            append_held(path, tail.encode("utf-8", errors="surrogateescape"))  # the bytes as they came
            if on_changed is not None:
                on_changed(from_line)
            return LogMerge(path, appended=True, moved=False, from_line=from_line, lines_added=added)
        need, have = Counter(old_lines), Counter(new_lines)
        if any(have[line] < n for line, n in need.items()):
            raise ValueError(f"{path.name}: a merge would lose lines of the log; nothing written")
        from_line = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), 1) if a != b),
                         min(len(old_lines), len(new_lines)) + 1)
        atomic_write_bytes(path, merged.encode("utf-8", errors="surrogateescape"))
        if on_changed is not None:
            on_changed(from_line)
        return LogMerge(path, appended=False, moved=True, from_line=from_line, lines_added=added)
