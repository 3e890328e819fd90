"""`make demo` runs the main job (capture → dream → index → recall) on the bundled example, via the Makefile."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, cli_env

pytestmark = pytest.mark.model


def _demo_command(home):
    """`make demo` itself when this suite runs in the venv make built (as `make test` does), else its script."""
    venv = Path(sys.prefix)
    if shutil.which("make") and (venv / ".installed").is_file():
        return ["make", "-s", "demo", f"VENV={venv}", f"DEMO_HOME={home}"]
    return [sys.executable, str(REPO / "scripts" / "demo.py"), str(REPO / "examples" / "conversation.json"), str(home)]


def test_demo_captures_indexes_and_recalls_with_provenance(tmp_path):
    home = tmp_path / "demo-home"
    # as a person runs it: auto-start not switched off around it (the demo itself must keep servers out)
    env = cli_env(home, SUZENT_SERVE_AUTOSTART=None, CI=None)
    try:
        r = subprocess.run(_demo_command(home), capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    finally:  # should the demo ever start a server, it does not outlive the test
        subprocess.run([sys.executable, "-m", "suzent_cli", "--home", str(home), "serve", "stop"], capture_output=True,
                       cwd=REPO, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (home / "server" / "autostart.json").exists()  # no server started for a home the next run deletes
    out = r.stdout
    assert "$ suzent init" in out and "$ suzent index" in out
    assert re.search(r"captured \d+ fact\(s\)", out)
    assert "- [personal] I just moved to Lisbon from Hamburg, so my timezone is different now." in out
    assert "Can you shift" not in out.split("$ suzent index")[0].split("--- ")[-1]  # questions are not facts
    assert re.search(r"rows \+\d+ −0", out)
    coffee = out.split("how does the user take their coffee")[1].split("$ suzent")[0]
    first_hit = next(line for line in coffee.splitlines() if line.startswith("1\t"))
    # the vault claim stands for the log line it cites (one statement, one hit), with that line as provenance
    assert "coffee black" in first_hit and "3_Personal/Profile.md" in first_hit and "cites 2026-03-02.md:6" in first_hit  # the claim text, its lifecycle in a column
    assert re.search(r"ingested 2026-03-02\.\.2026-03-03 \(offline\): \d+ facts", out)  # the dream, before the index
    assert "--- notebook/3_Personal/Profile.md ---" in out and "· source: 2026-03-02.md:6" in out
    assert out.rstrip().endswith("vault page it came from.")
