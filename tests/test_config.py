"""Settings resolution: precedence, compat variables, and config errors that are one line, never a traceback."""

from __future__ import annotations

import pytest

from conftest import invoke
from suzent_cli.config import context_window_of, resolve_settings
from suzent_cli.errors import ConfigInvalid


def test_precedence_flag_env_file_default(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text('[paths]\nvault_dir = "vault-from-file"\nindex_dir = "/abs/index"\n'
                                      '[index]\nembedder = "hash:32"\n')
    s = resolve_settings(home=home, env={"SUZENT_VAULT_DIR": "vault-from-env"})
    assert s.paths.vault_dir == home / "vault-from-env" and s.origins["vault_dir"] == "env:SUZENT_VAULT_DIR"
    assert str(s.paths.index_dir) == "/abs/index" and s.origins["index_dir"] == "file"
    assert s.paths.memory_dir == home / "sandbox" / "shared" / "memory" and s.origins["memory_dir"] == "default"
    assert s.embedder == "hash:32"
    s = resolve_settings(home=home, vault_dir="from-flag", env={"SUZENT_VAULT_DIR": "x"})
    assert s.paths.vault_dir == home / "from-flag" and s.origins["vault_dir"] == "flag"


def test_home_variables(tmp_path):
    assert resolve_settings(env={"SUZENT_DATA_DIR": str(tmp_path / "d")}).paths.home == tmp_path / "d"
    both = resolve_settings(env={"SUZENT_DATA_DIR": str(tmp_path / "d"), "SUZENT_HOME": str(tmp_path / "h")})
    assert both.paths.home == tmp_path / "h"
    assert resolve_settings(home="", env={"SUZENT_HOME": str(tmp_path / "h")}).paths.home == tmp_path / "h"
    assert resolve_settings(env={"HOME": "/x"}, home=None).paths.home.name == ".suzent"


def test_today_override_is_strict(tmp_path):
    assert str(resolve_settings(home=tmp_path, today="2026-02-28", env={}).today) == "2026-02-28"
    assert str(resolve_settings(home=tmp_path, env={"SUZENT_TODAY": "2026-03-01"}).today) == "2026-03-01"
    for bad in ("20260105", "2026-02-30", "yesterday"):
        with pytest.raises(ConfigInvalid, match="YYYY-MM-DD"):
            resolve_settings(home=tmp_path, today=bad, env={})
    with pytest.raises(ConfigInvalid, match="SUZENT_TODAY"):
        resolve_settings(home=tmp_path, env={"SUZENT_TODAY": "soon"})


@pytest.mark.parametrize("toml, message", [
    ('paths = "x"', r"\[paths\] must be a table"),
    ("index = 3", r"\[index\] must be a table"),
    ("[paths]\nmemory_dir = 5", "memory_dir must be a string"),
    ("lock_timeout = -1", "lock_timeout"),
    ("lock_timeout = true", "lock_timeout"),
    ("not toml at all [", "not valid TOML"),
])
def test_bad_config_file_is_one_clear_error(tmp_path, toml, message):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigInvalid, match=message):
        resolve_settings(home=tmp_path, env={})


def test_home_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigInvalid, match="not a directory"):
        resolve_settings(home=tmp_path / "f", env={})


def test_stage_settings_are_validated_on_use_so_a_capture_is_never_blocked(home):
    home.mkdir()
    (home / "config.toml").write_text('[capture]\nextractor = "bogus"\n[index]\ncontext_window = 99\n')
    r = invoke(home, "capture", "--fact", "still written")
    assert r.returncode == 0, r.stderr
    s = resolve_settings(home=home, env={})
    with pytest.raises(ConfigInvalid, match="context_window"):
        context_window_of(s)
    r = invoke(home, "capture", "--turn-from", "-", input="I live in Oslo.")
    assert r.returncode == 2 and "unknown extractor" in r.stderr and "Traceback" not in r.stderr
    r = invoke(home, "index", "--model", "hash")
    assert r.returncode == 2 and "context_window" in r.stderr


def test_unknown_config_keys_block_every_command_but_capture_and_status(tmp_path):
    """A broken config.toml stops every command that would act on it; capture (no fact is lost over another
    stage's setting) and status (a person must see the home, and the server running on it) warn instead."""
    from conftest import invoke

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text('[dreams]\nmin_facts = 1\n[paths]\nvault = "v"\n')
    proc = invoke(home, "capture", "--fact", "[personal] Lives in Berlin")
    assert proc.returncode == 0 and "warning:" in proc.stderr and "'dreams'" in proc.stderr
    assert "Lives in Berlin" in next((home / "sandbox/shared/memory/archive").glob("*.md")).read_text()
    proc = invoke(home, "paths")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: ") and "unknown key or table 'dreams'" in proc.stderr
    proc = invoke(home, "status", "--no-index")
    assert proc.returncode == 0 and proc.stderr.startswith("warning: ") and "unknown key or table 'dreams'" in proc.stderr
    assert proc.stdout.startswith("today ")
    (home / "config.toml").write_text('today = "2026-02-30"\n')
    proc = invoke(home, "paths")
    assert proc.returncode == 2 and "config.toml: today must be a date" in proc.stderr


def test_a_typo_in_the_dream_table_is_caught_like_any_other(tmp_path):
    from conftest import invoke

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text("[dream]\nmin_hour = 5\n")
    captured = invoke(home, "capture", "--fact", "[x] still written")
    assert captured.returncode == 0 and "unknown key dream.min_hour" in captured.stderr
    assert str(home / "config.toml") in captured.stderr
    refused = invoke(home, "paths")
    assert refused.returncode == 2 and "dream.min_hour" in refused.stderr


@pytest.mark.parametrize("kind", ["directory", "dangling-link"])
def test_a_config_toml_that_is_not_a_file_is_an_error_not_missing(tmp_path, kind):
    """A config.toml that is a directory (or a link to nothing) is not "no config": its settings would silently
    not apply. Every resolve refuses with one line naming the path (issue 13 reliability corpus)."""
    home = tmp_path / "h"
    home.mkdir()
    cfg = home / "config.toml"
    if kind == "directory":
        cfg.mkdir()
    else:
        cfg.symlink_to(tmp_path / "nowhere.toml")
    with pytest.raises(ConfigInvalid, match="not a regular file"):
        resolve_settings(home=home, env={})
    proc = invoke(home, "config", "show")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "config.toml" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- the one settings table --------------------------------------------------------------------------------------

def test_the_dataclass_defaults_are_the_tables():
    """Settings, Paths and DreamConfig take their defaults from SETTINGS (context_window was 0 in Settings and 2 in
    the resolver once): a setting resolved from nothing equals its row's default, and so does the field."""
    import dataclasses

    from suzent_cli.config import DREAM_ROWS, SETTINGS, DreamConfig, Settings, setting

    assert [r.name for r in DREAM_ROWS] == [f.name for f in dataclasses.fields(DreamConfig)]
    for row in DREAM_ROWS:
        assert getattr(DreamConfig(), row.name) == row.default, row.key
    field_defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    for row in SETTINGS:
        if row.kind != "path" and row.check != "dream":
            assert field_defaults[row.field] == row.default, row.key
    assert Settings.__dataclass_fields__["context_window"].default == setting("index.context_window").default == 2
    s = resolve_settings(home="/nonexistent-suzent-home", env={})
    assert (s.context_window, s.lock_timeout, s.extractor, s.embedder) == (2, 30.0, "auto", "all-MiniLM-L6-v2")


def test_the_root_options_are_the_tables_root_flags():
    import typer.main

    from suzent_cli.cli.app import app
    from suzent_cli.config import OLD_NAMES, SETTINGS

    not_settings = {"--version", "--help", "-h", "--install-completion", "--show-completion"}
    declared = {opt for p in typer.main.get_command(app).params for opt in p.opts} - not_settings
    table = {f for row in SETTINGS for f in row.flags if f.startswith("--")} | {old[2] for old in OLD_NAMES.values()}
    assert declared == table


def test_the_config_module_imports_no_stage():
    """config is the base layer: it imported dream.config (and dream.config imported it) before the table."""
    import ast

    from conftest import REPO

    tree = ast.parse((REPO / "suzent_cli" / "config.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m for m in imported if m.startswith("suzent_cli")} == {"suzent_cli.errors"}
    assert not (REPO / "suzent_cli" / "dream" / "config.py").exists()


# --- one clock -------------------------------------------------------------------------------------------------

def test_now_takes_a_date_or_an_instant_and_today_is_its_date(tmp_path):
    s = resolve_settings(home=tmp_path, now="2026-02-28", env={})
    assert s.now.isoformat() == "2026-02-28T00:00:00+00:00" and str(s.today) == "2026-02-28"
    s = resolve_settings(home=tmp_path, env={"SUZENT_NOW": "2026-03-01T23:30+02:00"})
    assert s.now.isoformat() == "2026-03-01T21:30:00+00:00" and str(s.today) == "2026-03-01"
    assert s.clock == s.now
    for bad in ("20260105", "2026-02-30", "yesterday", "2026-02-28T25:00"):
        with pytest.raises(ConfigInvalid, match="--now must be an ISO time YYYY-MM-DD"):
            resolve_settings(home=tmp_path, now=bad, env={})


def test_today_is_the_old_name_of_now_and_old_configs_keep_working(tmp_path):
    """``today`` (flag, variable, config key) fixed the date only; it is read as ``now`` at that date's 00:00, so
    an old config or script keeps its day; ``now`` wins when both are given."""
    (tmp_path / "config.toml").write_text('today = "2026-05-04"\n')
    s = resolve_settings(home=tmp_path, env={})
    assert (str(s.today), s.now.isoformat(), s.origins["now"]) == ("2026-05-04", "2026-05-04T00:00:00+00:00", "file")
    assert s.config_errors == ()
    s = resolve_settings(home=tmp_path, env={"SUZENT_TODAY": "2026-05-05"})
    assert str(s.today) == "2026-05-05" and s.origins["now"] == "env:SUZENT_TODAY"
    s = resolve_settings(home=tmp_path, today="2026-05-06", env={"SUZENT_NOW": "2026-01-01T00:00"})
    assert str(s.today) == "2026-05-06" and s.origins["now"] == "flag"
    s = resolve_settings(home=tmp_path, today="2026-05-06", now="2026-05-07T08:00", env={})
    assert str(s.today) == "2026-05-07"  # both given: now wins
    with pytest.raises(ConfigInvalid, match="--today must be a date YYYY-MM-DD"):
        resolve_settings(home=tmp_path, today="2026-05-06T08:00", env={})  # the old name stays a date only


def test_the_loop_keeps_a_fixed_clock_and_follows_a_real_one(tmp_path):
    """run.refresh_today: a clock fixed by now (or its old name today) never moves; the real one does."""
    import dataclasses
    import datetime as dt

    from suzent_cli.run import refresh_today

    for fixed in ({"SUZENT_NOW": "2026-05-04T12:00"}, {"SUZENT_TODAY": "2026-05-04"}):
        s = resolve_settings(home=tmp_path, env=fixed)
        assert refresh_today(s) is s
    real = dataclasses.replace(resolve_settings(home=tmp_path, env={}), today=dt.date(2000, 1, 1))
    assert refresh_today(real).today == dt.datetime.now(dt.UTC).date()


# --- engine names ----------------------------------------------------------------------------------------------

def test_offline_is_the_one_name_and_rules_its_accepted_alias(tmp_path):
    from suzent_cli.capture.extract import resolve_extractor_name
    from suzent_cli.config import DreamConfig, canonical_engine, dream_config

    assert [canonical_engine(n) for n in ("auto", "OFFLINE ", "rules", "claude", "gpt")] == \
        ["auto", "offline", "offline", "claude", None]
    s = resolve_settings(home=tmp_path, env={})
    assert resolve_extractor_name(s, "rules") == resolve_extractor_name(s, "offline") == "offline"
    assert DreamConfig(engine="rules").engine_for(s) == DreamConfig().engine_for(s) == "offline"
    import dataclasses

    assert dream_config(dataclasses.replace(s, dream={"engine": "rules"})).engine == "offline"
    assert dream_config(s, engine="rules").engine == "offline"
    with pytest.raises(ConfigInvalid, match="--engine must be one of auto, offline, claude"):
        dream_config(s, engine="gpt")


def test_promote_takes_rules_as_the_old_name_of_offline(home, cli):
    """`promote --engine rules` was an error while `dream --engine rules` worked."""
    import json

    for name in ("rules", "offline"):
        r = cli("promote", "--engine", name, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["engine"] == "offline"
    r = cli("promote", "--engine", "gpt")
    assert r.returncode == 2 and "promote engine must be one of auto, offline, claude" in r.stderr
