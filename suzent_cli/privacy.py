"""The memory is private: every folder suzent makes is 0700 and every file 0600, whatever the umask it started with.

The daily logs, MEMORY.md, the vault, the index and ``.state/tombstones.jsonl`` (every forgotten text, word for
word) are one person's memory; no other user of the machine may read them. How that is held, in one place:

* **The process umask.** Both entry points run under :func:`private_umask` (``0o077``): the ``suzent`` script and
  ``python -m suzent_cli`` (:func:`suzent_cli.cli.fasthook.main`) and in-process callers
  (:func:`suzent_cli.cli.app.main`), which covers ``serve`` and ``mcp`` too. Everything the process creates then
  has no group or other bit: our files and folders, and those libraries create (LanceDB writes its files from
  Rust, filelock its lock files, :mod:`tempfile`, :mod:`shutil` folders). The umask is restored on return, so a
  test calling ``main`` in-process keeps its own.
* **Explicit modes** where a file is made: :mod:`suzent_cli.files` creates every file with :data:`FILE_MODE`
  (a mode the umask can only narrow) and gives a file it replaces :func:`replaced_mode` (the owner's bits kept,
  group and other bits dropped); every lock file is made with :data:`FILE_MODE` too (:func:`suzent_cli.files.file_lock`:
  filelock before 4.x chmods its lock file to its own default, 0644, whatever the umask). A library caller that
  bypasses the entry points still gets private files from :mod:`suzent_cli.files`; its new folders follow its umask.
* **Copies keep their source's mode** (``shutil.copy2``/``copytree``: index backups, ``retire-legacy`` backups,
  dry-run clones), so a private home copies private; an older home is made private by ``suzent init``.
* **An older home** (made under umask 022 before this rule: folders 0755, files 0644) is found by :func:`exposure`
  (``suzent status`` and ``suzent init`` warn once) and fixed by :func:`make_private` (``suzent init``).

Standard library only (the hooks' fast path imports this module; no configuration module).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    from suzent_cli.config import Paths

    F = TypeVar("F", bound=Callable)

FILE_MODE = 0o600  # every file suzent creates: read and write for its owner only
DIR_MODE = 0o700  # every folder
UMASK = 0o077  # the process umask under the entry points: no group or other bit on anything created
OPEN_BITS = 0o077  # group and other permission bits: any of them on a root opens the memory to other users


def private_umask(func: F) -> F:
    """Decorate an entry point: ``func`` runs under umask :data:`UMASK`, and the caller's umask is restored when it
    returns or raises (a process that ends inside it, ``os._exit``, needs no restoring). Nested calls are fine."""

    def run(*args, **kwargs):
        previous = os.umask(UMASK)
        try:
            return func(*args, **kwargs)
        finally:
            os.umask(previous)

    run.__name__, run.__qualname__, run.__doc__ = func.__name__, func.__qualname__, func.__doc__
    run.__module__, run.__wrapped__ = func.__module__, func  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]


def replaced_mode(old: int | None) -> int:
    """The mode of a file written over one whose ``st_mode`` is ``old`` (None: a new file): the owner's bits of the
    old file, always with read and write, never a group, other or special bit. A new file gets :data:`FILE_MODE`."""
    if old is None:
        return FILE_MODE
    return (old & 0o700) | FILE_MODE


def roots(paths: Paths) -> list[Path]:
    """The folders whose modes guard the memory (resolved, absolute): the home, then each tier folder (memory dir,
    vault, index dir) that does not lie inside another root (a tier reached through a symlink in the home is its
    own root: others reach it by its real path). Nothing is created; missing folders are included."""
    found: list[Path] = []
    for path in (paths.home, paths.memory_dir, paths.vault_dir, paths.index_dir):
        real = Path(os.path.realpath(path))
        if any(real == r or real.is_relative_to(r) for r in found):
            continue
        found = [r for r in found if not r.is_relative_to(real)] + [real]
    return found


def exposure(paths: Paths) -> list[tuple[Path, int]]:
    """``[(root, permission bits)]`` for each existing root (:func:`roots`) that grants its group or others any
    bit (:data:`OPEN_BITS`): through such a root another user can read (or, with ``x`` alone, open by its known
    name, as ``.state/tombstones.jsonl``) what lies under it. Cheap and read-only: one ``stat`` per root, no walk
    (a private root guards everything under it, whatever their own modes). Empty when the memory is private."""
    found: list[tuple[Path, int]] = []
    for root in roots(paths):
        try:
            mode = os.stat(root).st_mode
        except OSError:  # missing (not made yet) or unreadable: nothing to report here
            continue
        if mode & OPEN_BITS:
            found.append((root, stat.S_IMODE(mode)))
    return found


def exposure_json(exposed: Iterable[tuple[Path, int]]) -> list[dict[str, str]]:
    """:func:`exposure`'s result for ``--json``: ``[{"path": str, "mode": "0755"}]``."""
    return [{"path": str(path), "mode": f"{mode:04o}"} for path, mode in exposed]


def exposure_warning(exposed: Iterable[tuple[Path, int]], *, fixing: bool = False) -> str:
    """The one warning line for :func:`exposure`'s result: what is open, and what to do (``fixing``: what
    ``suzent init`` is doing about it)."""
    items = list(exposed)
    what = ", ".join(f"{path} (mode {mode:04o})" for path, mode in items)
    them = "it" if len(items) == 1 else "them"
    tail = f"making {them} private" if fixing else f"run `suzent init` to make {them} private"
    return (f"other users can read the memory: {what} {'is' if len(items) == 1 else 'are'} open to the group or "
            f"others; {tail} (folders 0700, files 0600)")


class Fixed:
    """What :func:`make_private` did: ``folders`` and ``files`` made private (counts), ``left``: ``[(path,
    reason)]`` it did not change (not ours, a root it refuses to walk, an error), at most :data:`MAX_LEFT`;
    ``more_left``: how many more."""

    MAX_LEFT = 20
    __slots__ = ("folders", "files", "left", "more_left")

    def __init__(self) -> None:
        self.folders, self.files, self.left, self.more_left = 0, 0, [], 0

    def leave(self, path: Path | str, reason: str) -> None:
        if len(self.left) < self.MAX_LEFT:
            self.left.append((str(path), reason))
        else:
            self.more_left += 1

    def to_json(self) -> dict:
        return {"folders": self.folders, "files": self.files,
                "left": [{"path": p, "reason": r} for p, r in self.left], "more_left": self.more_left}


def make_private(paths: Paths, roots_to_fix: Iterable[Path] | None = None) -> Fixed:
    """``chmod go-rwx`` every folder and file under each root (default: every root of :func:`roots` that exists),
    the root first, so the memory is closed before the walk goes on; ``suzent init``'s fix for an older home.

    Only folders and regular files of ours are changed (a file of another user cannot be, and is listed in
    ``left``); a symlink is never followed nor changed (a link out of the home leaves its target alone), nor is
    anything else (sockets, FIFOs). A root that is the user's home directory or holds it, ``/``, or a shared folder
    (sticky bit, such as ``/tmp``) is not walked: it is listed in ``left`` to fix by hand. Errors (no permission)
    are listed, never raised; a file removed meanwhile is skipped. Files commands create meanwhile are private
    already (their umask). Killed part-way, the root is private already (it goes first): nothing is open, and what
    lies under it is unreachable by others whatever its mode. Returns what was done (:class:`Fixed`)."""
    fixed = Fixed()
    for root in roots(paths) if roots_to_fix is None else roots_to_fix:
        try:
            st = os.stat(root)
        except FileNotFoundError:
            continue
        except OSError as exc:
            fixed.leave(root, exc.strerror or str(exc))
            continue
        if not stat.S_ISDIR(st.st_mode):
            fixed.leave(root, "not a folder")
            continue
        if (why := _too_wide(Path(root), st)) is not None:
            fixed.leave(root, why)
            continue
        _fix(root, st, fixed)
        for folder, dirs, files in os.walk(root, onerror=lambda exc: _error(exc, exc.filename, fixed)):
            for name in dirs + files:
                path = os.path.join(folder, name)
                try:
                    entry = os.lstat(path)
                except OSError as exc:
                    _error(exc, path, fixed)
                    continue
                _fix(path, entry, fixed)
    return fixed


def _fix(path: Path | str, st: os.stat_result, fixed: Fixed) -> None:
    """Drop the group and other bits of one folder or regular file of ours (a symlink or anything else: left)."""
    is_dir = stat.S_ISDIR(st.st_mode)
    if not (is_dir or stat.S_ISREG(st.st_mode)) or not st.st_mode & OPEN_BITS:
        return
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        fixed.leave(path, f"belongs to uid {st.st_uid}")
        return
    try:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~OPEN_BITS)  # not a symlink (lstat): chmod reaches this entry
    except OSError as exc:
        _error(exc, path, fixed)
        return
    if is_dir:
        fixed.folders += 1
    else:
        fixed.files += 1


def _too_wide(root: Path, st: os.stat_result) -> str | None:
    """Why a root must not be made private wholesale (a misconfigured tier folder), or None."""
    if st.st_mode & stat.S_ISVTX:
        return "a shared folder (sticky bit): not changed; point suzent at a folder of its own"
    try:
        user_home = Path(os.path.realpath(Path.home()))
    except (KeyError, RuntimeError):  # no home directory known
        user_home = None
    if root == Path(root.anchor) or (user_home is not None and (root == user_home or root in user_home.parents)):
        return "your home directory, or a folder holding it: not changed; point suzent at a folder of its own"
    return None


def _error(exc: OSError, path: Path | str | None, fixed: Fixed) -> None:
    """Record a failure to reach or change ``path`` (gone meanwhile, a concurrent command removed it: nothing to
    do)."""
    if not isinstance(exc, FileNotFoundError):
        fixed.leave(path if path is not None else "?", _why(exc))


def _why(exc: OSError) -> str:
    return exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
