"""Docs that cannot drift: generated completions, man pages and docs/cli.md match the app; every command has an
example."""

from __future__ import annotations

import importlib.util

import pytest
import typer.main

from conftest import REPO
from suzent_cli.cli.app import app


def _gen():
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_completions_and_man_pages_are_fresh(tmp_path):
    generated = _gen().generate(tmp_path)
    assert {"completions/suzent.bash", "completions/_suzent", "completions/suzent.fish", "man/suzent.1",
            "docs/cli.md"} <= set(generated)
    stale = [rel for rel, text in generated.items()
             if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != text]
    assert not stale, f"run `make docs`: stale {stale}"
    orphans = sorted(f"man/{p.name}" for p in (REPO / "man").glob("*.1") if f"man/{p.name}" not in generated)
    assert not orphans, f"man pages of commands that no longer exist: {orphans}"
    pages = {rel for rel in generated if rel.startswith("man/")}
    for path, _ in _walk(typer.main.get_command(app)):  # one page per command, subcommands of a group included
        assert f"man/suzent-{'-'.join(path)}.1" in pages, path


def _walk(command, path=()):
    for name, sub in getattr(command, "commands", {}).items():
        yield (*path, name), sub
        yield from _walk(sub, (*path, name))


@pytest.mark.parametrize("name", sorted(typer.main.get_command(app).commands))
def test_every_command_has_help_with_an_example(name):
    command = typer.main.get_command(app).commands[name]
    assert command.help and "Example:" in command.help, name


def test_completions_offer_every_command():
    """The generated scripts call back into `suzent` (_SUZENT_COMPLETE), so they complete commands added later."""
    import os
    import subprocess
    import sys

    root = typer.main.get_command(app)
    for words, cword, expected in [("suzent ", 1, set(root.commands)),
                                   *[(f"suzent {name} ", 2, set(cmd.commands)) for name, cmd in root.commands.items()
                                     if getattr(cmd, "commands", None)]]:
        env = dict(os.environ, _SUZENT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword))
        r = subprocess.run([sys.executable, "-m", "suzent_cli"], env=env, capture_output=True, text=True, cwd=REPO)
        assert set(r.stdout.split()) == expected, words
    for name in ("suzent.bash", "_suzent", "suzent.fish"):
        assert "_SUZENT_COMPLETE" in (REPO / "completions" / name).read_text(encoding="utf-8"), name
