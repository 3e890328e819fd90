"""The server starts itself (suzent_cli/server/autostart.py), with real processes: a hook or suzent mcp that finds
no server starts one, detached, under the one-server-per-home lock; a stale server is replaced; a crash loop backs
off; two callers at once start one; the auto-started server takes a free port and exits when idle; `suzent serve
stop` ends a server. (On or off, the setting, the back-off: tests/test_autostart.py.)

Real processes on real homes under tmp_path. Every server a test starts is killed at teardown (:func:`reap`: its
process group, the auto-started server leads its own session). Polls have a generous ceiling and assert the
mechanism, never a duration.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from serve_process import ready, start

from conftest import REPO, cli_env, run_cli
from suzent_cli.server import autostart, paths, runtime
from suzent_cli.server.client import connect

DEADLINE = 180.0  # seconds: a ceiling for polling on a loaded machine, never a duration asserted
PROMPT = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "what milk does the user like",
                     "session_id": "s1", "cwd": "/tmp"})


def on_env(home: Path, **extra: str) -> dict[str, str]:
    """A CLI environment with auto-start on (conftest turns it off everywhere else), the hash embedder, and this
    checkout importable from the server's working folder (the home)."""
    return cli_env(home, SUZENT_SERVE_AUTOSTART="1", SUZENT_EMBEDDER="hash:64", PYTHONPATH=str(REPO), CI=None,
                   **extra)


def _ours(pid) -> bool:
    try:
        return b"suzent_cli" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return autostart.alive(pid)


@pytest.fixture
def reap():
    """``reap(home)``: at teardown, kill every server of ``home`` this test may have started (the auto-start
    record's pid and serve.json's, each a session leader when auto-started) and wait until none holds the lock."""
    homes: list[Path] = []
    yield homes.append
    for home in homes:
        for pid in {autostart.read_record(home).get("pid"), runtime.running_pid(home)}:
            if isinstance(pid, int) and pid > 0 and autostart.alive(pid) and _ours(pid):
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + DEADLINE
        while runtime.is_running(home) and time.monotonic() < deadline:
            time.sleep(0.1)


def poll(what, check, deadline: float = DEADLINE):
    """``check()``'s first truthy value, polled every 0.1 s; fails naming ``what`` past the ceiling."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {deadline:g} s")


def serving(home: Path) -> dict | None:
    """serve.json of the home's server once its local API answers a request, else None."""
    info = runtime.read_info(home)
    remote = connect(home, timeout=60)
    if not (info and "socket" in info and remote):
        return None
    remote.list_pages()
    return runtime.read_info(home)


def hook(home: Path, env: dict, payload: str = PROMPT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), "recall", "--from",
                           "claude-code", "--timeout", "60"], input=payload, capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=DEADLINE)


def spawns(home: Path) -> int:
    """How many servers the auto-start forked for ``home`` (one "starting the server" line each in serve.log)."""
    try:
        return autostart.log_path(home).read_text(encoding="utf-8").count("suzent: starting the server")
    except FileNotFoundError:
        return 0


def just_now(home: Path) -> None:
    """Date the recorded spawn now, as if its process had died at once (the test checks the mechanism, not how
    fast a process exits)."""
    autostart._write_record(home, {**autostart.read_record(home), "at": time.time()})


def gone(pid: int) -> bool:
    return not autostart.alive(pid)


# --- real servers -----------------------------------------------------------------------------------------------

def test_a_hook_without_a_server_starts_one_and_the_next_goes_through_it(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    env = on_env(home)
    first = hook(home, env)
    assert first.returncode == 0, first.stderr
    record = autostart.read_record(home)
    assert record["why"] == "hook recall" and record["auto"] is True
    info = poll("the auto-started server serves", lambda: serving(home))
    assert info["pid"] == record["pid"] and info["started_by"] == "hook recall" and info["auto"] is True
    assert info["idle_exit_seconds"] == 3600 and info["chain"] is False  # no dream unattended without asking
    assert (os.stat(autostart.log_path(home)).st_mode & 0o777) == 0o600

    second = hook(home, env)
    assert second.returncode == 0, second.stderr
    state = runtime.server_state(home, timeout=60)
    assert state["requests"]["by_op"].get("hook_recall") == 1  # the second hook went through the server
    assert spawns(home) == 1
    assert autostart.ensure(home, why="test", env=env) == "running"

    shown = run_cli(home, "status", "--json", "--no-index", env_extra={"SUZENT_SERVE_AUTOSTART": "1"})
    server = json.loads(shown.stdout)["server"]
    assert server["started_by"] == "hook recall" and server["auto"] is True
    assert server["autostart"]["enabled"] is True and server["autostart"]["last"]["why"] == "hook recall"
    text = run_cli(home, "status", "--no-index").stdout
    assert "hook recall (auto-start); exits after 60 min without a request" in text
    assert "autostart" in text and "SUZENT_SERVE_AUTOSTART=0" in text  # this run's own environment says off

    stopped = run_cli(home, "serve", "stop")
    assert stopped.returncode == 0 and f"stopped the server (pid {info['pid']})" in stopped.stdout
    assert not runtime.is_running(home) and runtime.read_info(home) is None
    assert autostart.read_record(home)["exit"] == 0  # a clean stop: no failed start
    assert autostart.ensure(home, why="again", env=env).startswith("started pid ")  # no back-off after it


def test_a_stale_server_is_replaced(tmp_path, reap):
    # What a SIGKILLed server leaves: serve.json naming a dead pid, a socket file nobody listens on, the lock
    # file (free), and the record of a server a person started that served.
    home = tmp_path / "h"
    reap(home)
    runtime.prepare_run_dir(home)
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    runtime.write_info(home, {"pid": dead.pid, "started": "2026-06-10T08:00:00Z", "port": 9,
                              "socket": str(paths.socket_path(home))})
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(paths.socket_path(home)))
    left.close()
    paths.lock_path(home).touch()
    autostart._write_record(home, {"pid": dead.pid, "at": time.time(), "why": "suzent serve", "auto": False,
                                   "failures": 0, "listening": time.time(), "ended": None, "exit": None})
    assert runtime.server_state(home) == {"running": False, "stale": True}
    said = autostart.ensure(home, why="hook recall", env=on_env(home))
    assert said.startswith("started pid "), said
    new = poll("a new server serves", lambda: serving(home))
    assert new["pid"] != dead.pid and new["started_by"] == "hook recall"


def test_a_crash_loop_forks_once_then_backs_off(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    (home / "config.toml").write_text("[serve]\nport = 99999\n")  # suzent serve exits 2 at start
    env = on_env(home)
    said = autostart.ensure(home, why="hook recall", env=env)
    assert said.startswith("started pid "), said
    pid = autostart.read_record(home)["pid"]
    poll("the server that cannot start exits", lambda: gone(pid))
    just_now(home)  # however long it took to die on a loaded machine, the back-off is still ahead
    answers = [autostart.ensure(home, why="hook recall", env=env) for _ in range(20)]
    assert all(a.startswith("backing off until ") and "1 failed start;" in a for a in answers), answers
    assert spawns(home) == 1 and autostart.read_record(home)["pid"] == pid
    assert "serve.port must be between 0 and 65535" in autostart.log_path(home).read_text()

    # the back-off passes (the record is moved back in time): one more spawn, then a doubled back-off
    record = autostart.read_record(home)
    autostart._write_record(home, {**record, "at": record["at"] - autostart.backoff(1) - 1})
    assert autostart.ensure(home, why="hook recall", env=env).startswith("started pid ")
    second = autostart.read_record(home)
    assert second["failures"] == 1 and second["pid"] != pid
    poll("the second server that cannot start exits", lambda: gone(second["pid"]))
    just_now(home)
    answers = [autostart.ensure(home, why="hook recall", env=env) for _ in range(10)]
    assert all(a.startswith("backing off until ") and "2 failed starts" in a for a in answers), answers
    assert spawns(home) == 2


WORKER = """
import sys, time
from suzent_cli.server.autostart import ensure
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
print(ensure(sys.argv[1], why="agent"))
"""


def test_two_agents_at_once_start_one_server(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    env = on_env(home)
    go = str(time.time() + 3)  # every worker is imported and waiting by then (a late one still runs the same code)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(home), go], stdout=subprocess.PIPE, text=True,
                              env=env, cwd=REPO) for _ in range(8)]
    said = [p.communicate(timeout=DEADLINE)[0].strip() for p in procs]
    assert sum(s.startswith("started pid ") for s in said) == 1, said
    assert all(s.startswith(("started pid ", "starting", "running")) for s in said), said
    info = poll("the one server serves", lambda: serving(home))
    assert spawns(home) == 1 and info["pid"] == autostart.read_record(home)["pid"]


def test_an_idle_auto_started_server_exits_and_cleans_up(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    (home / "config.toml").write_text("[serve]\nidle_minutes = 0.05\n")  # 3 s
    assert autostart.ensure(home, why="suzent mcp", env=on_env(home)).startswith("started pid ")
    pid = autostart.read_record(home)["pid"]
    poll("the server exits when idle", lambda: gone(pid) and not runtime.is_running(home))
    assert runtime.read_info(home) is None and not os.path.lexists(paths.socket_path(home))
    record = autostart.read_record(home)
    assert record["exit"] == 0 and record["listening"] is not None and record["failures"] == 0
    assert "(idle exit)" in autostart.log_path(home).read_text()


def test_the_auto_started_server_takes_any_port_when_its_own_is_taken(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        (home / "config.toml").write_text(f"[serve]\nport = {port}\n")
        assert autostart.ensure(home, why="hook recall", env=on_env(home)).startswith("started pid ")
        info = poll("the server serves", lambda: serving(home))
        assert info["port"] != port
        assert f"port {port} is taken" in autostart.log_path(home).read_text()
    finally:
        taken.close()


def test_suzent_mcp_without_a_server_starts_one(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    proc = subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), "mcp"], input="",
                          capture_output=True, text=True, env=on_env(home), cwd=REPO, timeout=DEADLINE)
    assert proc.returncode == 0, proc.stderr
    assert "suzent mcp: server started pid" in proc.stderr
    info = poll("the server serves", lambda: serving(home))
    assert info["started_by"] == "suzent mcp"


def test_serve_stop_ends_a_server_and_says_when_none_runs(tmp_path, reap):
    home = tmp_path / "h"
    reap(home)
    proc = start(home, "--no-chain")
    info = ready(home, proc)
    stopped = run_cli(home, "serve", "stop", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout) == {"stopped": True, "was_running": True, "pid": info["pid"],
                                          "message": f"stopped the server (pid {info['pid']}) of {home}"}
    assert proc.wait(timeout=DEADLINE) == 0
    again = run_cli(home, "serve", "stop")
    assert again.returncode == 0 and "no server runs on" in again.stdout
    record = autostart.read_record(home)
    assert record["auto"] is False and record["why"] == "suzent serve" and record["exit"] == 0


def test_serve_with_an_unknown_action_is_refused(tmp_path):
    r = run_cli(tmp_path / "h", "serve", "start")
    assert r.returncode == 2 and "Error: unknown action 'start'" in r.stderr


def test_a_broken_config_does_not_keep_a_server_running(tmp_path, reap):
    """A config.toml broken while a server runs: `suzent status` still shows the home (with the warning) and
    `suzent serve stop` still stops it; starting a server on it is refused."""
    home = tmp_path / "h"
    reap(home)
    proc = start(home, "--no-chain")
    info = ready(home, proc)
    (home / "config.toml").write_text('[serve]\nautostart = "maybe"\n', encoding="utf-8")
    bad = "serve] autostart must be true or false, got 'maybe'"
    env = {"SUZENT_SERVE_AUTOSTART": None}  # the file's value is read (the variable would win over it)
    shown = run_cli(home, "status", "--no-index", env_extra=env)
    assert shown.returncode == 0 and bad in shown.stderr and f"pid {info['pid']}" in shown.stdout
    stopped = run_cli(home, "serve", "stop", env_extra=env)
    assert stopped.returncode == 0 and f"stopped the server (pid {info['pid']})" in stopped.stdout
    assert stopped.stderr.startswith("warning: ") and bad in stopped.stderr
    assert proc.wait(timeout=DEADLINE) == 0
    refused = run_cli(home, "serve", "--port", "0", env_extra=env)
    assert refused.returncode == 2 and refused.stderr.startswith("Error: ") and bad in refused.stderr


# --- issue 25 loose ends --------------------------------------------------------------------------------------------

def suzent(home: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=DEADLINE)


def started_and_ready(home: Path, env: dict) -> int:
    """Auto-start a server for ``home`` and wait until it serves and has finished starting; its pid."""
    said = autostart.ensure(home, why="suzent index", env=env)
    assert said.startswith("started pid "), said
    info = poll("the auto-started server serves", lambda: serving(home))
    poll("the server has finished starting", lambda: autostart.read_record(home).get("ready"))
    return info["pid"]


def sigkill(home: Path, pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)
    poll("the killed server is gone", lambda: gone(pid) and not runtime.is_running(home))
    assert os.path.lexists(paths.socket_path(home)) and runtime.read_info(home)["pid"] == pid  # its leftovers


def indexed_home(tmp_path: Path, reap) -> tuple[Path, dict, dict]:
    """A home of one indexed fact, reaped at the end: ``(home, env with auto-start on, env with it off)``; the
    capture and the index ran with it off, so no server runs yet."""
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    env = on_env(home)
    off = {**env, "SUZENT_SERVE_AUTOSTART": "0"}
    assert suzent(home, off, "capture", "--fact", "[preference] Takes oat milk").returncode == 0
    assert suzent(home, off, "index").returncode == 0
    return home, env, off


def test_a_sigkilled_server_is_recognised_answered_cold_and_restarted(tmp_path, reap):
    """A relayed `suzent index` / `capture --fact … --index` whose server was SIGKILLed (record, socket and
    serve.json left behind): status shows the dead server at once, the command runs cold, correctly, with no
    traceback, and a server that had finished starting is restarted at once by it (the back-off of a second death
    in a row: tests/test_autostart.py)."""
    home, env, off = indexed_home(tmp_path, reap)
    first = started_and_ready(home, env)
    sigkill(home, first)
    failed = json.loads(suzent(home, off, "status", "--json", "--no-index").stdout)["server"]["autostart"]["failed"]
    assert failed["pid"] == first and failed["retry_at"] is None and "killed or crashed" in failed["error"]

    ran = suzent(home, env, "index")
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    assert "checked" in ran.stdout and "rows in all" in ran.stdout  # the cold run's own report
    record = autostart.read_record(home)
    assert record["pid"] != first and record["failures"] == 1  # a fresh server, started by that command
    second = record["pid"]
    assert poll("the fresh server serves", lambda: serving(home))["pid"] == second
    poll("the fresh server has finished starting", lambda: autostart.read_record(home).get("ready"))
    sigkill(home, second)

    captured = suzent(home, off, "capture", "--fact", "[preference] Drinks rooibos", "--index")
    assert captured.returncode == 0 and "Traceback" not in captured.stderr, captured.stderr
    assert "captured 1 fact(s)" in captured.stdout and "indexed: +1 rows" in captured.stdout
    assert autostart.read_record(home)["pid"] == second  # auto-start off for this one: nothing spawned


def test_status_shows_a_failed_auto_start_at_once_with_its_error(tmp_path, reap):
    home = tmp_path / "h"
    home.mkdir()
    reap(home)
    (home / "config.toml").write_text("[serve]\nport = 99999\n")  # suzent serve --auto exits 2 at start
    env = on_env(home)
    assert autostart.ensure(home, why="hook recall", env=env).startswith("started pid ")
    pid = autostart.read_record(home)["pid"]
    poll("the server that cannot start exits", lambda: gone(pid))
    just_now(home)
    shown = suzent(home, {**env, "SUZENT_SERVE_AUTOSTART": "0"}, "status", "--json", "--no-index")
    failed = json.loads(shown.stdout)["server"]["autostart"]["failed"]
    assert failed["pid"] == pid and failed["exit"] == 2 and failed["failures"] == 1
    assert "serve.port must be between 0 and 65535" in failed["error"]
    assert failed["retry_at"] is not None and failed["log"] == str(autostart.log_path(home))
    text = suzent(home, {**env, "SUZENT_SERVE_AUTOSTART": "0"}, "status", "--no-index").stdout
    assert f"failed: pid {pid} exited 2: serve.port must be between 0 and 65535" in text
    assert "1 failed start in a row" in text and "(back-off)" in text and str(autostart.log_path(home)) in text
    assert spawns(home) == 1  # status only looked


def test_an_auto_started_server_indexes_what_was_written_before_it_watched(tmp_path, reap):
    """The Stop hook that spawns a server writes its turn on the cold path, before the server's watcher runs: the
    auto-started server (no chain) runs one incremental pass after its preload, so the index catches up."""
    home, env, off = indexed_home(tmp_path, reap)
    assert suzent(home, off, "capture", "--fact", "[personal] Lives in Porto").returncode == 0  # not indexed

    def rows() -> int | None:
        shown = suzent(home, off, "status", "--json")
        return json.loads(shown.stdout)["index"].get("rows") if shown.returncode == 0 else None

    assert rows() == 1
    started_and_ready(home, env)
    poll("the auto-started server indexed the line written before it", lambda: rows() == 2)
