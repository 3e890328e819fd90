"""Claude Code capture: the complete turns of a session's transcript that it has not captured yet.

Each complete turn (:mod:`.transcript`) goes through the configured extractor and the write-path classifier
(:func:`suzent_cli.capture.extract_and_write`) into the daily log of the turn's UTC date, under the heading
``HH:MM — <session_id[:8]>``.

Position per session, in ``<vault>/.state/claude_code.json`` (``{session_id: {"last_uuid", "offset", "last_ts",
"transcript", "updated"}}``, rewritten atomically under ``.state/.claude_code.lock``): recorded after each turn's
facts are appended, so a crash between the append and the record can capture that one turn twice, never lose it.
The next call starts after ``last_uuid`` (found at ``offset`` without rereading the file when it can). If the
entry is gone (the transcript was rewritten), the turns after ``last_ts`` are captured, with a warning. A session
seen for the first time starts after the newest entry already recorded for any session, so a resumed or forked
session whose transcript copies an earlier one's history does not capture it again. The caller holds the
session's lock (:func:`suzent_cli.hooks.spool.session_lock`) around :func:`capture_payload`, so two hooks of one
session never capture a turn twice.

Bad input never blocks a session: a session record of the wrong shape (a negative or absurd ``offset``, a
``last_uuid`` that is not a string, …) is moved to ``.state/quarantine/claude_code.json.jsonl`` with one warning
(the session then starts as a new one: turns may be captured twice, never lost); a turn whose timestamp is out of
range (year 99999, more than a day ahead of now) is captured as of now, and one whose line was not valid UTF-8 is
captured with U+FFFD for the bad bytes, each with one warning per call; a transcript line over
:data:`~suzent_cli.hooks.transcript.MAX_LINE_BYTES` is skipped unread, with one warning, and the turns around it
are captured. The capture stops between transcript chunks and between turns at its deadline or when its ``stop``
says so (nothing half-done is recorded: the next call goes on from the last recorded turn).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.hooks.transcript import (
    MAX_LINE_BYTES,
    Entry,
    Line,
    Payload,
    ReadStopped,
    TranscriptUnavailable,
    _timestamp,
    assemble,
    read_transcript,
)
from suzent_cli.vault.state import CLAUDE_CODE, CLAUDE_CODE_LOCK

STATE_FILE, STATE_LOCK = CLAUDE_CODE, CLAUDE_CODE_LOCK  # names from the catalogue (suzent_cli.vault.state)
MAX_OFFSET = 2**53  # no transcript is larger: a bigger offset is not a position
FUTURE_SLACK = dt.timedelta(days=1)  # a turn said more than this after now has a broken timestamp
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)  # nor was any turn said before this


# --- per-session position --------------------------------------------------------------------------------

def _state_path(settings: Settings) -> Path:
    return settings.paths.state_dir / STATE_FILE


_OPTIONAL_STR = ("last_uuid", "last_ts", "transcript", "updated")


def _bad_position(record: object) -> str | None:
    """Why a session's record cannot be used (None when it can)."""
    if not isinstance(record, dict):
        return "not an object"
    for key in _OPTIONAL_STR:
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{key} is not a string"
    offset = record.get("offset")
    if offset is not None and not (isinstance(offset, int) and not isinstance(offset, bool)
                                   and 0 <= offset <= MAX_OFFSET):
        return f"offset {str(offset)[:40]} is not a byte position"
    return None


def _split_positions(data: dict) -> tuple[dict, list[tuple[str, str]]]:
    """``(usable records, [(bad record as JSON, reason)])``."""
    good: dict = {}
    bad: list[tuple[str, str]] = []
    for sid, record in data.items():
        why = _bad_position(record)
        if why is None:
            good[sid] = record
        else:
            bad.append((json.dumps({sid: record}, ensure_ascii=False, default=str), f"session {sid[:8]}: {why}"))
    return good, bad


def _quarantine_positions(settings: Settings, bad: list[tuple[str, str]]) -> str:
    """Move ``bad`` records to the quarantine (the caller holds :data:`STATE_LOCK` and rewrites the file without
    them). Returns the warning."""
    from suzent_cli.vault.state import quarantine

    try:
        return quarantine(settings.paths.state_dir, STATE_FILE, bad) + ": those sessions start afresh"
    except OSError as exc:
        return (f"{STATE_FILE}: {len(bad)} bad session record(s) ignored ({bad[0][1]}); the quarantine could not "
                f"be written ({exc.strerror or exc})")


def read_positions(settings: Settings, warnings: list[str] | None = None) -> dict:
    """``claude_code.json`` (missing → ``{}``), each session's record validated. A file that does not parse is
    moved aside (``.corrupt-<stamp>``) with a warning and read as empty: turns may then be captured twice, never
    lost. A bad session record (:func:`_bad_position`) is left out; with ``warnings`` it is also moved to the
    quarantine under the state lock, with one warning."""
    data = _read_positions_file(settings, warnings)
    good, bad = _split_positions(data)
    if bad and warnings is not None:
        from suzent_cli.files import atomic_write, locked

        with locked(settings.paths.state_dir / STATE_LOCK, settings.lock_timeout):
            good, bad = _split_positions(_read_positions_file(settings, warnings))
            if bad:
                warnings.append(_quarantine_positions(settings, bad))
                atomic_write(_state_path(settings), json.dumps(good, ensure_ascii=False, indent=1, sort_keys=True)
                             + "\n")
    return good


def _read_positions_file(settings: Settings, warnings: list[str] | None) -> dict:
    path = _state_path(settings)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return data
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        aside = path.with_name(f"{path.name}.corrupt-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S%f}")
        try:
            os.replace(path, aside)
        except OSError:
            pass
        if warnings is not None:
            warnings.append(f"{path} did not parse ({exc}); moved to {aside.name}: turns may be captured twice")
        return {}


def record_position(settings: Settings, session_id: str, entry: Entry, transcript: Path) -> None:
    """Record ``entry`` as the last captured entry of ``session_id`` (atomic rewrite under the state lock)."""
    from suzent_cli.files import atomic_write, locked

    with locked(settings.paths.state_dir / STATE_LOCK, settings.lock_timeout):
        state, bad = _split_positions(_read_positions_file(settings, None))
        if bad:  # appeared since the caller read them: quarantined all the same, never silently dropped
            _quarantine_positions(settings, bad)
        state[session_id] = {
            "last_uuid": entry.uuid, "offset": entry.offset,
            "last_ts": entry.ts.isoformat().replace("+00:00", "Z") if entry.ts else None,
            "transcript": str(transcript),
            "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
        atomic_write(_state_path(settings), json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def _entries(lines: list[Line]) -> list[Entry]:
    """The entries of transcript ``lines`` (those that are part of a turn)."""
    return [line.entry for line in lines if line.entry is not None]


@dataclass
class NewEntries:
    """What :func:`new_entries` found after a session's recorded position: the ``entries``, whether the transcript
    ends ``partial`` (an unterminated line still being written), a ``warning`` (the recorded entry is gone, or lines
    over the length bound were skipped), or None."""

    entries: list[Entry]
    partial: bool
    warning: str | None = None


def new_entries(path: Path, session_id: str, positions: dict, *,
                stop: Callable[[], bool] | None = None) -> NewEntries:
    """The entries after the session's recorded position in the transcript at ``path`` (:class:`NewEntries`).
    ``stop``: as :func:`~suzent_cli.hooks.transcript.read_transcript`'s. Raises :class:`TranscriptUnavailable`,
    :class:`~suzent_cli.hooks.transcript.ReadStopped`."""
    record = positions.get(session_id) if isinstance(positions.get(session_id), dict) else None
    if record and record.get("transcript") == str(path) and isinstance(record.get("offset"), int):
        read = read_transcript(path, record["offset"], stop=stop)  # fast path: seek to the recorded line
        if read.lines and read.lines[0].uuid == record.get("last_uuid"):
            return NewEntries(_entries(read.lines[1:]), read.partial, _skipped(session_id, path, read.skipped))
    read = read_transcript(path, 0, stop=stop)
    lines, partial = read.lines, read.partial
    skipped = _skipped(session_id, path, read.skipped)
    if record and record.get("last_uuid"):
        idx = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].uuid == record["last_uuid"]), None)
        if idx is not None:
            return NewEntries(_entries(lines[idx + 1:]), partial, skipped)
        cutoff = _timestamp(record.get("last_ts")) or _timestamp(record.get("updated"))
        entries = [e for e in _entries(lines) if cutoff is None or e.ts is None or e.ts > cutoff]
        since = cutoff.isoformat().replace("+00:00", "Z") if cutoff else "the start"
        gone = (f"session {session_id[:8]}: the last captured entry is no longer in {path.name} (rewritten or "
                f"compacted?); capturing the turns after {since}")
        return NewEntries(entries, partial, "; ".join(w for w in (gone, skipped) if w))
    seen = {r.get("last_uuid") for r in positions.values()
            if isinstance(r, dict) and isinstance(r.get("last_uuid"), str)}
    if seen:  # a resumed/forked session that copies an earlier session's history: start after what was captured
        idx = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].uuid in seen), None)
        if idx is not None:
            return NewEntries(_entries(lines[idx + 1:]), partial, skipped)
    return NewEntries(_entries(lines), partial, skipped)


def _skipped(session_id: str, path: Path, offsets: list[int]) -> str | None:
    """The warning for transcript lines skipped for their length (None when there were none)."""
    if not offsets:
        return None
    return (f"session {session_id[:8]}: skipped {len(offsets)} line(s) of {path.name} longer than "
            f"{MAX_LINE_BYTES // (1 << 20)} MB (first at byte {offsets[0]}): no message is that large, their "
            "content is not captured")


def _sane_times(settings: Settings, entries: list[Entry]) -> None:
    """Drop each entry's timestamp that lies before 1970 or more than a day after now (the later of the real
    clock and ``settings.clock``): such a turn is captured as of now instead of into a daily log nobody reaches."""
    latest = max(dt.datetime.now(dt.UTC), settings.clock) + FUTURE_SLACK
    for e in entries:
        if e.ts is not None and not EPOCH <= e.ts <= latest:
            e.bad_ts, e.ts = e.ts.isoformat(), None


def _input_warnings(session_id: str, turns: list) -> list[str]:
    """One line for the turns captured with a replaced timestamp, one for those with undecodable bytes."""
    out: list[str] = []
    bad_ts = [t.user.bad_ts for t in turns if t.user.bad_ts]  # the user's message dates the turn
    if bad_ts:
        out.append(f"session {session_id[:8]}: {len(bad_ts)} turn(s) with a timestamp out of range ({bad_ts[0]!r}) "
                   "were captured as of now")
    mangled = sum(1 for t in turns if any(e.mangled for e in (t.user, *t.rest)))
    if mangled:
        out.append(f"session {session_id[:8]}: {mangled} turn(s) were not valid UTF-8 in the transcript; captured "
                   "with U+FFFD in place of the bad bytes")
    return out


# --- capture ---------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    turns: int = 0  # turns captured
    facts: int = 0  # fact lines written to daily logs
    finished: bool = True  # False: the deadline came before every complete turn was captured
    warnings: list[str] = field(default_factory=list)


def _known_facts(settings: Settings, scopes: tuple[str, ...] | None = None):
    """The recall set for the classifier: BM25 over the existing index (rows of ``scopes`` only: the person's and
    the session's project's), the store opened once per run."""
    cache: dict = {}

    def lookup(text: str) -> list:
        if "store" not in cache:
            from suzent_cli.index.store import ReadStore, table_exists  # lancedb only if an index exists

            cache["store"] = None
            if table_exists(settings.paths.index_dir):
                cache["store"] = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home)
        if cache["store"] is None:
            return []
        from suzent_cli.recall import Filters, search

        return search(cache["store"], None, text[:2000], mode="fts", limit=10, today=settings.today,
                      filters=Filters(scopes=scopes))

    return lookup


def transcript_path(payload: Payload) -> Path:
    path = Path(payload.transcript_path).expanduser()
    if not path.is_absolute() and payload.cwd:
        path = Path(payload.cwd) / path
    return path


def capture_payload(settings: Settings, payload: Payload, *, deadline: float | None = None,
                    extractor: str | None = None, progress: dict | None = None,
                    stop: Callable[[], bool] | None = None) -> Outcome:
    """Capture the complete turns of ``payload``'s transcript that its session has not captured yet, recording
    the position after each. The caller holds the session's lock. ``deadline`` (monotonic) and ``stop`` (a
    callable, e.g. "the server's client has gone"): once the deadline has passed or ``stop()`` is True, no turn is
    started and the transcript is read no further (``finished`` False; the turns left are captured by the next
    call). Each fact's scope: the setting ``capture.scope`` in the project of the payload's ``cwd`` (a scratch
    folder's: the project its transcript started in; :func:`suzent_cli.projects.capture_scope`). Raises
    :class:`TranscriptUnavailable`, and what capture raises."""
    from suzent_cli.capture import extract_and_write

    outcome = Outcome()
    path = transcript_path(payload)
    if not path.is_file():
        raise TranscriptUnavailable(f"transcript not found: {path}" if not path.exists()
                                    else f"transcript is not a file: {path}")
    positions = read_positions(settings, outcome.warnings)

    def halt() -> bool:
        return (deadline is not None and time.monotonic() >= deadline) or (stop is not None and stop())

    try:
        found = new_entries(path, payload.session_id, positions, stop=halt)
    except ReadStopped:  # nothing captured and nothing recorded: the payload stays for the next run
        outcome.finished = False
        return outcome
    entries, partial = found.entries, found.partial
    if found.warning:
        outcome.warnings.append(found.warning)
    _sane_times(settings, entries)
    final = payload.hook_event_name == "SessionEnd"
    ready = [t for t in assemble(entries) if t.complete(partial, final)]
    outcome.warnings.extend(_input_warnings(payload.session_id, ready))
    if progress is not None:
        progress["planned"] = progress.get("planned", 0) + len(ready)
    from suzent_cli.projects import capture_scope
    from suzent_cli.scope import scopes_for

    key, mode = capture_scope(settings, cwd=payload.cwd or None, warnings=outcome.warnings, transcript=path)
    known = _known_facts(settings, scopes_for(key))
    session = re.sub(r"\s+", "", payload.session_id)[:8] or "claude"
    for turn in ready:
        if halt():
            outcome.finished = False
            break
        result = extract_and_write(settings, turn.as_input(), extractor_name=extractor, known_facts=known,
                                   day=turn.day, time=turn.hhmm, session=session, project_key=key, scope_mode=mode)
        outcome.warnings.extend(w for w in result.warnings if w not in outcome.warnings)
        record_position(settings, payload.session_id, turn.last, path)
        outcome.turns += 1
        outcome.facts += len(result.facts)
        if progress is not None:
            progress["done"] = progress.get("done", 0) + 1
    return outcome
