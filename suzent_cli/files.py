"""The one place that appends to and atomically rewrites files, under file locks.

Crash and concurrency contract:

* :func:`append_locked` takes an exclusive :mod:`filelock` lock, writes the whole record with a single
  ``write(2)`` on an ``O_APPEND`` descriptor, then ``fsync``\\ s the file (and the directory when the file was
  created). Concurrent appenders serialize on the lock, so records never interleave; a crash can at worst leave
  the *last* record torn, never an earlier one. A write or fsync that fails (a full disk) is
  rolled back under the lock: the file is truncated to its size before the append, so no partial record stays.
* :func:`atomic_write` writes a temp file in the same directory, fsyncs it, then ``os.replace``\\ s it over the
  target: readers see the old or the new file, never a half-written one.
* :func:`update_file` is the one read-merge-replace loop for a file people also edit (without our lock): the merge
  is redone from what is on disk whenever the file changed between our read and our rename, and an append that
  lands meanwhile is carried over instead of costing a round.

Modes (the policy is :mod:`suzent_cli.privacy`'s): every file created here is made with
:data:`~suzent_cli.privacy.FILE_MODE` (0600; the umask can only narrow it), a file :func:`atomic_write_bytes`
replaces keeps its owner's bits and loses any group or other bit (:func:`~suzent_cli.privacy.replaced_mode`), and
every lock file is made 0600 (:func:`file_lock`). Appending never changes a file's mode.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from suzent_cli.errors import InputInvalid, LockTimeout
from suzent_cli.privacy import FILE_MODE, replaced_mode


def file_lock(lock_path: Path | str, timeout: float) -> FileLock:
    """The one constructor of suzent's :class:`filelock.FileLock`\\ s (not acquired): its lock file, when made, is
    0600 (:data:`~suzent_cli.privacy.FILE_MODE`). filelock 4.x makes it under the umask unless given a mode; 3.x
    chmods it to its ``mode`` (default 0644) on every acquire, whatever the umask: hence the explicit mode."""
    return FileLock(str(lock_path), timeout=timeout, mode=FILE_MODE)


@contextlib.contextmanager
def locked(lock_path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive inter-process lock on ``lock_path`` (created if missing, mode 0600).

    Raises :class:`LockTimeout` after ``timeout`` seconds; nothing guarded by the lock has run then.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = file_lock(lock_path, timeout)
    try:
        lock.acquire()
    except Timeout:
        raise LockTimeout(f"could not lock {lock_path} within {timeout:g}s (another suzent process holds it)") from None
    try:
        yield
    finally:
        lock.release()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_locked(path: Path, record: str, *, lock_path: Path, timeout: float, header: str = "") -> bool:
    """Append ``record`` to ``path`` as one write, under ``lock_path``; prefix ``header`` if the file is empty.

    Returns True if this call created the file (or found it empty and wrote the header). Raises
    :class:`LockTimeout` or ``OSError``; on either, the file is as it was (see :func:`append_held`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(lock_path, timeout):
        return append_held(path, record, header=header)


def append_held(path: Path, record: str | bytes, *, header: str = "") -> bool:
    """:func:`append_locked` for a caller that already holds the file's lock (e.g. to read before appending).

    A failed append leaves no trace: when a write or the fsync raises (a full disk: ``ENOSPC`` after a partial
    write; or an interrupt between two writes), the file is truncated back to its size before the append (a file
    this call created is removed), so a torn record can never be completed by the next append into a line nobody
    wrote. The exception is re-raised; if the roll-back itself fails, its reason is added to the error's notes.
    """
    # a record that cannot be encoded fails here, before the file is touched, as one line (never a traceback): the
    # callers repair their text first (archive.Fact.clean), so this is the safety net. Bytes are written as they are
    # (a sync carrying another machine's bytes exactly)
    try:
        data_record = record if isinstance(record, bytes) else record.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputInvalid(f"{path.name}: not appended: the record holds a character UTF-8 cannot hold "
                           f"(U+{ord(exc.object[exc.start]):04X} at {exc.start}); nothing written") from None
    existed = path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    size = 0
    try:
        size = os.fstat(fd).st_size
        fresh = size == 0
        data = (header.encode("utf-8") if fresh else b"") + data_record
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except BaseException as exc:  # ENOSPC/EIO above all; an interrupt mid-record must not leave half of it
            _roll_back(path, fd, size, created=not existed, error=exc)
            raise
    finally:
        os.close(fd)
    if fresh:
        _fsync_dir(path.parent)
    return fresh


def _roll_back(path: Path, fd: int, size: int, *, created: bool, error: BaseException) -> None:
    """Undo a failed append on ``fd``: truncate to ``size`` (or remove a file the append created); never raises."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
        if created and size == 0:
            os.unlink(path)
    except OSError as undo:
        error.add_note(f"and {path} could not be truncated back to {size} bytes ({undo.strerror or undo})")


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically: temp file, fsync, rename, fsync of the directory."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes, *, before_replace: Callable[[], bool] | None = None) -> bool:
    """Replace ``path`` with ``data`` atomically: temp file, fsync, rename, fsync of the directory. The new file is
    0600, or, over an existing file, that file's owner bits with read and write, never a group or other bit
    (:func:`~suzent_cli.privacy.replaced_mode`). ``before_replace`` runs after the temp file is durable and just
    before the rename; if it returns False the temp file is removed, ``path`` is left as it is and False is returned (the
    caller re-reads and retries). True when ``path`` was replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:  # mkstemp makes 0600; a replaced file keeps its owner's bits (0700 stays 0700), never group/other
            old = path.stat().st_mode
        except OSError:
            old = None
        if replaced_mode(old) != FILE_MODE:
            with contextlib.suppress(OSError):  # a file system without modes: the 0600 of mkstemp stays
                os.fchmod(fd, replaced_mode(old))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if before_replace is not None and not before_replace():
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return True


def read_bytes_or_none(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist (OSError for any other failure)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


MIN_ATTEMPTS = 5  # merge rounds update_file tries before giving up, however short the timeout
MAX_BACKOFF = 0.25  # seconds: the longest pause between two merge rounds
_clock = time.monotonic  # the retry deadline's clock (tests replace it)

Merge = Callable[[bytes | None], bytes | None]  # current bytes (None: no file) → new bytes, or None to leave it


def update_file(path: Path, merge: Merge, *, lock_path: Path, timeout: float,
                before: Callable[[], None] | None = None, carry_appends: bool = False) -> tuple[str, bytes | None]:
    """Rewrite ``path`` to ``merge(current bytes)`` under ``lock_path``, never over an edit made meanwhile: the one
    read-merge-replace loop for files people and agents also edit without our lock (vault pages, ``index.md``,
    MEMORY.md).

    ``merge`` gets the file's bytes (None when it does not exist) and returns the new bytes, or None to leave the
    file alone; it may run more than once (on each version of the file it is shown), and may raise to stop the
    update (nothing is written then). ``before`` runs first, under the lock. Returns ``("left" | "unchanged" |
    "written", final bytes)``; the caller holds no lock after.

    Writers holding ``lock_path`` serialize. Just before the atomic rename the file is read again, and after the
    rename the replaced file is read once more through a descriptor opened at that check (an in-place edit may land
    in it during the rename). A change makes us merge again from the new bytes (a rewrite, a save by rename, an
    append), after a jittered exponential backoff, until ``timeout`` seconds have passed and at least
    :data:`MIN_ATTEMPTS` rounds were tried.

    ``carry_appends`` (MEMORY.md, whose manual zone people append to all day): a change that only appends to what we
    merged from, when ``merge`` copies the append through (``merge(x + s) == merge(x) + s``), costs no round: the
    rename goes ahead, and everything appended to the replaced file (before the check or during the rename) is
    appended to the new file in place (fsynced), outside the check-to-rename window, so no appender, however steady,
    can starve the writer. ``merge`` then runs once more on each such version to check that it copies the append.
    Without it (vault pages, whose merge refolds) every change costs a round.

    What remains is a window of microseconds: a writer that renames its own copy between our last check and our
    rename, or keeps writing to a descriptor of the replaced file after our final re-read.

    Raises :class:`LockTimeout` (lock not taken within ``timeout``, or the file kept changing: nothing written by
    the last round), ``OSError``, or what ``merge`` raises.
    """
    with locked(lock_path, timeout):
        if before is not None:
            before()
        deadline = _clock() + timeout
        expected = source = read_bytes_or_none(path)
        attempt = 0
        while True:
            if attempt:
                if attempt >= MIN_ATTEMPTS and _clock() >= deadline:
                    raise LockTimeout(f"{path} kept changing during {attempt} attempts over {timeout:g}s to update "
                                      "it; try again")
                _backoff(attempt, deadline)
            attempt += 1
            new = merge(source)
            if new is None:
                return "left", source
            if new == source and source == expected:
                return "unchanged", new
            done, expected, source = _replace(path, merge if carry_appends else None, new, source, expected)
            if done is not None:
                return "written", done


def _backoff(attempt: int, deadline: float) -> None:
    """Sleep before merge round ``attempt`` (1, 2, …): exponential up to :data:`MAX_BACKOFF`, full jitter (so a
    periodic editor cannot stay in phase with us), never past ``deadline``."""
    cap = min(MAX_BACKOFF, 0.005 * 2 ** min(attempt, 16))
    time.sleep(max(0.0, min(random.uniform(0, cap), deadline - _clock())))


def _appended(before: bytes | None, now: bytes | None) -> bytes | None:
    """The bytes ``now`` adds when it is ``before`` plus a non-empty suffix (a pure append), else None."""
    if before is None or now is None or len(now) <= len(before) or not now.startswith(before):
        return None
    return now[len(before):]


def _open(path: Path):
    try:
        return open(path, "rb")  # the caller keeps it to re-read the replaced file
    except FileNotFoundError:
        return None


def _replace(path: Path, merge: Merge | None, new: bytes, source: bytes | None,
             expected: bytes | None) -> tuple[bytes | None, bytes | None, bytes | None]:
    """One round's rename of ``new`` (merged from ``source``; ``expected``: the bytes on disk we merged from).
    ``(final bytes, _, _)`` when written; ``(None, expected, source)`` for another merge round. ``merge``: given
    when appends may be carried over (``update_file``'s ``carry_appends``), else None."""

    def carried(now: bytes | None) -> bytes | None:
        """What ``now`` appended to ``expected``, when that can be carried over by appending it to ``new``."""
        tail = _appended(expected, now) if merge is not None and source == expected else None
        return tail if tail is not None and merge(now) == new + tail else None

    seen: dict = {}

    def check() -> bool:  # just before the rename: the file is what we merged from, or that plus an append
        fh = _open(path)
        try:
            now = fh.read() if fh is not None else None
            if now == expected or carried(now) is not None:
                seen["fh"], fh = fh, None  # the file being replaced: read again after the rename
                return True
        finally:
            if fh is not None:
                fh.close()
        seen["now"] = now
        return False

    try:
        replaced = atomic_write_bytes(path, new, before_replace=check)
    except BaseException:
        if seen.get("fh") is not None:
            seen["fh"].close()
        raise
    if not replaced:
        return None, seen["now"], seen["now"]  # edited while we merged: merge again from what is there now
    fh = seen.get("fh")
    if fh is None:
        return new, None, None
    try:
        return _carry_over(path, fh, expected, new, carried)
    finally:
        fh.close()


def _carry_over(path: Path, fh, expected: bytes | None, new: bytes,
                carried: Callable[[bytes | None], bytes | None]) -> tuple[bytes | None, bytes | None, bytes | None]:
    """After our rename: bring what landed in the replaced file (read through ``fh``) into the new one.
    ``(final bytes, _, _)`` when done; ``(None, expected, source)`` for another merge round (an edit that was not
    a pure append, or a file that is no longer ours)."""
    copied = 0
    while True:
        fh.seek(0)
        late = fh.read()
        if late == expected and not copied:
            return new, None, None
        tail = carried(late)
        if tail is None:
            return None, new, late  # an in-place rewrite of the replaced file: merge it in by another round
        if len(tail) == copied:
            return read_bytes_or_none(path), None, None  # the replaced file stopped growing: all of it carried over
        with open(path, "r+b") as out:
            now = out.read()
            if not now.startswith(new):  # appends after it (the editor's own, now to this file) are fine
                return None, now, now  # replaced or rewritten since our rename: merge again from what is there
            out.seek(0, 2)
            out.write(tail[copied:])
            out.flush()
            os.fsync(out.fileno())
        copied = len(tail)


def write_if_absent(path: Path, text: str) -> bool:
    """Create ``path`` (mode 0600) with ``text`` unless it exists (O_EXCL, so a concurrent creator wins). True if
    created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def read_text(path: Path) -> str:
    """Read ``path`` as UTF-8, replacing undecodable bytes (never raises on bad bytes; OSError if unreadable)."""
    return path.read_bytes().decode("utf-8", errors="replace")
