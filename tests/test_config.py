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
    ("[paths]\nmemory_dir = 5", "memory_dir must be a str"),
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


def test_unknown_config_keys_block_every_command_but_capture(tmp_path):
    from conftest import invoke

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text('[dreams]\nmin_facts = 1\n[paths]\nvault = "v"\n')
    proc = invoke(home, "capture", "--fact", "[personal] Lives in Berlin")
    assert proc.returncode == 0 and "warning:" in proc.stderr and "'dreams'" in proc.stderr
    assert "Lives in Berlin" in next((home / "sandbox/shared/memory/archive").glob("*.md")).read_text()
    for args in (["paths"], ["status", "--no-index"]):
        proc = invoke(home, *args)
        assert proc.returncode == 2 and proc.stderr.startswith("Error: ") and "unknown key or table 'dreams'" in proc.stderr
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
