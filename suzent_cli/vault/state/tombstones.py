"""``tombstones.jsonl``: ``{"content": <normalized text>, "reason": "forget"|"superseded"}`` per line (compat:
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
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from pathlib import Path

from suzent_cli.errors import SuzentError
from suzent_cli.files import append_held, atomic_write, locked
from suzent_cli.text import normalize
from suzent_cli.vault.state import STATE_LOCK, TOMBSTONES
from suzent_cli.vault.state.records import quarantine, quarantine_path, torn_tail

QUARANTINE_TIMEOUT = 2.0  # seconds a reader waits for the state lock to move bad tombstone lines aside
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
                                               zip(bad + rewritten, reasons, strict=False)])
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
            torn = torn_tail(path)
            append_held(path, ("\n" if torn else "") + "".join(
                json.dumps({"content": k, "reason": reason}, ensure_ascii=False) + "\n" for k in new))
    return new
