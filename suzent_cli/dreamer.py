"""Which machine dreams for a synced home. Light (stdlib only): the dream's gate asks :func:`may_dream` on every tick.

One machine dreams: its daily-log lines never move (every merge keeps its file whole and in place, see
:mod:`suzent_cli.sync`), so the ``source: DATE.md:LINE`` of every claim, ``folded_through`` and the late-line
records stay true on every machine, and two dreams never fold different logs into one page. The synced repository
names it in ``DREAMER`` (a file that travels); ``sync.dream`` says what this machine does about it: ``auto`` (the
default) claims the role when no machine holds it, ``yes`` takes it over, ``no`` never claims it. After each sync
``<home>/sync/role.json`` caches the answer for the gate; a home that never synced dreams as before.
"""

from __future__ import annotations

import json
import secrets
import socket
from pathlib import Path

SYNC_DIR = "sync"
ROLE_FILE = "role.json"
MACHINE_FILE = "machine"
DREAMER_FILE = "DREAMER"  # at the root of the synced repository


def sync_dir(home: Path) -> Path:
    """``<home>/sync``: the staging repository, the lock, the machine id, the role cache, the write-back journal."""
    return home / SYNC_DIR


def machine_id(home: Path) -> str:
    """This machine's id for ``home`` (made once: 12 random hex digits and the host name, ``3f2a…@laptop``), kept
    in ``<home>/sync/machine`` (machine-local: never synced, never copied by a folder-sync tool's …). Raises
    InputInvalid when that file holds something else (bytes that are not text, a control character)."""
    path = sync_dir(home) / MACHINE_FILE
    try:
        found = path.read_bytes().decode("utf-8", "replace").strip()
    except OSError:
        found = ""
    if found:
        if len(found) <= 120 and found.isprintable() and "\ufffd" not in found:
            return found
        from suzent_cli.errors import InputInvalid

        # a new id here would quietly hand this machine's dream role to a machine that no longer exists
        raise InputInvalid(f"{path} is not a machine id ({found[:40]!r}): put back the id this machine had (the "
                           "DREAMER file of the synced repository names the dreamer's), or delete it to make a new one")
    host = "".join(c for c in socket.gethostname() if c.isalnum() or c in "-_.")[:40] or "host"
    made = f"{secrets.token_hex(6)}@{host}"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(made + "\n", encoding="utf-8")
    path.chmod(0o600)
    return made


def may_dream(home: Path) -> tuple[bool, str]:
    """``(this machine may dream, why not)``: True for a home that never synced or whose synced repository names
    this machine (or nobody) as the dreamer; else False and one line naming the machine that dreams. A home that
    synced but whose role cache is missing or unreadable does not dream until the next sync rewrites it: two
    dreaming machines would fold different logs into one page."""
    path = sync_dir(home) / ROLE_FILE
    try:
        role = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not (sync_dir(home) / "repo").is_dir():
            return True, ""  # never synced: dreams as before
        role = None
    except (OSError, ValueError):
        role = None
    if not isinstance(role, dict) or not isinstance(role.get("dreamer", ""), str) or not isinstance(role.get("me", ""), str):
        return False, (f"this synced home's role ({path}) is missing or unreadable, so it does not dream until the next "
                       "suzent sync records which machine dreams")
    dreamer, me = str(role.get("dreamer") or ""), str(role.get("me") or "")
    if not dreamer or dreamer == me:
        return True, ""
    return False, (f"another machine dreams for this synced home ({dreamer}); its vault pages arrive with "
                   "suzent sync (sync.dream = \"yes\" makes this one the dreamer at its next sync)")
