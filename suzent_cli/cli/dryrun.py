"""``suzent dry-run``: the real dream on a clone of the data, shown as a patch; the live data is left untouched."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from suzent_cli import errors as exit_codes
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, warn

EXIT_LIVE_CHANGED = exit_codes.LIVE_DATA_CHANGED
EXIT_HELP = ("Exit codes (the clone's run, as suzent dream): 0 ran (ingested, skipped a wedged batch, or linted), "
             "4 idle (nothing due; empty diff), 5 the run failed (not productive), 3 the clone's lock was held, "
             "2 bad configuration or input (--keep not empty, --output in a missing directory, …), "
             "1 the clone could not be built, "
             f"{EXIT_LIVE_CHANGED} live data changed while the dry run worked (a concurrent writer?).")


@app.command("dry-run", epilog=EXIT_HELP)
def dry_run_cmd(
    ctx: typer.Context,
    force: bool = typer.Option(False, "--force", help="Ingest pending logs now, ignoring min_facts/min_hours (as dream --force)."),
    lint: bool = typer.Option(False, "--lint", help="Run a lint pass instead of a dream tick (as suzent lint)."),
    engine: Optional[str] = typer.Option(None, "--engine", metavar="auto|offline|claude", help="Engine [dream.engine; auto: claude with an API key, else offline]."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the patch to FILE (atomically)."),
    keep: Optional[str] = typer.Option(None, "--keep", metavar="DIR", help="Keep the clone in DIR (new or empty); default: a temporary directory, removed."),
    json_out: bool = typer.Option(False, "--json", help="Print the result, changed files, index changes and patch as JSON."),
) -> None:
    """Review a dream before anything mutates: run the real dream on a clone and show its diff.

    Clones the home and every tier (the vault too when it lives elsewhere or behind a symlink), runs the real
    dream (gate, engine, watermark, reconcile, promote) or with --lint the lint pass on the clone, and prints a
    unified diff of every text file it changed plus the index rows added and removed per source. The live
    home, vault, memory dir and index are fingerprinted before and after and left byte-identical.

    Example: suzent dry-run --force --engine offline --output dream.patch
    """
    from suzent_cli.config import check_engine, dream_config  # noqa: PLC0415
    from suzent_cli.dryrun import check_keep, check_output, dry_run, write_patch  # noqa: PLC0415
    from suzent_cli.errors import ConfigInvalid, LiveDataChanged  # noqa: PLC0415

    settings = settings_of(ctx)
    if lint and force:
        raise ConfigInvalid("--force only applies to a dream tick, not to --lint")
    config = dream_config(settings, engine=engine)
    check_engine(settings, config)
    target = check_output(Path(output), settings.paths) if output else None
    keep_dir = check_keep(Path(keep), settings.paths) if keep else None
    try:
        report = dry_run(settings, config, env=os.environ, force=force, lint=lint, keep=keep_dir)
    except LiveDataChanged as exc:
        if exc.report is not None:
            _show(exc.report, json_out)
        raise
    if target is not None:
        write_patch(target, _patch_file(report, settings))
    _show(report, json_out, target)
    if keep_dir is not None:
        overriding = [k for k in ("SUZENT_MEMORY_DIR", "SUZENT_VAULT_DIR", "SUZENT_INDEX_DIR") if os.environ.get(k)]
        if overriding:
            warn(f"{', '.join(overriding)} is set: `suzent --home {keep_dir / 'home'} …` would use those live paths, "
                 "not the clone's; unset it (or pass --vault-dir/--memory-dir/--index-dir) to work on the clone")
    raise typer.Exit(report.result.exit_code)


def _show(report, json_out: bool, target: Path | None = None) -> None:
    from suzent_cli.cli.dream import _report  # noqa: PLC0415

    if json_out:
        emit_json(report.to_json())
        return
    _report(report.result, False)
    if not report.files:
        out.print("no file changed")
    else:
        out.print(escape(f"{len(report.files)} files changed:"))
        for f in report.files:
            what = "binary file changed" if f.binary else f"+{f.added_lines} -{f.removed_lines}"
            out.print(escape(f"  {f.status:<8} {f.path}  {what}"))
    if report.patch:
        if out.is_terminal and not out.no_color:
            from rich.text import Text  # noqa: PLC0415

            # the terminal's own colour for context lines (readable on light and dark themes)
            for line in report.patch.splitlines():
                style = ("bold" if line.startswith(("--- ", "+++ ")) else "green" if line.startswith("+")
                         else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
                out.print(Text(line, style=style), soft_wrap=True)
        else:  # piped or NO_COLOR: the patch byte for byte
            out.file.flush()
            sys.stdout.write(report.patch)
            sys.stdout.flush()
    _show_index(report.index)
    if report.clone is not None:
        out.print(escape(f"clone kept at {report.clone} (its config: {report.clone / 'home' / 'config.toml'})"))
    if target is not None:
        out.print(escape(f"patch written to {target}"))
    if report.live_changed:
        return  # the error line follows on stderr
    out.print(escape(f"live home unchanged ({report.verified_files} files verified)"))


def _show_index(index) -> None:
    if index.note and not index.by_source:
        out.print(escape(f"index: {index.note}"))
        return
    rows = f"{index.rows_before} → {index.rows_after} rows" if index.rows_before is not None else f"{index.rows_after} rows"
    if not index.by_source:
        out.print(escape(f"index: no rows added or removed ({rows})"))
        return
    out.print(escape(f"index: {rows}" + (f"; {index.note}" if index.note else "")))
    if out.is_terminal:
        from rich.table import Table  # noqa: PLC0415

        table = Table(show_header=True, header_style="bold", expand=False)
        for col in ("source", "added", "removed"):
            table.add_column(col, justify="left" if col == "source" else "right")
        for source, d in index.by_source.items():
            table.add_row(escape(source), f"+{d['added']}", f"-{d['removed']}")
        out.print(table)
        return
    for source, d in index.by_source.items():
        out.print(escape(f"  {source}\t+{d['added']}\t-{d['removed']}"))


def _patch_file(report, settings) -> str:
    """The ``--output`` file: a ``#`` comment header (what ran, index rows added/removed per source) that
    ``patch`` and ``git apply`` skip, then the unified diff."""
    from suzent_cli.cli.dream import _describe  # noqa: PLC0415

    head = [f"suzent dry-run of {settings.paths.home} at {settings.clock.isoformat(timespec='seconds')}",
            _describe(report.result)]
    index = report.index
    if index.note:
        head.append(f"index: {index.note}")
    for source, d in index.by_source.items():
        head.append(f"index {source}: +{d['added']} -{d['removed']} rows")
    head.append("apply with: patch -p1 (paths are home/…, memory/…, vault/…)")
    return "".join(f"# {' '.join(line.split())}\n" for line in head) + "\n" + report.patch
