"""``suzent lint``: audit the vault now, whatever the dream's gate says."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import print_lint_findings, print_tick

EXIT_HELP = ("Exit codes: 0 linted, 5 the engine failed (no log entry), 3 a dream holds the lock, "
             "2 bad configuration.")


@app.command("lint", epilog=EXIT_HELP)
def lint_cmd(
    ctx: typer.Context,
    engine: Optional[str] = options.engine("Engine for contradictions [as dream]."),
    timeout: Optional[str] = options.timeout("Seconds the engine may take [600]."),
    json_out: bool = options.json_out("Print the findings as JSON."),
) -> None:
    """Audit the vault now: broken index links, orphans, missing reciprocal ## Related links (fixed),
    pages past stale_after (flagged needs-review), contradictions. Appends a lint entry to log.md.

    Example: suzent lint --json
    """
    from suzent_cli.config import check_engine, dream_config
    from suzent_cli.dream.runner import DreamRunner

    settings = settings_of(ctx)
    config = dream_config(settings, engine=engine, timeout_seconds=timeout)
    result = DreamRunner(settings, config, engine=check_engine(settings, config)).lint_now()
    if not json_out:
        print_lint_findings(result.lint)
    print_tick(result, json_out)
    raise typer.Exit(result.exit_code)
