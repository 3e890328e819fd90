"""`NO_COLOR` on a real terminal: each command runs as a process whose stdout and stderr are a pseudo-terminal, so
rich sees a terminal and colours unless told not to. A real process, since the terminal is the point."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from test_exit_codes import ENV, build_small_home

from conftest import REPO, cli_env, drain_pty


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    """The home test_exit_codes runs every command on."""
    return build_small_home(tmp_path_factory.mktemp("terminal") / "home")


_COLOUR = re.compile(r"\x1b\[([0-9;]*)m")


def _colour_params(text: str) -> set[str]:
    """SGR parameters that set a colour (foreground/background, 8/16/256/truecolour)."""
    found = set()
    for m in _COLOUR.finditer(text):
        params = m.group(1).split(";")
        i = 0
        while i < len(params):
            p = params[i]
            if p in ("38", "48"):
                found.add(p)
                i += 3 if params[i + 1:i + 2] == ["5"] else 5
                continue
            if p.isdigit() and (30 <= int(p) <= 37 or 40 <= int(p) <= 47 or 90 <= int(p) <= 97 or 100 <= int(p) <= 107):
                found.add(p)
            i += 1
    return found


def _on_a_terminal(home, args, env_extra):
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in (cli_env(home) | env_extra | {"TERM": "xterm-256color"}).items() if v is not None}
    proc = subprocess.Popen([sys.executable, "-m", "suzent_cli", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    output = drain_pty(master)
    return proc.wait(timeout=120), output.decode("utf-8", "replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("args", [("config", "show"), ("status",), ("recall", "tea"), ("index", "--full"),
                                  ("capture", "--fact", "bad \x01 byte")])
def test_no_color_is_honoured_on_a_terminal(small_home, args):
    code, text = _on_a_terminal(small_home, args, ENV | {"NO_COLOR": "1"})
    assert code == 0, text
    assert not _colour_params(text), f"colour escapes with NO_COLOR: {text!r}"
    if args == ("config", "show"):  # and it is the rich table there
        assert "┃" in text or "│" in text
    if args[0] in ("status", "capture"):  # the check has teeth: the same run without NO_COLOR is coloured
        code, text = _on_a_terminal(small_home, args, ENV | {"NO_COLOR": None})
        assert code == 0 and _colour_params(text), text
