"""A/B start-up cost of two checkouts: the whole `suzent capture --fact` process, rounds alternated old/new.

Measures wall and CPU (user+sys, from the child's rusage) per process and prints medians and the ratio. `.pyc`
files are allowed (PYTHONDONTWRITEBYTECODE is removed from the environment; two warm-up runs write them); pass
--no-bytecode to compile every module on every start, as an environment with PYTHONDONTWRITEBYTECODE=1 does.

    python benchmarks/startup_ab.py --old /tmp/bench-old --new . --rounds 15
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(tree: Path, home: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one capture process running ``tree``'s code against ``home``."""
    e = dict(env, PYTHONPATH=str(tree), SUZENT_HOME=str(home), SUZENT_NOW="2026-06-10T12:00")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "suzent_cli", "capture", "--fact", "[preference] Likes tea"], env=e,
                   cwd=tree, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="checkout of the old code")
    ap.add_argument("--new", type=Path, default=Path("."), help="checkout of the new code [.]")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-bytecode", action="store_true", help="compile on every start (PYTHONDONTWRITEBYTECODE=1)")
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("SUZENT_")}
    env["SUZENT_SERVE_AUTOSTART"] = "0"  # a hook without a server must not start one mid-measurement
    if args.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        homes = {name: Path(tmp) / name for name in trees}
        for name, tree in trees.items():  # warm-up: .pyc files and the page cache
            run_once(tree, homes[name], env)
            run_once(tree, homes[name], env)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                results[name].append(run_once(tree, homes[name], env))
    print(f"$ python benchmarks/startup_ab.py --old {args.old} --new {args.new} --rounds {args.rounds}"
          f"{' --no-bytecode' if args.no_bytecode else ''}")
    print("| code | median wall s | median CPU s |\n|---|---|---|")
    med = {n: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for n, r in results.items()}
    for name, (wall, cpu) in med.items():
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")
    print(f"new / old: wall x{med['new'][0] / med['old'][0]:.3f}, CPU x{med['new'][1] / med['old'][1]:.3f}; "
          f"load {' '.join(open('/proc/loadavg').read().split()[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
