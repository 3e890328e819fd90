"""``make demo`` (``python scripts/demo.py [EXAMPLE.json] [HOME]``): the main job on the bundled example conversation, through the real CLI.

Creates a fresh home (default ``./demo-home``), captures every session of ``examples/conversation.json`` with the
offline extractor on its own date, runs the dream (rules engine) to fold the logs into the vault, indexes, and
recalls the example queries, printing each command it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

DEMO_MARKER = ".suzent-demo"


def _run(args: list[str], env: dict, stdin: str | None = None) -> str:
    print(f"\n$ suzent {' '.join(a if ' ' not in a else repr(a) for a in args)}", flush=True)
    proc = subprocess.run([sys.executable, "-m", "suzent_cli", *args], input=stdin, text=True, env=env,
                          capture_output=True)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"demo step failed (exit {proc.returncode}): suzent {' '.join(args)}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    example = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "examples" / "conversation.json"
    home = Path(argv[1]) if len(argv) > 1 else Path("demo-home")
    data = json.loads(example.read_text(encoding="utf-8"))
    if home.exists():
        if not (home / DEMO_MARKER).is_file():
            raise SystemExit(f"refusing to replace {home}: it exists and was not made by the demo "
                             f"(no {DEMO_MARKER} in it). Give another DEMO_HOME.")
        # a server someone started on the old demo home stops first: its files are about to go
        subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), "serve", "stop"], capture_output=True,
                       env=os.environ)
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (home / DEMO_MARKER).write_text("made by `make demo`; deleted and re-made by the next run\n")
    # The demo shows every stage in its own process: no server started for a home it deletes on the next run. Its
    # conversation belongs to no project (it runs inside suzent's own checkout, which would otherwise scope the
    # technical facts to that repository): every fact is the person's.
    env = dict(os.environ, SUZENT_HOME=str(home.absolute()), NO_COLOR="1", SUZENT_EXTRACTOR="offline",
               COLUMNS="110", SUZENT_SERVE_AUTOSTART="0", SUZENT_SCOPE="global")
    env.pop("ANTHROPIC_API_KEY", None)
    print(f"suzent demo: {example.name} → fresh home {home}")
    _run(["init"], env)
    turns = home / "turns"
    turns.mkdir()
    for session in data["sessions"]:
        turn_file = turns / f"{session['id']}.json"  # kept, so every printed command can be re-run
        turn_file.write_text(json.dumps(session["messages"], indent=1, ensure_ascii=False), encoding="utf-8")
        _run(["capture", "--turn-from", str(turn_file), "--session", session["id"], "--date", session["date"],
              "--time", session["time"]], env)
    archive = home / "sandbox" / "shared" / "memory" / "archive"
    for log in sorted(archive.glob("*.md")):
        print(f"\n--- {log.relative_to(home)} ---")
        print(log.read_text(encoding="utf-8"), end="")
    last = max(session["date"] for session in data["sessions"])
    _run(["--now", f"{last}T23:59", "dream", "--force", "--engine", "offline"], env)  # as cron would, once logs are past
    vault = home / "notebook"
    for page in sorted(vault.glob("3_Personal/*.md")):
        print(f"\n--- {page.relative_to(home)} ---")
        print(page.read_text(encoding="utf-8"), end="")
    _run(["index"], env)
    for query in data["queries"]:
        _run(["recall", query, "--limit", "3"], env)
    print("\ndemo done: every hit above names the daily log line or vault page it came from.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
