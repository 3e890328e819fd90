"""Does a newer statement replace an older one? The offline "same subject" test, shared by the dream's rules engine
(supersession), lint (contradictions it cannot decide) and recall (the newer of two near-duplicates first).

Statements are claim texts ("Prefers tea in the morning", "I switched to coffee, now I drink a flat white"). The
test looks at three things, all computed from the two texts alone (no model, no list of subjects):

* **Words.** Each statement's content words, lower-cased and lightly stemmed (``drives``/``driving`` → ``driv``),
  without function words. *Anchors* are the content words that are not light verbs (is, has, uses, likes,
  prefers, wants, takes, …): the entity and the attribute ("biscuit", "backend", "python", "deadline"). A few
  synonyms of the common single-valued frames are folded together (job/work, boss/manager, reside/live).
* **Change cues** in the newer statement (:data:`CUES`): "now", "switched", "moved", "upgraded", "quit",
  "gave up", "sold", "no longer", "any more", "passed away", "died", "was moved to", "instead of", "replaced",
  "changed", "new", "left", "dropped", "promoted", "pushed back", "took over", …, and a quantity said to move
  with its new number ("went up to $1,850", "grew to 9", "was cut by 10%"; without a number "went up to Scotland"
  is a trip). The cue words themselves are not anchors.
* **Structure** (:mod:`suzent_cli.vault.structure`). Each statement's *holder* (the user, a person relation its
  subject opens with, a name that owns its subject): two holders never replace each other (:func:`other_holders`),
  and a named thing's own change ("Priya moved to Berlin") does not end the user's statement naming it unless it
  ends the thing ("Priya left"). *Parts*: a combined statement ("I'm a data engineer living in Berlin") is
  compared part by part (:func:`_compare`), and a verdict says which parts of the older one were replaced
  (:attr:`Verdict.parts`), so a change ends only those. An intention, a reported question and one more of a kind
  ("I also have a cat called Tofu") replace nothing.
* **Events.** An older statement that reports a past event without a change cue ("Visited Lisbon for a
  conference", "Adopted Biscuit from a shelter") was true when it happened and stays true: nothing replaces it.

The verdict (:func:`compare`) for ``(older, newer)``:

Every verdict but ``unrelated`` needs shared anchors making up at least :data:`COVERAGE` of the shorter
statement's anchors.

* ``replaces`` — both are about the same single-valued subject the claim rules know (:func:`.claims.subject_of`:
  where the user lives, works, …; also written as a note, "Employer: Initech") with different values; or the newer one has a change cue and shares an anchor with the older one ("Has a cat called Miso"
  → "Our cat Miso died in April"). ``score`` ranks several candidates: shared anchors, plus the rapidfuzz
  ``token_set_ratio`` of the two texts (0..1) as a tie-breaker.
* ``compatible`` — the same frame and one's words contain the other's ("Likes tea" / "Likes green tea"): a
  refinement, both hold.
  Also the same words with another number, date or version and no cue ("The platform team has 6 engineers" →
  "… has 8 engineers"; "Draft due on March 20" → "Draft due on April 3"): a quantity has one current value. Not a
  number that names which one ("Sprint 12 retro went well" / "Sprint 13 …", "issue #12", "friend number 3"):
  those are two things, ``unrelated``.
* ``undecided`` — the same frame, different values, no cue ("Prefers tea in the morning" / "Prefers coffee in the
  morning"): a person should look (lint reports it as a contradiction).
* ``unrelated`` — anything else, a restatement (:func:`.claims.is_repeat`) included, and any pair where either
  statement is a question (it ends with "?": "Team size is 7?" asks, it replaces nothing and nothing replaces it).

**A change that shares no word** with what it replaces ("I drink tea every morning", later "I switched to
coffee") needs to know that coffee and tea are the same kind of thing. This module stays model-free: callers pass
a :class:`ValueJudge` (the dream's :class:`suzent_cli.dream.values.ModelJudge`, on the configured embedder).
:func:`value_of` reads the value a change ends at ("switched/moved/upgraded … to X", or the rest of a short
statement whose only cues are "now", "these days", "instead": "I'm vegan these days"); when the words relate the
newer statement to no older one, the judge scores each older one (:func:`model_verdict`), and
:func:`best_replaced` takes the best only when it beats every other close one by :data:`MODEL_MARGIN` (a tie
replaces nothing; :func:`pairs_to_review` then reports the pairs to lint). Without a judge, or with one whose
model cannot tell kinds apart (a hash embedder), the words alone decide, as before.

Pure functions of their arguments; no I/O. Deterministic: the same texts (and the same judge) give the same
verdict.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rapidfuzz import fuzz

from suzent_cli.vault import structure
from suzent_cli.vault.claims import base_text, claim_key, is_repeat, specifics, subject_of
from suzent_cli.vault.structure import USER

REPLACES, COMPATIBLE, UNDECIDED, UNRELATED = "replaces", "compatible", "undecided", "unrelated"
# The shared anchors must be at least this share of the shorter statement's anchors: two long utterances that
# happen to share one word ("…the kids…", "…now…") are not about the same subject.
COVERAGE = 0.25

# A change said in words. Matched on the normalized newer statement (lower case), whole words.
CUES = re.compile(
    r"\b(?:now|nowadays|these days|from now on|any ?more|no longer|no more|not any ?more|instead(?: of)?|"
    r"switched|switching|swapped|changed|moved|relocated|migrated|upgraded|downgraded|updated to|replaced|"
    r"rewrote|rewritten|quit|quitting|gave up|given up|stopped|dropped|left|sold|retired|passed away|died|"
    r"lost (?:our|my|his|her|their)|put down|new|promoted|took over|taken over|pushed back|postponed|"
    r"brought forward|delayed|extended|rescheduled|was moved|got (?:engaged|married|divorced|promoted|fired|hired)|"
    r"divorced|separated|broke up|became|is now|are now|not anymore|"
    r"ditched|ditching|scrapped|shelved|cancell?ed|canceled|jumped ship|tied the knot|gave in|caved|"
    r"took the plunge|handed in (?:my|his|her|their) notice|moved on from|got rid of|phased out|"
    # a quantity that moved: "went up to $1,850", "rose by 5%", "was cut to 3 days" (a number must follow, so
    # "went up to Scotland" and "grew up in Porto" are no change)
    r"(?:went|gone|rose|risen|increased|decreased|fell|fallen|climbed|grew|grown|shrank|shrunk|raised|lowered|"
    r"bumped|jumped|dropped|cut|reduced|crept|creeping|slid|slipped)(?: (?:up|down|back|again))? (?:to|by)"
    r"(?= [$€£]?\d))\b")
# Words of the cues: never anchors (a shared "now" says nothing about the subject).
_CUE_WORDS = frozenset(
    "now nowadays these days from on any more anymore no longer instead of switched switching swapped changed "
    "moved relocated migrated upgraded downgraded updated to replaced rewrote rewritten quit quitting gave up "
    "given stopped dropped left sold retired passed away died lost put down new promoted took over taken pushed "
    "back postponed brought forward delayed extended rescheduled was got engaged married divorced fired hired "
    "separated broke became is are not went gone up down again ditched ditching scrapped shelved cancelled canceled "
    "jumped ship tied knot gave caved took plunge handed notice rid phased crept creeping slid slipped".split())  # not "rose", "cut", …: also names, nouns
_STOP = frozenset(
    "a an the and or but if then so of to in on at by for with from into onto over under about as than that this "
    "these those there here it its it's i i'm i've me my mine we we're we've us our ours you your he him his she "
    "her they them their user user's who whom which what when where why how all any some each every most many "
    "much more very really just also too still even only again ago last week weeks day days month months year "
    "years today yesterday tomorrow time please since after before until while because be been being am is are "
    "was were do does did done doing will would can could should shall may might must not no yes one two".split())
# Verbs that carry little subject of their own ("Uses X", "Likes Y"): part of a frame, never its anchor.
_LIGHT = frozenset("ha has hav have had use lik like prefer want get got tak take mak make go keep".split())
_SYNONYMS = {"job": "work", "employ": "work", "boss": "manag", "resid": "liv", "goe": "go", "doe": "do"}
_PAST_IRREGULAR = frozenset(
    "met grew flew went gave took made wrote did saw came ran won bought spent taught built found had was were "
    "drove rode sang read heard told thought brought caught fought sent lent kept slept felt paid ate drank swam "
    "wore lost".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9.+#:'’-]*")
# The value a move or switch ends at: "moved to [the] X", "switched back to X", "upgraded to X Y".
_TARGET = re.compile(r"\b(?:moved|relocated|switched|changed|upgraded|downgraded|migrated|swapped|updated|"
                     r"transferred|went)\s+(?:back\s+|over\s+)?to\s+(.*)")
_TARGET_END = frozenset("from in at on last since after before this that when because for with and or but "
                        "instead".split())


def _target(key: str) -> frozenset[str]:
    """The anchors of the value a move or switch in ``key`` ends at ("moved to Lisbon from Oslo" → {lisbon};
    "upgraded to Python 3.12" → {python, 3.12}), up to the first preposition or clause word; empty when ``key``
    names no such value."""
    return frozenset(stem(w) for w in _target_words(key) or ()) - _LIGHT


def _target_words(key: str) -> list[str] | None:
    """The content words (as written) of the value a move or switch in ``key`` ends at, up to the first
    preposition or clause word; None when ``key`` names no such move or switch."""
    m = _TARGET.search(key)
    if not m:
        return None
    words: list[str] = []
    for w in _WORD.findall(m.group(1))[:6]:
        if w in _TARGET_END:
            break
        if w.strip(".'’-") not in _STOP:
            words.append(w.strip(".'’-"))
    return words
# Cues after which the rest of a short statement is the new value: "I'm vegan these days", "now prefer light mode".
_NOW_CUES = frozenset({"now", "nowadays", "these days", "from now on", "is now", "are now", "instead", "instead of"})
MAX_VALUE_WORDS = 3  # a longer remainder is a sentence, not a value


def value_of(s: Statement) -> str | None:
    """The value a change in ``s`` ends at, as written (lower case), or None: the phrase after "switched/moved/
    upgraded/… to" ("I switched to coffee" → ``coffee``; "Switched to an iPhone 15" → ``iphone 15``), else, when
    every cue of ``s`` is a "now" cue (now, these days, nowadays, instead, from now on), its content words that are
    not cue words or light verbs, when there are 1 to :data:`MAX_VALUE_WORDS` of them ("I'm vegan these days" →
    ``vegan``). An end without a value ("died", "quit", "sold", "new") gives None: what ended must be named."""
    if not s.cue:
        return None
    body = s.body
    words = _target_words(body)
    if words is not None:
        return " ".join(words[:MAX_VALUE_WORDS]) or None
    if any(c.group(0) not in _NOW_CUES for c in CUES.finditer(body)):
        return None
    rest = [w.strip(".'’-") for w in _WORD.findall(body) if w.strip(".'’-") not in _STOP
            and w not in _CUE_WORDS and stem(w) not in _LIGHT]
    return " ".join(rest) if 1 <= len(rest) <= MAX_VALUE_WORDS else None


def value_words(s: Statement, size: int = 1) -> list[str]:
    """What in an older statement a new value of ``size`` words may stand in for: its runs of ``size`` adjacent
    content words as written (no function, cue or light words; runs of 2 at most), or all of them when it has
    fewer ("Prefers dark mode" → ``dark``, ``mode`` for size 1; ``dark mode`` for size 2). A two-word value is
    compared with two-word runs only: "light mode" stands in for "dark mode", not for the "dark" of "dark
    chocolate"."""
    body = s.body
    words = [w.strip(".'’-") for w in _WORD.findall(body)]
    keep = [w for w in words if w and w not in _STOP and w not in _CUE_WORDS and stem(w) not in _LIGHT]
    n = max(1, min(size, 2))
    if len(keep) <= n:
        return [" ".join(keep)] if keep else []
    return list(dict.fromkeys(" ".join(keep[i:i + n]) for i in range(len(keep) - n + 1)))


class ValueJudge(Protocol):
    """How close a new value is to older statements, by a model (``suzent_cli.dream.values.ModelJudge``; this
    module stays model-free). ``closeness(newer, value, olders)`` returns, for each of ``olders``, a score ≥ 0 (the
    higher the closer; comparable across models) when ``value`` is the same kind of thing as a word of that older
    statement and the two statements are about the same matter, else None. Never raises: a judge that cannot
    decide (no model, a model that cannot tell words apart) returns None for all. ``strict=False`` asks with a
    lower bar, for pairs a person should look at (lint), not for replacing."""

    def closeness(self, newer: Statement, value: str, olders: Sequence[Statement], *,
                  strict: bool = True) -> list[float | None]: ...


# A model-judged replacement must beat every other model-close candidate by this much of its score (a z sum):
# "I switched to coffee" with "Likes tea" and "Likes green tea" both current replaces neither.
MODEL_MARGIN = 2.0


_LABEL = re.compile(r"^[^\s:]+(?: [^\s:]+){0,2}:\s+")
# What a transcript line says after its speaker's name: a subject, or a word people open a reply with.
_SPOKEN = re.compile(r"^(?:yeah|yes|yep|no|nope|oh|wow|haha|hey|hi|hello|thanks|thank|sure|ok|okay|well|so|"
                     r"that|that's|it|it's|this|what|how|why|did|do|you|aw|omg|lol|totally|definitely|really)\b")
_SPEAKER_MIN_WORDS = 8  # a one-name label before this many words is a speaker: an attribute note is short


def _body(key: str, text: str | None = None) -> str:
    """``key`` without a transcript line's speaker ("caroline: i moved…" → "i moved…"), but with an attribute
    note's label, which is its subject ("admin portal: django 5.1" → "admin portal django 5.1"): a label is a
    speaker when what follows starts with a subject or a word a reply opens with, or when it is one capitalised
    word (in ``text``, as written) before a sentence of :data:`_SPEAKER_MIN_WORDS` words or more."""
    m = _LABEL.match(key)
    if not m:
        return key
    rest = key[m.end():]
    label = key[:m.end()].rstrip().rstrip(":")
    named = text is not None and re.match(r"^[A-Z][\w'’-]*:", text.strip()) is not None
    if structure.has_subject(rest) or _SPOKEN.match(rest) or (named and len(rest.split()) >= _SPEAKER_MIN_WORDS):
        return rest
    return f"{label} {rest}"


_NAME_WORD = re.compile(r"[A-Za-z][\w'’-]*")
# A change that ends the thing itself ("Rufus passed away", "Priya left the company"): it may end the user's
# statement that names it. Any other change of a named thing ("Priya moved to Berlin") is the thing's own.
_ENDING = re.compile(r"\b(?:passed away|died|put down|sold|left|quit|retired|gone|lost|broke up|split|divorced|"
                     r"was fired|got fired|laid off|resigned|stepped down|moved on|no longer|not any ?more|any ?more|"
                     r"ran away|closed|shut down|gave up|given up|dropped|stopped|ditched|scrapped|shelved|paused|"
                     r"on the back burner|on hold|on ice)\b")
# A statement that adds one more ("I also have a cat called Tofu now", "a second dog", "another project"): it
# replaces nothing, whatever else it says.
_ADDS = re.compile(r"\b(?:also|too|as well|another|a second|a third|one more|in addition|additionally|besides)\b")


def _with_user(s: Statement) -> bool:
    """True when ``s`` opens with its first word and the user as one subject ("Chris and I got married")."""
    return bool(s.lead) and re.match(rf"^{re.escape(s.lead)}\s+(?:and|&)\s+(?:i|me)\b", s.key) is not None


_STATE_PREPOSITIONS = frozenset({"by", "in", "at", "to", "as", "with", "on", "for"})  # "Employed by", "Based in"
_LEAD = re.compile(r"^(?:(?:the user|i|we|they|he|she)(?:'[a-z]+)?\s+|(?:has|have) been\s+)+")


def stem(word: str) -> str:
    """A light stem: ``drives``/``driving``/``drive`` → ``driv``; ``replies``/``reply`` → ``reply``; an
    apostrophe-s dropped. Digits and dotted versions are kept as they are."""
    w = word.strip(".'’-").replace("’", "'")
    w = w[:-2] if w.endswith("'s") else w
    if any(c.isdigit() for c in w) or len(w) <= 3:
        return _SYNONYMS.get(w, w)
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("es") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    if len(w) > 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "stopp(ed)" → "stop", "planned" → "plan"
    return _SYNONYMS.get(w, w)


@dataclass(frozen=True)
class Statement:
    """What the test reads of one statement: ``key`` (normalized text), ``words`` (stems of its content words,
    light verbs included), ``anchors`` (``words`` without light verbs and cue words), ``cue`` (a change cue
    matched, or None) and ``event`` (a past event without a cue)."""

    key: str
    words: frozenset[str]
    anchors: frozenset[str]
    cue: str | None
    event: bool
    holder: str = USER  # whose attribute (:func:`.structure.holder`): "user" or a relational noun ("brother")
    parts: tuple[Statement, ...] = ()  # the parts of a combined statement (:func:`.structure.parts`); () for one
    body: str = ""  # ``key`` without a transcript line's speaker label (an attribute note keeps its label)
    names: frozenset[str] = frozenset()  # words written with a capital inside the text (not first): names, lower case
    lead: str = ""  # the first word as written, lower case ("priya" of "Priya moved to Berlin")


def read(text: str, holder: str | None = None) -> Statement:
    """The :class:`Statement` of a claim text (its :func:`.claims.base_text`: a ``(since D); previously: …`` tail
    is not part of it), with its holder and, for a combined statement, its parts (each read on its own; a part
    without a subject of its own, "living in Berlin", has the holder of the statement it belongs to). ``holder``
    overrides the holder read from the text (how a part gets its statement's)."""
    plain = base_text(text)
    whose = holder or structure.holder(plain)
    pieces = structure.parts(plain)
    split: tuple[Statement, ...] = ()
    if len(pieces) > 1:
        split = tuple(_read_one(p, whose if i == 0 or not structure.has_subject(p) else structure.holder(p))
                      for i, p in enumerate(pieces))
    one = _read_one(plain, whose)
    return Statement(one.key, one.words, one.anchors, one.cue, one.event, one.holder, split, one.body, one.names,
                     one.lead)


def _read_one(text: str, whose: str) -> Statement:
    key = claim_key(text)
    body = _body(key, text)  # "Caroline: I moved…": the speaker of a transcript line is not the subject
    cue = CUES.search(body)
    raw = _WORD.findall(body)
    content = [w for w in raw if w.strip(".'’-") not in _STOP]
    words = frozenset(stem(w) for w in content)
    anchors = frozenset(stem(w) for w in content if w not in _CUE_WORDS) - _LIGHT
    lead = _LEAD.sub("", body)
    first = (_WORD.findall(lead) or [""])[0]
    after = (_WORD.findall(lead) or ["", ""])[1:2]
    # "Adopted Biscuit from a shelter" happened; "Employed by the council", "Based in Leeds" are states
    event = cue is None and (first in _PAST_IRREGULAR or (first.endswith("ed") and len(first) > 4
                                                          and not (after and after[0] in _STATE_PREPOSITIONS)))
    written = _NAME_WORD.findall(text)
    names = frozenset(w.lower() for w in written[1:] if w[:1].isupper())
    return Statement(key, words, anchors, cue.group(0) if cue else None, event, whose, (), body, names,
                     written[0].lower() if written else "")


def same_frame(a: Statement, b: Statement) -> bool:
    """Two statements about the same entity and attribute: at least two shared content words, one an anchor,
    making up at least 60% of the longer statement's words (what differs is the value, not the attribute:
    "prefers tea in the morning" / "prefers coffee in the morning", not "the project uses Stripe" / "the project
    ships every two weeks")."""
    shared = a.words & b.words
    return len(shared) >= 2 and bool(shared & a.anchors & b.anchors) and \
        len(shared) >= 0.6 * max(len(a.words), len(b.words))


@dataclass(frozen=True)
class Verdict:
    """The test's answer for an (older, newer) pair: ``relation`` (:data:`REPLACES`, :data:`COMPATIBLE`,
    :data:`UNDECIDED` or :data:`UNRELATED`), ``score`` (≥ 0; higher is a closer match: shared anchors plus a
    fuzzy similarity in 0..1) and ``why`` (one short phrase for a person)."""

    relation: str
    score: float = 0.0
    why: str = ""
    parts: frozenset[int] | None = None  # of a combined older statement, the parts replaced (None: the whole)


def compare(older: str | Statement, newer: str | Statement, judge: ValueJudge | None = None) -> Verdict:
    """Whether ``newer`` (said later) replaces ``older``, both claim texts or :func:`read` results (module doc).
    With a ``judge``, a pair the words leave ``unrelated`` is asked of the model (:func:`model_verdict`)."""
    a = older if isinstance(older, Statement) else read(older)
    b = newer if isinstance(newer, Statement) else read(newer)
    verdict = _compare(a, b)
    if judge is not None and verdict.relation == UNRELATED and _model_may_judge(a, b, verdict):
        found = model_verdict(b, [a], judge)[0]
        if found is not None:
            return found
    return verdict


_NOT_A_VALUE = frozenset("now today tomorrow tonight here there then next scratch time home work "
                         "monday tuesday wednesday thursday friday saturday sunday".split())  # "from now on"
_NAMED_OLD = re.compile(r"\b(?:instead of|rather than|in place of|from)\s+(?:the\s+|my\s+|our\s+|a\s+|an\s+)?"
                        r"([a-z0-9][a-z0-9.+#'’-]*)")


def names_another_old_value(older: Statement, newer: Statement) -> bool:
    """True when ``newer`` names the value it replaces ("Uses pnpm instead of npm", "moved from Jira to Linear",
    "rather than the bus") and ``older`` does not hold it: the change is about something else, whatever else the two
    share ("instead of npm" ends no claim about Node)."""
    named = [stem(m.group(1)) for m in _NAMED_OLD.finditer(newer.body or newer.key)
             if (w := m.group(1).strip(".'’-")) not in _STOP and w not in _NOT_A_VALUE and w not in _DATE_WORDS
             and not any(c.isdigit() for c in w)]
    return bool(named) and not any(n in older.words for n in named)


def _model_may_judge(a: Statement, b: Statement, lexical: Verdict) -> bool:
    """A pair the model may look at: the words found it unrelated for want of shared words (no shared anchor; not
    a restatement, not a past event) and the newer one names the value it changes to."""
    return lexical.relation == UNRELATED and not (a.anchors & b.anchors) and not a.event and \
        not other_holders(a, b) and not names_another_old_value(a, b) and \
        not _asks(a) and not _asks(b) and \
        not is_repeat(a.key, b.key) and value_of(b) is not None


def model_verdict(newer: Statement, olders: Sequence[Statement], judge: ValueJudge, *,
                  strict: bool = True) -> list[Verdict | None]:
    """For each of ``olders``: a :data:`REPLACES` verdict when ``judge`` finds ``newer``'s value
    (:func:`value_of`) the same kind of thing as a word of it ("switched to coffee" / "drink tea every morning"),
    scored by the judge, else None. ``strict=False``: the judge's lower bar (pairs to review, not to replace)."""
    value = value_of(newer)
    if value is None or not olders:
        return [None] * len(olders)
    scores = judge.closeness(newer, value, olders, strict=strict)
    return [None if z is None else Verdict(REPLACES, z, f"'{newer.cue}': {value}, close in meaning (model)")
            for z in scores]


# A question reported rather than asked: "Asked whether the battery can be replaced", "Wondered how to …".
_REPORTED_QUESTION = re.compile(r"^(?:[\w'’&-]+\s+){0,4}?(?:asked|asks|asking|wondered|wonders|"
                                r"wanted to know|wants to know|enquired|inquired)\s+(?:me\s+|us\s+)?"
                                r"(?:whether|if|how|what|which|when|where|why|who|about|for)\b")


# An intention, a plan or a wish: "I'm thinking of building a new hutch", "Planning to move to Lisbon", "Might switch
# to Linear". It changes no current value (until it happens), so it replaces no statement that is not one itself.
_INTENDS = re.compile(r"^(?:(?:i|we|the user|he|she|they)(?:'m|'re| am| are| is)?\s+)?(?:still\s+|also\s+)?"
                      r"(?:thinking (?:of|about)|planning (?:to|on)|plans to|considering|hoping to|hopes to|"
                      r"would like to|'d like to|wants? to|wanting to|might|may|intends? to|going to|aims? to|"
                      r"dreams? of|tempted to)\b")


def intends(s: Statement) -> bool:
    """True when ``s`` states an intention, a plan or a wish rather than what is (:data:`_INTENDS`)."""
    return bool(_INTENDS.match(_LEAD_FILLER.sub("", s.body or s.key)))


_LEAD_FILLER = re.compile(r"^(?:(?:also|and|so|btw|honestly|lately|now|currently)\b[\s,]*)+")


def _asks(s: Statement) -> bool:
    """True when ``s`` is a question ("Team size is 7?", "Asked whether the X1 battery can be replaced"): it asks,
    it states no value."""
    return s.key.rstrip(" .!").endswith("?") or bool(_REPORTED_QUESTION.match(s.body or s.key))


def _compare(a: Statement, b: Statement) -> Verdict:
    """The verdict for ``(a, b)``; a combined statement is compared part by part (module doc, "Structure")."""
    whole = _compare_one(a, b)
    if not (a.parts or b.parts) or whole.why == _RESTATED:
        return whole
    older, newer = a.parts or (a,), b.parts or (b,)
    hits: dict[int, Verdict] = {}
    for i, x in enumerate(older):
        for y in newer:
            v = _compare_one(x, y)
            if v.relation == REPLACES and (i not in hits or v.score > hits[i].score):
                hits[i] = v
    if not hits:
        return whole
    best = max(hits.values(), key=lambda v: v.score)
    partial = frozenset(hits) if a.parts and len(hits) < len(older) else None
    return Verdict(REPLACES, max(best.score, whole.score if whole.relation == REPLACES else 0.0),
                   best.why + (f" (part {', '.join(str(i + 1) for i in sorted(partial))} of {len(older)})"
                               if partial else ""), partial)


_RESTATED = "a restatement"


def other_holders(a: Statement, b: Statement) -> bool:
    """True when the older ``a`` and the newer ``b`` are about two different holders' attributes ("I live in Leeds"
    / "Brother lives in Leeds"; "Quillfeather's main product is written in Elixir" / "I left Quillfeather"), unless
    the newer one's holder is named in the older one ("Rufus's vet says he is healthy" may end "Has a beagle
    called Rufus"): nothing one says can replace the other."""
    if a.holder == b.holder:
        return False
    return not (b.holder != USER and stem(b.holder) in a.words)


# The user leaving a named thing (an employer, a club, a city): "I left Tallow & Finch and joined Orrin Health".
_LEAVES = re.compile(r"\b(?:left|leaving|quit|quitting|resigned|jumped ship|moved on from|handed in (?:my|his|her|their) "
                     r"notice)\b")
_TOKEN = re.compile(r"[\w'’-]+|&|[^\w\s]")


def _opens_with_name(s: Statement) -> bool:
    """True when ``s`` opens with its lead name (with any further capitalised words joined by "&", "and" or "of")
    and goes on with a word: "Tallow & Finch runs its pipelines on Airflow", "Lisbon is lovely in spring"."""
    words = _TOKEN.findall(s.body or s.key)
    if not words or words[0] != s.lead:
        return False
    i = 1
    while i < len(words) and (words[i] in s.names or (words[i] in ("&", "and", "of") and i + 1 < len(words)
                                                        and words[i + 1] in s.names)):
        i += 1
    return i < len(words) and words[i][:1].isalpha()


def _its_own_state(a: Statement, b: Statement) -> bool:
    """True when the older ``a`` states a named thing's own attribute, without the user in it ("Tallow & Finch runs
    its pipelines on Airflow"), and the newer ``b`` is the user leaving that thing ("I left Tallow & Finch and
    joined Orrin Health"): the user's move ends the user's tie to the thing, not what is true of the thing. The lead
    is a name because the newer statement writes it with a capital inside the sentence."""
    return bool(a.lead) and a.lead in b.names and b.holder == USER and _LEAVES.search(b.body or b.key) is not None \
        and not structure.mentions_user(a.body or a.key) and _opens_with_name(a)


def _compare_one(a: Statement, b: Statement) -> Verdict:
    if a.key == b.key or is_repeat(a.key, b.key):
        return Verdict(UNRELATED, 0.0, _RESTATED)
    if _asks(a) or _asks(b):
        return Verdict(UNRELATED, 0.0, "a question states nothing")
    if intends(b) and not intends(a):
        return Verdict(UNRELATED, 0.0, "the newer one is an intention, not what is")
    if _ADDS.search(b.body or b.key) and not _ENDING.search(b.body or b.key):
        return Verdict(UNRELATED, 0.0, "the newer one adds one more, it replaces nothing")
    if a.lead and a.lead == b.lead and _with_user(b) and not _with_user(a):
        # "Chris works as a pilot" / "Chris and I got married": Chris's job, then the couple's news
        return Verdict(UNRELATED, 0.0, f"about {a.lead} alone, then about {a.lead} and the user")
    if b.lead and b.lead in a.names and b.holder == USER and not _ENDING.search(b.body or b.key) \
            and not _with_user(b):  # "Anika and I …": the user's news too
        # "My manager is Priya Raman" / "Priya moved to Berlin": a change of Priya's, not of the user's manager
        return Verdict(UNRELATED, 0.0, f"about {b.lead}, named in the older one, not about its holder")
    if _its_own_state(a, b):
        return Verdict(UNRELATED, 0.0, f"about {a.lead}'s own state, then the user leaving it")
    if other_holders(a, b):
        return Verdict(UNRELATED, 0.0, f"about {a.holder if a.holder != USER else 'the user'}, not "
                                       f"{b.holder if b.holder != USER else 'the user'}")
    if (sa := subject_of(a.key)) and (sb := subject_of(b.key)) and sa[0] == sb[0] and sa[1] != sb[1]:
        if sa[1].split()[0] == sb[1].split()[0]:  # "lisbon" / "lisbon last year": the same value, told again
            return Verdict(COMPATIBLE, 1.0, f"the same {sa[0]}")
        return Verdict(REPLACES, 1.0 + fuzz.token_set_ratio(a.key, b.key) / 100.0, f"a new {sa[0]}")
    if a.event:
        return Verdict(UNRELATED, 0.0, "the older one is a past event")
    shared = a.anchors & b.anchors
    if not shared:
        return Verdict(UNRELATED)
    score = len(shared) + fuzz.token_set_ratio(a.key, b.key) / 100.0
    if len(shared) < COVERAGE * min(len(a.anchors), len(b.anchors)):
        return Verdict(UNRELATED, score, "one shared word among many")
    if _numbered_things(a, b):
        # "Backlog item 03 …" / "Moved backlog item 04 to the next sprint": two items of one list, never one
        return Verdict(UNRELATED, score, "different numbered things")
    kind = _kind_moved(a, b) if b.cue else None
    if b.cue and not _only_a_new_thing(a, b) and (not _only_a_weak_now(a, b) or modifier_swap(a, b) or kind):
        if (target := _target(b.key)) and target <= a.anchors:
            # "Moved to Lisbon in 2019" after "Lives in Lisbon": the change ends at the value already held
            return Verdict(COMPATIBLE, score, f"the change is to {' '.join(sorted(target))}, the value it had")
        if not names_another_old_value(a, b):  # "instead of npm" ends nothing that does not say npm
            # a new value of the kind the older one gives (days for days, a price for a price) is the better match:
            # "I now go into the office only on Tuesdays" ends "Works from the office Monday to Wednesday", not
            # "The office is in Canary Wharf"
            return Verdict(REPLACES, score + (1.0 if kind else 0.0),
                           f"'{b.cue}' about {', '.join(sorted(shared))}" + (f", new {kind}" if kind else ""))
    if not same_frame(a, b):
        if not b.cue and _only_specifics_differ(a, b):
            # "Draft due on March 20" / "… April 3", "My daughter is 5" / "… is 6": too few words for a frame, but
            # every word but the number or date is the same (light verbs included)
            return Verdict(REPLACES, score, "the same statement with another number, date or version")
        if (moved := specific_moved(a, b)) is not None:
            return Verdict(REPLACES, score, f"a new number, date or version for {moved}")
        return Verdict(UNRELATED, score)
    if a.words <= b.words or b.words <= a.words:
        return Verdict(COMPATIBLE, score, "one refines the other")
    if specifics(a.key) != specifics(b.key) and _without_specifics(a.anchors) == _without_specifics(b.anchors):
        # "The platform team has 6 engineers" / "… has 8 engineers": a number, date or version in the same words
        # is one value that changed (a past event, which would stay true, was ruled out above)
        return Verdict(REPLACES, score, "the same statement with another number, date or version")
    if (moved := specific_moved(a, b)) is not None:
        return Verdict(REPLACES, score, f"a new number, date or version for {moved}")
    return Verdict(UNDECIDED, score, f"different values about {', '.join(sorted(shared))}, no cue")


MIN_MOVED_SHARED = 2  # words (besides numbers and dates) two statements share to be one thing whose value moved
MOVED_SHARE = 0.5  # … making up at least this share of the shorter statement's words


def specific_moved(older: Statement, newer: Statement) -> str | None:
    """The shared words (sorted, joined) when the two statements name the same thing in other words and give it
    another number, date, weekday or version: "The platform team has 6 engineers" / "Platform team headcount: 11
    engineers after the merger"; "Thesis draft due to the supervisor on March 20" / "Supervisor wants the thesis
    draft by April 24"; "The admin portal runs Django 3.2" / "Admin portal: Django 5.1". At least
    :data:`MIN_MOVED_SHARED` words besides numbers, dates and light verbs ("Has 2 cats" / "Wants 3 cats" share only
    "cat"; "Uses Python 3.11" / "Uses Python 3.12 and Go 1.22" only "python"), with light verbs making up :data:`MOVED_SHARE` of the shorter statement's, both statements with a number or
    date and not the same ones, no question, no past event in the older. None otherwise: a thing of one list
    (``sprint 12`` / ``sprint 13``) is ruled out before this is asked."""
    if older.event or _asks(older) or _asks(newer) or (older.cue and not newer.cue):
        return None  # a change said in words is not undone by a plain restatement with another number
    if _kind_moved(older, newer) is None:
        return None  # no new value of a kind both give: "… builds on 6 May" / "… has 300 testers" (no new date)
    wa, wb = _without_specifics(older.words), _without_specifics(newer.words)
    shared = wa & wb
    if len(shared - _LIGHT) < MIN_MOVED_SHARED or len(shared) < MOVED_SHARE * min(len(wa), len(wb)):
        return None  # "Uses Python 3.11" / "Uses Python 3.12 and Go 1.22": one name in common is not one thing
    if _head(older) not in newer.words and _head(newer) not in older.words:
        return None  # "Picks the kids up from school at 3 pm" / "Drops the kids at school at 8:20": another act
    if not set(_heads(older, 2)) <= newer.words:
        return None  # "Grant application due March 20" / "Progress report for the grant due March 31": another thing
    if modifier_swap(older, newer) or _another_head(older, newer):
        return None  # "The platform team has 6 engineers" / "The data team has 4 engineers": another team;
        # "Tax return due April 30" / "Tax payment due June 15": another thing of the same kind
    if len(wa - wb - _LIGHT) > MAX_MOVED_UNSHARED:
        return None  # the older one says more about its thing than the newer one repeats: maybe another thing
    return ", ".join(sorted(shared))


MAX_MOVED_UNSHARED = 1  # words of the older statement (not numbers, dates or light verbs) the newer may leave out


def _another_head(older: Statement, newer: Statement) -> bool:
    """True when a word that modifies a thing in one statement modifies another thing in the other ("tax return" /
    "tax payment", "conference abstract" / "conference talk"): two things of one kind."""
    heads_a = {m: h for h, m in _pairs(older).items()}
    heads_b = {m: h for h, m in _pairs(newer).items()}
    return any(heads_b.get(m) not in (None, h) and heads_b[m] not in older.words and h not in newer.words
               for m, h in heads_a.items())


def _heads(s: Statement, n: int) -> list[str]:
    """The stems of the first ``n`` content words of ``s`` that are not light verbs, numbers or dates: what the
    statement names first ("Grant application due March 20" → ``grant``, ``applic``)."""
    lead = _LEAD.sub("", s.body or s.key)
    out = [stem(w) for w in _WORD.findall(lead) if w.strip(".'’-,") not in _STOP and stem(w) not in _LIGHT]
    return [w for w in out if w not in _DATE_WORDS and not any(c.isdigit() for c in w)][:n]


_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri "
                      "sat sun weekday weekend".split())
_MONTHS = frozenset("jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july "
                    "august september october november december".split())


def _value_kinds(s: Statement) -> dict[str, set[str]]:
    """The values ``s`` gives by kind: ``date`` ("6 May", "March 20th"), ``weekday``, ``month``, ``time`` ("3pm",
    "10:30"), ``money``, ``version`` ("3.12", "v20"), ``number``."""
    out: dict[str, set[str]] = {}
    words = [w.strip(".'’-,") for w in _WORD.findall(s.body or s.key)]
    for i, w in enumerate(words):
        bare = w[:-1] if w.endswith("s") and w[:-1] in _WEEKDAYS else w
        near = words[max(0, i - 1):i] + words[i + 1:i + 2]
        if re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", w) and any(n in _MONTHS for n in near):
            kind, bare = "date", f"{w} {next(n for n in near if n in _MONTHS)}"  # "6 May", "May 6th": one date
        elif w in _MONTHS and any(re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", n) for n in near):
            continue  # the month of a date, counted with its day
        elif bare in _WEEKDAYS:
            kind = "weekday"
        elif w in _MONTHS:
            kind = "month"
        elif re.fullmatch(r"\d{1,2}(?::\d\d)?(?:am|pm)|\d{1,2}:\d\d", w):
            kind = "time"
        elif re.fullmatch(r"[$€£]\d[\d.,]*k?|\d[\d.,]*k", w):
            kind = "money"
        elif re.fullmatch(r"v?\d+\.\d+(?:\.\d+)?|v\d+", w):
            kind = "version"
        elif re.fullmatch(r"\d[\d,]*", w):
            kind = "number"
        else:
            continue
        out.setdefault(kind, set()).add(bare)
    return out


def _kind_moved(older: Statement, newer: Statement) -> str | None:
    """The kind of value (:func:`_value_kinds`) both statements give with no value in common, or None: the newer
    one gives a new value of the kind the older one gave."""
    ka, kb = _value_kinds(older), _value_kinds(newer)
    for kind in ("date", "weekday", "time", "money", "version", "month", "number"):
        if kind in ka and kind in kb and not ka[kind] & kb[kind]:
            return kind
    return None


def _head(s: Statement) -> str | None:
    """The stem of the first content word of ``s`` that is not a light verb (after "I", "the user", …): the
    verb or the thing a statement is about ("Picks the kids up" → ``pick``; "Our Pro plan costs" → ``pro``)."""
    lead = _LEAD.sub("", s.body or s.key)
    return next((stem(w) for w in _WORD.findall(lead) if w.strip(".'’-,") not in _STOP
                 and stem(w) not in _LIGHT), None)


def _pairs(s: Statement) -> dict[str, str]:
    """Head → modifier of each pair of adjacent content words of ``s`` as written ("prefer dark mode" → {mode:
    dark}; "book me an aisle seat" → {seat: aisle}); a head or modifier with a digit (an id, a version) or a
    light, cue or function word makes no pair."""
    words = [w.strip(".'’-,") for w in _WORD.findall(s.body)]
    out: dict[str, str] = {}
    for m, h in zip(words, words[1:], strict=False):
        if any(w in _STOP or w in _CUE_WORDS or stem(w) in _LIGHT or any(c.isdigit() for c in w) or not w
               for w in (m, h)):
            continue
        out.setdefault(stem(h), stem(m))
    return out


def modifier_swap(older: Statement, newer: Statement) -> tuple[str, str, str] | None:
    """``(head, old modifier, new modifier)`` when both statements name the same kind of thing by the same head
    word with another modifier in front, and the older one's modifier is not a word of the newer one: "Prefers
    dark mode" / "I use light mode in every editor now" → (mode, dark, light); "window seats" / "an aisle seat".
    The value of an attribute that changed, when the holder and the head are the same; None otherwise."""
    pa, pb = _pairs(older), _pairs(newer)
    for head, mod in pa.items():
        new_mod = pb.get(head)
        if new_mod and new_mod != mod and mod not in newer.words and new_mod not in older.words:
            return head, mod, new_mod
    return None


_NEW_THING = re.compile(r"\bnew\s+([a-z0-9][a-z0-9.+#:'’-]*)")


def _only_a_new_thing(older: Statement, newer: Statement) -> bool:
    """True when the newer statement's only change cue is "new" and what is new is not a word of the older one:
    "Bought a new collar for Rex" says nothing changed about "Has a dog named Rex"; "Got a new job at Initech"
    (job → work) still replaces "Works at Acme"."""
    body = newer.body
    if any(m.group(0) != "new" for m in CUES.finditer(body)):
        return False
    things = {stem(m.group(1)) for m in _NEW_THING.finditer(body)}
    return not (things & older.words)


_WEAK = frozenset({"now", "is now", "are now"})


def _only_a_weak_now(older: Statement, newer: Statement) -> bool:
    """True when the newer statement's only change cue is a bare "now" and it shares with the
    older one a single word that is not the older one's head (its first content word, the verb of its frame):
    "Lisbon is now very expensive" is no change of "Lives in Lisbon", nor "Rex is now 5" of "Has a dog named Rex";
    "I drink coffee now" still replaces "I drink tea every morning" and "Now prefer light mode" "Prefers dark
    mode" (the head is shared)."""
    body = newer.body
    if any(m.group(0) not in _WEAK for m in CUES.finditer(body)):
        return False
    if len(older.words & newer.words) >= 2:
        return False
    lead = _LEAD.sub("", older.body)
    head = next((stem(w) for w in _WORD.findall(lead) if w.strip(".'’-") not in _STOP), None)
    return head not in newer.words


_DATE_WORDS = frozenset(
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august september "
    "october november december monday tuesday wednesday thursday friday saturday sunday".split())


# A number that names which one, not how many or which version: "friend number 3", "issue #12", "chapter 4".
# Also "backlog item 03", "milestone 2", "step 4", and a zero-padded number ("07"). Not a letter-number name ("M2
# chip", "GPT-4", "v2"): those are versions, whose change is an update.
_ID_NUMBER = re.compile(
    r"(?:\b(?:number|no\.|issue|ticket|chapter|episode|sprint|pr|item|task|step|milestone|phase|stage|part|story|"
    r"epic|bug|card|lesson|module|unit|room|lot|section|question|requirement|feature|objective|okr|adr|rfc|"
    r"exercise|round|level|slide|figure|table|appendix)\s*#?\s*|#)((?:[a-z]{1,8}-)?\d[\w.-]*)"
    r"|\b(0\d)\b")


def _numbered_things(a: Statement, b: Statement) -> bool:
    """True when both statements name a thing by its number and no number is shared ("Sprint 12 retro went well" /
    "Sprint 13 retro went well"; "Backlog item 03: billing export" / "Moved backlog item 04 to the next sprint"):
    two things of one list, both hold, whatever cue the newer one has. "Sprint 12 ends on March 3" / "… March 10"
    is one sprint whose date moved."""
    ids = [{"".join(m) for m in _ID_NUMBER.findall(s.key)} for s in (a, b)]
    return bool(ids[0]) and bool(ids[1]) and not ids[0] & ids[1]


def _only_specifics_differ(a: Statement, b: Statement) -> bool:
    """True when ``a`` and ``b`` differ only in their numbers, versions and dates: their content words (light verbs
    included) without those are the same, and not empty ("Has 2 cats" / "Wants 3 cats" differ in "wants")."""
    plain = [_without_specifics(s.words) for s in (a, b)]
    return bool(plain[0]) and plain[0] == plain[1] and specifics(a.key) != specifics(b.key)


def _without_specifics(words: frozenset[str]) -> frozenset[str]:
    """``words`` (stems) without numbers, versions and the month and day names of dates."""
    return frozenset(w for w in words if not any(c.isdigit() for c in w) and w not in _DATE_WORDS
                     and f"{w}s" not in _DATE_WORDS)


def best_replaced(newer: str | Statement, older: Sequence[str | Statement],
                  judge: ValueJudge | None = None) -> int | None:
    """The index in ``older`` of the one statement ``newer`` replaces: the single best-scored :data:`REPLACES`
    verdict. None when there is none, or when two candidates tie on shared anchors and their fuzzy scores are
    within 0.05 (a person decides: lint reports the pairs).

    With a ``judge``, and only when the words relate ``newer`` to none of ``older`` (every verdict
    :data:`UNRELATED` for want of shared words), the model decides: the older statement whose judged score beats
    every other model-close one by :data:`MODEL_MARGIN`; None on a closer race (lint reports the pairs)."""
    b = newer if isinstance(newer, Statement) else read(newer)
    olds = [o if isinstance(o, Statement) else read(o) for o in older]
    # only pairs sharing a word can relate, but a part of a combined statement may be about a single-valued subject
    # whose values share none ("living in Berlin" / "moved to Lisbon")
    verdicts = [_compare(o, b) if o.anchors & b.anchors or o.parts or b.parts else Verdict(UNRELATED) for o in olds]
    scored = sorted(((v.score, i) for i, v in enumerate(verdicts) if v.relation == REPLACES), reverse=True)
    if not scored:
        if judge is None or any(v.relation != UNRELATED for v in verdicts):
            return None
        open_ = [i for i, (o, v) in enumerate(zip(olds, verdicts, strict=True)) if _model_may_judge(o, b, v)]
        found = model_verdict(b, [olds[i] for i in open_], judge)
        close = sorted(((v.score, open_[k]) for k, v in enumerate(found) if v is not None), reverse=True)
        if not close or (len(close) > 1 and close[0][0] - close[1][0] < MODEL_MARGIN):
            return None
        return close[0][1]
    if len(scored) > 1 and int(scored[0][0]) == int(scored[1][0]) and scored[0][0] - scored[1][0] < 0.05:
        return None
    return scored[0][1]


MAX_ANCHOR_CLAIMS = 40  # claims one anchor may pair in pairs_to_review (a word in more names no one subject)
MAX_MODEL_OLDER = 200  # claims said before one a model compares it with in pairs_to_review


def pairs_to_review(claims: Iterable[tuple[Any, str, dt.date | None]],
                    judge: ValueJudge | None = None) -> list[tuple[Any, Any, Verdict]]:
    """The (older, newer) pairs among current ``claims`` a person should decide: :data:`REPLACES` or
    :data:`UNDECIDED` verdicts between two claims both still current. ``claims`` are ``(handle, text, day)``
    (``day`` when the claim became true; None sorts first); the handles come back as ``(older, newer, verdict)``,
    in input order. Only pairs sharing an anchor are compared (an inverted index), so a page of n claims costs far
    less than n² comparisons; an anchor held by more than :data:`MAX_ANCHOR_CLAIMS` claims is too common to name a
    subject and pairs no claims on its own (without the cap, 2,000 claims over a small vocabulary took 74 s and
    named 197,002 pairs).

    With a ``judge``, each claim that names the value it changes to (:func:`value_of`) is also compared with the
    claims said before it that it shares no anchor with (:func:`model_verdict`; at most
    :data:`MAX_MODEL_OLDER` of them, the latest): the pairs the judge finds close at its lower bar come back as
    :data:`REPLACES` (lint drops those whose newer claim replaced something at ingest)."""
    items = [(h, read(t), d) for h, t, d in claims]
    by_anchor: dict[str, list[int]] = {}
    for i, (_, s, _) in enumerate(items):
        for w in s.anchors:
            by_anchor.setdefault(w, []).append(i)
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int, Verdict]] = []
    for members in by_anchor.values():
        if len(members) > MAX_ANCHOR_CLAIMS:
            continue
        for x in members:
            for y in members:
                if x >= y or (x, y) in seen:
                    continue
                seen.add((x, y))
                dx, dy = items[x][2], items[y][2]
                first, second = (x, y) if (dx or dt.date.min) <= (dy or dt.date.min) else (y, x)
                verdict = compare(items[first][1], items[second][1])
                if verdict.relation in (REPLACES, UNDECIDED):
                    out.append((first, second, verdict))
    if judge is not None:
        order = sorted(range(len(items)), key=lambda i: (items[i][2] or dt.date.min, i))
        for rank, y in enumerate(order):
            if value_of(items[y][1]) is None:
                continue
            earlier = [x for x in order[max(0, rank - MAX_MODEL_OLDER):rank]
                       if _model_may_judge(items[x][1], items[y][1], Verdict(UNRELATED))]
            found = model_verdict(items[y][1], [items[x][1] for x in earlier], judge, strict=False)
            out.extend((x, y, v) for x, v in zip(earlier, found, strict=True) if v is not None)
    return [(items[o][0], items[n][0], v) for o, n, v in sorted(out, key=lambda p: (p[0], p[1]))]


class RankedRow(Protocol):
    """What :func:`prefer_newer` reads of a recall hit: ``text`` (claim text without markers), ``date`` (ISO day it
    was said or last confirmed, or None)."""

    text: str
    date: str | None


# Only the first rows are reordered: the set of the first PREFER_WINDOW hits (and of any longer prefix) is the
# same as without the preference, so recall@k for k >= PREFER_WINDOW cannot change; only the order inside does.
PREFER_WINDOW = 5


def prefer_newer(rows: list[RankedRow], window: int = PREFER_WINDOW) -> list[RankedRow]:
    """``rows`` (best first) with, among the first ``window``, each pair on the same subject in time order: when an
    older row ranks above a newer one and :func:`compare` says the newer :data:`REPLACES` it (or the two are
    :data:`UNDECIDED` near-duplicates), the newer row moves to just above the older one; the rows between them
    move down one place each (the older row stays next to its replacement instead of dropping to where the newer
    one was, below rows that may not be about the subject at all). Rows without a date stay where they are. Scores
    are not touched (each row keeps the score its relevance and importance gave it), so inside the first
    ``window`` the order may differ from the score order; the rest is as given. Two rows of different scopes
    (a ``scope`` attribute: the person's ``""`` or a project key) are never a pair: supersession stays within a
    scope. Returns a new list; nothing is dropped or added."""
    out = list(rows)
    head = min(window, len(out))
    reads = {id(r): read(r.text) for r in out[:head] if r.date}
    for j in range(1, head):
        lower = out[j]
        if id(lower) not in reads:
            continue
        for i in range(j):
            upper = out[i]
            if id(upper) not in reads or upper.date >= lower.date:
                continue  # the upper one must be the older
            if getattr(upper, "scope", "") != getattr(lower, "scope", ""):
                continue  # one project's fact never replaces another's, nor the person's (issue 26)
            if compare(reads[id(upper)], reads[id(lower)]).relation in (REPLACES, UNDECIDED):
                out.insert(i, out.pop(j))
                break
    return out
