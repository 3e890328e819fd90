#!/usr/bin/env python3
"""Hooks bounded by construction (issue 24): oversized input to the Claude Code hooks, whole processes.

Cases (each a real ``python -m suzent_cli`` process of the tree given, on a home of two facts indexed with the
``hash:64`` embedder, so no model is involved):

* ``recall-50MB`` — a 50 MB ``UserPromptSubmit`` payload (one huge ``prompt``) on the cold recall hook's stdin
  (no server, default ``--timeout 2``). The writer's share of the 50 MB the hook actually took is shown too
  (``stdin read``): the hook stops reading at its cap, the writer then sees a broken pipe.
* ``stop-2GB-cold`` — a ``Stop`` payload whose transcript is one 2 GB line with no newline (a sparse file, so it
  costs no disk), on the cold capture hook (default ``--timeout 10``).
* ``stop-2GB-server`` — the same with a ``suzent serve`` running on the home: the hook asks the server, the
  server's peak RSS (``VmHWM``) and how long it kept working after the hook exited (its CPU time still growing)
  are measured until it has been idle for 3 s (at most 120 s).
* ``stop-2GB-server-1s`` — the same with ``--timeout 1``: the hook gives up long before the server could have read
  the line; does the server's work stop with it?
* ``stop-2GB-server-killed`` — the same with ``--timeout 60``, the hook killed (SIGKILL) 0.5 s after it started, as
  Claude Code kills a hook: does the server's work stop when its client has gone?

For each: wall time of the hook process (fork to exit), its peak RSS (``ru_maxrss`` of the child, from
``os.wait4`` in a small launcher that forks it: see :data:`LAUNCHER`), exit code and first stderr line; with a
server, also the bytes it read (``rchar``). Run it with ``--tree`` at the code to measure (``PYTHONPATH``), e.g.
``--tree /tmp/base`` after ``git archive <commit> | tar -x -C /tmp/base`` for the code before a fix. Temporary
files (the 2 GB sparse transcript included) are deleted at the end.

Usage: python benchmarks/hook_bounds.py [--tree DIR] [--cases recall-50MB,stop-2GB-cold,stop-2GB-server,
       stop-2GB-server-1s,stop-2GB-server-killed]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("recall-50MB", "stop-2GB-cold", "stop-2GB-server", "stop-2GB-server-1s", "stop-2GB-server-killed")
SID = "5c9e2b7a-3f41-4d8e-9b6a-0e1f2a3b4c5d"
PROMPT_BYTES = 50 * 1000 * 1000
LINE_BYTES = 2 * 1000 * 1000 * 1000
IDLE = 3.0  # seconds without CPU growth: the server has stopped working on the request
SERVER_WATCH = 120.0


def env_for(home: Path, tree: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(SUZENT_HOME=str(home), SUZENT_EMBEDDER="hash:64", PYTHONPATH=str(tree), NO_COLOR="1",
               SUZENT_SERVE_AUTOSTART="0")  # cold means no server: none may start itself
    return env


def make_home(home: Path, tree: Path) -> None:
    env = env_for(home, tree)
    for args in (["capture", "--fact", "[preference] Prefers green tea in the morning",
                  "--fact", "[personal] Lives in Lisbon"], ["index"]):
        subprocess.run([sys.executable, "-m", "suzent_cli", *args], env=env, cwd=str(tree), check=True,
                       capture_output=True)


# The hook is started through this small launcher, which forks it and reports its rusage: a child's ru_maxrss
# starts at its parent's peak (Linux keeps the high-water mark across fork and exec), and this benchmark's process
# holds the 50 MB payload, so the hook is forked from the launcher (a fresh interpreter of ~10 MB) instead.
LAUNCHER = """
import json, os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *argv])
os.close(0)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as fh:
    json.dump({"wall": wall, "rss_mb": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status)}, fh)
"""


def run_hook(tree: Path, home: Path, args: list[str], feed, kill_after: float | None = None) -> dict:
    """One hook process: ``feed(pipe)`` writes its stdin (in a thread; a broken pipe ends it). Returns wall, peak
    RSS (MB), exit code (of the hook itself, from the launcher), stderr's first line and what the feeder wrote."""
    err = tempfile.TemporaryFile()
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, report.name, "-m", "suzent_cli", *args],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
                                env=env_for(home, tree), cwd=str(tree))
        box = {"written": 0}

        def write() -> None:
            try:
                feed(proc.stdin, box)
            except (BrokenPipeError, OSError):
                box["broken"] = True
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=write, daemon=True)
        feeder.start()
        if kill_after is not None:  # the hook is the launcher's child
            threading.Timer(kill_after, lambda: [os.kill(int(pid), signal.SIGKILL) for pid in Path(
                f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]).start()
        proc.wait()
        feeder.join(10)
        result = json.loads(Path(report.name).read_text())
    err.seek(0)
    lines = err.read().decode("utf-8", "replace").splitlines()
    return {**result, "stderr": lines[0][:110] if lines else "", "written": box["written"],
            "broken": box.get("broken", False)}


def feed_bytes(data: bytes):
    def feed(pipe, box) -> None:
        view = memoryview(data)
        for i in range(0, len(view), 1 << 16):
            pipe.write(view[i:i + (1 << 16)])
            box["written"] += len(view[i:i + (1 << 16)])
        pipe.flush()
    return feed


def server_read(pid: int) -> int:
    """Bytes process ``pid`` has read so far (``rchar`` of /proc/<pid>/io: every read call, page cache or not)."""
    with open(f"/proc/{pid}/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def server_stats(pid: int) -> tuple[float, float]:
    """(VmHWM in MB, CPU seconds so far) of process ``pid``."""
    hwm = 0.0
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return hwm, (int(fields[11]) + int(fields[12])) / tick


def idle(pid: int, since: float) -> float:
    """Wait until process ``pid`` has used no CPU for :data:`IDLE` seconds (at most :data:`SERVER_WATCH`); returns
    how long after ``since`` it last did."""
    last_cpu, last_change = server_stats(pid)[1], since
    while time.monotonic() - last_change < IDLE and time.monotonic() - since < SERVER_WATCH:
        time.sleep(0.25)
        cpu = server_stats(pid)[1]
        if cpu > last_cpu + 0.05:
            last_cpu, last_change = cpu, time.monotonic()
    return max(0.0, last_change - since)


def start_server(tree: Path, home: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "serve", "--port", "0", "--no-chain",
                             "--no-watch"], env=env_for(home, tree), cwd=str(tree), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    sys.path.insert(0, str(tree))
    from suzent_cli.server.client import connect  # the tree's own client

    end = time.monotonic() + 120
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"suzent serve exited {proc.returncode}")
        info = home / "server" / "serve.json"
        try:
            if "socket" in json.loads(info.read_text()) and (remote := connect(home, timeout=60)):
                remote.list_pages()
                return proc
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("suzent serve was not ready in 120 s")


def case_recall(tree: Path, base: Path) -> dict:
    home = base / "recall"
    make_home(home, tree)
    data = json.dumps({"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/work/proj",
                       "hook_event_name": "UserPromptSubmit",
                       "prompt": "green tea morning " * (PROMPT_BYTES // 18)}).encode()
    return run_hook(tree, home, ["recall", "--from", "claude-code"], feed_bytes(data))


def _stop_payload(base: Path) -> bytes:
    transcript = base / "huge.jsonl"
    with transcript.open("wb") as fh:
        fh.truncate(LINE_BYTES)  # sparse: 2 GB of NUL bytes, no newline, no disk used
    return json.dumps({"session_id": SID, "transcript_path": str(transcript), "cwd": "/work/proj",
                       "hook_event_name": "Stop", "stop_hook_active": False}).encode()


def case_stop_cold(tree: Path, base: Path) -> dict:
    home = base / "stop-cold"
    make_home(home, tree)
    return run_hook(tree, home, ["capture", "--from", "claude-code"], feed_bytes(_stop_payload(base)))


def case_stop_server(tree: Path, base: Path, *extra: str, kill_after: float | None = None) -> dict:
    home = base / "stop-server"
    make_home(home, tree)
    server = start_server(tree, home)
    try:
        hwm0, _ = server_stats(server.pid)
        idle(server.pid, time.monotonic())  # the model preload and the index open, started with the server
        read0 = server_read(server.pid)
        result = run_hook(tree, home, ["capture", "--from", "claude-code", *extra], feed_bytes(_stop_payload(base)),
                          kill_after)
        exited = time.monotonic()
        busy = idle(server.pid, exited)
        hwm, _ = server_stats(server.pid)
        result.update(server_hwm_before=hwm0, server_hwm=hwm, server_busy_after=busy,
                      server_read=server_read(server.pid) - read0)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="the suzent checkout to run (PYTHONPATH)")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    tree = args.tree.resolve()
    runs = {"recall-50MB": case_recall, "stop-2GB-cold": case_stop_cold, "stop-2GB-server": case_stop_server,
            "stop-2GB-server-1s": lambda tree, base: case_stop_server(tree, base, "--timeout", "1"),
            "stop-2GB-server-killed": lambda tree, base: case_stop_server(tree, base, "--timeout", "60",
                                                                          kill_after=0.5)}
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    for name in chosen:
        if name not in runs:
            raise SystemExit(f"unknown case {name!r} (known: {', '.join(CASES)})")
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rows = []
    for name in chosen:
        base = Path(tempfile.mkdtemp(prefix="suzent-hook-bounds-"))
        try:
            rows.append((name, runs[name](tree, base)))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    print("command: python benchmarks/hook_bounds.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"tree: {tree} ({commit or 'no git'})")
    print(f"{'case':<22} {'wall':>7} {'hook peak RSS':>14} {'exit':>4}  {'stdin read':>10}  "
          f"{'server peak RSS':>16} {'server read':>11} {'server busy after':>17}  first stderr line")
    for name, r in rows:
        read = (f"{r['written'] / 1e6:.1f} MB" if r["written"] >= 1e5 else f"{r['written']} B") + \
            ("*" if r["broken"] else "")
        server = f"{r['server_hwm']:.0f} MB" if "server_hwm" in r else "-"
        busy = f"{r['server_busy_after']:.1f} s" if "server_busy_after" in r else "-"
        got = f"{r['server_read'] / 1e9:.2f} GB" if "server_read" in r else "-"
        print(f"{name:<22} {r['wall']:>6.2f}s {r['rss_mb']:>11.0f} MB {r['exit']:>4}  {read:>10}  {server:>16} "
              f"{got:>11} {busy:>17}  {r['stderr']}")
    print("stdin read: bytes the writer got into the pipe before the hook exited (* = it then saw a broken pipe); "
          "server peak RSS: VmHWM after the hook, the server's own peak so far; server read: bytes it read from the "
          "hook's start until idle; busy after: how long it kept using CPU after the hook exited; exit -9: killed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
