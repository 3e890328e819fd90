#!/usr/bin/env python3
"""The first minute of a server: the recall hook's latency and answers from the moment ``suzent serve`` starts,
old code vs new, rounds alternated (old new new old …), each round on a fresh copy of one home of 1,000 facts
indexed with the bundled model.

Each round starts ``suzent serve --port 0`` (chain on, as a person runs it) and at once begins firing the recall
hook (``suzent recall --from claude-code``, the command Claude Code runs, default 2 s timeout) every
``--every`` seconds for ``--seconds`` seconds, each a whole process with bytecode cached. Before the socket
exists a hook takes the cold path, as it would for a person. A hook "answered" when it printed recall context;
"skipped" when it printed its no-answer warning. Each hook also notes whether the server's socket existed when it
was fired (``suzent_cli.server.paths.socket_path``): those are the hooks the server answers, the ones item 3 of
issue 25 is about. Prints, per variant: all hooks, then those fired once the socket existed (fired, answered,
skipped, wall p50 / p95 / max, and the seconds from the server's start to the socket), then the command line.

Usage: python benchmarks/warm_start.py --old DIR [--new .] [--rounds 2] [--seconds 60] [--every 1.0]
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import serve  # noqa: E402

PROMPTS = ["Which editor does the user like to work in these days?", "Remind me what we planned for the trip to Lisbon",
           "What did we decide about the quarterly report format?", "How does the user usually take their coffee?",
           "Which programming languages does the user prefer for tooling?", "What is the user's favourite cuisine?"]


def fire(tree: Path, home: Path, text: str) -> tuple[float, bool, bool, bool]:
    """One recall hook process: ``(wall seconds, answered, skipped, socket existed when fired)``."""
    from suzent_cli.server.paths import socket_path

    served = socket_path(home).exists()
    payload = json.dumps({"session_id": "bench-warm-start", "transcript_path": "/tmp/none.jsonl", "cwd": str(home),
                          "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text})
    env = dict(serve.env_for(home), PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "suzent_cli", "recall", "--from", "claude-code"], input=payload.encode(),
                          env=env, cwd=str(tree), capture_output=True, timeout=120)
    wall = time.perf_counter() - t0
    answered = b"additionalContext" in done.stdout
    return wall, answered, (not answered and b"recall" in done.stderr and b"skipped" in done.stderr
                            or b"no answer" in done.stderr), served


def one_round(tree: Path, home: Path, seconds: float, every: float) -> tuple[list[tuple[float, bool, bool, bool]],
                                                                            float | None]:
    """One server's first ``seconds``: the hooks' results and the seconds from its start to its socket (None when
    it never appeared)."""

    env = dict(serve.env_for(home), PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    log = open(home / "serve.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", "serve", "--port", "0"], env=env, cwd=str(tree),
                            stdout=log, stderr=log, start_new_session=True)
    results = []
    socket_at = None
    try:
        start = time.monotonic()
        i = 0
        while time.monotonic() - start < seconds:
            tick = time.monotonic()
            results.append(fire(tree, home, PROMPTS[i % len(PROMPTS)]))
            if socket_at is None and results[-1][3]:
                socket_at = tick - start  # the first hook that found it: an upper bound, to within --every
            i += 1
            time.sleep(max(0.0, every - (time.monotonic() - tick)))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    return results, socket_at


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, default=ROOT)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--facts", type=int, default=1000)
    args = ap.parse_args()
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for tree in trees.values():  # bytecode cached, as users run it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "suzent_cli")], check=False)
    base = Path(tempfile.mkdtemp(prefix="suzent-warm-start-"))
    got: dict[str, list[tuple[float, bool, bool, bool]]] = {name: [] for name in trees}
    sockets: dict[str, list[float]] = {name: [] for name in trees}
    try:
        source = serve.make_home(base, "source", args.facts, serve.MODEL)
        order = []
        for i in range(args.rounds):
            order += ["old", "new"] if i % 2 == 0 else ["new", "old"]
        for n, name in enumerate(order):
            home = base / f"{name}-{n}"
            shutil.copytree(source, home)
            rows, socket_at = one_round(trees[name], home, args.seconds, args.every)
            got[name] += rows
            if socket_at is not None:
                sockets[name].append(socket_at)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("command: python benchmarks/warm_start.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"{'variant':8} {'hooks':14} {'fired':>6} {'answered':>9} {'skipped':>8} {'p50 s':>7} {'p95 s':>7} "
          f"{'max s':>7} {'socket at s':>12}")
    for name, rows in got.items():
        at = " ".join(f"{s:.0f}" for s in sockets[name]) or "-"
        for label, part in (("all", rows), ("socket present", [r for r in rows if r[3]])):
            if not part:
                print(f"{name:8} {label:14} {0:6d}")
                continue
            walls = [r[0] for r in part]
            print(f"{name:8} {label:14} {len(part):6d} {sum(r[1] for r in part):9d} {sum(r[2] for r in part):8d} "
                  f"{pct(walls, 50):7.2f} {pct(walls, 95):7.2f} {max(walls):7.2f} {at:>12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
