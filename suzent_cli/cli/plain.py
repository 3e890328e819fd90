"""Lines a command prints, written without importing rich when rich would print exactly the same bytes.

Importing :mod:`rich.console` is about a fifth of a ``suzent capture --fact`` process (issue 25). A command that
prints a few lines describes each as a :class:`Line`: rich markup (``literal`` parts) and user text (:class:`Raw`
parts, escaped for rich). :func:`emit` prints them with the consoles of :mod:`suzent_cli.cli.render`, exactly as
``out.print(markup)`` / ``err.print(markup)`` / ``warn(text)`` would, unless every line passes :func:`_plain`;
then it writes the text itself, byte for byte what rich writes to a stream that is not a terminal:

* the stream is not a terminal as rich sees it (``TTY_COMPATIBLE`` and ``FORCE_COLOR`` unset, ``isatty()``
  false): no colour, no style codes;
* the only markup is ``\\[`` (rich prints ``[``) and a warning's yellow ``warning:`` prefix (no colour: the word);
* user text holds no ``[``, ``]`` or backslash (no markup to escape or misread), and no line holds a control
  character, a surrogate, trailing whitespace (rich trims it past the console's width) or an ``:emoji:`` code rich
  would replace (two colons with no space between are checked against rich's own table, :func:`_has_emoji`: a
  scope tag's ``project:git:/…`` is no emoji).

Anything else goes through rich. ``tests/test_capture_paths.py`` compares both over many lines. Standard library
only: the capture fast path (:mod:`suzent_cli.cli.capture_run`) imports this module.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextvars import ContextVar
from typing import Any

# Set while a command relayed to a server runs (suzent_cli.cli.render.request_consoles): its terminal and its
# environment are the client's, which only the request's rich consoles know, so every line goes through them.
RELAYED: ContextVar[bool] = ContextVar("suzent_relayed", default=False)
_EMOJI = re.compile(r":\S*?:")  # the shape rich's emoji replacement looks for (rich._emoji_replace)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]|\s\Z")


class Raw(str):
    """User text inside a :class:`Line` (rich gets it through ``rich.markup.escape``)."""

    __slots__ = ()


class Line:
    """One printed line: ``stream`` ``"out"`` (stdout) or ``"err"`` (stderr), ``parts`` (rich markup strings and
    :class:`Raw` user text, concatenated), ``warning`` (one :class:`Raw` part, printed as
    :func:`suzent_cli.cli.render.warn` prints it, on stderr)."""

    __slots__ = ("stream", "parts", "warning")

    def __init__(self, stream: str, *parts: str, warning: bool = False):
        self.stream, self.parts, self.warning = stream, parts, warning

    def text(self) -> str | None:
        """The bytes rich prints for this line on a stream that is no terminal (without the newline), or None
        when that cannot be told without rich (see the module docstring)."""
        pieces = []
        for part in self.parts:
            if isinstance(part, Raw):
                if "[" in part or "]" in part or "\\" in part:
                    return None
                pieces.append(str(part))
            else:
                plain = part.replace("\\[", "[")
                if "\\" in plain or plain.count("[") != part.count("\\["):
                    return None  # other markup
                pieces.append(plain)
        text = ("warning: " if self.warning else "") + "".join(pieces)
        if _UNSAFE.search(text) or (":" in text and _EMOJI.search(text) and _has_emoji(text)):
            return None
        return text


def _has_emoji(text: str) -> bool:
    """Would rich replace an ``:emoji:`` code in ``text``? Each ``:name:`` (or ``:name-emoji:``/``:name-text:``)
    that rich's replacement matches (``rich._emoji_replace``'s pattern) is looked up in rich's own code table,
    loaded from its file without importing rich (~2 ms, only for a line with the shape: a fact's ``project:git:/…``
    tag has it and is no emoji). True when the table cannot be read (rich then prints the line)."""
    names = {m.group(2).lower() for m in _RICH_EMOJI.finditer(text)} - NOT_EMOJI
    if not names:
        return False  # a scope tag's only candidates: no table to read
    table = _emoji_table()
    return table is None or any(name in table for name in names)


# The names a scope key puts between two colons (``project:git:/…``, ``dir:``, ``file:``): none is an emoji code
# (tests/test_capture_paths.py checks them against rich's table), so such a line needs no look-up.
NOT_EMOJI = frozenset({"git", "dir", "file"})


_RICH_EMOJI = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")  # = rich._emoji_replace's
_TABLE: list = []  # [rich's EMOJI dict, or None], once loaded


def _emoji_table() -> dict | None:
    if not _TABLE:
        table = None
        try:
            import importlib.util

            rich = importlib.util.find_spec("rich")  # the package's location: nothing of it runs
            path = os.path.join(os.path.dirname(rich.origin), "_emoji_codes.py") if rich and rich.origin else None
            if path is not None and os.path.isfile(path):  # a data module (one dict, no imports), loaded on its own
                spec = importlib.util.spec_from_file_location("_suzent_rich_emoji_codes", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                table = module.EMOJI if isinstance(getattr(module, "EMOJI", None), dict) else None
        except Exception:  # noqa: BLE001 - without the table, rich prints the line
            table = None
        _TABLE.append(table)
    return _TABLE[0]


def emit(lines: list[Line]) -> None:
    """Print ``lines`` in order, each followed by a newline and flushed (as rich does), on stdout or stderr."""
    if not lines:
        return
    texts = [line.text() for line in lines] if _plain_streams({line.stream for line in lines}) else None
    if texts is None or None in texts:
        _emit_rich(lines)
        return
    for line, text in zip(lines, texts, strict=True):
        stream = sys.stdout if line.stream == "out" else sys.stderr
        stream.write(text + "\n")
        stream.flush()


def _emit_rich(lines: list[Line]) -> None:
    from suzent_cli.cli.render import err, escape, out, warn

    for line in lines:
        markup = "".join(escape(p) if isinstance(p, Raw) else p for p in line.parts)
        if line.warning:
            warn("".join(line.parts))
        else:
            (out if line.stream == "out" else err).print(markup, markup=True)


def _plain_streams(streams: set[str]) -> bool:
    """True when rich would see none of ``streams`` as a terminal (``rich.console.Console.is_terminal``); never
    inside a relayed command (:data:`RELAYED`)."""
    if RELAYED.get() or "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return False
    if hasattr(sys.stdin, "__module__") and str(sys.stdin.__module__).startswith("idlelib"):
        return False
    import builtins

    if "get_ipython" in vars(builtins):  # Jupyter: rich displays through IPython
        return False
    for name in streams:
        stream = sys.stdout if name == "out" else sys.stderr
        try:
            if stream is None or stream.isatty():
                return False
        except (AttributeError, ValueError):
            return False
    return True


def clip(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters for a table cell (JSON output always carries the whole text)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def emit_json(data: Any, *, compact: bool = False) -> None:
    """Print ``data`` as JSON on stdout (stable keys, UTF-8): indented, or with ``compact`` on one line (JSON
    Lines, for commands that print one document per pass or tick)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=None if compact else 2, default=str) + "\n")
    sys.stdout.flush()
