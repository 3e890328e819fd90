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
