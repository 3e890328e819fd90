"""``suzent verify`` against real processes: two repairs at once, and verify beside captures and index passes: a
race reads as stale (run ``suzent index``), never as a rewritten log or a row that should not exist."""

from __future__ import annotations

import subprocess
import sys

from conftest import HASH_ENV, REPO, cli_env, run_cli
from suzent_cli.config import resolve_settings
from suzent_cli.verify import verify

ENV = HASH_ENV | {"SUZENT_NOW": "2026-06-10T12:00"}

WRITER = r"""
import os, sys
os.umask(0o077)  # as suzent's entry points run
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import HashEmbedder
settings = resolve_settings(home=sys.argv[1], today="2026-06-10", env={"SUZENT_EMBEDDER": "hash:64"})
for i in range(int(sys.argv[2])):
    write_facts(settings, [Fact(f"racing fact {i}")], time="12:00", session="racer")
    if i % 3 == 0:
        run_index(settings, embedder=HashEmbedder(64))
"""


def test_two_repairs_at_once_both_finish_and_leave_one_row_per_fact(home):
    facts = [f"[general] Fact number {i}" for i in range(6)]
    assert run_cli(home, "capture", *[a for f in facts for a in ("--fact", f)], env_extra=ENV).returncode == 0
    cmd = [sys.executable, "-m", "suzent_cli", "verify", "--repair", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              env=cli_env(home, **ENV)) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    report = verify(resolve_settings(home=home, env=ENV))
    assert report.ok and report.checks["index_backed"].checked == len(facts), report.violations


def test_verify_beside_captures_and_index_passes_reads_a_race_as_stale_only(home):
    assert run_cli(home, "capture", "--fact", "[general] First", env_extra=ENV).returncode == 0
    assert run_cli(home, "index", env_extra=ENV).returncode == 0
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home), "12"], cwd=REPO, env=cli_env(home))
    settings = resolve_settings(home=home, env=ENV)
    seen, runs = [], 0
    while writer.poll() is None or not runs:  # verify in this process, the writer in its own
        report = verify(settings)
        runs += 1
        seen += [v for name in ("index_backed", "facts_indexed", "logs") for v in report.checks[name].violations]
        assert not [v for v in seen if "should not exist" in v or "unchanged since" in v or "rewritten" in v], seen
    assert writer.wait(timeout=300) == 0
    assert run_cli(home, "index", env_extra=ENV).returncode == 0
    final = verify(settings)
    assert final.ok, final.violations
