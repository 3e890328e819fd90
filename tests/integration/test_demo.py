"""`make demo` runs the main job (capture → dream → index → recall) on the bundled example, via the Makefile.

The demo script itself runs in this process, each `suzent` step it prints run by :func:`conftest.invoke` (what a
real process gives, tests/integration/test_invoke.py): the bundled model then loads once, not once per step, which
made this the suite's slowest test (issue 25). The Makefile's wiring is checked with `make -n demo`.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, invoke, load_script

pytestmark = pytest.mark.model

EXAMPLE = REPO / "examples" / "conversation.json"


def test_make_demo_runs_the_demo_script_on_the_example(tmp_path):
    """`make demo` is `python scripts/demo.py examples/conversation.json DEMO_HOME` in the venv (dry run)."""
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    home = tmp_path / "demo-home"
    venv = Path(sys.prefix)
    r = subprocess.run(["make", "-n", "-s", "demo", f"VENV={venv}", f"DEMO_HOME={home}", "STAMP=/dev/null"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    assert shlex.split(r.stdout.strip().splitlines()[-1]) == [f"{venv}/bin/python", "scripts/demo.py",
                                                              "examples/conversation.json", str(home)]


def _in_process(home: Path):
    """A ``subprocess`` stand-in for the demo script: ``python -m suzent_cli ARGS`` run by :func:`invoke` with the
    environment the script gives it (its ``SUZENT_*``, ``NO_COLOR`` and ``COLUMNS``)."""

    class Steps:
        autostart: list[str | None] = []  # SUZENT_SERVE_AUTOSTART as each step got it

        @staticmethod
        def run(cmd, *, input=None, text=True, env=None, capture_output=True):
            assert cmd[:3] == [sys.executable, "-m", "suzent_cli"] and text and capture_output
            extra = {k: v for k, v in env.items() if k.startswith("SUZENT_") or k in ("NO_COLOR", "COLUMNS")}
            Steps.autostart.append(env.get("SUZENT_SERVE_AUTOSTART"))
            extra.setdefault("SUZENT_SCOPE", "auto")  # a person's shell sets none (the suite's default is global)
            return invoke(None, *cmd[3:], input=input, env_extra=extra)

    return Steps


def test_demo_captures_indexes_and_recalls_with_provenance(tmp_path, monkeypatch, capsys):
    home = tmp_path / "demo-home"
    demo = load_script("scripts/demo.py", "demo_script")
    steps = _in_process(home)
    monkeypatch.setattr(demo, "subprocess", steps)
    monkeypatch.delenv("SUZENT_SERVE_AUTOSTART", raising=False)  # as a person runs it
    monkeypatch.delenv("SUZENT_SCOPE", raising=False)
    assert demo.main([str(EXAMPLE), str(home)]) == 0
    out = capsys.readouterr().out
    # no step may start a server for a home the next run deletes
    assert steps.autostart and set(steps.autostart) == {"0"}
    # the demo's conversation belongs to no project: run inside suzent's checkout, nothing is scoped to it
    assert "project:" not in out and not re.search(r"1_Projects/[^/\s]+/", out)
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
