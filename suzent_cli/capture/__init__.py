"""The write path: ``suzent capture`` appends facts to the day's log in the capture buffer.

Ready fact lines take the fast path: parse, clean, one locked append — no model, no index, no heavy import.
They are never classified: a caller that hands over fact lines has already decided they belong in the log.

A conversation turn goes through an extractor first (:mod:`suzent_cli.capture.extract`). When an index exists, the 10
nearest known facts (the *recall set*) are looked up once per turn, best-effort (a locked or corrupt index only
means no context: the write still happens — invariant 5). The claude extractor's prompt carries their texts; for
either extractor the write-path classifier (:mod:`suzent_cli.capture.classify`) then compares each extracted fact with
the same set (invariant 5b):

* ``confirmation`` — a word-for-word restatement of a durably recorded claim: not written to the log, recorded in
  ``notebook/.state/confirmations.jsonl`` instead (see :mod:`suzent_cli.vault.state`) for the dream to count;
* ``revision`` — written exactly like a new fact, with the tag ``revision`` added;
* ``new`` — written as before. Any failure of the lookup, the classifier or the confirmations write degrades to
  ``new``: the fact is written.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.config import Settings, parse_date
from suzent_cli.errors import ExtractionFailed, InputInvalid, describe
from suzent_cli.text import fold_line, repair

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
    outcomes: list = field(default_factory=list)  # a Classification per written fact (turn captures only)
    confirmations: list = field(default_factory=list)  # (Fact, Classification) recorded instead of written
    refresh: dict | None = None  # the legacy MEMORY.md refresh ({"status", "reason", …}); None: not attempted
    from_line: int | None = None  # the appender's line count + 1 before this entry (see fact_lines)


def parse_time(text: str) -> str:
    """Validate ``HH:MM`` (24 h). Raises :class:`InputInvalid`."""
    if not _TIME.match(text.strip()):
        raise InputInvalid(f"time must be HH:MM (00:00-23:59), got {text!r}")
    return text.strip()


_LIST_MARKER = re.compile(r"^(?:[-*+\u2022]\s*(?=\[)|(?:[-*+\u2022]|\d+[.)])\s+)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def parse_fact(text: str) -> Fact | None:
    """One fact from ``text``, folded to one line first (so it can never become two facts or a heading):
    ``- [category] content `tags` ``, ``[category] content``, or plain content (category ``general``); a leading
    list marker (``-``, ``*``, ``1.``) is not content, an empty category (``[] content``) is ``general``. None
    when no content is left (``[personal]``, ``-``).

    Raises :class:`InputInvalid` for a category whose ``[`` is never closed (``[personal Lives nowhere``): the
    line is not guessed at, the person is asked to fix it.
    """
    line = fold_line(text)
    marker = _LIST_MARKER.match(line)
    body = line[marker.end():] if marker else line
    if not body or body in ("-", "*", "+", "\u2022"):
        return None
    if not body.startswith("["):
        return Fact(content=body)
    close = body.find("]")
    if close < 0:
        raise InputInvalid(f"unclosed '[' in the category (write '[category] content'): {_shown(body)}")
    category = body[1:close].strip() or archive.DEFAULT_CATEGORY
    parsed = archive.parse_fact_line(f"- [{category}] {body[close + 1:]}")
    if not parsed:
        return None
    category, content, tags = parsed
    return Fact(content=content, category=category, tags=tags)


def parse_fact_args(raws: list[str], warnings: list[str]) -> list[tuple[Fact | None, str | None]]:
    """Each given fact line (``capture --fact``'s values, ``remember``'s facts) parsed, in order: bad UTF-8 and
    control bytes repaired with a warning (:func:`repair_input`), then :func:`parse_fact`. Per input
    ``(fact, None)``; ``(None, reason)`` for a line :func:`parse_fact` refuses (one line; the others are still
    captured); ``(None, None)`` for one with no content (nothing to capture)."""
    out: list[tuple[Fact | None, str | None]] = []
    for raw in raws:
        try:
            out.append((parse_fact(repair_input(raw, warnings)), None))
        except InputInvalid as exc:
            out.append((None, str(exc)))
    return out


def _shown(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def parse_fact_lines(text: str, rejected: list[str] | None = None, warnings: list[str] | None = None) -> list[Fact]:
    """Facts from ``--facts-from`` text: each non-blank line is one fact (see :func:`parse_fact`). A private-key
    block is redacted whole first (:func:`suzent_cli.guard.secrets.redact_blocks`, a warning in ``warnings``): it
    spans lines, and screened line by line its short last line and its END line would be kept.

    Lines are split at ``\\n``, ``\\r\\n`` and ``\\r`` only: a Unicode line or paragraph separator (U+2028,
    U+2029, U+0085, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``) inside a line is folded into the fact, never splits it.
    A line that is not a fact raises :class:`InputInvalid` naming its number; with ``rejected`` given, such a line
    is skipped instead and its one-line reason (``line N: …``) appended to ``rejected``, so one bad line does not
    cost the good ones.
    """
    from suzent_cli.guard.secrets import describe, redact_blocks

    text, kinds = redact_blocks(text)
    if kinds and warnings is not None:
        warnings.append(f"redacted {describe(kinds)} spanning several lines")
    facts: list[Fact] = []
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        try:
            fact = parse_fact(line)
        except InputInvalid as exc:
            if rejected is None:
                raise InputInvalid(f"line {number}: {exc}") from None
            rejected.append(f"line {number}: {exc}")
            continue
        if fact:
            facts.append(fact)
    return facts


def clean_facts(facts: list[Fact], warnings: list[str] | None = None) -> list[Fact]:
    """The facts as they will be written: each folded to one line (no input can forge a heading or an extra line),
    then screened (:func:`suzent_cli.guard.screen`): HTML comments and verification-stamp-shaped text cut out,
    secrets redacted in content, category and tags (a tag holding one is dropped), and a fact whose text, category
    or a tag reads as a planted instruction tagged ``planted`` (it stays in the log; no reader passes it on to an agent). What the screen changed
    is said in ``warnings``, one line per fact. Empty facts are dropped. Idempotent."""
    out = []
    for f in facts:
        c = _screened(f.clean(), warnings if warnings is not None else [])
        if c.content:
            out.append(c)
    return out


def _screened(fact: Fact, warnings: list[str]) -> Fact:
    from suzent_cli.guard import TAG, describe, planted, redact, screen, strip_markup

    content = screen(fact.content)
    category, cut = strip_markup(fact.category)
    category, kinds = redact(category)
    category = archive.DEFAULT_CATEGORY if kinds or not category else category
    removed, secrets = [*content.removed, *cut], [*content.secrets, *kinds]
    tags = []
    for tag in fact.tags:
        bare, cut = strip_markup(tag)
        hidden = redact(bare)[1]
        removed += cut
        secrets += hidden
        if bare == tag and not hidden:
            tags.append(tag)
    notes = []
    if removed:
        what = " and ".join(dict.fromkeys(removed))
        notes.append(f"removed {what} (only `suzent verify-fact` records a person's verification)"
                     if "a verification stamp" in removed else f"removed {what}")
    if secrets:
        notes.append(f"redacted {describe(secrets)}")
    # The category and the tags too: the prompt hook shows the category, the dream names a page after it.
    reason = content.planted or planted("", tuple(tags), category)
    if reason and TAG not in tags:
        tags.append(TAG)
        notes.append(f"kept in the log but tagged `{TAG}`: it reads as a planted instruction ({reason}), so "
                     "it is left out of MEMORY.md, the vault and the hooks")
    if notes:
        shown = repr(_shown(content.text, 60)) if content.text else "a fact left empty by it (not captured)"
        warnings.append(f"{shown}: " + "; ".join(notes))
    return Fact(content=content.text, category=category, tags=tuple(tags))


def repair_input(data: bytes | str, warnings: list[str]) -> str:
    """Repair bad UTF-8 and NUL/control bytes of raw input, recording one warning per kind of repair."""
    text, found = repair(data)
    warnings.extend(found)
    return text


def write_facts(settings: Settings, facts: list[Fact], *, day: dt.date | None = None, time: str | None = None,
                session: str = "cli", warnings: list[str] | None = None, extractor: str | None = None,
                known_facts: int = 0, refresh: bool = True) -> CaptureResult:
    """Append ``facts`` as one entry to the log of ``day`` (default: settings.today) at ``time`` (default: the
    settings' clock, ``--now``/``SUZENT_NOW`` or the real one, as UTC ``HH:MM``).

    Facts are cleaned first; if none remain nothing is written and ``path`` is None. One locked, fsynced append;
    raises :class:`LockTimeout`/OSError with nothing written. A ``day`` before today is a *late* append: the
    appender records it in ``.state/late_lines.jsonl`` (under the log's lock, after the write) so the dream folds
    it even when the day is at or below its watermark; if that record cannot be written the fact stays written
    and a warning says so. ``refresh``: run the legacy MEMORY.md refresh (off for bulk writers).
    """
    warnings = list(warnings or [])
    day = day or settings.today
    time = parse_time(time) if time else settings.clock.strftime("%H:%M")
    cleaned = clean_facts(facts, warnings)
    session = archive.clean_session(session)
    result = CaptureResult(cleaned, day=day, time=time, session=session, extractor=extractor,
                           known_facts=known_facts, warnings=warnings)
    if cleaned:
        late = _late_recorder(settings, day, warnings) if day < settings.today else None

        def appended(from_line: int) -> None:
            result.from_line = from_line
            if late is not None:
                late(from_line)

        result.path = archive.append_entry(settings.paths.archive_dir, day, time, session, cleaned,
                                           timeout=settings.lock_timeout, on_appended=appended)
        if refresh:
            result.refresh = refresh_memory_md(settings, cleaned, warnings)
    return result


def fact_lines(result: CaptureResult) -> list[int | None]:
    """The 1-based log line of each written fact of ``result`` (in ``result.facts`` order): the entry's heading is
    the first ``## HH:MM — session`` at or after the line the appender started at, and the entry is one write, so
    its facts are the fact lines right after it. Nones when the log cannot be read back (the facts stay written)."""
    if result.path is None or result.from_line is None:
        return [None] * len(result.facts)
    try:
        lines = archive.read_text(result.path).split("\n")
    except OSError:
        return [None] * len(result.facts)
    heading = f"## {result.time} \u2014 {result.session}"
    for i in range(max(0, result.from_line - 1), len(lines)):
        if lines[i].rstrip() == heading:
            facts = [n + 1 for n in range(i + 1, len(lines)) if lines[n].startswith("- [")][: len(result.facts)]
            return facts + [None] * (len(result.facts) - len(facts))
    return [None] * len(result.facts)


def _late_recorder(settings: Settings, day: dt.date, warnings: list[str]) -> Callable[[int], None]:
    """The appender's callback for a late append to ``day``: record it for the dream, never fail the write."""
    from suzent_cli.vault.state import append_late_lines  # light

    def record(from_line: int) -> None:
        try:
            append_late_lines(settings.paths.state_dir, day, from_line, timeout=settings.lock_timeout)
        except Exception as exc:  # noqa: BLE001 - the fact is written; only its consolidation is at stake
            reason = describe(exc, 200)
            warnings.append(f"captured to {day.isoformat()}, but not recorded as a late line for the dream ({reason}):"
                            " if that day is already consolidated, the dream will not fold this fact")
    return record


def refresh_memory_md(settings: Settings, facts: list[Fact], warnings: list[str]) -> dict | None:
    """The legacy MEMORY.md refresh after a capture that logged a personal/preference/goal/interaction fact
    (:func:`suzent_cli.promote.legacy_refresh`; once the vault has a personal page, only the Recent section of
    the zone promote wrote is rebuilt). Best-effort:
    any failure is a warning and ``{"status": "failed"}``, never a failed capture. None when no fact qualifies."""
    from suzent_cli.promote import LEGACY_CATEGORIES, legacy_refresh  # light: no model, no API

    if not any(f.category.strip().lower() in LEGACY_CATEGORIES for f in facts):
        return None
    try:
        return legacy_refresh(settings)
    except Exception as exc:  # noqa: BLE001 - invariant 5: MEMORY.md never blocks a write
        reason = describe(exc, 200)
        warnings.append(f"captured, but MEMORY.md was not refreshed ({reason})")
        return {"status": "failed", "reason": reason, "path": None, "facts": 0}


KnownFacts = Callable[[str], list]  # text -> recalled rows (Hit) or plain strings


def _text_of(item) -> str:
    return item if isinstance(item, str) else str(item.content)


def scoped(facts: list[Fact], project_key: str | None, mode: str = "auto") -> list[Fact]:
    """``facts`` with their scope recorded (:mod:`suzent_cli.scope`): each gets the tag ``project:<key>`` of
    :func:`~suzent_cli.scope.scope_for` ``(category, project_key, mode)`` unless that is the person's (no tag). A
    fact that already names its project (a ``project:`` tag written by the person or an importer) keeps it. The
    entry points call this (CLI capture, the hooks, MCP ``remember``); :func:`write_facts` writes the tags it is
    given and never rescopes. Raises ValueError for an unknown ``mode``."""
    from suzent_cli.scope import SCOPE_TAG_PREFIX, scope_for, scope_tag

    out = []
    for fact in facts:
        if any(t.startswith(SCOPE_TAG_PREFIX) for t in fact.tags):
            out.append(fact)
            continue
        scope = scope_for(fact.category, project_key, mode)
        out.append(Fact(fact.content, fact.category, (*fact.tags, scope_tag(scope))) if scope else fact)
    return out


def extract_and_write(settings: Settings, turn_text: str, *, extractor_name: str | None = None,
                      known_facts: KnownFacts | None = None, day: dt.date | None = None, time: str | None = None,
                      session: str = "cli", warnings: list[str] | None = None, project_key: str | None = None,
                      scope_mode: str = "auto") -> CaptureResult:
    """Extract facts from a turn (see :func:`suzent_cli.capture.extract.turns.parse_turn`), classify them and write them
    (:func:`write_classified`).

    ``known_facts(text)`` returns the recall set: up to 10 nearest known rows (:class:`~suzent_cli.recall.Hit`, or
    plain strings, which the classifier never matches). It is called once; the claude prompt gets the texts and the
    classifier the rows. Any exception it raises is swallowed with a warning (no context, every fact ``new``).
    A turn whose messages the extractor reads hold more than ``capture.max_turn_chars`` characters is read from
    its newest part only (:mod:`suzent_cli.capture.extract.cut`: the newest messages whole, the oldest kept one
    from a sentence or line boundary), with one warning saying how much was skipped; the lookup and the extractor
    both see that part. ``turn_text`` itself is not changed or stored.
    When a model extractor raises :class:`ExtractionFailed` the offline extractor is used instead, with a
    warning. ``project_key``/``scope_mode``: the scope decision of the entry point (the project the turn was said
    in, None outside any; ``auto``/``global``/``project``), applied to every extracted fact (:func:`scoped`).
    Raises :class:`InputInvalid`, :class:`ExtractorUnavailable`.
    """
    from suzent_cli.capture.extract import choose_extractor
    from suzent_cli.capture.extract.cut import cut_turn, max_turn_chars, warning
    from suzent_cli.capture.extract.turns import parse_turn

    warnings = list(warnings or [])
    turn = _redacted(parse_turn(turn_text), warnings)
    extractor = choose_extractor(settings, extractor_name)
    warnings += list(getattr(extractor, "notes", None) or ())
    if time:
        parse_time(time)  # fail before anything is recorded
    limit = max_turn_chars(settings, warnings)
    cut = cut_turn(turn, limit, getattr(extractor, "reads", None))
    if cut.skipped:
        warnings.append(warning(cut, limit))
    turn = cut.turn
    recall_set: list = []
    texts: list[str] = []
    if known_facts is not None:
        try:
            recall_set = list(known_facts(turn.as_text()))[:KNOWN_FACTS]
            texts = [_text_of(item) for item in recall_set]
        except Exception as exc:  # noqa: BLE001 - invariant 5: enrichment never blocks a write
            recall_set, texts = [], []
            warnings.append(f"known-fact lookup skipped ({describe(exc, 180)})")
    known = texts if extractor.name != "offline" else []
    try:
        facts = extractor.extract(turn, known)
    except ExtractionFailed as exc:
        if extractor.name == "offline":
            raise
        from suzent_cli.capture.extract.offline import OfflineExtractor

        # A turn is never lost because the API is down: fall back to the rules, and say so.
        warnings.append(f"{extractor.name} extraction failed ({exc}); used the offline extractor".splitlines()[0])
        extractor, known = OfflineExtractor(), []
        facts = extractor.extract(turn, known)
    for run in getattr(extractor, "dropped", ()):  # a long run left out whole by the extractor's screen
        from suzent_cli.guard import planted_reason

        warnings.append(f"not captured: a run of {len(run):,} characters ({_shown(fold_line(run), 60)!r}) reads as a "
                        f"planted instruction ({planted_reason(run, limit=None)})")
    facts = scoped(_without_planted(facts, warnings), project_key, scope_mode)
    return write_classified(settings, facts, recall_set, day=day, time=time, session=session, warnings=warnings,
                            extractor=extractor.name, known_facts=len(known))


def _redacted(turn, warnings: list[str]):
    """``turn`` with every secret of every message redacted (:func:`suzent_cli.guard.redact`), before any extractor,
    lookup or API call sees it; one warning when something was."""
    from suzent_cli.capture.extract.turns import Message, Turn
    from suzent_cli.guard import describe, redact

    found: list[str] = []
    messages = []
    for m in turn.messages:
        text, kinds = redact(m.text)
        found += kinds
        messages.append(Message(m.role, text) if kinds else m)
    if not found:
        return turn
    warnings.append(f"redacted {describe(found)} in the turn before reading it")
    return Turn.of_split(messages)


def _without_planted(facts: list[Fact], warnings: list[str]) -> list[Fact]:
    """The extracted ``facts`` without those that read as planted instructions (:func:`suzent_cli.guard.planted`):
    text that tries to steer the agent is not the person's fact, so a turn's is not captured; one warning each."""
    from suzent_cli.guard import planted

    kept = []
    for f in facts:
        reason = planted(f.content, f.tags, f.category)
        if reason:
            warnings.append(f"not captured: {_shown(fold_line(f.content), 80)!r} reads as a planted instruction "
                            f"({reason})")
        else:
            kept.append(f)
    return kept


def write_classified(settings: Settings, facts: list[Fact], recall_set: list, *, day: dt.date | None = None,
                     time: str | None = None, session: str = "cli", warnings: list[str] | None = None,
                     extractor: str | None = None, known_facts: int = 0) -> CaptureResult:
    """Classify ``facts`` against ``recall_set`` (:func:`suzent_cli.capture.classify.classify_all`), record the
    confirmations in ``confirmations.jsonl`` and :func:`write_facts` the rest (revisions tagged ``revision``).

    Confirmations are recorded first, in one locked append; if that fails they are written to the log as new
    facts, with a warning. When every fact is a confirmation nothing is appended to the log (``path`` None).
    ``result.outcomes`` holds a :class:`~suzent_cli.capture.classify.Classification` per written fact,
    ``result.confirmations`` the ``(fact, classification)`` pairs recorded instead. Raises like
    :func:`write_facts` (the confirmations, if any, are then already recorded).
    """
    from suzent_cli.capture.classify import Classification, classify_all
    from suzent_cli.vault.state import append_confirmations

    warnings = list(warnings or [])
    day = day or settings.today
    session = archive.clean_session(session)
    cleaned = clean_facts(facts, warnings)
    outcomes = (classify_all(cleaned, recall_set) if recall_set
                else [Classification("new", reason="empty recall set") for _ in cleaned])
    confirmed = [(f, c) for f, c in zip(cleaned, outcomes, strict=False) if c.outcome == "confirmation"]
    if confirmed:
        stamp = dt.datetime.now(dt.UTC)  # ts: when recorded (unique, ordered); time: when it was said
        said = parse_time(time) if time else settings.clock.strftime("%H:%M")
        records = [{"ts": stamp.isoformat(), "day": day.isoformat(), "time": said, "content": f.content,
                    "category": f.category,
                    "matched": c.matched, "source": c.source, "locator": c.locator, "score": c.score,
                    "session": session} for f, c in confirmed]
        try:
            append_confirmations(settings.paths.state_dir, records, timeout=settings.lock_timeout)
        except Exception as exc:  # noqa: BLE001 - a restatement is logged rather than lost
            warnings.append(f"confirmations not recorded ({describe(exc, 150)}); the facts were logged instead")
            outcomes = [Classification("new", reason="confirmation not recorded") if c.outcome == "confirmation"
                        else c for c in outcomes]
            confirmed = []
    kept = [(_tagged(f) if c.outcome == "revision" else f, c)
            for f, c in zip(cleaned, outcomes, strict=False) if c.outcome != "confirmation"]
    result = write_facts(settings, [f for f, _ in kept], day=day, time=time, session=session, warnings=warnings,
                         extractor=extractor, known_facts=known_facts)
    result.outcomes = [c for _, c in kept]
    result.confirmations = confirmed
    return result


def _tagged(fact: Fact) -> Fact:
    return fact if "revision" in fact.tags else Fact(fact.content, fact.category, (*fact.tags, "revision"))


def forgotten_flags(settings: Settings, texts: list[str], warnings: list[str]) -> list[bool]:
    """For each fact text, whether a forget hides it: a person ran ``suzent forget`` on the same words, so the
    indexer's tombstone filter keeps its log line out of the index and recall's pending search (logged, never
    recalled; :meth:`suzent_cli.vault.forgotten.Forgotten.same`). No tombstone file: all False. A tombstone file
    that cannot be read adds a warning and flags none (the reindex then fails and says why)."""
    from suzent_cli.errors import SuzentError
    from suzent_cli.vault.forgotten import Forgotten
    from suzent_cli.vault.state import TOMBSTONES  # the capture path imports the state catalogue already

    if not texts or not (settings.paths.state_dir / TOMBSTONES).exists():
        return [False] * len(texts)

    try:
        forgotten = Forgotten.from_state(settings.paths.state_dir)
    except (SuzentError, OSError) as exc:
        warnings.append(f"cannot tell whether a forget hides what was captured ({describe(exc)})")
        return [False] * len(texts)
    return [forgotten.same(t) for t in texts]


HIDDEN_REASON = "hidden: these words were forgotten (suzent forget), so recall never shows them; the daily log keeps the line"


def index_after_capture(settings: Settings, path: Path):
    """Reindex the log just appended to (``capture --index``). Returns ``(IndexReport | None, warning | None)``.

    The facts are already durable when this runs, so an index failure (busy lock, other embedder, model missing)
    is reported as a warning, never as a failed capture.
    """
    from suzent_cli.errors import SuzentError
    from suzent_cli.index.api import reindex_files  # loads the embedder

    try:
        return reindex_files(settings, [path]), None
    except SuzentError as exc:
        return None, f"captured, but not indexed ({exc}); run `suzent index` later"


def resolve_day(settings: Settings, date_text: str | None) -> dt.date:
    return parse_date(date_text, "--date") if date_text else settings.today
