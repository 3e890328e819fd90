#!/usr/bin/env python3
"""`suzent capture --fact` against the import floor of its CLI stack, `python -c "import typer, rich"` (issue 25,
item 6: goal <= 1.6x), the two processes alternated pair by pair so machine noise hits both alike.

Bytecode is cached, as users have it: PYTHONDONTWRITEBYTECODE is removed from the children's environment and each
command runs twice first (writing the .pyc files, warming the page cache). Each run is a whole process; wall time
from spawn to exit and CPU (user + sys of the child, from its rusage). The capture appends one preference fact to
today's log of a temp home (so the MEMORY.md refresh runs, as for any personal fact); output is piped, as an agent
calls it. Reported: medians, and the median of the per-pair ratios capture/floor.

Variants (``--variants``): ``module`` (``python -m suzent_cli``, the default), ``script`` (the ``suzent`` console
script next to the interpreter, when installed), ``typer`` (the CLI's typer path: ``suzent_cli.cli.app.main``, the
way every capture ran before the fast path).

Usage: python benchmarks/capture_floor.py [--pairs 40] [--variants module,typer]
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

ROOT = Path(__file__).resolve().parent.parent
FACT = "[preference] Prefers oat milk in coffee"
FLOOR = [sys.executable, "-c", "import typer, rich"]


def commands() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "suzent"
    found = {"module": [sys.executable, "-m", "suzent_cli", "capture", "--fact", FACT],
             "typer": [sys.executable, "-c", "import sys; from suzent_cli.cli.app import main; "
                       "sys.exit(main(['capture', '--fact', sys.argv[1]]))", FACT]}
    if script.is_file():
        found["script"] = [sys.executable, str(script), "capture", "--fact", FACT]
    return found


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--variants", default="module,typer", help="comma-separated: module, script, typer")
    args = ap.parse_args(argv)
    available = commands()
    variants = [v for v in args.variants.split(",") if v in available]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("SUZENT_")}
        env.update(SUZENT_HOME=str(Path(tmp) / "home"), PYTHONPATH=str(ROOT), SUZENT_SERVE_AUTOSTART="0")
        for cmd in [FLOOR, *(available[v] for v in variants)]:  # warm-up: .pyc files, page cache, the home
            run_once(cmd, env)
            run_once(cmd, env)
        floor: list[tuple[float, float]] = []
        got: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
        for _ in range(args.pairs):
            for v in variants:
                got[v].append(run_once(available[v], env))
                floor.append(run_once(FLOOR, env))
    print(f"$ python benchmarks/capture_floor.py --pairs {args.pairs} --variants {','.join(variants)}")
    print(f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; "
          f"floor = {' '.join(FLOOR[1:])!r})\n")
    print("| process | median wall s | median CPU s | ratio wall (median of pairs) | ratio CPU (median of pairs) |")
    print("|---|---|---|---|---|")
    print(f"| floor: import typer, rich | {statistics.median(w for w, _ in floor):.3f} | "
          f"{statistics.median(c for _, c in floor):.3f} | 1 | 1 |")
    for i, v in enumerate(variants):
        pairs = list(zip(got[v], floor[i::len(variants)], strict=True))
        wall = statistics.median(a[0] / b[0] for a, b in pairs)
        cpu = statistics.median(a[1] / b[1] for a, b in pairs if b[1] > 0)
        print(f"| capture --fact ({v}) | {statistics.median(w for w, _ in got[v]):.3f} | "
              f"{statistics.median(c for _, c in got[v]):.3f} | {wall:.2f} | {cpu:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
