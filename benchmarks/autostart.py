#!/usr/bin/env python3
"""What the auto-start costs (issue 25, item 1): :func:`suzent_cli.server.autostart.ensure` itself, and the cold
recall hook that triggers a spawn against the same hook with the auto-start off.

Cases (a home of two facts indexed with the ``hash:64`` embedder, so no model is involved):

* ``ensure: server runs`` — ``ensure`` with a server answering (one connect on its socket), in this process.
* ``ensure: off (variable)`` — ``SUZENT_SERVE_AUTOSTART=0``: no file read.
* ``ensure: off (config.toml)`` — ``serve.autostart = false`` in the home's config.toml (one read, one TOML parse).
* ``ensure: backing off`` — a crash loop's state (a failed start recorded a moment ago): the decision lock, the
  record, a lock probe, no fork.
* ``ensure: spawns`` — no server, auto-start on: ``ensure`` forks the server (in this process; the server killed
  after each call).
* ``hook: off`` / ``hook: spawns`` — a whole ``python -m suzent_cli recall --from claude-code`` process with no
  server, auto-start off, and on (it forks the server, then answers by the cold path); interleaved round by round,
  the spawned server killed and its record removed after each round. The difference is what the spawn adds to
  the hook that makes it.

Per-call figures of ``ensure`` are medians of ``--calls`` calls; hook figures medians of ``--rounds`` processes
(wall time, fork to exit). Temporary homes are deleted at the end; every server started is killed.

Usage: python benchmarks/autostart.py [--calls 50] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suzent_cli.server import autostart, runtime  # noqa: E402
from suzent_cli.server.client import connect  # noqa: E402

PROMPT = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "where does the user live", "session_id": "s1"})


def env_for(home: Path, on: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_")) and k != "CI"}
    env.update(SUZENT_HOME=str(home), SUZENT_EMBEDDER="hash:64", PYTHONPATH=str(ROOT), NO_COLOR="1",
               SUZENT_SERVE_AUTOSTART="1" if on else "0")
    return env


def cli(home: Path, *args: str, on: bool = False, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suzent_cli", *args], input=stdin, capture_output=True, text=True,
                          env=env_for(home, on), cwd=ROOT, timeout=300)


def make_home(home: Path) -> None:
    home.mkdir()
    for fact in ("[personal] Lives in Lyon", "[preference] Prefers oat milk in coffee"):
        assert cli(home, "capture", "--fact", fact).returncode == 0
    assert cli(home, "index").returncode == 0


def kill_servers(home: Path) -> None:
    for pid in {autostart.read_record(home).get("pid"), runtime.running_pid(home)}:
        if isinstance(pid, int) and autostart.alive(pid):
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    deadline = time.monotonic() + 120
    while runtime.is_running(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    for name in (autostart.RECORD,):
        try:
            os.unlink(autostart.record_path(home).with_name(name))
        except FileNotFoundError:
            pass


def per_call(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        make_home(home)
        try:
            # ensure with a server running
            said = autostart.ensure(home, why="benchmark", env=env_for(home, True))
            assert said.startswith("started pid "), said
            deadline = time.monotonic() + 180
            while connect(home, timeout=5) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            env_on = env_for(home, True)
            assert autostart.ensure(home, why="benchmark", env=env_on) == "running"
            rows.append(("ensure: server runs", f"{per_call(lambda: autostart.ensure(home, why='b', env=env_on), args.calls) * 1e3:.3f} ms", "running"))
            kill_servers(home)

            env_off = env_for(home, False)
            rows.append(("ensure: off (variable)", f"{per_call(lambda: autostart.ensure(home, why='b', env=env_off), args.calls) * 1e3:.3f} ms",
                         autostart.ensure(home, why="b", env=env_off)))
            env_file = {k: v for k, v in env_on.items() if k != "SUZENT_SERVE_AUTOSTART"}
            (home / "config.toml").write_text("[serve]\nautostart = false\n")
            rows.append(("ensure: off (config.toml)", f"{per_call(lambda: autostart.ensure(home, why='b', env=env_file), args.calls) * 1e3:.3f} ms",
                         autostart.ensure(home, why="b", env=env_file)))
            (home / "config.toml").unlink()

            now = time.time()
            dead = subprocess.Popen([sys.executable, "-c", ""])
            dead.wait()
            autostart._write_record(home, {"pid": dead.pid, "at": now, "why": "b", "auto": True, "failures": 0,
                                           "listening": None, "ended": None, "exit": None})
            rows.append(("ensure: backing off", f"{per_call(lambda: autostart.ensure(home, why='b', env=env_on), args.calls) * 1e3:.3f} ms",
                         autostart.ensure(home, why="b", env=env_on)[:40] + "…"))
            kill_servers(home)

            spawn_times = []
            for _ in range(args.rounds):
                t = time.perf_counter()
                said = autostart.ensure(home, why="b", env=env_on)
                spawn_times.append(time.perf_counter() - t)
                assert said.startswith("started pid "), said
                kill_servers(home)
            rows.append(("ensure: spawns", f"{statistics.median(spawn_times) * 1e3:.3f} ms",
                         f"median of {args.rounds} (fork + exec, not the server's start)"))

            hook: dict[str, list[float]] = {"off": [], "spawns": []}
            for _ in range(args.rounds):
                for case in ("off", "spawns"):
                    t = time.perf_counter()
                    r = cli(home, "recall", "--from", "claude-code", "--timeout", "60", on=case == "spawns",
                            stdin=PROMPT)
                    hook[case].append(time.perf_counter() - t)
                    assert r.returncode == 0, r.stderr
                    if case == "spawns":
                        assert autostart.read_record(home).get("pid"), "no spawn recorded"
                        kill_servers(home)
            off, on = statistics.median(hook["off"]), statistics.median(hook["spawns"])
            rows.append(("hook: off (no server)", f"{off * 1e3:.0f} ms", f"median of {args.rounds}"))
            rows.append(("hook: spawns (no server)", f"{on * 1e3:.0f} ms", f"+{(on - off) * 1e3:.0f} ms, {on / off:.2f}×"))
        finally:
            kill_servers(home)
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'median':>10}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>10}  {note}")
    print("\ncommand: " + " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
