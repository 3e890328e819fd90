"""Where a home's server keeps its runtime files: ``<home>/server/`` (mode 0700). Stdlib only, so the hooks' light
client can find the socket without importing anything else.

    <home>/server/serve.sock   the local API (HTTP over a Unix socket, mode 0600); see :func:`socket_path`
    <home>/server/serve.lock   held by the running server for its whole life: one server per home
    <home>/server/serve.json   the running server's pid, start time, version and MCP URL (rewritten atomically)
    <home>/server/token        the bearer token MCP over HTTP requires (mode 0600, made once, kept)

A Unix socket path is limited to about 104-108 bytes (``sockaddr_un``); when ``<home>/server/serve.sock`` is
longer, the socket lives in ``$XDG_RUNTIME_DIR/suzent/`` (or ``<tmp>/suzent-<uid>/``, mode 0700) under a name
derived from the home's absolute path, so the server and every client compute the same place with no lookup.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

RUN_DIR = "server"
SOCKET = "serve.sock"
LOCK = "serve.lock"
INFO = "serve.json"
TOKEN = "token"
MAX_SOCKET_PATH = 100  # bytes; below every platform's sun_path limit (104 on macOS, 108 on Linux)


def run_dir(home: Path | str) -> Path:
    """``<home>/server``: the server's runtime folder (not created here)."""
    return Path(home) / RUN_DIR


def lock_path(home: Path | str) -> Path:
    return run_dir(home) / LOCK


def info_path(home: Path | str) -> Path:
    return run_dir(home) / INFO


def token_path(home: Path | str) -> Path:
    return run_dir(home) / TOKEN


def _short_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "suzent"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"suzent-{uid}"


def socket_path(home: Path | str) -> Path:
    """The local API's socket for ``home`` (absolute): ``<home>/server/serve.sock``, or, when that path is too long
    for a Unix socket, ``<short dir>/<sha256(home)[:24]>.sock`` (see the module docstring). ``home`` is resolved
    first (symlinks, ``..``), so every spelling of one home (a symlink in a hook command, a relative path) names
    the same socket as the server's."""
    home = Path(os.path.realpath(Path(home).expanduser()))
    here = run_dir(home) / SOCKET
    if len(os.fsencode(str(here))) <= MAX_SOCKET_PATH:
        return here
    digest = hashlib.sha256(os.fsencode(str(home))).hexdigest()[:24]
    return _short_dir() / f"{digest}.sock"


def untrusted_socket(path: Path | str) -> str | None:
    """Why the socket at ``path`` must not be talked to, or None when it may: its folder must be ours and writable
    by us alone, and the socket ours. Clients check this before they connect, because a client sends the user's
    prompts and transcript paths and prints what comes back into the agent's context: another local user who made
    the shared fallback folder (``<tmp>/suzent-<uid>/``) first, or who can write in the home, must not be able to
    put a socket of theirs where the client looks. A missing folder or socket also answers a reason (no server).
    Never raises."""
    path = Path(path)
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        folder, sock = os.lstat(path.parent), os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(folder.st_mode):
        return f"{path.parent} is not a folder"
    if uid is not None and folder.st_uid != uid:
        return f"{path.parent} belongs to another user (uid {folder.st_uid})"
    if folder.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path.parent} is writable by other users (mode {stat.S_IMODE(folder.st_mode):04o})"
    if not stat.S_ISSOCK(sock.st_mode):
        return f"{path} is not a socket"
    if uid is not None and sock.st_uid != uid:
        return f"{path} belongs to another user (uid {sock.st_uid})"
    return None
