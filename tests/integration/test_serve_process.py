"""``suzent serve`` as a real process (``python -m suzent_cli serve --port 0`` from this worktree, hash embedder):
the runtime files' modes, one server per home (a second exits 3 naming the first), a stale socket left by a
SIGKILLed server replaced, SIGTERM → 0 and SIGINT → 130 with the socket and serve.json removed, CLI writes beside a
running server leaving the index ≡ markdown (no second writer), and MCP over HTTP through the SDK's streamable-HTTP
client with the token, refused (401) without it or with a wrong one. Every wait polls with a generous deadline."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_process import DEADLINE, ready, start, stderr_of, stop

from conftest import HASH_ENV, run_cli
from suzent_cli.server import paths, runtime
from suzent_cli.server.client import connect


@pytest.fixture
def served(home):
    """An initialised home (hash embedder) and a running server on it without the chain (stopped at the end)."""
    assert run_cli(home, "init", env_extra=HASH_ENV).returncode == 0
    proc = start(home, "--no-chain")
    info = ready(home, proc)
    yield home, proc, info
    if proc.poll() is None:
        stop(proc)


def test_lifecycle_modes_one_server_per_home_and_a_clean_sigterm(served):
    home, proc, info = served
    sock = paths.socket_path(home)
    assert info["socket"] == str(sock) and info["mcp_url"] == f"http://127.0.0.1:{info['port']}/mcp"
    assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600 and stat.S_ISSOCK(os.lstat(sock).st_mode)
    assert stat.S_IMODE(paths.run_dir(home).stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.token_path(home).stat().st_mode) == 0o600

    second = run_cli(home, "serve", "--port", "0", "--no-chain", env_extra=HASH_ENV, timeout=DEADLINE)
    assert second.returncode == 3
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"(pid {proc.pid})" in lines[0] and "Traceback" not in second.stderr
    assert runtime.read_info(home)["pid"] == proc.pid and os.path.exists(sock)  # the first server is untouched

    shown = run_cli(home, "status", "--json", "--no-index", env_extra=HASH_ENV)
    server = json.loads(shown.stdout)["server"]
    assert server["running"] is True and server["pid"] == proc.pid and server["mcp_url"] == info["mcp_url"]
    # status waits 3 s for the counters: on a loaded machine it may say so, but never fail otherwise
    assert "requests" in server or server["no_answer"].startswith("no answer within"), server
    live = runtime.server_state(home, timeout=60)
    assert live["requests"]["total"] >= 1 and live["last_error"] is None, live

    assert stop(proc) == 0, stderr_of(proc)
    assert "stopped (SIGTERM)" in stderr_of(proc)
    assert not os.path.lexists(sock) and not paths.info_path(home).exists()
    after = json.loads(run_cli(home, "status", "--json", "--no-index").stdout)["server"]
    auto = after.pop("autostart")
    assert after == {"running": False, "stale": False}
    assert auto["enabled"] is False and auto["reason"] == "SUZENT_SERVE_AUTOSTART=0"  # conftest's: no daemon
    assert auto["last"]["why"] == "suzent serve" and auto["last"]["exit"] == 0  # a clean stop is no failed start


def test_a_stale_socket_from_a_killed_server_is_replaced_and_sigint_exits_130(served):
    home, proc, _ = served
    proc.kill()
    proc.wait(timeout=DEADLINE)
    sock = paths.socket_path(home)
    assert os.path.lexists(sock)  # SIGKILL: nothing cleaned up
    assert connect(home, timeout=5) is None  # a socket nobody listens on is no server
    shown = json.loads(run_cli(home, "status", "--json", "--no-index").stdout)["server"]
    assert shown.pop("autostart")["last"]["ended"] is None  # killed: no clean stop recorded
    assert shown == {"running": False, "stale": True}

    again = start(home, "--no-chain")
    try:
        info = ready(home, again)
        assert info["pid"] == again.pid
        assert connect(home, timeout=60).status()["server"]["pid"] == again.pid
    finally:
        code = stop(again, signal.SIGINT)
    assert code == 130, stderr_of(again)
    assert not os.path.lexists(sock) and not paths.info_path(home).exists()


def _ids(index_dir: Path, home: Path) -> dict:
    from suzent_cli.index.store import ReadStore

    return {k: v for k, v in ReadStore.open_existing(index_dir, home=home).ids_by_source().items() if k is not None}


def test_cli_writes_beside_a_running_server_leave_the_index_equal_to_markdown(served, tmp_path):
    home, proc, _ = served
    remote = connect(home, timeout=120)
    answer = remote.remember(facts=["[preference] Prefers green tea"])
    assert answer["captured"] == 1
    for fact in ("[fact] Lives in Lisbon", "[fact] Paddles a kayak on Sundays"):
        r = run_cli(home, "capture", "--fact", fact, env_extra=HASH_ENV)
        assert r.returncode == 0, r.stderr
    r = run_cli(home, "index", env_extra=HASH_ENV, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    page = home / "notebook" / "ana.md"
    page.write_text("# Ana\n\nAna rows at dawn.\n", encoding="utf-8")

    fresh = tmp_path / "fresh-index"
    r = run_cli(home, "--index-dir", str(fresh), "index", env_extra=HASH_ENV, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    want = _ids(fresh, home)
    index_dir = home / "memory"
    deadline = time.monotonic() + DEADLINE
    while _ids(index_dir, home) != want:  # the watcher's reindex of the page, the captures' own
        if time.monotonic() > deadline:
            pytest.fail(f"the live index never matched a rebuild from markdown: {_ids(index_dir, home)} != {want}")
        time.sleep(0.2)
    hits = remote.recall("Lisbon", mode="fts")["hits"]
    assert any("Lisbon" in h["content"] for h in hits)
    hits = remote.recall("dawn", mode="fts")["hits"]
    assert any(h["file"] == "ana.md" for h in hits)
    assert stop(proc) == 0, stderr_of(proc)


def test_mcp_over_http_needs_the_token(served):
    home, _, info = served
    token = paths.token_path(home).read_text().strip()
    url = info["mcp_url"]

    async def tools() -> list[str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                listed = await client.list_tools()
                await client.call_tool("status", {})
                return sorted(t.name for t in listed.tools)

    names = anyio.run(tools)
    assert {"recall", "remember", "forget", "status", "list_pages", "read_page"} <= set(names)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {token}"}):
        r = httpx2.post(url, json=ping, headers=headers, timeout=60)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", headers
    server = connect(home, timeout=60).status()["server"]
    assert server["requests"]["by_op"].get("mcp", 0) >= 2


def test_the_chain_runs_in_the_server_and_sigterm_still_stops_it_cleanly(home):
    assert run_cli(home, "init", env_extra=HASH_ENV).returncode == 0
    assert run_cli(home, "capture", "--fact", "[fact] Owns a red bicycle", env_extra=HASH_ENV).returncode == 0
    proc = start(home)
    try:
        ready(home, proc)
        deadline = time.monotonic() + DEADLINE
        while not ((state := runtime.server_state(home, timeout=30)).get("chain") or {}).get("passes"):
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"no chain pass recorded: {state} {stderr_of(proc)}")
            time.sleep(0.2)
        last = state["chain"]["last_pass"]
        assert last["exit_code"] == 0 and last["outcomes"]["index"] in ("built", "updated", "unchanged"), last
        assert state["last_error"] is None
        hits = connect(home, timeout=120).recall("bicycle", mode="fts")["hits"]
        assert any("bicycle" in h["content"] for h in hits)  # the chain's index stage built the index
    finally:
        code = stop(proc)
    assert code == 0, stderr_of(proc)
    assert "stopped (SIGTERM)" in stderr_of(proc)
    assert not paths.info_path(home).exists()
