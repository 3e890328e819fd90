"""``suzent verify-fact``: a person's verification of a fact, stamped into MEMORY.md's manual zone."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out


@app.command("verify-fact")
def verify_fact_cmd(
    ctx: typer.Context,
    text: str = typer.Argument(..., metavar="TEXT", help="The fact, one line."),
    by: str = typer.Option(..., "--by", metavar="NAME", help="Who verified it: a person's plain name "
                           "(letters, digits, '.', '_', '-'); names starting with 'agent' are refused."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Record that a person verified a fact: appends `- TEXT <!-- verified: human:NAME@DATE -->` below the
    <!-- /memory:generated --> marker of MEMORY.md (the manual zone; the generated part is never touched).

    A human verification is the strongest evidence class: recall ranks the line at the 0.9 importance floor and
    never decays it as stale. It must be run by that person, never by an agent on their behalf.

    Example: suzent verify-fact "Drinks oolong tea every morning" --by ana
    """
    from suzent_cli.vault.memory_md import memory_path, verify_fact

    settings = settings_of(ctx)
    line = verify_fact(settings, text, by, day=settings.today)
    path = memory_path(settings)
    if json_out:
        emit_json({"path": str(path), "line": line, "by": by, "date": settings.today.isoformat()})
    else:
        out.print(escape(f"stamped in {path}: {line}"))
