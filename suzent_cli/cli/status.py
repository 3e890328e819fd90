"""``suzent status``: every tier on one screen (read-only)."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, environ, settings_of
from suzent_cli.cli.render import emit_json, print_status


@app.command("status")
def status_cmd(
    ctx: typer.Context,
    json_out: bool = options.json_out("Print the status as JSON."),
    no_index: bool = typer.Option(False, "--no-index", help="Skip the index row counts (no LanceDB import)."),
) -> None:
    """Every tier on one screen: daily logs and fact lines, vault pages and claims, MEMORY.md, index rows, queues,
    the dream's watermark, pending work, next tick, retries and last results, lock holders, whether the memory is
    private to you (one warning when other users can read the home or a tier folder: `suzent init` fixes it), and
    the server (pid, uptime, requests, last error, MCP URL, who started it and when it exits when idle; or "not
    running": hooks and MCP then use the cold path) and whether it starts itself (serve.autostart, and why).

    Example: suzent status --json
    """
    from suzent_cli.config import dream_config
    from suzent_cli.server.runtime import server_state
    from suzent_cli.status import status

    settings = settings_of(ctx)
    data = status(settings, dream_config(settings), with_index=not no_index)
    from suzent_cli.server.autostart import describe

    # the caller's environment decides auto-start's on/off, also when this runs relayed in a server
    data["server"] = {**server_state(settings.paths.home), "autostart": describe(settings.paths.home, environ())}
    if json_out:
        emit_json(data)
    else:
        print_status(data)
