"""A dream killed right after its ledger entry (a real process, ``os._exit``): a re-run, by ``dream`` or by
``run``, finishes the follow-ups and ends where an uninterrupted dream ends. The rest of the recovery tests run
in-process in tests/test_dream_recovery.py, whose helpers this uses."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from test_dream_recovery import D, end_state, indexed_backlog, rules_runner

from conftest import REPO

KILL_AFTER_ENTRY = textwrap.dedent("""
    import dataclasses, os, sys
    from suzent_cli.config import resolve_settings
    from suzent_cli.vault import ledger
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner

    real = ledger.append_ledger
    def append_then_die(vault, entry, **kw):
        real(vault, entry, **kw)
        if " ingest | " in entry:
            os._exit(9)          # killed right after the ledger entry, before any follow-up
    ledger.append_ledger = append_then_die
    settings = dataclasses.replace(resolve_settings(home=sys.argv[1], now="2026-06-20T12:00", env={}),
                                   embedder="hash:64")
    DreamRunner(settings, DreamConfig(), engine="rules").tick(force=True)
""")



@pytest.mark.parametrize("rerun", ["dream", "run"])
def test_killed_after_the_ledger_entry_the_rerun_finishes_the_follow_ups(tmp_path, rerun):
    from suzent_cli.config import DreamConfig
    from suzent_cli.run import run_pass
    from suzent_cli.vault.dream_state import load_state
    from suzent_cli.vault.state import read_superseded

    crashed, clean = indexed_backlog(tmp_path / "crashed"), indexed_backlog(tmp_path / "clean")
    proc = subprocess.run([sys.executable, "-c", KILL_AFTER_ENTRY, str(crashed.paths.home)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    killed = end_state(crashed)
    assert killed["watermark"] == D("2026-06-05") and len(read_superseded(crashed.paths.state_dir)) == 2
    assert killed["memory_md"] is None and killed["pending"]["steps"] == ["reconcile", "promote"]

    config = DreamConfig(engine="rules", lint_enabled=False)
    if rerun == "dream":
        result = rules_runner(crashed, follow_ups=None, lint_enabled=False).tick()
        assert result.outcome == "idle" and [s.name for s in result.steps] == ["reconcile", "promote"]
        assert all(s.ok for s in result.steps) and any("finished the follow-ups" in w for w in result.warnings)
    else:
        report = run_pass(crashed, config)
        assert report.exit_code == 0, report.to_json()
        assert [s["name"] for s in report.stage("dream").detail["steps"]] == ["reconcile", "promote"]
    assert rules_runner(clean, follow_ups=None, lint_enabled=False).tick(force=True).outcome == "ingested"
    resumed, uninterrupted = end_state(crashed), end_state(clean)
    assert resumed["pending"] is None and resumed["in_flight"] is None and resumed["superseded"] == []
    assert resumed == uninterrupted
    assert load_state(crashed.paths.state_dir).failures == {}
