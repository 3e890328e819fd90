"""Text hygiene shared by every tier: input repair, one-line folding, the tombstone normalization, and the stop
words that recall's BM25 query and the hooks' prompt filter leave out."""

from __future__ import annotations

import json
import re

# Control characters that are not whitespace: C0 (but tab, LF, VT, FF, CR and the separators \x1c-\x1f), DEL and
# C1 (but NEL, U+0085), and the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069:
# right-to-left text needs none of them, and with them a line displays otherwise than it reads, "Trojan Source").
# They are dropped. The whitespace ones are line or field breaks: :func:`fold_line` turns them into a space like a
# newline (dropping them would glue two words: "tea\vwith" -> "teawith").
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")
# Characters that show nothing (or only steer the text's direction): the soft hyphen, zero-width space, non-joiner and
# joiner, the direction marks, embeddings, overrides and isolates, the word joiner and invisible operators, the
# byte-order mark. Inside a word they leave it looking the same to a person while no rule reading it matches.
# The Arabic letter mark (U+061C) is a direction mark like U+200E/U+200F. INVISIBLE is the body of a character class.
INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# A lone surrogate no UTF-8 can hold: JSON's "\ud800" escape (JavaScript's JSON.stringify writes one for an emoji
# cut in half), or one a Python caller made. Those of surrogateescape (argv's undecodable bytes) are the subset
# U+DC80-U+DCFF, which :func:`repair` turns back into their bytes first.
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_ESCAPED_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


# Words that carry no meaning of their own in a question or a prompt ("which", "does", "use", "the"): recall drops
# them from its BM25 query (:func:`suzent_cli.recall.fts_query`) and the hooks from the words a hit must share
# (:func:`content_words`). "use" is one: "which editor does the user use" must not rank "We use ClickHouse" first;
# "user" too: every question of a memory is about the user, so the word tells no fact from another.
STOP_WORDS = frozenset("""
a about above after again all also am an and any are aren as at be been before being below between both but by
can cannot could couldn did didn do does doesn doing don down during each else ever few for from further get gets
got had has have having he her here hers him his how however i if in into is isn it its itself just let lets like
me might more most much must my myself need no nor not now of off on once only or other our ours out over own
please pls really same say says she should so some such than thank thanks that the their theirs them then there
these they this those through thing things to too try under until up us use used user users using very want was wasn way we
well were what when where which while who whom why will with without would yes yet you your yours ok okay hey hi
hello sure right also still just maybe perhaps something anything everything make makes made know think tell
""".split())
WORD = re.compile(r"\w+", re.UNICODE)


def is_utf8(text: str) -> bool:
    """True when ``text`` encodes as UTF-8. Bytes that are not UTF-8 (a command-line argument, a file name) reach
    Python as lone surrogates (``surrogateescape``); no stored fact, page or query holds one, so such text is bad
    input for every reader (recall's query, forget's text, the vault's page names)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def content_words(text: str) -> list[str]:
    """The words of ``text`` worth searching for, lowercased, first occurrence order: :data:`STOP_WORDS` and words
    under 3 characters dropped."""
    seen: dict[str, None] = {}
    for w in WORD.findall(text.lower()):
        if len(w) >= 3 and w not in STOP_WORDS:
            seen.setdefault(w, None)
    return list(seen)


def without_invisible(text: str) -> str:
    """``text`` without the characters that show nothing (zero-width space, non-joiner and joiner, soft hyphen, word
    joiner, the bidi marks and overrides, a byte-order mark): what a rule must read, since ``ver\u200bified`` or
    ``instruc\u200btions`` looks to a person like the word without it."""
    return _INVISIBLE.sub("", text)


def normalize(text: str) -> str:
    """The tombstone key of a text: lowercase, whitespace collapsed to single spaces (compat with suzent)."""
    return " ".join(text.lower().split())


def fold_line(text: str) -> str:
    """Fold any run of whitespace to one space, so text can never span two lines. Whitespace is what
    ``str.split()`` splits on: newlines and every other line break ``str.splitlines()`` knows (``\\r``, ``\\v``,
    ``\\f``, ``\\x1c``-``\\x1e``, U+0085, U+2028, U+2029), tabs, ``\\x1f`` and the Unicode spaces."""
    return " ".join(text.split())


def strip_control(text: str) -> str:
    """``text`` without NUL and the other control characters that are not whitespace (C0, DEL, C1); the
    whitespace ones (tab, line breaks, ``\\x1c``-``\\x1f``, U+0085) are kept for :func:`fold_line` to fold."""
    return _CONTROL.sub("", text)


# What a byte that was not UTF-8 becomes when it is decoded (:func:`repair`, the hooks' transcript reader).
REPLACEMENT = "\ufffd"
_REPLACED_RUN = re.compile(REPLACEMENT + "+")
# At most one damaged place (a run of U+FFFD: "\xff\xfe" is two characters but one place) per this many letters.
_LETTERS_PER_DAMAGE = 5


def damaged(text: str) -> bool:
    """True when ``text`` holds more bytes that were not UTF-8 than a person's sentence that still reads: two or
    more runs of U+FFFD (:data:`REPLACEMENT`), and more than one run per five letters (any script). One damaged
    place is always allowed ("My cat is Pi\ufffdxel."): the sentence is the person's, the replacement character
    shows where a byte was lost. Binary pasted into a turn has far more (half its bytes decode to U+FFFD)."""
    if REPLACEMENT not in text:
        return False
    runs = len(_REPLACED_RUN.findall(text))
    return runs > 1 and runs * _LETTERS_PER_DAMAGE > sum(c.isalpha() for c in text)


def repair(data: bytes | str) -> tuple[str, list[str]]:
    """Decode ``data`` as UTF-8 and drop NUL and the other control characters that are not whitespace (see
    :func:`strip_control`; line breaks of every kind are kept, so a fact line is split or folded by its reader).

    Returns ``(text, warnings)``; each warning is a one-line description of what was repaired. Never raises.
    """
    warnings: list[str] = []
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            warnings.append("replaced invalid UTF-8 byte sequence(s) with U+FFFD")
    else:
        text = data
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates, e.g. from surrogateescape'd argv or a JSON "\ud800"
            text = _NOT_ESCAPED_BYTE.sub("\ufffd", text)
            text = text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
            text = text.encode("utf-8", errors="replace").decode("utf-8")
            warnings.append("replaced invalid UTF-8 byte sequence(s) with U+FFFD")
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is an encoding artefact, not content
    nuls = text.count("\x00")
    if nuls:
        warnings.append(f"removed {nuls} NUL byte(s)")
    cleaned = _CONTROL.sub("", text)
    others = len(text) - len(cleaned) - nuls
    if others:
        warnings.append(f"removed {others} control character(s)")
    return cleaned, warnings


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` (half a character no UTF-8 can hold), or None."""
    found = _SURROGATE.search(text)
    return found.group() if found else None


def clean_input(text: str) -> str:
    """``text`` by the one input rule every entry point follows (the CLI, MCP and HTTP ``remember``, the importers,
    the archive's appender through :meth:`suzent_cli.archive.Fact.clean`): a lone surrogate becomes U+FFFD, control
    characters that are not whitespace and the bidi embeddings, overrides and isolates are dropped, the words are
    kept. :func:`repair` without its warnings; never raises."""
    return repair(text)[0]


def loads_json(text: str) -> tuple[object, bool]:
    """``json.loads(text)``, with every lone surrogate in its strings (keys too) replaced by U+FFFD: JSON may escape
    one (``"\\ud83d"``, half an emoji, as JavaScript writes it), and no UTF-8 file, log or answer can hold it.
    Returns ``(value, replaced)``. Raises what :func:`json.loads` raises (ValueError, RecursionError). The walk
    runs only when ``text`` holds a surrogate escape, so the cost of an ordinary document is one substring scan."""
    value = json.loads(text)
    if not _SURROGATE_ESCAPE.search(text):
        return value, False
    found = [False]

    def fix(item: object) -> object:
        if isinstance(item, str):
            fixed = _SURROGATE.sub("\ufffd", item)
            found[0] = found[0] or fixed != item
            return fixed
        if isinstance(item, list):
            return [fix(x) for x in item]
        if isinstance(item, dict):
            return {fix(k): fix(v) for k, v in item.items()}
        return item

    value = fix(value)
    return value, found[0]
