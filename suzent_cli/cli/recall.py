"""``suzent recall``: hybrid search with provenance."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app, settings_of
from .render import clip, emit_json, escape, out


@app.command("recall")
def recall_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(..., metavar="QUERY", help="What to remember."),
    mode: str = typer.Option("hybrid", "--mode", metavar="hybrid|vector|fts", help="hybrid (BM25 + vector, score fusion) | vector | fts."),
    limit: int = typer.Option(10, "--limit", "-n", metavar="N", help="How many hits."),
    model: Optional[str] = typer.Option(None, "--model", metavar="EMBEDDER", help="Embedder (must be the one the index was built with)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON hits."),
) -> None:
    """Search memory; every hit names its source file, line or chunk, date and session.

    Example: suzent recall "what does the user drink in the morning" --limit 5
    """
    from ..recall import recall  # noqa: PLC0415

    settings = settings_of(ctx)
    embedder = None
    if mode != "fts":
        from ..index.api import embedder_name  # noqa: PLC0415
        from ..index.embed import load_embedder  # noqa: PLC0415

        embedder = load_embedder(embedder_name(settings, model))
    hits = recall(settings, embedder, query, mode=mode, limit=limit)
    if json_out:
        emit_json({"query": query, "mode": mode, "hits": [h.as_dict() for h in hits]})
        return
    if not hits:
        out.print("no memories found")
        return
    if not out.is_terminal:  # piped: one tab-separated line per hit, nothing wrapped
        for i, h in enumerate(hits, 1):
            typer.echo(f"{i}\t{h.score:.4f}\t{where(h)}\t{h.date or ''}\t{h.session or ''}\t{' '.join(h.content.split())}")
        return
    from rich.table import Table  # noqa: PLC0415

    table = Table(show_header=True, header_style="bold", expand=False)
    for col in ("#", "score", "memory", "source", "date", "session"):
        table.add_column(col, overflow="fold")
    for i, h in enumerate(hits, 1):
        table.add_row(str(i), f"{h.score:.4f}", escape(clip(h.content)), escape(where(h)), h.date or "",
                      escape(h.session or ""))
    out.print(table)


def where(hit) -> str:
    """Provenance for display: ``2026-06-01.md:5`` (line of a daily log), ``3_Personal/Food.md#2`` (chunk 2 of a
    page), or ``legacy`` for a row no markdown file owns."""
    name = hit.source_file or (hit.source.split(":", 1)[1] if hit.source else None)
    if name is None:
        return "legacy"
    if hit.locator is None:
        return name
    return f"{name}:{hit.locator}" if hit.source_type == "archive_log" else f"{name}#{hit.locator}"
