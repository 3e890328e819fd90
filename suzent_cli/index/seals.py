"""Seals: proof that no daily log was rewritten since the indexer read it.

A daily log is append-only (invariant 1). The indexer records, per log, how many bytes it held and the sha256 of
those bytes when it read them: the log's *seal*. From then on the log must start with exactly those bytes; it may
only grow. ``suzent verify`` re-hashes each sealed prefix (:func:`compare`): a shorter file or a different prefix is
a rewrite, named by its first differing line (each seal also keeps a 32-bit hash of every sealed line, so the line
is found without the old text).

Where: one JSON file per log, ``<index_dir>/seals/<YYYY-MM-DD>.md.json`` = ``{"version": 1, "log": name, "size":
bytes, "sha256": hex, "lines": "<8 hex digits per line>"}``. Machine-local, next to the index state: seals never
travel with a sync (each machine seals what it read), and ``index --rebuild`` keeps them (the table and its state
move aside; the logs' history does not start over). One file per log, so sealing today's log after a capture
rewrites a few kB, not the seals of every day.

Who writes: the indexer, under its lock, at the end of every pass (:func:`seal_logs`): a log with no seal is sealed;
a log whose size differs from its seal is re-read and, when it still starts with the sealed bytes, sealed again
over its new length; when it does not, its seal is kept (verify keeps reporting the rewrite) and the pass warns.
A log is read for a seal under the daily logs' append lock (:data:`suzent_cli.archive.APPEND_LOCK`, taken for the
read only), so a seal never covers the bytes of an append still in flight, which a failed fsync would roll back.
:func:`reseal` (under the indexer lock) seals a log's current content whatever it was: for sync, after a merge
rewrote a log legitimately, and for a person who has inspected a rewritten log (``suzent verify --reseal``).

Crash: each seal file is written atomically (temp file, rename); a crash leaves the old seal or the new one.
An unreadable seal file is never overwritten by a pass (it may be the only evidence of a rewrite): verify reports it
and :func:`reseal` replaces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from suzent_cli import archive
from suzent_cli.errors import LockTimeout
from suzent_cli.files import atomic_write, locked

SEALS_DIR = "seals"
SEAL_VERSION = 1
LINE_HASH_CHARS = 8  # 32 bits per line: enough to name the first differing line; the sha256 is the proof


class SealUnreadable(ValueError):
    """A seal file that cannot be read or is not a seal (the message names it and why)."""


@dataclass(frozen=True)
class Seal:
    """The seal of one daily log: ``size`` bytes whose sha256 is ``sha256``; ``lines``, 8 hex digits per sealed
    line (a last line without a newline included)."""

    log: str
    size: int
    sha256: str
    lines: str

    def to_json(self) -> dict:
        return {"version": SEAL_VERSION, "log": self.log, "size": self.size, "sha256": self.sha256, "lines": self.lines}


def seals_dir(index_dir: Path) -> Path:
    """``<index_dir>/seals``: where the seal files live."""
    return index_dir / SEALS_DIR


def seal_path(index_dir: Path, log_name: str) -> Path:
    """The seal file of daily log ``log_name`` (``2026-06-01.md`` → ``seals/2026-06-01.md.json``)."""
    return seals_dir(index_dir) / f"{log_name}.json"


def _line_hashes(data: bytes) -> str:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()  # the empty remainder after a final newline is no line
    return "".join(hashlib.sha256(p).hexdigest()[:LINE_HASH_CHARS] for p in parts)


def seal_of(log_name: str, data: bytes) -> Seal:
    """The seal of ``data``, the bytes of daily log ``log_name`` as read now."""
    return Seal(log_name, len(data), hashlib.sha256(data).hexdigest(), _line_hashes(data))


def read_seal(index_dir: Path, log_name: str) -> Seal | None:
    """The seal of ``log_name``, or None when it has none. Raises :class:`SealUnreadable` when the file cannot be
    read or does not hold a seal of that log (wrong JSON, types or name)."""
    path = seal_path(index_dir, log_name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SealUnreadable(f"{path} is unreadable ({why})") from None
    ok = (isinstance(data, dict) and data.get("version") == SEAL_VERSION and data.get("log") == log_name
          and isinstance(data.get("size"), int) and not isinstance(data.get("size"), bool) and data["size"] >= 0
          and isinstance(data.get("sha256"), str) and len(data["sha256"]) == 64
          and isinstance(data.get("lines"), str) and len(data["lines"]) % LINE_HASH_CHARS == 0)
    if not ok:
        raise SealUnreadable(f"{path} is not a seal of {log_name}")
    return Seal(log_name, data["size"], data["sha256"], data["lines"])


def sealed_names(index_dir: Path) -> list[str]:
    """The daily-log names that have a seal file (sorted); files in ``seals/`` that are not ``<log>.json`` are
    not listed (see :func:`strays`)."""
    folder = seals_dir(index_dir)
    if not folder.is_dir():
        return []
    return sorted(p.name[:-5] for p in folder.iterdir()
                  if p.name.endswith(".json") and archive.LOG_NAME_RE.match(p.name[:-5]))


def strays(index_dir: Path) -> list[str]:
    """Entries of ``seals/`` that are no seal file of a daily log (a temp file a crash left, something else)."""
    folder = seals_dir(index_dir)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if not (p.name.endswith(".json") and archive.LOG_NAME_RE.match(p.name[:-5])))


def compare(seal: Seal, data: bytes) -> str | None:
    """None when ``data`` (a log's bytes now) starts with the sealed bytes; else what changed, on one line: the
    first sealed line that differs or is gone (1-based), and whether the file is shorter than sealed."""
    prefix = data[:seal.size]
    if len(prefix) == seal.size and hashlib.sha256(prefix).hexdigest() == seal.sha256:
        return None
    now = _line_hashes(prefix)
    step = LINE_HASH_CHARS
    first = None
    for i in range(0, len(seal.lines), step):
        if now[i:i + step] != seal.lines[i:i + step]:
            first = i // step + 1
            break
    if first is None:  # every line hash agrees (a 32-bit collision, or a change in a torn last line)
        first = max(1, len(seal.lines) // step)
    shorter = f"is {len(data)} bytes, shorter than the {seal.size} bytes sealed; " if len(data) < seal.size else ""
    return f"{shorter}line {first} is not what was indexed"


def write_seal(index_dir: Path, seal: Seal) -> None:
    """Write ``seal`` atomically (the caller holds the indexer lock)."""
    seals_dir(index_dir).mkdir(parents=True, exist_ok=True)
    atomic_write(seal_path(index_dir, seal.log), json.dumps(seal.to_json(), sort_keys=True) + "\n")


def _read_whole(archive_dir: Path, path: Path, timeout: float) -> bytes | None:
    """The bytes of log ``path`` read under the append lock (no append in flight), or None when the lock is held
    past ``timeout`` or the file cannot be read (sealed by a later pass). An archive where the lock cannot be made
    (read-only) has no appender to wait for: read as it is (as the dream's reader does)."""
    try:
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(locked(archive_dir / archive.APPEND_LOCK, timeout))
            except LockTimeout:
                return None
            except OSError:
                pass
            return path.read_bytes()
    except OSError:
        return None


def seal_logs(index_dir: Path, archive_dir: Path, *, only: list[str] | None = None, timeout: float = 2.0) -> list[str]:
    """Seal every daily log of ``archive_dir`` (or only the log names in ``only``: a pass over named files) that has
    no seal, and extend the seal of every log that grew (module doc). Call it under the indexer lock. Returns one
    warning per log whose sealed bytes changed (its seal kept) or whose seal file is unreadable (left as it is).
    Cost: a stat and a small JSON read per log, a read and a hash only of logs that are new or changed size.
    Raises OSError when a seal cannot be written."""
    warnings: list[str] = []
    for _day, path in archive.list_logs(archive_dir):
        name = path.name
        if (only is not None and name not in only) or path.is_symlink():
            continue  # a linked log is not sealed: the indexer never reads a link leaving the tiers either
        try:
            seal = read_seal(index_dir, name)
        except SealUnreadable as exc:
            warnings.append(f"{exc}: left as it is; `suzent verify` reports it")
            continue
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if seal is not None and seal.size == size:
            continue
        data = _read_whole(archive_dir, path, timeout)
        if data is None:
            continue
        if seal is not None and compare(seal, data) is not None:
            warnings.append(f"archive/{name}: {compare(seal, data)} (the log was rewritten; its seal is kept: run "
                            "`suzent verify`)")
            continue
        write_seal(index_dir, seal_of(name, data))
    return warnings


def reseal_logs(index_dir: Path, archive_dir: Path, names: list[str], *, timeout: float = 2.0) -> list[str]:
    """Seal the current content of daily logs ``names`` whatever their seals held (an unreadable seal file is
    replaced; a log that no longer exists loses its seal). Call it under the indexer lock. Returns the names
    resealed or unsealed. Raises OSError; LockTimeout when the append lock cannot be taken."""
    done: list[str] = []
    for name in names:
        path = archive_dir / name
        if not path.is_file():
            try:
                seal_path(index_dir, name).unlink()
                done.append(name)
            except FileNotFoundError:
                pass
            continue
        with locked(archive_dir / archive.APPEND_LOCK, timeout):
            data = path.read_bytes()
        write_seal(index_dir, seal_of(name, data))
        done.append(name)
    return done
