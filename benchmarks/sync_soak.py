#!/usr/bin/env python3
"""Two-machine sync soak (issue 26 §2, "Done when"): two homes capturing concurrently, syncs between them through one
bare remote, forgets on both, then the checks.

* Two capture processes (one per home) append facts as fast as ``--rate`` allows (each a real ``suzent capture
  --fact`` run through the CLI's entry point in a long-lived process; each records the facts it captured only
  after the command returned 0).
* This process syncs home A, then home B, in a loop (``suzent_cli.sync.sync``, the stage ``suzent sync`` runs),
  and every ``--forget-every`` rounds forgets one fact on each home (a fact the *other* home captured, when one has
  arrived: a forget of a line captured elsewhere).
* At the end: the capture processes stop, and A, B, A sync once more. Checks (verify-like, until ``suzent verify``
  lands): every captured fact is in both homes' logs (lost), exactly once (duplicated), the two homes' logs are the
  same bytes (converged), both hold every tombstone, no index row either home would build holds a forgotten text
  (the indexer's own filter, ``index/sources.py``), and after ``suzent index`` a recall of each forgotten text on
  each home returns no row holding it (forgets total), and a full ``suzent verify`` is green on both.

Usage: python benchmarks/sync_soak.py [--seconds 180] [--rate 5] [--forget-every 5] [--json]
Short mode (the test): --seconds 6 --rate 10 --forget-every 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOOP = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from suzent_cli.cli.app import main
    home, tag, rate, stop, done = sys.argv[1], sys.argv[2], float(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
    i = 0
    with open(done, "a", encoding="utf-8") as out:
        while not stop.exists():
            fact = f"Soak fact {tag}{i} about topic {i % 7}"
            if main(["--home", home, "capture", "--fact", f"[general] {fact}", "--session", f"soak{tag}"]) == 0:
                out.write(fact + "\\n")
                out.flush()
            i += 1
            time.sleep(1.0 / rate)
""")


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    e.update(SUZENT_SERVE_AUTOSTART="0", SUZENT_NO_SERVER="1", SUZENT_EMBEDDER="hash", PYTHONDONTWRITEBYTECODE="1",
             PYTHONPATH=str(ROOT))
    return e


def fact_lines(home: Path) -> Counter:
    from suzent_cli.archive import list_logs, read_log
    from suzent_cli.config import resolve_settings

    s = resolve_settings(home=home, env={})
    out: Counter = Counter()
    for _, path in list_logs(s.paths.archive_dir):
        out.update(f.content for f in read_log(path))
    return out


def run(seconds: float, rate: float, forget_every: int, workdir: Path, min_forgets: int = 0) -> dict:
    """Soak for ``seconds``, and on until ``min_forgets`` forgets were made (a test's floor whatever the machine's
    speed; bounded by HANG_GUARD seconds). Returns the checks' dict (see :func:`check`)."""
    from suzent_cli.config import resolve_settings
    from suzent_cli.forget import forget, plan_forget
    from suzent_cli.sync import sync

    old_umask = os.umask(0o077)  # as the suzent command runs (privacy.private_umask): every folder made is private
    try:
        return _run(seconds, rate, forget_every, workdir, resolve_settings, forget, plan_forget, sync, min_forgets)
    finally:
        os.umask(old_umask)


HANG_GUARD = 600.0  # seconds a soak may run past its length to reach its min_forgets


def _run(seconds, rate, forget_every, workdir, resolve_settings, forget, plan_forget, sync, min_forgets=0) -> dict:
    remote = workdir / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    homes = {"A": workdir / "a", "B": workdir / "b"}
    stop = workdir / "stop"
    done = {t: workdir / f"captured-{t}.txt" for t in homes}
    procs = [subprocess.Popen([sys.executable, "-c", LOOP, str(h), t, str(rate), str(stop), str(done[t])],
                              env=env(), cwd=ROOT, stdout=subprocess.DEVNULL) for t, h in homes.items()]
    forgotten: list[str] = []
    syncs = failures = rounds = 0
    sync_times: list[float] = []
    lines_moved = 0
    start = time.monotonic()
    soak_end = start
    try:
        time.sleep(0.5)
        while (time.monotonic() - start < seconds
               or (len(forgotten) < min_forgets and time.monotonic() - start < seconds + HANG_GUARD)):
            rounds += 1
            for tag, home in homes.items():
                t0 = time.monotonic()
                try:
                    report = sync(resolve_settings(home=home, env={}), remote=str(remote), index=False)
                    lines_moved += len(report.moved)
                except Exception as exc:  # noqa: BLE001 - a soak counts failures instead of stopping
                    failures += 1
                    print(f"sync {tag} failed: {exc}", file=sys.stderr)
                syncs += 1
                sync_times.append(time.monotonic() - t0)
            if rounds % forget_every == 0:
                for tag, home in homes.items():
                    other = "B" if tag == "A" else "A"
                    here = fact_lines(home)
                    pick = next((f for f in done[other].read_text().splitlines()[::-1]
                                 if f in here and f not in forgotten), None)
                    if pick is None:
                        continue
                    s = resolve_settings(home=home, env={})
                    forget(s, plan_forget(s, pick))
                    forgotten.append(pick)
    finally:
        stop.touch()
        for p in procs:
            p.wait(timeout=120)
    soak_end = time.monotonic()
    for tag in ("A", "B", "A", "B"):
        sync(resolve_settings(home=homes[tag], env={}), remote=str(remote), index=False)
    return check(homes, done, forgotten) | {
        "seconds": round(soak_end - start, 1), "rate_per_home": rate, "syncs": syncs,
        "sync_failures": failures, "sync_s_median": round(sorted(sync_times)[len(sync_times) // 2], 3) if sync_times else None,
        "sync_s_max": round(max(sync_times), 3) if sync_times else None, "logs_with_moved_lines": lines_moved}


def check(homes: dict[str, Path], done: dict[str, Path], forgotten: list[str]) -> dict:
    from suzent_cli.config import resolve_settings
    from suzent_cli.index.sources import discover, documents
    from suzent_cli.text import normalize
    from suzent_cli.vault.state import read_forgotten, read_tombstones

    captured = [f for t in done for f in done[t].read_text().splitlines()]
    counts = {t: fact_lines(h) for t, h in homes.items()}
    lost = {t: sum(1 for f in captured if counts[t][f] == 0) for t in homes}
    duplicated = {t: sum(1 for f in captured if counts[t][f] > 1) for t in homes}
    settings = {t: resolve_settings(home=h, env={}) for t, h in homes.items()}
    logs_equal = all(
        (settings["A"].paths.archive_dir / p.name).read_bytes() == p.read_bytes()
        for p in settings["B"].paths.archive_dir.glob("????-??-??.md"))
    keys = {normalize(f) for f in forgotten}
    tombstones_on = {t: len(keys & set(read_forgotten(s.paths.state_dir))) for t, s in settings.items()}
    from suzent_cli.verify import verify

    rows_holding_forgotten = {}
    recalled_forgotten = {}
    verified: dict[str, object] = {}
    for t, s in settings.items():
        tombs = frozenset(read_tombstones(s.paths.state_dir))
        n = 0
        for source in discover(s.paths):
            docs, _ = documents(source, tombs, 0)
            n += sum(1 for d in docs if any(k in normalize(d.content) for k in keys))
        rows_holding_forgotten[t] = n
        control = next((f for f in captured if normalize(f) not in keys), None)
        recalled_forgotten[t] = _recall_hits(homes[t], forgotten, control)
        found = verify(resolve_settings(home=homes[t], env={"SUZENT_EMBEDDER": "hash"}))
        verified[t] = found.violations[:5] if not found.ok else "ok"
    return {"captured": len(captured), "forgets": len(forgotten), "lost": lost, "duplicated": duplicated,
            "logs_identical": logs_equal, "forgotten_with_tombstone": tombstones_on,
            "index_rows_holding_forgotten_text": rows_holding_forgotten,
            "recall_hits_holding_forgotten_text": recalled_forgotten, "verify": verified}


def _recall_hits(home: Path, forgotten: list[str], control: str | None = None) -> int:
    """``suzent index`` (the hash embedder) then a recall of each forgotten text: the hits whose text holds it.
    ``control``: a fact not forgotten, which must be found (else the check proves nothing): -1 when it is not."""
    from suzent_cli.config import resolve_settings
    from suzent_cli.index.api import index_embedder, run_index
    from suzent_cli.recall import recall
    from suzent_cli.text import normalize

    s = resolve_settings(home=home, env={"SUZENT_EMBEDDER": "hash"})
    embedder = index_embedder(s)
    run_index(s, embedder=embedder)
    n = 0
    for text in forgotten:
        hits = recall(s, embedder, text, limit=10, log=False)
        n += sum(1 for h in hits if normalize(text) in normalize(str(getattr(h, "content", ""))))
    if control is not None:
        hits = recall(s, embedder, control, limit=10, log=False)
        if not any(normalize(control) in normalize(str(getattr(h, "content", ""))) for h in hits):
            return -1
    return n


def _table(r: dict) -> str:
    """The result as a table: one row per check, a column per home."""
    rows = [("captured facts (both homes)", r["captured"], ""), ("forgets (both homes)", r["forgets"], ""),
            ("lost", r["lost"]["A"], r["lost"]["B"]), ("duplicated", r["duplicated"]["A"], r["duplicated"]["B"]),
            ("daily logs byte-identical", r["logs_identical"], r["logs_identical"]),
            ("forgotten texts with their tombstone", *r["forgotten_with_tombstone"].values()),
            ("index rows holding a forgotten text", *r["index_rows_holding_forgotten_text"].values()),
            ("recall hits holding a forgotten text", *r["recall_hits_holding_forgotten_text"].values()),
            ("suzent verify", *r["verify"].values()),
            ("syncs / failures", f"{r['syncs']} / {r['sync_failures']}", ""),
            ("sync median / max (s)", f"{r['sync_s_median']:.3f} / {r['sync_s_max']:.3f}", ""),
            ("write-backs that moved lines", r["logs_with_moved_lines"], ""),
            ("seconds", r["seconds"], "")]
    width = max(len(name) for name, *_ in rows)
    lines = [f"{'check':<{width}}  {'A':>12}  {'B':>12}"]
    lines += [f"{name:<{width}}  {str(a):>12}  {str(b):>12}" for name, a, b in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--rate", type=float, default=5.0, help="captures per second per home (at most)")
    ap.add_argument("--forget-every", type=int, default=5, help="sync rounds between forgets")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="suzent-sync-soak-") as tmp:
        result = run(args.seconds, args.rate, args.forget_every, Path(tmp))
    if args.json:
        print(json.dumps(result))
    else:
        print(_table(result))
        print(f"command: python benchmarks/sync_soak.py --seconds {args.seconds:g} --rate {args.rate:g} "
              f"--forget-every {args.forget_every}")
    ok = (not any(result["lost"].values()) and not any(result["duplicated"].values()) and result["logs_identical"]
          and all(v == result["forgets"] for v in result["forgotten_with_tombstone"].values())
          and not any(result["index_rows_holding_forgotten_text"].values())
          and not any(result["recall_hits_holding_forgotten_text"].values())
          and all(v == "ok" for v in result["verify"].values()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
