"""Paragraph chunking of vault pages and core files (compatible with the original indexer), per-section
chunking of vault pages (:func:`chunk_sections`) and per-zone chunking of MEMORY.md (:func:`memory_chunks`)."""

from __future__ import annotations

import re

from suzent_cli.vault.claims import memory_stamp
from suzent_cli.vault.memory_md import text_zones
from suzent_cli.vault.pages import heading

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


def split_sections(text: str) -> list[tuple[str, str]]:
    """Split a page body at level-2 headings (``## Name``, :func:`suzent_cli.vault.pages.heading`): ``[(heading text, section text)]`` in page order.

    The text before the first ``##`` heading is the section ``""`` (it keeps any ``#`` title line); each other
    section's text starts with its heading line. ``###`` and deeper headings stay inside their section, and a
    ``##`` line inside a fenced code block (``` or ~~~) is not a heading. Sections with only whitespace are
    dropped; empty text → ``[]``.
    """
    sections: list[tuple[str, list[str]]] = [("", [])]
    fence: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.lstrip()
        if fence is None and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None and (h := heading(line)) and h[0] == 2:  # exactly level 2: "### x" stays inside
            sections.append((h[1], [line]))
            continue
        sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip()) for name, lines in sections if "\n".join(lines).strip()]


SHORT_PREAMBLE = 300
_LINK_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[\[[^\]]+\]\]|\[[^\]]*\]\([^)]*\))\s*[,;]?\s*$")


def _links_only(name: str, section: str) -> bool:
    """A ``## Related`` section holding nothing but links: navigation, not content, so it is not a chunk."""
    if name.strip().lower() != "related":
        return False
    body = [line for line in section.split("\n")[1:] if line.strip()]
    return all(_LINK_LINE.match(line) for line in body)


def chunk_sections(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[tuple[str, str]]:
    """Chunk a page per section: ``[(heading text, chunk)]``, each section chunked by :func:`chunk_paragraphs`.

    Two sections never share a chunk, and a heading line always stays with its section's first chunk (when the
    paragraph after it is too long to join it, the heading is prepended to that paragraph's chunk anyway, which
    may then exceed ``max_chars``). A section that is a heading with nothing under it yields no chunk, and a
    preamble made only of heading lines (the page's ``# Title``) is prepended to the first chunk of the next
    section instead of becoming a chunk of its own; so is a short preamble (≤ SHORT_PREAMBLE characters: a title
    and a one-line description). A ``## Related`` section of links only is navigation and yields no chunk.
    ``## Claims``/``## Previously``/``## History`` are chunked per claim (:func:`claim_chunks`), and a short
    preamble is dropped before them (the page title is in every row's search text).
    """
    sections = [(n, t) for n, t in split_sections(text) if not _links_only(n, t)]
    title = ""
    if len(sections) > 1 and sections[0][0] == "" and (len(sections[0][1]) <= SHORT_PREAMBLE or all(
            line.startswith("#") for line in sections[0][1].split("\n") if line.strip())):
        title = sections.pop(0)[1]  # a title (and a one-line description) joins the first section's first chunk
    out: list[tuple[str, str]] = []
    for name, section in sections:
        if name.strip().lower() in CLAIM_SECTIONS:
            out += [(name, c) for c in claim_chunks(section)]  # one row per claim: its own rank and evidence
            continue
        chunks = chunk_paragraphs(section, max_chars)
        if name:
            heading = section.split("\n", 1)[0].strip()
            if chunks and chunks[0] == heading:
                chunks = chunks[1:]
                if chunks:
                    chunks[0] = f"{heading}\n\n{chunks[0]}"
        if chunks and title:
            chunks[0], title = f"{title}\n\n{chunks[0]}", ""
        out += [(name, c) for c in chunks]
    if title and (len(title) > SHORT_PREAMBLE or not out):
        out.insert(0, ("", title))
    return out  # a short title left over (every section was claims) is in each row's search text anyway


CLAIM_SECTIONS = frozenset({"claims", "previously", "history"})


def claim_chunks(section: str) -> list[str]:
    """A claims section as one chunk per top-level bullet (with the lines nested under it); the prose between
    claims (a person's notes, callouts) is chunked by paragraph. The ``## heading`` line is not repeated: the
    caller puts the section name in the search text."""
    lines = section.split("\n")[1:] if section.startswith("##") else section.split("\n")
    chunks: list[str] = []
    prose: list[str] = []
    current: list[str] | None = None
    for line in lines:
        if re.match(r"^[-*+]\s+\S", line):
            if current:
                chunks.append("\n".join(current).strip())
            current = [line]
        elif current is not None and line[:1] in (" ", "\t") and line.strip():
            current.append(line)
        else:
            if current:
                chunks.append("\n".join(current).strip())
                current = None
            prose.append(line)
    if current:
        chunks.append("\n".join(current).strip())
    return chunks + chunk_paragraphs("\n".join(prose))


def memory_chunks(text: str) -> list[tuple[str, str]]:
    """``[(zone, chunk)]`` of a decoded MEMORY.md for the index (zone ``generated`` or ``manual``,
    :func:`suzent_cli.vault.memory_md.text_zones`): each zone chunked by paragraph on its own, so no chunk spans the
    marker; in the manual zone, runs of paragraphs carrying a qualifying ``human:`` stamp
    (:func:`suzent_cli.vault.claims.memory_stamp`) and runs without one are chunked apart, so a person's verification
    is not shared with unverified text merged next to it."""
    out: list[tuple[str, str]] = []
    for zone, ztext in text_zones(text):
        if zone == "generated":
            out += [(zone, c) for c in chunk_paragraphs(ztext)]
            continue
        runs: list[tuple[bool, list[str]]] = []
        for p in (p.strip() for p in ztext.replace("\r\n", "\n").split("\n\n")):
            if not p:
                continue
            stamped = memory_stamp(p) is not None
            if runs and runs[-1][0] == stamped:
                runs[-1][1].append(p)
            else:
                runs.append((stamped, [p]))
        out += [(zone, c) for _, ps in runs for c in chunk_paragraphs("\n\n".join(ps))]
    return out
