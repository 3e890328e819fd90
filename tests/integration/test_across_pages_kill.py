"""A dream killed with SIGKILL inside the across-pages pass (issue 27): the statements it folded still owe their
comparison (``.state/across_pages.jsonl``), and the next dream finishes it — before the pass wrote anything, or
after it wrote its retirement but before it dropped the record (then nothing is retired twice). The end state is
what an uninterrupted dream writes. A real process, since the kill is the point: the seam is a monkeypatch in the
child (the pass's page write, or the drop of the record) that sends the process SIGKILL."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, log, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault.state import ACROSS_PAGES, read_superseded
from suzent_cli.vault.state.owed import read_owed

DARK, LIGHT = "I prefer dark mode in every editor", "I use light mode in every editor now"
PAGES = ("3_Personal/Preferences.md", "2_Wiki/Concepts/Technical.md", "index.md")

KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from suzent_cli.config import DreamConfig, resolve_settings
    from suzent_cli.dream import rules
    from suzent_cli.dream.runner import DreamRunner

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    if sys.argv[2] == "before-write":   # the pass decided, wrote nothing yet
        real = rules.write_page
        def write(path, page, **kw):
            if path.name == "Preferences.md":
                die()
            return real(path, page, **kw)
        rules.write_page = write
    else:                               # the pass wrote its retirement, the record not dropped yet
        rules.settle = die
    settings = resolve_settings(home=sys.argv[1], now="2026-06-20T12:00", env={})
    DreamRunner(settings, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
""")


def tick(s):
    return DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)


def seeded(home):
    s = settings_at(home)
    log(s, "2026-06-01", f"[preference] {DARK}", "[preference] Likes jazz")
    assert tick(s).outcome == "ingested"
    log(s, "2026-06-05", f"[technical] {LIGHT}")
    return s


@pytest.mark.parametrize("where", ["before-write", "after-write"])
def test_a_kill_inside_the_pass_is_finished_by_the_next_dream(tmp_path, where):
    killed, clean = seeded(tmp_path / "killed"), seeded(tmp_path / "clean")
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(killed.paths.home), where], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert [(o.page, o.claim) for o in read_owed(killed.paths.state_dir)] == [("2_Wiki/Concepts/Technical.md", LIGHT)]

    again = tick(killed)
    assert again.outcome == "ingested", again.error
    assert any("finished the comparison across pages of 1 statement(s)" in w for w in again.warnings)
    assert tick(clean).outcome == "ingested"
    for rel in PAGES:
        assert (killed.paths.vault_dir / rel).read_text() == (clean.paths.vault_dir / rel).read_text(), rel
    text = (killed.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert text.count(DARK) == 1 and "(until 2026-06-05)" in text  # retired once, not twice
    assert read_superseded(killed.paths.state_dir) == read_superseded(clean.paths.state_dir)
    assert not (killed.paths.state_dir / ACROSS_PAGES).exists()
