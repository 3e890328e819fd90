"""Claude Code hooks as real processes, where the process is the point: two hooks of one session at once, a
capture past its time bound (the hard exit, ``os._exit``) and one killed mid-way, recall's hard time bound, and the
import weight of the hooks. The rest of the hook tests run in-process in tests/test_claude_code.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_code_session import DAY, Transcript, facts, indexed_recall_home, payload, prompt, spooled

from conftest import REPO, cli_env, invoke, run_cli

HEAVY = ("torch", "sentence_transformers", "transformers", "lancedb", "pyarrow", "anthropic")


def hook(home: Path, stdin: str | bytes, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(home, "capture", "--from", "claude-code", *args, input=stdin,
                   env_extra={"SUZENT_TODAY": DAY, **(env or {})}, timeout=120)


def hook_in_process(home: Path, stdin: str | bytes, *args: str) -> subprocess.CompletedProcess:
    """The follow-up call that drains what a hard-exited process left: not the point, so in-process."""
    return invoke(home, "capture", "--from", "claude-code", *args, input=stdin, env_extra={"SUZENT_TODAY": DAY})


@pytest.fixture(scope="module")
def indexed_home(tmp_path_factory) -> Path:
    """A home with three facts, indexed (built in-process)."""
    return indexed_recall_home(tmp_path_factory.mktemp("recall") / "home")


# --- capture --------------------------------------------------------------------------------------------

def test_two_hooks_of_one_session_at_once_capture_each_turn_once(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    for i in range(30):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    cmd = [sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code"]
    env = cli_env(home, SUZENT_TODAY=DAY)
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=REPO) for _ in range(2)]
    outs = [p.communicate(payload(t.path).encode(), timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    got = facts(home)
    assert sorted(got) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(30))
    assert spooled(home) == []


def test_a_capture_past_its_timeout_stays_spooled_and_the_next_run_drains_it(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    for i in range(5):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    started = time.monotonic()
    r = hook(home, payload(t.path), "--timeout", "0.01")
    assert r.returncode == 0 and time.monotonic() - started < 15
    assert "not finished in 0.01 s; spooled for the next run" in r.stderr and len(r.stderr.splitlines()) == 1
    assert len(spooled(home)) == 1 and facts(home) == []

    t.turn("Remember that my code word for step 5 is kiwi5.")
    r = hook_in_process(home, payload(t.path), "--json")  # drains the old payload first, then its own
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["drained"] == 2 and spooled(home) == []
    assert sorted(facts(home)) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(6))


def test_a_capture_killed_mid_way_loses_no_turn(tmp_path, home):
    """The worker is abandoned (os._exit) while capturing: the turns done are recorded, the rest stay spooled.
    A kill between a turn's append and its record may capture that one turn twice, never lose it."""
    t = Transcript(tmp_path / "s.jsonl")
    n = 400
    for i in range(n):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    r = hook(home, payload(t.path), "--timeout", "0.4")
    assert r.returncode == 0 and "spooled for the next run" in r.stderr, r.stderr
    first = len(facts(home))
    assert first < n and len(spooled(home)) == 1
    r = hook_in_process(home, payload(t.path), "--timeout", "60")
    assert r.returncode == 0 and r.stderr == "" and spooled(home) == []
    got = facts(home)
    want = {f"- [general] My code word for step {i} is kiwi{i}." for i in range(n)}
    assert set(got) == want and len(got) - n <= 1


def test_hooks_import_light_and_capture_fact_does_not_import_them(tmp_path):
    probe = ("import sys, suzent_cli.hooks.spool, suzent_cli.hooks.claude_code, suzent_cli.hooks.transcript,"
             " suzent_cli.hooks.capture, suzent_cli.hooks.recall, suzent_cli.cli.hooks\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "suzent_cli", "capture", "--fact", "[x] y"],
                       capture_output=True, text=True, cwd=REPO, env=cli_env(tmp_path / "h"), timeout=60)
    assert r.returncode == 0, r.stderr
    imported = {ln.rsplit("|", 1)[1].strip() for ln in r.stderr.splitlines() if ln.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] in HEAVY or m.startswith("suzent_cli.hooks")}


# --- recall ---------------------------------------------------------------------------------------------

def test_recall_hook_is_time_bounded_and_never_fails(indexed_home):
    started = time.monotonic()
    r = run_cli(indexed_home, "recall", "--from", "claude-code", "--timeout", "0.001",
                input=prompt("What tea should I make for the morning?"))
    assert time.monotonic() - started < 3
    assert r.returncode == 0 and r.stdout == "" and "recall skipped: no answer within 0.001 s" in r.stderr
    r = run_cli(indexed_home, "recall", "--from", "claude-code", input="{broken")
    assert r.returncode == 0 and r.stdout == "" and len(r.stderr.splitlines()) == 1
