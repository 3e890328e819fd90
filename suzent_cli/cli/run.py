"""``suzent run``: one pass of the whole chain (drain spool → index → dream → reconcile → promote → lint when due).
See :mod:`suzent_cli.run`."""

from __future__ import annotations

import signal
import sys
from typing import Optional

import typer

from suzent_cli import errors
from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import Progress, emit_json, out, pass_json, print_pass

RUN_EXIT_HELP = ("Exit codes: 0 every stage ok (idle and skipped count as ok), 1 a stage failed (the others still "
                 "ran where safe), 3 a lock was busy (the dream's or the indexer's), 2 bad configuration (nothing ran), "
                 "130 interrupted (SIGINT). SIGTERM finishes the current stage, skips the rest and exits with the "
                 "pass's code.")


@app.command("run", epilog=RUN_EXIT_HELP)
def run_cmd(
    ctx: typer.Context,
    force: bool = options.force("Let the dream ingest pending logs now, ignoring min_facts/min_hours."),
    engine: Optional[str] = options.engine("Dream engine [dream.engine; auto: claude with an API key, else offline]."),
    json_out: bool = options.json_out("Print the pass as JSON: stages[{name, outcome, ok, seconds, detail, error}], exit_code, seconds."),
) -> None:
    """One pass of the whole chain: drain the hook spool, index, dream, reconcile, promote, lint when due.

    Each stage's outcome is one row. The index is built if there is none yet; the dream's gate decides ingest, lint
    or idle; reconcile runs after an ingest (or while superseded lines are pending), promote after an ingest. A failed
    stage is reported and the chain goes on where that is safe.

    Example: suzent run    (cron: */30 * * * * suzent run >> ~/.suzent/run.log 2>&1)
    """
    from suzent_cli.config import check_engine, dream_config
    from suzent_cli.run import run_pass

    settings = settings_of(ctx)
    config = dream_config(settings, engine=engine)
    engine_name = check_engine(settings, config)
    from suzent_cli.signals import Signals

    with Signals() as signals, Progress(out.is_terminal and not json_out) as progress:
        report = run_pass(settings, config, force=force, engine=engine_name, stop=signals, progress=progress)
    interrupted = signals.signum == signal.SIGINT and report.stopped
    if json_out:
        emit_json(pass_json(report, **({"exit_code": errors.INTERRUPTED} if interrupted else {})))
    else:
        print_pass(report, exit_code=errors.INTERRUPTED if interrupted else None)
    if signals():
        print(f"stopped ({signals.name}): the rest of the pass was skipped" if report.stopped
              else f"{signals.name} received after the last stage", file=sys.stderr)
        if interrupted:
            raise typer.Exit(errors.INTERRUPTED)
    raise typer.Exit(report.exit_code)
