"""The one place that appends to and atomically rewrites files, under file locks.

Crash and concurrency contract:

* :func:`append_locked` takes an exclusive :mod:`filelock` lock, writes the whole record with a single
  ``write(2)`` on an ``O_APPEND`` descriptor, then ``fsync``\\ s the file (and the directory when the file was
  created). Concurrent appenders serialize on the lock, so records never interleave; a crash can at worst leave
  the *last* record torn, never an earlier one. A write or fsync that fails (a full disk) is
  rolled back under the lock: the file is truncated to its size before the append, so no partial record stays.
* :func:`atomic_write` writes a temp file in the same directory, fsyncs it, then ``os.replace``\\ s it over the
  target: readers see the old or the new file, never a half-written one.
* :func:`update_file` is the read-merge-replace loop for a file people also edit (without our lock): the merge is
  redone from what is on disk whenever the file changed between our read and our rename.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock, Timeout

from suzent_cli.errors import LockTimeout


@contextlib.contextmanager
def locked(lock_path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive inter-process lock on ``lock_path`` (created if missing).

    Raises :class:`LockTimeout` after ``timeout`` seconds; nothing guarded by the lock has run then.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout)
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


def append_held(path: Path, record: str, *, header: str = "") -> bool:
    """:func:`append_locked` for a caller that already holds the file's lock (e.g. to read before appending).

    A failed append leaves no trace: when a write or the fsync raises (a full disk: ``ENOSPC`` after a partial
    write; or an interrupt between two writes), the file is truncated back to its size before the append (a file
    this call created is removed), so a torn record can never be completed by the next append into a line nobody
    wrote. The exception is re-raised; if the roll-back itself fails, its reason is added to the error's notes.
    """
    data_record = record.encode("utf-8")  # a record that cannot be encoded fails here, before the file is touched
    existed = path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
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
    """Replace ``path`` with ``data`` atomically: temp file (the old file's mode), fsync, rename, fsync of the
    directory. ``before_replace`` runs after the temp file is durable and just before the
    rename; if it returns False the temp file is removed, ``path`` is left as it is and False is returned (the
    caller re-reads and retries). True when ``path`` was replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:  # mkstemp makes 0600: keep the replaced file's mode, or the usual 0644 for a new one
            os.fchmod(fd, path.stat().st_mode & 0o7777 if path.exists() else 0o644)
        except OSError:
            pass
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


UPDATE_ATTEMPTS = 5


def update_file(path: Path, merge: Callable[[bytes | None], bytes | None], *, lock_path: Path, timeout: float,
                attempts: int = UPDATE_ATTEMPTS) -> tuple[str, bytes | None]:
    """Rewrite ``path`` to ``merge(current bytes)`` under ``lock_path``, never over an edit made meanwhile.

    ``merge`` gets the file's bytes (None when it does not exist) and returns the new bytes, or None to leave the
    file alone. Writers holding ``lock_path`` serialize; people and agents edit without it, so just before the
    atomic rename the file is read again, and if it changed since ``merge`` saw it, ``merge`` runs again on what is
    there now (up to ``attempts`` rounds). After the rename the replaced file is read once more through a
    descriptor opened before the write: an in-place edit (an append) that landed in it during the rename is merged
    in by another round too. Returns ``("left" | "unchanged" | "written", final bytes)``. Raises
    :class:`LockTimeout` (lock not taken, or the file kept changing for ``attempts`` rounds: nothing written by the
    last round) or ``OSError``.
    """
    with locked(lock_path, timeout):
        expected = source = read_bytes_or_none(path)
        for attempt in range(attempts):
            if attempt:
                time.sleep(0.01 * attempt)  # let a burst of edits settle before merging again
            new = merge(source)
            if new is None:
                return "left", source
            if new == source and source == expected:
                return "unchanged", new
            old = open(path, "rb") if expected is not None else None  # noqa: SIM115 - read again after the rename
            try:
                if not atomic_write_bytes(path, new, before_replace=lambda: read_bytes_or_none(path) == expected):
                    expected = source = read_bytes_or_none(path)  # edited while we merged: merge again from it
                    continue
                late = None
                if old is not None:
                    old.seek(0)
                    late = old.read()
            finally:
                if old is not None:
                    old.close()
            if late is None or late == expected:
                return "written", new
            expected, source = new, late  # an in-place edit landed in the replaced file: merge it in too
    raise LockTimeout(f"{path} kept changing during {attempts} attempts to update it; try again")


def write_if_absent(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless it exists (O_EXCL, so a concurrent creator wins). True if created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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
