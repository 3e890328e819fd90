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
from serve_process import ready, start, stop

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


# --- against the real `suzent serve` ------------------------------------------------------------------------------

def start_serve(home: Path) -> subprocess.Popen:
    """``suzent serve`` on ``home`` (any free MCP port, no chain, no watcher), once it serves."""
    proc = start(home, "--no-chain", "--no-watch")
    ready(home, proc)
    return proc


def test_the_hooks_through_a_real_serve(tmp_path):
    home = indexed_recall_home(tmp_path / "home")
    question = prompt("What tea should I make for the morning?")
    cold = hook(home, "recall", question, "--mode", "fts", "--timeout", "60")
    start = json.dumps({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/src/green-tea",
                        "hook_event_name": "SessionStart", "source": "startup"})
    cold_start = hook(home, "recall", start, "--timeout", "60")
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my bicycle is a green Brompton folding bike.")
    t.turn("Thanks.")
    server = start_serve(home)
    try:
        up = hook(home, "recall", question, "--mode", "fts", "--timeout", "60")
        hybrid = hook(home, "recall", question, "--timeout", "60")
        up_start = hook(home, "recall", start, "--timeout", "60")
        captured = hook(home, "capture", payload(t.path), "--timeout", "60")
        bike = hook(home, "recall", prompt("Which folding bike do I ride to work?"), "--timeout", "60")
    finally:
        stop(server)
    for r in (cold, cold_start, up, hybrid, up_start, captured, bike):
        assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert up.stdout == cold.stdout and json.loads(up.stdout)["hookSpecificOutput"]["hookEventName"] == \
        "UserPromptSubmit"
    assert "green tea" in json.loads(hybrid.stdout)["hookSpecificOutput"]["additionalContext"]
    assert json.loads(up_start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "green tea" in json.loads(cold_start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert captured.stdout == "" and spooled(home) == []
    assert "Brompton" in json.loads(bike.stdout)["hookSpecificOutput"]["additionalContext"]  # no `suzent index`


def test_serve_killed_while_a_capture_hook_waits_loses_no_turn(tmp_path):
    """SIGKILL the real server while it captures a long session for a hook: the hook process gets no answer,
    captures the same payload itself, and every turn lands (at most one twice: the one whose append the kill may
    have separated from its recorded position, hooks/capture.py)."""
    import signal
    import time

    home = tmp_path / "home"
    t = Transcript(tmp_path / "s.jsonl")
    n = 400
    for i in range(n):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    t.turn("Thanks.")
    server = start_serve(home)
    (tmp_path / "payload.json").write_text(payload(t.path), encoding="utf-8")
    with (tmp_path / "payload.json").open("rb") as stdin:
        hook_proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code",
                                      "--timeout", "300"], stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=REPO, env=cli_env(home, **EMBEDDER))
    position = home / "notebook" / ".state" / "claude_code.json"
    deadline = time.monotonic() + 120
    while not position.exists() and hook_proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # the server has captured its first turns: the request is in flight
    killed_mid_request = hook_proc.poll() is None
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=30)
    out, err = hook_proc.communicate(timeout=300)
    assert hook_proc.returncode == 0 and out == "", err
    if killed_mid_request:  # else the server finished first (a very fast machine): still no turn lost
        assert len(err.splitlines()) == 1 and "capturing here instead" in err, err
    got = facts(home, DAY)
    want = {f"- [general] My code word for step {i} is kiwi{i}." for i in range(n)}
    assert set(got) == want and len(got) - len(want) <= 1
    assert spooled(home) == []
