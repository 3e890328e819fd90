"""The dream finishes what it starts and loses no batch to a network outage (issue 13 §6), and a wrong-typed
setting never stops a capture: follow-ups resumed after a kill at the ledger entry, a backfill folded exactly once
however it interleaves with a dream, transient engine errors backed off instead of counted, a lenient config
resolver for capture. Real files, in-process runners; real subprocesses where a kill or the CLI is the point."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suzent_cli.archive import Fact, append_entry, parse_fact_line
from suzent_cli.config import resolve_settings
from suzent_cli.errors import ConfigInvalid

from conftest import REPO, run_cli

D = dt.date.fromisoformat


# --- config: a wrong-typed setting capture does not need is a warning for capture, a refusal elsewhere -------
@pytest.mark.parametrize("toml, names", [
    ("[index]\nembedder = 5\n", "[index] embedder"),
    ("[index]\ncontext_window = \"wide\"\n", "[index] context_window"),
    ("index = 3\n", "[index] must be a table"),
    ("[claude]\nmodel = 5\napi_key = [1]\n", "[claude] model"),
    ("[capture]\nextractor = 1\n", "[capture] extractor"),
    ("user_id = 7\n", "user_id"),
    ("dream = 3\n", "[dream] must be a table"),
    ("lock_timeout = \"soon\"\n", "lock_timeout"),
])
def test_wrong_typed_settings_capture_does_not_need_are_recorded_when_lenient(tmp_path, toml, names):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigInvalid, match=names.replace("[", r"\[").replace("]", r"\]")):
        resolve_settings(home=tmp_path, env={})  # strict (every command but capture/config): refused as before
    s = resolve_settings(home=tmp_path, env={}, lenient=True)
    assert any(names in e for e in s.config_errors), s.config_errors
    assert s.paths.archive_dir == tmp_path / "sandbox/shared/memory/archive" and s.lock_timeout > 0


@pytest.mark.parametrize("toml", ["[paths]\nmemory_dir = 5\n", "paths = 1\n", "today = 5\n"])
def test_what_capture_needs_stays_fatal_even_when_lenient(tmp_path, toml):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigInvalid):
        resolve_settings(home=tmp_path, env={}, lenient=True)


def test_a_wrong_typed_embedder_warns_capture_and_refuses_index(home):
    home.mkdir()
    (home / "config.toml").write_text("[index]\nembedder = 5\n")
    proc = run_cli(home, "capture", "--fact", "[personal] Lives in Lisbon")
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "embedder must be a str" in proc.stderr and "Traceback" not in proc.stderr
    assert "Lives in Lisbon" in next((home / "sandbox/shared/memory/archive").glob("*.md")).read_text()
    proc = run_cli(home, "index")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: ") and "embedder must be a str" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- helpers ---------------------------------------------------------------------------------------------
def settings_at(home: Path, now: str = "2026-06-20T12:00", **env):
    return resolve_settings(home=home, now=now, env=env)


def log(settings, day: str, *facts: str, time: str = "09:00"):
    parsed = []
    for f in facts:
        category, content, tags = parse_fact_line("- " + f)
        parsed.append(Fact(content=content, category=category, tags=tags))
    append_entry(settings.paths.archive_dir, D(day), time, "sess0001", parsed, timeout=5)


def rules_runner(settings, follow_ups=None, **config):
    from suzent_cli.dream.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner

    return DreamRunner(settings, DreamConfig(**config), engine="rules", follow_ups=[] if follow_ups is None else follow_ups)


def backfill(settings, day: str, fact: str):
    """``suzent capture --date day --fact fact`` in-process (records the late line)."""
    from suzent_cli.capture import write_facts

    category, content, tags = parse_fact_line("- " + fact)
    return write_facts(settings, [Fact(content=content, category=category, tags=tags)], day=D(day), time="10:00",
                       refresh=False)


# --- 2. a backfill is folded exactly once, however it interleaves with a dream ---------------------------------
def test_a_backfill_landing_while_a_dream_reads_is_folded_exactly_once(home, monkeypatch):
    """A second backfill to a consolidated day lands after the dream read the late-line records and before it read
    that day's log. The dream must either fold it with its own record or not at all (it then waits for the next
    run) — never fold it under the first record and leave its own record for the next run to fold again."""
    from suzent_cli.dream import runner as runner_mod
    from suzent_cli.errors import LockTimeout
    from suzent_cli.state import read_late_lines, read_superseded

    s = settings_at(home)
    for day in ("2026-06-01", "2026-06-02", "2026-06-03"):
        log(s, day, f"[technical] Read about {day}")
    assert rules_runner(s).tick(force=True).watermark_after == D("2026-06-03")
    backfill(s, "2026-06-02", "[preference] Likes jazz")                       # record R1
    impatient = dataclasses.replace(s, lock_timeout=0)
    late_log, landed = s.paths.log_path(D("2026-06-02")), []
    real = runner_mod.read_text

    def read_text(path, *args, **kwargs):
        if Path(path) == late_log and not landed:
            landed.append("tried")
            try:  # a person's second backfill to the same day, at the worst moment
                backfill(impatient, "2026-06-02", "[preference] Likes green tea")      # record R2
                landed.append("during the dream")
            except LockTimeout:
                landed.append("blocked")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner_mod, "read_text", read_text)
    first = rules_runner(s).tick(force=True)
    monkeypatch.setattr(runner_mod, "read_text", real)
    assert first.outcome == "ingested", first.error
    if "blocked" in landed:  # the dream holds the capture out while it reads: the person's capture goes in after
        backfill(s, "2026-06-02", "[preference] Likes green tea")
    second = rules_runner(s).tick(force=True)
    assert second.outcome in ("ingested", "idle", "linted"), second.error
    page = (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert "Likes green tea (confirmed 1x" in page and "confirmed 2x" not in page, page
    assert not any("green tea" in line for line in read_superseded(s.paths.state_dir))  # its log row stays
    assert read_late_lines(s.paths.state_dir) == []
