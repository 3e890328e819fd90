"""Importance: how much recall should trust a row, from the lifecycle signals written into the vault.

Pure functions, no I/O. The indexer stamps :func:`chunk_importance` into a row's ``importance`` column and its
factors into the row metadata (``importance_factors``); recall applies the one time-dependent factor, the stale
decay (:func:`effective_importance`), with the settings' today, and combines relevance with importance
(:func:`final_score`).

Importance of one row (0..1; 0.5 is neutral)::

    row                                   importance
    ------------------------------------  ----------------------------------------------------------------
    daily-log fact, core file             0.5 (raw capture has no lifecycle)
    MEMORY.md chunk                       0.5; a manual-zone chunk with a human: stamp: the 0.9 floor
    vault chunk                           0.5 base
      + confirmations (N = highest          + min(0.25, 0.08 · log2 N)   N=1: +0, 2: +0.08, 3: +0.127,
        "confirmed Nx" in the chunk)                                      8: +0.24, ≥ 9: +0.25 (cap)
      status: draft                         − 0.05
      human verification                    max(value, 0.9)  (a floor, not a bonus; replaces the above when
        (frontmatter verified: human:…)                       lower)
      section "## Previously" (history)     × 0.2            (after the floor: verified history is history;
                                                            replaced claims rank like deprecated ones)
      status: deprecated                    = 0.1            (wins over everything, no other factor applies)
    at recall: today > stale_after          × 0.6            (not for human-verified or deprecated pages)

Only a ``human:`` actor qualifies as verification (``verified: human:<name>@<YYYY-MM-DD>``,
:func:`suzent_cli.vault.claims.human_stamp`); ``agent:x`` or any other actor is ignored, or an agent stamping itself
would launder its own output into the strongest evidence.

Recall's final score (see :func:`final_score`)::

    importance ≥ 0.5:  final = relevance · (1 + IMPORTANCE_WEIGHT · (importance − 0.5))     IMPORTANCE_WEIGHT = 0.5
    importance < 0.5:  final = relevance + IMPORTANCE_WEIGHT · (importance − 0.5)

so a neutral row (every daily-log fact: 0.5) gets exactly its relevance and raw-log ranking is unchanged by
construction. A lift is a share of the row's own relevance (at most +20 %: a confirmed current claim 3x +3.2 %,
human-verified +20 %): it decides between comparably relevant rows but cannot lift an irrelevant row over a match
(issue 16: a fixed +0.2 let a verified MEMORY.md line win unrelated queries). A demotion is a fixed amount (a
history chunk −0.18, deprecated −0.2), so a replaced claim ranks under the current one even when its words match
the query better.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from suzent_cli.text import STOP_WORDS as _STOP
from suzent_cli.vault.claims import human_stamp, memory_stamp
from suzent_cli.vault.pages import meta_date
from suzent_cli.vault.structure import KIN_ADJ as _KIN_ADJ
from suzent_cli.vault.structure import RELATION_NAMES, USER, USERS_AFTER_ALL, mentions_user, relation
from suzent_cli.vault.structure import RELATION_PATTERN as _REL
from suzent_cli.vault.structure import holder as statement_holder

NEUTRAL = 0.5  # raw capture, core files, and the vault base
CONFIRM_SLOPE = 0.08  # bonus per doubling of confirmations
CONFIRM_CAP = 0.25
DRAFT_PENALTY = 0.05
DEPRECATED = 0.1
HUMAN_FLOOR = 0.9
HISTORY_FACTOR = 0.2
HISTORY_SECTIONS = frozenset({"previously", "history"})  # compared case-insensitively
STALE_FACTOR = 0.6
IMPORTANCE_WEIGHT = 0.5
FACTORS_KEY = "importance_factors"  # the row-metadata key the indexer writes and recall reads

_CONFIRMED = re.compile(r"\(confirmed (\d+)x, last \d{4}-\d{2}-\d{2}\)")
_BULLET = re.compile(r"^[-*+]\s")


@dataclass(frozen=True)
class PageSignals:
    """The page-level signals of a vault page's frontmatter.

    ``status``: lower-cased ``status`` value or None; ``stale_after``: the date or None (unparseable → None);
    ``human``: the qualifying ``verified`` stamp as written (``human:<name>@<date>``) or None.
    """

    status: str | None = None
    stale_after: dt.date | None = None
    human: str | None = None


def page_signals(meta: Mapping[str, Any] | None) -> PageSignals:
    """Read ``status``, ``stale_after`` and ``verified`` from a parsed frontmatter mapping (None or a non-mapping →
    no signals). Never raises: an unreadable value is treated as absent."""
    if not isinstance(meta, Mapping):
        return PageSignals()
    status = meta.get("status")
    return PageSignals(status=str(status).strip().lower() if isinstance(status, str) and status.strip() else None,
                       stale_after=meta_date(meta.get("stale_after")), human=human_stamp(meta.get("verified")))


def confirmations(chunk: str) -> int:
    """The highest ``(confirmed Nx, last YYYY-MM-DD)`` count among the claim bullets of ``chunk``; 0 when none."""
    counts = [int(m.group(1)) for line in chunk.split("\n") if _BULLET.match(line.lstrip())
              for m in _CONFIRMED.finditer(line)]
    return max(counts, default=0)


def confirmation_bonus(n: int) -> float:
    """``min(CONFIRM_CAP, CONFIRM_SLOPE · log2 n)`` for n ≥ 1; 0 for n ≤ 1 (a single statement earns nothing)."""
    return min(CONFIRM_CAP, CONFIRM_SLOPE * math.log2(n)) if n > 1 else 0.0


def is_history(section: str | None) -> bool:
    """True for a section that records replaced claims (``## Previously``, ``## History``)."""
    return bool(section) and section.strip().lower() in HISTORY_SECTIONS


def chunk_importance(signals: PageSignals, section: str | None, chunk: str) -> tuple[float, dict[str, Any]]:
    """The indexer's importance of one vault chunk (everything but the stale decay; see the module table).

    Returns ``(importance in 0..1, factors)``; ``factors`` is JSON-serializable and is stored in the row metadata
    under :data:`FACTORS_KEY` so recall can apply the stale decay and explain the value: ``base``,
    ``confirmations`` (N), ``confirmation_bonus``, ``status``, ``status_effect`` (−0.05 draft, 0 otherwise),
    ``human`` (stamp or None), ``human_floor`` (0.9 or None), ``section``, ``section_factor``
    (:data:`HISTORY_FACTOR` = 0.2 for a history section, else 1), ``stale_after`` (ISO date or None), ``stamped``
    (the result).
    """
    n = confirmations(chunk)
    bonus = confirmation_bonus(n)
    status_effect = -DRAFT_PENALTY if signals.status == "draft" else 0.0
    section_factor = HISTORY_FACTOR if is_history(section) else 1.0
    if signals.status == "deprecated":
        value = DEPRECATED
    else:
        value = NEUTRAL + bonus + status_effect
        if signals.human:
            value = max(value, HUMAN_FLOOR)
        value *= section_factor
    value = round(min(1.0, max(0.0, value)), 6)
    factors = {
        "base": NEUTRAL, "confirmations": n, "confirmation_bonus": round(bonus, 6), "status": signals.status,
        "status_effect": status_effect, "human": signals.human, "human_floor": HUMAN_FLOOR if signals.human else None,
        "section": section or "", "section_factor": section_factor,
        "stale_after": signals.stale_after.isoformat() if signals.stale_after else None, "stamped": value,
    }
    return value, factors


def stale_factor(factors: Mapping[str, Any] | None, today: dt.date | None) -> float:
    """:data:`STALE_FACTOR` once ``today`` is after the factors' ``stale_after``, else 1.0. Never for a
    human-verified or deprecated page, nor without a ``today`` or ``stale_after``."""
    if not factors or today is None or factors.get("human") or factors.get("status") == "deprecated":
        return 1.0
    stale_after = meta_date(factors.get("stale_after"))
    return STALE_FACTOR if stale_after is not None and today > stale_after else 1.0


def effective_importance(stored: float | None, factors: Mapping[str, Any] | None,
                         today: dt.date | None) -> tuple[float, float]:
    """Recall-time importance: ``(stored × stale factor, stale factor)``. A missing ``stored`` is neutral."""
    base = NEUTRAL if stored is None else float(stored)
    factor = stale_factor(factors, today)
    return base * factor, factor


def final_score(relevance: float, importance: float) -> float:
    """The row's score from its ``relevance`` (≥ 0) and ``importance`` (0..1): exactly ``relevance`` for a neutral
    row (0.5). Above neutral, a share of the row's own relevance is added, ``relevance · IMPORTANCE_WEIGHT ·
    (importance − NEUTRAL)`` (at most +20 %): importance reorders rows whose relevance is within a fifth of each
    other and cannot lift an unrelated row, however weak the query's best match (a fixed +0.2 let a human-verified
    line win a query whose answers all scored about 0.4). Below neutral, ``IMPORTANCE_WEIGHT · (importance −
    NEUTRAL)`` is subtracted as a fixed amount (at most −0.2): history and deprecated rows are demoted whatever
    their relevance, and a demotion never lifts anything."""
    delta = IMPORTANCE_WEIGHT * (importance - NEUTRAL)
    return relevance + (relevance * delta if delta > 0 else delta)


def relevance_for(score: float, importance: float) -> float:
    """The relevance whose :func:`final_score` under ``importance`` is ``score`` (its inverse): what a row's
    relevance becomes when recall lowers its score to a bound (recall.cap_borrowed)."""
    if importance >= NEUTRAL:
        return score / (1 + IMPORTANCE_WEIGHT * (importance - NEUTRAL))
    return score - IMPORTANCE_WEIGHT * (importance - NEUTRAL)


def memory_chunk_importance(zone: str, chunk: str) -> tuple[float, dict[str, Any] | None]:
    """Importance of one MEMORY.md chunk: the human floor (:data:`HUMAN_FLOOR`, via :func:`chunk_importance`) for
    a manual-zone chunk carrying a ``human:`` stamp, with its factors (so recall skips the stale decay and can
    explain it); :data:`NEUTRAL` and no factors for generated-zone chunks and unstamped manual chunks."""
    stamp = memory_stamp(chunk) if zone == "manual" else None
    if stamp is None:
        return NEUTRAL, None
    value, factors = chunk_importance(PageSignals(human=stamp), None, chunk)
    return value, {**factors, "zone": zone}


# --- questions about now (issue 27, item 3) ---------------------------------------------------------------------
#
# A question about the present of the user ("what is the name of the user's pet", "how does the user commute") is
# answered by a standing state of the user. Two kinds of row share its words and meaning without answering it:
#
#   a row whose holder is another person   "My brother has a cat named Pixie", "Mom still uses LastPass",
#                                          "Partner has a PureGym membership"   × OTHER_HOLDER_FACTOR
#   a one-off outing or meeting            "Visited Lisbon last week", "Gave a talk at the Northwind meetup
#                                          on Friday"                             × ONE_OFF_FACTOR
#
# Both are read from the statement's start and a short word list, never from a model: the holder is the person
# relation the statement opens with ("my brother", "the user's sister", "Mom", "best friend Leila", "parents'
# dog", "has a friend who …"), the one-off a past-tense outing verb with a past time ("visited … last week"). A row that names the user
# beside the relation ("My wife and I …") is the user's. Only a question that names the user ("the user", "my",
# "I", "me") and does not ask about the past ("did", "was", "used to", a date) is read this way
# (:func:`now_holder`); a question about a relation ("where does the user's grandmother live") demotes rows about
# other relations, never the grandmother's own. What replaced what is the dream's and the newer-first step's
# (vault.supersede), not this one's.

OTHER_HOLDER_FACTOR = 0.5  # like a neighbour's share (recall.NEIGHBOUR_SHARE): context, not the answer
ONE_OFF_FACTOR = 0.85
ONE_OFF_WHY = "a one-off outing, not a standing state"
INTENT_FACTOR = 0.7  # issue 27, second pass: an intention or a reported question, not a standing state
INTENT_WHY = "an intention or a reported question, not a standing state"
STATEMENT_CHARS = 1000  # of a row's text read by now_factor: a statement opens and says its time well before this

# Person relations and how a statement opens with one are read by suzent_cli.vault.structure (the same reading
# the dream's same-subject test uses): one list of relations, one holder.
# A question's holder: a relation it names as the user's ("the user's grandmother", "my brother").
_QUERY_RELATION = re.compile(rf"\b(?:the user'?s|user'?s|my|your|mine)\s+{_KIN_ADJ}({_REL})\b", re.IGNORECASE)
_NAMES_USER = re.compile(r"\b(?:the user|user'?s?|i|i'm|i've|me|my|mine|myself)\b", re.IGNORECASE)
# A question about the past: a past-tense auxiliary, "used to", "before", "ago", "ever", "previously", …
_PAST_QUERY = re.compile(r"\b(?:did|was|were|had|used to|previously|formerly|originally|before|ago|ever|at first|"
                         r"in the past|back then|history|last (?:year|month|week|time))\b", re.IGNORECASE)
# A one-off outing: a past-tense outing verb and a past time, and no change word (a move or a switch is a state).
_OUTING = re.compile(r"\b(?:visited|went to|attended|watched|saw|met up|met with|had (?:lunch|dinner|breakfast|"
                     r"drinks|coffee|a call)|gave a talk|spoke at|stopped by|dropped by|popped into|toured|"
                     r"celebrated|hosted)\b", re.IGNORECASE)
_PAST_TIME = re.compile(r"\b(?:yesterday|last (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|"
                        r"friday|saturday|sunday|summer|winter|spring|autumn|fall)|this (?:morning|afternoon)|"
                        r"earlier today|the other day|(?:a|one|two|three|few|\d+) (?:days?|weeks?|months?) ago|"
                        r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|over the weekend)\b",
                        re.IGNORECASE)
_STATE_CUE = re.compile(r"\b(?:moved|relocated|switched|started|joined|now|since|every|always|usually|no longer|"
                        r"quit|stopped|lives?|works?)\b", re.IGNORECASE)


def now_holder(query: str) -> str | None:
    """Whose present state ``query`` asks about: a relation's one name when it names one as the user's ("where does
    the user's grandmother live" → ``"grandmother"``), :data:`USER` when it names the user ("the user", "my", "I"),
    None when it names neither or asks about the past (a past-tense auxiliary, "used to", "before", "ago", …):
    the present-question rules (:func:`now_factor`) do not apply then. A query naming a date is the caller's to
    leave out (recall skips these rules for it)."""
    if _PAST_QUERY.search(query):
        return None
    m = _QUERY_RELATION.search(query)
    if m:
        return relation(m.group(1))
    return USER if _NAMES_USER.search(query) else None


def row_holder(text: str) -> str | None:
    """The relation whose state ``text`` states (:func:`suzent_cli.vault.structure.holder`: "My brother has a cat"
    → ``"brother"``, "Mom still uses LastPass" → ``"mother"``, "parents' dog Biscuit …" → ``"parents"``, "Has a
    friend who works at Initech" → ``"friend"``); None for a statement of the user's, one that names the user
    beside the relation ("My wife and I moved …"), one that names who the relation is ("Manager is Priya": the
    user's manager, a fact of the user's), or one owned by a name that is no relation ("Quillfeather's product")."""
    who = statement_holder(text.strip())
    return who if who in RELATION_NAMES else None


def one_off(text: str) -> bool:
    """Is ``text`` a one-off past outing ("Visited Lisbon last week", "Went to a jazz concert on Saturday") rather
    than a standing state? An outing verb and a past time, and no change or habit word ("moved", "now", "every",
    "lives", …)."""
    return bool(_OUTING.search(text) and _PAST_TIME.search(text) and not _STATE_CUE.search(text))


# Issue 27, second pass: the slot a present question asks about (docs/ranking.md, "Questions about now: the
# slot"). Each rule reads the row's opening and the query's words, never a model, and only lowers a row.
NAMED_OTHER_FACTOR = 0.6  # a row about a named third party (a person's name opens it, the user is not in it)
OTHER_ITEM_FACTOR = 0.5  # another numbered item of the frame the question names ("milestone 3" for "milestone 2")

# A relation with one modifier before it: "my climbing partner Joost", "our studio partner" (structure.holder reads
# a relation only right after the owner, or after an age/kin adjective).
_MODIFIED_RELATION = re.compile(rf"^(?:\[[^\]]*\]\s*)?(?:my|our|the user'?s)\s+[a-z][a-z-]+\s+({_REL})(?:'s|s'|'|’s|s)?"
                                rf"(?=[\s,.:;!?]|$)", re.IGNORECASE)
# A row that opens with a person's name: two capitalised words and a verb ("Ngozi Achterberg is …", "Marek Duda
# still …"; not "Married Marco in …", "Visited Lisbon last week": a verb opens those), or one followed by a verb of
# a person's doings ("Annika works as …", "Priya now manages …"; not "is"/"has": "Home is
# Utrecht", "Rent is 1,240" open with a common noun), or a possessive ("Leontine's closest friend …":
# structure.holder's owner).
_NAME_VERB = (r"(?:works|worked|lives|lived|leads|manages|managed|moved|joined|started|teaches|studies|"
              r"just|still|now|says|said)")
_OPENS_WITH_NAME = re.compile(rf"^(?:\[[^\]]*\]\s*)?([A-Z][a-z]+)(?:\s+[A-Z][a-z]+\s+(?:is|was|has|had|{_NAME_VERB})|"
                              rf"\s+{_NAME_VERB})\b")
# A numbered item of a frame the question names: "milestone 2", "backlog item 03", "sprint #14" (1-3 digits: a
# year is a date, not an item).
_MONTHS = frozenset("jan feb mar apr may jun jul aug sep oct nov dec".split())
_ITEM = re.compile(r"\b([a-z][a-z-]+)\s+#?(\d{1,3})\b(?![.,:]\d)", re.IGNORECASE)


# "X's" as "X has" or "X is", not an owner: "Tower's got an RTX 4070", "Go's been demoted", "Gluten's back".
_CONTRACTED = re.compile(r"^(?:\[[^\]]*\]\s*)?[\w-]+(?:'s|’s)\s+(?:got|gotten|been|gone|back|now|still|just|not|"
                         r"finally|always|never|a|an|the|on|in|at|out|off|over|done|moved|become|started)\b",
                         re.IGNORECASE)


def _named_other(text: str, query: str) -> str | None:
    """The name a row opens with when it is about that person, not the user (:data:`_OPENS_WITH_NAME`, no first-
    person word, the name is no relation, no stop word, and the query does not use it): lower-cased, or None."""
    if mentions_user(text):  # a statement of the user's, whatever it opens with
        return None
    owner = statement_holder(text)
    name = owner if owner not in (USER, *RELATION_NAMES) and not _CONTRACTED.match(text) else None
    if name is None:
        m = _OPENS_WITH_NAME.match(text)
        if m is None:
            return None
        name = m.group(1).lower()
    if name in _STOP or relation(name) is not None or re.search(rf"\b{re.escape(name)}\b", query, re.IGNORECASE):
        return None
    return name


# An intention or a reported question, opening the statement: "Wants to run a marathon", "I want to reach B2
# Italian by December", "I'm thinking of building a new hutch", "Asked how to export old Jira boards", "Finance
# asked for a post-mortem". "Wants a …" is a thing not had yet ("Wants a hybrid or EV"); "Wants replies in English"
# (a preference of how, no "to"/"a") is a state.
_INTENT = re.compile(r"^(?:\[[^\]]*\]\s*)?(?:(?:i|i'm|i’m|the user|user)\s+|[A-Z][a-z]+\s+)?(?:wants?\s+(?:to|a|an)|"
                     r"would like to|'d like to|hopes? to|plans? to|planning to|(?:is\s+)?thinking (?:about|of)|"
                     r"considering|wondering|asked (?:whether|how|what|if|about|for|why|when|where|which|who))\b",
                     re.IGNORECASE)


def intent(text: str) -> bool:
    """Does ``text`` state an intention or report a question ("Wants to run a marathon", "I want to reach B2
    Italian by December", "Asked how to export old Jira boards to CSV") rather than a standing state?"""
    return bool(_INTENT.match(text.strip()))


def _named_relations(query: str) -> set[str]:
    """The relations ``query`` names anywhere ("does the user have a partner" → ``{"partner"}``), by one name."""
    return {name for word in re.findall(r"[a-z][a-z'-]*", query.lower()) if (name := relation(word))}


def about_another(why: str | None) -> bool:
    """Is ``why`` (the reason :func:`now_factor` gave) that the row is about another person or item than the one
    asked about (not a one-off outing, not an intention)? Such a row ranks below every row of the one asked about that matches the
    question on its own (recall.own_first)."""
    return why is not None and why not in (ONE_OFF_WHY, INTENT_WHY)


def query_items(query: str) -> dict[str, int]:
    """The numbered items ``query`` names, frame word → number ("When does milestone 2 land?" → ``{"milestone":
    2}``): a word that is not a stop word followed by a number of 1-3 digits (a month and its day are a date:
    "October 13")."""
    return {m.group(1).lower(): int(m.group(2)) for m in _ITEM.finditer(query)
            if m.group(1).lower() not in _STOP and m.group(1).lower()[:3] not in _MONTHS}


def other_item(items: Mapping[str, int], text: str) -> str | None:
    """``"milestone 3"`` when ``text`` names an item of a frame of ``items`` (:func:`query_items`) by another number
    and never the one asked about; None otherwise."""
    if not items:
        return None
    seen: dict[str, set[int]] = {}
    for m in _ITEM.finditer(text):
        seen.setdefault(m.group(1).lower(), set()).add(int(m.group(2)))
    for frame, number in items.items():
        numbers = seen.get(frame)
        if numbers and number not in numbers:
            return f"{frame} {min(numbers)}"
    return None


def now_factor(holder: str | None, text: str, query: str = "", *, slots: bool = False) -> tuple[float, str | None]:
    """The factor a present question (whose holder is ``holder``, :func:`now_holder`) applies to a row's relevance,
    and why (None when 1): :data:`OTHER_HOLDER_FACTOR` for a row about another relation than the one asked about
    (the user, or the relation the question names), else :data:`ONE_OFF_FACTOR` for a one-off outing when the
    question is about the user; 1 when ``holder`` is None (not a question about the present). Reads the first
    :data:`STATEMENT_CHARS` of ``text`` (a long vault section costs no more than a statement).

    With ``slots`` (issue 27, second pass; the setting ``recall.now_slots``), ``query`` is read too: another
    numbered item of a frame ``query`` names gives :data:`OTHER_ITEM_FACTOR` whatever the holder
    (:func:`other_item`); a relation with a modifier ("My climbing partner Joost …") is read as that relation; a
    relation the question names anywhere ("does the user have a partner") is not another holder; and for a
    question about the user, a row about a named third party gives :data:`NAMED_OTHER_FACTOR`
    (:func:`_named_other`)."""
    text = text[:STATEMENT_CHARS]
    if slots:  # any question that names an item: another item of its frame is not the one asked about
        item = other_item(query_items(query), text)
        if item is not None:
            return OTHER_ITEM_FACTOR, f"another item ({item}) than the one the question names"
    if holder is None:
        return 1.0, None
    other = row_holder(text)
    if other is None and slots:
        m = _MODIFIED_RELATION.match(text.strip())
        if m is not None and not USERS_AFTER_ALL.match(text.strip()[m.end():]):
            other = relation(m.group(1))
    if other is not None and slots and holder == USER and other in _named_relations(query):
        other = None  # "does the user have a partner": the partner's rows are what it asks about
    if other is not None and other != holder:
        return OTHER_HOLDER_FACTOR, f"about the user's {other}, not {'the user' if holder == USER else 'the ' + holder}"
    if slots and holder == USER and other is None:
        name = _named_other(text.strip(), query)
        if name is not None:
            return NAMED_OTHER_FACTOR, f"about {name}, not the user"
    if holder == USER and other is None and one_off(text):
        return ONE_OFF_FACTOR, ONE_OFF_WHY
    if slots and holder == USER and other is None and intent(text):
        return INTENT_FACTOR, INTENT_WHY
    return 1.0, None
