"""``suzent mcp``: the MCP server over stdio, for agents that spawn their server (Claude Code, Claude Desktop,
Cursor, Codex). Relays to a running ``suzent serve`` when there is one, else serves in-process."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of

DEFAULT_TIMEOUT = 30.0  # seconds a relayed call may take before it fails as a tool error


@app.command("mcp")
def mcp_cmd(
    ctx: typer.Context,
    relay: bool = typer.Option(True, "--relay/--no-relay",
                               help="Relay to a running `suzent serve` for this home when one answers (the "
                                    "default: agents share its warm model); --no-relay always serves in-process."),
    timeout: str = options.timeout(f"Seconds a call relayed to the server may take (default {DEFAULT_TIMEOUT:g})."),
) -> None:
    """Serve suzent's memory to an agent over MCP on stdin/stdout (tools: recall, remember, forget, status,
    list_pages, read_page; resources: MEMORY.md and the vault pages).

    When a `suzent serve` runs for the home, every call is relayed to it over its socket; if it goes away, this
    process carries on in-process. Without a server it serves in-process (the model loads on the first recall that
    needs it; no chain, no watcher) and starts the home's server for the next callers (serve.autostart; not with
    --no-relay). stdout carries only the protocol; messages go to stderr. It exits when stdin
    closes. Marking facts as verified (verify-fact) and retire-legacy --apply stay CLI-only.

    Example: suzent --home ~/.suzent mcp

    Example (Claude Code): claude mcp add suzent -- suzent mcp
    """
    import logging
    import sys

    import anyio

    from suzent_cli.errors import InputInvalid
    from suzent_cli.server import client
    from suzent_cli.server.mcp_surface import FallbackBackend, build_mcp, run_stdio

    settings = settings_of(ctx)
    try:
        seconds = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    except ValueError:
        raise InputInvalid(f"--timeout must be a number of seconds, got {timeout!r}") from None
    if not seconds > 0:
        raise InputInvalid(f"--timeout must be more than 0 seconds, got {timeout!r}")
    # One plain stderr handler before the SDK adds its own (basicConfig is a no-op once the root has a handler).
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")

    warms = []  # the in-process warm state, once made: closed at the end (its index worker finishes its pass)

    def in_process():
        from suzent_cli.server.ops import LocalBackend
        from suzent_cli.server.warm import Warm

        warms.append(Warm(settings))
        return LocalBackend(warms[-1])

    remote = client.connect(settings.paths.home, timeout=seconds) if relay else None
    backend = FallbackBackend(remote, in_process, lost=(client.ServerUnavailable,))
    if remote is None:
        backend.local()  # a home the backend cannot use fails here, before the protocol starts
        if relay:  # the home's server, for the other agents and hooks (and the next suzent mcp); never waited for
            from suzent_cli.server.autostart import ensure

            started = ensure(settings.paths.home, why="suzent mcp")
            if started.startswith(("started", "spawn failed", "backing off")):
                print(f"suzent mcp: server {started}", file=sys.stderr)
    print(f"suzent mcp: {'relaying to the server of' if remote else 'serving in-process for'} {settings.paths.home}",
          file=sys.stderr)
    try:
        anyio.run(run_stdio, build_mcp(backend, project=_project_here()))
    finally:
        for warm in warms:
            warm.close()


def _project_here() -> str:
    """The project key of ``suzent mcp``'s working directory (:func:`suzent_cli.scope.project_of`), the scope of
    every ``recall``/``remember`` call that names none; ``""`` (the person's only) outside any project."""
    from suzent_cli.cli.app import environ
    from suzent_cli.cli.capture_run import working_dir
    from suzent_cli.scope import project_of

    found = project_of(working_dir(environ()))
    return found.key if found is not None else ""
