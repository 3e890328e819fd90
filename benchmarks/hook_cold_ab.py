#!/usr/bin/env python3
"""A/B: the cold Claude Code capture hook (no server), old code vs new, whole process, rounds alternated, each
variant on its own copy of one home of 1,000 facts indexed with the bundled model; every round captures a new turn.
Both run ``python -m suzent_cli capture --from claude-code`` (the same entry point). Prints wall and CPU medians.

Usage: python benchmarks/hook_cold_ab.py --old DIR [--new .] [--rounds 12]
"""

from __future__ import annotations

import argparse
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import serve  # noqa: E402
from claude_code_session import Transcript, payload  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, default=ROOT)
    ap.add_argument("--rounds", type=int, default=12)
    args = ap.parse_args()
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    base = Path(tempfile.mkdtemp(prefix="suzent-hook-ab-"))
    try:
        source = serve.make_home(base, "source", 1000, serve.MODEL)
        homes = {name: base / name for name in trees}
        for home in homes.values():
            shutil.copytree(source, home)
        transcripts = {name: Transcript(home / "t.jsonl") for name, home in homes.items()}
        wall: dict[str, list[float]] = {name: [] for name in trees}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        for i in range(args.rounds):
            for name in (("old", "new") if i % 2 else ("new", "old")):
                transcripts[name].turn(f"I moved my bench meeting {i} to Thursday at {9 + i % 8}am", "Noted.")
                env = dict(serve.env_for(homes[name]), PYTHONPATH=str(trees[name]))
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code"], check=True,
                               input=payload(transcripts[name].path).encode(), env=env, cwd=str(trees[name]),
                               capture_output=True)
                wall[name].append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("command: python benchmarks/hook_cold_ab.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    for name in trees:
        print(f"{name}: wall p50 {statistics.median(wall[name]):.3f} s, CPU p50 {statistics.median(cpu[name]):.3f} s")
    print(f"ratio new/old: wall {statistics.median(wall['new']) / statistics.median(wall['old']):.2f}x, "
          f"CPU {statistics.median(cpu['new']) / statistics.median(cpu['old']):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
