"""Docs that cannot drift: generated completions and man pages match the app; every command has an example."""

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
    assert {"completions/suzent.bash", "completions/_suzent", "completions/suzent.fish", "man/suzent.1"} <= set(generated)
    stale = [rel for rel, text in generated.items()
             if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != text]
    assert not stale, f"run `make docs`: stale {stale}"


@pytest.mark.parametrize("name", sorted(typer.main.get_command(app).commands))
def test_every_command_has_help_with_an_example(name):
    command = typer.main.get_command(app).commands[name]
    assert command.help and "Example:" in command.help, name
