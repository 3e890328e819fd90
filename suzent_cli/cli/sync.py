"""``suzent sync``: one memory on several machines through a git remote, and folder-sync conflict copies folded back
(:mod:`suzent_cli.sync`, docs/sync.md)."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, warn


@app.command("sync")
def sync_cmd(
    ctx: typer.Context,
    remote: Optional[str] = typer.Option(None, "--remote", metavar="URL",
                                         help="The git remote to sync with; remembered for the next syncs."),
    fold_conflicts: bool = typer.Option(False, "--fold-conflicts",
                                        help="Only fold folder-sync conflict copies back (no git, no remote)."),
    no_index: bool = typer.Option(False, "--no-index", help="Leave the index as it is (suzent index later)."),
    json_out: bool = options.json_out("Print JSON: commits, files merged, conflicts folded, lines sent and "
                                      "received, files written, indexed."),
) -> None:
    """Sync this home's memory with a git remote: commit, pull, merge, push, index what changed.

    Daily logs, MEMORY.md/persona.md/user.md, the vault's pages and log.md, the tombstones and confirmations
    travel; the index, locks, the spool, server files and the dream's retry state never do. Two machines'
    lines of one day merge with none lost or duplicated; a forget on one machine is total on every machine after
    its next sync; a person's page edit is never lost. One machine dreams (sync.dream). Folder-sync conflict
    copies (Syncthing, Dropbox, iCloud, OneDrive) are folded back first. Exit 1 with one line when the remote
    cannot be reached or refuses the push (the local commit is kept), 3 when another sync runs on this home.

    Example: suzent sync --remote git@github.com:me/memory.git
    """
    from suzent_cli.config import check_value, setting
    from suzent_cli.sync import SyncFailed, fold_only, sync

    settings = settings_of(ctx)
    check_value(setting("sync.dream"), settings.sync_dream, "sync.dream")
    try:
        if fold_conflicts:
            report = fold_only(settings, index=not no_index)
        else:
            report = sync(settings, remote=remote, index=not no_index)
    except SyncFailed as exc:
        partial = getattr(exc, "report", None)
        if json_out and partial is not None:
            emit_json(partial.to_json())
        elif partial is not None:
            for line in partial.warnings:
                warn(line)
        raise
    if json_out:
        emit_json(report.to_json())
        return
    _show(report)


def _show(report) -> None:
    for line in report.warnings:
        warn(line)
    for c in report.conflicts_folded:
        into = f" into {c['into']} (+{c['lines_added']} lines)" if c.get("into") else ""
        out.print(escape(f"conflict copy {c['copy']}{into}; moved to {c['moved_to']}"))
    if report.remote is None:
        out.print(f"folded {len(report.conflicts_folded)} conflict copies")
        return
    if report.recovered:
        out.print(escape(f"recovered: {report.recovered}"))
    state = "pushed" if report.pushed else "fast-forward" if report.fast_forward else "up to date"
    out.print(escape(f"synced with {report.remote}: {state}; lines sent {report.lines_sent}, received "
                     f"{report.lines_received}; files merged {len(report.files_merged)}, written "
                     f"{len(report.written)}" + (f", indexed {report.indexed}" if report.indexed is not None else "")))
    who = "this machine" if report.dreams else report.dreamer or "nobody"
    out.print(escape(f"dreams: {who}"))
