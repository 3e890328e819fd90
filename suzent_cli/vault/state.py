"""Runner-owned state in ``notebook/.state/``: tombstones, the superseded hand-off and the recall log.

* ``tombstones.jsonl`` — ``{"content": <normalized text>, "reason": "forget"|"superseded"}`` per line (compat:
  the original app writes and reads ``content`` only; no reason means ``forget``). The only removal mechanism: a
  tombstoned text is never indexed, from any source. An unreadable file must never read as "no tombstones" (the
  next sweep would bring forgotten text back), so the reader decides per case:

  - ``.state`` is not a directory, the file is not a regular file (a directory, a dangling link), it cannot be
    read (permissions, I/O error), or it holds NUL bytes or bytes that are not UTF-8 (a crash or disk error
    damaged it: whole records may be gone): :class:`TombstonesUnreadable` — every reader refuses (``index``,
    ``run``, ``reconcile``, ``forget``, the dream and its follow-ups stop with one line naming the file; the
    index is not touched). ``capture`` and ``recall`` never read tombstones and keep working.
  - A torn last line (text after the last newline that is not a whole record): suzent appends each record in one
    fsynced write *before* it reindexes, so a torn line is a forget or reconcile that failed before it removed
    anything; but it could also be a recorded tombstone cut by a later truncation, and then its text would come
    back. So readers refuse (:class:`TombstonesUnreadable`) until the next ``forget``, which holds the state
    lock, moves the partial line to the quarantine (``quarantine/tombstones.jsonl``, :func:`quarantine`, as for
    every state file) with one warning: re-running the interrupted ``suzent forget`` repairs the file and records
    that tombstone whole.
  - A whole line that is not a usable record (not JSON, not an object, no non-empty ``content`` string) names no
    text, so it cannot hide one: it is quarantined (moved to ``quarantine/tombstones.jsonl`` under the state
    lock) with one warning on stderr, and the rest is read. A record whose ``reason`` is not
    ``forget``/``superseded`` counts as ``forget`` (the stricter), and a record followed by stray text counts too:
    either is rewritten as a clean record, its original line kept in the quarantine, with the same one warning.
    A leading UTF-8 BOM is ignored.
* ``superseded.txt`` — log fact lines a productive dream folded into vault pages, one per line exactly as in the
  log; appended by the dream runner (no line twice), consumed and truncated by reconcile.
* ``confirmations.jsonl`` — one JSON object per restatement the write-path classifier recognised instead of
  writing it to the log: ``{"ts", "day", "time", "content", "category", "matched", "source", "locator",
  "score", "session"}`` (``ts``: when recorded; ``day``/``time``: when it was said). Appended by capture, folded into claim markers by the dream, truncated by the number of lines
  the dream was shown.
* ``late_lines.jsonl`` — ``{"ts", "day", "from_line"}`` per append to a daily log dated before today (a
  ``capture --date`` backfill, a ``retire-legacy --export``): lines from ``from_line`` on of that day's log are
  new. The dream folds them even when the day is at or below its watermark, then truncates the records it folded.
* ``recall_log.jsonl`` — ``{"ts", "snippet", "source_type", "query"}`` per returned hit; best-effort.
* ``quarantine/<name>.jsonl`` — records a reader refused (wrong types, absurd values, a torn line), one
  ``{"ts", "file", "reason", "record"}`` per line (``record``: the line as read). The one quarantine of every
  state file: a reader that owns a file (:func:`read_jsonl`, :func:`read_superseded`, the tombstone reader,
  :mod:`suzent_cli.vault.dream_state`, :mod:`suzent_cli.hooks.capture`) moves its bad records here with one warning
  and goes on with the rest: never silently dropped, never fatal (the tombstone reader alone refuses the cases
  listed above, where going on could bring forgotten text back).

Every reader validates what it reads (types, ranges, :func:`valid_late_line`, :func:`valid_confirmation`). A
read-only reader (``suzent status``) skips bad records; the consuming reader (the dream) quarantines them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable

from suzent_cli.errors import SuzentError
from suzent_cli.files import append_held, append_locked, atomic_write, locked, read_text
from suzent_cli.text import normalize

TOMBSTONES = "tombstones.jsonl"
RECALL_LOG = "recall_log.jsonl"
SUPERSEDED = "superseded.txt"
CONFIRMATIONS = "confirmations.jsonl"
LATE_LINES = "late_lines.jsonl"
STATE_LOCK = ".state.lock"
QUARANTINE_TIMEOUT = 2.0  # seconds a reader waits for the state lock to move bad tombstone lines aside
QUARANTINE = "quarantine"
MAX_LINE = 10**9  # no daily log has more lines: a larger line number is an absurd value, not a position


FORGET, SUPERSEDED_REASON = "forget", "superseded"
_JSON = json.JSONDecoder()


class TombstonesUnreadable(SuzentError):
    """The tombstone file cannot be read whole (see the module doc): the caller refuses rather than bring forgotten
    text back. The message is one line naming the file, what is wrong and how to repair it (exit 1)."""


def _refuse(what: str, fix: str) -> TombstonesUnreadable:
    return TombstonesUnreadable(f"{what}; refusing to go on, or forgotten text could come back ({fix})")


def _tombstone_text(state_dir: Path) -> str | None:
    """The tombstone file's text, or None when there is none (no ``.state`` yet, or no file in it). Raises
    :class:`TombstonesUnreadable` for every case the module doc lists as unreadable."""
    path = state_dir / TOMBSTONES
    try:
        st = path.stat()
    except FileNotFoundError:
        if os.path.lexists(path):
            raise _refuse(f"{path} is a link to nothing", "point it at the tombstone file or restore it") from None
        return None
    except NotADirectoryError:
        raise _refuse(f"{state_dir} is not a directory, so the tombstones in it cannot be read",
                      "move that file aside and restore the .state directory") from None
    except OSError as exc:
        raise _refuse(f"cannot read {path}: {exc.strerror or exc}", "fix its permissions") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise _refuse(f"{path} is {kind}, not the tombstone file", "move it aside and put the file back from a backup")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _refuse(f"cannot read {path}: {exc.strerror or exc}", "fix its permissions") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise _refuse(f"{path} holds NUL bytes from byte {nul} (damaged by a crash or a disk error; "
                      "whole records may be lost)", "restore it from a backup, or delete the NUL bytes and check "
                      "that every forget is still listed")
    try:
        return data.decode("utf-8-sig")  # a BOM from an editor is no damage
    except UnicodeDecodeError as exc:
        raise _refuse(f"{path} holds bytes that are not UTF-8 at byte {exc.start} (damaged by a crash or a disk "
                      "error)", "restore it from a backup, or repair that line") from None


def _tombstone_record(line: str) -> tuple[str, str, bool] | None:
    """``(normalized text, reason, canonical)`` of one tombstone line, or None when it names no text. A reason
    other than ``forget``/``superseded`` counts as ``forget``, and a record followed by stray text still counts
    (``canonical`` False for both: the line is rewritten, its original quarantined)."""
    try:
        record, end = _JSON.raw_decode(line.strip())
    except ValueError:
        return None
    content = record.get("content") if isinstance(record, dict) else None
    key = normalize(content) if isinstance(content, str) else ""
    if not key:
        return None
    whole = end == len(line.strip())
    reason = record.get("reason")
    if reason in (FORGET, SUPERSEDED_REASON):
        return key, reason, whole
    return key, FORGET, whole and reason in (None, "")  # no reason: the original app's delete route


def _tombstone_records(state_dir: Path, *, held: bool = False, heal_torn: bool = False,
                       torn_ok: bool = False) -> list[tuple[str, str]]:
    """``(normalized text, reason)`` of every tombstone record; a line without a reason (the original app's delete
    route) counts as ``forget``. Raises :class:`TombstonesUnreadable` as the module doc says (a torn last line
    too, unless ``heal_torn``: then it is quarantined like a bad line; or ``torn_ok``: then it is left alone and
    read as no record). Bad lines are quarantined (:func:`quarantine`, ``quarantine/tombstones.jsonl``) with one
    warning on stderr (``held``: the caller holds the state lock already)."""
    text = _tombstone_text(state_dir)
    if text is None:
        return []
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends in a newline
    out, bad, rewritten, torn = [], [], [], []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _tombstone_record(line)
        if record is None:
            bad.append((n, line))
        else:
            out.append(record[:2])
            if not record[2]:
                rewritten.append((n, line))
    if tail.strip():
        record = _tombstone_record(tail)
        if record is not None:  # a whole record without its newline (a hand edit): fine
            out.append(record[:2])
            if not record[2]:
                rewritten.append((len(lines) + 1, tail))
        elif heal_torn:
            torn.append((len(lines) + 1, tail))
        elif not torn_ok:
            raise _refuse(f"{state_dir / TOMBSTONES}: its last line is incomplete (a forget or reconcile was "
                          "interrupted while recording it)", "run that `suzent forget` again: it moves the partial "
                          f"line to {quarantine_path(state_dir, TOMBSTONES)}")
    if bad or rewritten or torn:
        _quarantine(state_dir, text, out, bad + torn, rewritten, held=held, torn=bool(torn))
    return out


def _lines(lines: list[tuple[int, str]]) -> str:
    return "; ".join(f"line {n}: {line[:60]!r}" for n, line in lines[:3]) + (
        f"; {len(lines) - 3} more" if len(lines) > 3 else "")


def _quarantine(state_dir: Path, text: str, records: list[tuple[str, str]], bad: list[tuple[int, str]],
                rewritten: list[tuple[int, str]], *, held: bool, torn: bool = False) -> None:
    """Move the ``bad`` and ``rewritten`` lines (``(line number, text)``) of the tombstone file to the quarantine
    (:func:`quarantine`; ``torn``: the last of ``bad`` is a torn last line), then rewrite the file as ``records``
    (atomic), under the state lock, if the file still holds ``text``; one warning on stderr either way. Never
    raises: a file that cannot be rewritten now is left as it is (its bad lines are ignored, and warned about
    again on the next read)."""
    path = state_dir / TOMBSTONES
    what = "; ".join(part for part in (
        bad and f"{len(bad)} line(s) of {path} are not tombstone records ({_lines(bad)})",
        rewritten and f"{len(rewritten)} line(s) of {path} are kept as forget records ({_lines(rewritten)})") if part)
    try:
        with contextlib.nullcontext() if held else locked(state_dir / STATE_LOCK, QUARANTINE_TIMEOUT):
            if _tombstone_text(state_dir) != text:
                return  # changed meanwhile: the next read looks again
            reasons = ["not a tombstone record (names no text)"] * len(bad) + \
                ["kept as a forget record (rewritten clean)"] * len(rewritten)
            if torn:
                reasons[len(bad) - 1] = "an incomplete last line (an interrupted tombstone write)"
            quarantine(state_dir, TOMBSTONES, [(line.rstrip("\r"), why) for (_, line), why in
                                               zip(bad + rewritten, reasons)])
            atomic_write(path, "".join(json.dumps({"content": k, "reason": r}, ensure_ascii=False) + "\n"
                                       for k, r in records))
        done = f"the original lines are in {quarantine_path(state_dir, TOMBSTONES)}"
    except (SuzentError, OSError) as exc:
        done = f"left in place for now (could not rewrite the file: {exc})"
    print(f"warning: {what}; {done}", file=sys.stderr)


def read_tombstones(state_dir: Path, *, torn_ok: bool = False) -> frozenset[str]:
    """The set of normalized tombstoned texts, whatever the reason (missing file → empty; bad lines quarantined).
    The indexer keeps every one of them out of the index. Raises :class:`TombstonesUnreadable` (module doc);
    ``torn_ok``: see :func:`read_forgotten`."""
    return frozenset(k for k, _ in _tombstone_records(state_dir, torn_ok=torn_ok))


def read_forgotten(state_dir: Path, *, torn_ok: bool = False) -> frozenset[str]:
    """The texts the user asked to forget (reason ``forget``): kept out of the vault as well as the index. Texts
    retired because the dream folded them into a claim (reason ``superseded``) are not in this set: a later
    restatement still confirms the claim. Raises :class:`TombstonesUnreadable` (module doc); ``torn_ok`` reads a
    torn last line as no record instead (``forget``'s plan: its tombstone write then moves that line aside)."""
    return frozenset(k for k, reason in _tombstone_records(state_dir, torn_ok=torn_ok) if reason == FORGET)


def append_tombstones(state_dir: Path, texts: list[str], *, reason: str, timeout: float) -> list[str]:
    """Record tombstones for ``texts`` (normalized) with ``reason`` (``forget`` or ``superseded``); a text already
    recorded with that reason is skipped. Returns the normalized texts added.

    ``{"content": <normalized>, "reason": …}`` per line (the original app reads ``content`` only). The set is read
    and appended under the state lock, so concurrent writers never record one twice. The caller must then
    reindex every file that held one of them (tombstoning changes no file's mtime): only
    :mod:`suzent_cli.reconcile` and :mod:`suzent_cli.forget` call this, and both do. Raises LockTimeout/OSError
    with nothing written, and :class:`TombstonesUnreadable` for a file it cannot read whole (a ``forget`` write
    moves a torn last line aside instead: see the module doc).
    """
    keys = [k for k in dict.fromkeys(normalize(t) for t in texts) if k]
    if not keys:
        return []
    state_dir.mkdir(parents=True, exist_ok=True)
    with locked(state_dir / STATE_LOCK, timeout):
        # A person's forget repairs a torn last line (module doc); an automatic superseded write refuses on it.
        existing = set(_tombstone_records(state_dir, held=True, heal_torn=reason == FORGET))
        new = [k for k in keys if (k, reason) not in existing]
        if new:
            path = state_dir / TOMBSTONES
            torn = _torn(path)
            append_held(path, ("\n" if torn else "") + "".join(
                json.dumps({"content": k, "reason": reason}, ensure_ascii=False) + "\n" for k in new))
    return new


def append_recall_log(state_dir: Path, query: str, hits: list[dict], *, timeout: float = 2.0) -> None:
    """Best-effort: one JSON line per returned hit. Never raises (recall must not fail on its log)."""
    if not hits:
        return
    ts = dt.datetime.now(dt.timezone.utc).isoformat()
    record = "".join(
        json.dumps({"ts": ts, "snippet": h["content"][:160], "source_type": h.get("source_type", ""), "query": query[:160]},
                   ensure_ascii=False) + "\n"
        for h in hits
    )
    try:
        append_locked(state_dir / RECALL_LOG, record, lock_path=state_dir / STATE_LOCK, timeout=timeout)
    except Exception:  # noqa: BLE001 - best-effort by contract
        pass


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
    from suzent_cli.archive import parse_fact_line  # noqa: PLC0415 - archive imports this module's writers

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
            torn = _torn(path)
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


def purge_recall_log(state_dir: Path, key: str, *, timeout: float) -> int:
    """Drop every ``recall_log.jsonl`` line whose snippet holds the forgotten text ``key`` (a forgotten fact leaves no
    trace in runner state), by the one matcher (:meth:`suzent_cli.vault.forgotten.Forgotten.holds`: whole words, a text
    of 1-2 words only by equality), so forgetting "eovi" keeps "Uses neovim". Atomic rewrite under the state lock;
    returns the number of lines dropped."""
    from suzent_cli.vault.forgotten import Forgotten  # noqa: PLC0415 - forgotten reads tombstones from this module

    path = state_dir / RECALL_LOG
    only = Forgotten([key])
    if not only or not path.is_file():
        return 0
    with locked(state_dir / STATE_LOCK, timeout):
        kept, dropped = [], 0
        for line in read_text(path).splitlines():
            try:
                snippet = json.loads(line).get("snippet", "")
            except (ValueError, AttributeError, RecursionError):
                snippet = ""
            if isinstance(snippet, str) and only.holds(snippet):
                dropped += 1
            else:
                kept.append(line)
        if dropped:
            atomic_write(path, "".join(line + "\n" for line in kept))
        return dropped


def _torn(path: Path) -> bool:
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


def _append_jsonl(state_dir: Path, name: str, records: list[dict], *, timeout: float) -> None:
    """Append ``records`` to ``<state_dir>/<name>`` as JSON lines: one locked, fsynced write (a torn last line
    left by a crash is closed first, so it never swallows the first new record)."""
    if not records:
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    with locked(state_dir / STATE_LOCK, timeout):
        path = state_dir / name
        torn = _torn(path)
        append_held(path, ("\n" if torn else "") + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


Validator = Callable[[Any], "dict | str"]  # a decoded JSON line → the record to use, or why it is bad


def _int_in(value: Any, low: int, high: int) -> bool:
    """True for a real int (not a bool, not a float) with ``low <= value <= high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _iso_day(value: Any) -> str | None:
    """``value`` as a ``YYYY-MM-DD`` string when it is a string naming a real date, else None."""
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value.strip()[:10]).isoformat()
    except ValueError:
        return None


def _iso_instant(value: Any) -> bool:
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
    ts = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    torn = _torn(target)
    append_held(target, ("\n" if torn else "") + "".join(
        json.dumps({"ts": ts, "file": name, "reason": reason, "record": raw}, ensure_ascii=False) + "\n"
        for raw, reason in bad))
    reasons = list(dict.fromkeys(reason for _, reason in bad))
    why = reasons[0] + (f"; and {len(reasons) - 1} other reason(s)" if len(reasons) > 1 else "")
    return (f"{name}: {len(bad)} bad record(s) moved to .state/{QUARANTINE}/{target.name} ({why}); "
            "the rest was used")


def _check(line: str, validate: Validator) -> dict | str:
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
    checked = [(line, _check(line, validate)) for line in read_text(path).split("\n") if line.strip()]
    if warnings is None or all(isinstance(r, dict) for _, r in checked):
        return [r if isinstance(r, dict) else None for _, r in checked]
    with locked(state_dir / STATE_LOCK, timeout):  # re-read: a writer may have appended since
        checked = [(line, _check(line, validate)) for line in read_text(path).split("\n") if line.strip()]
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


def valid_late_line(record: Any) -> dict | str:
    """A ``late_lines.jsonl`` record normalized (``{"ts", "day", "from_line"}``), or why it is bad: ``day`` must
    name a date, ``from_line`` be an int from 1 to :data:`MAX_LINE`, ``ts`` (if present) a string."""
    if not isinstance(record, dict):
        return "not a JSON object"
    day = _iso_day(record.get("day"))
    if day is None:
        return f"day {str(record.get('day'))[:40]!r} is not a date"
    line = record.get("from_line")
    if not _int_in(line, 1, MAX_LINE):
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
    if _iso_day(record.get("day")) is None:
        return "day is not a date"
    if not _iso_instant(record.get("ts")):
        return "ts is not an ISO date-time"
    for key, types in _CONFIRMATION_OPTIONAL.items():
        value = record.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            return f"{key} has the wrong type"
    if isinstance(record.get("score"), float) and not math.isfinite(record["score"]):
        return "score is not a finite number"
    return record


def _truncate_jsonl(state_dir: Path, name: str, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` non-blank lines of ``<state_dir>/<name>``; lines appended since survive. Atomic
    rewrite under the state lock. Returns the number dropped."""
    path = state_dir / name
    if shown <= 0 or not path.is_file():
        return 0
    with locked(state_dir / STATE_LOCK, timeout):
        lines = [line for line in read_text(path).split("\n") if line.strip()]
        atomic_write(path, "".join(line + "\n" for line in lines[shown:]))
        return min(shown, len(lines))


def append_confirmations(state_dir: Path, records: list[dict], *, timeout: float) -> None:
    """Append confirmation ``records`` (see the module doc) as JSON lines, one locked fsynced write.
    Raises LockTimeout/OSError with nothing written."""
    _append_jsonl(state_dir, CONFIRMATIONS, records, timeout=timeout)


def read_confirmations(state_dir: Path, *, warnings: list[str] | None = None,
                       timeout: float = 10.0) -> list[dict | None]:
    """Every line of ``confirmations.jsonl`` in order, checked by :func:`valid_confirmation` (see
    :func:`read_jsonl`: read-only, a bad line is ``None``; with ``warnings``, bad lines are quarantined).
    Missing file → []."""
    return read_jsonl(state_dir, CONFIRMATIONS, valid_confirmation, warnings=warnings, timeout=timeout)


def truncate_confirmations(state_dir: Path, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` lines of ``confirmations.jsonl`` (the ones a dream was shown); lines appended
    since survive. Returns the number dropped."""
    return _truncate_jsonl(state_dir, CONFIRMATIONS, shown, timeout=timeout)


def append_late_lines(state_dir: Path, day: dt.date, from_line: int, *, timeout: float) -> None:
    """Record that the daily log of ``day`` (a day before today) grew from line ``from_line`` (1-based) on:
    ``{"ts", "day", "from_line"}`` appended to ``late_lines.jsonl``. The dream folds those lines even when ``day``
    is at or below its watermark. Called by the log appender while it still holds the log's lock, after the
    append (so a dream that sees the record also sees the lines). ``ts`` is the real clock (never ``--now``): it
    orders records for the dream's idempotency marker. Raises LockTimeout/OSError."""
    ts = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")
    _append_jsonl(state_dir, LATE_LINES, [{"ts": ts, "day": day.isoformat(), "from_line": int(from_line)}],
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


def truncate_late_lines(state_dir: Path, shown: int, *, timeout: float) -> int:
    """Drop the first ``shown`` records of ``late_lines.jsonl`` (the ones a dream folded). Returns the number
    dropped."""
    return _truncate_jsonl(state_dir, LATE_LINES, shown, timeout=timeout)
