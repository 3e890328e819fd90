"""``suzent promote``: regenerate MEMORY.md's generated zone from the personal pages of the vault."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, warn


@app.command("promote")
def promote_cmd(
    ctx: typer.Context,
    engine: str = options.engine(default="auto", metavar="auto|offline|claude", help="auto (claude when ANTHROPIC_API_KEY or a local claude.base_url is set) | offline | claude."),
    max_lines: int = typer.Option(200, "--max-lines", metavar="N", help="Most lines of the generated zone, 6..10000 [200]; the best claims that fit are kept, and a warning says how many were left out."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Rewrite the generated zone of MEMORY.md (above `<!-- /memory:generated -->`) from the current claims of
    the 3_Personal/ pages, most recalled first; the manual zone below the marker is kept as it is, and a MEMORY.md
    we did not write is never overwritten. The dream runs this after a productive run.

    Example: suzent promote --engine offline --json
    """
    from suzent_cli.errors import ConfigInvalid
    from suzent_cli.promote import promote

    if not 6 <= max_lines <= 10000:
        raise ConfigInvalid(f"--max-lines must be 6..10000, got {max_lines}")
    result = promote(settings_of(ctx), engine=engine.strip().lower(), max_lines=max_lines)
    if json_out:
        emit_json(result.to_json())
        return
    for message in result.warnings:
        warn(message)
    if result.status == "nothing":
        out.print(escape(f"nothing to promote: {result.reason}"))
    elif result.status == "manual":
        out.print(escape(f"MEMORY.md left untouched: {result.reason}"))
    else:
        w = result.write
        verb = "wrote" if result.status == "written" else "unchanged:"
        out.print(escape(f"{verb} {w.path} ({result.engine}: {result.claims} claim(s) from {result.pages} page(s), "
                         f"{result.recent} recent fact(s); {w.lines} lines, {w.bytes} bytes)"))
