"""suzent serve's plumbing in-process: the local API's routing and error mapping, the bearer token, the runtime files
(token, sockets, serve.json), the watcher's filter, and the whole :func:`serve` with a fake backend (a class with the
protocol's methods) and a tiny real MCP server, stopped by its ``stop`` event. The real backend, signals and
processes are tests/integration/test_serve_process.py's."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

import httpx2
import pytest

from suzent_cli import errors
from suzent_cli.server import paths, runtime
from suzent_cli.server.http import (
    BearerToken,
    allowed_hosts,
    allowed_origins,
    http_status,
    local_app,
    mcp_http_app,
)
from suzent_cli.server.protocol import OPS, error_from_json
from suzent_cli.server.stats import Stats

DEADLINE = 60.0  # seconds: generous, only a ceiling for polling


class FakeBackend:
    """The protocol's ten methods with canned answers; ``forget`` fails unexpectedly, ``remember`` as bad input."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def recall(self, query, *, limit=10, mode="hybrid", since=None, until=None, category=None):
        self.calls.append(("recall", {"query": query, "limit": limit, "mode": mode}))
        return {"query": query, "mode": mode, "hits": [], "note": "no index yet"}

    def remember(self, *, facts=None, turn=None, session=None, category=None):
        if not facts and not turn:
            raise errors.InputInvalid("remember needs facts or a turn")
        return {"outcomes": [], "captured": len(facts or []), "indexed": False, "warnings": []}

    def forget(self, *, text=None, id=None, apply=False):
        raise RuntimeError("the disk caught fire")

    def status(self):
        return {"today": "2026-06-10"}

    def list_pages(self):
        raise errors.LockTimeout("the vault lock is busy")

    def read_page(self, name):
        return {"name": name, "content": "# page\n"}

    def briefing(self, *, cwd=None):
        return {"text": None}

    def hook_capture(self, *, payload_b64, timeout, extractor=None):
        return {"report": {"bytes": len(base64.b64decode(payload_b64))}, "warnings": []}

    def hook_recall(self, *, payload_b64, mode="hybrid", limit=5):
        return {"output": None, "warning": None}

    def hook_session_start(self, *, payload_b64):
        return {"output": None, "warning": None}


def test_the_fake_backend_has_every_op():
    assert all(callable(getattr(FakeBackend, op)) for op in OPS)


def _post(app, path: str, body: bytes | None = None, headers: dict | None = None) -> httpx2.Response:
    async def go():
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://test") as client:
            return await client.post(path, content=body if body is not None else b"", headers=headers or {})

    return asyncio.run(go())


def test_a_body_over_the_limit_is_refused_without_being_held(monkeypatch):
    # The local API read any body whole into memory: 300 MB posted to the socket took 300 MB of the server's memory.
    from suzent_cli.server import http

    monkeypatch.setattr(http, "MAX_BODY", 1000)
    backend, stats = FakeBackend(), Stats()
    app = local_app(backend, stats)
    big = json.dumps({"query": "t" * 5000}).encode()
    r = _post(app, "/v1/recall", big)
    assert r.status_code == 413
    assert r.json()["error"]["type"] == "InputInvalid" and "over 1000 bytes" in r.json()["error"]["message"]
    assert _post(app, "/v1/recall", json.dumps({"query": "tea"}).encode()).status_code == 200


def test_a_caller_that_hangs_up_mid_body_is_dropped_without_a_traceback(caplog):
    """A hook its watchdog ended mid-send: starlette raised ClientDisconnect out of the handler ("Exception in ASGI
    application" and a traceback in the server's log). Now the request is dropped, and no op runs."""
    backend, stats = FakeBackend(), Stats()
    app = local_app(backend, stats)
    sent: list[dict] = []
    parts = [{"type": "http.request", "body": b'{"facts": ["[x]', "more_body": True}, {"type": "http.disconnect"}]

    async def receive():
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/remember", "raw_path": b"/v1/remember", "query_string": b"", "root_path": "",
             "headers": [(b"content-length", b"1000000")], "client": ("test", 1), "server": ("test", 80)}
    asyncio.run(app(scope, receive, send))  # raised ClientDisconnect before the fix
    assert backend.calls == [] and sent and sent[0]["status"] == 400
    assert "Traceback" not in caplog.text


def test_an_op_call_passes_the_body_as_keyword_arguments():
    backend, stats = FakeBackend(), Stats()
    r = _post(local_app(backend, stats), "/v1/recall", json.dumps({"query": "tea", "limit": 3}).encode())
    assert r.status_code == 200
    assert r.json() == {"query": "tea", "mode": "hybrid", "hits": [], "note": "no index yet"}
    assert backend.calls == [("recall", {"query": "tea", "limit": 3, "mode": "hybrid"})]
    assert _post(local_app(backend, stats), "/v1/briefing").json() == {"text": None}  # empty body: no arguments
    assert stats.snapshot()["requests"] == {"total": 2, "by_op": {"briefing": 1, "recall": 1}}


def test_status_gains_the_server_block():
    stats = Stats(mcp_url="http://127.0.0.1:1/mcp", socket="/x.sock")
    data = _post(local_app(FakeBackend(), stats), "/v1/status").json()
    assert data["today"] == "2026-06-10"
    server = data["server"]
    assert server["pid"] == os.getpid() and server["mcp_url"] == "http://127.0.0.1:1/mcp"
    assert server["requests"] == {"total": 1, "by_op": {"status": 1}} and server["last_error"] is None
    assert {"started", "uptime_s", "socket", "chain", "watcher"} <= set(server)


@pytest.mark.parametrize(("path", "body", "status", "kind", "says"), [
    ("/v1/nosuchop", b"{}", 404, "InputInvalid", "unknown operation 'nosuchop'"),
    ("/v1/recall", b"{not json", 400, "InputInvalid", "not valid JSON"),
    ("/v1/recall", b"[1, 2]", 400, "InputInvalid", "must be a JSON object"),
    ("/v1/recall", b'{"query": "x", "colour": "red"}', 400, "InputInvalid", "colour"),
    ("/v1/read_page", b"{}", 400, "InputInvalid", "name"),
    ("/v1/remember", b"{}", 400, "InputInvalid", "remember needs facts or a turn"),
    ("/v1/list_pages", b"{}", 409, "LockTimeout", "the vault lock is busy"),
])
def test_bad_calls_and_suzent_errors_are_4xx_error_objects(path, body, status, kind, says):
    stats = Stats()
    r = _post(local_app(FakeBackend(), stats), path, body)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["type"] == kind and says in error["message"]
    assert isinstance(error_from_json(r.json()), getattr(errors, kind))  # the client raises the same class again
    assert stats.snapshot()["last_error"] is None  # a caller's mistake is no server error


def test_a_lone_surrogate_in_a_body_is_replaced_not_a_500():
    """JSON may escape a lone surrogate ("\\ud800"); it reached the ops as text no UTF-8 can hold (an
    InternalError, or a traceback in the server's log): it arrives as U+FFFD, like a bad byte."""
    backend, stats = FakeBackend(), Stats()
    r = _post(local_app(backend, stats), "/v1/recall", b'{"query": "tea \\ud800"}')
    assert r.status_code == 200 and r.json()["query"] == "tea \ufffd"
    assert stats.snapshot()["last_error"] is None


def test_an_unexpected_exception_is_a_500_internal_error_and_the_last_error():
    stats = Stats()
    r = _post(local_app(FakeBackend(), stats), "/v1/forget", b'{"text": "x"}')
    assert r.status_code == 500
    assert r.json() == {"error": {"type": "InternalError", "message": "RuntimeError: the disk caught fire",
                                  "exit": errors.FAILED}}
    last = stats.snapshot()["last_error"]
    assert last["op"] == "forget" and "the disk caught fire" in last["message"] and last["time"].endswith("Z")


def test_http_status_of_each_error_kind():
    assert http_status(errors.ConfigInvalid("x")) == 400
    assert http_status(errors.LockTimeout("x")) == 409
    assert http_status(errors.IndexMissing("x")) == 422
    assert http_status(ValueError("x")) == 500


async def _inner(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"in"})


@pytest.mark.parametrize(("header", "says"), [
    (None, "a bearer token is required"), ("Basic s3cret", "a bearer token is required"),
    ("Bearer ", "a bearer token is required"), ("Bearer wrong", "the bearer token is wrong"),
    ("bearer s3cret-x", "the bearer token is wrong"), ("Bearer s3cre", "the bearer token is wrong")])
def test_the_token_middleware_refuses_without_the_right_bearer_token_saying_which(header, says):
    stats = Stats()
    r = _post(BearerToken(_inner, "s3cret", stats), "/mcp", b"{}", {"Authorization": header} if header else {})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert r.json()["error"]["type"] == "Unauthorized"
    message = r.json()["error"]["message"]
    assert message.startswith(says) and "`suzent serve --print-config`" in message, message
    assert stats.snapshot()["requests"]["total"] == 0


def test_the_token_middleware_lets_the_right_token_through_and_counts_it():
    stats = Stats()
    for header in ("Bearer s3cret", "bearer s3cret"):
        r = _post(BearerToken(_inner, "s3cret", stats), "/mcp", b"{}", {"Authorization": header})
        assert (r.status_code, r.text) == (200, "in")
    assert stats.snapshot()["requests"]["by_op"] == {"mcp": 2}
    with pytest.raises(ValueError):
        BearerToken(_inner, "")


def _tiny_mcp():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("suzent-test")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return f"echo: {text}"

    return server


def test_the_mcp_app_needs_the_token_before_anything_reaches_the_sdk():
    app = mcp_http_app(_tiny_mcp(), "s3cret", port=PORT)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    assert _post(app, "/mcp", body, {"Host": "127.0.0.1:1"}).status_code == 401
    assert _post(app, "/mcp", body, {"Authorization": "Bearer nope"}).status_code == 401


PORT = 8765  # the port the app under test is told it is bound to
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _mcp_statuses(requests: list[dict]) -> list[int]:
    """The status of an MCP ``initialize`` POST with the right token and each of ``requests``' extra headers,
    through :func:`mcp_http_app` for a server on :data:`PORT`, its lifespan (the SDK's session manager) running."""
    app = mcp_http_app(_tiny_mcp(), "s3cret", port=PORT)

    async def go():
        inner = app.app
        async with inner.router.lifespan_context(inner):
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://test") as client:
                return [(await client.post("/mcp", json=INITIALIZE, headers={
                    "Authorization": "Bearer s3cret", "Accept": "application/json, text/event-stream", **extra})
                         ).status_code for extra in requests]

    return asyncio.run(go())


GOOD_HOSTS = [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}"]
BAD_HOSTS = [f"127.0.0.1:{PORT}.evil.example", f"localhost:{PORT}.evil.example", f"127.0.0.1:{PORT}@evil.example",
             f"localhost:{PORT}evil", "localhost:evil", "127.0.0.1.evil.example", f"127.0.0.1.evil.example:{PORT}",
             f"evil.example:{PORT}", f"localhost:{PORT + 1}", "localhost:1", f"127.0.0.1:0{PORT}", "localhost",
             "127.0.0.1", f"LOCALHOST:{PORT}", f"Localhost:{PORT}", f"localhost.:{PORT}", f"127.0.0.1.:{PORT}",
             f"::1:{PORT}", "[::1]", f"[::1]:{PORT}.evil.example", f"[::1].evil.example:{PORT}", f"localhost:{PORT}:1"]
GOOD_ORIGINS = [f"http://{host}" for host in GOOD_HOSTS]
BAD_ORIGINS = ["http://localhost:evil", f"http://localhost:{PORT}.evil.example", f"http://localhost:{PORT}@evil.example",
               f"https://localhost:{PORT}", "http://localhost", f"http://localhost:{PORT + 1}",
               f"http://LOCALHOST:{PORT}", f"http://localhost.:{PORT}", f"http://localhost:{PORT}/", "null",
               "http://evil.example", f"http://127.0.0.1.evil.example:{PORT}", f"localhost:{PORT}"]


def test_the_mcp_app_accepts_only_loopback_names_with_exactly_its_port():
    statuses = _mcp_statuses([{"Host": h} for h in GOOD_HOSTS + BAD_HOSTS])
    assert dict(zip(GOOD_HOSTS + BAD_HOSTS, statuses, strict=True)) == {
        **dict.fromkeys(GOOD_HOSTS, 200), **dict.fromkeys(BAD_HOSTS, 421)}


def test_the_mcp_app_accepts_only_http_loopback_origins_with_exactly_its_port():
    origins = [None, *GOOD_ORIGINS, *BAD_ORIGINS]
    statuses = _mcp_statuses([{"Host": f"127.0.0.1:{PORT}", **({"Origin": o} if o else {})} for o in origins])
    assert dict(zip(origins, statuses, strict=True)) == {
        None: 200, **dict.fromkeys(GOOD_ORIGINS, 200), **dict.fromkeys(BAD_ORIGINS, 403)}


def test_the_allowed_values_are_exact_and_name_the_bare_host_only_on_port_80():
    assert allowed_hosts(8765) == ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]
    assert allowed_origins(8765) == ["http://127.0.0.1:8765", "http://localhost:8765", "http://[::1]:8765"]
    assert set(allowed_hosts(80)) == {"127.0.0.1:80", "localhost:80", "[::1]:80", "127.0.0.1", "localhost", "[::1]"}
    assert not any(value.endswith(":*") for value in allowed_hosts(1) + allowed_origins(1))  # the SDK's prefix match
    for port in (0, 65536, -1, True, "8765"):
        with pytest.raises(ValueError):
            allowed_hosts(port)


# --- runtime files --------------------------------------------------------------------------------------------

def test_the_token_is_made_once_private_and_reused(tmp_path):
    home = tmp_path / "h"
    token = runtime.ensure_token(home)
    path = paths.token_path(home)
    assert len(token) >= 40 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(paths.run_dir(home).stat().st_mode) == 0o700
    assert runtime.ensure_token(home) == token
    assert [p.name for p in paths.run_dir(home).iterdir()] == ["token"]  # no temp file left behind


def test_a_token_readable_by_others_is_made_private_with_a_warning(tmp_path):
    home = tmp_path / "h"
    token = runtime.ensure_token(home)
    os.chmod(paths.token_path(home), 0o644)
    warnings: list[str] = []
    assert runtime.ensure_token(home, warn=warnings.append) == token
    assert stat.S_IMODE(paths.token_path(home).stat().st_mode) == 0o600
    assert len(warnings) == 1 and "readable by others" in warnings[0]


def test_an_empty_or_odd_token_file_is_refused(tmp_path):
    home = tmp_path / "h"
    paths.run_dir(home).mkdir(parents=True)
    paths.token_path(home).write_text("\n")
    os.chmod(paths.token_path(home), 0o600)
    with pytest.raises(runtime.UnsafeRuntime, match="is empty"):
        runtime.ensure_token(home)
    paths.token_path(home).unlink()
    paths.token_path(home).mkdir()
    with pytest.raises(runtime.UnsafeRuntime, match="not a regular file"):
        runtime.ensure_token(home)


def test_the_run_dir_is_made_private_again(tmp_path):
    run = paths.run_dir(tmp_path)
    run.mkdir(mode=0o755)
    os.chmod(run, 0o755)
    runtime.prepare_run_dir(tmp_path)
    assert stat.S_IMODE(run.stat().st_mode) == 0o700


def test_the_unix_socket_is_0600_and_a_stale_one_is_replaced(tmp_path):
    run = runtime.prepare_run_dir(tmp_path)
    path = run / "serve.sock"
    old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old.bind(str(path))  # a dead server's leftover: bound, never cleaned up
    old.close()
    sock, ident = runtime.bind_unix(path, run)
    try:
        st = os.lstat(path)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert ident == (st.st_dev, st.st_ino)
    finally:
        sock.close()
    path.unlink()
    path.write_text("not a socket")
    with pytest.raises(runtime.UnsafeRuntime, match="not a socket"):
        runtime.bind_unix(path, run)


def test_the_long_path_fallback_folder_is_private(tmp_path, monkeypatch):
    # A short runtime dir, as a real XDG_RUNTIME_DIR (/run/user/UID) is: tmp_path's own length varies (under
    # pytest-xdist it gains popen-gwN/), and the socket path must stay under AF_UNIX's 108 bytes.
    xdg = Path(tempfile.mkdtemp(prefix="xdg", dir="/tmp" if Path("/tmp").is_dir() else None))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
        home = tmp_path / ("h" * 120)
        path = paths.socket_path(home)
        assert path.parent == xdg / "suzent"
        sock, _ = runtime.bind_unix(path, runtime.prepare_run_dir(home))
        sock.close()
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    finally:
        shutil.rmtree(xdg, ignore_errors=True)


def test_every_spelling_of_a_home_names_the_same_socket(tmp_path, monkeypatch):
    # The fallback socket's name hashed the home as spelled: a hook whose SUZENT_HOME went through a symlink or ".."
    # looked for another socket, never found the running server and took the slow cold path, silently.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir()
    long_home = tmp_path / ("h" * 120)
    long_home.mkdir()
    short_link, long_link = tmp_path / "s", tmp_path / ("l" * 110)
    short_link.symlink_to(long_home)
    long_link.symlink_to(tmp_path)
    spellings = [long_home, short_link, long_home / ".." / long_home.name, long_link / long_home.name]
    assert len({paths.socket_path(home) for home in spellings}) == 1
    short_home = tmp_path / "home"
    short_home.mkdir()
    (tmp_path / ("k" * 110)).symlink_to(short_home)
    assert paths.socket_path(tmp_path / ("k" * 110)) == paths.socket_path(short_home)
    assert paths.socket_path(short_home) == Path(os.path.realpath(short_home)) / "server" / "serve.sock"


def test_tcp_binds_loopback_only_and_a_taken_port_is_one_clear_error():
    sock = runtime.bind_tcp(0)
    try:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        with pytest.raises(runtime.PortInUse, match=f"port {port} on 127.0.0.1 is in use") as caught:
            runtime.bind_tcp(port)
        assert caught.value.exit_code == errors.BAD_INPUT
    finally:
        sock.close()


def test_client_config_quotes_for_the_shell(tmp_path):
    import shlex

    home = tmp_path / "my home"
    command = str(tmp_path / "my bin" / "suzent")
    config = runtime.client_config(home, 8767, "tok-en", command=command)
    assert shlex.split(config["claude_code_http"]) == [
        "claude", "mcp", "add", "--transport", "http", "suzent", "http://127.0.0.1:8767/mcp",
        "--header", "Authorization: Bearer tok-en"]
    assert shlex.split(config["claude_code_stdio"]) == ["claude", "mcp", "add", "suzent", "--", command, "--home",
                                                        str(home), "mcp"]
    assert config["claude_desktop"]["mcpServers"]["suzent"] == {"command": command, "args": ["--home", str(home),
                                                                                             "mcp"]}
    assert config["cursor"]["mcpServers"]["suzent"]["headers"] == {"Authorization": "Bearer tok-en"}


def test_client_config_names_the_suzent_command_by_its_absolute_path(tmp_path, monkeypatch):
    # Claude Desktop and Cursor start the server without the user's shell PATH: a bare "suzent" would not be found.
    script = tmp_path / "bin" / "suzent"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr("sys.argv", [str(script), "serve", "--print-config"])
    assert runtime.suzent_command() == str(script)
    config = runtime.client_config(tmp_path / "home", 8767, "tok")
    assert config["claude_desktop"]["mcpServers"]["suzent"]["command"] == str(script)
    monkeypatch.setattr("sys.argv", ["/somewhere/suzent_cli/__main__.py"])  # python -m suzent_cli
    monkeypatch.setenv("PATH", str(script.parent))
    assert runtime.suzent_command() == str(script)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert runtime.suzent_command() == "suzent"


# --- the watcher's choices ------------------------------------------------------------------------------------

def test_the_watcher_keeps_only_markdown_outside_hidden_folders_and_the_index(settings):
    from watchfiles import Change

    from suzent_cli.server.serve import changes_to_reindex, watch_filter

    vault, archive = settings.paths.vault_dir, settings.paths.archive_dir
    keep = watch_filter(settings, [archive, vault])
    assert keep(Change.modified, str(vault / "people" / "ana.md"))
    assert keep(Change.added, str(archive / "2026-06-10.md"))
    assert not keep(Change.modified, str(vault / ".state" / "x.md"))
    assert not keep(Change.modified, str(vault / ".obsidian" / "workspace.md"))
    assert not keep(Change.modified, str(vault / "a.json"))
    assert not keep(Change.added, str(vault / ".a.md.123.tmp"))
    assert not keep(Change.added, str(vault / ".a.md"))
    assert not keep(Change.modified, str(settings.paths.index_dir / "x.md"))
    (vault / "new-zone").mkdir(parents=True)
    assert keep(Change.added, str(vault / "new-zone"))  # a new folder: its first page may pass unseen by inotify
    assert not keep(Change.modified, str(vault / "new-zone"))
    assert changes_to_reindex({(Change.added, str(vault / "new-zone"))}) is None
    assert changes_to_reindex({(Change.modified, str(vault / "b.md")), (Change.added, str(vault / "a.md"))}) == [
        vault / "a.md", vault / "b.md"]
    assert changes_to_reindex({(Change.modified, str(vault / "b.md")), (Change.deleted, str(vault / "a.md"))}) is None


# --- the whole server, in-process ------------------------------------------------------------------------------

class FakeIndex:
    def __init__(self) -> None:
        self.requests: list[list[Path] | None] = []

    def reindex(self, files=None, *, wait=None) -> bool:
        self.requests.append(files)
        return False


class FakeWarm:
    def __init__(self, settings) -> None:
        self._settings = settings
        self.embedder = None
        self.index = FakeIndex()
        self.closed = False

    def settings(self):
        return self._settings

    def close(self) -> None:
        self.closed = True


def _until(condition, what: str):
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def _uds_post(sock_path: Path, op: str, body: dict) -> httpx2.Response:
    with httpx2.Client(transport=httpx2.HTTPTransport(uds=str(sock_path)), base_url="http://suzent") as client:
        return client.post(f"/v1/{op}", json=body, timeout=30)


async def _mcp_echo(url: str, token: str) -> str:
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    return result.content[0].text


def test_serve_runs_both_listeners_the_watcher_and_cleans_up(settings):
    from suzent_cli.server.runtime import is_running
    from suzent_cli.server.serve import serve

    home = settings.paths.home
    settings.paths.vault_dir.mkdir(parents=True)
    warm, backend, stop = FakeWarm(settings), FakeBackend(), threading.Event()
    result: dict = {}
    lines: list[str] = []

    def run():
        result["code"] = serve(settings, port=0, chain=False, watch=True, warm=warm, backend=backend,
                               mcp_server=_tiny_mcp(), stop=stop, announce=lines.append)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        # serve.json is written twice: first the pid alone (start-up), then the full record once both listeners are
        # bound. Wait for the full one (reading the first made this test fail on a loaded machine).
        info = _until(lambda: (found := runtime.read_info(home)) and "socket" in found and found, "the full serve.json")
        sock_path = paths.socket_path(home)
        assert info["pid"] == os.getpid() and info["socket"] == str(sock_path)
        assert info["mcp_url"] == f"http://127.0.0.1:{info['port']}/mcp"
        assert stat.S_IMODE(os.lstat(sock_path).st_mode) == 0o600
        assert is_running(home)

        status = _uds_post(sock_path, "status", {}).json()
        assert status["server"]["chain"]["state"] == "off"
        _until(lambda: _uds_post(sock_path, "status", {}).json()["server"]["watcher"]["state"] == "watching",
               "the watcher")

        token = runtime.ensure_token(home)
        assert asyncio.run(_mcp_echo(info["mcp_url"], token)) == "echo: hi"
        refused = httpx2.post(info["mcp_url"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                              headers={"Authorization": "Bearer wrong"}, timeout=30)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        rebinding = httpx2.post(info["mcp_url"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"Authorization": f"Bearer {token}", "Host": "evil.example:80"}, timeout=30)
        assert rebinding.status_code in (400, 421)  # the SDK's DNS-rebinding guard

        # no chain, the watcher on: one catch-up pass of what changed before the watcher ran (serve.settle_thread)
        _until(lambda: warm.index.requests == [None], "the catch-up pass")
        page = settings.paths.vault_dir / "people" / "ana.md"
        page.parent.mkdir()
        _until(lambda: warm.index.requests.count(None) > 1, "a whole pass after a new folder")
        wholes = warm.index.requests.count(None)
        (settings.paths.vault_dir / ".state").mkdir()
        (settings.paths.vault_dir / ".state" / "noise.md").write_text("x")
        page.write_text("# Ana\n")
        _until(lambda: any(files and page in files for files in warm.index.requests), "a reindex of the page")
        assert not any(files and any(".state" in str(f) for f in files) for files in warm.index.requests)
        page.unlink()
        _until(lambda: warm.index.requests.count(None) > wholes, "a whole pass after a deletion")
        counts = _uds_post(sock_path, "status", {}).json()["server"]
        assert counts["requests"]["by_op"]["status"] >= 3 and counts["requests"]["by_op"]["mcp"] >= 1
        assert counts["watcher"]["events"] >= 3
    finally:
        stop.set()
        thread.join(DEADLINE)
    assert not thread.is_alive() and result["code"] == 0
    assert warm.closed
    assert not paths.socket_path(home).exists() and not paths.info_path(home).exists()
    assert is_running(home) is False
    assert any("suzent serve: pid" in line for line in lines)


def test_a_second_server_on_the_same_home_is_refused_naming_the_first(settings):
    from filelock import FileLock

    from suzent_cli.server.serve import serve

    runtime.prepare_run_dir(settings.paths.home)
    runtime.write_info(settings.paths.home, {"pid": 4242})
    with FileLock(str(paths.lock_path(settings.paths.home)), timeout=0):
        with pytest.raises(runtime.ServerRunning, match=r"already running .*\(pid 4242\)") as caught:
            serve(settings, port=0, chain=False, watch=False, warm=FakeWarm(settings), backend=FakeBackend(),
                  mcp_server=_tiny_mcp())
    assert caught.value.exit_code == errors.BUSY
    assert runtime.read_info(settings.paths.home) == {"pid": 4242}  # the running server's file is left alone


def test_while_it_starts_a_killed_servers_file_no_longer_speaks_for_it(settings):
    # A server killed with SIGKILL leaves serve.json naming its pid and port. While the next one starts, a second
    # serve, suzent status and --print-config must not read the dead server's pid and port from it.
    from suzent_cli.server.serve import serve

    home = settings.paths.home
    runtime.prepare_run_dir(home)
    runtime.write_info(home, {"pid": 4242, "port": 9, "mcp_url": "http://127.0.0.1:9/mcp"})
    seen: dict = {}

    class Probe:
        """The tiny MCP server; records serve.json when serve() builds its HTTP app (mid start-up)."""

        def __init__(self):
            self.inner = _tiny_mcp()

        def streamable_http_app(self, **kwargs):
            seen["info"] = runtime.read_info(home)
            seen["port"] = runtime.running_port(home)
            return self.inner.streamable_http_app(**kwargs)

    stop = threading.Event()
    stop.set()  # stop as soon as it serves
    serve(settings, port=0, chain=False, watch=False, warm=FakeWarm(settings), backend=FakeBackend(),
          mcp_server=Probe(), stop=stop, announce=lambda line: None)
    assert seen["info"]["pid"] == os.getpid() and "port" not in seen["info"]
    assert seen["port"] is None


# --- what suzent status shows, and the CLI's one-line refusals -------------------------------------------------

def test_the_server_route_answers_the_counters_alone_uncounted():
    stats = Stats(mcp_url="http://127.0.0.1:1/mcp")
    app = local_app(FakeBackend(), stats)
    first = _post(app, "/v1/server").json()
    assert first["pid"] == os.getpid() and first["requests"]["total"] == 0 and "today" not in first
    assert _post(app, "/v1/server").json()["requests"]["total"] == 0


def test_server_state_when_none_runs_and_when_one_left_its_files(tmp_path):
    home = tmp_path / "h"
    assert runtime.server_state(home) == {"running": False, "stale": False}
    runtime.prepare_run_dir(home)
    runtime.write_info(home, {"pid": 4242})
    paths.lock_path(home).touch()
    assert runtime.server_state(home) == {"running": False, "stale": True}
    assert runtime.running_port(home) is None


def test_server_state_of_a_held_lock_without_a_listener_says_so(tmp_path):
    from filelock import FileLock

    home = tmp_path / "h"
    runtime.prepare_run_dir(home)
    runtime.write_info(home, {"pid": 4242, "port": 9, "mcp_url": "http://127.0.0.1:9/mcp"})
    with FileLock(str(paths.lock_path(home)), timeout=0):
        state = runtime.server_state(home, timeout=1)
        assert runtime.running_port(home) == 9
    assert state["running"] is True and state["pid"] == 4242 and "no usable answer" in state["no_answer"]


@pytest.mark.parametrize(("server", "says"), [
    ({"running": False, "stale": False}, ["server: not running: hooks and MCP use the cold path"]),
    ({"running": False, "stale": True}, ["the next suzent serve replaces it"]),
    ({"running": None, "unknown": "cannot probe x"}, ["server: unknown: cannot probe x"]),
    ({"running": True, "pid": 7, "started": "2026-06-10T08:00:00Z", "mcp_url": "http://127.0.0.1:8767/mcp",
      "no_answer": "no answer within 3 s"}, ["server: running, pid 7", "answer: none: no answer within 3 s"]),
    ({"running": True, "pid": 7, "started": "2026-06-10T08:00:00Z", "mcp_url": "http://127.0.0.1:8767/mcp",
      "uptime_s": 8040, "requests": {"total": 3, "by_op": {"mcp": 1, "recall": 2}},
      "last_error": {"time": "2026-06-10T09:00:00Z", "op": "recall", "message": "RuntimeError: boom"},
      "chain": {"state": "waiting", "passes": 1, "next_pass": "2026-06-10T10:00:00Z"},
      "watcher": {"state": "watching", "events": 2}},
     ["server: running, pid 7, since 2026-06-10T08:00:00Z, up 2h 14m", "MCP: http://127.0.0.1:8767/mcp",
      "requests: 3 (mcp 1, recall 2)", "last error: 2026-06-10T09:00:00Z recall: RuntimeError: boom",
      "chain: waiting, 1 pass, next at 2026-06-10T10:00:00Z", "watcher: watching, 2 change batches"]),
])
def test_status_words_the_server(server, says):
    from suzent_cli.cli.render import server_rows

    text = "\n".join(f"{label}: {value}" for label, value in server_rows(server))
    for line in says:
        assert line in text


def test_print_config_with_port_zero_and_no_server_is_one_line(home):
    from conftest import invoke

    r = invoke(home, "serve", "--print-config", "--port", "0")
    assert r.returncode == errors.BAD_INPUT and r.stderr.count("\n") == 1 and "start suzent serve" in r.stderr
    r = invoke(home, "serve", "--print-config", "--port", "70000")
    assert r.returncode == errors.BAD_INPUT and "--port must be between 0 and 65535" in r.stderr
    r = invoke(home, "serve", "--print-config", "--port", "9999", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["url"] == "http://127.0.0.1:9999/mcp"


def test_serve_on_a_taken_port_is_one_line_exit_2_and_leaves_nothing(home):
    from conftest import invoke

    taken = runtime.bind_tcp(0)
    try:
        r = invoke(home, "serve", "--no-chain", "--no-watch", "--port", str(taken.getsockname()[1]))
    finally:
        taken.close()
    assert r.returncode == errors.BAD_INPUT, r.stderr
    assert r.stderr.count("\n") == 1 and "is in use" in r.stderr and "--port" in r.stderr
    assert not paths.socket_path(home).exists() and not paths.info_path(home).exists()
    from suzent_cli.server.runtime import is_running

    assert is_running(home) is False


def test_a_relayed_status_is_counted_but_keeps_no_server_alive(monkeypatch):
    """A prompt widget polling `suzent status` (relayed to the server) must not hold off an auto-started server's
    idle exit; a relayed `recall` is activity."""
    from suzent_cli.server import stats as stats_mod

    clock = [1000.0]
    monkeypatch.setattr(stats_mod.time, "monotonic", lambda: clock[0])
    stats = Stats()
    ran = []
    app = local_app(FakeBackend(), stats, cli=lambda **kw: ran.append(kw["argv"]) or {"ran": True})
    clock[0] += 50
    for argv in (["status"], ["--home=/h", "status", "--json"], ["paths", "--json"]):
        assert _post(app, "/v1/cli", json.dumps({"argv": argv}).encode()).status_code == 200
    assert stats.idle_seconds() == 50 and len(ran) == 3
    assert stats.snapshot()["requests"]["by_op"]["cli"] == 3
    assert _post(app, "/v1/cli", json.dumps({"argv": ["--home=/h", "recall", "tea"]}).encode()).status_code == 200
    assert stats.idle_seconds() == 0


def test_serve_stop_says_stopped_only_once_the_process_is_gone(tmp_path, monkeypatch):
    """The server releases serve.lock and may then finish an index batch before its process ends; a trial saw
    'stopped the server (pid N)' while pid N ran for 20 s more. stop_server now waits for the process too."""
    from suzent_cli.server import runtime

    probes = iter([True, False])  # the lock: held at the check, released at the first poll
    alive = iter([True, True, False])  # the process: still finishing after the release, then gone
    monkeypatch.setattr(runtime, "is_running", lambda home: next(probes, False))
    monkeypatch.setattr(runtime, "running_pid", lambda home: 4242)
    monkeypatch.setattr(runtime, "_alive", lambda pid: next(alive))
    monkeypatch.setattr(runtime, "STOP_POLL", 0)
    killed = []
    monkeypatch.setattr(runtime.os, "kill", lambda pid, sig: killed.append(pid))
    result = runtime.stop_server(tmp_path, wait=60)
    assert result["stopped"] is True and killed == [4242]
    assert next(alive, "drained") == "drained"  # polled until the process was gone


def test_a_zombie_or_missing_process_is_not_alive():
    import subprocess
    import sys

    from suzent_cli.server import runtime

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # it has exited, not reaped: a zombie
    assert runtime._alive(proc.pid) is False  # a zombie counts as gone (only its parent could reap it)
    assert runtime._alive(os.getpid()) is True
    proc.wait()
    assert runtime._alive(proc.pid) is False
