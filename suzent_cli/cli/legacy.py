"""``suzent retire-legacy``: check, export and delete the index rows no markdown file backs."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import clip, emit_json, err, escape, out, warn

EXIT_HELP = ("Exit codes: 0 done (check, export, apply, or no legacy rows), 1 --apply refused because rows are "
             "recorded nowhere in markdown (run --export first) or the index failed, 2 bad options (or --apply "
             "without --yes when stdin is not a terminal), 3 a lock could not be taken.")


@contextlib.contextmanager
def _bar(what: str, quiet: bool) -> Iterator:
    """A rich progress bar on stderr when it is a terminal (and not --json); else a silent no-op callback."""
    if quiet or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task(what, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _confirm(plan) -> bool:
    from suzent_cli.errors import InputInvalid

    if not sys.stdin.isatty():
        raise InputInvalid(f"--apply would delete {len(plan.rows)} legacy row(s); pass --yes to confirm when stdin "
                           "is not a terminal")
    return typer.confirm(f"Delete {len(plan.rows)} legacy row(s) from the {plan.schema} index (a backup is taken first)?")


def _render_check(plan, sample: int) -> None:
    data = plan.to_json(sample)
    if not data["legacy_rows"]:
        where = "no search index" if data["schema"] == "none" else f"the {data['schema']} index has none"
        out.print(escape(f"no legacy rows ({where}): nothing to retire"))
        return
    out.print(escape(f"{data['legacy_rows']} legacy row(s) in the {data['schema']} index (dim {data['dim']}): "
                     f"{data['recorded']} recorded in markdown"
                     + (f" ({data['prefix_only']} by their first 90 characters only: exported again, their whole text "
                        "is nowhere)" if data["prefix_only"] else "")
                     + f", {data['unrecorded']} recorded nowhere, "
                     f"{data['empty']} empty, {data['forgotten']} forgotten; {data['exported']} exported so far "
                     f"({data['logs_scanned']} logs, {data['pages_scanned']} pages scanned in {data['seconds']:.2f}s)"))
    for row in data["sample"]:
        out.print(escape(f"  {row['id']}  {(row['created_at'] or 'no date')[:16]}  "
                         f"{clip(' '.join((row['content'] or '').split()), 100)}"))
    if data["unrecorded"] or data["prefix_only"]:
        out.print("next: suzent retire-legacy --export   (then suzent dream, then --apply)")
    else:
        out.print("next: suzent retire-legacy --apply   (every legacy row is recorded in markdown)")


@app.command("retire-legacy", epilog=EXIT_HELP)
def retire_legacy_cmd(
    ctx: typer.Context,
    export: bool = typer.Option(False, "--export", help="Append each legacy row recorded nowhere to the daily log of its date (tagged legacy, legacy:<id>)."),
    apply: bool = typer.Option(False, "--apply", help="Back up the table, then delete the legacy rows; refused while any is recorded nowhere."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --apply: do not ask for confirmation."),
    sample: str = typer.Option("5", "--sample", metavar="N", help="Rows recorded nowhere to show in the check [5]."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Retire the index rows no markdown file backs (e.g. the original suzent app's): check (default, read-only),
    then --export them into the daily logs, let the dream fold them, then --apply to delete them after a backup.

    Example: suzent retire-legacy --json && suzent retire-legacy --export && suzent dream --force && suzent retire-legacy --apply
    """
    from suzent_cli import legacy
    from suzent_cli.errors import InputInvalid

    if export and apply:
        raise InputInvalid("--export and --apply are separate steps: give one of them")
    if yes and not apply:
        raise InputInvalid("--yes only applies to --apply")
    if not sample.isdigit():
        raise InputInvalid(f"--sample must be a whole number ≥ 0, got {sample!r}")
    settings = settings_of(ctx)
    with _bar("checking legacy rows", json_out) as progress:
        plan = legacy.check(settings, progress=progress)
    if export:
        with _bar("exporting legacy rows", json_out) as progress:
            report = legacy.export(settings, progress=progress, plan=plan)
        _render_export(report, json_out)
    elif apply:
        from suzent_cli.errors import LegacyUnexported

        try:
            report = legacy.apply(settings, plan=plan, confirm=None if yes else _confirm)
        except LegacyUnexported as exc:
            if json_out:  # the summary on stdout too; the one-line error follows on stderr
                emit_json({"refused": True, "legacy_rows": len(plan.rows), "unrecorded": len(exc.rows),
                           "rows": exc.rows})
            raise
        _render_apply(report, json_out)
    elif json_out:
        emit_json(plan.to_json(int(sample)))
    else:
        _render_check(plan, int(sample))


def _render_export(report, json_out: bool) -> None:
    if json_out:
        emit_json(report.to_json())
        return
    span = f" ({report.days[0]} … {report.days[-1]})" if report.days else ""
    out.print(escape(f"exported {report.exported} legacy row(s) into {len(report.days)} daily log(s){span}; "
                     f"{report.already_exported} already exported, {report.already_recorded} already in markdown, "
                     f"{report.duplicates} duplicate(s), {report.not_needed} empty or forgotten, "
                     f"{len(report.skipped)} skipped"))
    for row in report.skipped:
        out.print(escape(f"  skipped {row['id']}: {row['reason']}: {clip(' '.join((row['content'] or '').split()), 80)}"))
    for message in report.warnings:
        warn(message)
    if report.exported:
        out.print("next: suzent dream   (folds them into the vault), then suzent retire-legacy --apply")


def _render_apply(report, json_out: bool) -> None:
    if json_out:
        emit_json(report.to_json())
        return
    if not report.legacy_rows:
        out.print("no legacy rows: nothing to do")
        return
    if report.cancelled:
        out.print("cancelled: nothing changed")
        return
    out.print(escape(f"deleted {report.deleted} legacy row(s); the table before is at {report.backup}"))
    out.print(escape(f"to restore it: {report.restore}"))
    if report.schema == "app":
        out.print("every remaining row was derived from a markdown file: `suzent index --rebuild` now replaces the table "
                  "safely (it moves it to <home>/backups/ and builds a fresh one)")
