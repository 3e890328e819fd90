#!/usr/bin/env python3
"""Read-your-writes (issue 25, item 4): after each write path, is the fact just written in the next recall's top 5,
and how long does that recall take; then what recall's pending search (suzent_cli/index/pending.py) costs a recall.

Paths, each as real processes, each with the pending search on and off (off: the same code with
``suzent_cli.index.pending.ENABLED = False``, the state before it; the two variants alternate):

* ``capture --fact`` then ``recall`` (CLI, no server), on a home of ``--facts`` indexed facts;
* the Stop hook ``capture --from claude-code`` then the prompt hook ``recall --from claude-code`` (cold: no server);
* ``suzent mcp`` standalone on a fresh home: ``remember`` then ``recall`` (the issue's reported case);
* ``suzent mcp`` relayed to a running ``suzent serve``: ``remember`` then ``recall``;
* both hooks answered by a running ``suzent serve`` (warm).

Cost: in this process, ``recall()`` on a home of ``--facts`` indexed facts, pending search on and off alternated,
``--rounds`` rounds of five queries: with nothing pending, and with ``--pending`` lines appended since the last
index pass (their embeddings cached in the process, as in a server, and not: a fresh process's first recall).

Usage: python benchmarks/read_your_writes.py [--embedder all-MiniLM-L6-v2|hash:64] [--facts 1000] [--rounds 7]
                                             [--pending 100] [--skip-paths]
"""

from __future__ import annotations

import argparse
import json
import os
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
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from capture_speed import build_history  # noqa: E402

FACT = "Prefers oat milk in coffee"  # the case, on a fresh home
QUERY = "what milk does the user like"
# On the indexed homes (benchmarks/synthetic.py's facts mention oat milk in coffee often): a fact only it holds.
HOME_FACT = "Puts cardamom in the morning chai"
HOME_QUERY = "what does the user put in chai"
TURN = ("I always put cardamom in my morning chai.", "Noted: cardamom in the chai.")
PROMPT = "what should I put in the chai I am brewing?"
OFF = ("import sys, suzent_cli.index.pending as p; p.ENABLED = False; from suzent_cli.cli.fasthook import main; "
       "sys.exit(main(sys.argv[1:]))")


def command(variant: str) -> list[str]:
    return [sys.executable, "-m", "suzent_cli"] if variant == "on" else [sys.executable, "-c", OFF]


def env_for(home: Path, embedder: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    # no server may start itself (issue 25 auto-start): the cold paths mean none; the server paths start theirs
    env.update(SUZENT_HOME=str(home), PYTHONPATH=str(ROOT), SUZENT_EMBEDDER=embedder, SUZENT_SERVE_AUTOSTART="0")
    return env


def run(variant: str, home: Path, embedder: str, *args: str, stdin: str | None = None) -> tuple[str, float]:
    t0 = time.perf_counter()
    r = subprocess.run([*command(variant), *args], input=stdin, capture_output=True, text=True, cwd=str(ROOT),
                       env=env_for(home, embedder), timeout=900)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return r.stdout, took


def make_home(base: Path, name: str, facts: int, embedder: str) -> Path:
    home = base / name
    if facts:
        build_history(home, facts)
        past = time.time() - 3600
        for p in home.rglob("archive/*.md"):
            os.utime(p, (past, past))  # not "changed just now" (pending.RECENT_NS) once indexed
        run("on", home, embedder, "index")
    return home


# --- paths -------------------------------------------------------------------------------------------------------


def path_cli(variant: str, home: Path, embedder: str) -> tuple[bool, float]:
    run(variant, home, embedder, "capture", "--fact", f"[preference] {HOME_FACT}")
    out, took = run(variant, home, embedder, "recall", HOME_QUERY, "--json", "--limit", "5")
    return HOME_FACT in [h["content"] for h in json.loads(out)["hits"]], took


def _hooks(variant: str, home: Path, embedder: str) -> tuple[bool, float]:
    from claude_code_session import Transcript, payload, prompt

    t = Transcript(home.parent / f"{home.name}-t.jsonl")
    t.turn(*TURN)
    run(variant, home, embedder, "capture", "--from", "claude-code", "--timeout", "120", stdin=payload(t.path))
    out, took = run(variant, home, embedder, "recall", "--from", "claude-code", "--timeout", "120",
                    stdin=prompt(PROMPT))
    return "cardamom" in out, took


def path_hooks_cold(variant: str, home: Path, embedder: str) -> tuple[bool, float]:
    return _hooks(variant, home, embedder)


def _mcp(variant: str, home: Path, embedder: str) -> tuple[bool, float]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cmd = command(variant)
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--timeout", "900"],
                                   env=env_for(home, embedder), cwd=str(ROOT))

    async def main():
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=600) as client:
                await client.call_tool("remember", {"facts": [f"[preference] {FACT}"]})
                t0 = time.perf_counter()
                found = await client.call_tool("recall", {"query": QUERY, "limit": 5})
                return found, time.perf_counter() - t0

    found, took = anyio.run(main)
    return FACT in [h["content"] for h in (found.structured_content or {}).get("hits", [])], took


class Serve:
    def __init__(self, variant: str, home: Path, embedder: str):
        from suzent_cli.server.client import connect

        home.mkdir(parents=True, exist_ok=True)
        self.log = open(home.parent / f"{home.name}-serve.log", "ab")
        self.proc = subprocess.Popen([*command(variant), "serve", "--port", "0", "--no-chain", "--no-watch"],
                                     env=env_for(home, embedder), cwd=str(ROOT), stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 300
        while connect(home, timeout=30) is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("suzent serve did not come up")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(120)
        self.log.close()


def with_server(path):
    def served(variant: str, home: Path, embedder: str) -> tuple[bool, float]:
        server = Serve(variant, home, embedder)
        try:
            return path(variant, home, embedder)
        finally:
            server.stop()
    return served


PATHS = [
    ("CLI: capture --fact → recall (indexed home)", path_cli, True),
    ("hooks cold: Stop hook → prompt hook (indexed home)", path_hooks_cold, True),
    ("MCP standalone, fresh home: remember → recall", _mcp, False),
    ("MCP relayed to suzent serve (fresh home): remember → recall", with_server(_mcp), False),
    ("hooks through suzent serve (indexed home): Stop → prompt", with_server(_hooks), True),
]


def section_paths(base: Path, source: Path, embedder: str) -> list[str]:
    rows = ["| path | pending search | in the next recall's top 5 | that recall's latency |", "|---|---|---|---|"]
    for i, (name, path, indexed) in enumerate(PATHS):
        for variant in (("off", "on") if i % 2 else ("on", "off")):
            home = base / f"p{i}-{variant}"
            if indexed:
                shutil.copytree(source, home)
            found, took = path(variant, home, embedder)
            rows.append(f"| {name} | {variant} | {'found' if found else '**not found**'} | {took:.2f} s |")
    return rows


# --- cost --------------------------------------------------------------------------------------------------------


def section_cost(base: Path, source: Path, embedder_name: str, rounds: int, pending: int) -> list[str]:
    from conftest import log, settings_at
    from suzent_cli.index import pending as pending_mod
    from suzent_cli.index.embed import load_embedder
    from suzent_cli.recall import recall

    home = base / "cost"
    shutil.copytree(source, home)
    s = settings_at(home, now="2026-11-29T12:00", env={"SUZENT_EMBEDDER": embedder_name})
    embedder = load_embedder(embedder_name)
    queries = (HOME_QUERY, "where does the user live", "favourite editor", "meeting on thursday", "coffee")
    def timed(enabled: bool, cold: bool) -> float:
        pending_mod.ENABLED = enabled
        took = []
        for q in queries:
            if cold:
                pending_mod._VECTORS.clear()
            t0 = time.perf_counter()
            recall(s, embedder, q, limit=10, log=False)
            took.append(time.perf_counter() - t0)
        return statistics.median(took)

    for q in queries:
        recall(s, embedder, q, limit=10, log=False)  # warm: lancedb, the model, the unrelated set
    rows = ["| pending lines | pending search | vector cache | recall p50 (median of rounds) | added |",
            "|---|---|---|---|---|"]

    def measure(label: str, cold: bool) -> None:
        on, off = [], []
        for i in range(rounds):
            for enabled in ((True, False) if i % 2 else (False, True)):
                (on if enabled else off).append(timed(enabled, cold))
        a, b = statistics.median(on), statistics.median(off)
        rows.append(f"| {label} | off | — | {b * 1000:.1f} ms | |")
        rows.append(f"| {label} | on | {'cleared each recall' if cold else 'kept'} | {a * 1000:.1f} ms | "
                    f"{(a - b) * 1000:+.1f} ms ({a / b:.2f}×) |")

    measure("0", cold=False)
    log(s, "2026-11-29", *[f"[context] Pending bench line {i} about the sprint review and coffee order"
                           for i in range(pending)], time="12:00")
    from suzent_cli.index.store import ReadStore

    pending_mod.ENABLED = True  # measure() leaves it as its last variant (off after an even number of rounds)
    found = len(pending_mod.pending_rows(s, ReadStore.open_existing(s.paths.index_dir)).rows)
    assert found == min(pending, pending_mod.MAX_ROWS), found
    measure(str(pending), cold=False)
    measure(str(pending), cold=True)
    pending_mod.ENABLED = True
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="all-MiniLM-L6-v2")
    ap.add_argument("--facts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pending", type=int, default=100)
    ap.add_argument("--skip-paths", action="store_true")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="suzent-ryw-"))
    try:
        source = make_home(base, "source", args.facts, args.embedder)
        out = [] if args.skip_paths else section_paths(base, source, args.embedder)
        cost = section_cost(base, source, args.embedder, args.rounds, args.pending)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("command: python benchmarks/read_your_writes.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"embedder {args.embedder}, {args.facts} indexed facts, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if out:
        print("\n".join(["", *out]))
    print("\n".join(["", *cost]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
