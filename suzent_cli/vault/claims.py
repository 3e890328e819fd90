"""Claim lifecycle rules shared by the rules engine and lint: routing, subjects, and ``stale_after``.

**Routing** (category → page). Categories about the user go to ``3_Personal/``, one page per topic; work
context to ``1_Projects/``; everything else to ``2_Wiki/Concepts/``:

    personal → 3_Personal/Profile.md        preference → 3_Personal/Preferences.md
    goal → 3_Personal/Goals.md              interaction → 3_Personal/Interaction.md
    context → 1_Projects/Context.md         technical → 2_Wiki/Concepts/Technical.md
    anything else → 2_Wiki/Concepts/<Category>.md (general → General.md)

**Subjects.** A *single-valued* subject can hold one value at a time: where the user lives, where and as what
they work, their manager, name, age, partner, time zone, diet (vegan, vegetarian, …). Two current claims with the same subject and different values
are a contradiction (lint); a newer one replaces the older at ingest ("currently X; previously Y").
Multi-valued statements (likes, uses, has a dog) have no subject here and never conflict.

**stale_after** (days after a claim's last confirmation, by subject, else by category). Facts that change often
expire sooner than facts that almost never do; a page's ``stale_after`` is the soonest of its current claims:

    residence, employer, role ............ 180      goal ........................... 90
    age, time zone, diet .................. 365      preference, interaction ....... 365
    name, birthday, allergy, family, health 1825   other personal ................ 365

**Human verification stamps.** ``verified: human:<name>@<YYYY-MM-DD>``, in a page's ``verified`` frontmatter
value (:func:`human_stamp`) or written into a MEMORY.md line by ``suzent verify-fact`` (:func:`memory_stamp`). Only a
``human:`` actor qualifies: ``agent:x`` or any other actor is ignored, or an agent stamping itself would launder its
own output into the strongest evidence.

**A stored row read back** (recall, the CLI and the MCP server): :func:`plain_content` is its text without the claim
markers, :func:`row_claims` its claims, :func:`claims_last_date` their latest confirmation.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from suzent_cli.text import normalize

PERSONAL_PAGES = {"personal": "Profile", "preference": "Preferences", "goal": "Goals", "interaction": "Interaction"}
PROJECT_PAGES = {"context": "Context"}
WIKI_PAGES = {"technical": "Technical", "general": "General"}

# (subject, pattern matching the start of a claim; group "value" is the value)
_SINGLE_VALUED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (subject, re.compile(pattern, re.I)) for subject, pattern in (
        ("residence", r"^(?:the user |i |we |(?:my |our )?[a-z]+(?: [a-z]+)? and i |me and (?:my |our )?[a-z]+ )?"
                      r"(?:'m |am |are |is )?(?:currently |now |just |recently )?"
                      r"(?:lives?|living|resides?|based|moved|relocated)(?: back)? (?:in|to|at)\s+(?P<value>.+)$"),
        ("residence", r"^(?:the user'?s |my |our )?(?:home|home base) is (?:now )?(?:in )?(?P<value>.+)$"),
        ("manager", r"^(?:the user |i |we )?(?:currently |now )?(?:reports?|reporting) (?:directly )?to\s+"
                    r"(?P<value>.+)$"),
        ("manager", r"^(?:the user'?s |my |our )?(?:line |direct )?(?:manager|boss) is (?:now )?(?P<value>[a-z].+)$"),
        ("employer", r"^(?:the user |i )?(?:'m |am |is )?(?:currently |now )?(?:(?:works?|working|employed) (?:at|for)|"
                     r"employed by)\s+(?P<value>.+)$"),
        ("role", r"^(?:the user |i )?(?:'m |am |is )?(?:currently |now )?(?:works?|working) as\s+(?:an? )?(?P<value>.+)$"),
        ("name", r"^(?:the user'?s |user'?s |my )?name is\s+(?P<value>.+)$"),
        ("age", r"^(?:the user |i )?(?:'m |am |is )(?P<value>\d{1,3}) years old\b.*$"),
        ("partner", r"^(?:the user |i )?(?:'m |am |is )married to\s+(?P<value>.+)$"),
        ("timezone", r"^(?:the user'?s |my )?time ?zone is\s+(?P<value>.+)$"),
        # a diet is one at a time: "I'm vegetarian", "Went vegan last month", "We've been pescatarian since 2020"
        ("diet", r"^(?:(?:the user|i|we)(?: am| are| is| have been| has been|'ve been|’ve been|'m|'re|’m|’re)?\s+|"
                 r"(?:(?:the user|i|we)\s+)?(?:went|turned|became|gone|going|switched to (?:being )?)\s*)"
                 r"(?:now |currently |fully |strictly |mostly |just |recently )?(?:an? )?(?:now )?"
                 r"(?P<value>vegan|vegetarian|pescatarian|pescetarian|flexitarian|omnivore|omnivorous|carnivore|"
                 r"keto|paleo)(?=$|[,;]|\s+(?:now|again|since|for|last|this|these|after|diet|full-time|"
                 r"these days|nowadays)\b)"),
    ))
# A note of the form "Attribute: value" ("Employer: Initech", "Home address: 12 Elm St") states the same subjects.
# Only these attribute names count: a label is also how a transcript names its speaker ("Caroline: I moved…").
_NOTE_LABELS = {
    "residence": "address|home address|home city|residence|home",
    "manager": "manager|line manager|direct manager|boss|reports to",
    "employer": "employer|current employer|workplace",
    "role": "role|job title",
    "name": "name|full name",
    "age": "age",
    "partner": "partner|spouse|wife|husband",
    "timezone": "time ?zone",
    "diet": "diet",
}
_NOTE = tuple((subject, re.compile(rf"^(?:the user'?s |user'?s |my |current )?(?:{names})\s*:\s*(?P<value>.+)$", re.I))
              for subject, names in _NOTE_LABELS.items())
_NOTE_PATTERNS = frozenset(pattern for _, pattern in _NOTE)
MAX_NOTE_VALUE_WORDS = 6  # a note's value is a name or a short phrase; a longer one is a sentence, not a value
# A value ends before a trailing clause: "Lisbon from Hamburg", "Acme since 2024", "Berlin, Germany".
_VALUE_END = re.compile(r"(?:,|;|\s+(?:from|since|with|because|and|so|but|as of|for now|now)\b).*$", re.I)

_CURRENTLY_RE = re.compile(r"\s*\((?:since|as of) [^)]*\)|\s*[;,]\s*previously\b.*$", re.I)
_STALE_BY_SUBJECT = {"residence": 180, "employer": 180, "role": 180, "manager": 180, "age": 365, "name": 1825, "partner": 1825,
                     "timezone": 365, "diet": 365}
_DURABLE = re.compile(r"\b(?:name|named|birthday|born|allerg\w*|intoleran\w*|sister|brother|mother|father|"
                      r"parents|son|daughter|children|kids?|wife|husband|diabet\w*|asthma|left-handed|right-handed)\b",
                      re.I)
_STALE_BY_CATEGORY = {"goal": 90, "preference": 365, "interaction": 365, "personal": 365}


def page_for(category: str) -> str:
    """The vault-relative page path a fact of ``category`` is routed to (see the module table)."""
    cat = normalize(category)
    if cat in PERSONAL_PAGES:
        return f"3_Personal/{PERSONAL_PAGES[cat]}.md"
    if cat in PROJECT_PAGES:
        return f"1_Projects/{PROJECT_PAGES[cat]}.md"
    title = WIKI_PAGES.get(cat) or safe_title(category) or "General"
    return f"2_Wiki/Concepts/{title}.md"


def page_type(relpath: str) -> str:
    """Frontmatter ``type`` for a page routed by :func:`page_for`."""
    if relpath.startswith("3_Personal/"):
        return "personal"
    if relpath.startswith("1_Projects/"):
        return "project"
    return "concept"


def is_personal(relpath: str) -> bool:
    return relpath.startswith("3_Personal/")


def safe_title(text: str) -> str:
    """A file-name-safe title from free text: letters, digits, space, ``-``/``_``; capitalised; ≤ 60 chars."""
    cleaned = re.sub(r"[^\w\- ]+", " ", text, flags=re.UNICODE)
    cleaned = " ".join(cleaned.replace("_", " ").split())[:60].strip(" -")
    return cleaned[:1].upper() + cleaned[1:]


@functools.lru_cache(maxsize=16384)  # pure; the dream compares each new claim with every rival
def subject_of(text: str) -> tuple[str, str] | None:
    """``(subject, normalized value)`` for a claim about a single-valued subject, else None.

    >>> subject_of("Lives in Berlin.")
    ('residence', 'berlin')
    >>> subject_of("Employer: Initech, payments team")
    ('employer', 'initech')
    """
    probe = " ".join(text.split())
    probe = _CURRENTLY_RE.sub("", probe).rstrip(" .!")  # "Currently X (since D); previously Y" reads as X
    probe = re.sub(r"^currently\s+", "", probe, flags=re.I)
    probe = re.sub(r"^(i|we)['’](m|re)\b", r"\1 am", probe, flags=re.I)  # "I'm married to" → "I am married to"
    for subject, pattern in (*_SINGLE_VALUED, *_NOTE):
        m = pattern.match(probe)
        if m:
            value = normalize(m.group("value")).rstrip(" .!")
            value = re.sub(r"\s+(?:in) (?:19|20)\d\d\b.*$", "", _VALUE_END.sub("", value))  # "Lisbon in 2024"
            if value and (pattern not in _NOTE_PATTERNS or len(value.split()) <= MAX_NOTE_VALUE_WORDS):
                return subject, value
    return None


def stale_days(category: str, text: str) -> int | None:
    """Days a personal claim stays current after its last confirmation (module table); None for non-personal."""
    found = subject_of(text)
    if found and found[0] in _STALE_BY_SUBJECT:
        return _STALE_BY_SUBJECT[found[0]]
    cat = normalize(category)
    if cat not in _STALE_BY_CATEGORY:
        return None
    if cat == "personal" and _DURABLE.search(text):
        return 1825
    return _STALE_BY_CATEGORY[cat]


def stale_after(category: str, text: str, last: dt.date) -> dt.date | None:
    """``last`` + :func:`stale_days`, or None when the claim does not expire."""
    days = stale_days(category, text)
    return last + dt.timedelta(days=days) if days is not None else None


_SPECIFIC_RE = re.compile(r"\d+(?:[.,:/-]\d+)*")
NEAR_IDENTICAL = 97.0


@functools.lru_cache(maxsize=16384)  # pure; the dream compares each new claim with every rival
def specifics(text: str) -> tuple[str, ...]:
    """The numbers, dates and versions in ``text`` (a restatement that changes one is not a repeat)."""
    return tuple(_SPECIFIC_RE.findall(text))


def base_text(text: str) -> str:
    """A claim without its change-over-time note: "Moved to Lisbon (since 2026-09-01); previously: Lives in
    Berlin" → "Moved to Lisbon"."""
    return re.sub(r"^currently\s+", "", _CURRENTLY_RE.sub("", text).strip(), flags=re.I)


@functools.lru_cache(maxsize=16384)  # pure; the dream compares each new claim with every rival
def claim_key(text: str) -> str:
    """Comparison key of a claim: its :func:`base_text`, normalized (lower case, single spaces), without trailing
    punctuation."""
    return normalize(base_text(text)).rstrip(" .!")


_NEGATION_RE = re.compile(r"\b(?:not|no longer|never)\b\s*|n't\b", re.I)


@functools.lru_cache(maxsize=16384)  # pure; the dream compares each new claim with every rival
def polarity(text: str) -> tuple[str, bool]:
    """``(statement without its negation, negated?)``: "Doesn't like coffee", "Does not like coffee" and
    "Dislikes coffee" all read as ``("likes coffee", True)``; "Is not allergic to X" as ``("is allergic to x", True)``."""
    key = claim_key(text)
    s = re.sub(r"\bdoes(?:n't| not) (\w+)", lambda m: m.group(1) + ("es" if m.group(1).endswith(("s", "sh", "ch")) else "s"), key)
    s = re.sub(r"\b(?:do|did)(?:n't| not) (\w+)", r"\1", s)
    s = _NEGATION_RE.sub(" ", s)
    s = re.sub(r"\bdis(?=(?:like|agree|trust|approve)\w*)", "", s)
    stripped = " ".join(s.split())
    return stripped, stripped != " ".join(key.split())


def is_repeat(a: str, b: str) -> bool:
    """Whether claim ``a`` restates ``b``: the same words after normalisation, or near-identical (rapidfuzz
    ratio ≥ :data:`NEAR_IDENTICAL`) with the same numbers and dates and the same polarity — "Is not allergic to
    peanuts and tree nuts …" is never a repeat of "Is allergic to peanuts and tree nuts …"."""
    from rapidfuzz import fuzz

    ka, kb = claim_key(a), claim_key(b)
    if ka == kb:
        return True
    if specifics(ka) != specifics(kb) or polarity(ka)[1] != polarity(kb)[1]:
        return False
    return fuzz.ratio(ka, kb) >= NEAR_IDENTICAL


def conflict_key(text: str) -> tuple[str, str]:
    """``(subject, value)``: two current claims with the same subject and different values cannot both hold.

    A single-valued subject (:func:`subject_of`) when there is one; otherwise the statement itself with its
    polarity as the value, so "Is allergic to peanuts" and "Is not allergic to peanuts" conflict, as do
    "Likes coffee", "Dislikes coffee" and "Doesn't like coffee".
    """
    found = subject_of(text)
    if found:
        return found
    stripped, negated = polarity(text)
    return f"statement: {stripped}", ("negated" if negated else "affirmed")


_HUMAN = re.compile(r"^human:([^@\s]+)(?:@(\d{4}-\d{2}-\d{2}))?$")
_MEMORY_STAMP = re.compile(r"verified:\s*([^\s<>]+)")


def _real_day(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def human_stamp(value: Any) -> str | None:
    """The first qualifying human verification in a ``verified`` frontmatter value, or None.

    ``value`` is a string or a list of strings. A stamp qualifies when it reads ``human:<name>`` optionally followed
    by ``@<YYYY-MM-DD>`` (a valid date); ``agent:…``, any other actor and malformed stamps do not.
    """
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, str):
            continue
        m = _HUMAN.match(item.strip())
        if m and (m.group(2) is None or _real_day(m.group(2))):
            return item.strip()
    return None


def memory_stamp(chunk: str) -> str | None:
    """The first qualifying ``verified: human:<name>@<date>`` stamp written in a MEMORY.md text, or None. A name
    starting with ``agent`` does not qualify (``suzent verify-fact`` refuses to write one)."""
    for m in _MEMORY_STAMP.finditer(chunk):
        stamp = human_stamp(m.group(1))
        if stamp and not stamp[len("human:"):].lower().startswith("agent"):
            return stamp
    return None


# --- a stored row read back: its text without markers, its claims' lifecycle --------------------------------------

_VERIFIED_COMMENT = re.compile(r"\s*<!--\s*verified:[^>]*-->")


def row_claims(text: str) -> list:
    """The claims (:class:`suzent_cli.vault.pages.Claim`) on the top-level bullet lines of a stored row's ``text``
    (a vault chunk: one claim, or several in a chunk of another section), in order; [] for prose or a log fact."""
    from suzent_cli.vault.pages import parse_claim

    return [c for line in str(text).split("\n") if line[:2] in ("- ", "* ", "+ ") and (c := parse_claim(line))]


def plain_content(text: str) -> str:
    """A row's text as a person reads it, without suzent's markers.

    On every top-level bullet, ``(confirmed Nx, last D)``, ``(until D)``, ``· source: F:L``
    (:func:`suzent_cli.vault.pages.parse_claim`) and a ``<!-- verified: … -->`` stamp are dropped; other lines stay
    as they are. A row that is one bullet line (a vault claim's own row) reads as the claim text alone, without
    its bullet: "- Likes tea (confirmed 2x, last 2026-06-02) · source: 2026-06-01.md:5" → "Likes tea". The
    lifecycle is not lost: :func:`suzent_cli.recall.Hit` carries it in fields."""
    from suzent_cli.vault.pages import parse_claim

    out = []
    for line in str(text).split("\n"):
        if line[:2] in ("- ", "* ", "+ "):
            line = _VERIFIED_COMMENT.sub("", line).rstrip()
            claim = parse_claim(line)
            line = line[:2] + claim.text if claim else line
        out.append(line)
    plain = "\n".join(out).strip()
    if "\n" not in plain and plain[:2] in ("- ", "* ", "+ "):
        return plain[2:].strip()
    return plain


def claims_last_date(text: str) -> str | None:
    """The latest ``last`` confirmation date (ISO) among the claims of a stored row's ``text``, or None."""
    days = [c.last for c in row_claims(text) if c.last]
    return max(days).isoformat() if days else None


def stamp_date(text: str) -> str | None:
    """The date (ISO) of the first qualifying human verification stamp in ``text`` (:func:`memory_stamp`), or None."""
    stamp = memory_stamp(str(text))
    return stamp.split("@", 1)[1] if stamp and "@" in stamp else None
