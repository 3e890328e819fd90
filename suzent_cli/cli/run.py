"""``suzent run`` (one pass of the whole chain) and ``suzent loop`` (passes every --interval seconds until a
signal): drain spool → index → dream → reconcile → promote → lint when due. See :mod:`suzent_cli.run`."""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Optional

import typer

from suzent_cli import errors as exit_codes
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import clip, emit_json, err, escape, out, warn

RUN_EXIT_HELP = ("Exit codes: 0 every stage ok (idle and skipped count as ok), 1 a stage failed (the others still "
                 "ran where safe), 3 a lock was busy (the dream's or the indexer's), 2 bad configuration (nothing ran), "
                 "130 interrupted (SIGINT). SIGTERM finishes the current stage, skips the rest and exits with the "
                 "pass's code.")
LOOP_EXIT_HELP = ("Exit codes: 0 stopped by SIGTERM (the current stage finishes, the rest of the pass is skipped), "
                  "130 stopped by SIGINT (Ctrl-C), a second signal exits at once with 143/130; with --passes N, the "
                  "last pass's code (0, 1 a stage failed, 3 busy); 2 bad configuration.")
SLICE = 0.2  # seconds: how often the loop's sleep looks for a signal
STYLE = {"failed": "red", "busy": "yellow", "stopped": "yellow", "skipped": "dim", "not available": "dim",
         "idle": "dim", "unchanged": "dim"}


class Signals:
    """SIGINT/SIGTERM handlers for the CLI: the first signal only records itself (the pass asks between stages);
    a second one exits at once with 128+signal (finally blocks run, so locks are released; every append and
    page write suzent makes is a single write or an atomic rename, so none is left half-done)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, object] = {}

    def __call__(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def _handle(self, signum, frame) -> None:  # noqa: ARG002
        if self.signum is not None:
            print(f"second {signal.Signals(signum).name}: exiting now with {128 + signum} (the stage in progress is "
                  "cut short; what it wrote is whole)", file=sys.stderr, flush=True)
            raise SystemExit(128 + signum)
        self.signum = signum

    def __enter__(self) -> "Signals":
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _setup(ctx: typer.Context, engine: Optional[str], interval: Optional[str] = None):
    """Settings, the validated dream config and the engine name; ConfigInvalid (exit 2) before anything runs."""
    from suzent_cli.config import check_engine, dream_config  # noqa: PLC0415

    settings = settings_of(ctx)
    config = dream_config(settings, engine=engine, interval_seconds=interval)
    return settings, config, check_engine(settings, config)


def _detail(stage) -> str:
    """The stage's row text: its summary (or error), and how many warnings it has (printed on stderr below)."""
    text = stage.summary
    if stage.error:
        text = f"error: {stage.error}" + (f" ({text})" if text and text != stage.error else "")
    warnings = len(stage.detail.get("warnings") or [])
    if warnings:  # clipped first, so a long summary never hides that there are warnings to read
        return clip(text.replace("\n", " "), 360) + f"; {warnings} warning{'s' if warnings != 1 else ''} (below)"
    return clip(text.replace("\n", " "), 400)


def render_pass(report, *, title: str | None = None, exit_code: int | None = None) -> None:
    """The pass as a rich table on a terminal, as plain aligned text when piped; warnings on stderr."""
    if out.is_terminal:
        from rich.table import Table  # noqa: PLC0415

        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("stage", no_wrap=True)
        table.add_column("outcome", no_wrap=True)
        table.add_column("detail", overflow="fold")
        table.add_column("seconds", justify="right", no_wrap=True)
        for s in report.stages:
            style = "red" if not s.ok else STYLE.get(s.outcome, "green")
            table.add_row(s.name, f"[{style}]{escape(s.outcome)}[/{style}]", escape(_detail(s)), f"{s.seconds:.2f}")
        out.print(table)
    else:
        if title:
            out.print(escape(title))
        width = max(len(s.outcome) for s in report.stages) if report.stages else 7
        out.print(escape(f"{'stage':<10} {'outcome':<{width}} {'seconds':>8}  detail"))
        for s in report.stages:
            out.print(escape(f"{s.name:<10} {s.outcome:<{width}} {s.seconds:>8.2f}  {_detail(s)}"))
    code = report.exit_code if exit_code is None else exit_code
    out.print(escape(f"exit {code} in {report.seconds:.2f}s" + (" (stopped early)" if report.stopped else "")))
    for s in report.stages:
        for message in s.detail.get("warnings") or []:
            warn(f"{s.name}: {message}")


class _Progress:
    """A one-line spinner naming the running stage, on a terminal only."""

    def __init__(self, enabled: bool) -> None:
        self.status = out.status("starting") if enabled else None

    def __enter__(self):
        if self.status is not None:
            self.status.start()
        return self

    def __call__(self, stage: str) -> None:
        if self.status is not None:
            self.status.update(f"{stage} …")

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.stop()


@app.command("run", epilog=RUN_EXIT_HELP)
def run_cmd(
    ctx: typer.Context,
    force: bool = typer.Option(False, "--force", help="Let the dream ingest pending logs now, ignoring min_facts/min_hours."),
    engine: Optional[str] = typer.Option(None, "--engine", metavar="auto|offline|claude", help="Dream engine [dream.engine; auto: claude with an API key, else offline]."),
    json_out: bool = typer.Option(False, "--json", help="Print the pass as JSON: stages[{name, outcome, ok, seconds, detail, error}], exit_code, seconds."),
) -> None:
    """One pass of the whole chain: drain the hook spool, index, dream, reconcile, promote, lint when due.

    Each stage's outcome is one row. The index is built if there is none yet; the dream's gate decides ingest, lint
    or idle; reconcile runs after an ingest (or while superseded lines are pending), promote after an ingest. A failed
    stage is reported and the chain goes on where that is safe.

    Example: suzent run    (cron: */30 * * * * suzent run >> ~/.suzent/run.log 2>&1)
    """
    from suzent_cli.run import run_pass  # noqa: PLC0415

    settings, config, engine_name = _setup(ctx, engine)
    with Signals() as signals, _Progress(out.is_terminal and not json_out) as progress:
        report = run_pass(settings, config, force=force, engine=engine_name, stop=signals, progress=progress)
    interrupted = signals.signum == signal.SIGINT and report.stopped
    if json_out:
        emit_json(report.to_json() | ({"exit_code": exit_codes.INTERRUPTED} if interrupted else {}))
    else:
        render_pass(report, exit_code=exit_codes.INTERRUPTED if interrupted else None)
    if signals():
        print(f"stopped ({signals.name}): the rest of the pass was skipped" if report.stopped
              else f"{signals.name} received after the last stage", file=sys.stderr)
        if interrupted:
            raise typer.Exit(exit_codes.INTERRUPTED)
    raise typer.Exit(report.exit_code)


@app.command("loop", epilog=LOOP_EXIT_HELP)
def loop_cmd(
    ctx: typer.Context,
    interval: Optional[str] = typer.Option(None, "--interval", metavar="S", help="Seconds between passes [dream.interval_seconds, 1800]; a far-behind backlog drains without waiting."),
    passes: Optional[str] = typer.Option(None, "--passes", metavar="N", help="Stop after N passes."),
    force: bool = typer.Option(False, "--force", help="Every pass: let the dream ingest pending logs now."),
    engine: Optional[str] = typer.Option(None, "--engine", metavar="auto|offline|claude", help="Dream engine [as run]."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object per pass and line (as run --json, plus \"pass\")."),
) -> None:
    """Repeat `suzent run` every --interval seconds, until SIGTERM/SIGINT (or --passes N).

    A signal lets the running stage finish (never a write cut in half), skips the rest of that pass, releases
    every lock and exits: 0 on SIGTERM (systemd's normal stop), 130 on SIGINT. The model loads at most once.

    Example: suzent loop --interval 1800    (systemd: Type=simple, KillSignal=SIGTERM)
    """
    from suzent_cli.errors import ConfigInvalid  # noqa: PLC0415
    from suzent_cli.run import refresh_today, run_pass, shared_embedder  # noqa: PLC0415

    base, config, engine_name = _setup(ctx, engine, interval)
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
            settings = refresh_today(base)
            with _Progress(out.is_terminal and not json_out) as progress:
                report = run_pass(settings, config, force=force, engine=engine_name, stop=signals, embedder=embedder,
                                  progress=progress)
            done += 1
            if json_out:
                sys.stdout.write(json.dumps({"pass": done, **report.to_json()}, ensure_ascii=False, default=str) + "\n")
                sys.stdout.flush()
            else:
                render_pass(report, title=f"pass {done} at {report.started}")
            if limit is not None and done >= limit or signals():
                break
            if not report.behind:
                wake = time.monotonic() + config.interval_seconds
                while not signals() and (left := wake - time.monotonic()) > 0:
                    time.sleep(min(SLICE, left))
    if signals():
        cut = f"; pass {done} stopped before its {next(s.name for s in report.stages if s.outcome == 'stopped')} stage" \
            if report is not None and report.stopped else ""
        err.print(escape(f"stopped ({signals.name}) after {done} pass{'es' if done != 1 else ''}{cut}"))
        raise typer.Exit(130 if signals.signum == signal.SIGINT else 0)
    raise typer.Exit(report.exit_code if report is not None else 0)
