"""``suzent dry-run``: the real dream on a clone of the data, shown as a patch; the live data is left untouched."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from suzent_cli import errors
from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import patch_file_text, print_dry_run, warn

EXIT_LIVE_CHANGED = errors.LIVE_DATA_CHANGED
EXIT_HELP = ("Exit codes (the clone's run, as suzent dream): 0 ran (ingested, skipped a wedged batch, or linted), "
             "4 idle (nothing due; empty diff), 5 the run failed (not productive), 3 the clone's lock was held, "
             "2 bad configuration or input (--keep not empty, --output in a missing directory, …), "
             "1 the clone could not be built, "
             f"{EXIT_LIVE_CHANGED} live data changed while the dry run worked (a concurrent writer?).")


@app.command("dry-run", epilog=EXIT_HELP)
def dry_run_cmd(
    ctx: typer.Context,
    force: bool = options.force("Ingest pending logs now, ignoring min_facts/min_hours (as dream --force)."),
    lint: bool = typer.Option(False, "--lint", help="Run a lint pass instead of a dream tick (as suzent lint)."),
    engine: Optional[str] = options.engine("Engine [dream.engine; auto: claude with an API key, else offline]."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the patch to FILE (atomically)."),
    keep: Optional[str] = typer.Option(None, "--keep", metavar="DIR", help="Keep the clone in DIR (new or empty); default: a temporary directory, removed."),
    json_out: bool = options.json_out("Print the result, changed files, index changes and patch as JSON."),
) -> None:
    """Review a dream before anything mutates: run the real dream on a clone and show its diff.

    Clones the home and every tier (the vault too when it lives elsewhere or behind a symlink), runs the real
    dream (gate, engine, watermark, reconcile, promote) or with --lint the lint pass on the clone, and prints a
    unified diff of every text file it changed plus the index rows added and removed per source. The live
    home, vault, memory dir and index are fingerprinted before and after and left byte-identical.

    Example: suzent dry-run --force --engine offline --output dream.patch
    """
    from suzent_cli.config import check_engine, dream_config
    from suzent_cli.dryrun import check_keep, check_output, dry_run, write_patch
    from suzent_cli.errors import ConfigInvalid, LiveDataChanged

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
            print_dry_run(exc.report, json_out)
        raise
    if target is not None:
        write_patch(target, patch_file_text(report, settings))
    print_dry_run(report, json_out, target)
    if keep_dir is not None:
        overriding = [k for k in ("SUZENT_MEMORY_DIR", "SUZENT_VAULT_DIR", "SUZENT_INDEX_DIR") if os.environ.get(k)]
        if overriding:
            warn(f"{', '.join(overriding)} is set: `suzent --home {keep_dir / 'home'} …` would use those live paths, "
                 "not the clone's; unset it (or pass --vault-dir/--memory-dir/--index-dir) to work on the clone")
    raise typer.Exit(report.result.exit_code)
