"""Vault pages as the dream reads and writes them: YAML frontmatter, ``##`` sections, claim bullets, links.

A claim is one bullet in a page's ``## Claims`` section (or ``## Previously`` once replaced)::

    - Lives in Berlin (confirmed 3x, last 2026-06-09) · source: 2026-06-01.md:5
    - Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7

``confirmed Nx`` counts how often the claim was stated; ``last`` is the date of the latest statement; ``source`` is
the daily log line it was first recorded at (provenance). A bullet a person wrote without these parts is still a
claim. Unknown frontmatter keys and sections are kept as they are: a page written by a person survives a rewrite
with only the parts the dream owns changed.

A page is never rewritten from a guess: one whose frontmatter does not load (invalid YAML, a list or a string
instead of a mapping, a bound of :mod:`suzent_cli.vault.frontmatter` exceeded) raises :class:`DreamFailed` on read and is
left as it is. A person's edit is never lost: :func:`write_page` rewrites atomically under the vault's page lock
(:func:`pages_lock`) and, when the file on disk is no longer the one the page was read from, folds again from what
is there now (or leaves the file alone). Page names are matched case-insensitively (:func:`existing_case`), so
``Tools.md`` and ``TOOLS.md`` are one page on any filesystem.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.errors import DreamFailed
from suzent_cli.files import update_file
from suzent_cli.text import normalize
from suzent_cli.vault import frontmatter
from suzent_cli.vault.state import PAGES_LOCK, STATE_DIR, state_dir_of

CLAIMS = "Claims"
PREVIOUSLY = "Previously"
RELATED = "Related"

_SOURCE_RE = re.compile(r"\s+·\s+source:\s+(\d{4}-\d{2}-\d{2}\.md:\d+)\s*$")
_UNTIL_RE = re.compile(r"\s+\(until (\d{4}-\d{2}-\d{2})\)\s*$")
_MARKER_RE = re.compile(r"\s+\(confirmed (\d+)x, last (\d{4}-\d{2}-\d{2})\)\s*$")
_BULLET_RE = re.compile(r"^[-*+]\s+(?!\[[ xX]\]\s)(.*\S)\s*$")  # top-level only: nested bullets are notes
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*\r?$")  # see heading()
WIKILINK_RE = re.compile(r"(?<!!)\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
MDLINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+\.md)(?:#[^)]*)?\)")


@dataclass
class Claim:
    """One claim bullet. ``count``/``last`` are None on a bullet without a confirmation marker."""

    text: str
    count: int | None = None
    last: dt.date | None = None
    source: str | None = None
    until: dt.date | None = None

    @property
    def key(self) -> str:
        """Comparison key: normalized text, without a trailing full stop."""
        return normalize(self.text).rstrip(" .")

    def render(self) -> str:
        out = f"- {self.text}"
        if self.count is not None and self.last is not None:
            out += f" (confirmed {self.count}x, last {self.last.isoformat()})"
        if self.until is not None:
            out += f" (until {self.until.isoformat()})"
        if self.source:
            out += f" · source: {self.source}"
        return out


_SINCE_RE = re.compile(r"\(since (\d{4}-\d{2}-\d{2})\)")
_SOURCE_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md:\d+$")


def claim_since(claim: Claim) -> dt.date | None:
    """The day a current claim became true: its ``(since D)``, else the day of the log line it cites (its
    ``source: YYYY-MM-DD.md:LINE``); None when it says neither."""
    m = _SINCE_RE.search(claim.text)
    if m:
        return meta_date(m.group(1))
    if claim.source and (m := _SOURCE_DAY_RE.match(claim.source)):
        return meta_date(m.group(1))
    return None


def parse_claim(line: str) -> Claim | None:
    """The claim on a top-level bullet line, or None otherwise (nested bullets and task checkboxes are not claims)."""
    m = _BULLET_RE.match(line)
    if not m:
        return None
    text = m.group(1)
    claim = Claim(text="")
    if s := _SOURCE_RE.search(text):
        claim.source, text = s.group(1), text[: s.start()]
    if u := _UNTIL_RE.search(text):
        claim.until, text = _date(u.group(1)), text[: u.start()]
    if c := _MARKER_RE.search(text):
        claim.count, claim.last, text = int(c.group(1)), _date(c.group(2)), text[: c.start()]
    claim.text = text.strip()
    return claim if claim.text else None


def meta_date(value: object) -> dt.date | None:
    """A frontmatter date — a YAML date or datetime, or an ISO date/datetime string — as a date; else None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        for parse in (dt.date.fromisoformat, lambda t: dt.datetime.fromisoformat(t).date()):
            try:
                return parse(text)
            except ValueError:
                continue
    return None


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


@dataclass
class Page:
    """A page: ``meta`` (frontmatter, key order kept) and ``body`` (markdown after it). ``origin`` is the bytes the
    page was parsed from (None for a page that is not on disk yet): :func:`write_page` compares it with the file."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    origin: bytes | None = field(default=None, repr=False, compare=False)

    # --- sections -------------------------------------------------------------------------------------------
    def section(self, name: str) -> list[str] | None:
        """Lines of the ``## name`` section (up to the next heading of level ≤ 2), or None when absent."""
        lines = self.body.split("\n")
        start = _find_heading(lines, name)
        if start is None:
            return None
        end = _section_end(lines, start)
        return lines[start + 1: end]

    def set_section(self, name: str, content: list[str], *, before: str | None = None) -> None:
        """Replace the ``## name`` section's lines with ``content`` (surrounded by one blank line each side);
        a missing section is added before ``## before`` when that exists, else at the end."""
        lines = self.body.rstrip("\n").split("\n") if self.body.strip() else []
        block = [""] + [c for c in content] + [""]
        start = _find_heading(lines, name)
        if start is not None:
            end = _section_end(lines, start)
            lines[start + 1: end] = block
        else:
            at = _find_heading(lines, before) if before else None
            new = [f"## {name}"] + block
            if at is None:
                if lines and lines[-1].strip():
                    lines.append("")
                lines.extend(new)
            else:
                lines[at:at] = new
        self.body = "\n".join(_squeeze(lines)).strip("\n") + "\n"

    def claims(self, name: str = CLAIMS) -> list[Claim]:
        """The claims of section ``name`` in page order (non-bullet lines are ignored)."""
        return [c for line in self.section(name) or [] if (c := parse_claim(line))]

    def links(self) -> list[str]:
        """Link targets on the page (wikilinks and ``.md`` markdown links), in order, as written."""
        text = self.body
        return [m.group(1).strip() for m in WIKILINK_RE.finditer(text)] + \
               [m.group(1).strip() for m in MDLINK_RE.finditer(text)]


def heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` of a markdown heading line, or None: one to six ``#``, then spaces or tabs, then the text
    without trailing spaces, tabs or closing ``#`` (``## Claims ##`` → ``(2, "Claims")``; a trailing ``\r`` is
    allowed). The one heading rule of the vault: page sections (:meth:`Page.section`) and the index's section
    chunks (:func:`suzent_cli.index.chunking.split_sections`) both split on it."""
    m = _HEADING_RE.match(line)
    return (len(m.group(1)), m.group(2)) if m else None


def _find_heading(lines: list[str], name: str | None) -> int | None:
    if not name:
        return None
    for i, line in enumerate(lines):
        h = heading(line)
        if h and h[0] == 2 and h[1].strip().lower() == name.lower():
            return i
    return None


def _section_end(lines: list[str], start: int) -> int:
    for j in range(start + 1, len(lines)):
        h = heading(lines[j])
        if h and h[0] <= 2:
            return j
    return len(lines)


def _squeeze(lines: list[str]) -> list[str]:
    """Collapse runs of blank lines to one."""
    out: list[str] = []
    for line in lines:
        if not line.strip() and out and not out[-1].strip():
            continue
        out.append(line.rstrip() if not line.strip() else line)
    return out


PAGE_LOCK_TIMEOUT = 30.0  # seconds to wait for the vault's page lock


def parse_page(data: bytes, name: str = "page") -> Page:
    """The page whose file holds ``data`` (undecodable bytes replaced), ``origin`` set to ``data``. Raises
    :class:`DreamFailed` naming ``name`` when its frontmatter does not load or is not a mapping
    (:func:`suzent_cli.vault.frontmatter.parse`): such a page is left alone, a person's page is never rewritten from a guess."""
    try:
        meta, body = frontmatter.parse(data.decode("utf-8", errors="replace"))
    except frontmatter.FrontmatterInvalid as exc:
        raise DreamFailed(f"{name}: {exc}") from None
    return Page(meta=dict(meta), body=body + ("\n" if body and not body.endswith("\n") else ""), origin=data)


def read_page(path: Path) -> Page:
    """Parse the page at ``path`` (:func:`parse_page`). Raises :class:`DreamFailed` when its frontmatter does not
    load or is not a mapping; OSError if unreadable."""
    return parse_page(path.read_bytes(), path.name)


def render_page(page: Page) -> str:
    """The page as text: ``---`` YAML frontmatter (keys in order) then the body, ending in one newline."""
    import yaml

    body = page.body.strip("\n") + "\n"
    if not page.meta:
        return body
    head = yaml.safe_dump(page.meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{head}---\n\n{body}"


def pages_lock(vault: Path) -> Path:
    """The lock every writer of vault pages holds while it rewrites one (rules engine, lint, the agent's tools)."""
    return state_dir_of(vault) / PAGES_LOCK


def _lock_for(path: Path) -> Path:
    """The page lock of the vault holding ``path``: the nearest folder above it with a ``.state`` folder."""
    for parent in path.parents:
        if (parent / STATE_DIR).is_dir():
            return pages_lock(parent)
    return path.with_name(f".{path.name}.lock")


Refold = Callable[[Page | None], Page | None]


def write_page(path: Path, page: Page, *, refold: Refold | None = None, lock_path: Path | None = None,
               timeout: float = PAGE_LOCK_TIMEOUT) -> bool:
    """Write ``page`` to ``path`` if its text differs from what is there, never over an edit made since the page
    was read. True if it wrote.

    Under the vault's page lock (``lock_path``, default :func:`pages_lock` of the vault above ``path``) the file is
    compared with ``page.origin``, and again just before the atomic rename (:func:`suzent_cli.files.update_file`).
    When it changed (a person appended a section, created or deleted the page meanwhile), ``refold`` is called with
    the page as it is now (None when it is gone) and its result is written instead — the caller folds its changes
    into it again; None from ``refold``, or no ``refold``, leaves the file as it is (False). Raises
    :class:`DreamFailed` when the changed file no longer parses (it is left as it is), :class:`LockTimeout` or
    OSError.
    """
    rendered = render_page(page).encode("utf-8")

    def merge(current: bytes | None) -> bytes | None:
        if current == page.origin:
            return rendered
        if refold is None:
            return None
        fresh = None if current is None else parse_page(current, path.name)
        again = refold(fresh)
        return None if again is None else render_page(again).encode("utf-8")

    status, _ = update_file(path, merge, lock_path=lock_path or _lock_for(path), timeout=timeout)
    return status == "written"


INDEX = "index.md"


def update_page(vault: Path, path: Path, merge: Callable[[bytes | None], bytes | None]) -> tuple[str, bytes | None]:
    """Rewrite the vault file ``path`` to ``merge(current bytes)`` under the vault's page lock
    (:func:`pages_lock`, waited for :data:`PAGE_LOCK_TIMEOUT` seconds), never over an edit made meanwhile
    (:func:`suzent_cli.files.update_file`, whose statuses and errors it returns): for writers that merge raw bytes
    (the dream agent's tools, ``index.md``) rather than a parsed :class:`Page` (:func:`write_page`)."""
    return update_file(path, merge, lock_path=pages_lock(vault), timeout=PAGE_LOCK_TIMEOUT)


def link_in_index(vault: Path, entries: list[tuple[str, str]]) -> bool:
    """Add a ``- [[<page>]] — <description>`` line to ``<vault>/index.md`` for each ``(vault-relative page path,
    description)`` of ``entries`` it does not link yet (as ``[[page]]`` or ``[[page|…]]``), in order, after the
    index's last line (a blank line first unless that line is a list item). A missing index.md starts as ``# Notebook
    Index``. Written through :func:`update_page` (the page lock, the concurrent-edit check): a person's edit to
    index.md meanwhile is kept. True if it wrote.
    Raises :class:`LockTimeout` or OSError, nothing written then."""
    def merge(current: bytes | None) -> bytes | None:
        text = current.decode("utf-8", errors="replace") if current is not None else "# Notebook Index\n"
        lines = [f"- [[{rel[:-3]}]] — {description}" for rel, description in entries
                 if f"[[{rel[:-3]}]]" not in text and f"[[{rel[:-3]}|" not in text]
        if not lines:
            return None
        head = text.rstrip("\n")
        gap = "\n" if head.split("\n")[-1].lstrip().startswith(("- ", "* ")) else "\n\n"
        return (head + gap + "\n".join(lines) + "\n").encode("utf-8")

    status, _ = update_page(vault, vault / INDEX, merge)
    return status == "written"


def existing_case(vault: Path, rel: str) -> str:
    """``rel`` (vault-relative POSIX) spelled as it exists on disk when a file or folder differs only by case
    (``3_Personal/TOOLS.md`` → ``3_Personal/Tools.md``): an exact match wins, then the first case-insensitive one
    in sorted order. Components with no match keep their spelling. Works on case-sensitive filesystems too."""
    parts = rel.split("/")
    here, out = vault, []
    for i, part in enumerate(parts):
        if not (here / part).exists():
            try:
                names = sorted(os.listdir(here)) if here.is_dir() else []
            except OSError:
                names = []
            found = next((n for n in names if n.casefold() == part.casefold()), None)
            if found is None:
                return "/".join(out + parts[i:])
            part = found
        out.append(part)
        here = here / part
    return "/".join(out)
