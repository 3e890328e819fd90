"""``suzent mcp`` as a real process, driven by the official SDK's ``stdio_client``: no protocol mock.

Standalone (no server for the home): remember, recall, a resource, a tool error; stdout carries only the protocol
(the client would fail on anything else); a closed stdin ends it with 0; a broken home or config is one line on
stderr and a non-zero exit.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import HASH_ENV, REPO, cli_env
from suzent_cli.server.mcp_surface import MEMORY_URI, RECALL_HEADER, TOOLS


def params(home: Path, *args: str) -> StdioServerParameters:
    """``python -m suzent_cli --home HOME mcp ARGS`` from this worktree, with the hash embedder (no model load)."""
    return StdioServerParameters(command=sys.executable, args=["-m", "suzent_cli", "--home", str(home), "mcp", *args],
                                 env=cli_env(home, **HASH_ENV), cwd=str(REPO))


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


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
        found = await client.call_tool("recall", {"query": "night train Vienna"})
        bad = await client.call_tool("recall", {"query": "train", "limit": 1000})
        memory = await client.read_resource(MEMORY_URI)
        status = await client.call_tool("status", {})
        return tools, kept, found, bad, memory, status

    (tools, kept, found, bad, memory, status), stderr = session(home, body)
    assert tools == set(TOOLS)
    assert not kept.is_error, text_of(kept)
    assert kept.structured_content["outcomes"][0]["outcome"] == "captured"
    assert kept.structured_content["indexed"] is True
    assert not found.is_error, text_of(found)
    hit = found.structured_content["hits"][0]
    assert hit["content"] == "Takes the night train to Vienna" and hit["session"] == "stdio-test"
    assert text_of(found).startswith(RECALL_HEADER)
    assert bad.is_error and text_of(bad) == "Error executing tool recall: limit: Input should be less than or equal to 50"
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
