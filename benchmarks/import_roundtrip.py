#!/usr/bin/env python3
"""Import and export round trips (issue 26, section 3), each step a real ``python -m suzent_cli`` process.

1. **Importers.** For each source, a synthetic input of ``--n`` memories in its documented format (as
   tests/test_transfer.py builds them): import into a fresh home (time, new), import again (time, 0 new expected),
   ``--dry-run`` on a third home (time; the home must not exist afterwards).
2. **Round trip**, twice. Home A: ``--n`` facts over 20 days (a quarter of them a project's); in the second run
   its first 10 days folded by the dream (rules engine) and reconciled, so A has current claims and unfolded facts.
   ``export`` (jsonl, markdown, claude-code: time, records), then ``import suzent`` into fresh home B and
   ``import claude-code`` into fresh home C (which, in the second run, dream and reconcile the same days); index A,
   B and C; for ``--queries`` random facts, the share of queries whose top-3 hit texts (claim markers aside) are the
   same in A and B, and in A and C, for the fact's first three words (many near-ties: a fragile order), and whose
   top hit is the same for the fact's whole text (recall in this process).

Usage: python benchmarks/import_roundtrip.py [--n 2000] [--queries 50] [--embedder hash:64] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suzent_cli.archive import Fact, append_entry  # noqa: E402
from suzent_cli.config import resolve_settings  # noqa: E402
from suzent_cli.transfer.claude_code import sanitize  # noqa: E402

NOW = "2026-06-30T12:00"
SUBJECTS = ["coffee", "tea", "bike", "garden", "piano", "chess", "sourdough", "climbing", "jazz", "kayak", "linux",
            "postgres", "rust", "vim", "camera", "marathon", "spanish", "pottery", "sailing", "birds"]
VERBS = ["likes", "practises", "owns a", "is learning", "reads about", "collects", "repairs", "teaches"]
PLACES = ["on Mondays", "in Lisbon", "with friends", "every morning", "since 2019", "at the club", "at home",
          "on weekends"]
CATS = ["personal", "preference", "goal", "general", "technical", "context"]


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(VERBS).capitalize()} {rng.choice(SUBJECTS)} {rng.choice(PLACES)} (note {i})"


def run(home: Path, *args: str, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "suzent_cli", *args], capture_output=True, text=True,
                          env=env | {"SUZENT_HOME": str(home)}, cwd=ROOT, timeout=1800)
    took = time.perf_counter() - start
    if done.returncode not in (0, 4):
        raise SystemExit(f"suzent {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[:400]}")
    return took, done


# --- the sources, at scale ------------------------------------------------------------------------------------------

def mem0_input(tmp: Path, n: int, rng: random.Random) -> Path:
    path = tmp / "mem0.json"
    path.write_text(json.dumps({"results": [
        {"id": str(i), "memory": sentence(rng, i), "metadata": {"category": rng.choice(CATS)},
         "created_at": f"2026-05-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"} for i in range(n)]}))
    return path


def claude_mem_input(tmp: Path, n: int, rng: random.Random) -> Path:
    path = tmp / "claude-mem.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE observations (id INTEGER PRIMARY KEY, memory_session_id TEXT, project TEXT, "
                     "type TEXT, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, created_at TEXT, "
                     "created_at_epoch INTEGER);")
    per = 4
    db.executemany("INSERT INTO observations (memory_session_id, project, type, title, facts, created_at, "
                   "created_at_epoch) VALUES (?,?,?,?,?,?,?)",
                   [("s", f"proj{i % 5}", rng.choice(["decision", "bugfix", "discovery"]), f"Observation {i}",
                     json.dumps([sentence(rng, i * per + k) for k in range(per)]),
                     f"2026-05-{1 + i % 28:02d}T10:00:00Z", 0) for i in range(n // per)])
    db.commit()
    db.close()
    return path


def basic_memory_input(tmp: Path, n: int, rng: random.Random) -> Path:
    kb = tmp / "kb"
    kb.mkdir()
    per = 20
    for note in range(n // per):
        lines = [f"---\ntitle: Note {note}\ntype: note\ncreated: 2026-05-{1 + note % 28:02d}\n---", "",
                 f"# Note {note}", "", "## Observations"]
        lines += [f"- [{rng.choice(CATS)}] {sentence(rng, note * per + k)} #tag{k % 3}" for k in range(per - 1)]
        lines += ["", "## Relations", f"- relates_to [[Note {(note + 1) % max(1, n // per)}]]"]
        (kb / f"note-{note}.md").write_text("\n".join(lines) + "\n")
    return kb


def claude_code_input(tmp: Path, n: int, rng: random.Random) -> Path:
    projects = tmp / "claude-projects"
    per_project = n // 4
    for p in range(4):
        mem = projects / sanitize(str(tmp / f"repo{p}")) / "memory"
        mem.mkdir(parents=True)
        index = []
        for t, kind in enumerate(["user", "feedback", "project", "reference"]):
            name = f"{kind}_{t}.md"
            body = "\n".join(f"- {sentence(rng, p * per_project + t * (per_project // 4) + k)}"
                             for k in range(per_project // 4))
            (mem / name).write_text(f"---\nname: {kind}\ndescription: {kind} notes\ntype: {kind}\n---\n\n{body}\n")
            index.append(f"- [{kind}]({name}) — {kind} notes")
        (mem / "MEMORY.md").write_text("\n".join(index) + "\n")
    return projects


def claude_md_input(tmp: Path, n: int, rng: random.Random) -> Path:
    src = tmp / "src"
    per = 50
    for r in range(n // per):
        repo = src / f"repo{r}"
        repo.mkdir(parents=True)
        (repo / "CLAUDE.md").write_text("# Rules\n\n" + "\n".join(f"- {sentence(rng, r * per + k)}"
                                                                    for k in range(per)) + "\n")
    return src


SOURCES = {"mem0": mem0_input, "claude-mem": claude_mem_input, "basic-memory": basic_memory_input,
           "claude-code": claude_code_input, "claude-md": claude_md_input}


def importers(tmp: Path, n: int, env: dict, rng: random.Random) -> list[dict]:
    rows = []
    for source, build in SOURCES.items():
        where = tmp / source
        where.mkdir()
        path = build(where, n, rng)
        home = where / "home"
        t1, r1 = run(home, "import", source, str(path), "--json", env=env)
        t2, r2 = run(home, "import", source, str(path), "--json", env=env)
        dry = where / "dry-home"
        t3, _ = run(dry, "import", source, str(path), "--dry-run", "--json", env=env)
        first, again = json.loads(r1.stdout), json.loads(r2.stdout)
        rows.append({"source": source, "read": first["read"], "new": first["new"], "entries": first["entries"],
                     "import_s": round(t1, 2), "again_new": again["new"], "again_already": again["already_imported"],
                     "again_s": round(t2, 2), "dry_run_s": round(t3, 2), "dry_run_touched": dry.exists()})
    return rows


# --- the round trip -------------------------------------------------------------------------------------------------

def top3(home: Path, query: str, embedder_spec: str, *, current: bool = False) -> list[str]:
    """The top-3 hit texts of ``query`` on ``home`` (in this process; claim markers, case and spacing aside).
    ``current``: superseded claims (a page's ``## Previously``, which the export keeps but an import leaves out)
    are passed over."""
    from suzent_cli.index.embed import lazy_embedder
    from suzent_cli.recall import recall
    from suzent_cli.vault.claims import plain_content

    settings = resolve_settings(home=home, now=NOW, env={"SUZENT_EMBEDDER": embedder_spec})
    hits = recall(settings, lazy_embedder(embedder_spec), query, limit=10 if current else 3, log=False)
    if current:
        hits = [h for h in hits if h.status != "superseded" and not h.until]
    return [" ".join(plain_content(h.content).split()).lower() for h in hits[:3]]


def fill(home: Path, n: int, rng: random.Random) -> list[str]:
    """``n`` facts over 20 days of June (a quarter of them project github.com/acme/shop's) in ``home``'s logs."""
    import datetime as dt

    settings = resolve_settings(home=home, now=NOW, env={})
    facts: list[str] = []
    for i in range(n):
        tags = ("project:github.com/acme/shop",) if i % 4 == 0 else ()
        category = "context" if tags else rng.choice(["personal", "preference", "goal", "general"])
        text = sentence(rng, i)
        append_entry(settings.paths.archive_dir, dt.date(2026, 6, 1 + i % 20), "10:00", "bench",
                     [Fact(text, category, tags)], timeout=30)
        facts.append(text)
    return facts


DREAM = ("--now", "2026-06-11T12:00", "dream", "--force", "--engine", "offline", "--max-days", "10")
RECONCILE = ("--now", "2026-06-11T12:30", "reconcile")


def round_trip(tmp: Path, n: int, queries: int, env: dict, rng: random.Random, *, dreamed: bool) -> dict:
    """Home A (``dreamed``: its first 10 days folded by the rules engine and reconciled) exported three ways,
    re-imported into fresh homes B (jsonl) and C (claude-code), which fold the same days when A did; the top-3
    hits of ``queries`` queries compared."""
    a = tmp / "home-a"
    facts = fill(a, n, rng)
    out: dict = {"facts": n, "dreamed": dreamed}
    if dreamed:
        t1, _ = run(a, *DREAM, env=env)
        t2, _ = run(a, *RECONCILE, env=env)
        out["dream_and_reconcile_s"] = round(t1 + t2, 2)
    exports = {}
    for fmt, target in (("jsonl", tmp / "a.jsonl"), ("markdown", tmp / "a-md"), ("claude-code", tmp / "a-cc")):
        t, r = run(a, "export", "--format", fmt, "--out", str(target), "--json", env=env)
        data = json.loads(r.stdout)
        exports[fmt] = {"s": round(t, 2), "records": data["records"], "by_status": data["by_status"],
                        "files": len(data["files"])}
    out["export"] = exports
    b, c = tmp / "home-b", tmp / "home-c"
    for home, source, path, key in ((b, "suzent", tmp / "a.jsonl", "import_suzent"),
                                    (c, "claude-code", tmp / "a-cc", "import_claude_code")):
        t, r = run(home, "import", source, str(path), "--json", env=env)
        out[key] = {"s": round(t, 2), "new": json.loads(r.stdout)["new"]}
        if dreamed:
            run(home, *DREAM, env=env)
            run(home, *RECONCILE, env=env)
    for h in (a, b, c):
        run(h, "index", env=env)
    same_b = same_c = set_b = set_c = cur_b = one_b = one_c = 0
    picked = rng.sample(facts, min(queries, len(facts)))
    spec = env["SUZENT_EMBEDDER"]
    for text in picked:
        q = " ".join(text.split()[:3])
        ta, tb, tc = top3(a, q, spec), top3(b, q, spec), top3(c, q, spec)
        same_b += ta == tb
        same_c += ta == tc
        set_b += set(ta) == set(tb)
        set_c += set(ta) == set(tc)
        cur_b += top3(a, q, spec, current=True) == top3(b, q, spec, current=True)
        whole = [top3(h, text, spec)[:1] for h in (a, b, c)]  # the fact's own words: one right answer
        one_b += whole[0] == whole[1]
        one_c += whole[0] == whole[2]
    out["queries"] = len(picked)
    out["top3_same_suzent"] = f"{same_b}/{len(picked)}"
    out["top3_same_claude_code"] = f"{same_c}/{len(picked)}"
    out["top3_same_set_suzent"] = f"{set_b}/{len(picked)}"
    out["top3_same_set_claude_code"] = f"{set_c}/{len(picked)}"
    out["top3_same_suzent_current_only"] = f"{cur_b}/{len(picked)}"
    out["top1_same_whole_fact_suzent"] = f"{one_b}/{len(picked)}"
    out["top1_same_whole_fact_claude_code"] = f"{one_c}/{len(picked)}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--embedder", default="hash:64")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env |= {"SUZENT_EMBEDDER": args.embedder, "SUZENT_NOW": NOW, "SUZENT_SERVE_AUTOSTART": "0", "NO_COLOR": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="suzent-import-bench-") as tmp:
        env["HOME"] = str(Path(tmp) / "user-home")
        (Path(tmp) / "importers").mkdir()
        rows = importers(Path(tmp) / "importers", args.n, env, rng)
        trips = []
        for dreamed in (False, True):
            where = Path(tmp) / f"trip-{'dreamed' if dreamed else 'logs'}"
            where.mkdir()
            trips.append(round_trip(where, args.n, args.queries, env, rng, dreamed=dreamed))
    result = {"n": args.n, "embedder": args.embedder, "importers": rows, "round_trips": trips}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(tables(result))
        print("command: python " + " ".join(shlex.quote(a) for a in ["benchmarks/import_roundtrip.py", *sys.argv[1:]]))


def tables(result: dict) -> str:
    """The importers' table and the round trips' table of a run's ``result`` (as ``--json`` prints it)."""
    out = [f"{'source':13} {'read':>6} {'entries':>8} {'import s':>9} {'again new/already':>18} {'again s':>8} "
           f"{'dry-run s':>10} {'touched':>8}"]
    for r in result["importers"]:
        out.append(f"{r['source']:13} {r['read']:>6} {r['entries']:>8} {r['import_s']:>9} "
                   f"{str(r['again_new']) + '/' + str(r['again_already']):>18} {r['again_s']:>8} "
                   f"{r['dry_run_s']:>10} {str(r['dry_run_touched']):>8}")
    out += ["", f"{'home A':10} {'exported (current/superseded/unfolded)':>40} {'top-3 B':>8} {'top-1 B':>8} "
                f"{'top-3 C':>8} {'top-1 C':>8}"]
    for t in result["round_trips"]:
        status = t["export"]["jsonl"]["by_status"]
        shown = "/".join(str(status.get(k, 0)) for k in ("current", "superseded", "unfolded"))
        out.append(f"{'dreamed' if t['dreamed'] else 'logs only':10} {shown:>40} {t['top3_same_suzent']:>8} "
                   f"{t['top1_same_whole_fact_suzent']:>8} {t['top3_same_claude_code']:>8} "
                   f"{t['top1_same_whole_fact_claude_code']:>8}")
    out.append("B: a fresh home fed `import suzent` of A's jsonl export; C: `import claude-code` of A's claude-code "
               "export; top-3: a query's three hits the same as A's; top-1: the whole fact's first hit the same")
    return "\n".join(out)


if __name__ == "__main__":
    main()
