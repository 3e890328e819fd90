"""The server starts itself (suzent_cli/server/autostart.py): on or off and why, the setting as the configuration
resolves it, the back-off, and what it imports. The real processes (a hook starting a server, a stale server, a
crash loop, two agents at once, the idle exit, `suzent serve stop`): tests/integration/test_autostart_process.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, cli_env
from suzent_cli.server import autostart, paths

ON = {"SUZENT_SERVE_AUTOSTART": "1", "SUZENT_EMBEDDER": "hash:64", "PYTHONPATH": str(REPO)}


# --- on or off ------------------------------------------------------------------------------------------------

def test_its_copies_of_the_settings_table_match():
    from suzent_cli.config import BOOL_WORDS, setting

    assert setting("serve.autostart").env == (autostart.ENV,)
    assert autostart.BOOL_WORDS == BOOL_WORDS


@pytest.mark.parametrize("env, file", [
    ({}, None), ({}, "[serve]\nautostart = false\n"), ({}, "[serve]\nautostart = true\n"),
    ({"SUZENT_SERVE_AUTOSTART": "0"}, "[serve]\nautostart = true\n"), ({"SUZENT_SERVE_AUTOSTART": "yes"}, None),
    ({"SUZENT_SERVE_AUTOSTART": " Off "}, None), ({"SUZENT_SERVE_AUTOSTART": ""}, "[serve]\nautostart = false\n"),
    ({}, "[serve]\nport = 0\n"), ({}, "# autostart mentioned in a comment only\n"),
])
def test_the_setting_is_the_one_the_config_resolves(tmp_path, env, file):
    from suzent_cli.config import resolve_settings

    home = tmp_path / "h"
    home.mkdir()
    if file is not None:
        (home / "config.toml").write_text(file)
    assert autostart.setting(home, env)[0] == resolve_settings(home=home, env=env).serve_autostart


@pytest.mark.parametrize("env, file, on, says", [
    ({}, None, True, "default"),
    ({"CI": "true"}, None, False, "CI=true is set"),
    ({"CI": "0"}, None, True, "default"),
    ({"CI": "false"}, None, True, "default"),
    ({"CI": "1", "SUZENT_SERVE_AUTOSTART": "1"}, None, True, "SUZENT_SERVE_AUTOSTART=1"),
    ({"CI": "1"}, "[serve]\nautostart = true\n", True, "serve.autostart = true"),
    ({"SUZENT_SERVE_AUTOSTART": "0"}, None, False, "SUZENT_SERVE_AUTOSTART=0"),
    ({}, "[serve]\nautostart = false\n", False, "serve.autostart = false"),
    ({"SUZENT_SERVE_AUTOSTART": "maybe"}, None, False, "is not true or false"),
    ({}, "[serve]\nautostart = \"yes\"\n", False, "must be true or false"),
    ({}, "[serve\nautostart = true\n", False, "not valid TOML"),
])
def test_on_or_off_and_why(tmp_path, env, file, on, says):
    home = tmp_path / "h"
    home.mkdir()
    if file is not None:
        (home / "config.toml").write_text(file)
    assert autostart.enabled(home, env)[0] is on
    assert says in autostart.enabled(home, env)[1]


@pytest.mark.parametrize("env, file", [
    ({"SUZENT_SERVE_AUTOSTART": "0"}, None), ({"CI": "true"}, None), ({}, "[serve]\nautostart = false\n"),
])
def test_off_means_no_spawn(tmp_path, env, file):
    home = tmp_path / "h"
    home.mkdir()
    if file is not None:
        (home / "config.toml").write_text(file)
    said = autostart.ensure(home, why="test", env={**cli_env(home, CI=None), **env})
    assert said.startswith("off: ")
    assert not paths.run_dir(home).exists()  # nothing forked, nothing recorded


def test_a_home_that_does_not_exist_is_not_made(tmp_path):
    home = tmp_path / "nowhere"
    assert autostart.ensure(home, why="test", env=cli_env(home, CI=None, **ON)).startswith("off: no home")
    assert not home.exists()


def test_the_back_off_doubles_up_to_an_hour():
    assert [autostart.backoff(n) for n in range(0, 5)] == [0, 30, 60, 120, 240]
    assert autostart.backoff(50) == autostart.BACKOFF_CAP == 3600


def test_ensure_never_raises(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "server").write_text("a file where the run folder goes")
    assert autostart.ensure(home, why="test", env=cli_env(home, CI=None, **ON)).startswith("spawn failed: ")


def test_it_imports_nothing_heavy():
    heavy = ("typer", "rich", "pydantic", "mcp", "starlette", "uvicorn", "lancedb", "pyarrow", "torch",
             "sentence_transformers", "anthropic", "numpy", "filelock", "tomllib")
    code = ("import sys, suzent_cli.server.autostart\n"
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})\n"
            "own = sorted(m for m in sys.modules if m.startswith('suzent_cli.') and m not in "
            "('suzent_cli.server', 'suzent_cli.server.paths', 'suzent_cli.server.autostart'))\n"
            "assert not bad and not own, (bad, own)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_server_killed_after_its_start_is_restarted_at_once_a_second_death_backs_off():
    now = 1_000_000.0
    died_starting = {"pid": 7, "at": now, "auto": True, "failures": 0, "listening": now + 2, "ready": None,
                     "ended": None, "exit": None}
    assert autostart.next_start(died_starting) == (1, now + 30)  # crashed while starting (its model load): back off
    killed = {**died_starting, "ready": now + 5}
    assert autostart.next_start(killed) == (1, now)  # had finished starting, then SIGKILLed: at once
    again = {**killed, "failures": 1}  # the restarted one killed too, before a minute of serving
    assert autostart.next_start(again) == (2, now + 30)
    clean = {**killed, "ended": now + 9, "exit": 143}
    assert autostart.next_start(clean) == (0, now)


def test_describe_shows_a_dead_servers_failure_and_the_back_off(tmp_path):
    import time

    home = tmp_path / "h"
    home.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    paths.run_dir(home).mkdir(mode=0o700)
    now = time.time()
    autostart._write_record(home, {"pid": dead.pid, "at": now, "why": "hook recall", "auto": True, "failures": 0,
                                   "listening": None, "ready": None, "ended": now, "exit": 2,
                                   "error": "serve.port must be between 0 and 65535, got 99999"})
    shown = autostart.describe(home, {})
    failed = shown["failed"]
    assert failed["pid"] == dead.pid and failed["exit"] == 2 and failed["failures"] == 1
    assert failed["error"].startswith("serve.port must be") and failed["log"] == shown["log"]
    assert failed["retry_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 30))

    from suzent_cli.cli.render import server_rows

    rows = dict(server_rows({"running": False, "stale": False, "autostart": shown}))
    assert rows["last start"] == (f"failed: pid {dead.pid} exited 2: serve.port must be between 0 and 65535, got "
                                  "99999; 1 failed start in a row")
    assert rows["next start"].startswith(f"not before {failed['retry_at']} (back-off); see {shown['log']}")

    autostart._write_record(home, {**autostart.read_record(home), "exit": 0, "error": None})
    assert autostart.describe(home, {})["failed"] is None  # a clean stop is no failure
