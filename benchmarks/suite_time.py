#!/usr/bin/env python3
"""The test suite's time (issue 25, item 7: <= 6 minutes on a quiet clean clone): wall time and CPU (user + sys
of pytest and every process it started, from the OS) of `pytest -q` as `make test` runs it, and optionally the
same suite on one process, alternated run by run so both see the same machine.

CPU seconds say what the suite costs whatever else runs on the machine; wall seconds are the figure the issue
sets, and depend on the load: quote the load average printed with them.

Usage: python benchmarks/suite_time.py [--serial] [--rounds 1] [-- EXTRA PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARALLEL = ["-n", "auto", "--dist", "loadscope"]  # = the Makefile's test line


def run(extra: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one suite run."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    code = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serial", action="store_true", help="also run the suite on one process, alternated")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args(argv)
    variants = {"make test (-n auto)": PARALLEL + args.pytest_args}
    if args.serial:
        variants["one process"] = list(args.pytest_args)
    rows = []
    for _ in range(args.rounds):
        for name, extra in variants.items():
            load = os.getloadavg()[0]
            wall, cpu, code = run(extra)
            rows.append((name, wall, cpu, code, load))
    print(f"$ python benchmarks/suite_time.py{' --serial' if args.serial else ''} --rounds {args.rounds}")
    print("| run | wall s | CPU s | exit | load at start |\n|---|---|---|---|---|")
    for name, wall, cpu, code, load in rows:
        print(f"| {name} | {wall:.0f} | {cpu:.0f} | {code} | {load:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
