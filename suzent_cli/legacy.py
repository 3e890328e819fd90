"""Retiring legacy rows: rows of the search index that no markdown file backs (``suzent retire-legacy``).

A *legacy row* is a row of ``archival_memories`` the indexer did not derive from a file it owns: in suzent's schema
``source IS NULL``; in the original suzent app's schema (no ``source`` column) a row whose ``metadata`` JSON has no
non-empty ``source_file``. Such rows predate the markdown tiers: no reindex can replace them and no tombstone can
retire them, and for most of them the index is the only copy. Three steps, each safe to repeat:

1. **check** (read-only, :func:`check`): is each row *recorded* somewhere in markdown? Key of a text:
   ``normalize(text)[:90]`` (control characters dropped, lower case, whitespace collapsed, first 90 characters).
   A row is recorded when its key is EQUAL to the key of one of: a fact's content in any daily log; any raw
   non-empty log line; any line of a vault content page, as written, without its leading bullet / heading /
   quote / numbering markers, or — for a claim bullet — the claim text without suzent's trailing markers
   (``(confirmed Nx, last D)``, ``(until D)``, ``· source: …``) and without a change-over-time note
   (:func:`suzent_cli.vault.claims.base_text`); or a whole page paragraph. Equality, never substring: a row
   "likes tea" is NOT recorded by a line "likes tea and coffee" (a false "recorded" would let ``--apply`` delete
   the only copy). A row whose log entry carries its ``legacy:<id>`` tag is recorded too (the export wrote it;
   a later edit of that line is the user's). Core files (MEMORY.md, persona.md, user.md) do not count: MEMORY.md's
   generated zone is rewritten by ``promote``. A row with empty content is *empty* (nothing to preserve); one whose
   whole text the user asked to ``forget`` is *forgotten* (not exported: the user wants it gone). Both may be
   deleted. A long row whose first 90 characters match but whose whole text is found nowhere is counted as
   recorded (the check's rule) but reported as ``prefix_only`` and treated as unrecorded by export and apply:
   deleting it would lose the rest of its text.
2. **export** (:func:`export`): each row recorded nowhere is appended to the daily log of its ``created_at`` UTC
   date, through :func:`suzent_cli.capture.write_facts` (the capture appender, its lock, and its late-line record
   so the dream folds days at or below its watermark): rows grouped by date and ``HH:MM``, one entry per group,
   session ``legacy``, in the capture format ``- [category] content `tags```, category from the row's metadata
   (default ``general``), tags = the row's tags + ``legacy`` + ``legacy:<row id>``. The ``legacy:<id>`` tags
   already in the logs make a re-run export nothing twice; rows already recorded in markdown are not exported
   (the dream would count them twice), nor a second row with the same whole text. A row with no date (no
   ``created_at``, ``source_date`` or metadata ``timestamp``) or one dated after today is not exported and is
   listed: put it in a log yourself (``suzent capture --date``) and the check will find it.
3. **apply** (:func:`apply`): refuses (:class:`LegacyUnexported`) while any row is recorded nowhere; otherwise,
   under the indexer lock, copies the table directory to ``<home>/backups/legacy-<UTC stamp>/`` and deletes
   exactly the legacy rows it checked (:func:`suzent_cli.index.indexer.delete_legacy_rows`, the only LanceDB
   writer). The rows of markdown files are never touched.

Only the ``id, content, metadata, created_at`` columns are read, never the vectors (3072-dimensional tables are as
cheap as small ones).
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.archive import Fact, list_logs, parse_log
from suzent_cli.config import Settings
from suzent_cli.errors import LegacyUnexported
from suzent_cli.files import read_text
from suzent_cli.text import normalize, repair
from suzent_cli.vault import content_pages

KEY_CHARS = 90
SESSION = "legacy"
TAG = "legacy"
TAG_PREFIX = "legacy:"
Progress = Callable[[int, int], None]

_MARKERS = re.compile(r"^(?:#{1,6}\s+|>\s?|[-*+\u2022]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)+")


def whole(text: str | None) -> str:
    """A text with control characters dropped, normalized (lower case, whitespace collapsed)."""
    return normalize(repair(text or "")[0])


def key(text: str | None) -> str:
    """The comparison key of a text: :func:`whole`, first 90 characters."""
    return whole(text)[:KEY_CHARS]


def id_tag(row_id: str) -> str:
    """The tag naming a row in its exported log entry (whitespace and backticks, which a tag cannot hold, → ``_``)."""
    return TAG_PREFIX + re.sub(r"[\s`]+", "_", str(row_id))


@dataclass
class LegacyRow:
    id: str
    content: str | None
    created_at: dt.datetime | None
    category: str | None = None
    tags: list[str] = field(default_factory=list)
    status: str = "unrecorded"  # recorded | prefix_only | unrecorded | empty | forgotten

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at.isoformat() if self.created_at else None,
                "content": self.content}


@dataclass
class Markdown:
    """What the markdown tiers hold, for the check: keys of every line/fact/paragraph, and the exported ids."""

    keys: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)  # the same texts whole (not cut at 90 characters)
    exported: set[str] = field(default_factory=set)  # legacy:<id> tags found in the logs
    logs: int = 0
    pages: int = 0

    def add(self, text: str) -> None:
        full = whole(text)
        if full:
            self.texts.add(full)
            self.keys.add(full[:KEY_CHARS])


@dataclass
class LegacyCheck:
    """The read-only report of :func:`check`."""

    schema: str
    dim: int | None
    rows: list[LegacyRow]
    markdown: Markdown
    seconds: float = 0.0

    def having(self, status: str) -> list[LegacyRow]:
        return [r for r in self.rows if r.status == status]

    @property
    def unrecorded(self) -> list[LegacyRow]:
        """Rows whose whole text is found nowhere in markdown (``prefix_only`` included)."""
        return [r for r in self.rows if r.status in ("unrecorded", "prefix_only")]

    def sample(self, n: int) -> list[LegacyRow]:
        """Up to ``n`` unrecorded rows spread evenly over time (oldest first)."""
        rows = sorted(self.unrecorded, key=_order)
        if n <= 0 or not rows:
            return []
        if len(rows) <= n:
            return rows
        step = len(rows) / n
        return [rows[int(i * step)] for i in range(n)]

    def to_json(self, sample: int = 5) -> dict[str, Any]:
        return {"legacy_rows": len(self.rows),
                "recorded": len(self.having("recorded")) + len(self.having("prefix_only")),
                "unrecorded": len(self.having("unrecorded")), "prefix_only": len(self.having("prefix_only")),
                "empty": len(self.having("empty")),
                "forgotten": len(self.having("forgotten")),
                "exported": sum(1 for r in self.rows if id_tag(r.id) in self.markdown.exported),
                "schema": self.schema, "dim": self.dim, "logs_scanned": self.markdown.logs,
                "pages_scanned": self.markdown.pages, "seconds": self.seconds,
                "sample": [r.to_json() for r in self.sample(sample)]}


def _order(row: LegacyRow) -> tuple:
    return (row.created_at is None, row.created_at or dt.datetime.min.replace(tzinfo=dt.UTC), row.id)


def owned_by_indexer(settings: Settings) -> Callable[[dict], bool]:
    """Whether an original-app row's ``source_file`` (in its metadata) names a file suzent's indexer owns and
    will re-derive rows from: a daily log in the archive, a vault page, or a core file of the memory dir that
    exists now. A row naming a file that is gone (or a path outside the tiers) is legacy: a rebuild would lose it."""
    paths = settings.paths

    def owns(meta: dict) -> bool:
        name = str(meta.get("source_file") or "").strip()
        if not name or Path(name).is_absolute() or ".." in Path(name).parts:
            return False
        kind = str(meta.get("source_type") or "")
        if kind == "notebook":
            return (paths.vault_dir / name).is_file()
        if kind == "core_file":
            return (paths.memory_dir / name).is_file()
        return (paths.archive_dir / Path(name).name).is_file() if kind == "archive_log" else (
            (paths.archive_dir / name).is_file() or (paths.vault_dir / name).is_file())
    return owns


# ---- check ----------------------------------------------------------------------------------------------------
def _page_keys(text: str, md: Markdown) -> None:
    from suzent_cli.vault.claims import base_text  # light (re + text)
    from suzent_cli.vault.pages import parse_claim  # light

    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.strip():
            md.add(paragraph)
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        md.add(line)
        md.add(_MARKERS.sub("", line))
        claim = parse_claim(line)
        if claim:
            md.add(claim.text)
            md.add(base_text(claim.text))


def scan_markdown(settings: Settings, progress: Callable[[int], None] | None = None) -> Markdown:
    """Keys of every daily log (facts and raw lines) and every vault content page, and the ``legacy:<id>`` tags
    of the logs. ``progress(files done)`` after each file. Unreadable files are skipped (they record nothing)."""
    md = Markdown()
    done = 0
    for day, path in list_logs(settings.paths.archive_dir):
        try:
            text = read_text(path)
        except OSError:
            continue
        for raw in text.split("\n"):
            if raw.strip():
                md.add(raw.strip())
        for fact in parse_log(text, day):
            md.add(fact.content)
            md.exported.update(t for t in fact.tags if t.startswith(TAG_PREFIX))
        md.logs += 1
        done += 1
        if progress:
            progress(done)
    for path in content_pages(settings.paths.vault_dir):
        try:
            _page_keys(read_text(path), md)
        except OSError:
            continue
        md.pages += 1
        done += 1
        if progress:
            progress(done)
    return md


def _markdown_files(settings: Settings) -> int:
    return len(list_logs(settings.paths.archive_dir)) + len(content_pages(settings.paths.vault_dir))


def check(settings: Settings, *, progress: Progress | None = None) -> LegacyCheck:
    """Read the legacy rows and classify each as recorded / unrecorded / empty / forgotten (module docstring).
    Read-only. No index: no rows, schema ``none``. Raises :class:`IndexUnreadable`."""
    from suzent_cli.index.store import ReadStore, table_exists  # lancedb
    from suzent_cli.vault.state import read_forgotten

    started = time.perf_counter()
    if not table_exists(settings.paths.index_dir):
        return LegacyCheck("none", None, [], Markdown())  # no index, nothing legacy
    store = ReadStore.open_any(settings.paths.index_dir, home=settings.paths.home)
    rows = [LegacyRow(str(r["id"]), r["content"], r["created_at"], r["category"], list(r["tags"]))
            for r in store.legacy_rows(owned_by_indexer(settings))]
    files = _markdown_files(settings)
    total = files + len(rows)
    md = scan_markdown(settings, (lambda done: progress(done, total)) if progress else None)
    forgotten = read_forgotten(settings.paths.state_dir)
    for n, row in enumerate(rows, start=1):
        k = key(row.content)
        if not k:
            row.status = "empty"
        elif whole(row.content) in md.texts or id_tag(row.id) in md.exported:
            row.status = "recorded"
        elif whole(row.content) in forgotten:
            row.status = "forgotten"
        elif k in md.keys:
            row.status = "prefix_only"
        if progress and (n % 500 == 0 or n == len(rows)):
            progress(files + n, total)
    return LegacyCheck(store.schema_kind, store.vector_dim(), rows, md, round(time.perf_counter() - started, 3))


# ---- export ---------------------------------------------------------------------------------------------------
@dataclass
class ExportReport:
    exported: int = 0
    already_exported: int = 0
    already_recorded: int = 0
    duplicates: int = 0
    not_needed: int = 0  # empty or forgotten
    days: list[str] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {id, created_at, content, reason}
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _fact(row: LegacyRow) -> Fact:
    tags = ["-".join(t.split()) for t in row.tags if t.strip()] + [TAG, id_tag(row.id)]  # a tag is one word
    return Fact(content=row.content or "", category=row.category or "general", tags=tuple(dict.fromkeys(tags)))


def export(settings: Settings, *, progress: Progress | None = None, plan: LegacyCheck | None = None) -> ExportReport:
    """Append every legacy row recorded nowhere in markdown to the daily log of its date (module docstring).
    Idempotent. ``plan``: a :func:`check` just made (else one is made). Raises LockTimeout/OSError from the
    appender (rows written before stay written; a re-run continues) and the check's errors."""
    from suzent_cli.capture import write_facts

    started = time.perf_counter()
    plan = plan or check(settings)
    report = ExportReport()
    todo: list[LegacyRow] = []
    seen: set[str] = set()
    for row in sorted(plan.rows, key=_order):
        if row.status in ("empty", "forgotten"):
            report.not_needed += 1
        elif id_tag(row.id) in plan.markdown.exported:
            report.already_exported += 1
        elif row.status == "recorded":
            report.already_recorded += 1
        elif row.created_at is None or row.created_at.date() > settings.today:
            reason = ("no created_at, source_date or timestamp" if row.created_at is None
                      else f"dated {row.created_at.date().isoformat()}, after today")
            report.skipped.append(row.to_json() | {"reason": reason})
        elif (text := whole(row.content)) in seen:
            report.duplicates += 1  # the same whole text is exported once; the check then finds this row too
        else:
            seen.add(text)
            todo.append(row)
    groups: list[tuple[dt.date, str, list[LegacyRow]]] = []
    for row in todo:
        day, hhmm = row.created_at.date(), row.created_at.strftime("%H:%M")
        if groups and groups[-1][0] == day and groups[-1][1] == hhmm:
            groups[-1][2].append(row)
        else:
            groups.append((day, hhmm, [row]))
    warned: dict[str, None] = {}
    done = 0
    for day, hhmm, rows in groups:
        result = write_facts(settings, [_fact(r) for r in rows], day=day, time=hhmm, session=SESSION, refresh=False)
        if result.path is not None:
            report.exported += len(result.facts)
            if not report.days or report.days[-1] != day.isoformat():
                report.days.append(day.isoformat())
        warned.update(dict.fromkeys(result.warnings))
        done += len(rows)
        if progress:
            progress(done, len(todo))
    report.days = sorted(set(report.days))
    report.warnings = list(warned)[:5] + ([f"… and {len(warned) - 5} more warnings"] if len(warned) > 5 else [])
    report.seconds = round(time.perf_counter() - started, 3)
    return report


# ---- apply ----------------------------------------------------------------------------------------------------
@dataclass
class ApplyReport:
    legacy_rows: int = 0
    deleted: int = 0
    backup: str | None = None
    restore: str | None = None
    schema: str | None = None
    cancelled: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def refusal(plan: LegacyCheck, today: dt.date | None = None, shown: int = 5) -> LegacyUnexported:
    """The one-line refusal naming the rows recorded nowhere (up to ``shown``) and what to do about them: export
    the datable ones; capture by hand the ones an export cannot place (no date, or dated after ``today``)."""
    rows = sorted(plan.unrecorded, key=_order)
    named = ", ".join(f"{r.id} ({' '.join((r.content or '').split())[:40]!r})" for r in rows[:shown])
    more = f" and {len(rows) - shown} more" if len(rows) > shown else ""
    prefix = sum(1 for r in rows if r.status == "prefix_only")
    which = f" ({prefix} of them match only by their first {KEY_CHARS} characters)" if prefix else ""
    undatable = [r for r in rows if r.created_at is None or (today and r.created_at.date() > today)]
    todo = ("run `suzent retire-legacy --export` first, then --apply again" if len(undatable) < len(rows) else "")
    if undatable:
        hand = (f"{len(undatable)} cannot be exported (no date, or dated after today): capture them with "
                "`suzent capture --date YYYY-MM-DD --fact …` (the check then finds them)")
        todo = f"{todo}; {hand}" if todo else hand
    return LegacyUnexported(
        f"{len(rows)} of {len(plan.rows)} legacy row(s) are recorded nowhere in markdown{which}, so deleting them "
        f"would lose their only copy: {named}{more}. To fix: {todo}", rows=[r.to_json() for r in rows])


def backup_dir(settings: Settings) -> Path:
    """A fresh ``<home>/backups/legacy-<UTC YYYYmmddTHHMMSSZ>[-N]`` path (not created)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = settings.paths.home / "backups" / f"legacy-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def restore_command(settings: Settings, backup: Path, schema: str) -> str:
    """The shell command that puts the table back as it was before ``--apply``."""
    from suzent_cli.index.store import TABLE  # a constant; store imports lancedb lazily

    paths = settings.paths
    index = paths.index_dir
    cmd = (f"rm -rf {shlex.quote(str(index / f'{TABLE}.lance'))} && "
           f"cp -a {shlex.quote(str(backup / f'{TABLE}.lance'))} {shlex.quote(str(index))}/")
    where = " ".join(f"{flag} {shlex.quote(str(value))}" for flag, value in (
        ("--home", paths.home), ("--memory-dir", paths.memory_dir), ("--vault-dir", paths.vault_dir),
        ("--index-dir", index)))
    return cmd + (f" && suzent {where} index --full" if schema == "suzent" else "")


def apply(settings: Settings, *, confirm: Callable[[LegacyCheck], bool] | None = None,
          progress: Progress | None = None, plan: LegacyCheck | None = None) -> ApplyReport:
    """Delete every legacy row once each is recorded in markdown (or empty, or forgotten), after a backup copy.

    Raises :class:`LegacyUnexported` (nothing copied, nothing deleted) while any row is recorded nowhere. With no
    legacy rows, returns at once (no backup). ``confirm(plan)`` is asked before anything is written; False
    cancels. Raises LockTimeout, IndexMissing, IndexUnreadable, OSError (backup; then nothing was deleted).
    """
    from suzent_cli.index.api import retire_legacy_rows

    plan = plan or check(settings, progress=progress)
    report = ApplyReport(legacy_rows=len(plan.rows), schema=plan.schema)
    if not plan.rows:
        return report
    if plan.unrecorded:
        raise refusal(plan, settings.today)
    if confirm is not None and not confirm(plan):
        report.cancelled = True
        return report
    backup = backup_dir(settings)
    report.deleted = retire_legacy_rows(settings, {r.id: r.content for r in plan.rows}, backup,
                                        owned_by_indexer(settings))
    report.backup = str(backup)
    report.restore = restore_command(settings, backup, plan.schema)
    return report
