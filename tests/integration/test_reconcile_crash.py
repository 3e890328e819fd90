"""Reconcile killed at each step (``os._exit``: no ``finally``, no lock release) converges on rerun to what an
uninterrupted reconcile leaves. A real process, since the kill is the point; the reruns are in-process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from test_reconcile import EMB, dreamed, rows

from conftest import REPO, invoke
from suzent_cli.vault.state import read_superseded, read_tombstones

# Killed at each step: after the tombstones are appended, after the first group of days is reindexed, and just
# before superseded.txt is truncated.
CRASH = textwrap.dedent("""
    import dataclasses, os, sys
    from suzent_cli import reconcile as r
    from suzent_cli.config import resolve_settings
    point, home = sys.argv[1], sys.argv[2]
    r.REINDEX_GROUP = 2
    calls = []
    real_truncate = r.truncate_superseded
    import suzent_cli.index.api as api
    real_api = api.reindex_files
    def reindex(settings, files, **kw):
        calls.append(files)
        if point == "after-tombstones" or (point == "after-some-days" and len(calls) == 2):
            os._exit(9)
        return real_api(settings, files, **kw)
    api.reindex_files = reindex
    def truncate(*a, **kw):
        if point == "before-truncate":
            os._exit(9)
        return real_truncate(*a, **kw)
    r.truncate_superseded = truncate
    settings = dataclasses.replace(resolve_settings(home=home, env={}), embedder="hash:64")
    r.reconcile(settings)
""")


@pytest.mark.parametrize("point", ["after-tombstones", "after-some-days", "before-truncate"])
def test_killed_reconcile_converges_on_rerun(tmp_path, point):
    crashed, clean = dreamed(tmp_path / "crashed"), dreamed(tmp_path / "clean")
    proc = subprocess.run([sys.executable, "-c", CRASH, point, str(crashed.paths.home)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    assert len(read_tombstones(crashed.paths.state_dir)) == 3          # tombstones were written before the kill
    assert len(read_superseded(crashed.paths.state_dir)) == 3          # ... and the hand-off is still whole
    rerun = invoke(crashed.paths.home, "reconcile", "--json", env_extra=EMB)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["tombstones_added"] == 0
    uninterrupted = invoke(clean.paths.home, "reconcile", "--json", env_extra=EMB)
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    assert rows(crashed) == rows(clean)
    assert read_tombstones(crashed.paths.state_dir) == read_tombstones(clean.paths.state_dir)
    assert read_superseded(crashed.paths.state_dir) == read_superseded(clean.paths.state_dir) == []
