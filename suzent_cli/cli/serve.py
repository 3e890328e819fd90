"""``suzent serve``: one warm process per home (MCP over HTTP on 127.0.0.1, the local API on a Unix socket)."""

from __future__ import annotations

import json
import logging
import sys
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, err, escape, out

SERVE_EXIT_HELP = ("Exit codes: 0 stopped by SIGTERM, suzent serve stop or the idle exit (requests finish, the chain "
                   "finishes its current stage), 130 stopped by SIGINT (Ctrl-C), a second signal exits at once with "
                   "143/130; 1 a listener failed; 2 bad configuration or the port is in use; 3 another suzent serve "
                   "runs on this home. suzent serve stop: 0 stopped or none ran, 1 still running.")
ACTIONS = ("stop",)


@app.command("serve", epilog=SERVE_EXIT_HELP)
def serve_cmd(
    ctx: typer.Context,
    action: Optional[str] = typer.Argument(None, metavar="stop", help="stop: stop this home's server (SIGTERM, "
                                           "then wait up to 30 s for it to finish); exit 0 also when none runs."),
    port: Optional[str] = typer.Option(None, "--port", metavar="N", help="TCP port of MCP over HTTP on 127.0.0.1 [serve.port, 8767]; 0 = any free port."),
    no_chain: bool = typer.Option(False, "--no-chain", help="Do not run the unattended chain (what suzent loop does) every dream.interval_seconds."),
    no_watch: bool = typer.Option(False, "--no-watch", help="Do not watch the daily logs and the vault for edits to reindex."),
    print_config: bool = typer.Option(False, "--print-config", help="Print the bearer token, the MCP URL and ready-to-paste client configs, then exit (no server needed; makes the token if absent)."),
    json_out: bool = options.json_out("With --print-config or stop: print it as one JSON object."),
    auto: bool = typer.Option(False, "--auto", help="Run as an auto-started server (what hooks and suzent mcp "
                              "start when none runs): no chain, any free port when serve.port is taken, exit after "
                              "serve.idle_minutes without a request."),
    idle_exit: Optional[str] = typer.Option(None, "--idle-exit", metavar="MINUTES", help="Exit after this many "
                                            "minutes without a request [serve.idle_minutes with --auto; else "
                                            "never]; 0 = never."),
    started_by: Optional[str] = typer.Option(None, "--started-by", hidden=True),
) -> None:
    """Serve this home until SIGTERM/SIGINT: MCP over streamable HTTP on 127.0.0.1 (bearer token required) and the
    local API on a Unix socket (mode 0600) for the hooks, the CLI and suzent mcp.

    It holds the embedder and the index open, indexes each capture it receives at once, reindexes vault and log
    edits as they happen, and runs the unattended chain on its interval. One server per home; CLI commands keep
    working beside it (every write takes the same locks). No telemetry, no outbound connection.

    Hooks and suzent mcp start one by themselves when none runs (serve.autostart; off when CI is set): that
    server runs with --auto, never runs the chain (no dream without you asking), and exits after
    serve.idle_minutes (60) without a request. suzent status shows who started the running server.

    Example: suzent serve --print-config    (then: suzent serve; systemd: Type=simple, KillSignal=SIGTERM)

    Example: suzent serve stop
    """
    from suzent_cli.errors import InputInvalid

    if action is not None and action not in ACTIONS:
        raise InputInvalid(f"unknown action {action!r}: the only one is stop (suzent serve stop)")
    settings = settings_of(ctx)
    if action == "stop":  # whatever config.toml says: a broken file must not keep a server running
        from suzent_cli.cli.capture_run import warn_config

        warn_config(settings)
        _stop(settings, json_out)
        return
    if print_config:
        if settings.config_errors:
            from suzent_cli.errors import ConfigInvalid

            raise ConfigInvalid(settings.config_errors[0])
        _print_config(settings, port, json_out)
        return
    try:
        _serve(settings, port, no_chain, no_watch, auto, idle_exit, started_by)
    except typer.Exit:  # its run ended: serve() recorded how (autostart.note_exit)
        raise
    except Exception as exc:
        if auto:  # suzent status shows why at once (the auto-start record), not only when the next caller tries
            from suzent_cli.errors import message_of, report
            from suzent_cli.server.autostart import note_failed

            note_failed(settings.paths.home, report(exc)[1], message_of(exc))
        raise


def _serve(settings, port: str | None, no_chain: bool, no_watch: bool, auto: bool, idle_exit: str | None,
           started_by: str | None) -> None:
    """The server's run (:func:`suzent_cli.server.serve.serve`) with the options checked; raises typer.Exit with
    its exit code, or the error that kept it from starting."""
    from suzent_cli.server.serve import idle_exit_of, port_of

    if settings.config_errors:
        from suzent_cli.errors import ConfigInvalid

        raise ConfigInvalid(settings.config_errors[0])
    chosen = port_of(settings, port)
    idle = idle_exit_of(settings, idle_exit, auto=auto)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s suzent serve %(levelname)s: %(message)s")
    from suzent_cli.cli.relayed import run as run_relayed  # CLI commands relayed to this server (cli/relay.py)
    from suzent_cli.cli.relayed import snapshot_process_env

    snapshot_process_env()  # before any write can move TMPDIR (index/store.temp_dir)
    from suzent_cli.server.serve import serve
    from suzent_cli.server.stats import now_iso

    announce = (lambda line: print(f"{now_iso()} {line}", file=sys.stderr, flush=True)) if auto else None
    raise typer.Exit(serve(settings, port=chosen, chain=not no_chain and not auto, watch=not no_watch,
                           auto=auto, started_by=started_by or ("suzent serve --auto" if auto else "suzent serve"),
                           idle_exit=idle, announce=announce, cli=run_relayed))


def _stop(settings, json_out: bool) -> None:
    """``suzent serve stop``: :func:`suzent_cli.server.runtime.stop_server`, one line (or JSON); exit 1 when a
    server still runs."""
    from suzent_cli.server.runtime import stop_server

    result = stop_server(settings.paths.home)
    if json_out:
        emit_json(result)
    elif result["stopped"]:
        out.print(escape(result["message"]))
    else:
        err.print(escape(f"Error: {result['message']}"))
    if not result["stopped"]:
        raise typer.Exit(1)


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
