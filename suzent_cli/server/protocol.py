"""The operations a suzent backend offers, their shapes, and how an error crosses the socket.

Two backends implement :class:`Backend`: :class:`suzent_cli.server.ops.LocalBackend` does the work in this process
(warm state), :class:`suzent_cli.server.client.RemoteBackend` asks a running ``suzent serve`` over its Unix socket.
The MCP surface (:mod:`suzent_cli.server.mcp_surface`) and the hooks take either, so ``suzent mcp`` relays to a
running server or serves in-process with the same code.

Every argument and every result is JSON-ready (str, int, float, bool, None, list, dict); bytes travel as base64
(``payload_b64``). The local API is ``POST /v1/<op>`` with the keyword arguments as a JSON object; the answer is the
result object (HTTP 200) or ``{"error": {"type", "message", "exit"}}`` (HTTP 4xx/5xx, :func:`error_json`), which the
client raises again as the same :class:`~suzent_cli.errors.SuzentError` subclass (:func:`error_from_json`).

Results (keys always present unless marked optional):

* ``recall`` → ``{"query", "mode", "hits": [hit], "note": str | None}``; a hit: ``{"id", "content" (the claim or
  fact text, no lifecycle markers), "score", "source_type" (log|vault|memory|legacy), "file" (path relative to its
  tier, or None), "line" (1-based line of a daily-log fact, or None), "chunk" (page chunk index, or None), "date",
  "session", "category", "tags", "confirmations" (int or None), "verified" (bool), "status" (claim status or
  None), "until" (the day a superseded claim stopped holding, or None), "cites" (the ``F:L`` daily-log lines a
  claim cites), "scope" (``""`` the person's, else the project key)}``. ``note`` says why the list is empty or short
  (no index yet, nothing relevant). Optional argument ``project`` (recall and remember): the scope of the request
  (:meth:`suzent_cli.server.ops.LocalBackend.recall`); the server never takes it from its own directory.
* ``remember`` → ``{"outcomes": [{"text", "outcome" (captured|confirmation|rejected), "category", "file" (the
  daily log's name; for a confirmation the recorded claim's source), "line" (1-based), "reason" (why rejected, or
  how it was classified), "classification" (turns only: new|revision|confirmation)}], "captured": int,
  "indexed": bool (the reindex of the touched log finished), "warnings": [str]}``; one outcome per given fact, in
  order (facts), or per extracted fact (a turn).
* ``forget`` → ``{"applied": bool, "matches": [{"content", "source" (label:file), "file", "line", "chunk"}],
  "tombstoned": int, "message": str, "claims": [{"page", "line"}], "warnings": [str]}`` and, for a dry run whose
  text matched no whole fact, ``"closest": [{"content", "id", "file", "where", "score"}]``; without ``apply``
  nothing is written (a dry run).
* ``status`` → the ``suzent status --json`` object (plus ``"server"`` when a server answers).
* ``list_pages`` → ``{"pages": [{"name" (vault-relative path), "title", "claims", "bytes", "modified"}]}``.
* ``read_page`` → ``{"name", "content"}`` (a vault page, or ``MEMORY.md`` by that name); read-only.
* ``briefing`` → ``{"text": str | None}``: the SessionStart briefing for ``cwd`` (None: nothing to say).
* ``hook_capture`` → ``{"report": dict | None, "warnings": [str], "indexed": bool}`` (the capture hook's drain
  report; ``indexed``: the touched logs were reindexed before the answer).
* ``hook_recall`` / ``hook_session_start`` → ``{"output": str | None, "warning": str | None}`` (the hook's stdout
  line, already in Claude Code's hook output format).

One more op, on the local API only (:data:`CLI_OP`, not a :class:`Backend` method): ``cli`` runs a whole CLI command
line relayed by :mod:`suzent_cli.cli.relay` (``{"argv", "env", "stdout_tty", "stderr_tty", "terminal_size",
"stdout_encoding", "stderr_encoding", "version"}``) and answers ``{"ran": true, "exit", "stdout_b64", "stderr_b64"}`` or
``{"ran": false, "why"}`` (:func:`suzent_cli.cli.relayed.run`).
"""

from __future__ import annotations

from typing import Any, Protocol

from suzent_cli import errors
from suzent_cli.hooks.stdin import MAX_PAYLOAD_BYTES as MAX_PAYLOAD_BYTES  # re-exported, see below

OPS = ("recall", "remember", "forget", "status", "list_pages", "read_page", "briefing", "hook_capture",
       "hook_recall", "hook_session_start")
SERVER_ROUTE = "server"  # POST /v1/server: the server block alone (suzent status; the relay's liveness probe)
CLI_OP = "cli"  # the local API only (no Backend method, never on MCP): a whole CLI command line run by the server
API_PREFIX = "/v1/"
# MAX_PAYLOAD_BYTES (imported above): the largest hook payload (a few hundred bytes in practice); the server refuses
# larger ones, and no hook reads more of its stdin. One constant, owned by the hooks' stdin rule.
PROTOCOL_VERSION = 1


class Backend(Protocol):
    """What the MCP surface and the hooks call. Each method raises :class:`~suzent_cli.errors.SuzentError`
    (subclasses as the CLI would) for bad input or a failed operation, and returns the shape in the module
    docstring."""

    def recall(self, query: str, *, limit: int = 10, mode: str = "hybrid", since: str | None = None,
               until: str | None = None, category: str | None = None, project: str | None = None) -> dict[str, Any]: ...

    def remember(self, *, facts: list[str] | None = None, turn: str | None = None, session: str | None = None,
                 category: str | None = None, project: str | None = None) -> dict[str, Any]: ...

    def forget(self, *, text: str | None = None, id: str | None = None, apply: bool = False) -> dict[str, Any]: ...

    def status(self) -> dict[str, Any]: ...

    def list_pages(self) -> dict[str, Any]: ...

    def read_page(self, name: str) -> dict[str, Any]: ...

    def briefing(self, *, cwd: str | None = None) -> dict[str, Any]: ...

    def hook_capture(self, *, payload_b64: str, timeout: float, extractor: str | None = None) -> dict[str, Any]: ...

    def hook_recall(self, *, payload_b64: str, mode: str = "hybrid", limit: int = 5) -> dict[str, Any]: ...

    def hook_session_start(self, *, payload_b64: str) -> dict[str, Any]: ...


def error_json(exc: BaseException) -> dict[str, Any]:
    """``{"error": {"type", "message", "exit"}}`` for ``exc``: a :class:`SuzentError` keeps its class name and exit
    code; anything else is ``"InternalError"`` with exit 1 and :func:`~suzent_cli.errors.describe`'s line."""
    if isinstance(exc, errors.SuzentError):
        return {"error": {"type": type(exc).__name__, "message": errors.describe(exc),
                          "exit": getattr(exc, "exit_code", errors.FAILED)}}
    return {"error": {"type": "InternalError", "message": errors.describe(exc), "exit": errors.FAILED}}


class ServerError(errors.SuzentError):
    """The server failed an operation for a reason that is not one of the CLI's errors (its message says which)."""


def error_from_json(data: dict[str, Any]) -> errors.SuzentError:
    """The exception :func:`error_json` described: the same :class:`SuzentError` subclass when it is one of
    :mod:`suzent_cli.errors`' classes, else :class:`ServerError`; the message is the server's line."""
    body = data.get("error") if isinstance(data, dict) else None
    body = body if isinstance(body, dict) else {}
    cls = getattr(errors, str(body.get("type", "")), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.SuzentError)):
        cls = ServerError
    exc = cls.__new__(cls)
    errors.SuzentError.__init__(exc, str(body.get("message") or "the server failed without a message"))
    return exc
