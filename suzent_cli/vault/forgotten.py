"""What ``suzent forget`` removed, as one matcher every tier asks, and the one vault scrub.

The record is the tombstone file (:func:`suzent_cli.vault.state.read_forgotten`: the texts a person forgot, reason
``forget``). This module is the one place that decides whether a text is forgotten:

* **the same words** (:meth:`Forgotten.same`): a daily-log fact or a restatement whose text, normalized
  (:func:`fact_key`: case, spacing and a trailing full stop aside), is a forgotten text. Such a log row is never
  indexed (the indexer's tombstone filter) — a later capture of the same words stays hidden.
* **held** (:meth:`Forgotten.covers`): a claim or a line whose text equals a forgotten text or contains it
  verbatim (whole words; texts of fewer than :data:`MIN_CONTAIN` words only by equality, so forgetting "Lisbon"
  hides no "Moved to Lisbon"). Claim markers
  (``(confirmed Nx, last D)``, ``(until D)``, ``· source: …``), list bullets, headings and ``<!-- … -->`` stamps
  are not part of a line's text (:func:`line_text`). The vault and MEMORY.md's generated zone never hold such a
  text; the dream never folds one in; recall drops such a line from a vault or core-file row.

:func:`scrub_vault` removes held claim bullets (and the notes nested under them) from ``## Claims`` and
``## Previously`` of every content page, through the page writer. A claim holding the text only in its
change-over-time tail (``X (since D); previously: <text>``, as the rules engine writes a changed value) is
rewritten without that tail instead: its current value ``X`` is not what was forgotten. It is called by ``forget`` and by the dream
runner after every engine pass, under the consolidation lock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from suzent_cli.text import normalize

MIN_CONTAIN = 3  # words: a shorter forgotten text hides only lines that are exactly it ("tea" hides no "steam")
_PREVIOUSLY = re.compile(r"\s*;\s*previously:\s*", re.I)  # the change-over-time tail of a claim (dream.rules)
_LEAD = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|#{1,6}\s+)?")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SECTIONS = ("Claims", "Previously")


def fact_key(text: str) -> str:
    """The comparison key of a fact text: :func:`normalize` (lowercase, single spaces) without trailing
    ``.``/``!``/spaces, so "Has a cat." and "has a  cat" are the same words."""
    return normalize(text).rstrip(" .!")


def line_text(line: str) -> str:
    """The key (:func:`fact_key`) of the statement on one markdown line: a claim bullet without its markers, any
    other line without its bullet, quote, heading marks and HTML comments (a ``verified:`` stamp)."""
    from suzent_cli.vault.pages import parse_claim  # pages has no heavy imports at module level

    stripped = _COMMENT.sub(" ", line).strip()
    claim = parse_claim(stripped)
    return fact_key(claim.text if claim else _LEAD.sub("", stripped))


class Forgotten:
    """A set of forgotten texts and the matching rules of the module doc. Falsy when empty (nothing to check)."""

    def __init__(self, texts: Iterable[str]):
        self.keys = frozenset(k for k in (fact_key(t) for t in texts) if k)
        long = sorted((k for k in self.keys if len(k.split()) >= MIN_CONTAIN), key=len, reverse=True)
        self._within = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, long)) + r")(?!\w)") if long else None

    @classmethod
    def from_state(cls, state_dir: Path) -> Forgotten:
        """The texts forgotten so far, from ``<state_dir>/tombstones.jsonl`` (reason ``forget``)."""
        from suzent_cli.vault.state import read_forgotten

        return cls(read_forgotten(state_dir))

    def __bool__(self) -> bool:
        return bool(self.keys)

    def same(self, text: str) -> bool:
        """Whether fact ``text`` is a forgotten text in the same words (a log row or restatement to hide)."""
        return bool(self.keys) and fact_key(text) in self.keys

    def covers(self, text: str) -> bool:
        """Whether claim/fact ``text`` equals a forgotten text or contains one verbatim (module doc)."""
        if not self.keys:
            return False
        key = fact_key(text)
        return key in self.keys or bool(self._within and self._within.search(key))

    def holds(self, snippet: str) -> bool:
        """Whether a multi-line ``snippet`` (a recall-log entry) as a whole, or any line of it, is :meth:`covers`."""
        return bool(self.keys) and (self.covers(snippet) or any(self.covers_line(ln) for ln in snippet.split("\n")))

    def covers_line(self, line: str) -> bool:
        """:meth:`covers` for one markdown line (:func:`line_text`)."""
        return bool(self.keys) and self.covers(line_text(line))

    def scrub_chunk(self, chunk: str) -> str:
        """``chunk`` without the lines it holds a forgotten text on (``""`` when none is left but blank lines)."""
        if not self.keys:
            return chunk
        kept = [line for line in chunk.split("\n") if not (line.strip() and self.covers_line(line))]
        return "\n".join(kept).strip("\n") if any(line.strip() for line in kept) else ""


@dataclass
class ScrubbedClaim:
    """One claim bullet :func:`scrub_vault` removes (or would): the page (vault-relative), section and line;
    ``now`` is the line it is rewritten to when only its ``; previously: …`` tail held the text (else None)."""

    page: str
    section: str
    line: str
    now: str | None = None


def held_claims(vault_dir: Path, forgotten: Forgotten) -> tuple[list[ScrubbedClaim], list[str]]:
    """The claim bullets of ``## Claims``/``## Previously`` that hold a forgotten text, on every content page,
    and the pages that could not be read (their names, with the reason). Read-only."""
    found: list[ScrubbedClaim] = []
    problems: list[str] = []
    for path, page, error in _pages(vault_dir, forgotten):
        if error:
            problems.append(error)
        else:
            found += _scrub_page(page, path.relative_to(vault_dir).as_posix(), forgotten)  # in memory only
    return found, problems


def scrub_vault(vault_dir: Path, forgotten: Forgotten) -> tuple[list[ScrubbedClaim], list[str]]:
    """Remove every claim bullet holding a forgotten text (and the lines nested under it) from ``## Claims`` and
    ``## Previously`` of every content page (one holding it only in its ``; previously: …`` tail loses the tail),
    each page rewritten atomically through :func:`suzent_cli.vault.pages.write_page` (nothing else on it changes).
    A page a person edits meanwhile is scrubbed again from what is on disk then, so neither the edit nor the
    scrub is lost. Returns ``(claims removed or rewritten (``now`` set), problems)``: a page that cannot be read
    or parsed (not valid YAML frontmatter) is never rewritten and is named in ``problems``. The caller holds the
    consolidation lock (``.state/.dream.lock``). Raises OSError when a page cannot be written (pages already
    scrubbed stay scrubbed; a re-run finishes the rest)."""
    from suzent_cli.vault.pages import write_page

    removed: list[ScrubbedClaim] = []
    problems: list[str] = []
    for path, page, error in _pages(vault_dir, forgotten):
        if error:
            problems.append(error)
            continue
        rel = path.relative_to(vault_dir).as_posix()
        dropped = _scrub_page(page, rel, forgotten)
        if not dropped:
            continue

        def refold(fresh, rel=rel):  # the page changed since it was read: scrub what is there now
            nonlocal dropped
            dropped = [] if fresh is None else _scrub_page(fresh, rel, forgotten)
            return fresh if dropped else None

        write_page(path, page, refold=refold)
        removed += dropped
    return removed, problems


def _scrub_page(page, rel: str, forgotten: Forgotten) -> list[ScrubbedClaim]:
    """Drop (or rewrite) the claims of ``page`` (a :class:`~suzent_cli.vault.pages.Page`, changed in memory) that
    hold a forgotten text; returns them."""
    dropped: list[ScrubbedClaim] = []
    for section in _SECTIONS:
        lines = page.section(section)
        if lines is None:
            continue
        kept, gone = _held(lines, forgotten)
        if gone:
            page.set_section(section, kept)
            dropped += [ScrubbedClaim(rel, section, line, now) for line, now in gone]
    return dropped


def _pages(vault_dir: Path, forgotten: Forgotten):
    """``(path, page, None)`` for each content page whose raw text may hold a forgotten text (a cheap
    pre-filter), ``(path, None, problem)`` for one that cannot be read or parsed."""
    from suzent_cli.errors import SuzentError
    from suzent_cli.files import read_text
    from suzent_cli.vault import content_pages
    from suzent_cli.vault.pages import read_page

    if not forgotten or not vault_dir.is_dir():
        return
    for path in content_pages(vault_dir):
        rel = path.relative_to(vault_dir).as_posix()
        try:
            text = normalize(read_text(path))
        except (OSError, UnicodeError) as exc:
            yield path, None, f"{rel}: cannot be read ({exc})"
            continue
        if not any(k in text for k in forgotten.keys):
            continue
        try:
            yield path, read_page(path), None
        except (SuzentError, OSError, UnicodeError) as exc:
            yield path, None, f"{rel}: {' '.join(str(exc).split())[:160]} (not rewritten)"


def _held(lines: list[str], forgotten: Forgotten) -> tuple[list[str], list[tuple[str, str | None]]]:
    """``(lines kept, [(claim bullet, its rewrite or None)])``: a top-level claim bullet whose own text holds a
    forgotten text goes with the indented lines under it; one holding it only in its ``; previously: …`` tail is
    kept without that tail (markers and nested notes stay); every other line stays."""
    from suzent_cli.vault.pages import parse_claim

    kept: list[str] = []
    gone: list[str] = []
    skipping = False
    for line in lines:
        if skipping and line[:1] in (" ", "\t") and line.strip():
            continue  # a note nested under a removed claim
        skipping = False
        claim = parse_claim(line)
        if claim is not None and forgotten.covers(claim.text):
            current = _PREVIOUSLY.split(claim.text, maxsplit=1)[0].strip()
            if current != claim.text and current and not forgotten.covers(current):
                now = line.replace(claim.text, current, 1)
                gone.append((line, now))
                kept.append(now)
                continue
            gone.append((line, None))
            skipping = True
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    return kept, gone
