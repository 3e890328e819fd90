"""The write-path classifier: is an extracted fact a repeat, an update, or new? (invariant 5b)

Each fact a turn capture extracts is compared with the *recall set already assembled for extraction* (the ~10
nearest known facts, :func:`suzent_cli.capture.known.recall_set_for`): no extra retrieval, no model call. The
comparison is lexical (rapidfuzz) on purpose: the only band that changes behaviour is "practically the same
sentence", which a lexical measure judges well and a semantic one too generously.

Candidates. Only a *durable* record can be matched: a daily-log row (source label ``archive``: the row's fact) or a
claim bullet inside a vault chunk (label ``notebook``: each top-level bullet of the chunk, its ``(confirmed Nx, last
D)``/``(until D)``/``· source: F:L`` markers stripped by :func:`suzent_cli.vault.pages.parse_claim`; the rest of the
chunk is not a claim). Core files (labels ``facts`` = MEMORY.md, ``persona``, ``user``), transcripts, legacy rows
without a source, and plain strings are not candidates: a match found only there never diverts a write and does not
make a revision either (the fact is ``new``).

Outcomes, comparing normalized texts (:func:`suzent_cli.vault.claims.claim_key`: lower case, single spaces,
no trailing ``.``/``!``); ``score`` is ``rapidfuzz.fuzz.ratio / 100``:

* **confirmation** — some candidate has ``score ≥ CONFIRM`` (0.97), the fact adds *no new specific* and has the
  same polarity (a negation of a claim never confirms it). The best such candidate is the match.
* **revision** — otherwise, some candidate is *similar*: ``score ≥ SIMILAR`` (0.80), or the fact's words are a
  strict superset of the candidate's (candidate of ≥ 2 words: "Moved to Berlin in 2024" ⊃ "Moved to Berlin").
  The most similar candidate is the match. The fact is still written, tagged ``revision``.
* **new** — everything else, and any exception raised while classifying.

A *specific* is a number, date or version (``2024``, ``9:30``, ``3.12``), a quoted string (``"…"``, ``“…”``,
`` `…` ``, ``'…'``), a path or file name (``~/src/app``, ``notes.md``), or a proper noun: a capitalised word not at a
sentence start (``I`` excepted). It is *new* when the match lacks it: numbers are compared as numbers, proper nouns
against the match's words (case-insensitive), quotes and paths as substrings of the normalized match.

Why these thresholds. 0.97 is the design's "word for word" band (the same as the dream's ``NEAR_IDENTICAL``): on a
typical 30–80 character fact it tolerates a changed letter or punctuation, never a changed word of substance — and
the specifics and polarity guards catch the short words (a digit, "not") that fit inside it. 0.80 ratio is
"the same sentence with a word or two changed" for 5–15 word facts ("Works at Acme as an engineer" vs "… as a
senior engineer" ≈ 0.9; "Likes tea" vs "Likes jazz" ≈ 0.6). ``token_set_ratio`` was rejected: it scores 1.0
whenever either side's words are a subset of the other's, so every short generic row would "match" every longer
fact; the superset rule is instead explicit, one-directional, and needs a candidate of at least two words.
A revision only adds a tag, so erring towards it is cheap; erring towards a confirmation drops a log line, so the
confirmation test is the strict one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from suzent_cli.errors import describe
from suzent_cli.text import normalize
from suzent_cli.vault.claims import claim_key, polarity, specifics
from suzent_cli.vault.pages import parse_claim

CONFIRM = 0.97
SIMILAR = 0.80
DURABLE_LABELS = ("archive", "notebook")
_LABEL_BY_TYPE = {"archive_log": "archive", "notebook": "notebook"}

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_NAME_RE = re.compile(r"[^\W\d_][\w'\u2019-]*", re.UNICODE)
_QUOTE_RE = re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d|\u2018([^\u2019]+)\u2019|`([^`]+)`|(?<!\w)'([^']+)'(?!\w)")
_PATH_RE = re.compile(r"[~.]{1,2}/[\w.@%+-]+(?:/[\w.@%+-]+)*/?|/?[\w.@%+-]+(?:/[\w.@%+-]+)+/?|[A-Za-z]:\\\S+|"
                      r"\b[\w-]+\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,6}\b")
_SENTENCE_END = ".!?:"
_PRONOUN_I = {"i", "i'm", "i've", "i'd", "i'll", "i\u2019m", "i\u2019ve", "i\u2019d", "i\u2019ll"}


@dataclass(frozen=True)
class Classification:
    """The outcome for one fact. ``matched``/``source``/``locator`` describe the record it matched (None for
    ``new``): ``matched`` is the claim text, ``source`` its ``label:filename``, ``locator`` the log line (archive)
    or chunk index (notebook) of the recalled row. ``score`` is the best normalized ratio seen (0.0 without any
    candidate); ``reason`` a one-line explanation."""

    outcome: str
    matched: str | None = None
    source: str | None = None
    locator: int | None = None
    score: float = 0.0
    reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Candidate:
    """One durable claim a fact can match: its text, ``label:filename`` and locator."""

    text: str
    source: str
    locator: int | None


def _get(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def durable_label(item: Any) -> str | None:
    """``archive`` or ``notebook`` when the recalled row ``item`` (a :class:`~suzent_cli.recall.Hit`, or a dict of
    its fields) comes from a daily log or a vault page; None for anything else (core files, MEMORY.md, legacy rows
    without a source, plain strings)."""
    if isinstance(item, str):
        return None
    source = _get(item, "source")
    label = source.split(":", 1)[0] if isinstance(source, str) and ":" in source else None
    by_type = _LABEL_BY_TYPE.get(str(_get(item, "source_type") or ""))
    label = label or by_type
    if label not in DURABLE_LABELS or (by_type and by_type != label):
        return None
    filename = str(_get(item, "source_file") or (source.split(":", 1)[1] if source else ""))
    if filename.rsplit("/", 1)[-1].lower() == "memory.md":  # the generated core file, however it got here
        return None
    return label


def candidates(recall_set: Iterable[Any]) -> list[Candidate]:
    """The durable claims in ``recall_set`` (see the module doc): a log row's fact, or each claim bullet of a vault
    chunk. Items that are not durable, or have no text, are skipped."""
    out: list[Candidate] = []
    for item in recall_set:
        label = durable_label(item)
        content = _get(item, "content") if label else None
        if not isinstance(content, str) or not content.strip():
            continue
        source = _get(item, "source") or f"{label}:{_get(item, 'source_file') or ''}"
        locator = _get(item, "locator")
        if label == "archive":
            out.append(Candidate(" ".join(content.split()), source, locator))
            continue
        for line in content.split("\n"):
            claim = parse_claim(line.rstrip())
            if claim is not None:
                out.append(Candidate(claim.text, source, locator))
    return out


def _quotes(text: str) -> list[str]:
    return [normalize(next(g for g in m.groups() if g is not None)) for m in _QUOTE_RE.finditer(text)]


def _proper_nouns(text: str) -> list[str]:
    """Capitalised words not at a sentence start (the pronoun ``I`` excepted), lower-cased."""
    out = []
    for m in _NAME_RE.finditer(text):
        word = m.group(0)
        before = text[: m.start()].rstrip().rstrip("\"'\u201c\u2018([`*_")
        if not word[0].isupper() or not before or before[-1] in _SENTENCE_END or word.lower() in _PRONOUN_I:
            continue
        out.append(word.lower())
    return out


def new_specifics(text: str, other: str) -> list[str]:
    """The specifics of ``text`` (see the module doc) that ``other`` lacks, in order of appearance."""
    other_key = normalize(other)
    other_words = set(_WORD_RE.findall(other_key)) | set(other_key.split())
    other_numbers = set(specifics(other))
    found: list[str] = [n for n in specifics(text) if n not in other_numbers]
    found += [q for q in _quotes(text) if q not in other_key]
    found += [p for p in (normalize(m.group(0)) for m in _PATH_RE.finditer(text)) if p not in other_key]
    found += [w for w in _proper_nouns(text) if w not in other_words and w.strip("'\u2019-") not in other_words]
    return list(dict.fromkeys(found))


def _words(key: str) -> set[str]:
    return set(_WORD_RE.findall(key))


def _ratio(a: str, b: str) -> float:
    from rapidfuzz import fuzz  # only turn captures classify

    return 1.0 if a == b else fuzz.ratio(a, b) / 100.0


def _blocker(text: str, key: str, cand: Candidate) -> str:
    """Why a near-identical ``cand`` is not confirmed by ``text`` ("" when it is)."""
    if polarity(claim_key(cand.text))[1] != polarity(key)[1]:
        return "opposite polarity (a negation never confirms)"
    added = new_specifics(text, cand.text)
    return "new specific(s): " + ", ".join(added[:5]) if added else ""


def _classify(text: str, pool: list[Candidate]) -> Classification:
    key = claim_key(text)
    if not key or not pool:
        return Classification("new", reason="no durable record in the recall set")
    confirmed: tuple[float, Candidate] | None = None
    similar: tuple[float, Candidate, str] | None = None
    best = 0.0
    for cand in pool:
        ckey = claim_key(cand.text)
        score = _ratio(key, ckey)
        best = max(best, score)
        why = _blocker(text, key, cand) if score >= CONFIRM else ""
        if score >= CONFIRM and not why:
            if confirmed is None or score > confirmed[0]:
                confirmed = (score, cand)
            continue
        theirs = _words(ckey)
        superset = len(theirs) >= 2 and theirs < _words(key)
        if (score >= SIMILAR or superset) and (similar is None or score > similar[0]):
            why = why or (f"similar ({score:.3f})" if score >= SIMILAR else "strict superset of the match")
            similar = (score, cand, why)
    if confirmed is not None:
        score, cand = confirmed
        return Classification("confirmation", cand.text, cand.source, cand.locator, round(score, 4),
                              f"restates {cand.source} ({score:.3f}), no new specifics")
    if similar is not None:
        score, cand, why = similar
        return Classification("revision", cand.text, cand.source, cand.locator, round(score, 4), why)
    return Classification("new", score=round(best, 4), reason=f"no durable match (best {best:.3f} < {SIMILAR:.2f})")


def _failed(exc: Exception) -> Classification:
    return Classification("new", reason=f"classifier failed ({describe(exc, 180)})")


def classify_all(facts: list[Any], recall_set: Iterable[Any]) -> list[Classification]:
    """Classify each of ``facts`` (:class:`~suzent_cli.archive.Fact` objects or texts) against one ``recall_set``
    (recalled rows: :class:`~suzent_cli.recall.Hit` objects, dicts of their fields, or plain strings, which are
    never durable); the candidates are built once. Never raises: any exception yields ``new`` for the facts it
    touched (they are written), with the error as the reason."""
    try:
        pool = candidates(list(recall_set))
    except Exception as exc:  # noqa: BLE001 - invariant 5: a classifier failure never blocks or drops a write
        return [_failed(exc) for _ in facts]
    out = []
    for fact in facts:
        try:
            text = fact if isinstance(fact, str) else fact.content
            out.append(_classify(" ".join(str(text).split()), pool))
        except Exception as exc:  # noqa: BLE001 - as above
            out.append(_failed(exc))
    return out


def classify(fact: Any, recall_set: Iterable[Any]) -> Classification:
    """The :class:`Classification` of one ``fact`` against ``recall_set`` (see :func:`classify_all`). Never raises."""
    return classify_all([fact], recall_set)[0]
