"""The hand-offs between stages in ``.state/``: what one stage leaves for the next to fold or retire.

* ``superseded.txt`` — log fact lines a productive dream folded into vault pages, one per line exactly as in the
  log; appended by the dream runner (no line twice), consumed and truncated by reconcile.
* ``confirmations.jsonl`` — one JSON object per restatement the write-path classifier recognised instead of
  writing it to the log: ``{"ts", "day", "time", "content", "category", "matched", "source", "locator",
  "score", "session"}`` (``ts``: when recorded; ``day``/``time``: when it was said). Appended by capture, folded into claim markers by the dream, truncated by the number of lines
  the dream was shown.
* ``late_lines.jsonl`` — ``{"ts", "day", "from_line"}`` per append to a daily log dated before today (a
  ``capture --date`` backfill, a ``retire-legacy --export``): lines from ``from_line`` on of that day's log are
  new. The dream folds them even when the day is at or below its watermark, then truncates the records it folded.

Every line is appended in one locked, fsynced write (a torn last line left by a crash is closed first) and read
through a validator (:func:`valid_late_line`, :func:`valid_confirmation`, :func:`bad_superseded`); a consuming
reader moves bad records to the quarantine (:mod:`suzent_cli.vault.state.records`).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suzent_cli.archive import parse_fact_line
from suzent_cli.files import append_held, atomic_write, locked, read_text
from suzent_cli.vault.state import CONFIRMATIONS, LATE_LINES, STATE_LOCK, SUPERSEDED
from suzent_cli.vault.state.records import (
    MAX_LINE,
    append_jsonl,
    int_in,
    iso_day,
    iso_instant,
    quarantine,
    read_jsonl,
    torn_tail,
    truncate_jsonl,
)

MAX_FACT_LINE = 64 * 1024  # characters: no log fact line is longer (a longer "line" is a corrupt file)


def _superseded_lines(state_dir: Path) -> list[str]:
    """Every non-blank line of ``superseded.txt`` as it is (missing file → empty)."""
    path = state_dir / SUPERSEDED
    if not path.is_file():
        return []
    return [line for line in read_text(path).split("\n") if line.strip()]


def bad_superseded(line: str) -> str | None:
    """Why a ``superseded.txt`` line cannot be a log fact line a dream folded (None when it can be): NUL bytes,
    longer than :data:`MAX_FACT_LINE`, or not ``- [category] text``."""
    if "\x00" in line:
        return "holds NUL bytes"
    if len(line) > MAX_FACT_LINE:
        return f"longer than {MAX_FACT_LINE} characters"
    try:
        return None if parse_fact_line(line) else "not a log fact line"
    except RecursionError:
        return "not a log fact line"


def read_superseded(state_dir: Path, *, warnings: list[str] | None = None, timeout: float = 10.0) -> list[str]:
    """The pending superseded hand-off lines that can be log fact lines (:func:`bad_superseded`), in order
    (missing file → empty; blank lines skipped). Read-only (``warnings`` None): bad lines are skipped and stay.
    Consuming (reconcile passes ``warnings``): bad lines are moved to :data:`QUARANTINE` under the state lock, with
    one warning."""
    lines = _superseded_lines(state_dir)
    good = [line for line in lines if bad_superseded(line) is None]
    if warnings is None or len(good) == len(lines):
        return good
    with locked(state_dir / STATE_LOCK, timeout):
        lines = _superseded_lines(state_dir)
        bad = [(line, why) for line in lines if (why := bad_superseded(line))]
        good = [line for line in lines if bad_superseded(line) is None]
        try:
            warnings.append(quarantine(state_dir, SUPERSEDED, bad))
            atomic_write(state_dir / SUPERSEDED, "".join(line + "\n" for line in good))
        except OSError as exc:
            warnings.append(f"{SUPERSEDED}: {len(bad)} bad line(s) skipped but left in place (the quarantine "
                            f"could not be written: {exc.strerror or exc})")
    return good


def append_superseded(state_dir: Path, lines: list[str], *, timeout: float) -> int:
    """Append ``lines`` (raw log lines; newlines folded out) to ``superseded.txt``, skipping any already pending.

    Read and append happen under the state lock, so concurrent writers never duplicate a line. A crash leaves
    at worst the last line torn; reconcile skips a line that matches no log fact. Returns the number appended.
    Raises LockTimeout/OSError with nothing written.
    """
    wanted = [" ".join(line.replace("\r", " ").split("\n")).rstrip() for line in lines]
    wanted = [w for w in dict.fromkeys(wanted) if w.strip()]
    if not wanted:
        return 0
    state_dir.mkdir(parents=True, exist_ok=True)
    with locked(state_dir / STATE_LOCK, timeout):
        pending = set(_superseded_lines(state_dir))
        new = [w for w in wanted if w not in pending]
        if new:
            path = state_dir / SUPERSEDED
            torn = torn_tail(path)
            append_held(path, ("\n" if torn else "") + "".join(w + "\n" for w in new))
    return len(new)


def truncate_superseded(state_dir: Path, processed: list[str], *, timeout: float) -> int:
    """Remove ``processed`` (lines returned by an earlier :func:`read_superseded`) from ``superseded.txt``.

    Only those lines go: lines appended since they were read survive. Normally they are the file's prefix; if
    not, each processed line's first occurrence is removed. Atomic rewrite under the state lock (a crash leaves
    the old or the new file). Returns the number of lines removed.
    """
    path = state_dir / SUPERSEDED
    if not processed or not path.is_file():
        return 0
    with locked(state_dir / STATE_LOCK, timeout):
        current = _superseded_lines(state_dir)  # bad lines too: they stay until a consuming read quarantines them
        if current[: len(processed)] == processed:
            rest = current[len(processed):]
        else:
            rest = list(current)
            for line in processed:
                if line in rest:
                    rest.remove(line)
        atomic_write(path, "".join(line + "\n" for line in rest))
        return len(current) - len(rest)


def valid_late_line(record: Any) -> dict | str:
    """A ``late_lines.jsonl`` record normalized (``{"ts", "day", "from_line"}``), or why it is bad: ``day`` must
    name a date, ``from_line`` be an int from 1 to :data:`MAX_LINE`, ``ts`` (if present) a string."""
    if not isinstance(record, dict):
        return "not a JSON object"
    day = iso_day(record.get("day"))
    if day is None:
        return f"day {str(record.get('day'))[:40]!r} is not a date"
    line = record.get("from_line")
    if not int_in(line, 1, MAX_LINE):
        return f"from_line {str(line)[:40]!r} is not a line number (1..{MAX_LINE})"
    ts = record.get("ts", "")
    if not isinstance(ts, str):
        return "ts is not a string"
    return {"ts": ts, "day": day, "from_line": line}


_CONFIRMATION_OPTIONAL = {"time": (str,), "matched": (str,), "source": (str,), "locator": (int, str),
                          "score": (int, float), "session": (str,)}


def valid_confirmation(record: Any) -> dict | str:
    """A ``confirmations.jsonl`` record, or why it is bad: ``content`` and ``category`` non-empty strings, ``day``
    a date, ``ts`` an ISO date-time; the optional fields (``time``, ``matched``, ``source``, ``locator``,
    ``score``, ``session``) null or of their type (``score`` finite)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for key in ("content", "category"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            return f"{key} is not a non-empty string"
    if iso_day(record.get("day")) is None:
        return "day is not a date"
    if not iso_instant(record.get("ts")):
        return "ts is not an ISO date-time"
    for key, types in _CONFIRMATION_OPTIONAL.items():
        value = record.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            return f"{key} has the wrong type"
    if isinstance(record.get("score"), float) and not math.isfinite(record["score"]):
        return "score is not a finite number"
    return record


def append_confirmations(state_dir: Path, records: list[dict], *, timeout: float) -> None:
    """Append confirmation ``records`` (see the module doc) as JSON lines, one locked fsynced write.
    Raises LockTimeout/OSError with nothing written."""
    append_jsonl(state_dir, CONFIRMATIONS, records, timeout=timeout)


def read_confirmations(state_dir: Path, *, warnings: list[str] | None = None,
                       timeout: float = 10.0) -> list[dict | None]:
    """Every line of ``confirmations.jsonl`` in order, checked by :func:`valid_confirmation` (see
    :func:`read_jsonl`: read-only, a bad line is ``None``; with ``warnings``, bad lines are quarantined).
    Missing file → []."""
    return read_jsonl(state_dir, CONFIRMATIONS, valid_confirmation, warnings=warnings, timeout=timeout)


def truncate_confirmations(state_dir: Path, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` lines of ``confirmations.jsonl`` (the ones a dream was shown); lines appended
    since survive. Returns the number dropped."""
    return truncate_jsonl(state_dir, CONFIRMATIONS, shown, timeout=timeout)


def append_late_lines(state_dir: Path, day: dt.date, from_line: int, *, timeout: float) -> None:
    """Record that the daily log of ``day`` (a day before today) grew from line ``from_line`` (1-based) on:
    ``{"ts", "day", "from_line"}`` appended to ``late_lines.jsonl``. The dream folds those lines even when ``day``
    is at or below its watermark. Called by the log appender while it still holds the log's lock, after the
    append (so a dream that sees the record also sees the lines). ``ts`` is the real clock (never ``--now``): it
    orders records for the dream's idempotency marker. Raises LockTimeout/OSError."""
    ts = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
    append_jsonl(state_dir, LATE_LINES, [{"ts": ts, "day": day.isoformat(), "from_line": int(from_line)}],
                  timeout=timeout)


def read_late_lines(state_dir: Path, *, warnings: list[str] | None = None, timeout: float = 10.0,
                    log_exists: Callable[[dt.date], bool] | None = None) -> list[dict | None]:
    """Every record of ``late_lines.jsonl`` in order, checked by :func:`valid_late_line` (see :func:`read_jsonl`:
    read-only, a bad record is ``None``, kept for exact truncation; with ``warnings``, bad records are
    quarantined). ``log_exists(day)``: when given, a record whose daily log is gone (moved away, deleted) is bad
    too — it names lines nobody can read."""
    def check(record: Any) -> dict | str:
        good = valid_late_line(record)
        if isinstance(good, dict) and log_exists is not None and not log_exists(dt.date.fromisoformat(good["day"])):
            return f"the daily log of {good['day']} is gone"
        return good

    return read_jsonl(state_dir, LATE_LINES, check, warnings=warnings, timeout=timeout)


def late_days(records: list[dict | None], watermark: dt.date | None, today: dt.date,
              read: dict[str, int] | None = None) -> dict[dt.date, int]:
    """``{day: first new line}`` of the ``late_lines.jsonl`` records (the dream's pending late lines, which
    promote also shows as not yet consolidated) about days at or below ``watermark`` and
    before ``today`` (records about later days are covered by the ordinary pending logs). ``read``: lines of each
    log the last productive run already read (``dream_state.logs_read``); those are not new. Malformed records
    are ignored."""
    out: dict[dt.date, int] = {}
    if watermark is None:
        return out
    for record in records:
        try:
            day = dt.date.fromisoformat(str(record["day"]))  # type: ignore[index]
            line = int(record["from_line"])  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            continue
        if day <= watermark and day < today:
            line = max(line, 1, (read or {}).get(day.isoformat(), 0) + 1)
            out[day] = min(out.get(day, line), line)
    return dict(sorted(out.items()))


def truncate_late_lines(state_dir: Path, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` records of ``late_lines.jsonl`` (the ones a dream folded). Returns the number
    dropped."""
    return truncate_jsonl(state_dir, LATE_LINES, shown, timeout=timeout)
