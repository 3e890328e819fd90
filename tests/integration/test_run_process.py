"""`suzent loop` and `suzent status` as real processes, where the process is the point: a signal stops the loop
(SIGTERM while sleeping, SIGINT exits 130), and `status --no-index` imports no lancedb into a fresh interpreter.
The rest of `run`/`loop`/`status` is tested in-process in tests/test_run.py, whose helpers this uses."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock
from test_run import ENV, fill, settings_at

from conftest import REPO, cli_env
from suzent_cli.run import STAGES


def _start_loop(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "suzent_cli", "loop", "--json", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli_env(home, **ENV), cwd=REPO)


def _first_pass(proc: subprocess.Popen, timeout: float = 60) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        proc.kill()
        pytest.fail("the loop printed no pass in time")
    return json.loads(proc.stdout.readline())


def _locks_free(home: Path) -> None:
    s = settings_at(home)
    for path in (s.paths.state_dir / ".dream.lock", s.paths.index_dir / ".indexer.lock",
                 s.paths.archive_dir / ".append.lock"):
        lock = FileLock(str(path), timeout=0)
        lock.acquire()  # raises Timeout if the loop still held it
        lock.release()


def test_loop_stops_cleanly_on_sigterm_while_sleeping(home):
    """The signal ends the sleep itself: with an hour's interval the loop can only be gone within the generous
    bound below (a hang guard, not a speed check: the two outcomes are ~0 s and 3600 s apart) if SIGTERM cut the
    sleep short, and it ran exactly one pass."""
    fill(home, 3)
    proc = _start_loop(home, "--interval", "3600")
    first = _first_pass(proc)
    assert first["pass"] == 1 and [s["name"] for s in first["stages"]] == list(STAGES)
    proc.send_signal(signal.SIGTERM)
    try:
        out, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("SIGTERM did not end the loop's sleep: it would wait out its 3600 s interval")
    assert proc.returncode == 0, stderr
    assert not out.strip()  # no second pass was started after the signal
    assert "stopped (SIGTERM) after 1 pass" in stderr
    _locks_free(home)
    assert not (settings_at(home).paths.state_dir / ".dream.lock.holder").exists()


def test_loop_sigint_exits_130(home):
    fill(home, 3)
    proc = _start_loop(home, "--interval", "1")
    _first_pass(proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)  # a hang guard (the interval is 1 s), not a speed check
    assert proc.returncode == 130 and "stopped (SIGINT)" in stderr, stderr
    _locks_free(home)


def test_status_no_index_imports_no_lancedb(home):
    fill(home, 2)
    code = ("import sys; from suzent_cli.cli.app import main; sys.argv = ['suzent', 'status', '--no-index', '--json'];\n"
            "try:\n    raise SystemExit(main())\nfinally:\n    assert not any(m.startswith(('lancedb', 'torch')) for m in sys.modules), 'lancedb'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(home, **ENV),
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"] is None and data["logs"]["facts"] == 4 and data["vault"]["claims"] == 0
    assert data["memory_md"]["exists"] is False and data["pending"]["facts"] == 4
