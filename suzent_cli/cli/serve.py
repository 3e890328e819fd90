"""``suzent serve``: one warm process per home (MCP over HTTP on 127.0.0.1, the local API on a Unix socket)."""

from __future__ import annotations

import json
import logging
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, err, escape, out

SERVE_EXIT_HELP = ("Exit codes: 0 stopped by SIGTERM (requests finish, the chain finishes its current stage), 130 "
                   "stopped by SIGINT (Ctrl-C), a second signal exits at once with 143/130; 1 a listener failed; 2 bad "
                   "configuration or the port is in use; 3 another suzent serve runs on this home.")


@app.command("serve", epilog=SERVE_EXIT_HELP)
def serve_cmd(
    ctx: typer.Context,
    port: Optional[str] = typer.Option(None, "--port", metavar="N", help="TCP port of MCP over HTTP on 127.0.0.1 [serve.port, 8767]; 0 = any free port."),
    no_chain: bool = typer.Option(False, "--no-chain", help="Do not run the unattended chain (what suzent loop does) every dream.interval_seconds."),
    no_watch: bool = typer.Option(False, "--no-watch", help="Do not watch the daily logs and the vault for edits to reindex."),
    print_config: bool = typer.Option(False, "--print-config", help="Print the bearer token, the MCP URL and ready-to-paste client configs, then exit (no server needed; makes the token if absent)."),
    json_out: bool = options.json_out("With --print-config: print it as one JSON object."),
) -> None:
    """Serve this home until SIGTERM/SIGINT: MCP over streamable HTTP on 127.0.0.1 (bearer token required) and the
    local API on a Unix socket (mode 0600) for the hooks, the CLI and suzent mcp.

    It holds the embedder and the index open, indexes each capture it receives at once, reindexes vault and log
    edits as they happen, and runs the unattended chain on its interval. One server per home; CLI commands keep
    working beside it (every write takes the same locks). No telemetry, no outbound connection.

    Example: suzent serve --print-config    (then: suzent serve; systemd: Type=simple, KillSignal=SIGTERM)
    """
    from suzent_cli.server.serve import port_of

    settings = settings_of(ctx)
    if print_config:
        _print_config(settings, port, json_out)
        return
    chosen = port_of(settings, port)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s suzent serve %(levelname)s: %(message)s")
    from suzent_cli.cli.relayed import run as run_relayed  # CLI commands relayed to this server (cli/relay.py)
    from suzent_cli.server.serve import serve

    raise typer.Exit(serve(settings, port=chosen, chain=not no_chain, watch=not no_watch, cli=run_relayed))


def _print_config(settings, port_flag: str | None, json_out: bool) -> None:
    """The token, URL and client configs: the running server's port when one runs and no --port is given."""
    from suzent_cli.errors import InputInvalid
    from suzent_cli.server import runtime
    from suzent_cli.server.runtime import running_port
    from suzent_cli.server.serve import port_of

    home = settings.paths.home
    port = running_port(home) if port_flag is None else None
    if port is None:
        port = port_of(settings, port_flag)
    if port == 0:
        raise InputInvalid("the port is 0 (any free port, chosen at start) and no server runs: start suzent serve, "
                           "then print the config again, or set --port/serve.port")
    config = runtime.client_config(home, port, runtime.ensure_token(home, warn=lambda m: err.print(escape(f"warning: {m}"))))
    if json_out:
        emit_json(config)
        return
    lines = [
        f"MCP URL:    {config['url']}",
        f"Token:      {config['token']}   (kept in {config['token_file']}, mode 0600)",
        "",
        "Claude Code, over HTTP (needs suzent serve running):",
        f"  {config['claude_code_http']}",
        "Claude Code, over stdio (relays to the server when it runs, else serves in-process):",
        f"  {config['claude_code_stdio']}",
        "",
        "Claude Desktop (claude_desktop_config.json):",
        _indent(json.dumps(config["claude_desktop"], indent=2)),
        "",
        "Cursor (~/.cursor/mcp.json):",
        _indent(json.dumps(config["cursor"], indent=2)),
    ]
    out.print("\n".join(lines), markup=False)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
