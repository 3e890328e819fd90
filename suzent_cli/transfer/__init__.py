"""Import and export (issue 26, section 3): memories from elsewhere into the daily logs, and the memory out again.

**Import** (:func:`plan_import`, :func:`run_import`). A *reader* (one module per source, :data:`SOURCES`) turns a
source's documented on-disk or export format into :class:`Memory` records: text, category, scope (``""`` for the
person's, else a project key, :mod:`suzent_cli.scope`), original date and time when known, and where it came from
(``file``, ``locator``: the 1-based line of a markdown or JSON-lines file, the 1-based record index of a JSON list,
``o<id>.<n>``/``s<id>.<field>`` for a claude-mem row). Every reader validates its whole input before anything is
written and raises :class:`~suzent_cli.errors.InputInvalid` naming the file for bad input (not JSON, wrong shape, an
unreadable database, a file over :data:`MAX_FILE_BYTES`).

Every memory then goes through the write path, :func:`suzent_cli.capture.write_facts` (the screening of
:func:`suzent_cli.capture.clean_facts`: markup cut, secrets redacted, planted instructions tagged), grouped into
one entry per run of memories with the same original day and time (session ``import``), tagged with its scope
(:func:`suzent_cli.scope.scope_tag`, none for the person's) and its provenance ``import:<source>:<file>:<locator>``
(``<file>`` the absolute path, percent-encoded by :func:`suzent_cli.scope.encode_key`). A memory dated before today
is a late append to that day's log, recorded for the dream (``.state/late_lines.jsonl``); one dated after today
is written today.

**Idempotent.** Before writing, the provenance tags already in the daily logs are collected and those memories
skipped ("N new, M already imported"); so is a memory whose words the logs already hold in the same scope. The scan and the writes happen under one lock, ``<archive>/.import.lock``,
so two imports at once cannot both write a memory. A crash between two days' entries leaves the earlier days
written; running the import again writes the rest and nothing twice. ``dry_run`` reads and plans the same way and
touches no file (not even the lock).

**Export** is :mod:`suzent_cli.transfer.export` (read-only).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.errors import InputInvalid

SESSION = "import"
PROVENANCE_PREFIX = "import:"
IMPORT_LOCK = ".import.lock"  # in the archive dir, next to the appender's .append.lock
MAX_FILE_BYTES = 64 * 1024 * 1024  # a larger source file is refused, never read in part
DEFAULT_TIME = "00:00"


@dataclass(frozen=True)
class Memory:
    """One memory read from a source, before screening.

    ``text``: one statement (folded to one line by the write path); ``category``: the fact's ``[category]``;
    ``scope``: ``""`` (the person's) or a project key; ``day``/``time``: when it was first recorded, if the source
    says (``None``: today / the import's clock); ``file``: the absolute path it was read from; ``locator``: where in
    the file (a 1-based line or record index, as a string); ``tags``: extra tags (no spaces; e.g. a heading)."""

    text: str
    category: str
    scope: str
    file: Path
    locator: str
    day: dt.date | None = None
    time: str | None = None
    tags: tuple[str, ...] = ()


@dataclass
class Planned:
    """A memory as it will be written: its screened fact, the day and time of its entry, and its provenance tag."""

    memory: Memory
    fact: object  # suzent_cli.archive.Fact, screened
    day: dt.date
    time: str
    provenance: str


@dataclass
class ImportReport:
    """What an import did (or, with ``dry_run``, would do). ``new``: the memories written (to be written);
    ``already``: skipped because their provenance tag is in the logs (or the source repeats them); ``present``:
    skipped because the logs hold the same words in the same scope; ``empty``: nothing left after screening;
    ``entries``: log entries appended (planned); ``days``: the days written to; ``warnings``: one line each."""

    source: str
    path: Path
    dry_run: bool
    read: int = 0
    new: list[Planned] = field(default_factory=list)
    already: int = 0
    present: int = 0
    empty: int = 0
    entries: int = 0
    days: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"source": self.source, "path": str(self.path), "dry_run": self.dry_run, "read": self.read,
                "new": len(self.new), "already_imported": self.already, "already_in_memory": self.present,
                "empty_after_screening": self.empty,
                "entries": self.entries, "days": self.days, "skipped": self.skipped, "warnings": self.warnings,
                "facts": [{"day": p.day.isoformat(), "time": p.time, "category": p.fact.category,
                           "content": p.fact.content, "tags": list(p.fact.tags)} for p in self.new]}


@dataclass
class ReadContext:
    """What a reader may need besides its path: the settings (today, the home) and where it may note what it left
    out (``skipped``: reason → count) or say something (``warnings``)."""

    settings: Settings
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count


Reader = Callable[[Path, ReadContext], list[Memory]]


def _readers() -> dict[str, tuple[Reader, Callable[[], Path]]]:
    from suzent_cli.transfer import basic_memory, claude_code, claude_md, claude_mem, mem0, suzent

    return {
        "claude-code": (claude_code.read, claude_code.default_path),
        "claude-md": (claude_md.read, claude_md.default_path),
        "mem0": (mem0.read, None),
        "basic-memory": (basic_memory.read, None),
        "claude-mem": (claude_mem.read, claude_mem.default_path),
        "suzent": (suzent.read, None),
    }


SOURCES = ("claude-code", "claude-md", "mem0", "basic-memory", "claude-mem", "suzent")


def provenance_tag(source: str, file: Path, locator: str) -> str:
    """``import:<source>:<file>:<locator>``: ``file`` (the absolute path) percent-encoded
    (:func:`suzent_cli.scope.encode_key`) so the tag holds no space or backtick.

    The write path drops a tag that looks like a secret (a long token mixing cases and digits, which a path such as
    ``/tmp/x-Ab3kq9z/CLAUDE.md`` can be), and an import whose tag was dropped could not tell it had written the
    memory. Such a path is written as ``<file name>@<the first 16 hex digits of its SHA-256>`` instead (the same
    on every run), and if even that reads as one, as the digest alone."""
    import hashlib

    from suzent_cli.guard.secrets import redact
    from suzent_cli.scope import encode_key

    tail = f":{encode_key(locator)}"
    tag = f"{PROVENANCE_PREFIX}{source}:{encode_key(str(file))}{tail}"
    if not redact(tag)[1]:
        return tag
    digest = hashlib.sha256(str(file).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    tag = f"{PROVENANCE_PREFIX}{source}:{encode_key(file.name)}@{digest}{tail}"
    return tag if not redact(tag)[1] else f"{PROVENANCE_PREFIX}{source}:{digest}{tail}"


def logged(settings: Settings) -> tuple[set[str], set[tuple[str, str]]]:
    """What the daily logs already hold: every ``import:`` provenance tag, and every fact as ``(scope, text key)``
    (:func:`suzent_cli.vault.forgotten.fact_key`: case, spacing and a final full stop aside). All logs are read: the
    tags are the record of what was imported. An unreadable log raises OSError: an import must not guess what it
    already wrote."""
    from suzent_cli.archive import list_logs, read_log
    from suzent_cli.scope import scope_of_tags
    from suzent_cli.vault.forgotten import fact_key

    tags: set[str] = set()
    texts: set[tuple[str, str]] = set()
    for _, path in list_logs(settings.paths.archive_dir):
        for fact in read_log(path):
            tags.update(t for t in fact.tags if t.startswith(PROVENANCE_PREFIX))
            texts.add((scope_of_tags(fact.tags), fact_key(fact.content)))
    return tags, texts


def resolve_path(source: str, path: str | Path | None) -> Path:
    """The source's PATH: as given (``~`` expanded, made absolute), else the source's default. Raises
    :class:`InputInvalid` for an unknown source, a source with no default and no PATH, or a PATH that does not
    exist."""
    readers = _readers()
    if source not in readers:
        raise InputInvalid(f"unknown import source {source!r} (one of {', '.join(SOURCES)})")
    _, default = readers[source]
    if path is None:
        if default is None:
            raise InputInvalid(f"import {source} needs a PATH (the file or folder to import)")
        where = default()
    else:
        where = Path(os.path.abspath(os.path.expanduser(str(path))))
    if not where.exists():
        raise InputInvalid(f"{where}: no such file or folder to import from")
    return where


def read_source(settings: Settings, source: str, path: Path) -> tuple[list[Memory], ReadContext]:
    """Every memory of ``source`` at ``path`` (:func:`resolve_path`), validated whole. Raises InputInvalid."""
    reader, _ = _readers()[source]
    ctx = ReadContext(settings)
    try:
        memories = reader(path, ctx)
    except OSError as exc:
        raise InputInvalid(f"{exc.filename or path}: cannot read ({exc.strerror or exc})") from None
    return memories, ctx


def plan(settings: Settings, source: str, memories: Iterable[Memory], known: set[str],
         warnings: list[str], logged_texts: set[tuple[str, str]] | None = None) -> tuple[list[Planned], int, int, int]:
    """The memories to write, screened: ``(planned, already imported, already in the logs, empty after
    screening)``. Already imported: a memory whose provenance tag is in ``known``, or whose text (case and spacing
    aside) in the same scope came earlier in this source (a person's memory a Claude Code export holds in every
    project). Already in the logs: one whose screened text the logs hold in the same scope (``logged_texts``; an
    export re-imported into its own home, a rule captured before): nothing new to write. Raises InputInvalid for a
    time that is not ``HH:MM``."""
    from suzent_cli.archive import Fact
    from suzent_cli.capture import clean_facts, parse_time
    from suzent_cli.scope import scope_of_tags, scope_tag
    from suzent_cli.vault.forgotten import fact_key

    out: list[Planned] = []
    already = present = empty = 0
    seen = set(known)
    said: set[tuple[str, str]] = set()  # (scope, text): a memory the source repeats (in several files) once
    for m in memories:
        tag = provenance_tag(source, m.file, m.locator)
        said_key = (m.scope, fact_key(m.text))
        if tag in seen or said_key in said:
            already += 1
            said.add(said_key)
            continue
        seen.add(tag)
        said.add(said_key)
        tags = (*((scope_tag(m.scope),) if m.scope else ()), tag, *m.tags)
        cleaned = clean_facts([Fact(content=m.text, category=m.category or "general", tags=tags)], warnings)
        if not cleaned:
            empty += 1
            continue
        if logged_texts and (scope_of_tags(cleaned[0].tags), fact_key(cleaned[0].content)) in logged_texts:
            present += 1
            continue
        if m.scope and scope_of_tags(cleaned[0].tags) != m.scope:
            warnings.append(f"{m.file}: {m.locator}: its project tag read as a secret and was dropped by the "
                            "screening, so it is imported as the person's")
        day = min(m.day or settings.today, settings.today)
        try:
            time = parse_time(m.time) if m.time else DEFAULT_TIME
        except InputInvalid:
            raise InputInvalid(f"{m.file}: {m.locator}: time {m.time!r} is not HH:MM") from None
        out.append(Planned(m, cleaned[0], day, time, tag))
    return out, already, present, empty


def _entries(planned: list[Planned]) -> list[tuple[dt.date, str, list[Planned]]]:
    """``planned`` in runs of one day and time, in the source's order within a day: one log entry each, days
    oldest first (a past day's log keeps its facts in the order the source had them)."""
    by_day: dict[dt.date, list[Planned]] = {}
    for p in planned:
        by_day.setdefault(p.day, []).append(p)
    out: list[tuple[dt.date, str, list[Planned]]] = []
    for day in sorted(by_day):
        for p in by_day[day]:
            if out and out[-1][0] == day and out[-1][1] == p.time:
                out[-1][2].append(p)
            else:
                out.append((day, p.time, [p]))
    return out


def run_import(settings: Settings, source: str, path: str | Path | None = None, *,
               dry_run: bool = False) -> ImportReport:
    """Import ``source`` from ``path`` (module doc): read and validate everything, then, under the import lock,
    collect the provenance tags already in the logs and append the new memories, one entry per day and time.
    ``dry_run``: the same report, nothing written. Raises InputInvalid (bad input: nothing written),
    LockTimeout (another import holds the lock: nothing written), OSError (a log could not be read or appended:
    the entries before it stay written; a re-run completes the import)."""
    from suzent_cli.capture import refresh_memory_md, write_facts
    from suzent_cli.files import locked

    where = resolve_path(source, path)
    memories, ctx = read_source(settings, source, where)
    report = ImportReport(source, where, dry_run, read=len(memories), skipped=ctx.skipped, warnings=ctx.warnings)

    def do() -> None:
        tags, texts = logged(settings)
        planned, report.already, report.present, report.empty = plan(settings, source, memories, tags,
                                                                     report.warnings, texts)
        report.new = planned
        entries = _entries(planned)
        report.entries = len(entries)
        report.days = sorted({day.isoformat() for day, _, _ in entries})
        if dry_run:
            return
        for day, time, group in entries:
            result = write_facts(settings, [p.fact for p in group], day=day, time=time, session=SESSION,
                                 warnings=report.warnings, refresh=False)
            report.warnings = result.warnings  # write_facts works on a copy: what it added (a late line not recorded)
        if entries:
            refresh_memory_md(settings, [p.fact for p in planned], report.warnings)

    if dry_run:
        do()
    else:
        settings.paths.archive_dir.mkdir(parents=True, exist_ok=True)
        with locked(settings.paths.archive_dir / IMPORT_LOCK, settings.lock_timeout):
            do()
    report.warnings = list(dict.fromkeys(report.warnings))
    return report


# --- helpers the readers share -------------------------------------------------------------------------------------

def read_text_file(path: Path, ctx: ReadContext, limit: int | None = None) -> str:
    """A source file's text: refused over ``limit`` bytes (InputInvalid naming it); bad UTF-8 and control bytes
    repaired, with one warning naming the file."""
    from suzent_cli.text import repair

    limit = MAX_FILE_BYTES if limit is None else limit
    size = path.stat().st_size
    if size > limit:
        raise InputInvalid(f"{path}: {size} bytes, over the import limit of {limit} bytes; split it first")
    text, found = repair(path.read_bytes())
    for what in found:
        ctx.warnings.append(f"{path}: {what}")
    return text


def loads_noting(text: str | bytes, where: str, ctx: ReadContext) -> object:
    """``json.loads(text)`` with each lone surrogate in its strings (a ``"\\ud83d"`` escape: half an emoji, as
    JavaScript writes it) replaced by U+FFFD and one warning naming ``where`` (:func:`suzent_cli.text.loads_json`):
    the memory is imported with the replacement character, as capture and MCP keep it. Raises what
    :func:`json.loads` raises (ValueError, RecursionError). ``bytes`` (a SQLite BLOB) are decoded first, bad UTF-8
    replaced."""
    from suzent_cli.text import loads_json

    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    value, replaced = loads_json(text)
    if replaced:
        ctx.warnings.append(f"{where}: replaced half a character (a lone surrogate escape) with U+FFFD")
    return value


def within(root: Path, files: list[Path], ctx: ReadContext) -> list[Path]:
    """``files`` without those that are symlinks (or lie under one) leading out of ``root``: a cloned repository's
    ``CLAUDE.md -> ~/.ssh/id_ed25519`` is never read. One warning per file left out."""
    base = root.resolve() if root.is_dir() else root.parent.resolve()
    kept = []
    for f in files:
        real = f.resolve()
        if real == base or base in real.parents:
            kept.append(f)
        else:
            ctx.warnings.append(f"{f}: not read: a link to {real}, outside {base}")
            ctx.skip("links leading out of the source")
    return kept


def split_frontmatter(path: Path, text: str) -> tuple[dict, list[tuple[int, str]]]:
    """``(frontmatter mapping, body lines as (1-based line number in the file, line))`` of a markdown file. The
    frontmatter is a first line ``---`` up to the next ``---`` line, loaded by the vault's bounded YAML loader;
    frontmatter that does not load or is not a mapping raises InputInvalid naming the file."""
    from suzent_cli.vault.frontmatter import FrontmatterInvalid, load_yaml

    lines = text.split("\n")
    numbered = list(enumerate(lines, start=1))
    if not lines or lines[0].strip() != "---":
        return {}, numbered
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, numbered
    try:
        meta = load_yaml("\n".join(lines[1:end]))
    except FrontmatterInvalid as exc:
        raise InputInvalid(f"{path}: its frontmatter does not load ({exc})") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InputInvalid(f"{path}: its frontmatter is not a mapping of keys to values")
    return meta, numbered[end + 1:]


def markdown_statements(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """The statements of markdown body lines as ``(line number, text, heading)``: each bullet or paragraph line
    is one (list markers and task boxes dropped); headings are not statements but the context of those under
    them (the last heading seen); fenced code blocks, HTML comment blocks, table separator rows and horizontal
    rules are skipped."""
    import re

    out: list[tuple[int, str, str]] = []
    heading = ""
    fence: str | None = None
    in_comment = False
    marker = re.compile(r"^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")
    for number, raw in lines:
        line = raw.strip()
        if fence is not None:
            if line.startswith(fence):
                fence = None
            continue
        if line.startswith("```") or line.startswith("~~~"):
            fence = line[:3]
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if line.startswith("<!--") and "-->" not in line:
            in_comment = True
            continue
        if not line or re.fullmatch(r"(?:[-*_]\s*){3,}", line) or (re.fullmatch(r"\|?[\s:|-]+\|?", line)
                                                                   and "-" in line):
            continue  # a horizontal rule, a table's separator row
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            heading = m.group(2)
            continue
        text = marker.sub("", line, count=1).strip()
        if text.startswith(">"):
            text = text.lstrip("> ").strip()
        if text:
            out.append((number, text, heading))
    return out


def heading_tag(heading: str) -> tuple[str, ...]:
    """The tag recording a statement's heading (``section:<encoded heading>``), or none."""
    from suzent_cli.scope import encode_key

    return (f"section:{encode_key(heading[:80])}",) if heading.strip() else ()


def file_day(path: Path) -> dt.date:
    """A file's modification day (UTC): the best date a plain file gives."""
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).date()


def instant(value: object, where: str) -> tuple[dt.date | None, str | None]:
    """``(UTC day, HH:MM)`` of an ISO-8601 timestamp or date (a naive one is taken as UTC; epoch seconds or
    milliseconds as numbers too); ``(None, None)`` for a missing value. Raises InputInvalid (``where`` names the
    record) for one that does not parse."""
    if value is None or value == "":
        return None, None
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = value / 1000 if value > 1e11 else value
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        elif isinstance(value, str):
            text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
            if len(text) == 10:
                return dt.date.fromisoformat(text), None
            moment = dt.datetime.fromisoformat(text)
        else:
            raise ValueError(type(value).__name__)
    except (ValueError, OverflowError, OSError):
        raise InputInvalid(f"{where}: {str(value)[:60]!r} is not a date") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.date(), moment.strftime("%H:%M")


def resolve_project(value: str, ctx: ReadContext) -> str:
    """A project named by a source as a scope key: an absolute path → the project of that path
    (:func:`suzent_cli.scope.identify`: its remote, repository or directory) when it exists, else ``dir:<path>``;
    a key already (``github.com/o/r``, ``git:…``, ``dir:…``, ``file:…``) as is; a bare name → the one project
    key already in the logs whose last part is that name, else ``dir:<name>`` (a project known by name only)."""
    from suzent_cli.scope import identify

    value = value.strip()
    if not value:
        return ""
    if value.startswith("/") or value.startswith("~"):
        where = Path(os.path.expanduser(value))
        return identify(where).key if where.is_dir() else f"dir:{os.path.abspath(where)}"
    if value.startswith(("git:", "dir:", "file:")) or ("/" in value and "." in value.split("/", 1)[0]):
        return value
    known = [k for k in _known_scopes(ctx) if k.rstrip("/").rsplit("/", 1)[-1] == value]
    return known[0] if len(known) == 1 else f"dir:{value}"


def _known_scopes(ctx: ReadContext) -> list[str]:
    cached = getattr(ctx, "_scopes", None)
    if cached is None:
        from suzent_cli.archive import list_logs, read_log
        from suzent_cli.scope import scope_of_tags

        found: set[str] = set()
        for _, path in list_logs(ctx.settings.paths.archive_dir):
            try:
                found.update(s for f in read_log(path) if (s := scope_of_tags(f.tags)))
            except OSError:
                continue
        cached = sorted(found)
        ctx._scopes = cached  # type: ignore[attr-defined]
    return cached
