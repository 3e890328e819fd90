"""The light client of a running ``suzent serve``: the local API (``POST /v1/<op>``, JSON in and out) over the
home's Unix socket (:func:`suzent_cli.server.paths.socket_path`).

Used by the Claude Code hooks (before the CLI framework is even imported, :mod:`suzent_cli.cli.fasthook`), by the
CLI (:mod:`suzent_cli.cli.relay`: whole command lines) and by ``suzent mcp`` when it relays. It imports the standard library and :mod:`suzent_cli.server.paths`,
:mod:`suzent_cli.server.protocol` and :mod:`suzent_cli.errors` only: no typer, rich, pydantic, mcp, lancedb or
torch (``tests/test_server_client.py`` checks it).

Failures, by who should handle them:

* the server answered ``{"error": …}`` → the same :class:`~suzent_cli.errors.SuzentError` subclass the operation
  raised there (:func:`suzent_cli.server.protocol.error_from_json`): the operation itself failed;
* no answer in time → :class:`ServerTimeout`: the server may still be working on the request (so a write is not
  simply redone elsewhere);
* anything else on the way (socket refused, reset or closed mid-answer, an answer that is not the API's JSON) →
  :class:`ServerUnavailable`: the request may or may not have reached the server; the caller falls back to doing
  the work itself (the hooks' cold path).

One connection per call (HTTP/1.1, ``Connection: close``): a connect on a local socket costs tens of
microseconds, and no state is kept between calls, so a restarted server is simply found again.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from typing import Any

from suzent_cli.errors import SuzentError
from suzent_cli.server import paths, protocol

DEFAULT_TIMEOUT = 30.0  # seconds; the hooks pass their own --timeout
CONNECT_TIMEOUT = 1.0  # seconds; a live local server accepts at once


class ServerUnavailable(SuzentError):
    """No usable answer from the server (no socket, refused, reset, closed mid-answer, not the API's JSON). The
    request may or may not have reached it: the caller does the work itself (writes are idempotent there)."""


class ServerTimeout(SuzentError):
    """The server did not answer within the timeout; it may still be working on the request, so a write must not
    simply be redone elsewhere (not a :class:`ServerUnavailable`, on purpose)."""


class UnixHTTPConnection(http.client.HTTPConnection):
    """:class:`http.client.HTTPConnection` over a Unix socket at ``path`` (the host name is only the ``Host:``
    header). ``timeout``: seconds for the connect and for each read or write on the socket."""

    def __init__(self, path: Path | str, *, timeout: float | None = DEFAULT_TIMEOUT):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(path)

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class RemoteBackend:
    """:class:`suzent_cli.server.protocol.Backend` over a running server's Unix socket: each method is one
    ``POST /v1/<op>`` with its keyword arguments as a JSON object, and returns the server's result object (the
    shapes in :mod:`suzent_cli.server.protocol`).

    ``home``: the suzent home whose server to ask (the socket is :func:`~suzent_cli.server.paths.socket_path`);
    ``timeout``: seconds the connect and each read may take (:class:`ServerTimeout` after it; the server sends its
    answer in one piece, so in practice the whole call). Each method raises the
    server's :class:`~suzent_cli.errors.SuzentError` for a failed operation, :class:`ServerTimeout` or
    :class:`ServerUnavailable` for a failed transport (see the module docstring)."""

    def __init__(self, home: Path | str, *, timeout: float = DEFAULT_TIMEOUT):
        self.home = Path(home)
        self.socket = paths.socket_path(home)
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"RemoteBackend({str(self.home)!r}, timeout={self.timeout:g})"

    def call(self, op: str, args: dict[str, Any] | None = None, *, timeout: float | None = None) -> dict[str, Any]:
        """``POST /v1/<op>`` with ``args`` (JSON-ready) and return the result object; ``timeout`` (seconds)
        overrides the backend's for this call. Raises as the class docstring says; ``ValueError`` for an ``op``
        not in :data:`~suzent_cli.server.protocol.OPS` (nor :data:`~suzent_cli.server.protocol.CLI_OP`)."""
        if op not in protocol.OPS and op != protocol.CLI_OP:
            raise ValueError(f"unknown operation {op!r}")
        seconds = self.timeout if timeout is None else float(timeout)
        try:
            body = json.dumps(args or {}, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:  # bytes that are not UTF-8 (os.environ's or argv's surrogate escapes)
            from suzent_cli.errors import InputInvalid

            raise InputInvalid(f"{op}: an argument holds bytes that are not UTF-8 text; nothing was sent") from exc
        conn = UnixHTTPConnection(self.socket, timeout=seconds)
        try:
            conn.request("POST", protocol.API_PREFIX + op, body=body,
                         headers={"Content-Type": "application/json", "Connection": "close"})
            response = conn.getresponse()
            status, data = response.status, response.read()
        except TimeoutError as exc:  # socket.timeout is TimeoutError since 3.10
            raise ServerTimeout(f"the server did not answer {op} within {seconds:g} s") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ServerUnavailable(f"no answer from the server on {self.socket} ({_why(exc)})") from exc
        finally:
            conn.close()
        try:
            answer = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ServerUnavailable(f"the server's answer to {op} is not JSON (HTTP {status})") from exc
        if not isinstance(answer, dict):
            raise ServerUnavailable(f"the server's answer to {op} is not a JSON object (HTTP {status})")
        if status != 200 or "error" in answer:
            if isinstance(answer.get("error"), dict):
                raise protocol.error_from_json(answer)
            raise ServerUnavailable(f"the server answered {op} with HTTP {status} and no error object")
        return answer

    # --- protocol.Backend ------------------------------------------------------------------------------------

    def recall(self, query: str, *, limit: int = 10, mode: str = "hybrid", since: str | None = None,
               until: str | None = None, category: str | None = None, project: str | None = None) -> dict[str, Any]:
        args = {"query": query, "limit": limit, "mode": mode, "since": since, "until": until, "category": category}
        return self.call("recall", args if project is None else {**args, "project": project})

    def remember(self, *, facts: list[str] | None = None, turn: str | None = None, session: str | None = None,
                 category: str | None = None, project: str | None = None) -> dict[str, Any]:
        args = {"facts": facts, "turn": turn, "session": session, "category": category}
        return self.call("remember", args if project is None else {**args, "project": project})

    def forget(self, *, text: str | None = None, id: str | None = None, apply: bool = False) -> dict[str, Any]:
        return self.call("forget", {"text": text, "id": id, "apply": apply})

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def list_pages(self) -> dict[str, Any]:
        return self.call("list_pages")

    def read_page(self, name: str) -> dict[str, Any]:
        return self.call("read_page", {"name": name})

    def briefing(self, *, cwd: str | None = None) -> dict[str, Any]:
        return self.call("briefing", {"cwd": cwd})

    def hook_capture(self, *, payload_b64: str, timeout: float, extractor: str | None = None) -> dict[str, Any]:
        return self.call("hook_capture", {"payload_b64": payload_b64, "timeout": timeout, "extractor": extractor})

    def hook_recall(self, *, payload_b64: str, mode: str = "hybrid", limit: int = 5) -> dict[str, Any]:
        return self.call("hook_recall", {"payload_b64": payload_b64, "mode": mode, "limit": limit})

    def hook_session_start(self, *, payload_b64: str) -> dict[str, Any]:
        return self.call("hook_session_start", {"payload_b64": payload_b64})


def _why(exc: BaseException) -> str:
    return " ".join((getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).split())


ALIVE_TIMEOUT = 5.0  # seconds the liveness probe waits: the server answers it on its event loop in a few ms


def alive(backend: RemoteBackend, timeout: float = ALIVE_TIMEOUT) -> bool:
    """True when ``backend``'s server answers ``POST /v1/server`` (the server block, answered on its event loop
    with no worker thread; not counted as activity) within ``timeout`` seconds. A stopped (SIGSTOP) or wedged
    server still accepts connections (the kernel's listen backlog), so :func:`connect` alone cannot tell; a caller
    about to wait long for a command (the CLI relay: hours) asks this first. Never raises."""
    conn = UnixHTTPConnection(backend.socket, timeout=timeout)
    try:
        conn.request("POST", protocol.API_PREFIX + protocol.SERVER_ROUTE, body=b"{}",
                     headers={"Content-Type": "application/json", "Connection": "close"})
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def connect(home: Path | str, *, timeout: float = DEFAULT_TIMEOUT,
            connect_timeout: float = CONNECT_TIMEOUT) -> RemoteBackend | None:
    """A :class:`RemoteBackend` for ``home``'s running server, or None when none answers: no socket file, or a
    socket nobody listens on (a stale one left by a killed server is just "no server"; the next ``suzent serve``
    replaces it), or one that another user could have put there (:func:`~suzent_cli.server.paths.untrusted_socket`:
    its folder or the socket is not ours, or the folder is writable by others). Only checks that the socket accepts
    a connection (within ``connect_timeout`` seconds; no request is sent). ``timeout``: the backend's per-call timeout in seconds. Never raises."""
    where = paths.socket_path(home)
    family = getattr(socket, "AF_UNIX", None)  # absent on some Windows builds: no server can listen there either
    if family is None or paths.untrusted_socket(where) is not None:
        return None  # another user's socket or folder is no server of ours: the caller takes the cold path
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(min(connect_timeout, timeout))
        sock.connect(str(where))
    except OSError:
        return None
    finally:
        sock.close()
    return RemoteBackend(home, timeout=timeout)
