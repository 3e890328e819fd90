"""``suzent dream``, ``suzent lint`` and ``suzent status``: the consolidation loop and its report."""

from __future__ import annotations

import time
from typing import Optional

import typer

from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, warn

EXIT_HELP = ("Exit codes: 0 ran (ingested, skipped a wedged batch, or linted), 4 idle (nothing due), "
             "5 the run failed (not productive; retried next time), 3 another dream holds the lock, "
             "2 bad configuration.")
LINT_EXIT_HELP = ("Exit codes: 0 linted, 5 the engine failed (no log entry), 3 a dream holds the lock, "
                  "2 bad configuration.")


def _config(ctx: typer.Context, *, check: bool = False, **flags):
    from suzent_cli.config import check_engine, dream_config  # noqa: PLC0415

    config = dream_config(settings_of(ctx), **flags)
    if check:
        check_engine(settings_of(ctx), config)
    return config


def _describe(result) -> str:
    b = result.batch
    late = (result.decision.late if result.decision else ()) or ()
    span = (f"{b[0].isoformat()}..{b[-1].isoformat()}" if b else "") + (
        f"{' + ' if b else ''}late lines of {len(late)} consolidated day(s)" if late else "")
    mark = result.watermark_after.isoformat() if result.watermark_after else "none"
    if result.outcome == "ingested" and not result.pages_changed and not result.facts:
        return f"ingested {span}: {result.summary}"
    if result.outcome == "ingested":
        return (f"ingested {span} ({result.engine}): {result.facts} facts, {len(result.pages_changed)} pages changed, "
                f"{result.superseded} new superseded lines handed off; watermark {mark}")
    if result.outcome == "unproductive" and result.retry_after:
        return f"run {span} ({result.engine}) not attempted: {result.error}; watermark stays {mark}"
    if result.outcome == "unproductive":
        return (f"run {span} ({result.engine}) not productive, attempt {result.failures}: {result.error}; "
                f"watermark stays {mark}")
    if result.outcome == "skipped":
        return result.summary
    if result.outcome == "linted":
        return f"{result.summary}; {len(result.pages_changed)} pages changed"
    if result.outcome == "lint_failed":
        return f"lint failed ({result.engine}): {result.error}"
    if result.outcome == "busy":
        return f"busy: {result.summary}"
    return f"idle: {result.summary}"


def _report(result, json_out: bool, compact: bool = False) -> None:
    if json_out:
        emit_json(result.to_json(), compact=compact)
        return
    out.print(escape(_describe(result)))
    for step in result.steps:
        if not step.ok:
            warn(f"follow-up {step.name} failed: {step.error}")
            continue
        out.print(escape(f"  {step.name}: {step.summary()}"))
        if step.name == "promote":
            for message in step.detail.get("warnings") or []:
                warn(message)
    for message in result.warnings:
        warn(message)


@app.command("dream", epilog=EXIT_HELP)
def dream_cmd(
    ctx: typer.Context,
    force: bool = typer.Option(False, "--force", help="Ingest pending logs now, ignoring min_facts/min_hours (never the lock)."),
    engine: Optional[str] = typer.Option(None, "--engine", metavar="auto|offline|claude", help="Engine [dream.engine; auto: claude with an API key, else offline]."),
    loop: bool = typer.Option(False, "--loop", help="Keep ticking every --interval seconds (for machines without cron)."),
    interval: Optional[str] = typer.Option(None, "--interval", metavar="S", help="Seconds between --loop ticks [dream.interval_seconds, 1800]."),
    ticks: Optional[str] = typer.Option(None, "--ticks", metavar="N", help="With --loop: stop after N ticks."),
    min_hours: Optional[str] = typer.Option(None, "--min-hours", metavar="H", help="Hours between attempts when not behind [24]."),
    min_facts: Optional[str] = typer.Option(None, "--min-facts", metavar="N", help="New fact lines needed when not behind [20]."),
    max_days: Optional[str] = typer.Option(None, "--max-days", metavar="N", help="Days per batch; more pending means far behind [14]."),
    max_retries: Optional[str] = typer.Option(None, "--max-retries", metavar="N", help="Failed attempts before a batch is skipped [3]."),
    timeout: Optional[str] = typer.Option(None, "--timeout", metavar="S", help="Seconds an engine run may take [600]."),
    lint_min_days: Optional[str] = typer.Option(None, "--lint-min-days", metavar="D", help="Days between lint passes [7]."),
    no_lint: bool = typer.Option(False, "--no-lint", help="Never lint from the gate."),
    json_out: bool = typer.Option(False, "--json", help="Print each tick's decision and result as JSON."),
) -> None:
    """One gated dream tick: fold daily logs older than today into the vault, or lint it, or stay idle.

    Example: suzent dream --json    (cron: */30 * * * * suzent dream)
    """
    from suzent_cli.dream.runner import DreamRunner  # noqa: PLC0415

    config = _config(ctx, check=True, min_hours=min_hours, min_facts=min_facts, max_days=max_days, max_retries=max_retries,
                     timeout_seconds=timeout, lint_min_days=lint_min_days, engine=engine,
                     interval_seconds=interval, lint_enabled=False if no_lint else None)
    settings = settings_of(ctx)
    limit = None
    if ticks is not None or (interval is not None and not loop):
        from suzent_cli.errors import ConfigInvalid  # noqa: PLC0415

        if not loop:
            raise ConfigInvalid(f"{'--ticks' if ticks is not None else '--interval'} only applies with --loop")
        if not ticks.isdigit() or int(ticks) < 1:
            raise ConfigInvalid(f"--ticks must be a whole number ≥ 1, got {ticks!r}")
        limit = int(ticks)
    runner = DreamRunner(settings, config, engine=config.engine_for(settings))
    if not loop:
        result = runner.tick(force=force)
        _report(result, json_out)
        raise typer.Exit(result.exit_code)
    done = 0
    while True:
        result = runner.tick(force=force)
        _report(result, json_out, compact=True)  # one JSON line per tick
        done += 1
        if limit is not None and done >= limit:
            raise typer.Exit(result.exit_code)
        if result.outcome not in ("ingested", "skipped") or result.decision is None or not result.decision.behind:
            time.sleep(config.interval_seconds)  # a backlog drains tick after tick; otherwise wait


@app.command("lint", epilog=LINT_EXIT_HELP)
def lint_cmd(
    ctx: typer.Context,
    engine: Optional[str] = typer.Option(None, "--engine", metavar="auto|offline|claude", help="Engine for contradictions [as dream]."),
    timeout: Optional[str] = typer.Option(None, "--timeout", metavar="S", help="Seconds the engine may take [600]."),
    json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
) -> None:
    """Audit the vault now: broken index links, orphans, missing reciprocal ## Related links (fixed),
    pages past stale_after (flagged needs-review), contradictions. Appends a lint entry to log.md.

    Example: suzent lint --json
    """
    from suzent_cli.dream.runner import DreamRunner  # noqa: PLC0415

    config = _config(ctx, check=True, engine=engine, timeout_seconds=timeout)
    settings = settings_of(ctx)
    result = DreamRunner(settings, config, engine=config.engine_for(settings)).lint_now()
    if not json_out and result.lint:
        for path, target in result.lint.get("broken_links", []):
            out.print(escape(f"  broken link in {path}: [[{target}]]"))
        for page in result.lint.get("orphans", []):
            out.print(escape(f"  orphan page: {page}"))
        for page in result.lint.get("stale", []):
            out.print(escape(f"  past stale_after, flagged needs-review: {page}"))
        for line in result.lint.get("contradictions", []):
            out.print(escape(f"  contradiction: {line}"))
    _report(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("status")
def status_cmd(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print the status as JSON."),
    no_index: bool = typer.Option(False, "--no-index", help="Skip the index row counts (no LanceDB import)."),
) -> None:
    """Every tier on one screen: daily logs and fact lines, vault pages and claims, MEMORY.md, index rows, queues,
    the dream's watermark, pending work, next tick, retries and last results, and lock holders.

    Example: suzent status --json
    """
    from suzent_cli.status import status  # noqa: PLC0415

    data = status(settings_of(ctx), _config(ctx), with_index=not no_index)
    if json_out:
        emit_json(data)
        return
    sections = status_sections(data)
    if out.is_terminal:
        from rich import box  # noqa: PLC0415
        from rich.table import Table  # noqa: PLC0415

        for title, rows in sections:
            table = Table(title=title, title_justify="left", title_style="bold", show_header=False,
                          box=box.SIMPLE, pad_edge=False)
            table.add_column("what", style="cyan", no_wrap=True)
            table.add_column("value", overflow="fold")
            for label, value in rows:
                table.add_row(escape(label), escape(value))
            out.print(table)
    else:
        for _title, rows in sections:
            for label, value in rows:
                out.print(escape(f"{label:<15}{value}"))
    for message in data["warnings"]:
        warn(message)


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def status_sections(data: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """The status, grouped by tier: ``[(tier title, [(label, value), …]), …]`` for the table and the plain text."""
    logs, pend, vault, queues, mem = data["logs"], data["pending"], data["vault"], data["queues"], data["memory_md"]
    spool = queues["spool"]
    spool_text = ("not available (no hooks package)" if not spool["available"]
                  else f"unreadable: {spool['error']}" if spool.get("error") else f"{spool['pending']} pending"
                  + (f", {spool['failed']} given up in {spool['failed_dir']}" if spool.get("failed") else ""))
    capture = [
        ("today", f"{data['today']}  (now {data['now']})"),
        ("daily logs", f"{logs['count']}" + (f" ({logs['first']} .. {logs['last']})" if logs["count"] else "")
         + f", {_n(logs['facts'], 'fact line')}, {logs['today_facts']} today"),
        ("spool", spool_text),
    ]
    zones = ", ".join(f"{k} {v}" for k, v in vault.get("by_zone", {}).items())
    knowledge = [
        ("vault", f"{_n(vault['pages'], 'page')}" + (f" ({zones})" if zones else "")
         + f", {_n(vault['claims'], 'current claim')}, {vault['needs_review']} need review, "
           f"{vault['stale']} past stale_after" + (f", {vault['unreadable']} unreadable" if vault["unreadable"] else "")),
        ("MEMORY.md", "missing" if not mem["exists"] else
         (f"generated zone {_n(mem['generated_lines'], 'line')}" if mem["has_marker"] else "no generated zone (unmarked)")
         + (f", manual zone {_n(mem['manual_lines'], 'line')}" if mem["manual"] else ", no manual zone")),
    ]
    index = []
    idx = data["index"]
    if idx is not None:
        if not idx.get("built"):
            index.append(("index", "not built (run `suzent index` or `suzent run`)"))
        elif idx.get("error"):
            index.append(("index", f"unreadable: {idx['error']}"))
        else:
            index.append(("index", f"{idx['rows']} rows (" + ", ".join(f"{k} {v}" for k, v in idx["by_source"].items())
                          + f"), {_n(idx['fragments'], 'fragment')}, embedder {idx.get('embedder') or '?'}"
                          + (f" (dim {idx['dim']})" if idx.get("dim") else "")))
    else:
        index.append(("index", "not read (--no-index)"))
    dream = [
        ("watermark", f"{data['watermark'] or 'none (nothing ingested yet)'}"),
        ("pending", f"{len(pend['dates'])} days, {pend['facts']} facts" + (f" ({pend['dates'][0]} .. {pend['dates'][-1]})" if pend['dates'] else "")
         + (f"; late lines: {pend['late_facts']} facts in {len(pend['late'])} consolidated days" if pend['late'] else "")),
        ("next tick", f"{data['next_tick']['action']}: {data['next_tick']['reason']}"),
        ("engine", f"{data['engine']}"),
        ("retries", ", ".join(f"{k}: {v}/{data['retries']['max']}" for k, v in data['retries']['failures'].items()) or "none"),
        ("last ingest", _last(data["last_ingest"], data["last_attempt"])),
        ("last lint", f"{data['last_lint'] or 'never'}; " + _last(data["last_lint_result"], data["last_lint_attempt"])),
    ]
    if data["in_flight"]:
        dream.append(("interrupted", f"run of batch ending {data['in_flight'].get('end')} (started "
                                     f"{data['in_flight'].get('started')}) will resume"))
    queue_rows = [("queues", f"spool {spool['pending'] if spool.get('pending') is not None else '-'}, "
                             f"late lines {queues['late_lines']}, superseded {queues['superseded']}, "
                             f"confirmations {queues['confirmations']} (folded with the next batch), "
                             f"tombstones {queues['tombstones']}")]
    locks = [("locks", ", ".join(f"{name} " + (f"held (pid {info['pid']})" if info["held"] and info.get("pid")
                                               else "held" if info["held"] else "unknown" if info["held"] is None
                                               else "free")
                                 for name, info in data["locks"].items()))]
    return [("capture buffer", capture), ("vault", knowledge), ("index", index), ("dream", dream),
            ("queues", queue_rows), ("locks", locks)]


def _last(record, attempt) -> str:
    if not record:
        return f"none (last attempt {attempt})" if attempt else "none"
    return f"{record.get('outcome')} at {attempt}: {record.get('summary') or record.get('error') or ''}"[:300]
