#!/usr/bin/env python3
"""Dream speed: the offline rules engine folding a long backlog of daily logs into the vault.

Target (issue 3): 130 days × 30 facts through the rules engine in ≤ 30 s on this machine.

Setup: a temp SUZENT_HOME with DAYS daily logs of FACTS facts each, written in the archive format. About
``--repeat`` of the facts restate a claim seen before (drawn from a pool of 300 synthetic claims, sometimes with
a trailing full stop or a different case, which must fold), the rest are new. Categories are the extractor's
(personal, preference, goal, interaction, context, technical, general), so every page route is exercised.

What is timed: ``DreamRunner.tick(force=True)`` in one process, tick after tick, until the watermark reaches the
last log (14-day batches: 10 ticks for 130 days), plus a lint pass at the end; no index follow-up. Each tick is
the whole runner: lock, state, snapshot hashes, reading logs, the engine, page writes, hand-off, ledger.
Also reported: a second run of the same backlog in a fresh home as separate ``suzent dream --force``
processes (what cron does), to show process start-up is not the cost.

Usage: python benchmarks/dream_rules.py [--days 130] [--facts 30] [--repeat 0.5] [--cli]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import OBJECTS, SUBJECTS, VERBS  # noqa: E402

from suzent_cli.archive import Fact, log_header, render_entry  # noqa: E402
from suzent_cli.config import DreamConfig, resolve_settings  # noqa: E402
from suzent_cli.dream.runner import DreamRunner  # noqa: E402
from suzent_cli.vault import content_pages  # noqa: E402

CATEGORIES = ["personal", "preference", "goal", "interaction", "context", "technical", "general"]
START = dt.date(2026, 1, 1)
TARGET = 30.0


def write_backlog(home: Path, days: int, per_day: int, repeat: float, seed: int = 7) -> int:
    rng = random.Random(seed)
    pool = [Fact(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} #{i}", rng.choice(CATEGORIES))
            for i in range(300)]
    archive = resolve_settings(home=home, env={}).paths.archive_dir
    archive.mkdir(parents=True, exist_ok=True)
    n = 0
    for d in range(days):
        day = START + dt.timedelta(days=d)
        entries = []
        for e in range(3):
            facts = []
            for _ in range(per_day // 3):
                n += 1
                if rng.random() < repeat:
                    f = rng.choice(pool)
                    text = f.content + rng.choice(["", ".", ""])
                    facts.append(Fact(text.lower() if rng.random() < 0.1 else text, f.category))
                else:
                    facts.append(Fact(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (new {n})",
                                      rng.choice(CATEGORIES)))
            entries.append(render_entry(facts, f"{9 + e * 4:02d}:00", "bench001"))
        (archive / f"{day.isoformat()}.md").write_text(log_header(day) + "".join(entries), encoding="utf-8")
    return n


def run_in_process(home: Path, days: int) -> tuple[float, list[float], dict]:
    now = f"{(START + dt.timedelta(days=days)).isoformat()}T12:00"
    settings = resolve_settings(home=home, now=now, env={})
    runner = DreamRunner(settings, DreamConfig(), engine="rules", follow_ups=[])
    ticks, superseded, facts = [], 0, 0
    t0 = time.perf_counter()
    while True:
        t = time.perf_counter()
        result = runner.tick(force=True)
        if result.outcome != "ingested":
            break
        ticks.append(time.perf_counter() - t)
        superseded += result.superseded
        facts += result.facts
    lint_t = time.perf_counter()
    lint = runner.lint_now()
    lint_s = time.perf_counter() - lint_t
    total = time.perf_counter() - t0
    pages = content_pages(settings.paths.vault_dir)
    claims = sum(p.read_text().count("(confirmed ") for p in pages)
    return total, ticks, {"facts": facts, "pages": len(pages), "claims": claims, "lint": lint.outcome,
                          "lint_s": lint_s, "superseded_lines": superseded}


def run_cli(home: Path, days: int) -> tuple[float, int]:
    now = f"{(START + dt.timedelta(days=days)).isoformat()}T12:00"
    exe = ROOT / ".venv" / "bin" / "suzent"
    cmd = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "suzent_cli"]),
           "--home", str(home), "--now", now, "dream", "--force", "--engine", "rules", "--no-lint"]
    n, t0 = 0, time.perf_counter()
    while True:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not proc.stdout.startswith("ingested"):
            break
        n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=130)
    ap.add_argument("--facts", type=int, default=30, help="facts per day")
    ap.add_argument("--repeat", type=float, default=0.5, help="share of facts restating an earlier claim")
    ap.add_argument("--cli", action="store_true", help="also run the backlog as separate `suzent dream` processes")
    args = ap.parse_args()
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        n = write_backlog(home, args.days, args.facts, args.repeat)
        total, ticks, info = run_in_process(home, args.days)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\n{args.days} days × {args.facts} facts = {n} facts, {args.repeat:.0%} restatements\n")
        print("| what | value |")
        print("|---|---|")
        print(f"| ticks (14-day batches) | {len(ticks)} |")
        print(f"| facts folded | {info['facts']} |")
        print(f"| pages / claims after | {info['pages']} / {info['claims']} |")
        print(f"| distinct superseded lines handed off | {info['superseded_lines']} |")
        print(f"| slowest tick / median tick | {max(ticks):.2f} s / {sorted(ticks)[len(ticks) // 2]:.2f} s |")
        print(f"| lint pass at the end ({info['lint']}) | {info['lint_s']:.2f} s |")
        print(f"| **whole backlog, in process** | **{total:.2f} s** (target ≤ {TARGET:.0f} s: "
              f"{'met' if total <= TARGET else 'NOT met'}) |")
        print(f"| peak RSS | {rss:.0f} MiB |")
        if args.cli:
            home2 = Path(tmp) / "home2"
            write_backlog(home2, args.days, args.facts, args.repeat)
            cli_total, cli_ticks = run_cli(home2, args.days)
            print(f"| whole backlog, one `suzent dream --force` process per tick | {cli_total:.2f} s "
                  f"({cli_ticks} processes) |")


if __name__ == "__main__":
    main()
