#!/usr/bin/env python3
"""Capture speed: a whole `suzent capture --fact ...` process, with an empty history and with 100k facts in it.

Target (issue): capture of ready fact lines, whole process, median over >= 20 runs, with 0 and with 100k facts
already in history: <= 0.25 s, flat (history size must not matter).

What is timed: wall clock of a real subprocess, from spawn to exit, capturing two ready fact lines into today's
log of a temp SUZENT_HOME. Two entry points are measured, interleaved round by round so machine noise hits all
variants alike:

* ``script``  — the console script ``.venv/bin/suzent`` (what users and agents run; the HEADLINE number)
* ``-m``      — ``python -m suzent_cli``
* ``patch`` / ``nopatch`` — ``python -c`` running the CLI's ``main()`` with ``cli/app.py``'s plain coercion kept,
  and with it undone (typer's own coercion, through pydantic): the evidence for keeping that patch (issue 14)

History: 365 daily logs before "today" plus a big today's log (the one capture appends to), 100,000 fact lines in
all, written in the archive format (:func:`suzent_cli.archive.render_entry`/``log_header``). By default a search
index is built over that history too (hash embedder, so no model is needed for the setup), to show capture does
not touch it. The run also checks, in a real process, that capture imports none of the heavy modules.

Usage: python benchmarks/capture_speed.py [--runs 25] [--facts 100000] [--no-index]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import synthetic_fact  # noqa: E402

from suzent_cli import archive  # noqa: E402

TODAY = dt.date(2026, 11, 29)
HEAVY = ("torch", "sentence_transformers", "transformers", "lancedb", "pyarrow", "anthropic", "numpy", "pydantic",
         "rich")
MUST_NOT = ("torch", "sentence_transformers", "transformers", "lancedb", "anthropic")
TARGET = 0.25

def build_history(home: Path, total: int, days: int = 365, today_share: float = 0.05, seed: int = 7) -> dict:
    """Write ``total`` facts: ``today_share`` of them into today's log, the rest over ``days`` earlier logs."""
    rng = random.Random(seed)
    archive_dir = home / "sandbox" / "shared" / "memory" / "archive"
    archive_dir.mkdir(parents=True, exist_ok=True)
    today_n = int(total * today_share)
    per_day = (total - today_n) // days
    counts = {TODAY - dt.timedelta(days=d): per_day for d in range(days, 0, -1)}
    counts[TODAY - dt.timedelta(days=1)] += (total - today_n) - per_day * days
    counts[TODAY] = today_n
    i = 0
    size = 0
    for day, n in counts.items():
        parts = [archive.log_header(day)]
        minute = 0
        while n > 0:
            k = min(n, rng.randint(1, 3))
            facts = [synthetic_fact(rng, i + j).clean() for j in range(k)]
            parts.append(archive.render_entry(facts, f"{(minute // 60) % 24:02d}:{minute % 60:02d}", "bench"))
            i, n, minute = i + k, n - k, minute + 1
        text = "".join(parts)
        (archive_dir / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")
        size += len(text.encode())
    return {"facts": i, "logs": len(counts), "bytes": size,
            "today_bytes": (archive_dir / f"{TODAY.isoformat()}.md").stat().st_size}


def build_index(home: Path) -> dict:
    """Index the history with the hash embedder (no model needed); returns the indexer report."""
    from suzent_cli.config import resolve_settings
    from suzent_cli.index.api import run_index
    from suzent_cli.index.embed import HashEmbedder

    settings = resolve_settings(home=str(home), today=TODAY.isoformat(), env={})
    report = run_index(settings, embedder=HashEmbedder(64))
    return {"rows": report.total_rows, "seconds": report.seconds}


def variants(python: Path) -> dict[str, list[str]]:
    script = python.parent / "suzent"
    out = {}
    if script.exists():
        out["script"] = [str(script)]
    out["-m"] = [str(python), "-m", "suzent_cli"]
    # Reference only: the same CLI with pydantic imported up front, i.e. the import chain before
    # suzent_cli.cli.app kept typer from coercing plain str/bool options through pydantic.
    out["ref"] = [str(python), "-c", "import sys, pydantic, typer._adapters; sys.argv[0] = 'suzent'; "
                                     "from suzent_cli.cli.app import main; main()"]
    # The typer question (issue 14, item 10): the same CLI with cli/app.py's plain coercion undone, i.e. typer's own
    # coercion of every option value (which builds a pydantic TypeAdapter), and its twin with the patch kept, so the
    # ratio compares two `-c` entry points that differ in nothing else.
    out["patch"] = [str(python), "-c", "import sys; sys.argv[0] = 'suzent'; "
                                       "from suzent_cli.cli.app import main; raise SystemExit(main())"]
    out["nopatch"] = [str(python), "-c", "import sys, typer.core as c; before = c._TyperParameter.get_runtime_param; "
                                         "sys.argv[0] = 'suzent'; from suzent_cli.cli.app import main; "
                                         "c._TyperParameter.get_runtime_param = before; raise SystemExit(main())"]
    out["floor"] = [str(python), "-c", "pass"]  # the capture args are ignored
    return out


LABELS = {"script": "`suzent` (console script) — headline", "-m": "`python -m suzent_cli`",
          "ref": "reference: + pydantic import (pre-fix chain)",
          "patch": "`-c main()`, plain coercion kept (cli/app.py as shipped)",
          "nopatch": "`-c main()`, plain coercion undone (typer's own, via pydantic)",
          "floor": "`python -c pass` (interpreter floor)"}


def capture_args(i: int) -> list[str]:
    return ["capture", "--fact", f"[preference] Prefers compact dashboards, run {i} `ui`",
            "--fact", f"[work] Standup moved to 9:30 (run {i})"]


def run_once(cmd: list[str], home: Path, i: int) -> tuple[float, float]:
    """(wall s, CPU s = user + sys of the child) of one whole capture process."""
    env = dict(os.environ, SUZENT_HOME=str(home), SUZENT_TODAY=TODAY.isoformat(), SUZENT_SERVE_AUTOSTART="0")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + capture_args(i), env=env, capture_output=True)
    elapsed = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"capture failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


_PROBE = (
    "import atexit, json, sys\n"
    "HEAVY = {heavy!r}\n"
    "atexit.register(lambda: sys.stderr.write('SUZENT-MODULES ' + json.dumps(sorted(m for m in HEAVY if m in "
    "sys.modules)) + '\\n'))\n"
    "sys.argv = ['suzent'] + {args!r}\n"
    "from suzent_cli.cli.app import main\n"
    "main()\n"
)


def imported_heavy(python: Path, home: Path, args: list[str]) -> list[str]:
    """Run the real CLI main in a fresh process; return which of HEAVY were imported by the time it exits."""
    env = dict(os.environ, SUZENT_HOME=str(home), SUZENT_TODAY=TODAY.isoformat(), SUZENT_SERVE_AUTOSTART="0")
    proc = subprocess.run([str(python), "-c", _PROBE.format(heavy=HEAVY, args=args)], env=env,
                          capture_output=True, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith("SUZENT-MODULES "):
            return json.loads(line.split(" ", 1)[1])
    raise SystemExit(f"probe failed ({proc.returncode}): {proc.stderr}")


def importtime_top(python: Path, home: Path, n: int = 8) -> list[tuple[str, int]]:
    """Top-level imports by cumulative microseconds under ``python -X importtime`` of the console entry point."""
    env = dict(os.environ, SUZENT_HOME=str(home), SUZENT_TODAY=TODAY.isoformat(), SUZENT_SERVE_AUTOSTART="0")
    proc = subprocess.run([str(python), "-X", "importtime", "-m", "suzent_cli"] + capture_args(0), env=env,
                          capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self_us, cum_us, raw_name = line[len("import time:"):].split("|")
        if len(raw_name) - len(raw_name.lstrip(" ")) == 1:  # depth 0: one space, then the name
            rows.append((raw_name.strip(), int(cum_us)))
    return sorted(rows, key=lambda r: -r[1])[:n]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=25, help="timed runs per variant (>= 20)")
    ap.add_argument("--facts", type=int, default=100_000, help="facts already in history for the big home")
    ap.add_argument("--no-index", action="store_true", help="do not build a search index over the big history")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="interpreter of the venv")
    args = ap.parse_args()
    python = Path(args.python)
    command = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/capture_speed.py", *sys.argv[1:]])

    with tempfile.TemporaryDirectory(prefix="suzent-bench-") as tmp:
        homes = {"0 facts": Path(tmp) / "empty", f"{args.facts // 1000}k facts": Path(tmp) / "big"}
        homes["0 facts"].mkdir()
        t0 = time.perf_counter()
        hist = build_history(homes[f"{args.facts // 1000}k facts"], args.facts)
        print(f"history: {hist['facts']} facts in {hist['logs']} logs, {hist['bytes'] / 1e6:.1f} MB "
              f"(today's log {hist['today_bytes'] / 1e6:.2f} MB), written in {time.perf_counter() - t0:.1f}s")
        if not args.no_index:
            idx = build_index(homes[f"{args.facts // 1000}k facts"])
            print(f"index over history: {idx['rows']} rows (hash embedder) in {idx['seconds']:.1f}s")

        cmds = variants(python)
        for cmd in cmds.values():  # warm-up: page cache and .pyc files
            for home in homes.values():
                run_once(cmd, home, -1)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {(v, h): [] for v in cmds for h in homes}
        for i in range(args.runs):
            order = [(v, h) for v in cmds for h in homes]
            if i % 2:
                order.reverse()
            for v, h in order:
                times[(v, h)].append(run_once(cmds[v], homes[h], i))

        big_log = homes[f"{args.facts // 1000}k facts"] / "sandbox/shared/memory/archive" / f"{TODAY.isoformat()}.md"
        appended = len(archive.read_log(big_log)) - int(args.facts * 0.05)
        heavy_capture = imported_heavy(python, homes["0 facts"], capture_args(99))
        heavy_help = imported_heavy(python, homes["0 facts"], ["--help"])
        top = importtime_top(python, homes["0 facts"])

    print()
    print(f"command: {command}")
    print(f"runs per cell: {args.runs}, all cells interleaved round by round; each run captures 2 ready fact lines")
    print()
    print("| entry point | history | median s | p90 s | min s | median CPU s | median vs 0 facts |")
    print("|---|---|---|---|---|---|---|")
    for v in cmds:
        base = statistics.median(w for w, _ in times[(v, "0 facts")])
        for h in homes:
            wall = [w for w, _ in times[(v, h)]]
            cpu = [c for _, c in times[(v, h)]]
            med = statistics.median(wall)
            print(f"| {LABELS[v]} | {h} | {med:.3f} | {pct(wall, 0.9):.3f} | {min(wall):.3f} | "
                  f"{statistics.median(cpu):.3f} | {med / base:.2f} |")
    print()
    head = "script" if "script" in cmds else "-m"
    med = {h: statistics.median(w for w, _ in times[(head, h)]) for h in homes}
    big = list(homes)[1]
    flat = med[big] / med["0 facts"]
    floor = statistics.median(w for w, _ in times[("floor", "0 facts")])
    ref = statistics.median(w for w, _ in times[("ref", "0 facts")])
    print(f"headline ({LABELS[head].split(' — ')[0]}): median {med['0 facts']:.3f} s with 0 facts, "
          f"{med[big]:.3f} s with {big}; ratio {flat:.2f}; interpreter floor {floor:.3f} s; "
          f"pre-fix reference {ref:.3f} s ({ref / med['0 facts']:.2f}x the headline)")
    patch = {h: statistics.median(w for w, _ in times[("patch", h)]) for h in homes}
    nopatch = {h: statistics.median(w for w, _ in times[("nopatch", h)]) for h in homes}
    print(f"typer's plain coercion: median {patch['0 facts']:.3f} / {patch[big]:.3f} s with it, "
          f"{nopatch['0 facts']:.3f} / {nopatch[big]:.3f} s without it (0 facts / {big}); without / with "
          f"{nopatch['0 facts'] / patch['0 facts']:.2f} / {nopatch[big] / patch[big]:.2f}; without it "
          f"{'within' if max(nopatch.values()) <= TARGET else 'OVER'} the {TARGET} s target")
    print(f"facts appended to the {big} home's today log during the runs: {appended} (expected "
          f"{2 * (args.runs + 1) * (len(cmds) - 1)})")
    print(f"heavy modules imported by `suzent capture --fact ...`: {heavy_capture or 'none'} "
          f"(must not: {', '.join(MUST_NOT)})")
    print(f"heavy modules imported by `suzent --help`: {heavy_help or 'none'}")
    print("top-level imports (python -X importtime -m suzent_cli capture ..., cumulative ms): "
          + ", ".join(f"{name} {us / 1000:.0f}" for name, us in top))
    bad = [m for m in MUST_NOT if m in heavy_capture or m in heavy_help]
    met = max(med.values()) <= TARGET and flat <= 1.10 and not bad
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    print(f"target: median <= {TARGET} s with 0 and {big}, flat (ratio <= 1.10), no heavy import: "
          f"{'MET' if met else 'NOT MET'}")


if __name__ == "__main__":
    main()
