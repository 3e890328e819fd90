"""``suzent init``: the data directory layout."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, out


@app.command("init")
def init_cmd(ctx: typer.Context, json_out: bool = options.json_out("Print a JSON summary.")) -> None:
    """Create the data directory layout (idempotent; never overwrites a file).

    Example: suzent --home ~/.suzent init
    """
    from suzent_cli.init import init_home  # the vault package: not loaded by every command's start-up

    settings = settings_of(ctx)
    created = init_home(settings)
    if json_out:
        emit_json({"home": str(settings.paths.home), "created": [str(p) for p in created]})
        return
    out.print(f"suzent home {settings.paths.home}: {len(created)} created, existing files untouched")
    for p in created:
        out.print(f"  + {p}")
