"""Read-your-writes through ``suzent mcp`` as a real process (issue 25, item 4): the reported case — Claude Code
spawns ``suzent mcp``, no server runs, the home is fresh, the bundled model (the default embedder) — and a home of
50 facts indexed with it; then the same through a running ``suzent serve`` (relayed). ``remember`` answers that the
fact is recallable now, and the very next ``recall`` (one call, no retry) has it among its first hits, found by
recall's pending search while the reindex is still queued or running."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from serve_process import ready, start, stop

from conftest import HASH_ENV, REPO, cli_env, run_cli

OAT = "Prefers oat milk in coffee"
QUERY = "what milk does the user like"


def remember_then_recall(home: Path, env: dict) -> tuple[object, object, str]:
    """``remember([OAT])`` then one ``recall(QUERY)`` against a spawned ``suzent mcp``; and its stderr."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "suzent_cli", "--home", str(home), "mcp"],
                                   env=cli_env(home, **env), cwd=str(REPO))
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async def main():
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=300) as client:
                kept = await client.call_tool("remember", {"facts": [f"[preference] {OAT}"]})
                found = await client.call_tool("recall", {"query": QUERY, "limit": 5})
                return kept, found

        kept, found = anyio.run(main)
        errlog.seek(0)
        return kept, found, errlog.read()


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def assert_read_your_writes(kept, found, stderr: str) -> None:
    assert not kept.is_error and not found.is_error, (text_of(kept), text_of(found), stderr)
    assert kept.structured_content["indexed"] is True, text_of(kept)
    assert "recallable now" in text_of(kept) and "not yet searchable" not in text_of(kept)
    hits = [h["content"] for h in found.structured_content["hits"]]
    assert OAT in hits[:5], text_of(found)
    assert "Traceback" not in stderr


@pytest.mark.model
def test_standalone_mcp_on_a_fresh_home_with_the_bundled_model(tmp_path):
    home = tmp_path / "home"
    kept, found, stderr = remember_then_recall(home, {})  # no SUZENT_EMBEDDER: the bundled model
    assert_read_your_writes(kept, found, stderr)
    assert "serving in-process" in stderr


@pytest.mark.model
def test_standalone_mcp_on_a_home_of_fifty_indexed_facts_with_the_bundled_model(tmp_path):
    from test_read_your_writes import OTHERS

    home = tmp_path / "home"
    args = [a for fact in OTHERS for a in ("--fact", f"[preference] {fact}")]
    assert run_cli(home, "--today", "2026-06-01", "capture", *args).returncode == 0
    r = run_cli(home, "index", timeout=600)
    assert r.returncode == 0, r.stderr
    kept, found, stderr = remember_then_recall(home, {})
    assert_read_your_writes(kept, found, stderr)


def test_mcp_relayed_to_a_running_server(tmp_path):
    home = tmp_path / "served"
    proc = start(home, "--no-chain", "--no-watch")
    try:
        ready(home, proc)
        kept, found, stderr = remember_then_recall(home, HASH_ENV)
    finally:
        stop(proc)
    assert_read_your_writes(kept, found, stderr)
    assert "relaying to the server" in stderr
