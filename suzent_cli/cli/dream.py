"""``suzent dream``: one gated tick of the consolidation loop (cron repeats it; ``suzent loop`` runs the chain)."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import print_tick

EXIT_HELP = ("Exit codes: 0 ran (ingested, skipped a wedged batch, or linted), 4 idle (nothing due), "
             "5 the run failed (not productive; retried next time), 3 another dream holds the lock, "
             "2 bad configuration.")


@app.command("dream", epilog=EXIT_HELP)
def dream_cmd(
    ctx: typer.Context,
    force: bool = options.force("Ingest pending logs now, ignoring min_facts/min_hours (never the lock)."),
    engine: Optional[str] = options.engine("Engine [dream.engine; auto: claude with an API key, else offline]."),
    min_hours: Optional[str] = typer.Option(None, "--min-hours", metavar="H", help="Hours between attempts when not behind [24]."),
    min_facts: Optional[str] = typer.Option(None, "--min-facts", metavar="N", help="New fact lines needed when not behind [20]."),
    max_wait_hours: Optional[str] = typer.Option(None, "--max-wait-hours", metavar="H", help="Hours the oldest pending fact may wait before any pending fact is enough; 0 off [72]."),
    max_days: Optional[str] = typer.Option(None, "--max-days", metavar="N", help="Days per batch; more pending means far behind [14]."),
    max_retries: Optional[str] = typer.Option(None, "--max-retries", metavar="N", help="Failed attempts before a batch is skipped [3]."),
    timeout: Optional[str] = options.timeout("Seconds an engine run may take [600]."),
    lint_min_days: Optional[str] = typer.Option(None, "--lint-min-days", metavar="D", help="Days between lint passes [7]."),
    no_lint: bool = typer.Option(False, "--no-lint", help="Never lint from the gate."),
    json_out: bool = options.json_out("Print the tick's decision and result as JSON."),
    loop: bool = typer.Option(False, "--loop", hidden=True),
    interval: Optional[str] = typer.Option(None, "--interval", hidden=True),
    ticks: Optional[str] = typer.Option(None, "--ticks", hidden=True),
) -> None:
    """One gated dream tick: fold daily logs older than today into the vault, or lint it, or stay idle.

    Example: suzent dream --json    (cron: */30 * * * * suzent dream)
    """
    from suzent_cli.config import check_engine, dream_config
    from suzent_cli.dream.runner import DreamRunner

    if loop or interval is not None or ticks is not None:  # removed options: name what replaces them
        from suzent_cli.errors import ConfigInvalid

        raise ConfigInvalid("dream --loop, --interval and --ticks are gone: `suzent loop [--interval S] "
                            "[--passes N]` repeats the whole chain (cron can repeat `suzent dream`)")
    settings = settings_of(ctx)
    config = dream_config(settings, min_hours=min_hours, min_facts=min_facts, max_wait_hours=max_wait_hours,
                          max_days=max_days,
                          max_retries=max_retries, timeout_seconds=timeout, lint_min_days=lint_min_days,
                          engine=engine, lint_enabled=False if no_lint else None)
    result = DreamRunner(settings, config, engine=check_engine(settings, config)).tick(force=force)
    print_tick(result, json_out)
    raise typer.Exit(result.exit_code)
