"""Markup no captured fact may carry: HTML comments and text shaped like a verification stamp.

A person's verification is written by ``suzent verify-fact`` alone, as ``<!-- verified: human:NAME@DATE -->`` on a
line of MEMORY.md's manual zone (:mod:`suzent_cli.vault.memory_md`), and the briefing and recall read it from there.
A fact that arrived with the same comment (an agent's ``remember``, a pasted turn) would show a person reading
MEMORY.md a verification nobody made. So every HTML comment is removed from a fact (``<!-- … -->``, an opener that
is never closed, to the end, since a renderer hides everything after it, and a stray ``-->``), and so is the bare
stamp shape ``verified: <actor>:…`` outside one. The rest of the fact is kept.

Pure functions, stdlib only (and :mod:`suzent_cli.text`): the capture fast path calls them for every fact line.
"""

from __future__ import annotations

import re

from suzent_cli.text import without_invisible

# An HTML comment, closed or not (an unclosed one hides the rest of the line, the zone marker below it included).
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_CLOSER = re.compile(r"--!?>")
# The stamp shape outside a comment: "verified: human:ana@2026-06-10", "verified:agent:x". Any actor: a reader that
# one day accepts another actor must not find one planted already.
_STAMP = re.compile(r"\bverified\s*:\s*[\w.-]+\s*:\s*[^\s<>]*", re.I)


def strip_markup(text: str) -> tuple[str, list[str]]:
    """``text`` without HTML comments and verification-stamp-shaped text, and one note per kind removed
    (``"an HTML comment"``, ``"a verification stamp"``); ``(text, [])`` when there was none. Invisible characters
    do not hide either (``ver\u200bified: human:x`` reads as the stamp to a person): when markup shows only
    without them (:func:`suzent_cli.text.without_invisible`), the text loses them along with it. For one line:
    where something was cut, whitespace is folded (the leading indent kept). Never raises."""
    bare = without_invisible(text)
    if bare != text:
        stripped, removed = _strip(bare)
        return (stripped, removed) if removed else (text, [])
    return _strip(text)


def _strip(text: str) -> tuple[str, list[str]]:
    if "<!" not in text and "-->" not in text and "--!>" not in text and "verified" not in text.lower():
        return text, []
    removed: list[str] = []
    comments = _COMMENT.findall(text)
    stamped = any(_STAMP.search(c) for c in comments)
    out = _COMMENT.sub(" ", text)
    if _CLOSER.search(out):
        out = _CLOSER.sub(" ", out)
        comments.append("-->")
    if _STAMP.search(out):
        stamped = True
        out = _STAMP.sub(" ", out)
    if comments:
        removed.append("an HTML comment")
    if stamped:
        removed.append("a verification stamp")
    if not removed:
        return text, removed
    lead = text[: len(text) - len(text.lstrip())]  # a nested bullet keeps its indent
    return lead + " ".join(out.split()), removed


def has_markup(text: str) -> bool:
    """True when :func:`strip_markup` would change ``text``."""
    return bool(strip_markup(text)[1])
