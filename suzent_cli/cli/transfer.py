"""``suzent import`` and ``suzent export``: memories from elsewhere into the daily logs, and the memory out
(:mod:`suzent_cli.transfer`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, plural, warn

SOURCE_HELP = "claude-code|claude-md|mem0|basic-memory|claude-mem|suzent"


@app.command("import")
def import_cmd(
    ctx: typer.Context,
    source: str = typer.Argument(..., metavar="SOURCE", help=f"Where the memories come from: {SOURCE_HELP}."),
    path: Optional[str] = typer.Argument(None, metavar="[PATH]", help="The file or folder (default: the source's "
                                         "usual place: ~/.claude/projects, the current directory, "
                                         "~/.claude-mem/claude-mem.db)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be written; write nothing."),
    json_out: bool = options.json_out("Print a JSON summary (with --dry-run, every fact that would be written)."),
) -> None:
    """Import memories from another tool into the daily logs, through the write path.

    Each memory is screened like a capture (secrets redacted, markup cut, planted instructions tagged), keeps its
    original date when the source has one, its scope (its project, or the person's) and its provenance tag
    import:SOURCE:FILE:LINE. Running it again imports only what is new. The dream folds the imported lines like
    any other. Sources and their formats: docs/import.md.

    Example: suzent import mem0 ~/Downloads/mem0-export.json --dry-run
    """
    from suzent_cli.transfer import run_import

    report = run_import(settings_of(ctx), source, path, dry_run=dry_run)
    if json_out:
        emit_json(report.to_json())
        return
    for w in report.warnings:
        warn(w)
    if dry_run:
        for p in report.new:
            tags = f" `{' '.join(p.fact.tags)}`" if p.fact.tags else ""
            out.print(escape(f"  {p.day.isoformat()} {p.time}  - [{p.fact.category}] {p.fact.content}{tags}"))
    skipped = "".join(f"; left out {n} {why}" for why, n in sorted(report.skipped.items()))
    empty = f"; {report.empty} empty after screening" if report.empty else ""
    empty += f"; {report.present} already in memory (the same words)" if report.present else ""
    verb = "would write" if dry_run else "wrote"
    entries = f"{report.entries} log entr{'y' if report.entries == 1 else 'ies'}"
    where = (f" ({entries} on {plural(len(report.days), 'day')})"
             if report.new else "")
    out.print(escape(f"{source}: {len(report.new)} new, {report.already} already imported{empty}{skipped}; "
                     f"{verb} {len(report.new)}{where}" + (" (--dry-run: nothing written)" if dry_run else "")))


@app.command("export")
def export_cmd(
    ctx: typer.Context,
    fmt: str = typer.Option("jsonl", "--format", metavar="jsonl|markdown|claude-code",
                            help="jsonl: one JSON object per claim or unfolded fact; markdown: a page per scope; "
                                 "claude-code: a Claude Code auto-memory folder per project."),
    out_path: Optional[str] = typer.Option(None, "--out", metavar="PATH",
                                           help="Write here (a file for jsonl, else a folder; required for "
                                                "claude-code). Default: stdout."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder, or replace a file."),
    json_out: bool = options.json_out("Print a JSON summary (counts, files written) instead of the export."),
) -> None:
    """Export every current claim with its lifecycle, provenance and scope, and the facts not yet consolidated.

    Read-only over the vault, the daily logs and the state. What a person forgot, tombstoned lines and facts
    tagged planted are never exported. `suzent import suzent FILE` reads the jsonl back.

    Example: suzent export --format claude-code --out ~/memory-export
    """
    from suzent_cli.errors import InputInvalid
    from suzent_cli.transfer.export import FORMATS, check_out, collect, render, write_out

    settings = settings_of(ctx)
    if fmt not in FORMATS:
        raise InputInvalid(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    target = Path(out_path).expanduser().absolute() if out_path else None
    if target is None and fmt == "claude-code":
        raise InputInvalid("--format claude-code writes a folder: give --out PATH")
    if target is not None:
        check_out(target, fmt, force)
    here = None
    if fmt == "claude-code":
        from suzent_cli.scope import identify

        here = identify(Path.cwd())
    report = collect(settings)
    rendered = render(report.records, fmt, here)
    if target is not None:
        report.files = write_out(target, rendered)
    elif not json_out:
        text = rendered if isinstance(rendered, str) else "\n".join(
            f"<!-- {name} -->\n{body}" for name, body in sorted(rendered.items()))
        sys.stdout.write(text)
        sys.stdout.flush()
    for w in report.warnings:
        warn(w)
    if json_out:
        emit_json(report.to_json())
    elif target is not None:
        left = "".join(f"; left out {n} {why}" for why, n in sorted(report.left_out.items()))
        out.print(escape(f"exported {plural(len(report.records), 'record')} to {target} "
                         f"({plural(len(report.files), 'file')}){left}"))
