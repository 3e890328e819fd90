"""The bound on what an extractor reads: a turn larger than ``capture.max_turn_chars`` is cut to its newest part.

Extraction time grows with the turn (``benchmarks/turn_size.py``), and a hook, the CLI or the server must not spend
minutes on one pasted log or one huge transcript. The bound counts the characters of the messages the extractor
reads (its ``reads`` roles: the user's for offline, all for claude); messages it does not read cost nothing.

Which end is kept, and why the newest: the hooks and ``capture --turn-from`` hand over whole turns or whole
transcripts, and what was said last is what is current — an update ("I moved to Lisbon") supersedes what it
updates, so keeping the oldest part would keep the stale fact and lose the new one. The older part of a transcript
was usually read already, by an earlier hook call on the same session. In one huge message, what is pasted (a log,
a document, a listing) tends to come first and what the person says about it last.

The cut keeps whole messages, newest first, while they fit; the oldest kept message may be cut at a sentence or
line boundary (the sentence breaks of the offline extractor) so that no sentence is read half; a message with no
such break in its newest part is cut at a clause break, else at a word start (:func:`tail`). Only what is read
is bounded: the input itself (the file, the transcript, the stored log) is never changed, and the caller says how
much was skipped in one warning (:func:`warning`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from suzent_cli.capture.extract.offline import MAX_SENTENCE_CHARS, SENTENCE_BREAK
from suzent_cli.capture.extract.turns import Message, Turn
from suzent_cli.config import Settings, check_value, setting
from suzent_cli.errors import ConfigInvalid

SETTING = "capture.max_turn_chars"
# Where a tail with no sentence or line break in its window may begin (:func:`tail`): after a clause break, else
# after any blank. Each is searched once from the window's start (``pos - 1``: the punctuation before a blank run).
_CLAUSE_BREAK = re.compile(r"[,;]\s+")
_WORD_BREAK = re.compile(r"\s+")


@dataclass(frozen=True)
class Cut:
    """A turn as the extractor reads it. Counts are of the messages of the read roles only.

    ``turn``: the turn to extract from (the given one when nothing was cut); ``total``/``kept``: characters in the
    given turn and in ``turn``; ``messages``/``kept_messages``: how many messages, ``kept_messages`` counting a
    message cut to its tail as kept.
    """

    turn: Turn
    total: int
    kept: int
    messages: int
    kept_messages: int

    @property
    def skipped(self) -> int:
        """Characters of the read roles not extracted (0 when the turn fit)."""
        return self.total - self.kept


def max_turn_chars(settings: Settings, warnings: list[str]) -> int:
    """``capture.max_turn_chars`` as a validated int (100..100,000,000). A bad value never stops a capture: the
    default is used and one warning says so (appended to ``warnings``)."""
    row = setting(SETTING)
    try:
        return check_value(row, settings.max_turn_chars, SETTING)
    except ConfigInvalid as exc:
        warnings.append(f"{exc}; read the turn with the default {row.default:,}")
        return row.default


def tail(text: str, budget: int) -> str:
    """The end of ``text``, at most ``budget`` characters, starting right after a sentence or line break (the
    offline extractor's :data:`~suzent_cli.capture.extract.offline.SENTENCE_BREAK`), so its first sentence is
    whole: half a sentence can read as another claim ("My sister says I hate cats." → "I hate cats."). The start of
    ``text`` is a sentence start too: when all before the last ``budget`` characters is blank, the tail is ``text``
    without its leading whitespace (which the extractor strips anyway). When the last ``budget`` characters hold no
    such break (one run-on message: "Mo0; Mo1; …" over 800 KB), the tail starts after a clause break (``, ``,
    ``; ``), else, when ``budget`` is over ``MAX_SENTENCE_CHARS``, at a word start, so the newest clauses are still
    read; ``""`` when none is found (a small window inside one sentence: half a sentence is not read), or for a
    budget ≤ 0; ``text`` itself when it fits. Linear in ``len(text)``, with no Python-level loop over its characters (MBs of blank lines)."""
    if len(text) <= budget:
        return text
    if budget <= 0:
        return ""
    start = len(text) - budget  # the kept text must begin at or after this index
    if _after_last_nonblank(text, start) == 0:  # all before the window is blank: the first sentence begins in it
        return text[start:].lstrip()  # read it whole ("<MBs of blanks>I live in Lisbon.")
    # A break's whitespace may begin before the window ("end.   Next"): search from where that run begins.
    pos = _after_last_nonblank(text, start - 1)
    for found in SENTENCE_BREAK.finditer(text, pos):
        if found.end() >= start:
            if found.end() < len(text):
                return text[found.end():]
            break  # the only break is the text's last newline: no sentence starts in the window
    # No sentence or line break in the window (one run-on message of 800 KB): the newest clauses are still read,
    # cut after a clause break (", ", "; "); else, for a window longer than any sentence the offline extractor keeps
    # (MAX_SENTENCE_CHARS), at a word start: what starts there is a run-on, not one claim read half ("My sister says
    # I hate cats." cut to "I hate cats." in a small window stays "").
    for cut in (_CLAUSE_BREAK, _WORD_BREAK) if budget > MAX_SENTENCE_CHARS else (_CLAUSE_BREAK,):
        for found in cut.finditer(text, max(0, pos - 1)):
            if found.end() >= start:
                if found.end() < len(text):
                    return text[found.end():]
                break
    return ""


def _after_last_nonblank(text: str, end: int, chunk: int = 1 << 16) -> int:
    """The index just after the last non-blank character of ``text[:end]`` (0 when it is all blank), found by
    stripping slices of at most ``chunk`` characters from ``end`` back: no copy of the whole head of a huge text,
    no Python-level step per character."""
    while end > 0:
        low = max(0, end - chunk)
        kept = text[low:end].rstrip()
        if kept:
            return low + len(kept)
        end = low
    return 0


def cut_turn(turn: Turn, max_chars: int, roles: tuple[str, ...] | None = None) -> Cut:
    """The newest part of ``turn`` holding at most ``max_chars`` characters of the messages whose role is in
    ``roles`` (None: every message). See the module docstring for which part and why.

    Walking from the newest message back: a read message that fits is kept whole; the first one that does not is
    cut to its :func:`tail` and nothing older is kept. Messages of other roles are kept when they are newer than
    the cut (they cost nothing). The messages are the given turn's, already split (never split again). Never
    raises for a turn; ``max_chars`` must be ≥ 0.
    """
    def read(m: Message) -> bool:
        return roles is None or m.role in roles

    counted = [m for m in turn.messages if read(m)]
    total = sum(len(m.text) for m in counted)
    if total <= max_chars:
        return Cut(turn, total, total, len(counted), len(counted))
    budget = max_chars
    kept: list[Message] = []
    whole = partial = 0
    for m in reversed(turn.messages):
        if not read(m):
            kept.append(m)
        elif len(m.text) <= budget:
            kept.append(m)
            budget -= len(m.text)
            whole += 1
        else:
            end = tail(m.text, budget)
            if end.strip():
                kept.append(Message(m.role, end))
                budget -= len(end)
                partial = 1
            break
    return Cut(Turn.of_split(reversed(kept)), total, max_chars - budget, len(counted), whole + partial)


def warning(cut: Cut, max_chars: int) -> str:
    """One line saying how much of the turn was not extracted, e.g. ``turn over capture.max_turn_chars
    (200,000): extracted its newest 199,950 of 23,000,000 characters (3 of 1,204 messages); the older
    22,800,050 were skipped``."""
    return (f"turn over {SETTING} ({max_chars:,}): extracted its newest {cut.kept:,} of {cut.total:,} characters "
            f"({cut.kept_messages:,} of {cut.messages:,} messages); the older {cut.skipped:,} were skipped")
