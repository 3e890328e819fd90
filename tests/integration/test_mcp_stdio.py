"""``suzent mcp`` as a real process, driven by the official SDK's ``stdio_client``: no protocol mock.

Standalone (no server for the home): remember, recall, a resource, a tool error; stdout carries only the protocol
(the client would fail on anything else); a closed stdin ends it with 0; a broken home or config is one line on
stderr and a non-zero exit. With a real ``suzent serve`` running: ``suzent mcp`` relays every call (the server's
request counters grow by exactly those calls), carries on in-process when the server stops mid-session, and the
streamable-HTTP client reaches the server's ``/mcp`` with the token and is refused without it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from serve_process import ready, start, stop

from conftest import HASH_ENV, REPO, cli_env
from suzent_cli.server import client
from suzent_cli.server.mcp_surface import MEMORY_URI, RECALL_HEADER, TOOLS


def params(home: Path, *args: str) -> StdioServerParameters:
    """``python -m suzent_cli --home HOME mcp ARGS`` from this worktree, with the hash embedder (no model load)."""
    return StdioServerParameters(command=sys.executable, args=["-m", "suzent_cli", "--home", str(home), "mcp", *args],
                                 env=cli_env(home, **HASH_ENV), cwd=str(REPO))


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def recall_until_found(client, query: str, deadline: float = 120.0):
    """``recall(query)`` until it has a hit (the reindex after a remember may still be queued on a loaded machine;
    ``remember`` waits for it only a few seconds), or the last answer after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while True:
        found = await client.call_tool("recall", {"query": query})
        if found.is_error or found.structured_content["hits"] or time.monotonic() > end:
            return found
        await anyio.sleep(0.2)


def session(home: Path, body, *args: str) -> tuple[object, str]:
    """``body(client)``'s result against a spawned ``suzent mcp``, and what the process wrote on stderr."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async def main():
            async with Client(stdio_client(params(home, *args), errlog=errlog), read_timeout_seconds=120) as client:
                return await body(client)

        result = anyio.run(main)
        errlog.seek(0)
        return result, errlog.read()


def test_standalone_mcp_remembers_recalls_and_serves_resources(tmp_path):
    home = tmp_path / "home"

    async def body(client):
        tools = {t.name for t in (await client.list_tools()).tools}
        kept = await client.call_tool("remember", {"facts": ["[preference] Takes the night train to Vienna"],
                                                   "session": "stdio-test"})
        found = await recall_until_found(client, "night train Vienna")
        bad = await client.call_tool("recall", {"query": "train", "limit": 1000})
        coerced = await client.call_tool("forget", {"text": "Takes the night train to Vienna", "apply": "yes"})
        after = await client.call_tool("recall", {"query": "night train Vienna"})
        memory = await client.read_resource(MEMORY_URI)
        status = await client.call_tool("status", {})
        return tools, kept, found, bad, (coerced, after), memory, status

    (tools, kept, found, bad, (coerced, after), memory, status), stderr = session(home, body)
    assert tools == set(TOOLS)
    assert not kept.is_error, text_of(kept)
    assert kept.structured_content["outcomes"][0]["outcome"] == "captured"
    assert not found.is_error, text_of(found)
    hit = found.structured_content["hits"][0]
    assert hit["content"] == "Takes the night train to Vienna" and hit["session"] == "stdio-test"
    assert text_of(found).startswith(RECALL_HEADER)
    assert bad.is_error and text_of(bad) == "Error executing tool recall: limit: Input should be less than or equal to 50"
    assert coerced.is_error and 'apply: must be true or false (a JSON boolean), got "yes"' in text_of(coerced)
    assert [h["content"] for h in after.structured_content["hits"]][:1] == ["Takes the night train to Vienna"]
    assert memory.contents[0].mime_type == "text/markdown"
    assert not status.is_error and "server" not in status.structured_content
    assert "serving in-process" in stderr and "Traceback" not in stderr
    assert "Takes the night train to Vienna" in "".join(p.read_text() for p in home.rglob("archive/*.md"))


def test_a_closed_stdin_ends_it_cleanly_and_stdout_stays_empty(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(tmp_path / "home"), "mcp"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO,
                          env=cli_env(tmp_path / "home", **HASH_ENV), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


def test_a_broken_home_or_config_is_one_line_and_a_non_zero_exit(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.toml").write_text("[paths\nmemory_dir = ", encoding="utf-8")
    for home in (not_a_dir, broken):
        proc = subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), "mcp"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO,
                              env=cli_env(home, **HASH_ENV), timeout=120)
        assert proc.returncode == 2, (home, proc.stderr)
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr


# --- with a running `suzent serve` --------------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path):
    """A real ``suzent serve --port 0 --no-chain --no-watch`` on a fresh home: ``(home, proc, info)`` once its
    socket answers and ``serve.json`` names its port; stopped with SIGTERM (its own pid) at the end."""
    home = tmp_path / "served"
    proc = start(home, "--no-chain", "--no-watch")
    try:
        yield home, proc, ready(home, proc)
    finally:
        if proc.poll() is None:
            stop(proc)


def served_requests(home: Path) -> dict[str, int]:
    """The running server's request counters (its status, asked over the socket)."""
    return client.RemoteBackend(home, timeout=30).status()["server"]["requests"]["by_op"]


def test_mcp_relays_every_call_to_a_running_server(server):
    home, _, _ = server
    before = served_requests(home)

    async def body(client):
        kept = await client.call_tool("remember", {"facts": ["[personal] Keeps bees on the roof"]})
        found = await recall_until_found(client, "bees roof")
        status = await client.call_tool("status", {})
        return kept, found, status

    (kept, found, status), stderr = session(home, body)
    assert not kept.is_error and not found.is_error, (text_of(kept), text_of(found))
    assert found.structured_content["hits"][0]["content"] == "Keeps bees on the roof"
    assert "server" in status.structured_content  # only the server's status has its own block
    assert "relaying to the server" in stderr
    after = served_requests(home)
    assert after.get("remember", 0) == before.get("remember", 0) + 1, (before, after)
    assert after.get("recall", 0) >= before.get("recall", 0) + 1, (before, after)
    assert after.get("status", 0) == before.get("status", 0) + 2, (before, after)  # the tool's, then ours


def test_mcp_carries_on_in_process_when_the_server_goes_away(server):
    home, proc, _ = server

    async def body(client):
        kept = await client.call_tool("remember", {"facts": ["[preference] Reads poetry on Sundays"]})
        await recall_until_found(client, "poetry Sundays")  # relayed: the server has indexed it
        stop(proc)  # SIGTERM: the server stops and removes its socket
        found = await client.call_tool("recall", {"query": "poetry Sundays"})
        again = await client.call_tool("remember", {"facts": ["[preference] Plays chess on Mondays"]})
        status = await client.call_tool("status", {})
        return kept, found, again, status

    (kept, found, again, status), stderr = session(home, body)
    assert proc.returncode == 0
    assert not kept.is_error and not found.is_error and not again.is_error, text_of(found) + text_of(again)
    assert found.structured_content["hits"][0]["content"] == "Reads poetry on Sundays"
    assert again.structured_content["captured"] == 1
    assert "server" not in status.structured_content  # served in-process now
    assert "the server went away" in stderr and "Traceback" not in stderr


def test_streamable_http_needs_the_token(server):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    home, _, info = server
    url = f"http://127.0.0.1:{info['port']}/mcp"
    token = (home / "server" / "token").read_text(encoding="utf-8").strip()

    async def with_token(value: str | None):
        headers = {"Authorization": f"Bearer {value}"} if value is not None else None
        async with create_mcp_http_client(headers=headers) as http, \
                Client(streamable_http_client(url, http_client=http)) as mcp:
            tools = {t.name for t in (await mcp.list_tools()).tools}
            kept = await mcp.call_tool("remember", {"facts": ["[goal] Wants to learn the cello"]})
            found = await recall_until_found(mcp, "cello")
            coerced = await mcp.call_tool("forget", {"text": "Wants to learn the cello", "apply": "yes"})
            lax = await mcp.call_tool("recall", {"query": "cello", "limit": True})
            still = await mcp.call_tool("recall", {"query": "cello"})
            return tools, kept, found, (coerced, lax, still)

    tools, kept, found, (coerced, lax, still) = anyio.run(with_token, token)
    assert coerced.is_error and 'apply: must be true or false (a JSON boolean), got "yes"' in text_of(coerced)
    assert lax.is_error and "limit: must be a whole number" in text_of(lax)
    assert still.structured_content["hits"][0]["content"] == "Wants to learn the cello"  # "yes" forgot nothing
    assert tools == set(TOOLS)
    assert not kept.is_error, text_of(kept)
    assert found.structured_content["hits"], (text_of(kept), text_of(found))
    assert found.structured_content["hits"][0]["content"] == "Wants to learn the cello"

    async def refused(value: str | None) -> int:
        headers = {"Authorization": f"Bearer {value}"} if value is not None else {}
        async with httpx2.AsyncClient() as http:
            answer = await http.post(url, headers={**headers, "Accept": "application/json, text/event-stream"},
                                     json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            return answer.status_code

    assert anyio.run(refused, "not-the-token") == 401
    assert anyio.run(refused, None) == 401
    from mcp.shared.exceptions import MCPError

    for wrong in ("not-the-token", None):  # the SDK's own client cannot even connect
        with pytest.raises(BaseExceptionGroup) as caught:
            anyio.run(with_token, wrong)
        assert caught.value.subgroup(MCPError) is not None, repr(caught.value)


def test_a_lone_surrogate_escape_in_a_request_is_answered(tmp_path):
    """JSON may escape half an emoji ("\\ud83d"); the SDK's reader dropped such a request without an answer and the
    client waited forever. suzent mcp reads it as U+FFFD: the request is answered, the process lives on."""
    import json
    import selectors

    home = tmp_path / "home"
    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "--home", str(home), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=cli_env(home, **HASH_ENV))
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)

    def send(line: str) -> None:
        proc.stdin.write(line.encode("utf-8") + b"\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict:
        end = time.monotonic() + 120  # a hang guard, not a time bound
        while time.monotonic() < end:
            if selector.select(timeout=1):
                message = json.loads(proc.stdout.readline())
                if message.get("id") == request_id:
                    return message
        raise AssertionError(f"no answer to request {request_id}")

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        assert "result" in answer(1)
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", '
             '"arguments": {"facts": ["[preference] Likes the \\ud83d night train"]}}}')
        reply = answer(2)
        assert reply["result"]["structuredContent"]["outcomes"][0]["outcome"] == "captured"
        send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status",
                                                                                        "arguments": {}}}))
        assert "result" in answer(3)
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
        err = proc.stderr.read().decode("utf-8", "replace")
    assert proc.returncode == 0 and "Traceback" not in err
    logged = "".join(p.read_text(encoding="utf-8") for p in home.rglob("archive/*.md"))
    assert "Likes the \ufffd night train" in logged
