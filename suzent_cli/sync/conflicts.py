"""Folder-sync conflict copies folded back (``suzent sync --fold-conflicts``, and the first step of every sync).

A home synced by Syncthing, Dropbox, iCloud or OneDrive gets a conflict copy when two machines changed one file
between two passes of the tool (names: :mod:`suzent_cli.copies`). For each copy:

* a **daily log**'s copy: the entries it holds that the log lacks are appended to the log through
  :func:`suzent_cli.archive.merge_into_log` (the log first and in place: nothing of it moves; an entry both hold is
  kept once), as late lines when the day is before today, so the dream folds them;
* a copy of **``tombstones.jsonl``**: its records the file lacks are appended (a forget recorded only in the copy
  must not be undone);
* a copy of a **vault page**, MEMORY.md, persona.md, user.md or another state file: nothing is merged
  automatically (two versions of a page have no common base to merge from): it is moved aside and named in the
  report for a person;

and the copy itself is then moved to ``<home>/backups/conflicts/`` (0700; a name taken there gets a ``.N``
suffix), so it is never read twice and nothing of it is lost. Meanwhile the copy is never indexed: the log walker
takes only ``YYYY-MM-DD.md`` names and the vault's walker leaves page copies out.
"""

from __future__ import annotations

import os
from pathlib import Path

from suzent_cli import archive
from suzent_cli.config import Settings
from suzent_cli.copies import find_copies, log_copy_day, page_copy_of
from suzent_cli.errors import SuzentError
from suzent_cli.files import read_text
from suzent_cli.sync.merge import merge_appended
from suzent_cli.vault.state import TOMBSTONES

BACKUPS = "backups"
CONFLICTS = "conflicts"


def fold_conflicts(settings: Settings, warnings: list[str] | None = None) -> list[dict]:
    """Fold back or move aside every conflict copy (module doc). Returns one record per copy: ``{copy, kind,
    into, lines_added, moved_to, needs_person}``. A copy that cannot be read or folded (a lock held too long) is
    left in place with a warning; it is retried next time."""
    from suzent_cli.vault.state import append_late_lines

    warnings = [] if warnings is None else warnings
    done: list[dict] = []
    today = settings.today
    for kind, copy in find_copies(settings.paths):
        if kind == "state":
            kind = "tombstones" if page_copy_of(copy.name) == TOMBSTONES else "other"
        record: dict = {"copy": str(copy), "kind": kind, "into": None, "lines_added": 0, "moved_to": None,
                        "needs_person": kind == "other"}
        try:
            if kind == "log":
                day = archive.log_day(copy.with_name(f"{log_copy_day(copy.name)}.md"))
                if day is None:
                    continue
                text = copy.read_bytes().decode("utf-8", errors="surrogateescape")

                def late(from_line: int, day=day) -> None:
                    if day < today:
                        append_late_lines(settings.paths.state_dir, day, from_line, timeout=settings.lock_timeout)

                merged = archive.merge_into_log(settings.paths.archive_dir, day,
                                                lambda live, text=text: merge_appended(live, text),
                                                timeout=settings.lock_timeout, on_changed=late)
                record["into"] = str(merged.path)
                record["lines_added"] = max(0, merged.lines_added)
            elif kind == "tombstones":
                record["into"] = str(settings.paths.state_dir / TOMBSTONES)
                record["lines_added"] = _fold_tombstones(settings, copy)
            record["moved_to"] = str(_move_aside(settings, copy))
        except (OSError, ValueError, SuzentError) as exc:  # a lock held too long: retried next time
            warnings.append(f"conflict copy {copy.name} left in place: {exc}")
            continue
        if record["needs_person"]:
            warnings.append(f"conflict copy {copy.name} moved to {record['moved_to']}: compare it with "
                            f"{page_copy_of(copy.name)} and keep what you want")
        done.append(record)
    return done


def _fold_tombstones(settings: Settings, copy: Path) -> int:
    """Append the records of a tombstones copy the file lacks, under the state lock. Returns how many."""
    from suzent_cli.files import append_held, locked
    from suzent_cli.vault.state import STATE_LOCK, TOMBSTONES

    state = settings.paths.state_dir
    theirs = [ln for ln in read_text(copy).splitlines() if ln.strip()]
    with locked(state / STATE_LOCK, settings.lock_timeout):
        path = state / TOMBSTONES
        live = read_text(path) if path.exists() else ""
        have = set(live.splitlines())
        new = [ln for ln in dict.fromkeys(theirs) if ln not in have]
        if new:
            append_held(path, ("" if not live or live.endswith("\n") else "\n") + "".join(ln + "\n" for ln in new))
    return len(new)


def backup_path(settings: Settings, folder: str, name: str) -> Path:
    """A free path ``<home>/backups/<folder>/<name>`` (``<name>.1``, ``.2``, … when taken), its folders made 0700:
    where sync keeps what it sets aside (conflict copies, a file another machine's version replaced)."""
    target_dir = settings.paths.home / BACKUPS / folder
    target_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(target_dir.parent, 0o700)
    target = target_dir / name
    n = 1
    while target.exists():
        target = target_dir / f"{name}.{n}"
        n += 1
    return target


def _move_aside(settings: Settings, copy: Path) -> Path:
    """Move ``copy`` into ``<home>/backups/conflicts/`` (0700), under a free name, made 0600 (a folder-sync tool
    writes its copies with the person's umask, often 0644; in the home's backups they are private like the log)."""
    target = backup_path(settings, CONFLICTS, copy.name)
    try:
        os.replace(copy, target)
    except OSError:  # another file system (a tier folder outside the home): copy, then remove
        import shutil

        shutil.copy2(copy, target)
        copy.unlink()
    os.chmod(target, 0o600)  # find_copies never yields a symlink: this is the copy itself
    return target
