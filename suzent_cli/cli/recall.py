"""``suzent recall``: hybrid search with provenance."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app, settings_of
from .render import emit_json, escape, out


@app.command("recall")
def recall_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to remember."),
    mode: str = typer.Option("hybrid", "--mode", help="hybrid (vector + BM25, RRF) | vector | fts."),
    limit: int = typer.Option(10, "--limit", "-n", help="How many hits."),
    model: Optional[str] = typer.Option(None, "--model", help="Embedder (must be the one the index was built with)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON hits."),
) -> None:
    """Search memory; every hit names its source file, line or chunk, date and session.

    Example: suzent recall "what does the user drink in the morning" --limit 5
    """
    from ..recall import recall  # noqa: PLC0415

    settings = settings_of(ctx)
    embedder = None
    if mode != "fts":
        from ..index.embed import load_embedder  # noqa: PLC0415

        embedder = load_embedder(model or settings.embedder)
    hits = recall(settings, embedder, query, mode=mode, limit=limit)
    if json_out:
        emit_json({"query": query, "mode": mode, "hits": [h.as_dict() for h in hits]})
        return
    if not hits:
        out.print("no memories found")
        return
    from rich.table import Table  # noqa: PLC0415

    table = Table(show_header=True, header_style="bold", expand=False, box=None if not out.is_terminal else None)
    for col in ("#", "score", "memory", "source", "date", "session"):
        table.add_column(col, overflow="fold")
    for i, h in enumerate(hits, 1):
        where = f"{h.source_file or h.source or 'legacy'}:{h.locator}" if h.locator is not None else (h.source_file or "legacy")
        table.add_row(str(i), f"{h.score:.4f}", escape(h.content), escape(where), h.date or "", escape(h.session or ""))
    out.print(table)
