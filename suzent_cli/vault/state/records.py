"""The line-file machinery every ``.state/`` family shares: appending JSON lines (a torn last line closed first),
reading them through a validator, dropping the lines a consumer was shown, and the one quarantine.

``quarantine/<name>.jsonl`` keeps the records a reader refused (wrong types, absurd values, a torn line), one
``{"ts", "file", "reason", "record"}`` per line (``record``: the line as read). It is the one quarantine of every
state file: a reader that owns a file (:func:`read_jsonl`, :func:`~suzent_cli.vault.state.handoff.read_superseded`,
the tombstone reader, :mod:`suzent_cli.vault.dream_state`, :mod:`suzent_cli.hooks.capture`) moves its bad records
here with one warning and goes on with the rest: never silently dropped, never fatal (the tombstone reader alone
refuses the cases its module lists, where going on could bring forgotten text back).

Every reader validates what it reads (types, ranges). A read-only reader (``suzent status``) skips bad records; the
consuming reader (the dream) quarantines them. The file names and the state lock come from the catalogue
(:mod:`suzent_cli.vault.state`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suzent_cli.files import append_held, atomic_write, locked, read_text
from suzent_cli.vault.state import QUARANTINE, STATE_LOCK

MAX_LINE = 10**9  # no daily log has more lines: a larger line number is an absurd value, not a position


def torn_tail(path: Path) -> bool:
    """True when ``path`` is non-empty and does not end in a newline (a crash tore its last line). Reads 1 byte."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            if fh.tell() == 0:
                return False
            fh.seek(-1, 2)
            return fh.read(1) != b"\n"
    except FileNotFoundError:
        return False


def append_jsonl(state_dir: Path, name: str, records: list[dict], *, timeout: float) -> None:
    """Append ``records`` to ``<state_dir>/<name>`` as JSON lines: one locked, fsynced write (a torn last line
    left by a crash is closed first, so it never swallows the first new record)."""
    if not records:
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    with locked(state_dir / STATE_LOCK, timeout):
        path = state_dir / name
        torn = torn_tail(path)
        append_held(path, ("\n" if torn else "") + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


Validator = Callable[[Any], "dict | str"]  # a decoded JSON line → the record to use, or why it is bad


def int_in(value: Any, low: int, high: int) -> bool:
    """True for a real int (not a bool, not a float) with ``low <= value <= high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def iso_day(value: Any) -> str | None:
    """``value`` as a ``YYYY-MM-DD`` string when it is a string naming a real date, else None."""
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value.strip()[:10]).isoformat()
    except ValueError:
        return None


def iso_instant(value: Any) -> bool:
    """True for a non-empty string that parses as an ISO 8601 date-time."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def quarantine_path(state_dir: Path, name: str) -> Path:
    """Where :func:`quarantine` keeps the bad records of ``<state_dir>/<name>``: ``quarantine/<name>.jsonl``
    (``quarantine/tombstones.jsonl`` for ``tombstones.jsonl``)."""
    return state_dir / QUARANTINE / (name if name.endswith(".jsonl") else name + ".jsonl")


def quarantine(state_dir: Path, name: str, bad: list[tuple[str, str]]) -> str:
    """Append ``bad`` records of ``<state_dir>/<name>`` (``(record as read, reason)`` pairs) to
    ``<state_dir>/quarantine/<name>.jsonl`` as ``{"ts", "file", "reason", "record"}`` lines, and return the one
    warning line that says so ("" when ``bad`` is empty). The caller holds the lock of ``name``'s writers.
    Raises OSError (nothing is lost then: the caller leaves the records where they were)."""
    if not bad:
        return ""
    target = quarantine_path(state_dir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    ts = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    torn = torn_tail(target)
    append_held(target, ("\n" if torn else "") + "".join(
        json.dumps({"ts": ts, "file": name, "reason": reason, "record": raw}, ensure_ascii=False) + "\n"
        for raw, reason in bad))
    reasons = list(dict.fromkeys(reason for _, reason in bad))
    why = reasons[0] + (f"; and {len(reasons) - 1} other reason(s)" if len(reasons) > 1 else "")
    return (f"{name}: {len(bad)} bad record(s) moved to .state/{QUARANTINE}/{target.name} ({why}); "
            "the rest was used")


def check_line(line: str, validate: Validator) -> dict | str:
    """The validated record of one JSON line, or why it is bad."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return f"not JSON ({' '.join(str(exc).split())[:60]})"
    return validate(record)


def read_jsonl(state_dir: Path, name: str, validate: Validator, *, warnings: list[str] | None = None,
               timeout: float = 10.0) -> list[dict | None]:
    """Every non-blank line of ``<state_dir>/<name>`` decoded and passed through ``validate`` (which returns the
    record to use or a reason string). Missing file → ``[]``.

    Read-only (``warnings`` None, e.g. ``suzent status``): a bad line is ``None`` in the result, kept in the count
    so truncation by number of lines stays exact. Consuming (``warnings`` a list, the dream): bad lines are moved to
    :data:`QUARANTINE` (:func:`quarantine`) and removed from the file under the state lock, with one warning
    appended to ``warnings``; the result then holds only good records, one per line left in the file. If the
    quarantine cannot be written they stay (as ``None``), with a warning. Raises LockTimeout/OSError only when
    the file itself cannot be read or the lock taken."""
    path = state_dir / name
    if not path.is_file():
        return []
    checked = [(line, check_line(line, validate)) for line in read_text(path).split("\n") if line.strip()]
    if warnings is None or all(isinstance(r, dict) for _, r in checked):
        return [r if isinstance(r, dict) else None for _, r in checked]
    with locked(state_dir / STATE_LOCK, timeout):  # re-read: a writer may have appended since
        checked = [(line, check_line(line, validate)) for line in read_text(path).split("\n") if line.strip()]
        bad = [(line, r) for line, r in checked if isinstance(r, str)]
        try:
            warning = quarantine(state_dir, name, bad)
            atomic_write(path, "".join(line + "\n" for line, r in checked if isinstance(r, dict)))
        except OSError as exc:
            warnings.append(f"{name}: {len(bad)} bad record(s) skipped but left in place (the quarantine could "
                            f"not be written: {exc.strerror or exc})")
            return [r if isinstance(r, dict) else None for _, r in checked]
        warnings.append(warning)
        return [r for _, r in checked if isinstance(r, dict)]


def truncate_jsonl(state_dir: Path, name: str, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` non-blank lines of ``<state_dir>/<name>``; lines appended since survive. Atomic
    rewrite under the state lock. Returns the number dropped."""
    path = state_dir / name
    if shown <= 0 or not path.is_file():
        return 0
    with locked(state_dir / STATE_LOCK, timeout):
        lines = [line for line in read_text(path).split("\n") if line.strip()]
        atomic_write(path, "".join(line + "\n" for line in lines[shown:]))
        return min(shown, len(lines))
