"""The Claude Code hooks with a server up and down, as real hook processes (``python -m suzent_cli``): the same
stdout with and without it, a captured turn recallable at the next prompt through it, exit 0 and one-line warnings
always, and a server that dies while a capture hook waits (the turn still lands).

The server here is the real :class:`~suzent_cli.server.ops.LocalBackend` on warm state, behind the small local-API
stand-in of tests/fake_server.py (the same ``POST /v1/<op>`` over the home's Unix socket); the hook processes cannot
tell it from ``suzent serve``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from claude_code_session import DAY, Transcript, facts, indexed_recall_home, payload, prompt, spooled
from fake_server import CLOSE, FakeServer

from conftest import REPO, cli_env, run_cli
from suzent_cli.server import paths

EMBEDDER = {"SUZENT_EMBEDDER": "hash:64"}


def warm_backend(home: Path):
    from suzent_cli.config import resolve_settings
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    warm = Warm(resolve_settings(home=home, env=EMBEDDER))
    return warm, LocalBackend(warm)


def serving(home: Path, backend) -> FakeServer:
    return FakeServer(paths.socket_path(home), lambda op, args: getattr(backend, op)(**args))


def hook(home: Path, command: str, data: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(home, command, "--from", "claude-code", *args, input=data, env_extra=EMBEDDER, timeout=120)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    return indexed_recall_home(tmp_path_factory.mktemp("hooks-server") / "home")


def test_recall_prints_the_same_line_with_the_server_up_and_down(indexed):
    question = prompt("What tea should I make for the morning?")
    down = hook(indexed, "recall", question, "--mode", "fts", "--timeout", "60")
    warm, backend = warm_backend(indexed)
    try:
        with serving(indexed, backend) as fake:
            up = hook(indexed, "recall", question, "--mode", "fts", "--timeout", "60")
            hybrid = hook(indexed, "recall", question, "--timeout", "60")
    finally:
        warm.close()
    assert [op for op, _ in fake.calls] == ["hook_recall", "hook_recall"]
    assert (up.returncode, up.stdout, up.stderr) == (0, down.stdout, "") and down.returncode == 0
    assert json.loads(up.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert fake.calls[1][1]["mode"] == "hybrid" and hybrid.returncode == 0 and hybrid.stderr == ""
    assert "green tea" in json.loads(hybrid.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_turn_captured_through_the_server_is_recalled_at_the_next_prompt(tmp_path):
    home = indexed_recall_home(tmp_path / "home")
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my bicycle is a green Brompton folding bike.")
    t.turn("Thanks.")
    warm, backend = warm_backend(home)
    try:
        with serving(home, backend) as fake:
            captured = hook(home, "capture", payload(t.path), "--json", "--timeout", "60")
            recalled = hook(home, "recall", prompt("Which folding bike do I ride to work?"), "--mode", "fts",
                            "--timeout", "60")
    finally:
        warm.close()
    assert [op for op, _ in fake.calls] == ["hook_capture", "hook_recall"]
    assert captured.returncode == 0 and json.loads(captured.stdout)["turns"] >= 1, captured.stderr
    assert any("Brompton" in f for f in facts(home, DAY) + facts(home, _today())) and spooled(home) == []
    assert recalled.returncode == 0, recalled.stderr
    assert "Brompton" in json.loads(recalled.stdout)["hookSpecificOutput"]["additionalContext"]


def _today() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).date().isoformat()


def test_a_server_dying_while_a_capture_hook_waits_still_lands_the_turn(tmp_path):
    """The server takes the request and dies before answering (its socket closes): the hook process captures the
    same payload itself. With the real ``suzent serve`` the same happens on SIGKILL (the kernel closes the socket)."""
    home = tmp_path / "home"
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    t.turn("Thanks.")
    got = threading.Event()

    def die(op, args):
        got.set()
        return CLOSE

    with FakeServer(paths.socket_path(home), die):
        r = run_cli(home, "capture", "--from", "claude-code", input=payload(t.path),
                    env_extra={"SUZENT_TODAY": DAY}, timeout=120)
    assert got.is_set() and r.returncode == 0 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "capturing here instead" in r.stderr
    assert facts(home) == ["- [general] My code word is kiwi."] and spooled(home) == []


def test_a_stale_socket_is_no_server(tmp_path):
    import socket

    home = tmp_path / "home"
    where = paths.socket_path(home)
    where.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(where))
    stale.close()
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    t.turn("Thanks.")
    r = run_cli(home, "capture", "--from", "claude-code", input=payload(t.path), env_extra={"SUZENT_TODAY": DAY})
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # silently cold: no server is the normal case
    assert facts(home) == ["- [general] My code word is kiwi."]


def test_the_fast_path_is_the_entry_point_of_the_module_run(tmp_path):
    """``python -m suzent_cli`` starts in suzent_cli.cli.fasthook, so a hook answered by a server never imports
    the app; any other command still runs the app."""
    r = subprocess.run([sys.executable, "-m", "suzent_cli", "--version"], capture_output=True, text=True, cwd=REPO,
                       env=cli_env(tmp_path / "home"), timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("suzent ")
