"""The write path: ``suzent capture`` appends facts to the day's log in the capture buffer.

Ready fact lines take the fast path: parse, clean, one locked append — no model, no index, no heavy import.
A conversation turn goes through an extractor first (:mod:`suzent_cli.extract`); for the claude extractor the
10 nearest known facts are looked up best-effort (a missing, locked or corrupt index only means no context: the
write still happens — invariant 5). Nothing is deduplicated at write time.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import archive
from .archive import Fact
from .config import Settings, parse_date
from .errors import ExtractionFailed, InputInvalid
from .textnorm import fold_line, repair

_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
KNOWN_FACTS = 10


@dataclass
class CaptureResult:
    """What one capture wrote. ``path`` is None when there was nothing to capture."""

    facts: list[Fact]
    path: Path | None = None
    day: dt.date | None = None
    time: str | None = None
    session: str | None = None
    extractor: str | None = None
    known_facts: int = 0
    warnings: list[str] = field(default_factory=list)


def parse_time(text: str) -> str:
    """Validate ``HH:MM`` (24 h). Raises :class:`InputInvalid`."""
    if not _TIME.match(text.strip()):
        raise InputInvalid(f"time must be HH:MM (00:00-23:59), got {text!r}")
    return text.strip()


_LIST_MARKER = re.compile(r"^(?:[-*+\u2022]|\d+[.)])\s+")
_BARE_CATEGORY = re.compile(r"^-?\s*\[[^\]]*\]\s*(?:`[^`]*`)?$")


def parse_fact(text: str) -> Fact | None:
    """One fact from ``text``, folded to one line first (so it can never become two facts or a heading):
    ``- [category] content `tags` ``, ``[category] content``, or plain content (category ``general``); a leading
    list marker (``-``, ``*``, ``1.``) is not content. None when no content is left (``[personal]``, ``-``)."""
    line = fold_line(text)
    if not line or _BARE_CATEGORY.match(line):
        return None
    if line.startswith("["):
        line = "- " + line
    parsed = archive.parse_fact_line(line)
    if parsed:
        category, content, tags = parsed
        return Fact(content=content, category=category, tags=tags)
    content = _LIST_MARKER.sub("", line).strip()
    if content.startswith("["):  # "* [goal] Ship v1"
        return parse_fact(content)
    return Fact(content=content) if content and content not in ("-", "*", "+") else None


def parse_fact_lines(text: str) -> list[Fact]:
    """Facts from ``--facts-from`` text: each non-blank line is one fact (see :func:`parse_fact`)."""
    return [f for line in text.splitlines() if (f := parse_fact(line))]


def clean_facts(facts: list[Fact]) -> list[Fact]:
    """Fold each fact to one line and drop the empty ones (no input can forge a heading or an extra line)."""
    out = []
    for f in facts:
        c = f.clean()
        if c.content:
            out.append(c)
    return out


def repair_input(data: bytes | str, warnings: list[str]) -> str:
    """Repair bad UTF-8 and NUL/control bytes of raw input, recording one warning per kind of repair."""
    text, found = repair(data)
    warnings.extend(found)
    return text


def write_facts(settings: Settings, facts: list[Fact], *, day: dt.date | None = None, time: str | None = None,
                session: str = "cli", warnings: list[str] | None = None, extractor: str | None = None,
                known_facts: int = 0) -> CaptureResult:
    """Append ``facts`` as one entry to the log of ``day`` (default: settings.today) at ``time`` (default: now, UTC).

    Facts are cleaned first; if none remain nothing is written and ``path`` is None. One locked, fsynced append;
    raises :class:`LockTimeout`/OSError with nothing written.
    """
    warnings = list(warnings or [])
    day = day or settings.today
    time = parse_time(time) if time else dt.datetime.now(dt.timezone.utc).strftime("%H:%M")
    cleaned = clean_facts(facts)
    result = CaptureResult(cleaned, day=day, time=time, session=session, extractor=extractor,
                           known_facts=known_facts, warnings=warnings)
    if cleaned:
        result.path = archive.append_entry(settings.paths.archive_dir, day, time, session, cleaned,
                                           timeout=settings.lock_timeout)
        if day < settings.today:
            _warn_behind_watermark(settings, day, warnings)
    return result


def _warn_behind_watermark(settings: Settings, day: dt.date, warnings: list[str]) -> None:
    """A backfilled fact dated at or before the dream's watermark is indexed, but no dream will fold it."""
    from .dream.ledger import read_ledger, watermark  # noqa: PLC0415 - light: reads log.md only

    try:
        mark = watermark(read_ledger(settings.paths.vault_dir))
    except OSError:
        return
    if mark is not None and day <= mark:
        warnings.append(f"{day.isoformat()} is at or before the dream's watermark {mark.isoformat()}: the fact is "
                        "stored and indexed, but the dream will not fold it into the vault")


KnownFacts = Callable[[str], list[str]]


def extract_and_write(settings: Settings, turn_text: str, *, extractor_name: str | None = None,
                      known_facts: KnownFacts | None = None, day: dt.date | None = None, time: str | None = None,
                      session: str = "cli", warnings: list[str] | None = None) -> CaptureResult:
    """Extract facts from a turn (see :func:`suzent_cli.extract.turns.parse_turn`) and :func:`write_facts` them.

    ``known_facts(text)`` returns up to 10 nearest known facts for the prompt; any exception it raises is
    swallowed (the extraction runs without context). When a model extractor raises :class:`ExtractionFailed`
    the offline extractor is used instead, with a warning. Raises :class:`InputInvalid`,
    :class:`ExtractorUnavailable`.
    """
    from .extract import choose_extractor  # noqa: PLC0415
    from .extract.turns import parse_turn  # noqa: PLC0415

    warnings = list(warnings or [])
    turn = parse_turn(turn_text)
    extractor = choose_extractor(settings, extractor_name)
    known: list[str] = []
    if known_facts is not None and extractor.name != "offline":
        try:
            known = list(known_facts(turn.as_text()))[:KNOWN_FACTS]
        except Exception as exc:  # noqa: BLE001 - invariant 5: enrichment never blocks a write
            warnings.append(f"known-fact lookup skipped ({type(exc).__name__}: {exc})".splitlines()[0][:200])
    try:
        facts = extractor.extract(turn, known)
    except ExtractionFailed as exc:
        if extractor.name == "offline":
            raise
        from .extract.offline import OfflineExtractor  # noqa: PLC0415

        # A turn is never lost because the API is down: fall back to the rules, and say so.
        warnings.append(f"{extractor.name} extraction failed ({exc}); used the offline extractor".splitlines()[0])
        extractor, known = OfflineExtractor(), []
        facts = extractor.extract(turn, known)
    return write_facts(settings, facts, day=day, time=time, session=session, warnings=warnings,
                       extractor=extractor.name, known_facts=len(known))


def index_after_capture(settings: Settings, path: Path):
    """Reindex the log just appended to (``capture --index``). Returns ``(IndexReport | None, warning | None)``.

    The facts are already durable when this runs, so an index failure (busy lock, other embedder, model missing)
    is reported as a warning, never as a failed capture.
    """
    from .errors import SuzentError  # noqa: PLC0415
    from .index.api import reindex_files  # noqa: PLC0415 - loads the embedder

    try:
        return reindex_files(settings, [path]), None
    except SuzentError as exc:
        return None, f"captured, but not indexed ({exc}); run `suzent index` later"


def resolve_day(settings: Settings, date_text: str | None) -> dt.date:
    return parse_date(date_text, "--date") if date_text else settings.today
