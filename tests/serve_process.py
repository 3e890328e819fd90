"""A real ``suzent serve`` process for the integration tests (tests/integration/test_serve_process.py,
test_hooks_server.py, test_mcp_stdio.py): start it on a home, wait until it serves, stop it with a signal."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import HASH_ENV, REPO, cli_env
from suzent_cli.server import runtime
from suzent_cli.server.client import connect

DEADLINE = 180.0  # seconds: a ceiling for polling on a loaded machine, never a duration asserted


def start(home: Path, *args: str) -> subprocess.Popen:
    """``suzent --home HOME serve --port 0 ARGS`` (stderr to a temp file, read by :func:`stderr_of`)."""
    errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "--home", str(home), "serve", "--port", "0", *args],
                            stdout=subprocess.DEVNULL, stderr=errlog, env=cli_env(home, **HASH_ENV), cwd=REPO)
    proc.errlog = errlog
    return proc


def stderr_of(proc: subprocess.Popen) -> str:
    proc.errlog.seek(0)
    return proc.errlog.read()


def ready(home: Path, proc: subprocess.Popen) -> dict:
    """serve.json of ``proc`` once its local API answers; fails (with its stderr) if it exits first."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"suzent serve exited {proc.returncode}: {stderr_of(proc)}")
        info = runtime.read_info(home)
        if info and info.get("pid") == proc.pid and "socket" in info and (remote := connect(home, timeout=60)):
            remote.list_pages()  # answers: both listeners run on one loop, so MCP's is up too
            return info
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"suzent serve was not ready in time: {stderr_of(proc)}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"suzent serve did not stop on {signal.Signals(sig).name}: {stderr_of(proc)}")


