"""A dream killed mid-run (``os._exit`` inside a page write: no ``finally``, no lock release) converges on rerun to
what an uninterrupted run writes. A real process, since the kill is the point."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, log, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import ledger
from suzent_cli.vault.dream_state import load_state
from suzent_cli.vault.state import read_superseded

D = dt.date.fromisoformat


def runner(settings, **config):
    return DreamRunner(settings, DreamConfig(**config), engine="rules", follow_ups=[])


def days(start: str, n: int) -> list[str]:
    return [(D(start) + dt.timedelta(days=i)).isoformat() for i in range(n)]


CRASH_SCRIPT = textwrap.dedent("""
    import os, sys
    from suzent_cli.config import resolve_settings
    from suzent_cli.vault import pages
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner

    calls = []
    def dying(real):
        def write(path, *args, **kwargs):  # every page and index.md write of the engine goes through update_file
            calls.append(path)
            if len(calls) == int(sys.argv[2]):
                os._exit(9)          # killed in the middle of writing the batch's pages
            return real(path, *args, **kwargs)
        return write
    pages.update_file = dying(pages.update_file)  # pages.write_page and pages.link_in_index (index.md)
    settings = resolve_settings(home=sys.argv[1], now="2026-06-20T12:00", env={})
    DreamRunner(settings, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
""")


@pytest.mark.parametrize("die_at", [1, 2, 4])
def test_crash_mid_run_then_rerun_converges(tmp_path, die_at):
    homes = {name: tmp_path / name for name in ("crashed", "clean")}
    for h in homes.values():
        s = settings_at(h)
        for day in days("2026-06-01", 5):
            log(s, day, "[personal] Lives in Berlin", "[preference] Likes tea", f"[technical] Read about {day}",
                "[goal] Wants to learn Rust")
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(homes["crashed"]), str(die_at)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    crashed = settings_at(homes["crashed"])
    assert ledger.watermark(ledger.read_ledger(crashed.paths.vault_dir)) is None
    assert load_state(crashed.paths.state_dir).in_flight is not None

    again = runner(crashed).tick(force=True)
    assert again.outcome == "ingested", again.error
    clean = runner(settings_at(homes["clean"])).tick(force=True)
    for rel in ("3_Personal/Profile.md", "3_Personal/Preferences.md", "3_Personal/Goals.md",
                "2_Wiki/Concepts/Technical.md", "index.md"):
        assert (homes["crashed"] / "notebook" / rel).read_text() == (homes["clean"] / "notebook" / rel).read_text(), rel
    assert read_superseded(crashed.paths.state_dir) == read_superseded(settings_at(homes["clean"]).paths.state_dir)
    assert ledger.watermark(ledger.read_ledger(crashed.paths.vault_dir)) == D("2026-06-05")
    assert load_state(crashed.paths.state_dir).in_flight is None and clean.outcome == "ingested"
