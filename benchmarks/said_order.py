"""Residence moves spread over pages, folded by the rules engine until caught up (issue 27, the trial's F2).

30 days x 20 facts (600) over five categories (so five pages), a residence move every third day on a random page
among them; seeded (``--seed``). Prints how many dreams it took, their total seconds, and the residences left
current on every page: exactly one, the last said, is right. In-process, offline, no model.

    PYTHONPATH=. python benchmarks/said_order.py --seed 7
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from pathlib import Path

from suzent_cli.archive import Fact, append_entry
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import content_pages
from suzent_cli.vault.pages import read_page

CATEGORIES = ["personal", "technical", "general", "preference", "goal"]
CITIES = ["Berlin", "Madrid", "Oslo", "Porto", "Lisbon"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="said-order-"))
    s = resolve_settings(home=home, now="2026-12-01T12:00", env={"SUZENT_SCOPE": "global"})
    last = None
    for d in range(30):
        day = dt.date(2026, 10, 1) + dt.timedelta(days=d)
        facts = [Fact(content=f"Note {d}-{k}: the {rng.choice(['build', 'team', 'garden', 'book'])} item "
                      f"{rng.randint(0, 999)} is {rng.choice(['ready', 'late', 'fine'])}.",
                      category=rng.choice(CATEGORIES), tags=[]) for k in range(19)]
        if d % 3 == 0:
            last = rng.choice([c for c in CITIES if c != last])
            facts.append(Fact(content=f"I live in {last} now.", category=rng.choice(CATEGORIES), tags=[]))
        append_entry(s.paths.archive_dir, day, "09:00", "sess0001", facts, timeout=5)
    start, runs = time.perf_counter(), 0
    while DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True).outcome == "ingested":
        runs += 1
    took = time.perf_counter() - start
    vault = s.paths.vault_dir
    current = [c.text for p in content_pages(vault) if p.relative_to(vault).as_posix().count("/")
               for c in read_page(p).claims("Claims") if "I live in" in c.text]
    print(f"$ python benchmarks/said_order.py --seed {args.seed}")
    print(f"| dreams | seconds | current residences | last said | right |\n|---|---|---|---|---|\n"
          f"| {runs} | {took:.1f} | {len(current)} | {last} | "
          f"{'yes' if len(current) == 1 and current[0].startswith(f'I live in {last} now') else 'no'} |")
    for text in current:
        print(f"  current: {text}")
    sys.exit(0)


if __name__ == "__main__":
    main()
