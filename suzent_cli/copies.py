"""Folder-sync conflict copies: the names Syncthing, Dropbox, iCloud and OneDrive give the second version of a file
they could not reconcile, mapped back to the file they belong to.

* Syncthing: ``2026-06-01.sync-conflict-20260601-101500-ABCD123.md``
* Dropbox: ``2026-06-01 (conflicted copy).md``, ``2026-06-01 (Ana's conflicted copy 2026-06-01).md``
* iCloud, OneDrive on macOS, the Finder: ``2026-06-01 2.md`` (a space and a number)
* OneDrive on Windows: ``2026-06-01-MACHINE.md`` (the machine's name after a dash)

The last two shapes are legitimate names for a vault page (``Sprint 2.md``), so they are read as copies only for
daily logs, whose names are dates: :func:`log_copy_day` knows every shape, :func:`page_copy_of` only the two that
cannot be a person's own name; :func:`find_copies` walks the tiers for them (read-only: ``status`` reports them). The daily-log walker (``archive.list_logs``) takes
only ``YYYY-MM-DD.md`` and the vault's (``vault.is_content_page``) leaves page copies out, so a copy is never
indexed next to its original; ``suzent sync`` folds them back (:mod:`suzent_cli.sync.conflicts`).
"""

from __future__ import annotations

import re
from pathlib import Path

from suzent_cli.config import Paths

_SYNCTHING = re.compile(r"^(?P<stem>.+?)\.sync-conflict-\d{8}-\d{6}(?:-[A-Za-z0-9]+)?(?P<ext>\.[^.]*)?$")
_DROPBOX = re.compile(r"^(?P<stem>.+?) \((?:[^()]*'s )?conflicted copy(?: [^()]*)?\)(?P<ext>\.[^.]*)?$",
                      re.IGNORECASE)
_DAY = r"(?P<day>\d{4}-\d{2}-\d{2})"
_LOG_NUMBERED = re.compile(rf"^{_DAY} [2-9]\d*\.md$")  # iCloud / macOS: "2026-06-01 2.md"
_LOG_MACHINE = re.compile(rf"^{_DAY}-(?P<machine>[A-Za-z0-9][A-Za-z0-9_.-]*)\.md$")  # OneDrive: "2026-06-01-PC.md"
_LOG_NAME = re.compile(rf"^{_DAY}\.md$")


def page_copy_of(name: str) -> str | None:
    """The original file name of a Syncthing or Dropbox conflict copy named ``name`` (``Profile.sync-conflict-
    20260601-101500-ABCD.md`` -> ``Profile.md``), or None when ``name`` is no such copy."""
    for pattern in (_SYNCTHING, _DROPBOX):
        m = pattern.match(name)
        if m:
            return m.group("stem") + (m.group("ext") or "")
    return None


def log_copy_day(name: str) -> str | None:
    """The ``YYYY-MM-DD`` of the daily log a conflict copy named ``name`` belongs to (every shape in the module
    doc), or None when ``name`` is the log itself or no copy of one."""
    original = page_copy_of(name)
    if original is not None:
        m = _LOG_NAME.match(original)
        return m.group("day") if m else None
    for pattern in (_LOG_NUMBERED, _LOG_MACHINE):
        m = pattern.match(name)
        if m:
            return m.group("day")
    return None


def find_copies(paths: Paths) -> list[tuple[str, Path]]:
    """``(kind, path)`` of every conflict copy in the tiers: ``log`` (in the daily-log folder), ``state`` (in
    ``.state/``), ``other`` (a page, a core file)."""
    found: list[tuple[str, Path]] = []
    if paths.archive_dir.is_dir():
        for p in sorted(paths.archive_dir.iterdir()):
            if p.is_file() and not p.is_symlink() and log_copy_day(p.name):
                found.append(("log", p))
    if paths.memory_dir.is_dir():
        for p in sorted(paths.memory_dir.iterdir()):
            if p.is_file() and page_copy_of(p.name):
                found.append(("other", p))
    if paths.vault_dir.is_dir():
        for p in sorted(paths.vault_dir.rglob("*")):
            if not p.is_file() or p.is_symlink():
                continue
            original = page_copy_of(p.name)
            if original is None:
                continue
            if p.parent == paths.state_dir:
                found.append(("state", p))
            else:
                found.append(("other", p))
    return found
