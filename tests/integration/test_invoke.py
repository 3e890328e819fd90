"""conftest.invoke runs a command in this process as conftest.run_cli runs it in a new one: same exit code, stdout and
stderr (text or bytes), and it leaves nothing behind. The comparison needs real processes, hence integration/."""

from __future__ import annotations

import os
import re
import sys

import pytest

from conftest import invoke, run_cli
from suzent_cli.cli import app as app_module

# (arguments, stdin, extra environment): each run in a fresh home by both, outputs compared.
CASES = [
    (("--help",), None, {}),
    (("init",), None, {}),
    (("capture", "--facts-from", "-", "--date", "2026-06-10"), b"[personal] Likes caf\xe9\x00 au lait\r\n", {}),
    (("capture", "--fact", "x", "--date", "2026-02-30"), None, {}),
    (("capture", "--fact", "bad \x01 byte", "--date", "2026-06-10"), None, {"NO_COLOR": None, "FORCE_COLOR": "1"}),
    (("config", "show"), None, {"SUZENT_LOCK_TIMEOUT": "7"}),
    (("recall", "anything", "--model", "hash"), None, {}),
    (("no-such-command",), None, {}),
]


def _same(text, home):
    """``text`` with the home path and measured durations made comparable."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return re.sub(r"\d+\.\d+s\b", "N.NNs", text.replace(str(home), "HOME"))


@pytest.mark.parametrize("args, stdin, env", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_invoke_gives_what_a_real_process_gives(tmp_path, args, stdin, env):
    real, here = tmp_path / "real", tmp_path / "here"
    proc = run_cli(real, *args, input=stdin, env_extra=env)
    got = invoke(here, *args, input=stdin, env_extra=env)
    assert got.returncode == proc.returncode, (got.stderr, proc.stderr)
    assert _same(got.stdout, here) == _same(proc.stdout, real)
    assert _same(got.stderr, here) == _same(proc.stderr, real)
    assert type(got.stdout) is type(proc.stdout) and type(got.stderr) is type(proc.stderr)


def test_the_callers_environment_does_not_reach_the_command(home, monkeypatch):
    monkeypatch.setenv("SUZENT_TODAY", "not-a-date")  # set after conftest's own clean-up: invoke drops it again
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-secret")
    r = invoke(home, "config", "show", "--json")
    assert r.returncode == 0, r.stderr
    assert "not-a-date" not in r.stdout and "sk-test-secret" not in r.stdout


def test_nothing_leaks_out_of_a_call(home, monkeypatch):
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, os._exit)

    def leaky(**_kw):
        os.environ["LEAKED"] = "1"
        os.environ.pop("HOME")
        os.chdir("/")
        print("to stdout")
        os.write(2, b"straight to fd 2\n")
        raise SystemExit(3)

    monkeypatch.setattr(app_module, "app", leaky)
    r = invoke(home, "anything")
    assert (r.returncode, r.stdout, r.stderr) == (3, "to stdout\n", "straight to fd 2\n")
    assert (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, os._exit) == before


def test_a_hard_exit_ends_the_command_not_the_tests(home, monkeypatch):
    monkeypatch.setattr(app_module, "app", lambda **_kw: os._exit(7))
    assert invoke(home, "anything").returncode == 7


def test_an_uncaught_exception_is_exit_1_with_its_traceback(home, monkeypatch):
    def boom(**_kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(app_module, "app", boom)
    r = invoke(home, "anything")
    assert r.returncode == 1 and "Traceback" in r.stderr and "RuntimeError: boom" in r.stderr
