#!/usr/bin/env python3
"""The CLI with a warm server vs without (issue 25, item 2): whole ``suzent recall "…"`` and ``suzent status``
processes, relayed to a running ``suzent serve`` (A) and cold with ``SUZENT_NO_SERVER=1`` beside the same server (B),
rounds alternated A B / B A on one home of N facts indexed with the embedder given (default: the bundled model).
Prints wall and CPU medians (CPU: the client process, plus the server's own CPU during the call for A, read from
/proc), and checks that both print the same bytes.

Usage: python benchmarks/cli_relay.py [--facts 1000] [--rounds 6] [--embedder all-MiniLM-L6-v2|hash:64]
"""

from __future__ import annotations

import argparse
import os
import resource
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

import serve  # noqa: E402

QUERY = "which editor does the user use"
COMMANDS = {"recall": ["recall", QUERY], "status": ["status"]}
# The relayed variant is checked once to be run by the server: its client never imports typer.
PROBE = ("import sys\nfrom suzent_cli.cli.fasthook import main\ncode = main(sys.argv[1:])\nsys.stdout.flush()\n"
         "print('typer loaded:', 'typer' in sys.modules)\nsys.exit(code)")


def server_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(home: Path, argv: list[str], env: dict, pid: int | None) -> tuple[float, float, bytes, bytes]:
    """One whole process: (wall s, CPU s of the client plus the server's during it, stdout, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    served = server_cpu(pid) if pid else 0.0
    t0 = time.perf_counter()
    r = subprocess.run([str(serve.PY), "-m", "suzent_cli", *argv], env=env, cwd=str(ROOT), capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if pid:
        cpu += server_cpu(pid) - served
    if r.returncode != 0:
        raise SystemExit(f"{argv} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return wall, cpu, r.stdout, r.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--embedder", default=serve.MODEL)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="suzent-cli-relay-"))
    rows: list[str] = []
    try:
        home = serve.make_home(base, "home", args.facts, args.embedder)
        server = serve.Server(home)
        try:
            env = dict(serve.env_for(home), PYTHONPATH=str(ROOT))
            cold_env = dict(env, SUZENT_NO_SERVER="1")
            run(home, COMMANDS["recall"], env, None)  # the model loads in the server before the first timing
            probe = subprocess.run([str(serve.PY), "-c", PROBE, *COMMANDS["recall"]], env=env, cwd=str(ROOT),
                                   capture_output=True, text=True)
            if probe.returncode != 0 or not probe.stdout.rstrip().endswith("typer loaded: False"):
                raise SystemExit(f"the server did not run the relayed recall: {probe.stdout[-200:]} {probe.stderr}")
            times = {(c, v): ([], []) for c in COMMANDS for v in ("relayed", "cold")}
            outputs: dict[tuple[str, str], set[bytes]] = {k: set() for k in times}
            for i in range(args.rounds):
                for command, argv in COMMANDS.items():
                    for variant in (("relayed", "cold") if i % 2 == 0 else ("cold", "relayed")):
                        relayed = variant == "relayed"
                        wall, cpu, out, _ = run(home, argv, env if relayed else cold_env,
                                                server.proc.pid if relayed else None)
                        times[(command, variant)][0].append(wall)
                        times[(command, variant)][1].append(cpu)
                        if command == "recall":
                            outputs[(command, variant)].add(out)
            same = outputs[("recall", "relayed")] == outputs[("recall", "cold")]
        finally:
            server.stop()
        rows.append(f"{args.facts} facts, embedder {args.embedder}, {args.rounds} rounds alternated; "
                    f"recall output identical relayed/cold: {'yes' if same else 'NO'}")
        rows.append("")
        rows.append("| command | variant | wall median | wall p90 | CPU median (client + server) | ratio (wall) |")
        rows.append("|---|---|---|---|---|---|")
        for command in COMMANDS:
            cold_wall = statistics.median(times[(command, "cold")][0])
            for variant in ("relayed", "cold"):
                wall, cpu = times[(command, variant)]
                med = statistics.median(wall)
                rows.append(f"| `suzent {' '.join(shlex.quote(a) for a in COMMANDS[command])}` | {variant} | "
                            f"{med:.3f} s | {serve.pct(wall, 90):.3f} s | {statistics.median(cpu):.3f} s | "
                            f"{med / cold_wall:.3f} |")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("\n".join(rows))
    print()
    print("command: python " + " ".join(shlex.quote(a) for a in sys.argv))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
