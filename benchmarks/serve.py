#!/usr/bin/env python3
"""suzent serve: what a warm server buys an agent (issue 15). Prints one table per section and the command.

Sections (``--sections``, default all):

* ``hooks`` — the Claude Code hooks as whole processes (the console script, spawn to exit): the UserPromptSubmit
  recall hook and the Stop capture hook, three variants interleaved round by round so machine noise hits all alike:
  ``before`` (the code of ``--old``, the cold path as it was), ``cold`` (this code, no server) and ``server`` (this
  code, a ``suzent serve`` running for the home). Target: ``server`` p50 ≤ 0.25 s (hybrid recall included), and
  ``cold`` no slower than ``before``. Each variant has its own home with the same facts (indexed with the bundled
  model), so the server's home is never touched by a cold process.
* ``latency`` — recall through the warm server (the local API on the Unix socket, hybrid), p50/p95 over varied
  queries after a warm-up, at each ``--sizes`` row count. Tables above ``--real-max`` rows are built with the
  ``hash:384`` embedder (the same vector width as the bundled model, so the same LanceDB cost; embedding 100k facts
  with the model on two cores takes many minutes); the bundled model's query-encode time is measured and shown
  beside them.
* ``recallable`` — capture → recallable through the server: ``remember`` a new fact, then recall until it is
  returned; p50/p95 of the whole interval. Target p95 ≤ 1 s.
* ``rss`` — the server's resident memory with the bundled model loaded (VmRSS now and VmHWM, its peak), after the
  sections above ran against it. Target ≤ 800 MB.
* ``agents`` — ``--agents`` MCP clients (the SDK's streamable-HTTP client, with the token) issue recall/remember for
  ``--seconds`` while the unattended chain runs every few seconds. Then: errors, facts lost or duplicated (each
  remembered fact must be in the daily logs exactly once), and index ≡ markdown (the live table's rows equal a
  fresh rebuild's from the same markdown).

Usage: python benchmarks/serve.py [--sections hooks,latency,recallable,rss,agents] [--rounds 30]
       [--sizes 1000,10000,100000] [--real-max 10000] [--agents 8] [--seconds 60] [--old DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from capture_speed import build_history  # noqa: E402

from suzent_cli.server import paths, runtime  # noqa: E402

PY = Path(sys.executable)
SCRIPT = PY.parent / "suzent"
MODEL = "all-MiniLM-L6-v2"
QUERIES = ["which editor does the user use", "trip to Lisbon in March", "the quarterly report",
           "what does the manager dislike", "Spanish lessons", "budget for the laptop", "dentist appointment",
           "vegetarian dinners", "moving to Berlin", "running on Sunday mornings", "oat milk in coffee",
           "switching the CI", "standing desk", "dark mode", "what did the landlord recommend",
           "what is Alex planning", "what did Dr. Weber ask about", "the team decided on", "our client booked",
           "my sister prefers"]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def env_for(home: Path, embedder: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env["SUZENT_HOME"] = str(home)
    env["SUZENT_SERVE_AUTOSTART"] = "0"  # the cold cases mean no server: none may start itself
    if embedder:
        env["SUZENT_EMBEDDER"] = embedder
    return env


def suzent(home: Path, *args: str, embedder: str | None = None, stdin: bytes | None = None, check: bool = True,
           code: Path = ROOT) -> subprocess.CompletedProcess:
    """Run this code's CLI (``code``: another checkout for the ``before`` variant) as a whole process."""
    cmd = [str(SCRIPT)] if code == ROOT and SCRIPT.exists() else [str(PY), "-m", "suzent_cli"]
    env = env_for(home, embedder)
    if code != ROOT:
        env["PYTHONPATH"] = str(code)
    r = subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=env, cwd=str(code))
    if check and r.returncode != 0:
        raise SystemExit(f"suzent {' '.join(args)} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-800:]}")
    return r


def make_home(base: Path, name: str, facts: int, embedder: str, today: str = "2026-11-29") -> Path:
    """A home with ``facts`` synthetic facts over a year of daily logs, indexed with ``embedder``."""
    home = base / name
    build_history(home, facts)
    (home / "config.toml").write_text(f'[index]\nembedder = "{embedder}"\n', encoding="utf-8")
    suzent(home, "--now", today, "index")
    return home


class Server:
    """A ``suzent serve`` subprocess for ``home`` (port 0: any free port), ready once its socket answers."""

    def __init__(self, home: Path, *, chain: bool = False, embedder: str | None = None):
        from suzent_cli.server.client import connect

        args = [str(PY), "-m", "suzent_cli", "serve", "--port", "0"] + ([] if chain else ["--no-chain"])
        self.home = home
        self.log = open(home / "serve.log", "ab")  # closed in stop()
        self.proc = subprocess.Popen(args, env=env_for(home, embedder), cwd=str(ROOT), stdout=self.log,
                                     stderr=self.log)
        deadline = time.monotonic() + 120
        while (backend := connect(home, timeout=30)) is None or not paths.info_path(home).exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"suzent serve did not come up; see {home / 'serve.log'}")
            time.sleep(0.1)
        self.backend = backend
        while "mcp_url" not in (info := runtime.read_info(home) or {}):  # the socket accepts before serve.json is whole
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"suzent serve did not write serve.json; see {home / 'serve.log'}")
            time.sleep(0.1)
        self.mcp_url = info["mcp_url"]
        self.token = paths.token_path(home).read_text(encoding="utf-8").strip()

    def rss(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) in MB, from /proc."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        return code


# --- hooks --------------------------------------------------------------------------------------------------------

def section_hooks(base: Path, rounds: int, old: Path | None, facts: int) -> list[str]:
    from claude_code_session import Transcript, payload, prompt

    homes = {v: make_home(base, f"hooks-{v}", facts, MODEL) for v in (["before"] if old else []) + ["cold", "server"]}
    server = Server(homes["server"])
    transcripts = {v: Transcript(home / "t.jsonl") for v, home in homes.items()}
    times: dict[tuple[str, str], list[float]] = {}
    produced: dict[tuple[str, str], int] = {}
    try:
        for i in range(rounds):
            order = list(homes)
            random.Random(i).shuffle(order)
            for v in order:
                code = old if v == "before" else ROOT
                q = prompt(f"{QUERIES[i % len(QUERIES)]} please, and remind me what we said")
                t0 = time.perf_counter()
                r = suzent(homes[v], "recall", "--from", "claude-code", stdin=q.encode(), code=code, check=False)
                times.setdefault(("recall", v), []).append(time.perf_counter() - t0)
                produced[("recall", v)] = produced.get(("recall", v), 0) + bool(r.stdout.strip())
                transcripts[v].turn(f"I moved my bench meeting {i} to Thursday at {9 + i % 8}am", "Noted.")
                data = payload(transcripts[v].path).encode()
                t0 = time.perf_counter()
                suzent(homes[v], "capture", "--from", "claude-code", stdin=data, code=code, check=False)
                times.setdefault(("capture", v), []).append(time.perf_counter() - t0)
    finally:
        server.stop()
    rows = [f"{'hook':<26} {'variant':<8} {'p50':>8} {'p95':>8} {'answered':>9}"]
    for (hook, v), values in times.items():
        name = "UserPromptSubmit (recall)" if hook == "recall" else "Stop (capture)"
        answered = f"{produced.get((hook, v), 0)}/{len(values)}" if hook == "recall" else ""
        rows.append(f"{name:<26} {v:<8} {ms(pct(values, 50)):>8} {ms(pct(values, 95)):>8} {answered:>9}")
    return rows


# --- latency ------------------------------------------------------------------------------------------------------

def query_encode_ms() -> float:
    from suzent_cli.index.embed import load_embedder

    embedder = load_embedder(MODEL)
    embedder.encode(["warm up"])
    samples = []
    for q in QUERIES * 3:
        t0 = time.perf_counter()
        embedder.encode([q])
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def section_latency(base: Path, sizes: list[int], real_max: int, queries: int) -> list[str]:
    rows = [f"{'rows':>8} {'embedder':<18} {'p50':>8} {'p95':>8} {'mean':>8}"]
    for n in sizes:
        embedder = MODEL if n <= real_max else "hash:384"
        t0 = time.perf_counter()
        home = make_home(base, f"latency-{n}", n, embedder)
        built = time.perf_counter() - t0
        server = Server(home)
        try:
            for q in QUERIES[:5]:
                server.backend.recall(q, limit=10)
            samples = []
            for i in range(queries):
                q = f"{QUERIES[i % len(QUERIES)]} {i}" if i >= len(QUERIES) else QUERIES[i]
                t0 = time.perf_counter()
                server.backend.recall(q, limit=10)
                samples.append(time.perf_counter() - t0)
        finally:
            server.stop()
        rows.append(f"{n:>8} {embedder:<18} {ms(pct(samples, 50)):>8} {ms(pct(samples, 95)):>8} "
                    f"{ms(statistics.mean(samples)):>8}   (built in {built:.0f} s)")
        shutil.rmtree(home, ignore_errors=True)
    rows.append(f"bundled model, one query encoded (median): {query_encode_ms():.1f} ms "
                "(add it to the hash:384 rows for the model's total)")
    return rows


# --- recallable + rss ---------------------------------------------------------------------------------------------

def section_recallable(server: Server, rounds: int) -> list[str]:
    samples, misses = [], 0
    server.backend.recall("warm up the model", limit=5)  # the model loads here, not in the first timed round
    server.backend.remember(facts=["[personal] The bench warm-up fact"])
    for i in range(rounds):
        word = f"zq{i:03d}kumquat{random.Random(i).randint(1000, 9999)}"
        t0 = time.perf_counter()
        server.backend.remember(facts=[f"[personal] The bench locker code is {word}"])
        found = False
        while time.perf_counter() - t0 < 10:
            hits = server.backend.recall(f"bench locker code {word}", limit=5)["hits"]
            if any(word in h["content"] for h in hits):
                found = True
                break
        samples.append(time.perf_counter() - t0)
        misses += not found
    return [f"{'capture → recallable':<22} {'p50':>8} {'p95':>8} {'max':>8} {'not found in 10 s':>18}",
            f"{'remember → recall':<22} {ms(pct(samples, 50)):>8} {ms(pct(samples, 95)):>8} "
            f"{ms(max(samples)):>8} {misses:>18}"]


# --- agents -------------------------------------------------------------------------------------------------------

async def _agent(n: int, url: str, token: str, seconds: float, stats: dict) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(n)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        end = time.monotonic() + seconds
        seq = 0
        while time.monotonic() < end:
            try:
                if rng.random() < 0.4:
                    fact = f"Agent {n} noted item {seq} as agentfact{n}x{seq}"
                    result = await client.call_tool("remember", {"facts": [fact]})
                    stats["remembered"].append(f"agentfact{n}x{seq}")
                    seq += 1
                else:
                    result = await client.call_tool("recall", {"query": rng.choice(QUERIES), "limit": 5})
                stats["calls"] += 1
                if result.is_error:
                    stats["errors"].append(str(result.content)[:200])
            except Exception as exc:  # noqa: BLE001 - every failure is counted, none may stop the run
                stats["errors"].append(f"{type(exc).__name__}: {exc}"[:200])


def _index_rows(home: Path) -> set[tuple]:
    from suzent_cli.index.store import ReadStore

    store = ReadStore.open_existing(home / "memory", home=home)
    return {(r["source"], r["locator"], r["content"]) for r in store.rows(["source", "locator", "content"])}


def section_agents(base: Path, agents: int, seconds: float) -> list[str]:
    home = make_home(base, "agents", 2000, MODEL)
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("[dream]\ninterval_seconds = 5\nmin_facts = 1\nmin_hours = 0\n")
    server = Server(home, chain=True)
    stats: dict = {"calls": 0, "errors": [], "remembered": []}

    async def all_agents() -> None:
        await asyncio.gather(*(_agent(n, server.mcp_url, server.token, seconds, stats) for n in range(agents)))

    try:
        asyncio.run(all_agents())
    finally:
        code = server.stop()
    logs = "".join(p.read_text(encoding="utf-8") for p in sorted((home / "sandbox/shared/memory/archive").glob("*.md")))
    counts = {word: logs.count(word + "\n") + logs.count(word + " ") for word in stats["remembered"]}
    lost = [w for w, c in counts.items() if c == 0]
    doubled = [w for w, c in counts.items() if c > 1]
    live = _index_rows(home)
    rebuilt_home = base / "agents-rebuilt"
    shutil.copytree(home, rebuilt_home)
    for derived in ("memory", "server"):  # the index and the server's runtime files: rebuilt from markdown below
        shutil.rmtree(rebuilt_home / derived)
    suzent(rebuilt_home, "index")
    rebuilt = _index_rows(rebuilt_home)
    return [f"{'agents':>6} {'seconds':>7} {'calls':>6} {'errors':>6} {'remembered':>10} {'lost':>5} {'doubled':>7} "
            f"{'index ≡ markdown':>16} {'server exit':>11}",
            f"{agents:>6} {seconds:>7.0f} {stats['calls']:>6} {len(stats['errors']):>6} {len(stats['remembered']):>10} "
            f"{len(lost):>5} {len(doubled):>7} {str(live == rebuilt):>16} {code:>11}"] + \
        [f"  error: {e}" for e in stats["errors"][:5]] + \
        ([f"  rows only live: {len(live - rebuilt)}, only rebuilt: {len(rebuilt - live)}"] if live != rebuilt else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default="hooks,latency,recallable,rss,agents")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--real-max", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--facts", type=int, default=1000, help="facts in the hooks/recallable homes")
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--old", type=Path, default=None, help="a checkout of the code before, for the hooks")
    parser.add_argument("--keep", action="store_true", help="keep the temp homes")
    args = parser.parse_args()
    sections = args.sections.split(",")
    print("command: python benchmarks/serve.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"load before: {os.getloadavg()[0]:.2f}  cores: {os.cpu_count()}  "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')}")
    base = Path(tempfile.mkdtemp(prefix="suzent-serve-bench-"))
    try:
        if "hooks" in sections:
            print("\n## hooks, whole process (console script)\n" +
                  "\n".join(section_hooks(base, args.rounds, args.old, args.facts)))
        if "latency" in sections:
            sizes = [int(s) for s in args.sizes.split(",") if s]
            print("\n## recall through the warm server (hybrid, limit 10, local API)\n" +
                  "\n".join(section_latency(base, sizes, args.real_max, args.queries)))
        if "recallable" in sections or "rss" in sections:
            home = make_home(base, "recallable", args.facts, MODEL)
            server = Server(home)
            try:
                if "recallable" in sections:
                    print("\n## capture → recallable through the server\n" +
                          "\n".join(section_recallable(server, args.rounds)))
                if "rss" in sections:
                    server.backend.recall("warm up the model", limit=5)
                    now, peak = server.rss()
                    print(f"\n## server memory (bundled model loaded)\nVmRSS {now} MB, VmHWM (peak) {peak} MB")
            finally:
                server.stop()
        if "agents" in sections:
            print(f"\n## {args.agents} MCP agents for {args.seconds:.0f} s, chain running\n" +
                  "\n".join(section_agents(base, args.agents, args.seconds)))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
