"""The server's files in the home and its two listening sockets (see :mod:`suzent_cli.server.paths` for where).

* :func:`prepare_run_dir` — ``<home>/server/``, mode 0700, ours.
* :func:`ensure_token` — the bearer token: made once (``secrets.token_urlsafe(32)``, mode 0600, created whole with
  a hard link so no reader ever sees a half-written token), then reused; a token readable by group or others is
  made 0600 again with a warning.
* :func:`write_info` / :func:`read_info` — ``serve.json`` (atomic rewrite; readers tolerate it missing or bad).
* :func:`bind_unix` / :func:`bind_tcp` — the local API's socket (mode 0600; a leftover socket file is unlinked:
  the caller holds ``serve.lock``, so no live server owns it) and MCP's TCP socket on 127.0.0.1 only.
* :func:`is_running` / :func:`server_state` — whether a server runs on a home (a probe of ``serve.lock``) and what
  ``suzent status`` shows about it.
* :func:`stop_server` — ``suzent serve stop``: SIGTERM to a server that really holds the lock, then wait for it.
* :func:`client_config` — the token, the MCP URL and ready-to-paste client configurations (``--print-config``).

Stdlib at import time (``filelock`` and the light client inside the functions that probe a running server).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shlex
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suzent_cli import errors
from suzent_cli.files import atomic_write, file_lock
from suzent_cli.privacy import DIR_MODE, FILE_MODE, OPEN_BITS
from suzent_cli.server import paths

HOST = "127.0.0.1"  # the only interface MCP over HTTP ever binds: no option widens it


class ServerRunning(errors.SuzentError):
    """Another ``suzent serve`` holds this home's ``serve.lock`` (exit 3, nothing was started)."""

    exit_code = errors.BUSY


class PortInUse(errors.ConfigInvalid):
    """The MCP port on 127.0.0.1 is taken (exit 2: choose another with ``--port`` or ``serve.port``)."""


class UnsafeRuntime(errors.ConfigInvalid):
    """A runtime folder or file is not ours, or not private, and cannot be made so (exit 2)."""


def _private_dir(path: Path) -> Path:
    """Create ``path`` (0700) or make an existing one 0700; refuse one another user owns or that is no folder."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeRuntime(f"{path} is not a folder (a link?); move it aside")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UnsafeRuntime(f"{path} belongs to another user (uid {st.st_uid}); refusing to put the server there")
    if st.st_mode & OPEN_BITS:
        os.chmod(path, DIR_MODE)
    return path


def prepare_run_dir(home: Path) -> Path:
    """``<home>/server`` created or made private (0700); returns it. Raises :class:`UnsafeRuntime` when it is not
    a folder of ours."""
    return _private_dir(paths.run_dir(home))


def ensure_token(home: Path, warn: Callable[[str], None] | None = None) -> str:
    """The bearer token of ``home`` (``<home>/server/token``), made on first use and reused after.

    Made: 32 random bytes (``secrets.token_urlsafe``) written to a 0600 temp file, fsynced, then hard-linked to
    the token's name, which fails if another process made it first (that token wins and is read). Reused: a token
    file with group/other bits is chmodded to 0600 and ``warn`` is told (rotate it by deleting the file and
    restarting the server). Raises :class:`UnsafeRuntime` for a token that is no regular file or not ours, or is
    empty (a crash cannot leave one: delete it)."""
    run = prepare_run_dir(home)
    path = paths.token_path(home)
    if not os.path.lexists(path):
        tmp = run / f".token.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_urlsafe(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeRuntime(f"{path} is not a regular file; delete it and a new token is made")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UnsafeRuntime(f"{path} belongs to another user (uid {st.st_uid}); delete it and a new token is made")
    if st.st_mode & OPEN_BITS:
        os.chmod(path, FILE_MODE)
        if warn is not None:
            warn(f"{path} was readable by others (mode {stat.S_IMODE(st.st_mode):04o}): made 0600; delete it and "
                 "restart the server to get a new token")
    token = path.read_text(encoding="ascii", errors="replace").strip()
    if not token:
        raise UnsafeRuntime(f"{path} is empty; delete it and a new token is made")
    return token


def mcp_url(port: int) -> str:
    """``http://127.0.0.1:<port>/mcp``."""
    return f"http://{HOST}:{port}/mcp"


def write_info(home: Path, info: dict[str, Any]) -> None:
    """Rewrite ``serve.json`` atomically (temp file, fsync, rename): a reader sees the old or the new one whole."""
    atomic_write(paths.info_path(home), json.dumps(info, indent=1, sort_keys=True) + "\n")


def read_info(home: Path) -> dict[str, Any] | None:
    """The parsed ``serve.json``, or None when it is missing or not a JSON object. Never raises."""
    try:
        data = json.loads(paths.info_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def running_pid(home: Path) -> int | None:
    """The pid ``serve.json`` names, when it names one (it may be stale: only ``serve.lock`` says a server runs)."""
    info = read_info(home)
    pid = info.get("pid") if info else None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def is_running(home: Path) -> bool | None:
    """Whether a server holds ``serve.lock`` of ``home`` now (a probe: taken and released at once, never waits);
    None when the lock cannot be probed (an unreadable folder)."""
    from filelock import Timeout

    path = paths.lock_path(home)
    if not path.exists():
        return False
    lock = file_lock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    except OSError:
        return None
    lock.release()
    return False


def running_port(home: Path) -> int | None:
    """The MCP port of the server running on ``home`` (from ``serve.json``), None when none runs."""
    if not is_running(home):
        return None
    port = (read_info(home) or {}).get("port")
    return port if isinstance(port, int) and not isinstance(port, bool) and port > 0 else None


STOP_WAIT = 30.0  # seconds `suzent serve stop` waits for the server to let go of serve.lock
STOP_POLL = 0.1


def stop_server(home: Path, *, wait: float = STOP_WAIT) -> dict[str, Any]:
    """Stop the server of ``home`` (``suzent serve stop``): SIGTERM to the pid ``serve.json`` names, sent only
    while ``serve.lock`` is held (:func:`is_running`: a server really runs, so the pid is not a stale one that
    another process may have reused), then wait up to ``wait`` seconds for the lock to be released (its requests
    finish, the chain finishes its current stage). Returns ``{"stopped": bool, "was_running": bool, "pid": int |
    None, "message": str}``: ``stopped`` is True when no server runs any more (also when none ran). Never raises
    for a server that is gone meanwhile; ``stopped`` False when the lock cannot be probed, serve.json names no pid,
    or the server still runs after ``wait``."""
    import signal
    import time

    running = is_running(home)
    if running is None:
        return {"stopped": False, "was_running": False, "pid": None,
                "message": f"cannot probe {paths.lock_path(home)}"}
    if not running:
        return {"stopped": True, "was_running": False, "pid": None, "message": f"no server runs on {home}"}
    pid = running_pid(home)
    if pid is None or pid == os.getpid():
        return {"stopped": False, "was_running": True, "pid": None,
                "message": f"a server holds {paths.lock_path(home)} but {paths.info_path(home)} names no pid yet "
                           "(starting?); try again in a moment"}
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # gone between the probe and the signal: the lock tells below
    except PermissionError:
        return {"stopped": False, "was_running": True, "pid": pid,
                "message": f"pid {pid} (from {paths.info_path(home)}) is not yours to stop"}
    deadline = time.monotonic() + wait
    while is_running(home) or _alive(pid):  # the lock goes first; the process may still finish a write after it
        if time.monotonic() >= deadline:
            return {"stopped": False, "was_running": True, "pid": pid,
                    "message": f"the server (pid {pid}) is still stopping after {wait:g} s (it finishes its current "
                               "chain stage or index batch); run suzent serve stop again to wait more"}
        time.sleep(STOP_POLL)
    return {"stopped": True, "was_running": True, "pid": pid, "message": f"stopped the server (pid {pid}) of {home}"}


def _alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (Linux: ``/proc/<pid>/stat`` state ``Z``; elsewhere
    ``kill(pid, 0)``). A server is only ever reaped by its own parent, so a zombie counts as gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


LIVE_KEYS = ("uptime_s", "requests", "last_error", "chain", "watcher", "idle_s")
INFO_KEYS = ("pid", "started", "version", "mcp_url", "socket", "port", "started_by", "auto", "idle_exit_seconds")


def server_state(home: Path, *, timeout: float = 3.0) -> dict[str, Any]:
    """What ``suzent status`` shows about the server of ``home``; light: a probe of ``serve.lock``, ``serve.json``,
    and one small request over the socket (at most ``timeout`` seconds). Never raises. Shapes:

    * ``{"running": False, "stale": bool}`` — ``stale``: a killed server left its socket or ``serve.json`` (the
      next ``suzent serve`` replaces them); hooks and MCP use the cold path;
    * ``{"running": True, "pid", "started", "version", "mcp_url", "socket", "port", "started_by", "auto",
      "idle_exit_seconds"}`` from ``serve.json`` (who started it: ``"suzent serve"`` or the auto-start's reason,
      ``"hook recall"``; seconds without a request before it exits, null for never), plus the live ``"uptime_s",
      "requests", "last_error", "chain", "watcher", "idle_s"`` the server reports (``POST
      /v1/server``: its counters alone, not a whole status), or ``"no_answer": str`` when it did not answer;
    * ``{"running": None, "unknown": str}`` — the lock cannot be probed.
    """
    running = is_running(home)
    if running is None:
        return {"running": None, "unknown": f"cannot probe {paths.lock_path(home)}"}
    if not running:
        return {"running": False,
                "stale": paths.info_path(home).exists() or os.path.lexists(paths.socket_path(home))}
    info = read_info(home) or {}
    state: dict[str, Any] = {"running": True, **{k: info.get(k) for k in INFO_KEYS}}
    live = _ask_server_block(home, timeout)
    if isinstance(live, str):
        state["no_answer"] = live
        return state
    state.update({k: live.get(k) for k in LIVE_KEYS})
    return state


def _ask_server_block(home: Path, timeout: float) -> dict[str, Any] | str:
    """``POST /v1/server`` over the socket (the light client's connection class): the server block, or why not."""
    import http.client

    from suzent_cli.server.client import UnixHTTPConnection

    why = paths.untrusted_socket(paths.socket_path(home))
    if why is not None:
        return f"no usable answer: {why}"
    conn = UnixHTTPConnection(paths.socket_path(home), timeout=timeout)
    try:
        conn.request("POST", "/v1/server", body=b"{}", headers={"Content-Type": "application/json",
                                                                "Connection": "close"})
        response = conn.getresponse()
        data = json.loads(response.read())
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return f"no usable answer on {paths.socket_path(home)} ({errors.describe(exc)})"
    finally:
        conn.close()
    return data if isinstance(data, dict) and response.status == 200 else f"HTTP {response.status}"


def remove_quietly(path: Path) -> None:
    """Unlink ``path`` if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def bind_unix(path: Path, run_dir: Path) -> tuple[socket.socket, tuple[int, int]]:
    """A listening Unix socket at ``path`` (mode 0600), and its ``(st_dev, st_ino)`` so shutdown unlinks only the
    socket it made. The caller holds ``serve.lock``: a socket file already there was left by a dead server and is
    replaced. When ``path`` is the short fallback outside the home, its folder is made 0700 and must be ours.
    Raises :class:`UnsafeRuntime` when something that is no socket sits at ``path``; OSError from bind."""
    if path.parent != run_dir:
        _private_dir(path.parent)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise UnsafeRuntime(f"{path} exists and is not a socket; move it aside")
        os.unlink(path)  # stale: its server died without cleaning up (we hold the lock)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket file is born 0600: no window where another user could connect
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    sock.setblocking(False)
    st = os.lstat(path)
    return sock, (st.st_dev, st.st_ino)


def bind_tcp(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: any free port; read it back with ``getsockname()``).
    Raises :class:`PortInUse` when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT of our own last run only, not a live one
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(f"port {port} on {HOST} is {'in use' if exc.errno == errno.EADDRINUSE else 'not allowed'}"
                            " (another program?); choose another with --port or serve.port (0 = any free port)") from None
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


def suzent_command() -> str:
    """The absolute path of the ``suzent`` command running now (``sys.argv[0]`` when it is the console script), else
    the first ``suzent`` on ``PATH``, else the bare name. Claude Desktop and Cursor do not start a server from the
    user's shell, so a bare ``suzent`` (e.g. in ``~/.local/bin``) is often not on their ``PATH``."""
    import shutil
    import sys

    argv0 = Path(sys.argv[0])
    if argv0.name == "suzent" and argv0.is_file():
        return str(argv0.absolute())
    found = shutil.which("suzent")
    return str(Path(found).absolute()) if found else "suzent"


def client_config(home: Path, port: int, token: str, *, command: str | None = None) -> dict[str, Any]:
    """The MCP URL, the token and ready-to-paste configurations for Claude Code (HTTP, and stdio through
    ``suzent mcp``), Claude Desktop (stdio JSON) and Cursor (``~/.cursor/mcp.json``, HTTP with the header).
    ``command``: the ``suzent`` to start (default :func:`suzent_command`, an absolute path when one is found).
    Returns ``{"url", "token", "token_file", "claude_code_http", "claude_code_stdio", "claude_desktop": dict,
    "cursor": dict}``; the shell lines are quoted with :func:`shlex.quote`."""
    command = command or suzent_command()
    url = mcp_url(port)
    home_s = str(home)
    header = f"Authorization: Bearer {token}"
    q = shlex.quote
    return {
        "url": url,
        "token": token,
        "token_file": str(paths.token_path(home)),
        "claude_code_http": f"claude mcp add --transport http suzent {q(url)} --header {q(header)}",
        "claude_code_stdio": f"claude mcp add suzent -- {q(command)} --home {q(home_s)} mcp",
        "claude_desktop": {"mcpServers": {"suzent": {"command": command, "args": ["--home", home_s, "mcp"]}}},
        "cursor": {"mcpServers": {"suzent": {"url": url, "headers": {"Authorization": f"Bearer {token}"}}}},
    }
