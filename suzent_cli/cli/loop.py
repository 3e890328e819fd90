"""``suzent loop``: ``suzent run`` every --interval seconds until a signal (for systemd, or a machine without cron)."""

from __future__ import annotations

import signal
import time
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import Progress, emit_json, err, escape, out, pass_json, print_pass
from suzent_cli.signals import Signals

LOOP_EXIT_HELP = ("Exit codes: 0 stopped by SIGTERM (the current stage finishes, the rest of the pass is skipped), "
                  "130 stopped by SIGINT (Ctrl-C), a second signal exits at once with 143/130; with --passes N, the "
                  "last pass's code (0, 1 a stage failed, 3 busy); 2 bad configuration.")
SLICE = 0.2  # seconds: how often the loop's sleep looks for a signal


@app.command("loop", epilog=LOOP_EXIT_HELP)
def loop_cmd(
    ctx: typer.Context,
    interval: Optional[str] = typer.Option(None, "--interval", metavar="S", help="Seconds between passes [dream.interval_seconds, 1800]; a far-behind backlog drains without waiting."),
    passes: Optional[str] = typer.Option(None, "--passes", metavar="N", help="Stop after N passes."),
    force: bool = options.force("Every pass: let the dream ingest pending logs now."),
    engine: Optional[str] = options.engine("Dream engine [as run]."),
    json_out: bool = options.json_out("One JSON object per pass and line (as run --json, plus \"pass\")."),
) -> None:
    """Repeat `suzent run` every --interval seconds, until SIGTERM/SIGINT (or --passes N).

    A signal lets the running stage finish (never a write cut in half), skips the rest of that pass, releases
    every lock and exits: 0 on SIGTERM (systemd's normal stop), 130 on SIGINT. The model loads at most once.

    Example: suzent loop --interval 1800    (systemd: Type=simple, KillSignal=SIGTERM)
    """
    from suzent_cli.config import check_engine, dream_config
    from suzent_cli.errors import ConfigInvalid
    from suzent_cli.run import refresh_today, run_pass, shared_embedder

    base = settings_of(ctx)
    config = dream_config(base, engine=engine, interval_seconds=interval)
    engine_name = check_engine(base, config)
    limit = None
    if passes is not None:
        if not passes.isdigit() or int(passes) < 1:
            raise ConfigInvalid(f"--passes must be a whole number ≥ 1, got {passes!r}")
        limit = int(passes)
    done = 0
    report = None
    with Signals() as signals:
        embedder = shared_embedder(base)
        while not signals():
            with Progress(out.is_terminal and not json_out) as progress:
                report = run_pass(refresh_today(base), config, force=force, engine=engine_name, stop=signals,
                                  embedder=embedder, progress=progress)
            done += 1
            if json_out:
                emit_json({"pass": done} | pass_json(report), compact=True)
            else:
                print_pass(report, title=f"pass {done} at {report.started}")
            if limit is not None and done >= limit or signals():
                break
            if not report.behind:
                _sleep(config.interval_seconds, signals)
    if signals():
        cut = f"; pass {done} stopped before its {next(s.name for s in report.stages if s.outcome == 'stopped')} stage" \
            if report is not None and report.stopped else ""
        err.print(escape(f"stopped ({signals.name}) after {done} pass{'es' if done != 1 else ''}{cut}"))
        raise typer.Exit(130 if signals.signum == signal.SIGINT else 0)
    raise typer.Exit(report.exit_code if report is not None else 0)


def _sleep(seconds: float, signals: Signals) -> None:
    """Wait ``seconds``, looking for a signal every :data:`SLICE` seconds."""
    wake = time.monotonic() + seconds
    while not signals() and (left := wake - time.monotonic()) > 0:
        time.sleep(min(SLICE, left))
