"""YAML frontmatter of markdown pages: the one loader every reader of a page's frontmatter goes through.

A page's frontmatter is the YAML between a first line ``---`` and the next ``---`` line (python-frontmatter's
delimiters). It is data a person or an agent wrote, so loading it is bounded: YAML aliases are counted at their
expanded size, so an alias bomb ("billion laughs": each level nine aliases of the one before) is refused after
:data:`MAX_NODES` nodes instead of growing nine-fold per level in whatever later walks the data (``str()`` of a
value, a dump, a list of tags). Also refused: frontmatter over :data:`MAX_BYTES` bytes, nesting deeper than
:data:`MAX_DEPTH`, and an anchor that aliases itself. Every refusal and every YAML error is a
:class:`FrontmatterInvalid` with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_BYTES = 128 * 1024  # frontmatter text, UTF-8 encoded
MAX_NODES = 20_000  # YAML nodes, each alias counted at the size of what it stands for
MAX_DEPTH = 64  # nesting of sequences and mappings


class FrontmatterInvalid(ValueError):
    """Frontmatter that does not load: a YAML error, a bound exceeded, or (for :func:`parse`) not a mapping.
    ``str()`` is a one-line reason; ``bounded`` is True when a bound was exceeded (the YAML may be valid)."""

    def __init__(self, reason: str, *, bounded: bool = False) -> None:
        super().__init__(reason)
        self.bounded = bounded


class _Bounded:
    """Composer mixin: counts nodes (an alias at its expanded size) and nesting while a document is composed."""

    _nodes = 0
    _depth = 0

    def compose_document(self):  # type: ignore[no-untyped-def]
        self._nodes, self._depth, self._sizes, self._done = 0, 0, {}, set()
        return super().compose_document()  # type: ignore[misc]

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        if self.check_event(AliasEvent):  # type: ignore[attr-defined]
            anchor = self.peek_event().anchor  # type: ignore[attr-defined]
            target = self.anchors.get(anchor)  # type: ignore[attr-defined]
            if target is not None:
                if id(target) not in self._done:  # an alias inside the node its anchor names: a cycle
                    raise FrontmatterInvalid("frontmatter has an anchor that refers to itself", bounded=True)
                self._count(self._size(target))
            return super().compose_node(parent, index)  # type: ignore[misc]
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise FrontmatterInvalid(f"frontmatter nests deeper than {MAX_DEPTH} levels", bounded=True)
        try:
            node = super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1
        self._done.add(id(node))
        self._count(1)
        return node

    def _count(self, n: int) -> None:
        self._nodes += n
        if self._nodes > MAX_NODES:
            raise FrontmatterInvalid(f"frontmatter expands to more than {MAX_NODES} YAML nodes (an alias bomb?)",
                                     bounded=True)

    def _size(self, node: Node) -> int:
        """Nodes in ``node`` with every alias inside it expanded (memoized per node, so shared parts cost once)."""
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(self._size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            size += sum(self._size(k) + self._size(v) for k, v in node.value)
        self._sizes[key] = size = min(size, MAX_NODES + 1)  # past the budget the exact size does not matter
        return size


class _SafeLoader(_Bounded, yaml.SafeLoader):
    """yaml.SafeLoader (typed scalars: dates, ints, bools) with the bounds."""


class _BaseLoader(_Bounded, yaml.BaseLoader):
    """yaml.BaseLoader (every scalar a string) with the bounds."""


def load_yaml(source: str, *, typed: bool = True) -> Any:
    """The YAML document ``source`` as Python data (``typed``: SafeLoader's dates/ints/bools; else every scalar a
    string). Raises :class:`FrontmatterInvalid` on a YAML error, a value the constructor rejects (an impossible
    date) or a bound (module docstring)."""
    if len(source.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise FrontmatterInvalid(f"frontmatter is larger than {MAX_BYTES // 1024} KiB", bounded=True)
    try:
        return yaml.load(source, Loader=_SafeLoader if typed else _BaseLoader)  # bounded safe loaders
    except FrontmatterInvalid:
        raise
    except yaml.YAMLError as exc:
        raise FrontmatterInvalid(f"frontmatter is not valid YAML ({_first_line(exc)})") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. stale_after: 2026-13-45
        raise FrontmatterInvalid(f"frontmatter has a value that does not load ({_first_line(exc)})") from None
    except RecursionError:
        raise FrontmatterInvalid("frontmatter nests too deeply", bounded=True) from None


def split(text: str) -> tuple[str | None, str]:
    """``(frontmatter YAML or None, body)`` with python-frontmatter's rules: ``text`` stripped starts with a
    ``---`` line and a later ``---`` line ends the frontmatter; the body is stripped. No frontmatter: ``(None,
    text stripped)``."""
    from frontmatter.default_handlers import YAMLHandler

    stripped = text.strip()
    handler = YAMLHandler()
    if not handler.detect(stripped):
        return None, stripped
    try:
        fm, content = handler.split(stripped)
    except ValueError:
        return None, stripped
    return fm, content.strip()


def parse(text: str, *, typed: bool = True, lenient: bool = False,
          warn: Callable[[str], None] | None = None) -> tuple[dict, str]:
    """``(frontmatter mapping, body)`` of a page (:func:`split`; empty frontmatter is ``{}``): the one page parser,
    in two modes.

    Strict (the default; :func:`suzent_cli.vault.pages.parse_page`, every page writer): raises
    :class:`FrontmatterInvalid` when the frontmatter does not load (:func:`load_yaml`) or is not a mapping (a list,
    a string), so a page is never rewritten from a guess.

    Lenient (``lenient=True``; the index): never raises, and keeps as much of the page as it can. A text that does
    not start with ``---``, or whose frontmatter is not a mapping, is returned whole with ``{}``. A value that does
    not load typed (``stale_after: 2026-13-45``) is read with every scalar as a string, so one bad value cannot
    drop the other keys (``status: deprecated``); the body is then the text after the closing ``---`` line as
    written. Frontmatter past the loader's bounds (an alias bomb, absurd size or nesting) is skipped: ``({},
    body)`` and one line to ``warn``."""
    if lenient:
        return _parse_lenient(text, warn)
    fm, body = split(text)
    if fm is None:
        return {}, body
    meta = load_yaml(fm, typed=typed)
    if meta is None:
        return {}, body
    if not isinstance(meta, dict):
        raise FrontmatterInvalid(f"frontmatter is a {_yaml_kind(meta)}, not a mapping of keys to values")
    return meta, body


def _parse_lenient(text: str, warn: Callable[[str], None] | None) -> tuple[dict, str]:
    """:func:`parse`'s lenient mode."""
    if not text.startswith("---"):
        return {}, text
    fm, body = split(text)
    if fm is None:
        return {}, text
    try:
        meta = load_yaml(fm)
    except FrontmatterInvalid as exc:
        if exc.bounded:
            if warn is not None:
                warn(f"{exc}; indexed without its frontmatter")
            return {}, body
        try:
            meta = load_yaml(fm, typed=False)
        except FrontmatterInvalid:
            return {}, text
        after = text.split("\n---", 1)[1]
        body = after.split("\n", 1)[1] if "\n" in after else ""  # the body as written, as this path always gave it
    if meta is None:
        return {}, body
    if not isinstance(meta, dict):
        return {}, text
    return meta, body


def _yaml_kind(value: Any) -> str:
    return {list: "list", str: "string"}.get(type(value), type(value).__name__)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[:1]).strip() or type(exc).__name__
    return text[:80]
