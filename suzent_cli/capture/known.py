"""Best-effort recall set for a turn capture: the nearest known rows, shared by the extraction prompt and the
write-path classifier (invariant 5: never blocks a write)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from suzent_cli.config import Settings

if TYPE_CHECKING:
    from suzent_cli.index.store import ReadStore
    from suzent_cli.recall import Hit


def recall_set_for(settings: Settings, limit: int = 10, *, store: Callable[[], ReadStore] | None = None,
                   project_key: str | None = None) -> Callable[[str], list[Hit]]:
    """A function ``text -> up to limit nearest known rows`` (:class:`~suzent_cli.recall.Hit`, with ``content``,
    ``source`` = ``label:filename``, ``source_type``, ``source_file``, ``locator``, …) over the existing index.

    Full-text (BM25) only on the turn's first 2,000 characters: it loads lancedb but never torch or the embedding
    model, and is not logged to ``recall_log.jsonl``. With no index yet it returns ``[]`` without importing
    lancedb. Any other failure — locked, corrupt, another embedder — raises; capture swallows it, extracts
    without context and classifies every fact ``new``. ``store()``: gives an already open store to search (a warm
    server's) instead of opening one per lookup. ``project_key``: the project the turn was said in; the set holds
    the person's rows and that project's only (:func:`suzent_cli.scope.scopes_for`), so a fact is never classified
    as a confirmation or revision of another project's claim.
    """

    def lookup(text: str) -> list[Hit]:
        from suzent_cli.index.store import table_exists  # light: lancedb is imported lazily

        if not table_exists(settings.paths.index_dir):
            return []
        from suzent_cli.recall import Filters, recall
        from suzent_cli.scope import scopes_for

        return recall(settings, None, text[:2000], mode="fts", limit=limit, log=False,
                      store=store() if store is not None else None, pending=False,
                      filters=Filters(scopes=scopes_for(project_key)))

    return lookup


def known_facts_for(settings: Settings, limit: int = 10) -> Callable[[str], list[str]]:
    """Like :func:`recall_set_for`, texts only (``Hit.content``): for callers that only need the prompt's list."""
    rows = recall_set_for(settings, limit)
    return lambda text: [h.content for h in rows(text)]
