"""Best-effort "nearest known facts" for the extraction prompt (invariant 5: never blocks a write)."""

from __future__ import annotations

from typing import Callable

from .config import Settings


def known_facts_for(settings: Settings, limit: int = 10) -> Callable[[str], list[str]]:
    """A function ``text -> up to limit nearest known facts`` over the existing index, for capture.

    It runs BM25 only, so it loads lancedb but never torch or the embedding model; the offline extractor never
    calls it. Any failure — no index,
    locked, corrupt, another embedder — raises, and capture swallows it and extracts without context.
    """

    def lookup(text: str) -> list[str]:
        from .recall import recall  # noqa: PLC0415

        # Full-text only: no model load on the write path, and the classifier that reads this set compares
        # lexically anyway. The query is the turn's first 2,000 characters.
        return [h.content for h in recall(settings, None, text[:2000], mode="fts", limit=limit, log=False)]

    return lookup
