"""Vault pages as the dream reads and writes them: YAML frontmatter, ``##`` sections, claim bullets, links.

A claim is one bullet in a page's ``## Claims`` section (or ``## Previously`` once replaced)::

    - Lives in Berlin (confirmed 3x, last 2026-06-09) · source: 2026-06-01.md:5
    - Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7

``confirmed Nx`` counts how often the claim was stated; ``last`` is the date of the latest statement; ``source`` is
the daily log line it was first recorded at (provenance). A bullet a person wrote without these parts is still a
claim. Unknown frontmatter keys and sections are kept as they are: a page written by a person survives a rewrite
with only the parts the dream owns changed. Pages are rewritten atomically (temp file + rename).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DreamFailed
from ..files import atomic_write, read_text
from ..textnorm import normalize

CLAIMS = "Claims"
PREVIOUSLY = "Previously"
RELATED = "Related"

_SOURCE_RE = re.compile(r"\s+·\s+source:\s+(\d{4}-\d{2}-\d{2}\.md:\d+)\s*$")
_UNTIL_RE = re.compile(r"\s+\(until (\d{4}-\d{2}-\d{2})\)\s*$")
_MARKER_RE = re.compile(r"\s+\(confirmed (\d+)x, last (\d{4}-\d{2}-\d{2})\)\s*$")
_BULLET_RE = re.compile(r"^[-*+]\s+(?!\[[ xX]\]\s)(.*\S)\s*$")  # top-level only: nested bullets are notes
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
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
    """A page: ``meta`` (frontmatter, key order kept) and ``body`` (markdown after it)."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

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


def _find_heading(lines: list[str], name: str | None) -> int | None:
    if not name:
        return None
    for i, line in enumerate(lines):
        m = _HEADING_RE.match(line)
        if m and len(m.group(1)) == 2 and m.group(2).strip().lower() == name.lower():
            return i
    return None


def _section_end(lines: list[str], start: int) -> int:
    for j in range(start + 1, len(lines)):
        m = _HEADING_RE.match(lines[j])
        if m and len(m.group(1)) <= 2:
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


def read_page(path: Path) -> Page:
    """Parse the page at ``path``. Raises :class:`DreamFailed` when its frontmatter is not valid YAML mapping
    (the page is then left alone: a person's page is never rewritten from a guess). OSError if unreadable."""
    import frontmatter  # noqa: PLC0415 - yaml is only needed by the dream
    import yaml  # noqa: PLC0415

    text = read_text(path)
    try:
        post = frontmatter.loads(text)
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        raise DreamFailed(f"{path.name}: frontmatter is not valid YAML ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(post.metadata, dict):
        raise DreamFailed(f"{path.name}: frontmatter is not a mapping")
    body = post.content
    return Page(meta=dict(post.metadata), body=body + ("\n" if body and not body.endswith("\n") else ""))


def render_page(page: Page) -> str:
    """The page as text: ``---`` YAML frontmatter (keys in order) then the body, ending in one newline."""
    import yaml  # noqa: PLC0415

    body = page.body.strip("\n") + "\n"
    if not page.meta:
        return body
    head = yaml.safe_dump(page.meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{head}---\n\n{body}"


def write_page(path: Path, page: Page) -> bool:
    """Write ``page`` to ``path`` atomically if its text differs from what is there. True if it wrote."""
    text = render_page(page)
    if path.is_file() and read_text(path) == text:
        return False
    atomic_write(path, text)
    return True
