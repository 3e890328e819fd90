"""Best-effort "nearest known facts" for the extraction prompt (invariant 5: never blocks a write)."""

from __future__ import annotations

from typing import Callable

from .config import Settings


def known_facts_for(settings: Settings, limit: int = 10) -> Callable[[str], list[str]]:
    """A function ``text -> up to limit nearest known facts`` over the existing index, for capture.

    Heavy imports happen only when it is called (the offline extractor never calls it). Any failure — no index,
    locked, corrupt, another embedder — raises, and capture swallows it and extracts without context.
    """

    def lookup(text: str) -> list[str]:
        from .errors import IndexMissing  # noqa: PLC0415
        from .index.store import table_exists  # noqa: PLC0415

        if not table_exists(settings.paths.index_dir):  # checked before paying for the model load
            raise IndexMissing("no search index yet")
        from .index.embed import load_embedder  # noqa: PLC0415
        from .recall import recall  # noqa: PLC0415

        embedder = load_embedder(settings.embedder)
        return [h.content for h in recall(settings, embedder, text[:2000], mode="hybrid", limit=limit, log=False)]

    return lookup
