"""Options several commands share, declared once (as sqlite-utils' ``output_options``): each function returns the
``typer.Option`` a command uses as a parameter default, with the command's own help text.

Example::

    def status_cmd(ctx: typer.Context, json_out: bool = options.json_out("Print the status as JSON.")) -> None: ...
"""

from __future__ import annotations

from typing import Any

import typer

DREAM_ENGINES = "auto|offline|claude"


def json_out(help: str = "Print JSON.") -> Any:
    """``--json``: print exactly one JSON document on stdout (bool, default False)."""
    return typer.Option(False, "--json", help=help)


def engine(help: str, *, default: str | None = None, metavar: str = DREAM_ENGINES) -> Any:
    """``--engine NAME``: which engine a stage runs (str; None: the configured one)."""
    return typer.Option(default, "--engine", metavar=metavar, help=help)


def force(help: str) -> Any:
    """``--force``: let the dream ingest pending logs now, ignoring its gate's thresholds (bool)."""
    return typer.Option(False, "--force", help=help)


def timeout(help: str) -> Any:
    """``--timeout S``: seconds, as typed (str; parsed and checked by the command's stage)."""
    return typer.Option(None, "--timeout", metavar="S", help=help)


def from_agent(help: str) -> Any:
    """``--from AGENT``: answer an agent's hook (only ``claude-code``; str, None when not a hook)."""
    return typer.Option(None, "--from", metavar="claude-code", help=help)


def model(help: str) -> Any:
    """``--model EMBEDDER``: the embedder name (str; None: the configured one)."""
    return typer.Option(None, "--model", metavar="EMBEDDER", help=help)
