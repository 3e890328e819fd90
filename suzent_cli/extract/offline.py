"""The offline extractor: deterministic rules, no model, no network. It never invents content.

It keeps, verbatim, the user's sentences that state something durable — first-person declaratives about
themselves, their preferences, decisions, people and projects, and explicit "remember …" requests (kept without
the request words) — and drops questions, commands and small talk. Only the user's messages are read: the
assistant's words are not the user's claims. The category comes from simple keyword cues.
Its precision and recall on a labelled set are measured by ``benchmarks/extractor.py``.
"""

from __future__ import annotations

import re

from ..archive import Fact
from .turns import Turn

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_REMEMBER = re.compile(r"^(?:please\s+)?(?:remember|note|keep in mind|don'?t forget|never forget)\s*(?:that|:|,)?\s+(.+)$", re.I)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i am|i've|i have|i'd|i'll|i will|i was|i used to|my|we|we're|we are|we've|our|me and)\b", re.I)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|when|where|who|which|whose|can|could|would|will|should|shall|do|does|did|is|are|was|were|"
    r"have you|has|may|might)\b", re.I)
_COMMAND_START = re.compile(
    r"^(?:please|pls|let'?s|write|show|fix|make|run|give|tell|help|explain|list|create|add|remove|delete|update|"
    r"change|find|search|check|open|close|send|generate|summari[sz]e|translate|draft|refactor|rename|install|try|"
    r"go|look|read|use|set|put|move|build|deploy|test|debug|compare|describe|convert|format|sort)\b", re.I)
_NOT_DURABLE = re.compile(
    r"^(?:i think|i guess|i wonder|i was wondering|i'm not sure|i am not sure|i mean|i see|i agree|i disagree|"
    r"i don'?t know|i need you|i want you|i'd like you|i would like you|i hope you|i'm just|i just wanted|"
    r"i'm good|i'm fine|i am fine|i'm ok|i'm okay|i'll try|i will try|i'll check|i'll let you know|i got it|"
    r"i understand|i know|i'm back|i'm here|i have a question|i've got a question|i'm curious|i'm asking|"
    r"i'm wondering|i appreciate|i'm glad|i'm sorry|i am sorry)\b", re.I)
_SMALL_TALK = re.compile(r"^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|awesome|sure|yes|no|yeah|"
                         r"yep|nope|lol|haha|bye|good (?:morning|night|evening)|cheers)\b[\s!.,]*$", re.I)

_CATEGORY_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("preference", re.compile(r"\b(?:prefer\w*|like|likes|liked|love|loves|enjoy\w*|hate|hates|dislike\w*|"
                              r"favou?rite|can'?t stand|rather|fan of|into)\b", re.I)),
    ("goal", re.compile(r"\b(?:want to|wants to|plan\w*|goal|hope to|going to|aim\w* to|would like to|"
                        r"intend\w*|dream of|trying to|saving for)\b", re.I)),
    ("technical", re.compile(r"\b(?:python|rust|go|java|javascript|typescript|node|code|coding|api|database|sql|"
                             r"postgres\w*|docker|linux|macos|windows|vim|neovim|emacs|vs ?code|editor|framework|"
                             r"library|server|git|kubernetes|stack|llm|terminal|shell|ide|react|django|cli)\b", re.I)),
    ("personal", re.compile(r"\b(?:live|lives|lived|living|born|name|wife|husband|partner|kids?|son|daughter|"
                            r"mom|mum|dad|mother|father|brother|sister|family|friend|dog|cat|pet|allergic|allergy|"
                            r"birthday|years old|married|moved|job|work as|working as|vegetarian|vegan|diet|"
                            r"hometown|grew up|from)\b", re.I)),
    ("context", re.compile(r"\b(?:project|working on|work on|team|company|deadline|decided|decision|chose|"
                           r"we use|our|client|startup|launch|release)\b", re.I)),
)


def categorize(sentence: str) -> str:
    """The category of ``sentence`` from keyword cues, first match wins; ``general`` when none matches."""
    for category, pattern in _CATEGORY_CUES:
        if pattern.search(sentence):
            return category
    return "general"


def _durable(sentence: str) -> str | None:
    """``sentence`` (or the remembered part of it) when it states something durable, else None."""
    s = sentence.strip().strip("\"'“”")
    if len(s.split()) < 3 or s.endswith("?") or _SMALL_TALK.match(s):
        return None
    m = _REMEMBER.match(s)
    if m:
        rest = m.group(1).strip()
        return rest[:1].upper() + rest[1:] if len(rest.split()) >= 2 else None
    if _NOT_DURABLE.match(s) or _QUESTION_START.match(s) or _COMMAND_START.match(s):
        return None
    return s if _FIRST_PERSON.match(s) else None


class OfflineExtractor:
    """Rules-based extractor; see the module docstring. Deterministic: same turn, same facts."""

    name = "offline"

    def extract(self, turn: Turn, known: list[str]) -> list[Fact]:
        facts: list[Fact] = []
        seen: set[str] = set()
        for text in turn.by("user"):
            for sentence in _SENTENCE_SPLIT.split(text):
                kept = _durable(sentence)
                if kept and kept.lower() not in seen:
                    seen.add(kept.lower())
                    facts.append(Fact(content=kept, category=categorize(kept)))
        return facts
