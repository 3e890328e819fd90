#!/usr/bin/env python3
"""retire-legacy and dry-run: the cost of retiring an original-app table, of folding its rows, and of a dry run.

Three parts, each in a temp dir (no real data; every table and log is generated here):

1. ``retire-legacy`` on a table in the original suzent app's schema (``archival_memories``: JSON metadata, naive
   timestamps, no ``source`` column), generated as ``tests/test_legacy.py`` does: ROWS legacy rows at random instants
   over ~6 months (2026-01-01 .. 2026-06-29) plus ROWS/10 markdown-derived rows (a ``source_file``), DIM-dimensional
   random vectors. Of the legacy rows ~10 % restate a daily-log fact (already recorded), ~1 % repeat another legacy
   row, ~0.5 % are empty. Beside it a realistic markdown home: 180 daily logs of ~20 facts each, already folded into
   the vault by a dream (watermark 2026-06-29), plus three hand-written vault pages. Timed: ``legacy.check`` in
   process, ``suzent retire-legacy --json`` as a subprocess (import time included; peak RSS from ``os.wait4``),
   ``legacy.export``, a second export (must export 0), a check after it (must find 0 unrecorded) and
   ``legacy.apply`` (no confirm; its own check included) with the backup's size on disk.
2. The late-line fold: after the export, ``suzent dream --force --engine rules`` as subprocesses (SUZENT_NOW after
   every row's date, the watermark already past them, so every exported fact is a *late line*) until idle; how
   many exported facts reached a vault page, by provenance (a claim's ``· source: DAY.md:LINE`` naming the fact's
   log line) and by text (a claim whose text is the fact's).
3. ``suzent dry-run --force --engine rules`` vs ``suzent dream --force --engine rules``: a home of 120 daily logs of
   ~20 facts, the first 60 folded, 60 pending, and a search index over all of it (``hash:64`` embedder by default,
   the deterministic one the tests use; ``--embedder all-MiniLM-L6-v2`` for the real model). Each round copies the
   home twice (not timed) and runs one command on each copy, alternating which goes first. Also: the size of the
   clone a dry run makes, and the dry run's phases timed in process on another copy.

Usage: python benchmarks/legacy_and_dryrun.py [--rows 3000 [30000 ...]] [--dim 384 [3072 ...]] [--parts 1 2 3]
                                              [--rounds 3] [--embedder hash:64] [--logs 180] [--facts 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
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

from synthetic import OBJECTS, SUBJECTS, VERBS, app_table  # noqa: E402

from suzent_cli import legacy  # noqa: E402
from suzent_cli.archive import Fact, list_logs, log_header, parse_log, render_entry  # noqa: E402
from suzent_cli.config import DreamConfig, resolve_settings  # noqa: E402
from suzent_cli.dream.runner import DreamRunner  # noqa: E402
from suzent_cli.init import init_home  # noqa: E402
from suzent_cli.text import normalize  # noqa: E402
from suzent_cli.vault import content_pages  # noqa: E402
from suzent_cli.vault.claims import base_text  # noqa: E402
from suzent_cli.vault.pages import parse_claim  # noqa: E402

START = dt.date(2026, 1, 1)
CATEGORIES = ["personal", "preference", "goal", "interaction", "context", "technical", "general"]
APP_CATEGORIES = ["personal", "preference", "technical", "goal"]


# ---- generating homes ------------------------------------------------------------------------------------------
def write_logs(home: Path, first: dt.date, days: int, per_day: int, seed: int = 7) -> list[str]:
    """``days`` daily logs from ``first``, ``per_day`` facts each in 3 entries, 20 % restating one of 200 claims.
    Returns every fact text written (in order)."""
    rng = random.Random(seed)
    pool = [(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} #{i}", rng.choice(CATEGORIES))
            for i in range(200)]
    archive = resolve_settings(home=home, env={}).paths.archive_dir
    archive.mkdir(parents=True, exist_ok=True)
    texts, n = [], 0
    for d in range(days):
        day = first + dt.timedelta(days=d)
        entries = []
        for e in range(3):
            facts = []
            for _ in range(per_day // 3 + (1 if e < per_day % 3 else 0)):
                n += 1
                if rng.random() < 0.2:
                    text, cat = rng.choice(pool)
                else:
                    text, cat = (f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {n})",
                                 rng.choice(CATEGORIES))
                facts.append(Fact(text, cat))
                texts.append(text)
            entries.append(render_entry(facts, f"{8 + e * 5:02d}:{rng.randrange(60):02d}", "bench001"))
        (archive / f"{day.isoformat()}.md").write_text(log_header(day) + "".join(entries), encoding="utf-8")
    return texts


PAGES = {
    "3_Personal/Profile.md": "---\ntype: personal\n---\n# Profile\n\n## Claims\n\n"
                             "- Lives in Porto (confirmed 2x, last 2026-02-01) · source: 2026-02-01.md:5\n"
                             "- Currently works at ACME (since 2026-03-01); previously: Works at Initech\n\n"
                             "## Cycling to work\n\nDaily, unless it rains.\n",
    "1_Projects/Moving to Berlin.md": "---\ntype: project\n---\n# Moving to Berlin\n\n"
                                      "Plan: flat hunting in May, movers booked for July.\n\n"
                                      "- Budget of 2,000 EUR for the move\n- Needs a flat near a U-Bahn station\n",
    "2_Wiki/Concepts/Home office.md": "---\ntype: concept\n---\n# Home office\n\n"
                                      "A standing desk, a second monitor, dark mode everywhere.\n",
}


def write_pages(home: Path) -> None:
    vault = resolve_settings(home=home, env={}).paths.vault_dir
    for rel, text in PAGES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")


def predream(home: Path, now: str) -> int:
    """Fold every log before ``now``'s date into the vault in process (rules engine, no follow-ups): setup only."""
    settings = resolve_settings(home=home, now=now, env={})
    runner = DreamRunner(settings, DreamConfig(), engine="rules", follow_ups=[])
    ticks = 0
    while runner.tick(force=True).outcome == "ingested":
        ticks += 1
    return ticks


def generated_rows(n_legacy: int, log_texts: list[str], span_days: int, seed: int = 11) -> tuple[list[dict], dict]:
    """``n_legacy`` legacy rows + ``n_legacy // 10`` markdown-derived ones, at random instants over ``span_days``
    from START. ~10 % of the legacy rows restate a log fact, ~1 % repeat an earlier legacy row, ~0.5 % are empty."""
    rng = random.Random(seed)
    start = dt.datetime.combine(START, dt.time())
    rows, kinds = [], {"recorded": 0, "duplicate": 0, "empty": 0, "new": 0}
    legacy_texts: list[str] = []
    derived = [False] * n_legacy + [True] * (n_legacy // 10)
    rng.shuffle(derived)
    for i, is_derived in enumerate(derived):
        created = start + dt.timedelta(seconds=rng.randrange(span_days * 86400))
        rid = f"{i:06d}-" + hashlib.md5(str(i).encode()).hexdigest()[:12]
        if is_derived:  # markdown-derived: not legacy
            meta = {"source_type": "archive_log", "source_file": f"{created.date().isoformat()}.md",
                    "category": "archive_log", "tags": []}
            rows.append({"id": rid, "content": rng.choice(log_texts), "metadata": json.dumps(meta),
                         "created_at": created})
            continue
        meta = {"source_type": "agent", "category": rng.choice(APP_CATEGORIES), "tags": [f"topic{i % 7}", "imported"]}
        roll = rng.random()
        if roll < 0.10:
            content, kind = rng.choice(log_texts), "recorded"
        elif roll < 0.11 and legacy_texts:
            content, kind = rng.choice(legacy_texts), "duplicate"
        elif roll < 0.115:
            content, kind = rng.choice(["", "   ", None]), "empty"
        else:
            content = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (legacy {i})"
            kind = "new"
            legacy_texts.append(content)
        kinds[kind] += 1
        rows.append({"id": rid, "content": content, "metadata": json.dumps(meta), "created_at": created})
    return rows, kinds


# ---- measuring -------------------------------------------------------------------------------------------------
def disk_usage(path: Path, skip: Path | None = None) -> tuple[int, int]:
    """(bytes on disk, files) under ``path`` (``du``-like: allocated blocks), ``skip`` left out."""
    total = files = 0
    for directory, dirs, names in os.walk(path):
        if skip is not None:
            dirs[:] = [d for d in dirs if Path(directory, d) != skip]
        for name in names:
            st = os.lstat(os.path.join(directory, name))
            total += st.st_blocks * 512
            files += 1
    return total, files


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def cli_env(home: Path, now: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(SUZENT_HOME=str(home), SUZENT_NOW=now, NO_COLOR="1", COLUMNS="120", SUZENT_SERVE_AUTOSTART="0", **extra)
    return env


# What `.venv/bin/suzent` runs, plus a note of the process's peak RSS at exit. VmHWM, not getrusage's ru_maxrss:
# on Linux a child's ru_maxrss (os.wait4 or RUSAGE_SELF) includes the RSS of the parent it was forked from, so a
# child of this (by then large) benchmark process would report the benchmark's memory, not its own.
LAUNCH = ("import atexit, os, sys\n"
          "def _hwm():\n"
          "    with open('/proc/self/status') as fh:\n"
          "        kb = next(int(l.split()[1]) for l in fh if l.startswith('VmHWM:'))\n"
          "    with open(os.environ['BENCH_HWM_FILE'], 'w') as out:\n"
          "        out.write(str(kb))\n"
          "atexit.register(_hwm)\n"
          "from suzent_cli.cli.app import main\n"
          "sys.argv[0] = 'suzent'\n"
          "sys.exit(main())\n")


def run(args: list[str], home: Path, now: str, **extra: str) -> dict:
    """One CLI process (the console script's code, via ``python -c``): wall s, CPU s (``os.wait4``), peak RSS MiB
    (VmHWM), exit code, stdout, stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".hwm") as hwm:
        env = cli_env(home, now, BENCH_HWM_FILE=hwm.name, **extra)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *args], stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = Path(hwm.name).read_text().strip()
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": int(text) / 1024 if text else float("nan"),
                "rc": proc.returncode, "stdout": out.read().decode(), "stderr": err.read().decode()}


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    value = fn(*args, **kw)
    return value, time.perf_counter() - t0


def table(header: list[str], rows: list[list]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()


# ---- part 1 and 2 ----------------------------------------------------------------------------------------------
def reached(settings) -> dict:
    """Exported facts (log lines tagged ``legacy:<id>``) and how many a vault claim cites or states."""
    exported: dict[str, str] = {}  # "DAY.md:LINE" -> normalized content
    for day, path in list_logs(settings.paths.archive_dir):
        for f in parse_log(path.read_text(encoding="utf-8"), day):
            if any(t.startswith(legacy.TAG_PREFIX) for t in f.tags):
                exported[f"{day.isoformat()}.md:{f.line}"] = normalize(f.content)
    sources, texts = set(), set()
    biggest = (0, "")
    for page in content_pages(settings.paths.vault_dir):
        claims = 0
        for line in page.read_text(encoding="utf-8").split("\n"):
            claim = parse_claim(line.strip())
            if claim:
                claims += 1
                if claim.source:
                    sources.add(claim.source)
                texts.update((normalize(claim.text), normalize(base_text(claim.text))))
        biggest = max(biggest, (claims, page.relative_to(settings.paths.vault_dir).as_posix()))
    cited = sum(1 for s in exported if s in sources)
    stated = sum(1 for c in exported.values() if c in texts)
    either = sum(1 for s, c in exported.items() if s in sources or c in texts)
    return {"exported_lines": len(exported), "cited": cited, "stated": stated, "either": either,
            "biggest": f"{biggest[0]:,} ({biggest[1]})"}


def legacy_case(tmp: Path, n: int, dim: int, logs: int, per_day: int, part2: bool) -> tuple[list, list | None]:
    last = START + dt.timedelta(days=logs - 1)
    today = last + dt.timedelta(days=11)
    now = f"{today.isoformat()}T12:00"
    home = tmp / f"legacy-{n}-{dim}" / "home"
    settings = resolve_settings(home=home, now=now, env={})
    init_home(settings)
    texts = write_logs(home, START, logs, per_day)
    write_pages(home)
    predream(home, now)
    rows, kinds = generated_rows(n, texts, logs)
    _, build_s = timed(app_table, settings.paths.index_dir, rows, dim)
    table_bytes, _ = disk_usage(settings.paths.index_dir)

    plan, check_s = timed(legacy.check, settings)
    data = plan.to_json()
    assert data["legacy_rows"] == n, data
    assert (data["recorded"], data["empty"]) == (kinds["recorded"], kinds["empty"]), (data, kinds)
    cli = run(["retire-legacy", "--json"], home, now)
    assert cli["rc"] == 0, cli["stderr"]
    assert json.loads(cli["stdout"])["legacy_rows"] == n

    first, export_s = timed(legacy.export, settings)
    second, export2_s = timed(legacy.export, settings)
    assert second.exported == 0 and not second.days, second.to_json()
    after, check2_s = timed(legacy.check, settings)
    assert len(after.unrecorded) == 0, after.to_json()

    fold = None
    if part2:
        ticks, seconds, facts, steps = 0, [], 0, []
        while ticks < 20:
            r = run(["dream", "--force", "--engine", "rules", "--json"], home, now)
            result = json.loads(r["stdout"]) if r["stdout"].strip() else {}
            if result.get("outcome") != "ingested":
                break
            ticks += 1
            seconds.append(r["wall"])
            facts += result.get("facts") or 0
            steps += [f"{s['name']} " + ("ok" if s["ok"] else "FAILED" + (" (index written by another tool)" if
                      "written by another tool" in (s.get("error") or "") else f": {(s.get('error') or '')[:80]}"))
                      for s in result.get("steps", [])]
        got = reached(settings)
        fold = [n, dim, first.exported, got["exported_lines"], ticks,
                f"{seconds[0]:.2f}" if seconds else "–", facts, got["cited"], got["stated"],
                f"{got['either']} ({got['either'] / max(first.exported, 1):.1%})", got["biggest"],
                "; ".join(dict.fromkeys(steps))]

    applied, apply_s = timed(legacy.apply, settings)
    assert applied.deleted == n, applied.to_json()
    backup_bytes, _ = disk_usage(Path(applied.backup))
    part1 = [n, dim, mib(table_bytes), f"{build_s:.1f}",
             f"{data['recorded']} / {data['unrecorded']} / {data['empty']}",
             f"{check_s:.2f}", f"{cli['wall']:.2f} ({cli['cpu']:.2f} CPU)", f"{cli['rss']:.0f} MiB",
             f"{export_s:.2f}", f"{first.exported / export_s:,.0f}" if export_s else "–",
             f"{first.exported} / {first.duplicates} / {first.already_recorded}",
             f"{export2_s:.2f} (0)", f"{check2_s:.2f} (0)", f"{apply_s:.2f}", applied.deleted, mib(backup_bytes)]
    shutil.rmtree(home.parent, ignore_errors=True)
    return part1, fold


# ---- part 3 ----------------------------------------------------------------------------------------------------
def dryrun_home(tmp: Path, per_day: int, embedder: str) -> tuple[Path, str, dict]:
    """120 daily logs, the first 60 folded, all indexed by ``suzent index`` (SUZENT_EMBEDDER=embedder); returns
    (home, now, info)."""
    home = tmp / "dryrun-base" / "home"
    init_home(resolve_settings(home=home, env={}))
    write_logs(home, START, 120, per_day, seed=13)
    write_pages(home)
    predream(home, f"{(START + dt.timedelta(days=60)).isoformat()}T12:00")
    now = f"{(START + dt.timedelta(days=120)).isoformat()}T12:00"
    settings = resolve_settings(home=home, now=now, env={})
    r = run(["index", "--json"], home, now, SUZENT_EMBEDDER=embedder)
    assert r["rc"] == 0, r["stderr"][-2000:]
    report = json.loads(r["stdout"])
    pending = sum(1 for day, _ in list_logs(settings.paths.archive_dir) if day >= START + dt.timedelta(days=60))
    return home, now, {"rows": report["total_rows"], "index_s": r["wall"], "pending": pending}


def dryrun_phases(home: Path, now: str) -> dict[str, float]:
    """The dry run's steps, timed in process on this home (mirrors ``suzent_cli.dryrun.dry_run``)."""
    import lancedb  # noqa: F401 - imported before timing (every CLI process that touches the index pays it too)

    from suzent_cli import dryrun as dr

    settings = resolve_settings(home=home, now=now, env={})
    paths = settings.paths
    cheap = [paths.home / dr.BACKUPS]
    out: dict[str, float] = {}
    _, out["fingerprint live (before)"] = timed(dr.fingerprint, dr.live_roots(paths), cheap=cheap)
    root = Path(tempfile.mkdtemp(prefix="bench-clone-"))
    try:
        clone, out["copy home into the clone"] = timed(dr.build_clone, settings, root, env={})
        size, files = disk_usage(root)
        out["_clone_bytes"], out["_clone_files"] = size, files
        t0 = time.perf_counter()
        before = dr.text_snapshot(clone)
        index_before = dr.index_rows(clone.index_dir)
        out["snapshot texts + index rows (before)"] = time.perf_counter() - t0
        runner = DreamRunner(clone.settings, DreamConfig(engine="rules"), engine="rules")
        _, out["the dream tick on the clone"] = timed(runner.tick, force=True)
        t0 = time.perf_counter()
        after = dr.text_snapshot(clone)
        index_after = dr.index_rows(clone.index_dir)
        out["snapshot texts + index rows (after)"] = time.perf_counter() - t0
        _, out["diff"] = timed(lambda: (dr.diff_snapshots(before, after), dr.compare_index(index_before, index_after)))
    finally:
        t0 = time.perf_counter()
        shutil.rmtree(root, ignore_errors=True)
        out["remove the clone"] = time.perf_counter() - t0
    _, out["fingerprint live (after)"] = timed(dr.fingerprint, dr.live_roots(paths), cheap=cheap)
    return out


def part3(tmp: Path, rounds: int, per_day: int, embedder: str) -> None:
    base, now, info = dryrun_home(tmp, per_day, embedder)
    home_bytes, home_files = disk_usage(base)
    index_bytes, _ = disk_usage(resolve_settings(home=base, env={}).paths.index_dir)
    results: dict[str, list[dict]] = {"dry-run": [], "dream": []}
    ratios = []
    for i in range(rounds):
        copies = {}
        for name in ("dry-run", "dream"):
            copies[name] = tmp / f"r{i}-{name}" / "home"
            shutil.copytree(base, copies[name], symlinks=True)
        order = ["dry-run", "dream"] if i % 2 == 0 else ["dream", "dry-run"]
        got = {}
        for name in order:
            r = run([name, "--force", "--engine", "rules", "--json"], copies[name], now)
            assert r["rc"] == 0, (name, r["rc"], r["stderr"][-2000:])
            res = json.loads(r["stdout"])
            res = res["result"] if name == "dry-run" else res
            assert res["outcome"] == "ingested", res
            r["facts"], r["pages"] = res["facts"], len(res["pages_changed"])
            got[name] = r
            results[name].append(r)
        assert (got["dry-run"]["facts"], got["dry-run"]["pages"]) == (got["dream"]["facts"], got["dream"]["pages"])
        ratios.append(got["dry-run"]["wall"] / got["dream"]["wall"])
        for name in copies:
            shutil.rmtree(copies[name].parent, ignore_errors=True)
    phase_home = tmp / "phases" / "home"
    shutil.copytree(base, phase_home, symlinks=True)
    phases = dryrun_phases(phase_home, now)

    print(f"\n### Part 3: dry-run vs dream — {info['pending']} pending daily logs ({per_day} facts each, one --force "
          f"tick folds 14 of them), 60 folded, index of {info['rows']:,} rows ({embedder}, built in "
          f"{info['index_s']:.1f} s); home {mib(home_bytes)} in {home_files:,} files, of which the index "
          f"{mib(index_bytes)}; {rounds} rounds\n")
    rows = []
    for name in ("dry-run", "dream"):
        walls = [r["wall"] for r in results[name]]
        rows.append([f"`suzent {name} --force --engine rules`", " / ".join(f"{w:.2f}" for w in walls),
                     f"{statistics.median(walls):.2f}", f"{statistics.median(r['cpu'] for r in results[name]):.2f}",
                     f"{max(r['rss'] for r in results[name]):.0f} MiB", results[name][0]["facts"],
                     results[name][0]["pages"]])
    table(["command", "wall s per round", "median wall s", "median CPU s", "peak RSS", "facts folded",
           "pages changed"], rows)
    print(f"dry-run / dream (wall, per round): {' / '.join(f'{x:.2f}' for x in ratios)}; "
          f"median **{statistics.median(ratios):.2f}×**\n")
    clone_bytes, clone_files = phases.pop("_clone_bytes"), phases.pop("_clone_files")
    print(f"Clone: {mib(clone_bytes)} in {clone_files:,} files (the home without backups/, index included).\n")
    total = sum(phases.values())
    table(["dry-run step (in process)", "s", "share"],
          [[k, f"{v:.3f}", f"{v / total:.0%}"] for k, v in phases.items()] + [["total", f"{total:.3f}", ""]])


# ---- main ------------------------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[3000], help="legacy rows per table (one case each)")
    ap.add_argument("--dim", type=int, nargs="+", default=[384], help="vector dimensions (one case each)")
    ap.add_argument("--parts", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3])
    ap.add_argument("--logs", type=int, default=180, help="daily logs in the part-1 home")
    ap.add_argument("--facts", type=int, default=20, help="facts per daily log")
    ap.add_argument("--rounds", type=int, default=3, help="part 3 rounds")
    ap.add_argument("--embedder", default="hash:64", help="part 3 index embedder")
    args = ap.parse_args()
    print("$ " + shlex.join([".venv/bin/python", os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]))
    with tempfile.TemporaryDirectory(prefix="bench-legacy-") as tmp_name:
        tmp = Path(tmp_name)
        if 1 in args.parts or 2 in args.parts:
            p1, p2 = [], []
            for n in args.rows:
                for dim in args.dim:
                    a, b = legacy_case(tmp, n, dim, args.logs, args.facts, 2 in args.parts)
                    p1.append(a)
                    if b:
                        p2.append(b)
            print(f"\n### Part 1: retire-legacy — original-app table beside {args.logs} daily logs × {args.facts} "
                  f"facts (folded) and {len(PAGES)} hand-written pages\n")
            table(["legacy rows", "dim", "table on disk", "build s", "check: recorded / unrecorded / empty",
                   "check s (in process)", "`retire-legacy --json` s (process)", "check peak RSS", "export s",
                   "export rows/s", "exported / duplicates / already recorded", "2nd export s (exported)",
                   "check after s (unrecorded)", "apply s", "deleted", "backup on disk"], p1)
            if p2:
                print("### Part 2: the late-line fold — `suzent dream --force --engine rules` after the export\n")
                table(["legacy rows", "dim", "exported", "tagged log lines", "dream ticks", "first tick s (process)",
                       "facts folded", "cited by a claim", "stated by a claim", "on a page (either)",
                       "claims on the biggest page", "follow-ups"], p2)
        if 3 in args.parts:
            part3(tmp, args.rounds, args.facts, args.embedder)


if __name__ == "__main__":
    main()
