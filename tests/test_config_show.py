"""`suzent config show`: every effective setting with its origin; docs/configuration.md documents every key and is
generated from the settings table; init's template agrees with both."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib

import pytest

from conftest import REPO, invoke, load_script
from suzent_cli.config import (
    DEFAULT_CLAUDE_MODEL,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_EMBEDDER,
    KNOWN_KEYS,
    OLD_NAMES,
    DreamConfig,
    effective_config,
    resolve_settings,
)
from suzent_cli.init import CONFIG_SEED

# Keys whose default is not a literal (derived from the clock, or unset): the docs say it in words, the template
# shows an example value.
NO_LITERAL_DEFAULT = {"now", "claude.api_key", "claude.base_url", "claude.timeout", "claude.max_retries",
                      "serve.autostart", "sync.remote"}
OLD_KEYS = {old for old, _, _ in OLD_NAMES.values()}  # still read, documented as old names, never shown


def config_keys() -> set[str]:
    """Every key config.toml may hold, spelled ``key`` or ``table.key``: KNOWN_KEYS plus DreamConfig's fields
    (less the old names)."""
    keys = {k for k in KNOWN_KEYS[None] if k not in KNOWN_KEYS and k != "dream" and k not in OLD_KEYS}
    keys |= {f"{table}.{key}" for table, names in KNOWN_KEYS.items() if table is not None for key in names}
    keys |= {f"dream.{f.name}" for f in dataclasses.fields(DreamConfig)}
    return keys


def code_defaults() -> dict[str, object]:
    d = DreamConfig()
    return {"lock_timeout": 30.0, "user_id": "default-user", "paths.memory_dir": "sandbox/shared/memory",
            "paths.vault_dir": "notebook", "paths.index_dir": "memory", "index.embedder": DEFAULT_EMBEDDER,
            "index.context_window": DEFAULT_CONTEXT_WINDOW, "capture.extractor": "auto",
            "claude.model": DEFAULT_CLAUDE_MODEL, "serve.port": 8767, "recall.rerank": 0, "recall.subject_boost": 0.4, "recall.when_boost": 0.3, "recall.now_ranking": True, "recall.now_slots": True,
            "capture.max_turn_chars": 200_000, "serve.idle_minutes": 60.0, "capture.scope": "auto", "sync.dream": "auto"} | {f"dream.{f.name}": getattr(d, f.name) for f in dataclasses.fields(d)}


def docs_config_table() -> dict[str, dict[str, str]]:
    """docs/configuration.md's table: ``{key: {"type", "default", "env", "meaning"}}``."""
    section = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([a-z_.]+)` \|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            assert len(cells) == 4, line
            rows[m.group(1)] = dict(zip(("type", "default", "env", "meaning"), cells, strict=False))
    return rows


def _gen_docs():
    return load_script("scripts/gen_docs.py", "gen_docs")


def test_docs_configuration_is_generated_from_the_table():
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert text == _gen_docs().configuration_md(), "docs/configuration.md is stale: run `make docs`"


def test_docs_document_every_config_key_with_its_default():
    rows = docs_config_table()
    assert set(rows) == config_keys(), "docs/configuration.md's table and the keys config.toml may hold differ"
    defaults = code_defaults()
    assert set(defaults) | NO_LITERAL_DEFAULT == config_keys()
    for key, row in rows.items():
        assert row["type"] and row["meaning"], key
        if key in NO_LITERAL_DEFAULT:
            assert not row["default"].startswith("`"), key
            continue
        literal = re.fullmatch(r"`(.+)`", row["default"])
        assert literal, f"{key}: default must be a TOML literal in backticks, got {row['default']!r}"
        assert tomllib.loads(f"v = {literal.group(1)}")["v"] == defaults[key], key


def test_docs_name_the_environment_variable_of_every_setting_that_has_one():
    rows = docs_config_table()
    env = {"now": "SUZENT_NOW", "lock_timeout": "SUZENT_LOCK_TIMEOUT",
           "user_id": "SUZENT_USER_ID", "paths.memory_dir": "SUZENT_MEMORY_DIR", "paths.vault_dir": "SUZENT_VAULT_DIR",
           "paths.index_dir": "SUZENT_INDEX_DIR", "index.embedder": "SUZENT_EMBEDDER",
           "index.context_window": "SUZENT_CONTEXT_WINDOW", "capture.extractor": "SUZENT_EXTRACTOR",
           "claude.model": "SUZENT_CLAUDE_MODEL", "claude.api_key": "ANTHROPIC_API_KEY",
           "claude.base_url": "ANTHROPIC_BASE_URL", "claude.timeout": "SUZENT_CLAUDE_TIMEOUT",
           "claude.max_retries": "SUZENT_CLAUDE_MAX_RETRIES", "serve.autostart": "SUZENT_SERVE_AUTOSTART",
           "serve.idle_minutes": "SUZENT_SERVE_IDLE_MINUTES"}
    for key, var in env.items():
        assert f"`{var}`" in rows[key]["env"], key
        s = resolve_settings(home="/nonexistent-suzent-home", env={var: "2026-01-02T03:04" if key == "now" else "1"})
        origin = effective_config(s)["settings"][key]["origin"]
        assert origin == f"env:{var}", (key, origin)
    # today's old variable is documented as the old name of now, and read as now (a date)
    assert "`SUZENT_TODAY`" in rows["now"]["env"] and "`today`" in rows["now"]["env"]
    s = resolve_settings(home="/nonexistent-suzent-home", env={"SUZENT_TODAY": "2026-01-02"})
    assert effective_config(s)["settings"]["now"] == {"value": "2026-01-02T00:00:00+00:00", "origin": "env:SUZENT_TODAY"}


def uncommented_template() -> str:
    """init's config.toml with every ``# key = value`` / ``# [table]`` line uncommented (the explanations kept)."""
    lines = []
    for line in CONFIG_SEED.splitlines():
        m = re.match(r"^# (\[[a-z]+\](?:\s+#.*)?|[a-z_]+ = .*)$", line)
        lines.append(m.group(1) if m else line)
    return "\n".join(lines) + "\n"


def test_init_template_holds_every_key_with_the_documented_default():
    doc = tomllib.loads(uncommented_template())
    flat = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            flat |= {f"{key}.{k}": v for k, v in value.items()}
        else:
            flat[key] = value
    assert set(flat) == config_keys()
    for key, value in code_defaults().items():
        assert flat[key] == value, key


def test_uncommented_template_is_a_valid_config_of_defaults(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    kept = [line for line in uncommented_template().splitlines()
            if not re.match(r"^(today|now|api_key|base_url) = ", line)]
    (home / "config.toml").write_text("\n".join(kept) + "\n")
    data = effective_config(resolve_settings(home=home, env={}))
    assert data["problems"] == [] and data["exists"]
    cfg = str(home / "config.toml")
    for key, value in code_defaults().items():
        item = data["settings"][key]
        assert item["origin"] == f"file:{cfg}", key
        expected = str(home / value) if key.startswith("paths.") else value
        assert item["value"] == expected, key


def test_config_show_on_an_empty_home_is_all_defaults(home):
    r = invoke(home, "--today", "2026-06-10", "config", "show", "--json", env_extra={"SUZENT_SCOPE": None})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) == {"config_file", "exists", "settings", "problems"}
    assert data["config_file"] == str(home / "config.toml") and data["exists"] is False and data["problems"] == []
    settings = data["settings"]
    assert set(settings) == config_keys() | {"home"}
    assert all(set(item) == {"value", "origin"} for item in settings.values())
    assert settings["home"] == {"value": str(home), "origin": "env:SUZENT_HOME"}
    assert settings["now"] == {"value": "2026-06-10T00:00:00+00:00", "origin": "flag"}  # --today: now's old name
    assert settings["claude.api_key"] == {"value": None, "origin": "default"}
    for key, value in code_defaults().items():
        assert settings[key]["origin"] == "default", key
        assert settings[key]["value"] == (str(home / value) if key.startswith("paths.") else value), key


def test_every_origin_default_file_env_flag(home):
    home.mkdir()
    (home / "config.toml").write_text('lock_timeout = 5\nuser_id = "ana"\n[paths]\nvault_dir = "vault-file"\n'
                                      '[index]\nembedder = "hash:32"\ncontext_window = 1\n'
                                      '[dream]\nmin_facts = 3\nengine = "rules"\nlint_enabled = false\n')
    r = invoke(home, "--vault-dir", "vault-flag", "config", "show", "--json",
                env_extra={"SUZENT_EMBEDDER": "hash:16", "SUZENT_LOCK_TIMEOUT": ""})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    s, cfg = data["settings"], f"file:{home / 'config.toml'}"
    assert data["exists"] is True
    assert s["paths.vault_dir"] == {"value": str(home / "vault-flag"), "origin": "flag"}
    assert s["index.embedder"] == {"value": "hash:16", "origin": "env:SUZENT_EMBEDDER"}
    assert s["lock_timeout"] == {"value": 5.0, "origin": cfg}  # an empty variable counts as unset
    assert s["user_id"] == {"value": "ana", "origin": cfg}
    assert s["index.context_window"] == {"value": 1, "origin": cfg}
    assert s["dream.min_facts"] == {"value": 3, "origin": cfg}
    assert s["dream.engine"] == {"value": "offline", "origin": cfg}  # "rules": the old name of offline
    assert s["dream.lint_enabled"] == {"value": False, "origin": cfg}
    assert s["dream.max_days"] == {"value": 14, "origin": "default"}
    assert s["paths.memory_dir"]["origin"] == "default"


def test_the_api_key_is_never_printed(home):
    home.mkdir()
    (home / "config.toml").write_text('[claude]\napi_key = "sk-from-file-123"\n')
    r = invoke(home, "config", "show", "--json")
    data = json.loads(r.stdout)
    assert data["settings"]["claude.api_key"] == {"value": "set", "origin": f"file:{home / 'config.toml'}"}
    secret = "sk-ant-very-secret-456"
    extra = {"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": "https://me:pw-789@proxy.example:8443/v1"}
    for args in (("config", "show", "--json"), ("config", "show")):
        r = invoke(home, *args, env_extra=extra)
        assert r.returncode == 0, r.stderr
        for text in (r.stdout, r.stderr):
            assert secret not in text and "sk-from-file" not in text and "pw-789" not in text
    data = json.loads(invoke(home, "config", "show", "--json", env_extra=extra).stdout)
    assert data["settings"]["claude.api_key"] == {"value": "set", "origin": "env:ANTHROPIC_API_KEY"}
    assert data["settings"]["claude.base_url"]["value"] == "https://***@proxy.example:8443/v1"


def test_piped_output_is_toml_like_lines_with_their_origin(home):
    home.mkdir()
    (home / "config.toml").write_text('[dream]\nmin_facts = 3\n')
    r = invoke(home, "config", "show")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout
    data = json.loads(invoke(home, "config", "show", "--json").stdout)
    lines = r.stdout.splitlines()
    assert lines[0] == f"# config file: {home / 'config.toml'} (exists)"
    shown = {}
    for line in lines[1:]:
        m = re.match(r"^(# )?([a-z_.]+) = (.+?)  # (\S+)$", line)
        assert m, line
        assert m.group(4) == data["settings"][m.group(2)]["origin"]
        shown[m.group(2)] = m.group(1)
    assert set(shown) == set(data["settings"])
    assert shown["now"] and shown["claude.api_key"] and not shown["dream.min_facts"]  # unset / secret: comments
    parsed = tomllib.loads(r.stdout)  # the value lines are TOML (dotted keys)
    assert parsed["dream"]["min_facts"] == 3 and parsed["index"]["embedder"] == DEFAULT_EMBEDDER
    assert parsed["home"] == str(home) and "now" not in parsed and "api_key" not in parsed.get("claude", {})


@pytest.mark.parametrize("toml, message", [
    ('[dream]\nmax_days = 0\nengine = "bogus"\n', "dream.max_days must be between 1 and 100000"),
    ('[index]\ncontext_window = 99\n', "index.context_window must be between 0 and 8"),
    ('[capture]\nextractor = "bogus"\n', "capture.extractor must be one of auto, offline, claude"),
])
def test_a_value_the_stage_would_refuse_is_shown_then_exit_2(home, toml, message):
    home.mkdir()
    (home / "config.toml").write_text(toml)
    r = invoke(home, "config", "show", "--json")
    assert r.returncode == 2
    data = json.loads(r.stdout)
    assert message in data["problems"][0]
    assert r.stderr.startswith("Error: ") and message in r.stderr and "Traceback" not in r.stderr
    if "bogus" in toml and "dream" in toml:
        assert len(data["problems"]) == 2 and data["settings"]["dream.engine"]["value"] == "bogus"
        assert data["settings"]["dream.min_facts"] == {"value": 20, "origin": "default"}


def test_config_path(home):
    r = invoke(home, "config", "path")
    assert r.returncode == 0 and r.stdout == f"{home / 'config.toml'}\n"
    r = invoke(home, "config", "path", "--json")
    assert json.loads(r.stdout) == {"config_file": str(home / "config.toml"), "exists": False}
    invoke(home, "init")
    assert json.loads(invoke(home, "config", "path", "--json").stdout)["exists"] is True


def test_init_writes_the_template_and_it_changes_nothing(home):
    r = invoke(home, "init")
    assert r.returncode == 0, r.stderr
    assert (home / "config.toml").read_text() == CONFIG_SEED
    data = json.loads(invoke(home, "config", "show", "--json").stdout)
    assert data["exists"] is True and data["problems"] == []
    assert all(item["origin"] in ("default", "env:SUZENT_HOME", "env:SUZENT_SERVE_AUTOSTART",
                                  "env:SUZENT_SCOPE")  # conftest's
               for item in data["settings"].values())
