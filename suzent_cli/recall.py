"""``suzent recall``: hybrid search over the index, every hit with provenance.

Modes choose the ranked lists ("runs") that are fused: ``vector`` (cosine over the embeddings), ``fts`` (BM25 over
``content``, the fact alone, and over ``search_text``, the fact with its preceding context) and ``hybrid`` (all
three). Ranking, in every mode:

1. **Fusion.** Each run's scores are min-max normalized over its candidate pool (``max(POOL, 5 * limit)`` rows)
   and summed with :data:`WEIGHTS` (a row absent from a run gets 0 from it). A match in the fact itself weighs more
   than a match in its context (field weighting). Normalized-score fusion beat Reciprocal Rank Fusion on the
   LoCoMo evidence benchmark (see BENCHMARKS.md): RRF throws away how far ahead the best BM25 hits are.
2. **Dates.** An explicit date in the query ("on 8 May, 2023", "May 8th 2023", "2023-05-08") or month
   ("in May 2023") adds :data:`DATE_BOOST` to candidates captured on that day or in that month. Relative dates
   ("last week") are not interpreted.
3. **Neighbours.** A fact is often only understood with the facts around it (a reply, a follow-up): every row of a
   candidate's file gains :data:`NEIGHBOUR_SHARE` times the larger score of the fact (or chunk) just before or just
   after it in the same file. This can surface a row that no run returned. A vault page's chunks neither lend nor
   gain (:data:`NO_NEIGHBOURS`): they are separate claims filed together, not turns that answer one another.

The sum of 1-3 is the row's **relevance**. Only rows that share meaning with the query take part (step 1½,
:func:`relevant`): a BM25 match on one of the query's content words (stop and question words such as "which",
"does", "use" are left out of the BM25 query, :func:`fts_query`; the vector run embeds the whole query), a date the
query names, or a vector cosine that stands out from what unrelated text scores for the query, by more than the
best of that many unrelated rows would (:mod:`suzent_cli.index.unrelated`: the same rule under every embedder,
whatever its cosine scale); the rest is padding any vector search returns and is dropped, and a row's neighbours
(3) only gain from relevant rows. When no row is relevant, recall returns no hit (:data:`NOTHING_RELEVANT`).

4. **Importance.** :func:`rank.final_score`: above neutral, ``final = relevance · (1 + IMPORTANCE_WEIGHT ·
   (importance − 0.5))`` (at most +20 % of the row's own relevance: it reorders comparably relevant rows and never
   lifts an unrelated one); below neutral, ``final = relevance + IMPORTANCE_WEIGHT · (importance − 0.5)`` (a fixed
   demotion, at most −0.2). The importance is the one the indexer stamped (confirmations, status, history section,
   human verification) times the stale decay once the settings' today is past the page's ``stale_after`` (:mod:`suzent_cli.index.rank`
   documents the table). Daily-log facts and core files are neutral (0.5, exactly +0), so their ranking is
   relevance alone; legacy rows (no ``source``: another tool's importance scale) are ranked as neutral too.

3b. **Re-rank** (off unless ``recall.rerank`` > 0, :mod:`suzent_cli.index.rerank`): the top candidates' own text
   against the query, one more weighted run (``content_vector``) added to their relevance.

3c. **Questions.** A row whose text ends with "?" asks something rather than states it ("What inspired you?"):
   its relevance, neighbours' share included, is multiplied by :data:`QUESTION_FACTOR` (:func:`asks`). A question
   shares the words and, under a symmetric embedder, much of the meaning of the query that asks about the same
   thing, so without this it outranks the statement that answers. It still lends its share to its neighbours (the
   answer usually follows it), since the factor applies after step 3.

3d. **Subject** (:func:`names_subject`, the setting ``recall.subject_boost``): when the query names someone or
   something by a proper name ("What do Melanie's kids like?") and a row's subject is that name (the row starts with
   it: "Mira starts school in Porto", "Melanie: I signed up for pottery"), the row gains
   :data:`SUBJECT_BOOST`. A row that only mentions the name ("Thanks, Melanie!") gains nothing: the statement is
   about its subject, so the evidence about the named one is what they said or what is said of them.
3e. **Questions about now** (:func:`suzent_cli.index.rank.now_factor`, issue 27; the setting
   ``recall.now_ranking``, on by default): a question about the present of the user ("what is the name of the
   user's pet"; no date, no "did / was / used to / before") multiplies by
   :data:`~suzent_cli.index.rank.OTHER_HOLDER_FACTOR` the relevance of a row whose holder is another person ("My
   brother has a cat named Pixie") and by :data:`~suzent_cli.index.rank.ONE_OFF_FACTOR` that of a one-off outing
   ("Visited Lisbon last week"); a question about a relation ("the user's grandmother") demotes rows about other
   relations. Vault pages lend no neighbour share (:data:`NO_NEIGHBOURS`): their chunks are separate claims.

3f. **The slot of a question about now** (issue 27, second pass; the setting ``recall.now_slots``): another
   numbered item of the frame the question names ("milestone 3" for "milestone 2") and, for a question about the
   user, a named third party ("Marek Duda is the line manager for the interns") rank lower
   (:func:`suzent_cli.index.rank.now_factor` with ``slots``); of the best :data:`OWN_WINDOW` hits of a question
   about now, one that does not match the question on its own (:func:`own_matches`: no own word, and its own
   text, embedded alone, does not stand out) or that is about another person or item ranks below every one that
   matches on its own and is about the one asked about (:func:`own_first`). Phrases that only say "now" ("these
   days", "currently") are no BM25 search words (:func:`fts_query`).

3g. **When** (:func:`asks_when`, :func:`tells_when`, the setting ``recall.when_boost``): a query that asks when
   ("When did Anna go camping?", "what year …", "how long …") and names no date gains :data:`WHEN_BOOST` relevance
   for a row that says when (a relative day or period, "yesterday", "last week", "two years ago"; a weekday, a
   month, a year, an ordinal day): the answer to "when" is the row that carries a time, not the one that only
   repeats the topic. Like 3d it re-scores the rows the runs found and adds no candidate; it is added with 3d's
   boost, before 3e's factor.

4b. **The current claim carries what it replaced** (:func:`carry_to_current`): after a dream, a current claim
   whose ``previously:`` tail names a superseded claim of its page found for the query scores the better of the
   two relevances plus :data:`NEIGHBOUR_SHARE` of the other (under its own importance): the question matched the
   old value and the new one; the answer is the new one.
   The tail must be the dream's: the ``(since D)`` before the named claim is the day that claim's ``until`` says it
   stopped holding (a captured fact that itself says "…; previously: X" lifts nothing).

5. **Newer first** (:func:`suzent_cli.vault.supersede.prefer_newer`): among the first five hits, the newer of two
   rows that the offline same-subject test says replace one another moves above the older; skipped when the query
   names a date.

6. **Shown scores follow the shown order** (:func:`order_scores`, issue 27): a row that ranks above a row with a
   higher score (the newer one of step 5) is shown with a score :data:`SHOWN_STEP` above that row's (or equal to
   it, when the row above leaves no room), so every output reads best first; its ranking score stays in
   ``ranked_score`` (``--explain``).

**Pending rows** (read-your-writes): the daily-log lines captured but not indexed yet
(:mod:`suzent_cli.index.pending`) join every run with the scores the index would give them, as far as it can be
done without it (:func:`_with_pending`), then go through steps 1-5 like any row; a home with no table yet is
searched over them alone.

Ties are broken by importance, then source and locator. A daily-log row and the vault claim citing it
(``· source: F:L``) are one statement: only the better-ranked of the two is returned (:func:`collapse_cited`). Each returned hit is appended (best-effort) to
``notebook/.state/recall_log.jsonl``. Every hit carries its factors (``runs``, ``date_boost``, ``neighbour``,
``relevance``, ``importance``, ``factors``) for ``recall --explain``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from suzent_cli.config import Settings, check_value, setting
from suzent_cli.errors import EmbeddingFailed, IndexMissing, InputInvalid, SuzentError
from suzent_cli.guard import planted
from suzent_cli.index import rank, rerank, unrelated
from suzent_cli.index.embed import Embedder, encode_query
from suzent_cli.index.pending import NoTable, Pending, pending_rows
from suzent_cli.index.store import (
    CANDIDATE_COLUMNS,
    CONTENT_FTS_COLUMN,
    FTS_COLUMN,
    ReadStore,
    row_metadata,
    unreadable,
)
from suzent_cli.text import STOP_WORDS, is_utf8
from suzent_cli.vault.state import append_recall_log
from suzent_cli.vault.supersede import prefer_newer

MODES = ("hybrid", "vector", "fts")
RUNS = {"hybrid": ("fts_content", "fts", "vector"), "fts": ("fts_content", "fts"), "vector": ("vector",)}
WEIGHTS = {"fts_content": 0.4, "fts": 0.3, "vector": 0.3, rerank.RUN: rerank.WEIGHT}  # the last: after fusion
POOL = 100
MAX_LIMIT = 1000  # hits a recall may ask for; more is a typo (and past the index's own integer range, an error)
DATE_BOOST = 0.4
NEIGHBOUR_SHARE = 0.5
# Sources whose rows lend and gain no neighbour share: a vault page's chunks are separate claims the dream filed
# together (one category, one topic), not turns that answer one another (issue 27: "Hannah is organising the team
# offsite" took half the score of "Reports to Hannah" above it and outranked the new manager's claim).
NO_NEIGHBOURS = ("notebook:",)
# A row whose text ends with a question mark asks rather than states: its relevance is multiplied by this (step 3c).
# LoCoMo dev (tuned there): R@1 34.0 -> 38.5, R@5 67.3 -> 68.4, R@10 76.3 -> 77.4, no category lower (docs/ranking.md).
QUESTION_FACTOR = 0.8
# A row whose subject is a name the query names gains this much relevance (step 3d, names_subject): the default of
# the setting recall.subject_boost (0 = off). Tuned on the first four LoCoMo dev conversations only (0.3-0.5 gave
# the same; the last three, never tuned on, gained +5.5 / +2.3 recall@5 / @10: BENCHMARKS.md, issue 27).
SUBJECT_BOOST: float = setting("recall.subject_boost").default
# A row that says when gains this much relevance for a query asking when (step 3g, asks_when / tells_when): the
# default of the setting recall.when_boost (0 = off). Tuned on the first four LoCoMo dev conversations only (0.2-0.4
# gave R@10 80.4-80.5 from 79.9; 80.9 with the final trigger and words); the last three, never tuned on, gained +0.7 / +0.9 recall@5 / @10: BENCHMARKS.md,
# issue 27, second pass.
WHEN_BOOST: float = setting("recall.when_boost").default
_WORD = re.compile(r"\w+", re.UNICODE)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
_DATE_DMY = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_DATE_MDY = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DATE_MY = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)


EXPLAIN_FIELDS = ("relevance", "runs", "date_boost", "neighbour", "asks", "subject", "subject_boost", "when_boost",
                  "now_factor", "capped",
                  "now", "factors",
                  "stands_for", "carries", "placed_above", "ranked_score")
# Scores are shown with 4 decimals (recall's table and TSV, the protocol's SCORE_DIGITS): a row moved above a
# higher-scored one is shown this much above it, so the two read as different and in order.
SHOWN_STEP = 1e-4


@dataclass
class Hit:
    """One recalled row. ``locator`` is the 1-based line of a daily-log fact or the chunk index of a page.

    ``score`` is the final score; ``relevance`` the part from the query (``runs``: each run's min-max normalized
    score, 0..1, before :data:`WEIGHTS`; plus ``date_boost`` and ``neighbour``, the share a neighbouring row
    added); ``importance`` the row's importance at recall (stale decay applied); ``factors`` how that importance
    was made (the indexer's ``importance_factors`` plus ``stale_factor`` and ``ranked``: False for a legacy row).
    ``content`` is the row as indexed (a vault claim with its markers); ``text`` what a person reads, and the
    lifecycle fields (``confirmations``, ``verified``, ``status``, ``until``, ``cites``) are read from it when the
    hit is made; :func:`fill_provenance` adds a vault hit's session and a claim-less page's date.
    """

    id: str
    content: str
    score: float
    source: str | None
    source_type: str
    source_file: str | None
    locator: int | None
    date: str | None
    session: str | None
    category: str | None
    tags: list[str]
    importance: float
    ranks: dict[str, int] = field(default_factory=dict)
    relevance: float = 0.0
    runs: dict[str, float] = field(default_factory=dict)
    date_boost: float = 0.0
    neighbour: float = 0.0
    asks: bool = False  # the row's text ends with "?": its relevance was multiplied by QUESTION_FACTOR
    subject: str | None = None  # the query's name that is this row's subject (step 3d)
    subject_boost: float = 0.0  # the relevance that gave it (recall.subject_boost), 0 without a subject
    when_boost: float = 0.0  # the query asks when and the row says when: the relevance it gained (step 3g)
    now_factor: float = 1.0  # a question about the present: the factor its relevance was multiplied by (step 3e)
    now: str | None = None  # why now_factor is not 1 (rank.now_factor), None when it is
    capped: str | None = None  # step 3f: the lowest row that matches the question on its own, which this row
    # (matching only through its neighbours) was placed just below (own_first); None when not capped
    factors: dict = field(default_factory=dict)
    stands_for: str | None = None  # the daily-log line this claim took the place of (collapse_cited)
    carries: str | None = None  # the superseded claim whose relevance this current claim carries (carry_to_current)
    placed_above: str | None = None  # the older same-subject row this newer one moved above (prefer_newer)
    ranked_score: float | None = None  # the score ranking gave, when the shown ``score`` was raised to keep the
    # shown order (order_scores); None: the shown score is the ranking score
    # The lifecycle, read from ``content`` and ``factors`` when the hit is made (:meth:`__post_init__`):
    text: str = ""  # ``content`` without markers (vault.claims.plain_content): what a person reads
    confirmations: int | None = None  # a vault row: its claims' highest "confirmed Nx"; None: no lifecycle
    verified: bool = False  # a human verification stamp (a page's ``verified``, a MEMORY.md line's comment)
    status: str | None = None  # a vault row: "superseded" (a history claim), else its page's status
    until: str | None = None  # a superseded claim: the day it stopped holding (ISO)
    cites: list[str] = field(default_factory=list)  # the daily-log lines (``F:L``) the row's claims cite
    planted: str | None = None  # why the row reads as a planted instruction (suzent_cli.guard.planted()), or None:
    # shown flagged, never injected into an agent's context by a hook
    scope: str = ""  # the row's scope (suzent_cli.scope): "" the person's, else the project key it belongs to

    def __post_init__(self) -> None:
        """Fill the lifecycle fields from ``content`` and ``factors``; ``content`` stays as stored (markers and
        all: :func:`collapse_cited` reads its ``· source:``). A vault row without a capture ``date`` gets its
        claims' latest confirmation; a human-verified MEMORY.md line the day of its stamp."""
        from suzent_cli.vault.claims import claims_last_date, plain_content, row_claims, stamp_date

        if not self.text:
            self.text = plain_content(self.content)
        self.planted = self.planted or planted(self.text, tuple(self.tags or ()), self.category)
        factors = self.factors or {}
        self.verified = self.verified or bool(factors.get("human"))
        if self.source_type != "notebook":
            if self.date is None and self.verified:
                self.date = stamp_date(self.content)
            return
        claims = row_claims(self.content)
        counts = [c.count for c in claims if c.count is not None]
        if self.confirmations is None:
            stamped = factors.get("confirmations")
            self.confirmations = max(counts) if counts else (int(stamped) if stamped is not None else None)
        self.cites = self.cites or [c.source for c in claims if c.source]
        until = [c.until for c in claims if c.until]
        self.until = self.until or (max(until).isoformat() if until else None)
        if self.status is None:
            history = rank.is_history(factors.get("section")) or (bool(claims) and len(until) == len(claims))
            self.status = "superseded" if history else factors.get("status")
        if self.date is None:
            self.date = claims_last_date(self.content)

    def as_dict(self, explain: bool = False) -> dict:
        """The hit as a JSON-ready dict (``suzent recall --json``, the recall log): ``content`` is the text without
        markers (:attr:`text`), ``stored`` the row's text as indexed (markers included); the lifecycle fields
        ``confirmations``, ``verified``, ``status``, ``until``, ``cites``, ``planted`` (why the row reads as a
        planted instruction, or null); the ranking factors
        (:data:`EXPLAIN_FIELDS`) only with ``explain``."""
        d = asdict(self)
        d["stored"], d["content"] = d["content"], d.pop("text")
        d["importance"] = round(float(d["importance"]), 4)  # stored as float32: 0.1 would print 0.10000000149
        if not explain:
            for key in EXPLAIN_FIELDS:
                d.pop(key, None)
        return d


# Phrases that say when (the present), not what: they are no content of a query (issue 27, second pass).
_NOW_PHRASES = re.compile(r"\b(?:these days|this days|at the moment|at present|right now|nowadays|currently|"
                          r"presently|as of now|for now|as things stand)\b", re.IGNORECASE)


def fts_query(text: str) -> str:
    """The BM25 query for ``text``: its words only, so no punctuation can be read as query syntax, without the
    stop and question words (:data:`suzent_cli.text.STOP_WORDS`: "which", "does", "use", …) that would let any
    row sharing one outrank the answer, and single letters (the "s" of "user's"). A query made only of such words
    keeps them all (nothing else to search for). A phrase that only says "now" ("these days", "at the moment",
    "nowadays", "currently": :data:`_NOW_PHRASES`) is left out too: "what exercise does the user do these days"
    searched "days" and found "I eat lunch at my desk most days". The vector run always embeds the full query."""
    words = _WORD.findall(_NOW_PHRASES.sub(" ", text)) or _WORD.findall(text)
    content = [w for w in words if w.lower() not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
    return " ".join(content or words)


def asks(content: str | None) -> bool:
    """Does this row ask rather than state? True when its text (markers removed,
    :func:`suzent_cli.vault.claims.plain_content`) ends with a question mark, trailing quotes and spaces aside."""
    from suzent_cli.vault.claims import plain_content

    return plain_content(content or "").rstrip(" \t\n\"'").endswith("?")


def query_names(text: str) -> frozenset[str]:
    """The proper names a query uses, case-folded: its words that start with a capital letter, are not a stop or
    question word (:data:`suzent_cli.text.STOP_WORDS`, so "What", "Would", "I" are not names) and are longer than
    one letter ("What do Melanie's kids like?" -> {"melanie"}). Empty for a query without one."""
    return frozenset(w.casefold() for w in _WORD.findall(text)
                     if len(w) > 1 and w[0].isupper() and w.casefold() not in STOP_WORDS)


_LEAD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]\n]*\]\s*)?")  # a list bullet and a [category] before the text


def row_subject(text: str) -> str | None:
    """A row's subject when it is a name: the first word of its text (markers and a list bullet aside), case-folded,
    if that word starts with a capital letter ("Mira starts school" -> "mira", "Melanie: I signed up" ->
    "melanie"); None otherwise ("The user's dog", "i prefer tea")."""
    from suzent_cli.vault.claims import plain_content

    first = _WORD.search(_LEAD.sub("", plain_content(text or "")[:200]))
    if first is None or not first.group(0)[0].isupper():
        return None
    return first.group(0).casefold()


def names_subject(names: frozenset[str], text: str) -> str | None:
    """Step 3d: the name of ``names`` (:func:`query_names`) that is the subject of ``text`` (:func:`row_subject`),
    or None."""
    subject = row_subject(text) if names else None
    return subject if subject in names else None


# Step 3g. A query asking when: "when" opening it (or a clause after a comma) or followed by an auxiliary ("when did",
# "when is"), "what/which year, month, day, date, time", or "how long" (a duration is answered by a time too:
# "for 4 years", "since May"). "when" as a conjunction ("it crashes when I click",
# a hook's prompt) asks nothing; "whenever" neither.
_AUX = r"(?:did|do|does|was|were|is|are|will|would|has|have|had|can|could|should)"
_ASKS_WHEN = re.compile(rf"(?:^|[,;:(]\s*)when\b|\bwhen\s+{_AUX}\b|\b(?:what|which)\s+(?:year|month|day|date|time)\b"
                        r"|\bhow\s+long\b", re.IGNORECASE)
# A row saying when: a relative day or period, a weekday, a month, a year, an ordinal day (English words; a date the
# query names is step 2's, so a query with one skips this step).
_TELLS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|since|until|recently|weekends?|weeks?|months?|years?|"
    r"this (?:morning|evening|summer|winter|spring|fall)|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th))\b", re.IGNORECASE)


def asks_when(query: str) -> bool:
    """Does ``query`` ask when something happened? True for "When did Anna go camping?", "so when is the party",
    "What year did Jon move?", "which day is the market", "How long has Ben had the kayak?"; False for "when" as a conjunction ("the app crashes when
    I click save", "I get anxious when flying"), "whenever", "where", a query without such a word."""
    return bool(_ASKS_WHEN.search((query or "").strip()))


def tells_when(text: str | None) -> bool:
    """Does a row's text say when? True when it holds a relative day or period ("yesterday", "last week", "two
    years ago", "for 4 years", "next month", "this summer"), a weekday, a month's full name, a year (1900-2099) or
    an ordinal day ("the 3rd"); "may" is left out (a verb far more often than the month). A word list, not a
    parser: "the last slice" reads as saying when too."""
    return bool(_TELLS_WHEN.search(text or ""))


def says_when(asked: bool, text: str | None) -> bool:
    """Step 3g for one row: the query asks when (``asked``, :func:`asks_when`) and the row says when
    (:func:`tells_when`, on its text without markers)."""
    return asked and tells_when(_plain(text))


def _plain(content: str | None) -> str:
    from suzent_cli.vault.claims import plain_content

    return plain_content(content or "")


# Hit.planted of a candidate: the guard's screen (~1 ms a row, more under load) runs for the returned hits only
# (:func:`_screen`); it never changes the ranking
_LATER = "\0later"


def _screen(hits: list[Hit]) -> list[Hit]:
    """Fill :attr:`Hit.planted` of hits made by :func:`_hit` (returns ``hits``)."""
    for hit in hits:
        if hit.planted == _LATER:
            hit.planted = planted(hit.text, tuple(hit.tags or ()), hit.category)
    return hits


def _hit(row: dict, relevance: float, today: dt.date | None) -> Hit:
    """A :class:`Hit` for ``row``: importance with the stale decay of ``today``, score = final score;
    ``planted`` is left to :func:`_screen`."""
    meta = row_metadata(row)
    tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
    stored = row.get("importance")
    stamped = meta.get(rank.FACTORS_KEY) if isinstance(meta.get(rank.FACTORS_KEY), dict) else {}
    importance, stale = rank.effective_importance(stored, stamped, today)
    ranked = row.get("source") is not None  # a legacy row's importance is another tool's scale: neutral here
    factors = {**stamped, "indexed": None if stored is None else float(stored), "stale_factor": stale,
               "ranked": ranked}
    score = rank.final_score(relevance, importance if ranked else rank.NEUTRAL)
    return Hit(
        id=row["id"], content=row["content"], score=score,
        source=row.get("source"), source_type=meta.get("source_type", "legacy" if row.get("source") is None else ""),
        source_file=meta.get("source_file"), locator=row.get("locator"),
        date=row.get("source_date") or meta.get("source_date"), session=meta.get("session_id"),
        category=meta.get("category"), tags=[str(t) for t in tags], importance=importance, relevance=relevance,
        factors=factors, planted=_LATER, scope=row.get("scope") or "",
    )


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower().rstrip(".")[:3]))


def query_dates(text: str) -> list[tuple[dt.date, dt.date]]:
    """The explicit dates a query names, as inclusive ``(first day, last day)`` ranges: one day for "8 May, 2023",
    "May 8th 2023" or "2023-05-08", a whole month for "May 2023". Impossible dates are ignored; relative dates
    ("yesterday", "last week") are not interpreted."""
    ranges: list[tuple[dt.date, dt.date]] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match, y: str, m: int | str, d: str | None) -> None:
        if any(a < match.end() and match.start() < b for a, b in taken):
            return
        try:
            month = int(m) if isinstance(m, str) and m.isdigit() else (m if isinstance(m, int) else _month(m))
            if d is None:
                first = dt.date(int(y), month, 1)
                last = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
            else:
                first = last = dt.date(int(y), month, int(d))
        except (ValueError, StopIteration):
            return
        taken.append((match.start(), match.end()))
        ranges.append((first, last))

    for m in _DATE_ISO.finditer(text):
        add(m, m.group(1), m.group(2), m.group(3))
    for m in _DATE_DMY.finditer(text):
        add(m, m.group(3), m.group(2), m.group(1))
    for m in _DATE_MDY.finditer(text):
        add(m, m.group(3), m.group(1), m.group(2))
    for m in _DATE_MY.finditer(text):
        add(m, m.group(2), m.group(1), None)
    return ranges


MIN_POOL = 10
NOTHING_RELEVANT = "nothing relevant found"  # what every surface says when :func:`relevant` keeps no row
# Minimum relevance (see :func:`relevant`), in spreads of what unrelated text scores for the query
# (:mod:`suzent_cli.index.unrelated`), so the same for every embedder. A row the vector run alone found must stand
# out further than the best of the index's rows would if none related to the query: ``expected_max`` of their
# number (0.9 for 3 rows, 2.1 for 34, 3.1 for 600) plus Z_MARGIN, and at least Z_MIN (a home of one or two rows).
# Measured with MiniLM: in the README's home of 3 facts, "editor" puts "I switched to neovim last month." 1.6
# spreads above unrelated text (bar 1.37) and "quantum chromodynamics lattice" its best row 0.2; in a home of 33,
# the latter's best row is at 1.6 (bar 2.58) and the answers of 15 everyday questions at 2.8-14.8, all but one.
# A margin of 0.5 leaves 3 of 16 off-topic queries with a hit there; 1.0 would fail the home of 3 (docs/ranking.md).
Z_MIN = 1.0
Z_MARGIN = 0.5
_BM25_RUNS = ("fts_content", "fts")


def normalize_scores(scores: list[float]) -> list[float]:
    """Min-max normalize ``scores`` to 0..1 (the best is 1, the worst of the pool 0); all equal -> all 1.

    A pool under :data:`MIN_POOL` rows (a rare term matched only a few) has no meaningful worst: its scores are
    divided by the best instead (floor 0), so the second of two good matches is not pushed to 0."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if len(scores) < MIN_POOL:
        lo = min(lo, 0.0)
    if hi <= lo:
        return [1.0] * len(scores)
    return [(x - lo) / (hi - lo) for x in scores]


def relevant(runs: dict[str, dict[str, float]], surprise: dict[str, float], dated: set[str], compared: int) -> set[str]:
    """The candidates that share meaning with the query, so may be returned: those a BM25 run matched (the query's
    content words, :func:`fts_query`, in the fact or its context), those in a date the query names (``dated``), and
    those whose vector cosine stands out from what unrelated text scores for the query: ``surprise`` (row id ->
    :meth:`~suzent_cli.index.unrelated.Null.z` of its cosine) at least the expected best of ``compared`` unrelated
    rows plus :data:`Z_MARGIN` (:func:`~suzent_cli.index.unrelated.expected_max`; ``compared``: how many rows the
    vector run searched, 0 without one) and at least :data:`Z_MIN`. ``runs``: row id -> {run name: normalized score}. The others are padding: every vector
    search returns its pool whatever the distance. A row left out may still come back as the neighbour of a
    relevant one (:func:`spread_to_neighbours`)."""
    bar = max(Z_MIN, unrelated.expected_max(compared) + Z_MARGIN)
    return {rid for rid, named in runs.items()
            if rid in dated or any(name in named for name in _BM25_RUNS) or surprise.get(rid, -math.inf) >= bar}


def spread_to_neighbours(scores: dict[str, float], positions: Iterable[tuple[str, str, int]],
                         share: float = NEIGHBOUR_SHARE) -> dict[str, float]:
    """Neighbour context at query time. ``positions`` lists ``(row id, source, locator)`` of every row of the
    files involved; each row's new score is its own plus ``share`` times the larger score of the row just before
    or just after it in the same file (absent rows count 0). Returns the new scores of every row with one > 0."""
    by_source: dict[str, list[tuple[int, str]]] = {}
    for rid, source, locator in positions:
        if source is not None and locator is not None:
            by_source.setdefault(source, []).append((locator, rid))
    out = dict(scores)
    for rows in by_source.values():
        rows.sort()
        ids = [rid for _, rid in rows]
        for i, rid in enumerate(ids):
            before = scores.get(ids[i - 1], 0.0) if i > 0 else 0.0
            after = scores.get(ids[i + 1], 0.0) if i + 1 < len(ids) else 0.0
            total = scores.get(rid, 0.0) + share * max(before, after)
            if total > 0:
                out[rid] = total
    return out


_RUNNERS: ThreadPoolExecutor | None = None
_RUNNERS_LOCK = threading.Lock()


def _all_runs(store: ReadStore, embedder: Embedder | None, mode: str, query: str, pool: int,
              where: str | None, encoded: dict | None = None,
              scopes: tuple[str, ...] | None = None) -> list[list[tuple[dict, float]]]:
    """Every run of ``mode`` (:data:`RUNS`), in that order. With more than one, they run at once on a small shared
    thread pool: each is a LanceDB search (or the query's encode) that leaves the GIL, so a hybrid recall costs its
    slowest run instead of the sum (measured at 100k rows: 73 → 57 ms, benchmarks/recall_latency.py). The results
    are used in :data:`RUNS`' order, so the ranking is the same as one after another; the first run's error is
    raised. ``encoded``, when given, receives the query vector under ``"vector"`` (the re-rank reuses it)."""
    global _RUNNERS
    names = RUNS[mode]
    if len(names) == 1:
        return [_run(store, embedder, names[0], query, pool, where, encoded, scopes)]
    with _RUNNERS_LOCK:
        if _RUNNERS is None:
            _RUNNERS = ThreadPoolExecutor(max_workers=len(RUNS["hybrid"]), thread_name_prefix="suzent-recall")
    futures = [_RUNNERS.submit(_run, store, embedder, name, query, pool, where, encoded, scopes) for name in names]
    return [future.result() for future in futures]


def _run(store: ReadStore, embedder: Embedder | None, name: str, query: str, pool: int,
         where: str | None = None, encoded: dict | None = None,
         scopes: tuple[str, ...] | None = None) -> list[tuple[dict, float]]:
    """One ranked list: ``[(row, raw score)]``, best first (only rows matching ``where``, a LanceDB filter, and of
    ``scopes``, None: any, filtered by the store before it ranks); a row
    holds :data:`~suzent_cli.index.store.CANDIDATE_COLUMNS` and its ``_rowid`` only (the hits' other columns are
    read for the few that are returned, :func:`_complete`). The vector run stores the query vector in
    ``encoded["vector"]`` when ``encoded`` is given."""
    if name == "vector":
        if embedder is None:
            raise InputInvalid("this mode needs an embedder")
        vector = encode_query(embedder, [query])[0]
        if encoded is not None:
            encoded["vector"] = vector
        rows = store.vector_search(vector, pool, where=where, columns=CANDIDATE_COLUMNS, scopes=scopes)
        null = unrelated.null_of(embedder, vector)  # the vector score is the cosine in spreads above unrelated text
        return [(r, null.z(1.0 - float(r.get("_distance") or 0.0))) for r in rows]
    words = fts_query(query)
    if not words:
        return []
    column = CONTENT_FTS_COLUMN if name == "fts_content" else FTS_COLUMN
    found = store.fts_search(words, pool, where=where, column=column, columns=CANDIDATE_COLUMNS, scopes=scopes)
    return [(r, float(r.get("_score") or 0.0)) for r in found]


@dataclass(frozen=True)
class Filters:
    """Which rows a recall may return, applied before the limit: ``since``/``until`` (inclusive) keep only rows
    with a capture date in the range (daily-log facts; a row without a date is left out once either is given);
    ``category`` keeps rows of that category (case and spacing aside); ``scopes`` keeps rows of those scopes
    (:func:`suzent_cli.scope.scopes_for`: the person's and the current project's; None: every project), applied
    before the ranking on every path (the store's prefilter or mask, the pending rows, the neighbours) and again
    on the hits. Truthiness counts the first three only (they widen the candidate pool; a scope does not)."""

    since: dt.date | None = None
    until: dt.date | None = None
    category: str | None = None
    scopes: tuple[str, ...] | None = None

    def __bool__(self) -> bool:
        return bool(self.since or self.until or self.category)

    def where(self) -> str | None:
        """The LanceDB prefilter for the date range (None: no range)."""
        parts = []
        if self.since:
            parts.append(f"source_date >= '{self.since.isoformat()}'")
        if self.until:
            parts.append(f"source_date <= '{self.until.isoformat()}'")
        return " AND ".join(parts) or None

    def keeps(self, hit: Hit) -> bool:
        """Does ``hit`` pass every filter? (Rows a neighbour's share brought in are checked here too.)"""
        if self.since or self.until:
            try:
                day = dt.date.fromisoformat(hit.date) if hit.date else None
            except ValueError:
                day = None
            if day is None or (self.since and day < self.since) or (self.until and day > self.until):
                return False
        if self.scopes is not None and (hit.scope or "") not in self.scopes:
            return False
        if self.category:
            return " ".join((hit.category or "").lower().split()) == " ".join(self.category.lower().split())
        return True


def parse_filters(since: str | None = None, until: str | None = None, category: str | None = None) -> Filters:
    """:class:`Filters` from their text: dates as ``YYYY-MM-DD``. Raises :class:`InputInvalid` (one line) for a
    bad date, ``since`` after ``until``, or a blank category."""
    days = []
    for name, text in (("since", since), ("until", until)):
        if text is None:
            days.append(None)
            continue
        try:
            days.append(dt.date.fromisoformat(str(text).strip()) if _DATE_ONLY.match(str(text).strip()) else None)
        except ValueError:
            days.append(None)
        if days[-1] is None:
            raise InputInvalid(f"{name} must be a date YYYY-MM-DD, got {str(text)[:40]!r}")
    if days[0] and days[1] and days[0] > days[1]:
        raise InputInvalid(f"since {days[0]} is after until {days[1]}: no day can match")
    if category is not None and not str(category).strip():
        raise InputInvalid("category is empty: give a category or leave it out")
    return Filters(days[0], days[1], str(category).strip() if category is not None else None)


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FILTERED_POOL = 4  # a filtered recall looks at this many times the usual candidates


def check_query(query: str, *, mode: str, limit: int) -> None:
    """Raise :class:`InputInvalid` for an unknown mode, a non-positive ``--limit`` or an empty query — before any
    index is opened or model loaded, so bad input is always reported as such."""
    if mode not in MODES:
        raise InputInvalid(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if limit < 1:
        raise InputInvalid(f"--limit must be at least 1, got {limit}")
    if limit > MAX_LIMIT:
        raise InputInvalid(f"--limit must be at most {MAX_LIMIT:,}, got {limit}")
    if not query.strip():
        raise InputInvalid("empty query: nothing to recall")
    if not is_utf8(query):  # bytes that are not UTF-8 on the command line
        raise InputInvalid("the query is not valid UTF-8 text")


def _check_search(query: str, *, mode: str, limit: int, embedder: Embedder | None) -> None:
    """:func:`check_query`, and a mode that needs an embedder without one is :class:`InputInvalid` too."""
    check_query(query, mode=mode, limit=limit)
    if "vector" in RUNS[mode] and embedder is None:
        raise InputInvalid(f"mode {mode} needs an embedder")


def search(store: ReadStore, embedder: Embedder | None, query: str, *, mode: str = "hybrid", limit: int = 10,
           today: dt.date | None = None, filters: Filters | None = None, rerank_top: int = 0,
           pending: Pending | None = None, subject_boost: float = SUBJECT_BOOST,
           now_ranking: bool = True, now_slots: bool = True, when_boost: float = WHEN_BOOST) -> list[Hit]:
    """Rank rows of ``store`` for ``query`` (fusion, dates, neighbours, importance: see the module docstring).
    Returns at most ``limit`` hits, best first. ``today`` drives the stale decay of vault pages (None: no decay).
    ``rerank_top``: how many top candidates :mod:`suzent_cli.index.rerank` re-scores by their own text (0: off;
    the setting ``recall.rerank``). ``subject_boost``: the relevance a row whose subject is a name the query uses
    gains (step 3d, :func:`names_subject`; 0: off; the setting ``recall.subject_boost``). ``when_boost``: the
    relevance a row that says when gains for a query that asks when and names no date (step 3g, :func:`says_when`;
    0: off; the setting ``recall.when_boost``).
    ``filters`` (:class:`Filters`) are applied before the limit: the date range as a prefilter of every run, and
    every filter again on the ranked hits. ``pending``: the daily-log lines not in the index yet
    (:func:`suzent_cli.index.pending.pending_rows`), ranked with the table's rows (:func:`_with_pending`).
    ``now_ranking``: step 3d, a question about the present demotes rows about another person and one-off outings
    (:func:`suzent_cli.index.rank.now_factor`; the setting ``recall.now_ranking``). ``now_slots``: step 3f, the
    slot a question names (another numbered item, a named third party, a relation with a modifier, ranked lower)
    and, for a question about the present, a row that matches it only through its neighbours below every row that
    matches it on its own (:func:`own_first`; the setting ``recall.now_slots``).

    Raises :class:`InputInvalid` for an empty query, an unknown mode, a non-positive limit, or a mode that needs
    an embedder without one.
    """
    _check_search(query, mode=mode, limit=limit, embedder=embedder)
    filters = filters if filters is not None else Filters()
    pool = max(POOL, limit * 5) * (FILTERED_POOL if filters else 1)
    where = filters.where()
    rows: dict[str, dict] = {}
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    surprise: dict[str, float] = {}  # the vector run's score of each row it returned (unrelated.Null.z)
    encoded: dict = {}  # the query vector, once the vector run made it (the re-rank below reuses it)
    scopes = filters.scopes
    if pending and scopes is not None:
        pending = pending.scoped(scopes)
    results = _all_runs(store, embedder, mode, query, pool, where, encoded, scopes)
    if pending:
        results = _with_pending(results, pending, store, embedder, mode, query, encoded)
    for name, run in zip(RUNS[mode], results, strict=True):
        for position, ((row, raw), norm) in enumerate(zip(run, normalize_scores([raw for _, raw in run]), strict=False), start=1):
            rid = row["id"]
            rows.setdefault(rid, row)
            scores[rid] = scores.get(rid, 0.0) + WEIGHTS[name] * norm
            ranks.setdefault(rid, {})[name] = position
            runs.setdefault(rid, {})[name] = norm
            if name == "vector":
                surprise[rid] = raw
    if not rows:
        return []

    boosted: set[str] = set()
    dates = query_dates(query)
    addresses: dict[str, int] = {rid: row["_rowid"] for rid, row in rows.items() if row.get("_rowid") is not None}
    if dates:  # a legacy row (no source) may carry its date in its metadata only
        _complete(store, rows, addresses, [rid for rid, row in rows.items()
                                           if row.get("source") is None and not row.get("source_date")])
        for rid, row in rows.items():
            day = row.get("source_date") or row_metadata(row).get("source_date")
            try:
                day = dt.date.fromisoformat(day) if day else None
            except ValueError:
                day = None
            if day and any(first <= day <= last for first, last in dates):
                scores[rid] += DATE_BOOST
                boosted.add(rid)

    if surprise:
        scoped = store.scope_where(scopes) if scopes is not None else None
        compared = store.count(f"({where}) AND ({scoped})" if where and scoped else where or scoped) \
            + (len(pending.rows) if pending else 0)
    else:
        compared = 0
    keep = relevant(runs, surprise, boosted, compared)
    scores = {rid: score for rid, score in scores.items() if rid in keep}
    if not scores:
        return []
    own = dict(scores)
    placed = [(rid, row["source"], row["locator"]) for rid, row in rows.items()
              if row.get("source") is not None and row.get("locator") is not None]
    if NEIGHBOUR_SHARE > 0 and placed:
        # Only the candidates and the rows just before/after them can gain or give a share: reading those (not
        # every row of their files) gives spread_to_neighbours the same adjacencies, so the same scores.
        near = store.neighbourhood(placed)
        if scopes is not None:  # another project's row is no neighbour here: it neither gives nor gains a share
            near = [p for p in near if (p.get("scope") or "") in scopes]
        addresses.update({p["id"]: p["_rowid"] for p in near if p.get("_rowid") is not None})
        positions = [(p["id"], p["source"], p["locator"]) for p in near
                     if not str(p["source"]).startswith(NO_NEIGHBOURS)]
        if pending:
            positions = _pending_positions(positions, pending)
        scores = spread_to_neighbours(scores, positions)

    # Re-rank (suzent_cli.index.rerank, off unless rerank_top): the top candidates' own text against the query.
    fetch = lambda ids: _rows_at(store, {rid: addresses[rid] for rid in ids if rid in addresses})  # noqa: E731
    if rerank_top > 0 and embedder is not None and "vector" in RUNS[mode]:  # the re-rank reads the top rows' text
        _complete(store, rows, addresses, sorted(scores, key=lambda rid: (-scores[rid], rid))[:rerank_top])
    for rid, norm in rerank.content_run(query, scores, rows, embedder if "vector" in RUNS[mode] else None,
                                        fetch, top=rerank_top, query_vector=encoded.get("vector")).items():
        scores[rid] += rerank.WEIGHT * norm
        own[rid] = own.get(rid, 0.0) + rerank.WEIGHT * norm
        runs.setdefault(rid, {})[rerank.RUN] = norm

    # Importance lifts a row by at most 20 % of its relevance, so the best limit + 64 by relevance are enough.
    best = sorted(scores, key=lambda rid: -scores[rid])[: limit + 64]
    if pending:  # a pending line (whole already) that gained only a neighbour's share
        chosen = set(best)
        rows.update({r["id"]: r for r in pending.rows if r["id"] in chosen and "content" not in rows.get(r["id"], {})})
    _complete(store, rows, addresses, best)
    names = query_names(query) if subject_boost > 0 else frozenset()
    asked_when = when_boost > 0 and not dates and asks_when(query)  # step 3g: a date the query names is step 2's
    hits = []
    holder = rank.now_holder(query) if now_ranking and not dates else None  # step 3e: whose present it asks about
    slots = now_ranking and now_slots and not dates  # step 3f: the slot it names
    for rid in best:
        if "content" in rows.get(rid, {}):
            question = asks(rows[rid].get("content"))  # step 3c: a question ranks below the statements
            subject = names_subject(names, rows[rid]["content"])  # step 3d: a row about the name the query uses
            now, why = rank.now_factor(holder, _plain(rows[rid].get("content")), query, slots=slots)  # 3e, 3f
            when = when_boost if asked_when and says_when(True, rows[rid]["content"]) else 0.0  # step 3g
            relevance = (scores[rid] * (QUESTION_FACTOR if question else 1.0) + (subject_boost if subject else 0.0)
                         + when) * now
            hit = _hit(rows[rid], relevance, today)
            hit.asks, hit.now_factor, hit.now = question, now, why
            hit.subject, hit.subject_boost = subject, (subject_boost if subject else 0.0)
            hit.when_boost = when
            hit.ranks = ranks.get(rid, {})
            hit.runs = runs.get(rid, {})
            hit.date_boost = DATE_BOOST if rid in boosted else 0.0
            hit.neighbour = scores[rid] - own.get(rid, 0.0)
            hits.append(hit)
    if slots and holder is not None:  # step 3f: a row that matches only through its neighbours ranks below
        own_first(hits, own_matches(hits, embedder if "vector" in RUNS[mode] else None, encoded.get("vector"),
                                    compared, surprise))
    hits = carry_to_current(hits)
    hits.sort(key=lambda h: (-h.score, -h.importance, h.source or "", h.locator or 0))
    if not dates:  # issue 16: of two same-subject rows the newer first (vault.supersede); a dated query asks about then
        ordered = prefer_newer(hits)
        for i, (was, now) in enumerate(zip(hits, ordered, strict=True)):
            if was is not now and hits.index(now) > i:  # moved up, into the older row's place: --explain says so
                now.placed_above = f"{was.id} {_quoted(was.text)} (score {was.score:.4f})"
        hits = ordered
    if filters or scopes is not None:
        hits = [h for h in hits if filters.keeps(h)]
    return _screen(order_scores(collapse_cited(hits))[:limit])


def _complete(store: ReadStore, rows: dict[str, dict], addresses: dict[str, int], ids: list[str]) -> None:
    """Read the result columns of the rows ``ids`` (a candidate holding only
    :data:`~suzent_cli.index.store.CANDIDATE_COLUMNS`, or a row only a neighbour's share brought in) into ``rows``
    (id -> row, changed in place): by address (``addresses``: id -> ``_rowid``), then by id for those the address
    no longer holds. A row the store no longer has at all stays as it was (without ``content``: never a hit)."""
    wanted = [rid for rid in ids if "content" not in rows.get(rid, {})]
    if not wanted:
        return
    for row in _rows_at(store, {rid: addresses[rid] for rid in wanted if rid in addresses}):
        rows[row["id"]] = {**rows.get(row["id"], {}), **row}
    for row in store.rows_by_id([rid for rid in wanted if "content" not in rows.get(rid, {})]):
        rows[row["id"]] = {**rows.get(row["id"], {}), **row}


def _with_pending(results: list[list[tuple[dict, float]]], pending: Pending, store: ReadStore,
                  embedder: Embedder | None, mode: str, query: str,
                  encoded: dict) -> list[list[tuple[dict, float]]]:
    """Each run's ``[(row, raw score)]`` with the pending rows that match in it (docs/ranking.md, "Pending
    rows"): BM25 runs get :func:`~suzent_cli.index.pending.bm25_scores` over the run's column, the vector run the
    cosine :func:`~suzent_cli.index.pending.vector_scores` read against unrelated text as the run reads its own
    rows; each run re-sorted best first. A row a run already holds (indexed meanwhile) is not added again."""
    from suzent_cli.index.pending import bm25_scores, vector_scores

    held = {row["id"] for run in results for row, _ in run}
    rows = {r["id"]: r for r in pending.rows if r["id"] not in held}
    if not rows:
        return results
    fresh = type(pending)(list(rows.values()), pending.positions, pending.indexed_rows, pending.scope_of)
    out = []
    for name, run in zip(RUNS[mode], results, strict=True):
        if name == "vector":
            vector = encoded.get("vector")
            if vector is None or embedder is None:
                out.append(run)
                continue
            null = unrelated.null_of(embedder, vector)
            extra = {rid: null.z(cos) for rid, cos in vector_scores(fresh, embedder, vector).items()}
        else:
            words = fts_query(query)
            column = CONTENT_FTS_COLUMN if name == "fts_content" else FTS_COLUMN
            extra = bm25_scores(fresh, words, column, store) if words else {}
        merged = run + [(rows[rid], score) for rid, score in extra.items()]
        merged.sort(key=lambda pair: -pair[1])
        out.append(merged)
    return out


def _pending_positions(positions: list[tuple[str, str, int]], pending: Pending) -> list[tuple[str, str, int]]:
    """``positions`` (the table's rows around the candidates) with the pending rows and the table's rows of their
    logs, each row once: the neighbour step reads a pending line's place in its log."""
    seen = {rid for rid, _, _ in positions}
    return positions + [p for p in pending.positions if p[0] not in seen and not seen.add(p[0])]


def _rows_at(store: ReadStore, addresses: dict[str, int]) -> list[dict]:
    """The rows at ``addresses`` (id -> ``_rowid`` from :meth:`ReadStore.neighbourhood`) whose id is the expected
    one. A store moved to a newer table version in between (a server refreshing it for another request) may hold
    other rows there, or none: those are left out (the caller looks them up by id)."""
    if not addresses:
        return []
    try:
        found = store.rows_at(list(addresses.values()))
    except Exception:  # noqa: BLE001 - addresses of a version the store left: the caller falls back to ids
        return []
    return [row for row in found if row["id"] in addresses]


_CITES = re.compile(r"· source: (\d{4}-\d{2}-\d{2}\.md):(\d+)")


_PREVIOUSLY = re.compile(r"[;,]\s*previously\b:?\s*", re.I)
_SINCE = re.compile(r"\s*\((?:since|as of) [^)]*\)", re.I)


_SINCE_DAY = re.compile(r"\((?:since|as of) (\d{4}-\d{2}-\d{2})\)\s*$", re.I)


def _statements(text: str) -> list[str]:
    """The statements a claim's text holds, normalised (lower-case words): its own value, then each value of its
    ``previously:`` chain ("C (since D2); previously: B (since D1); previously: A" → C, B, A)."""
    return [" ".join(re.findall(r"[a-z0-9]+", _SINCE.sub("", part).lower())) for part in _PREVIOUSLY.split(text)]


def _replaced(text: str) -> set[tuple[str, str]]:
    """The (statement, day) pairs a current claim's chain says it replaced, as the dream writes one
    (``dream.rules``: "C (since D2); previously: B (since D1); previously: A" → (B, D2), (A, D1)): each earlier
    value with the ``(since D)`` day of the value just before it, the day the earlier one stopped holding. A
    ``previously:`` that no ``(since D)`` precedes (text a user wrote) names nothing."""
    parts = _PREVIOUSLY.split(text)
    out: set[tuple[str, str]] = set()
    for before, part in zip(parts, parts[1:], strict=False):
        m = _SINCE_DAY.search(before.strip())
        if m:
            out.add((" ".join(re.findall(r"[a-z0-9]+", _SINCE.sub("", part).lower())), m.group(1)))
    return out


def _quoted(text: str, limit: int = 60) -> str:
    """``text`` in quotes for an explanation, cut to ``limit`` characters."""
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[: limit - 1] + "…"}"'


OWN_WINDOW = 10  # step 3f: how many of the best hits are checked for a match of their own (one encode at most)


OWN_CACHE = 2000  # own-text vectors kept per embedder in a process (a warm server asks about the same rows again)
_OWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # embedder -> OrderedDict(text -> vector)
_OWN_LOCK = threading.Lock()


def _own_vectors(embedder: Embedder, texts: list[str]):
    """``texts`` embedded by ``embedder`` (float32 ``(len(texts), dim)``), each alone, the last :data:`OWN_CACHE`
    per embedder kept in the process (the embedder's vectors of a text never change). Raises what
    ``embedder.encode`` raises (:class:`EmbeddingFailed`)."""
    import numpy as np

    with _OWN_LOCK:
        kept = _OWN.setdefault(embedder, OrderedDict())
        found = {t: kept[t] for t in texts if t in kept}
    missing = list(dict.fromkeys(t for t in texts if t not in found))
    if missing:
        made = np.asarray(embedder.encode(missing), dtype=np.float32)
        found.update(zip(missing, made, strict=True))
        with _OWN_LOCK:
            for text, vector in zip(missing, made, strict=True):
                kept[text] = vector
            while len(kept) > OWN_CACHE:
                kept.popitem(last=False)
    return np.stack([found[t] for t in texts])


def own_matches(hits: list[Hit], embedder: Embedder | None, query_vector, compared: int,
                surprise: dict[str, float]) -> dict[str, bool]:
    """Step 3f: which of the best :data:`OWN_WINDOW` ``hits`` (by score) match the question on their own, not
    through what surrounds them: a BM25 match of the query's words in the row's own text (its ``fts_content``
    run), or its own text's cosine standing out from unrelated text as much as the minimum relevance asks of a
    vector match (:func:`relevant`'s bar for ``compared`` rows). A daily-log row is embedded with the facts before
    it (``index.context_window``) and BM25's context run reads them too, so its ``vector`` and ``fts`` scores may
    be its neighbours' words and meaning; its own text is embedded here, once per recall, only for the rows with
    no own word match (a vault claim is embedded alone: its vector run's ``surprise`` z is its own). Without an
    embedder (``fts`` mode) a row with no own word does not match. Returns ``{hit id: bool}`` for the window; a
    row whose own text could not be embedded (:class:`EmbeddingFailed`) is left out (unchecked: never capped)."""
    window = sorted(hits, key=lambda h: -h.score)[:OWN_WINDOW]
    bar = max(Z_MIN, unrelated.expected_max(compared) + Z_MARGIN)
    out: dict[str, bool] = {}
    alone: list[Hit] = []
    for hit in window:
        if hit.runs.get("fts_content", 0.0) > 0:
            out[hit.id] = True
        elif hit.source_type == "notebook" and hit.id in surprise:  # embedded alone: the vector run is its own
            out[hit.id] = surprise[hit.id] >= bar
        else:
            alone.append(hit)
    if alone and embedder is not None and query_vector is not None:
        import numpy as np

        try:
            null = unrelated.null_of(embedder, query_vector)
            cosines = _own_vectors(embedder, [h.text for h in alone]) @ np.asarray(query_vector, dtype=np.float32)
        except EmbeddingFailed:  # the recall still answers: these rows are left unchecked (never capped)
            return out
        for hit, cosine in zip(alone, cosines, strict=True):
            out[hit.id] = null.z(float(cosine)) >= bar
    for hit in alone:
        out.setdefault(hit.id, False)
    return out


def own_first(hits: list[Hit], matches: dict[str, bool]) -> list[Hit]:
    """Step 3f (a question about the present, the setting ``recall.now_slots``): a checked row that does not match
    the question on its own (``matches``, :func:`own_matches`), or that is about another person or item than the
    one asked about (:func:`suzent_cli.index.rank.about_another`), ranks below every checked row that matches on
    its own and is about the one asked about. A row of the first kind scored by its neighbours: the share one lent
    it, or their words and meaning in its context runs; the share exists to find a reply through the turn it
    answers, while a standing state of the user's is stated in its own row (the trial's "Visited the Lisbon
    aquarium last week", embedded with "The user's dog is called Biscuit" and "My brother has a cat named Pixie"
    before it, outranked the dog for "what is the name of the user's pet"). A row of the second kind answers
    another question ("My sister lives in York" for "where does the user live"): its factor alone left it first
    whenever the user's own answer shared fewer words. Such a row's score and relevance are lowered to just below
    the lowest-scored such matching row (:attr:`Hit.capped` names it), never raised. Changes ``hits`` in place;
    returns it (not re-sorted)."""
    def answers(hit: Hit) -> bool:
        return bool(matches.get(hit.id)) and not rank.about_another(hit.now)

    matched = [h for h in hits if answers(h)]
    if not matched:
        return hits
    floor = min(matched, key=lambda h: h.score)
    for hit in hits:
        if hit.id in matches and not answers(hit) and hit.score >= floor.score:
            used = hit.importance if hit.factors.get("ranked", True) else rank.NEUTRAL
            hit.relevance = rank.relevance_for(max(0.0, floor.score - SHOWN_STEP), used)
            hit.score = rank.final_score(hit.relevance, used)
            hit.capped = f"{floor.id} {_quoted(floor.text)} (score {floor.score:.4f})"
    return hits


def carry_to_current(hits: list[Hit]) -> list[Hit]:
    """After a dream, the current claim answers what the claim it replaced answered: a current vault claim whose
    ``previously:`` chain names a superseded claim of the same page found among ``hits`` scores the better of the
    two relevances plus :data:`NEIGHBOUR_SHARE` of the other, under its own importance (``rank.final_score``): the
    question found the subject twice, its history and its current value (issue 27; the share a vault page's
    neighbour lent, :data:`NO_NEIGHBOURS`, now goes along the chain only, not to whatever claim was filed next). "does the user still have a cat" matches
    "Has a tabby cat" best; its replacement "… passed away …" must not rank below a merely related row. The
    superseded row keeps its demotion. The chain must name the claim with its day (:func:`_replaced`). Changes
    ``score`` (and ``carries``) in place, never lowers a score;
    returns ``hits`` (not re-sorted)."""
    history = [(h, _statements(h.text)[0]) for h in hits if h.source_type == "notebook" and h.status == "superseded"]
    if not history:
        return hits
    for hit in hits:
        if hit.source_type != "notebook" or hit.status == "superseded":
            continue
        earlier = _replaced(hit.text)
        for old, key in history:  # the day must match too: a captured "…; previously: X" is not a chain
            if not key or (key, old.until) not in earlier or old.source_file != hit.source_file:
                continue
            both = max(old.relevance, hit.relevance) + NEIGHBOUR_SHARE * min(old.relevance, hit.relevance)
            carried = rank.final_score(both, hit.importance)
            if carried > hit.score:
                hit.score, hit.carries = carried, f"{old.id} {_quoted(old.text)} (relevance {old.relevance:.4f})"
    return hits


def order_scores(hits: list[Hit]) -> list[Hit]:
    """Make the shown scores non-increasing down ``hits`` (in their final order, best first) without moving a row:
    a row whose score is below the next row's (a newer row placed above the older one it replaces,
    :func:`~suzent_cli.vault.supersede.prefer_newer`) gets that row's score plus :data:`SHOWN_STEP`, or exactly
    that score when the row above it (in order itself) would then be below it; its own score is kept in :attr:`Hit.ranked_score`.
    Walks from the bottom, so a raised row never falls below the one it was placed above. A row already in order
    is untouched. Returns ``hits`` (changed in place). Runs over the whole candidate list before ``limit`` cuts
    it, so the score shown for a row does not depend on how many were asked for."""
    for i in range(len(hits) - 2, -1, -1):
        hit, below = hits[i], hits[i + 1]
        if hit.score >= below.score:
            continue
        lifted = below.score + SHOWN_STEP
        if i > 0 and below.score <= hits[i - 1].score < lifted:
            lifted = below.score  # no room under the row above (which stays): a tie, still in order
        if hit.ranked_score is None:
            hit.ranked_score = hit.score
        hit.score = lifted
    return hits


def collapse_cited(hits: list[Hit]) -> list[Hit]:
    """One statement, one hit: a daily-log row and the vault claim that cites it (``· source: F:L``) say the same
    thing, so the claim — which carries the lifecycle — takes the better of the two places (and score) and the
    log row goes. ``hits`` must be sorted best first; rows nobody cites are kept as they are."""
    cited: dict[tuple[str, int], Hit] = {}
    for h in hits:
        if h.source_type == "notebook":
            for f, n in _CITES.findall(h.content):
                cited.setdefault((f, int(n)), h)
    out: list[Hit] = []
    placed: set[str] = set()
    for h in hits:
        claim = None
        if h.source_type == "archive_log" and h.source_file and h.locator is not None:
            claim = cited.get((h.source_file, int(h.locator)))
        if claim is not None:
            if claim.id not in placed:
                if h.score > claim.score:
                    claim.score, claim.stands_for = h.score, f"{h.source_file}:{h.locator} (score {h.score:.4f})"
                out.append(claim)
                placed.add(claim.id)
            continue
        if h.id not in placed:
            out.append(h)
            placed.add(h.id)
    return out


def fill_provenance(hits: list[Hit], archive_dir, vault_dir) -> list[Hit]:
    """Complete what the index does not hold for a vault hit, from the markdown itself: ``session``, the session
    of the first daily-log line its claims cite (the ``## HH:MM — session`` entry above that line in
    ``archive_dir``), and ``date``, when its text has no claim confirmation date, the page's ``updated``
    frontmatter date (``vault_dir``/``source_file``). Best-effort and read-only: a file that cannot be read or
    parsed leaves the field None. Each file is read at most once. Returns ``hits`` (changed in place)."""
    from suzent_cli.archive import parse_log
    from suzent_cli.files import read_text
    from suzent_cli.vault import frontmatter
    from suzent_cli.vault.pages import meta_date

    sessions: dict[str, dict[int, str | None]] = {}
    updated: dict[str, str | None] = {}

    def session_of(cite: str) -> str | None:
        name, _, line = cite.rpartition(":")
        if name not in sessions:
            try:
                day = dt.date.fromisoformat(name.removesuffix(".md"))
                facts = parse_log(read_text(archive_dir / name), day)
                sessions[name] = {f.line: f.session for f in facts}
            except (OSError, ValueError):
                sessions[name] = {}
        return sessions[name].get(int(line)) if line.isdigit() else None

    def page_date(name: str) -> str | None:
        if name not in updated:
            try:
                meta, _ = frontmatter.parse(read_text(vault_dir / name), lenient=True)
                day = meta_date(meta.get("updated"))
                updated[name] = day.isoformat() if day else None
            except OSError:
                updated[name] = None
        return updated[name]

    for hit in hits:
        if hit.source_type != "notebook":
            continue
        if hit.session is None:
            hit.session = next((s for c in hit.cites if (s := session_of(c))), None)
        if hit.date is None and hit.source_file:
            hit.date = page_date(hit.source_file)
    return hits


def recall(settings: Settings, embedder: Embedder | None, query: str, *, mode: str = "hybrid", limit: int = 10,
           log: bool = True, filters: Filters | None = None, store: ReadStore | None = None,
           pending: bool = True) -> list[Hit]:
    """Open the index of ``settings`` (or use ``store``, an already open one: a server's) and :func:`search` it
    (stale decay as of ``settings.today``; ``filters`` before the limit); complete the vault hits' session and
    date from the markdown (:func:`fill_provenance`); log returned hits to ``recall_log.jsonl``.

    The daily-log lines not indexed yet are searched too (:mod:`suzent_cli.index.pending`): what was captured is
    recalled at once. ``pending=False`` searches the table alone (the write path's recall set, which classifies a
    new fact against what is recorded and stays as cheap as before).

    Raises :class:`IndexMissing` when there is no index yet and nothing pending, :class:`IndexIncompatible` when it was built with another
    embedder. ``embedder`` may be None only for ``mode="fts"`` (the table's recorded embedder is then trusted).
    """
    _check_search(query, mode=mode, limit=limit, embedder=embedder)
    store, pending_rows_ = _store_and_pending(settings, embedder, store, pending,
                                              filters.scopes if filters is not None else None)
    try:
        hits = search(store, embedder, query, mode=mode, limit=limit, today=settings.today, filters=filters,
                      rerank_top=check_value(setting("recall.rerank"), settings.rerank_top, "recall.rerank"),
                      pending=pending_rows_,
                      subject_boost=check_value(setting("recall.subject_boost"), settings.subject_boost,
                                                "recall.subject_boost"),
                      now_ranking=check_value(setting("recall.now_ranking"), settings.now_ranking,
                                              "recall.now_ranking"),
                      now_slots=check_value(setting("recall.now_slots"), settings.now_slots, "recall.now_slots"),
                      when_boost=check_value(setting("recall.when_boost"), settings.when_boost, "recall.when_boost"))
    except SuzentError:
        raise
    except Exception as exc:
        raise unreadable(settings.paths.index_dir, exc, home=settings.paths.home) from exc
    fill_provenance(hits, settings.paths.archive_dir, settings.paths.vault_dir)
    if log:
        append_recall_log(settings.paths.state_dir, query, [h.as_dict() for h in hits])
    return hits


def _store_and_pending(settings: Settings, embedder: Embedder | None, store: ReadStore | None,
                       search_pending: bool = True,
                       scopes: tuple[str, ...] | None = None) -> tuple[ReadStore, Pending]:
    """The store to search (``store``, checked against ``embedder``, or the index opened here) and the pending rows
    (:func:`~suzent_cli.index.pending.pending_rows`: what was captured and is not indexed yet). A home without a
    table is searched over its pending rows alone (:class:`~suzent_cli.index.pending.NoTable`). Raises
    :class:`IndexMissing` when there is neither a table nor a pending row, and what opening the table raises."""
    if store is None:
        try:
            store = _open_for_read(settings, embedder)
        except IndexMissing:
            pending = pending_rows(settings, None, scopes) if search_pending else Pending()
            if not pending:
                raise
            return NoTable(), pending  # type: ignore[return-value]
    elif embedder is not None:
        store.check(embedder.name, embedder.dim)
    return store, pending_rows(settings, store, scopes) if search_pending else Pending()


def _open_for_read(settings: Settings, embedder: Embedder | None) -> ReadStore:
    from suzent_cli.index.store import table_exists

    if not table_exists(settings.paths.index_dir):
        raise IndexMissing(f"no search index at {settings.paths.index_dir} yet: run `suzent index` first")
    if embedder is not None:
        return ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim, home=settings.paths.home)
    return ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home)
