"""The two ASGI apps ``suzent serve`` runs on one event loop.

* :func:`local_app` — the local API on the Unix socket: ``POST /v1/<op>`` for each op of
  :data:`~suzent_cli.server.protocol.OPS`, the JSON body as the op's keyword arguments, the result object as the
  answer. No token: the socket is mode 0600 in a 0700 folder, so only the home's owner reaches it.
* :func:`mcp_http_app` — MCP over streamable HTTP at ``/mcp`` (the official SDK's app), behind a bearer token
  (:class:`BearerToken`) and the SDK's DNS-rebinding guard, given exact values only: Host must be 127.0.0.1,
  localhost or [::1] with exactly the port the server is bound to (:func:`allowed_hosts`), and an Origin, when
  there is one, ``http://`` one of those with that port (:func:`allowed_origins`).

starlette and mcp are imported inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import hmac
import inspect
import json
import logging
from typing import Any

from suzent_cli import errors
from suzent_cli.server.protocol import API_PREFIX, CLI_OP, OPS, SERVER_ROUTE, error_json
from suzent_cli.server.stats import Stats
from suzent_cli.text import loads_json

log = logging.getLogger("suzent.serve")

MCP_PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # what a client on this machine names the server by
HTTP_DEFAULT_PORT = 80  # the port a Host or Origin without one means (RFC 9110 §7.2, RFC 6454 §6.1)
DRAIN_LIMIT = 1 << 20  # bytes of a refused request's body read before the 401 (a larger one may see a reset)
MAX_BODY = 16 << 20  # bytes of a local API request body; the largest real one (a hook payload, 1 MB) is far below


# Relayed commands that only look (suzent status, suzent paths): counted, but no activity for the idle exit, so a
# prompt widget polling `suzent status` never keeps an auto-started server alive.
LOOKING = frozenset({"status", "paths"})


def relayed_command(argv: Any) -> str | None:
    """The command word of a relayed command line ``argv`` (the relay sends root options as ``--opt=value``): the
    first item that is not an option; None when there is none or ``argv`` is not a list."""
    if not isinstance(argv, list):
        return None
    return next((a for a in argv if isinstance(a, str) and not a.startswith("-")), None)


def http_status(exc: BaseException) -> int:
    """The HTTP status of an error answer: a :class:`SuzentError` of exit 2 (bad input) → 400, exit 3 (busy: a lock
    not taken in time) → 409, any other → 422 (the operation failed); anything else → 500."""
    if not isinstance(exc, errors.SuzentError):
        return 500
    return {errors.BAD_INPUT: 400, errors.BUSY: 409}.get(getattr(exc, "exit_code", errors.FAILED), 422)


def _json_body(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def local_app(backend: Any, stats: Stats, cli: Any = None):
    """The local API as a Starlette app over ``backend`` (any :class:`~suzent_cli.server.protocol.Backend`).

    ``POST /v1/<op>`` with a JSON object body (empty body = no arguments). Answers:

    * 200 and the op's result object (``status`` gains ``"server": stats.snapshot()``);
    * ``POST /v1/server`` (no op: not counted) answers ``stats.snapshot()`` alone, at once: what ``suzent status``
      asks (the ``status`` op computes the whole status, seconds on a cold server);
    * 404 for an op not in :data:`OPS`; 400 for a body that is not a JSON object or arguments the op does not take;
      413 for a body over :data:`MAX_BODY` bytes (read and dropped, never held whole);
    * the :class:`SuzentError` the op raised, as :func:`~suzent_cli.server.protocol.error_json`, with
      :func:`http_status`'s code (400/409/422);
    * 500 ``InternalError`` for anything else: logged with its traceback once and kept as ``stats``' last error.

    Every request to a known op is counted in ``stats`` (and is activity for the idle exit until it ends). The backend's methods are blocking: each call runs in a
    worker thread (starlette's thread pool), so one slow recall never stalls the loop.

    ``cli``: the runner of relayed CLI command lines (``POST /v1/cli``, :data:`~suzent_cli.server.protocol.CLI_OP`;
    :func:`suzent_cli.cli.relayed.run`, handed in by ``suzent serve``: the server never imports the CLI); None:
    that op is unknown here (404).
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
    from starlette.routing import Route

    def answer(data: Any, status: int = 200) -> Response:
        return Response(_json_body(data), status_code=status, media_type="application/json")

    # Every handler reads the whole body before it answers: an answer sent (and the connection closed, the client
    # asks for Connection: close) while the client still writes its body breaks the client's pipe.
    async def call(request: Request) -> Response:
        op = request.path_params["op"]
        try:
            raw = await _read_body(request)
        except ClientDisconnect:  # the caller hung up mid-body (a hook its watchdog ended): nobody to answer, no op run
            return Response(status_code=400)
        if raw is None:
            return answer(error_json(errors.InputInvalid(f"{op}: the body is over {MAX_BODY} bytes")), 413)
        known = (*OPS, CLI_OP) if cli is not None else OPS
        if op not in known:
            return answer(error_json(errors.InputInvalid(f"unknown operation {op!r} (known: {', '.join(known)})")), 404)
        try:  # a lone surrogate escape ("\ud800") arrives as U+FFFD, as a bad byte would: no UTF-8 answer holds one
            kwargs = loads_json(raw.decode("utf-8"))[0] if raw.strip() else {}
        except (ValueError, RecursionError):
            stats.count(op)
            return answer(error_json(errors.InputInvalid(f"{op}: the body is not valid JSON")), 400)
        looking = op == CLI_OP and isinstance(kwargs, dict) and relayed_command(kwargs.get("argv")) in LOOKING
        stats.count(op, activity=not looking)
        if not isinstance(kwargs, dict):
            return answer(error_json(errors.InputInvalid(f"{op}: the body must be a JSON object of arguments")), 400)
        method = cli if op == CLI_OP else getattr(backend, op)
        try:
            inspect.signature(method).bind(**kwargs)
        except TypeError as exc:
            return answer(error_json(errors.InputInvalid(f"{op}: {exc}")), 400)
        try:
            result = await run_in_threadpool(method, **kwargs)
            if op == "status" and isinstance(result, dict):
                result = {**result, "server": stats.snapshot()}
            return answer(result)
        except errors.SuzentError as exc:
            return answer(error_json(exc), http_status(exc))
        except Exception as exc:
            log.exception("%s failed", op)
            stats.error(op, exc)
            return answer(error_json(exc), 500)
        finally:
            if not looking:
                stats.touch()  # a long request is activity until it ends (the idle exit)

    async def server(request: Request) -> Response:
        try:
            await _read_body(request)
        except ClientDisconnect:
            return Response(status_code=400)
        return answer(stats.snapshot())

    return Starlette(routes=[Route(API_PREFIX + SERVER_ROUTE, server, methods=["POST"]),
                             Route(API_PREFIX + "{op}", call, methods=["POST"])])


async def _read_body(request: Any, limit: int | None = None) -> bytes | None:
    """The whole body of ``request``, or None when it is over ``limit`` bytes (default :data:`MAX_BODY`): then the rest is read and dropped, not
    kept (a client sending hundreds of megabytes cannot fill the server's memory, and still reads the answer)."""
    limit = MAX_BODY if limit is None else limit
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        elif chunks:
            chunks.clear()
    return b"".join(chunks) if size <= limit else None


NO_TOKEN = "a bearer token is required: `suzent serve --print-config` shows it"
WRONG_TOKEN = "the bearer token is wrong: use the one `suzent serve --print-config` shows"


class BearerToken:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (compared in constant time with
    :func:`hmac.compare_digest`), else 401 with ``WWW-Authenticate: Bearer`` and one line saying which:
    :data:`NO_TOKEN` (no ``Authorization`` header, another scheme, an empty token) or :data:`WRONG_TOKEN`.
    Lifespan events pass through (the MCP app's session manager starts and stops with them); a websocket without
    the token is closed (1008)."""

    def __init__(self, app: Any, token: str, stats: Stats | None = None) -> None:
        if not token:
            raise ValueError("an empty bearer token would let anyone in")
        self.app = app
        self._token = token.encode("utf-8")
        self.stats = stats

    def _refusal(self, scope: dict) -> str | None:
        """None when the request carries the token, else the 401's message. The first ``Authorization`` header
        counts."""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                given = given.strip()
                if scheme.lower() != b"bearer" or not given:
                    return NO_TOKEN
                return None if hmac.compare_digest(given, self._token) else WRONG_TOKEN
        return NO_TOKEN

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await _drain(receive)  # so the client reads a 401, not a reset, while it still sends its body
            body = _json_body({"error": {"type": "Unauthorized", "exit": errors.BAD_INPUT, "message": refusal}})
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        if self.stats is not None:
            self.stats.count("mcp")
        await self.app(scope, receive, send)


async def _drain(receive: Any, limit: int = DRAIN_LIMIT) -> None:
    """Read and drop a request body, up to ``limit`` bytes."""
    seen = 0
    while seen <= limit:
        message = await receive()
        if message.get("type") != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body"):
            return


def _check_port(port: int) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"the bound port must be an integer from 1 to 65535, got {port!r}")
    return port


def allowed_hosts(port: int) -> list[str]:
    """The exact ``Host`` header values the MCP endpoint accepts when bound to ``port`` (1-65535; ValueError
    otherwise): ``127.0.0.1:<port>``, ``localhost:<port>``, ``[::1]:<port>``, and the bare names only when ``port``
    is 80 (HTTP's default, which a client may leave out). Compared as whole strings, so no suffix
    (``127.0.0.1:<port>.evil.example``, ``localhost:<port>@evil``), other port, trailing dot or upper case passes:
    every client on this machine sends one of these exactly."""
    port = _check_port(port)
    bare = list(LOOPBACK_NAMES) if port == HTTP_DEFAULT_PORT else []
    return [f"{name}:{port}" for name in LOOPBACK_NAMES] + bare


def allowed_origins(port: int) -> list[str]:
    """The exact ``Origin`` header values the MCP endpoint accepts when bound to ``port`` (ValueError as
    :func:`allowed_hosts`): ``http://`` and one of :func:`allowed_hosts`' values (an Origin is scheme, host and
    port, no path). A request without an Origin (not a browser's cross-site one) is not refused for it."""
    return [f"http://{host}" for host in allowed_hosts(port)]


def mcp_http_app(mcp_server: Any, token: str, stats: Stats | None = None, *, port: int):
    """MCP over streamable HTTP at :data:`MCP_PATH` for ``mcp_server`` (an ``mcp.server.mcpserver.MCPServer``),
    behind :class:`BearerToken`, for a server bound to 127.0.0.1:``port`` (the real port, after binding). The SDK's
    transport security is on with exact values: a request whose Host is not one of :func:`allowed_hosts` (421) or
    whose Origin is not one of :func:`allowed_origins` (403) is refused (DNS rebinding). The app's lifespan runs
    the SDK's session manager: serve it with lifespan on (uvicorn's default), once per ``mcp_server``. Raises
    ValueError for an empty token or a port outside 1-65535."""
    from mcp.server.transport_security import TransportSecuritySettings

    # No "name:*" pattern: the SDK matches those by prefix (any suffix after the colon passed).
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts(port),
                                         allowed_origins=allowed_origins(port))
    inner = mcp_server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
    return BearerToken(inner, token, stats)
