"""Claude Code hooks as real processes, where the process is the point: two hooks of one session at once, a
capture past its time bound (the hard exit, ``os._exit``) and one killed mid-way, the watchdog that ends a hook
stuck anywhere (an import, the interpreter lock), stdin's cap seen from the writer's side, and the import weight of
the hooks. The rest of the hook tests run in-process in tests/test_claude_code.py and tests/test_hook_bounds.py.

No test here asserts a duration: a loaded machine makes any hook slow. Where either the hook's own time bound or
its watchdog may end it, the test accepts both and checks what both guarantee (exit 0, one warning line, the
payload kept); where the watchdog is the point, the hook is made to hang so that nothing else can end it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from claude_code_session import DAY, Transcript, facts, indexed_recall_home, payload, prompt, spooled, state_dir

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
    cmd = [sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code", "--timeout", "120"]  # not the point
    env = cli_env(home, SUZENT_TODAY=DAY)
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=REPO) for _ in range(2)]
    outs = [p.communicate(payload(t.path).encode(), timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    got = facts(home)
    assert sorted(got) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(30))
    assert spooled(home) == []


def waiting(home: Path) -> list[Path]:
    """Payloads waiting for the next run, in the vault's spool or the fallback ``<home>/spool/`` (where the
    watchdog keeps a copy of a payload it stopped before it was spooled)."""
    return sorted([*(state_dir(home) / "spool").glob("*.json"), *(home / "spool").glob("*.json")])


def test_a_capture_past_its_timeout_stays_spooled_and_the_next_run_drains_it(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    for i in range(5):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    r = hook(home, payload(t.path), "--timeout", "0.01")
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1 and "not finished in 0.01 s;" in r.stderr, r.stderr
    kept = waiting(home)  # spooled by the capture, or kept by its watchdog if the process was that slow
    # Where the deadline fell is the machine's business; each place has its documented outcome (the warning names
    # it) and none loses a turn: before stdin was read, or the copy not made within the watchdog's bound, the
    # turns stay in the transcript for the next call; after, the payload waits in a spool.
    left_in_transcript = "no payload was read" in r.stderr or "could not be kept in time" in r.stderr
    assert facts(home) == [] and (kept == [] if left_in_transcript else kept != []), r.stderr

    t.turn("Remember that my code word for step 5 is kiwi5.")
    r = hook_in_process(home, payload(t.path), "--json")  # drains the old payload first, then its own
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["drained"] == len(kept) + 1 and waiting(home) == []
    assert sorted(facts(home)) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(6))


# The capture worker stops for good after its AFTER-th append (as a slow disk or a loaded machine would stop it):
# the watchdog then abandons it at the deadline, mid-capture, whatever the machine's speed. The copy's own bound
# (watchdog.RESCUE_SECONDS) is lifted: a loaded machine may take longer to spool, and that is not the point here.
STOPS_AFTER = """
import time
import suzent_cli.archive as archive
import suzent_cli.cli.watchdog as w
w.RESCUE_SECONDS = 120
real, calls = archive.append_entry, [0]
def append_entry(*args, **kwargs):
    calls[0] += 1
    if calls[0] > {after}:
        time.sleep(3600)
    return real(*args, **kwargs)
archive.append_entry = append_entry
from suzent_cli.cli.fasthook import main
raise SystemExit(main())
"""


def test_a_capture_killed_mid_way_loses_no_turn(tmp_path, home):
    """The worker is abandoned (os._exit, by the watchdog) while capturing: the turns done are recorded, the rest
    stay spooled. A kill between a turn's append and its record may capture that one turn twice, never lose it."""
    t = Transcript(tmp_path / "s.jsonl")
    n, after = 120, 40
    for i in range(n):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    r = subprocess.run([sys.executable, "-c", STOPS_AFTER.format(after=after), "capture", "--from", "claude-code",
                        "--timeout", "2"], input=payload(t.path), capture_output=True, text=True, cwd=REPO,
                       env=cli_env(home, SUZENT_TODAY=DAY), timeout=180)  # a hang guard
    assert r.returncode == 0 and "not finished in 2 s;" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    first = len(facts(home))
    assert first <= after and waiting(home), r.stderr
    r = hook_in_process(home, payload(t.path), "--timeout", "600")  # a bound, not an expectation
    assert r.returncode == 0 and r.stderr == "" and waiting(home) == []
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


# --- the watchdog: a hook stuck anywhere still ends, exit 0, one warning -------------------------------------

# Run the hook's real entry point with an import that never returns: the cold path's `import typer` (what a loaded
# machine makes slow) runs a module body that sleeps forever, so only the watchdog can end the process. HOLD instead
# keeps the interpreter lock in one native call (an exponential regular expression: many minutes), so not even the
# watchdog's thread runs. (The module body, not find_spec, is what hangs: finders run under the global import lock,
# which a real slow import does not hold.)
STUCK = """
import importlib.abc, importlib.util, re, sys, time
class Stuck(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "typer" else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        {how}
sys.meta_path.insert(0, Stuck())
from suzent_cli.cli.fasthook import main
raise SystemExit(main())
"""
SLEEP = "time.sleep(3600)"
HOLD = "re.match(r'(a|aa)+$', 'a' * 60 + 'b')"


def stuck_hook(home: Path, how: str, stdin: str, *args: str, prelude: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", prelude + STUCK.format(how=how), *args], input=stdin, capture_output=True,
                          text=True, cwd=REPO, env=cli_env(home, SUZENT_TODAY=DAY), timeout=60)  # a hang guard


def test_a_recall_hook_stuck_in_an_import_is_ended_by_its_watchdog(indexed_home):
    r = stuck_hook(indexed_home, SLEEP, prompt("What tea should I make for the morning?"),
                   "recall", "--from", "claude-code", "--timeout", "0.5")
    assert (r.returncode, r.stdout) == (0, "")
    assert r.stderr == "suzent: recall skipped: no answer within 0.5 s (stopped by the watchdog)\n"


def test_a_capture_hook_stuck_before_spooling_keeps_its_payload(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    # The copy's own bound (watchdog.RESCUE_SECONDS, 1 s) is lifted here: on a loaded machine the copy may take
    # longer, and what this checks is that the watchdog makes it, not how fast.
    r = stuck_hook(home, SLEEP, payload(t.path), "capture", "--from", "claude-code", "--timeout", "0.5",
                   prelude="import suzent_cli.cli.watchdog as w; w.RESCUE_SECONDS = 120\n")
    kept = list((home / "spool").glob("*.json"))
    assert (r.returncode, r.stdout, len(kept)) == (0, "", 1), r.stderr
    assert r.stderr == (f"suzent: capture not finished in 0.5 s; a copy of the payload is kept in {kept[0]} for the "
                        "next run (stopped by the watchdog)\n")
    r = hook_in_process(home, payload(t.path))  # the next hook call drains the copy: nothing was lost
    assert (r.returncode, r.stderr) == (0, "") and facts(home) == ["- [general] My code word is kiwi."]
    assert waiting(home) == []


def test_a_hook_holding_the_interpreter_lock_is_ended_by_the_native_timer(indexed_home):
    """The last resort: no Python thread can run, so a native timer ends the process (exit 1: Claude Code shows
    a non-blocking hook error; the agent goes on)."""
    r = stuck_hook(indexed_home, HOLD, prompt("What tea should I make for the morning?"),
                   "recall", "--from", "claude-code", "--timeout", "0.5")
    assert (r.returncode, r.stdout) == (1, "")


def test_the_stdin_cap_is_seen_by_the_writer(home):
    """A hook reads at most the cap of its stdin, whatever is written: the writer of a 5 MB payload sees the pipe
    break once the hook has left with its warning (nothing captured, nothing kept)."""
    from suzent_cli.hooks.stdin import MAX_PAYLOAD_BYTES

    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                            env=cli_env(home))
    written, broken = 0, False
    try:
        for _ in range(5 * MAX_PAYLOAD_BYTES // (1 << 16)):
            proc.stdin.write(b"x" * (1 << 16))
            written += 1 << 16
        proc.stdin.close()
    except BrokenPipeError:
        broken = True
    out, err = proc.communicate(timeout=60)
    assert broken and written < 2 * MAX_PAYLOAD_BYTES, written
    assert (proc.returncode, out) == (0, b"")
    assert err.decode() == (f"suzent: the hook payload is over {MAX_PAYLOAD_BYTES:,} bytes, so not a Claude Code hook "
                            "payload; ignored without reading the rest; nothing captured\n")
    assert waiting(home) == [] and not (state_dir(home) / "spool" / "failed").exists()


# --- recall ---------------------------------------------------------------------------------------------

def test_recall_hook_answers_within_its_bound_or_says_so_and_never_fails(indexed_home):
    """Whichever ends it — its own time bound or, on a slow machine, the watchdog — a recall out of time prints
    nothing, one warning naming the bound, exit 0. A broken payload is one warning too."""
    r = run_cli(indexed_home, "recall", "--from", "claude-code", "--timeout", "0.001",
                input=prompt("What tea should I make for the morning?"))
    assert r.returncode == 0 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("suzent: recall skipped: no answer within 0.001 s"), r.stderr
    r = run_cli(indexed_home, "recall", "--from", "claude-code", input="{broken")
    assert r.returncode == 0 and r.stdout == "" and len(r.stderr.splitlines()) == 1
