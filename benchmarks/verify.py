"""How long ``suzent verify`` takes: the cheap part ``status`` runs (the logs' seals re-hashed, the watermark, the state
files, locks and the roots' modes; no index) at ``--rows`` fact lines, and the full verify (plus the index scan and
the sources recomputed without embedding) at ``--full-rows`` rows indexed with the hash embedder.

    python benchmarks/verify.py                          # 100k lines cheap, 10k rows full
    python benchmarks/verify.py --rows 100000 --full-rows 100000

The logs are synthetic (benchmarks/synthetic.py), ``--days`` days of equal size, written directly as capture writes
them (one header, entries of 10 fact lines). Prints one JSON object; the times are medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import synthetic_fact

from suzent_cli.archive import log_header, render_entry
from suzent_cli.config import resolve_settings


def build_logs(settings, rows: int, days: int, seed: int = 7) -> None:
    """``rows`` fact lines over ``days`` daily logs ending the day before ``settings.today``."""
    rng = random.Random(seed)
    archive = settings.paths.archive_dir
    archive.mkdir(parents=True, exist_ok=True)
    per_day = -(-rows // days)
    i = 0
    for d in range(days):
        day = settings.today - dt.timedelta(days=days - d)
        parts = [log_header(day)]
        left = min(per_day, rows - i)
        while left > 0:
            n = min(10, left)
            parts.append(render_entry([synthetic_fact(rng, i + k).clean() for k in range(n)], "09:00", "bench001"))
            i, left = i + n, left - n
        if len(parts) > 1:
            (archive / f"{day.isoformat()}.md").write_text("".join(parts), encoding="utf-8")


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="fact lines for the cheap part")
    parser.add_argument("--full-rows", type=int, default=10_000, help="rows indexed for the full verify (0: skip)")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = parser.parse_args(argv)
    os.umask(0o077)
    from suzent_cli.index.seals import seal_logs
    from suzent_cli.status import verify_row
    from suzent_cli.verify import verify

    out: dict = {"rows": args.rows, "days": args.days}
    with tempfile.TemporaryDirectory() as tmp:
        settings = resolve_settings(home=Path(tmp) / "cheap", today="2026-06-10", env={})
        build_logs(settings, args.rows, args.days)
        log_bytes = sum(p.stat().st_size for p in settings.paths.archive_dir.glob("*.md"))
        started = time.perf_counter()
        seal_logs(settings.paths.index_dir, settings.paths.archive_dir)
        out["seal_all_logs_s"] = round(time.perf_counter() - started, 3)
        seconds, report = timed(lambda: verify(settings, cheap=True), args.repeat)
        assert report.ok, report.violations
        out.update(log_mb=round(log_bytes / 1e6, 1), cheap_verify_s=round(seconds, 4),
                   status_row_s=round(timed(lambda: verify_row(settings), args.repeat)[0], 4))
    if args.full_rows:
        from suzent_cli.index.api import run_index
        from suzent_cli.index.embed import HashEmbedder

        with tempfile.TemporaryDirectory() as tmp:
            settings = resolve_settings(home=Path(tmp) / "full", today="2026-06-10", env={})
            build_logs(settings, args.full_rows, args.days)
            started = time.perf_counter()
            run_index(settings, embedder=HashEmbedder(64))
            out["full_rows"] = args.full_rows
            out["index_build_s"] = round(time.perf_counter() - started, 2)
            seconds, report = timed(lambda: verify(settings), max(1, args.repeat // 2))
            assert report.ok, report.violations
            out["full_verify_s"] = round(seconds, 3)
            out["full_checked"] = {n: c.checked for n, c in report.checks.items()}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    rows = [("fact lines (cheap part) / logs", f"{out['rows']:,} / {out['days']}"), ("log MB", out["log_mb"]),
            ("sealing every log (first pass after an upgrade), s", out["seal_all_logs_s"]),
            ("cheap verify (status's row: seals, watermark, state, locks, modes), s", out["cheap_verify_s"]),
            ("status's verify row, s", out["status_row_s"])]
    if args.full_rows:
        rows += [("rows indexed for the full verify", f"{out['full_rows']:,}"),
                 ("the index pass that built them (hash:64), s", out["index_build_s"]),
                 ("full suzent verify, s", out["full_verify_s"])]
    width = max(len(name) for name, _ in rows)
    print(f"{'what':<{width}}  value")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print("command: python " + " ".join(shlex.quote(a) for a in ["benchmarks/verify.py", *(argv if argv is not None
                                                                                              else sys.argv[1:])]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
