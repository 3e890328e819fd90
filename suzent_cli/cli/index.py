"""``suzent index``: bring the LanceDB search index up to date with the markdown tiers."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out


@app.command("index")
def index_cmd(
    ctx: typer.Context,
    full: bool = typer.Option(False, "--full", help="Re-read every file (legacy rows are never deleted)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Move the table to <home>/backups/ and build a fresh one (with the same embedder unless --model names another)."),
    model: Optional[str] = options.model("Embedder: all-MiniLM-L6-v2 (default), hash[:DIM], or a "
                                                              "local sentence-transformers model dir."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Index changed files (by mtime): daily-log facts, vault pages and core files; the only LanceDB writer.

    Example: suzent index --json
    """
    from suzent_cli.index.api import make_indexer, move_index_aside  # loads torch

    settings = settings_of(ctx)
    indexer = make_indexer(settings, model)  # a rebuild keeps the index's embedder unless --model names another
    if rebuild and not json_out:
        out.print(f"rebuilding with embedder {escape(indexer.embedder.name)}")
    backup = move_index_aside(settings) if rebuild else None
    if backup and not json_out:
        out.print(f"previous index moved to {escape(str(backup))}")
    if json_out or not out.is_terminal:
        report = indexer.run(full=full or rebuild)
    else:
        from rich.progress import Progress

        with Progress(transient=True, console=out.current()) as bar:  # its refresh thread prints too
            task = bar.add_task("indexing", total=None)

            def progress(done: int, total: int, key: str) -> None:
                bar.update(task, completed=done, total=total, description=f"indexing {key[:40]}")

            report = indexer.run(full=full or rebuild, progress=progress)
    if json_out:
        emit_json(report.as_dict() | {"backup": str(backup) if backup else None})
    else:
        out.print(f"checked {report.files_checked} file(s), updated {report.files_updated}, removed "
                  f"{report.files_removed}; rows +{report.rows_added} −{report.rows_removed} "
                  f"({report.embeddings} embeddings, {report.total_rows} rows in all"
                  + (f", {report.legacy_rows} legacy kept" if report.legacy_rows else "") + f") in {report.seconds:.2f}s")
        for message in report.warnings:
            out.print(f"[yellow]warning[/yellow] {escape(message)}")
        for source, error in report.errors:
            out.print(f"[red]error[/red] {escape(source)}: {escape(error)}")
    if report.errors:
        raise typer.Exit(1)
