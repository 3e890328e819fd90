"""Paragraph chunking of vault pages and core files (compatible with the original indexer)."""

from __future__ import annotations

MAX_CHUNK_CHARS = 1200


def chunk_paragraphs(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[str]:
    """Split ``text`` on blank lines and greedily merge paragraphs into chunks of at most ``max_chars``.

    A paragraph longer than ``max_chars`` stays whole. Empty text → ``[]``. Chunks are joined with ``\\n\\n``.
    """
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n")]
    paragraphs = [p for p in paragraphs if p]
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for p in paragraphs:
        if current and size + len(p) > max_chars:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(p)
        size += len(p) + 2
    if current:
        chunks.append("\n\n".join(current))
    return chunks
