"""``suzent reconcile``: retire the dream's superseded lines (tombstones and their reindex), sweep, compact."""

from __future__ import annotations

import datetime as dt
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, warn


@app.command("reconcile")
def reconcile_cmd(
    ctx: typer.Context,
    no_sweep: bool = typer.Option(False, "--no-sweep", help="Skip the indexer pass over changed vault and core files."),
    no_optimize: bool = typer.Option(False, "--no-optimize", help="Skip compaction and old-version clean-up."),
    keep_versions: Optional[str] = typer.Option(None, "--keep-versions", metavar="MIN", help="Keep index versions younger than MIN minutes [1]."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Retire the dream's superseded lines (tombstone + explicit reindex of their days, then truncate the
    hand-off), sweep changed files into the index, and compact it. The dream runs this after a productive run.

    Example: suzent reconcile --json
    """
    from suzent_cli.errors import ConfigInvalid
    from suzent_cli.reconcile import KEEP_VERSIONS, reconcile

    keep = KEEP_VERSIONS
    if keep_versions is not None:
        try:
            minutes = float(keep_versions)
            if not 0 <= minutes <= 60 * 24 * 30:
                raise ValueError
        except ValueError:
            raise ConfigInvalid(f"--keep-versions must be minutes 0..43200, got {keep_versions!r}") from None
        keep = dt.timedelta(minutes=minutes)
    report = reconcile(settings_of(ctx), sweep=not no_sweep, optimize=not no_optimize, keep_versions=keep)
    if json_out:
        emit_json(report.to_json())
    else:
        frag = report.fragments_compacted
        out.print(escape(
            f"retired {report.lines_retired} of {report.lines_read} superseded lines: {report.tombstones_added} new "
            f"tombstones, {len(report.days_reindexed)} days reindexed, rows {report.rows_removed} out / "
            f"{report.rows_reembedded} in"
            + (f"; fragments {frag[0]} → {frag[1]}" if frag else "")
            + ("" if report.index_built else "; no index yet (the first `suzent index` applies the tombstones)")))
        for message in report.warnings:
            warn(message)
        for message in report.errors:
            out.print(f"[red]error[/red] {escape(message)}")
    if report.errors:
        raise typer.Exit(1)
