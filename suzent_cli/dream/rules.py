"""The ``rules`` dream engine: offline, deterministic, no LLM.

Each fact of the batch, in (day, line) order, is routed by category to one page (:func:`lifecycle.page_for`)
and folded into that page's ``## Claims``; the facts of all pages are folded in that one order, so a statement
that replaces nothing on its own page ends the one claim, current at its time, that it replaces on another page
of the scope (**across pages**, :func:`_fold_in_said_order`, invariant 40). A batch is one scope's (:mod:`.scopes` splits it first): a project's
facts go to the same page names in its folder, ``1_Projects/<folder>/`` (:func:`suzent_cli.vault.projects.
project_page_for`), each page recording ``project: <key>``; a page recording another scope is never folded into
(its facts are skipped with one warning, like a page that does not parse).

* **repeat** — the same claim word for word after normalisation, or near-identical (rapidfuzz ``ratio`` ≥ 97)
  with the same numbers/dates: the claim's ``(confirmed Nx, last D)`` marker is bumped and the fact's log line is
  handed off as *superseded* (reconcile retires its index row; the page keeps the claim).
* **change** — a claim about a single-valued subject (where the user lives, works, …) with a new value, or a
  statement that replaces one current claim by the shared same-subject test (:mod:`suzent_cli.vault.supersede`:
  a change cue such as "switched", "no longer", "passed away" about an entity both name; the same statement with
  a new number or date): the old claim moves to ``## Previously`` with ``(until D)``, the new one becomes current.
  A statement that would replace two claims equally well replaces neither (lint reports the pairs).
* **new** — added with its provenance ``· source: YYYY-MM-DD.md:LINE``.
* **late** — a line appended to a day already consolidated (``batch.late``: a backfill, an exported legacy row) is
  folded the same way, except that when it conflicts with a current claim that became true *after* its day, it
  goes to ``## Previously`` (``until`` that claim's day) instead of replacing it.

Idempotent: a page records ``folded_through`` (the last log line folded into it) and ``late_through`` (the last
late-line record folded into it); a re-run of the same batch (after a crash) folds nothing twice but reports the
same superseded lines again. Frontmatter the engine owns:
``type``, ``title``, ``status: active`` (only when absent), ``updated``, ``stale_after`` (personal pages: the soonest
expiry of their current claims), ``folded_through``; any other key a person added is kept. A page whose
frontmatter does not load (invalid YAML, a list instead of a mapping, an alias bomb) is never rewritten: its facts
are skipped with one warning and not handed off. Pages are written through :func:`.pages.write_page`: a page a
person edited while it was being folded is folded again from what is on disk, and a page whose name differs only
by case from an existing one (``profile.md``) is that page. Pages whose names differ only by case within one batch
(categories ``Tools``, ``tools``, ``TOOLS``) are one page as well: spelled as the existing page is, else as the
first fact routed to it (in day, line order) spells it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz, process

from suzent_cli.archive import parse_fact_line
from suzent_cli.dream.engine import BatchFact, IngestBatch, IngestResult, LintFindings, LintJob, log_line
from suzent_cli.errors import DreamFailed, LockTimeout
from suzent_cli.scope import SCOPE_TAG_PREFIX
from suzent_cli.vault import content_pages, structure, supersede
from suzent_cli.vault.claims import (
    NEAR_IDENTICAL,
    PERSONAL_PAGES,
    PROJECT_PAGES,
    base_text,
    claim_key,
    conflict_key,
    is_personal,
    is_repeat,
    page_for,
    page_type,
    stale_after,
)
from suzent_cli.vault.pages import (
    CLAIMS,
    PAGE_LOCK_TIMEOUT,
    PREVIOUSLY,
    RELATED,
    Claim,
    Page,
    claim_since,
    existing_case,
    link_in_index,
    meta_date,
    pages_lock,
    parse_claim,
    read_page,
    write_page,
)
from suzent_cli.vault.projects import PROJECT_KEY, meta_scope, project_page_for
from suzent_cli.vault.state import ACROSS_PAGES, owed, state_dir_of
from suzent_cli.vault.state.owed import owe, settle

_DESCRIPTIONS = {
    "3_Personal/Profile.md": "Home, work, family, health and background.",
    "3_Personal/Preferences.md": "Likes, dislikes and preferences.",
    "3_Personal/Goals.md": "Plans, ambitions and things to learn.",
    "3_Personal/Interaction.md": "How answers and collaboration should work.",
    "1_Projects/Context.md": "Projects, teams, decisions and deadlines.",
}


MAX_TAGS = 20
_Op = tuple[supersede.Statement, dt.date, str, "str | None"]  # a retirement across pages: statement, day, the
# retired claim's claim_key and source (replayed onto the very claim when a person edited its page meanwhile)
_PAGE_CATEGORY = {title: category for category, title in PERSONAL_PAGES.items()}
_NOT_TOPICS = frozenset({"revision", "legacy"})  # outcome/provenance tags of the write path, not topics of the page
_NOT_TOPIC_PREFIXES = ("legacy:", SCOPE_TAG_PREFIX)  # an exported legacy row's id; a fact's scope (the page's)


def _in_time_order(batch: IngestBatch) -> list[tuple[tuple[str, str, int], BatchFact | dict]]:
    """The batch's facts and confirmations interleaved by when they were said (day, then HH:MM; a log line
    before a confirmation of the same minute), so a restatement is folded before a later change, not after."""
    events: list[tuple[tuple[str, str, int], BatchFact | dict]] = [
        ((f.day.isoformat(), f.time or "", 0), f) for f in batch.facts]
    for record in batch.confirmations:
        said = str(record.get("time") or str(record.get("ts") or "")[11:16])
        events.append(((str(record.get("day") or "")[:10], said, 1), record))
    events.sort(key=lambda e: e[0])
    return events


def _record_day(record: dict) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(record.get("day"))[:10])
    except ValueError:
        return None


def _trim(lines: list[str]) -> list[str]:
    """``lines`` without leading and trailing blank lines."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _nested(entry: Claim | str) -> bool:
    """A raw line indented under the claim before it (a nested bullet or continuation)."""
    return isinstance(entry, str) and entry[:1] in (" ", "\t") and bool(entry.strip())


def _position(source: str | None) -> tuple[str, int]:
    """Sort key of a ``YYYY-MM-DD.md:LINE`` source ('' for none)."""
    if not source or ":" not in source:
        return ("", 0)
    name, _, line = source.rpartition(":")
    return (name, int(line) if line.isdigit() else 0)


def _entries(lines: list[str] | None) -> list[Claim | str]:
    """A section's lines as claims (top-level bullets) and raw lines (anything else, kept as written)."""
    return [parse_claim(line) or line for line in lines or []]


class _PageWork:
    """One page being folded into. ``claims``/``history`` keep every line of ``## Claims``/``## Previously``:
    claim bullets as :class:`Claim`, anything a person wrote between them (notes, callouts, nested bullets) as
    text, so a rewrite changes only the claims."""

    def __init__(self, rel: str, page: Page, category: str, fresh: bool, judge: supersede.ValueJudge | None = None,
                 scope: str = ""):
        self.rel, self.page, self.category, self.fresh = rel, page, category, fresh
        self.scope = scope  # the batch's scope: a project's key is recorded in the page's frontmatter
        self.judge = judge  # the model half of the same-subject test (None: words only)
        self.claims = _entries(page.section(CLAIMS))
        self.history = _entries(page.section(PREVIOUSLY))
        self.current = [e for e in self.claims if isinstance(e, Claim)]
        # Facts are folded in time order, which within a day need not be line order (a backfilled entry, an
        # exported legacy row): skip only what an EARLIER run folded, and record the furthest line folded.
        self.folded_through = self.folded_start = _position(str(page.meta.get("folded_through") or ""))
        # confirmations up to this ts were folded by an earlier run (records are appended in ts order, and a run
        # folds every record it was shown); this run's records are folded in the order they were said
        self.folded_before = str(page.meta.get("confirmed_through") or "")
        self.confirmed_through = self.folded_before
        # late lines (appended to days already consolidated) are keyed by their record's ts, like confirmations
        self.late_before = str(page.meta.get("late_through") or "")
        self.late_through = self.late_before
        self.replaced: list[str] = []  # provenance of claims this run moved to ## Previously
        self.added: list[tuple[dt.date, Claim]] = []  # (day, claim) of each statement this run made current
        # without replacing a claim of this page: what the across-pages pass compares with other pages' claims
        self.across: list[tuple[dt.date, Claim]] = []  # of those, the ones that retired a claim of another page
        # while the batch was folded (in said order): recorded as owed, never compared again in this run
        self.superseded: list[tuple[int, str]] = []  # (position in the batch's time order, log line) of repeats
        self.run_date: dt.date | None = None
        self.latest: dt.date | None = None
        self.changed = fresh
        self.tags: list[str] = []
        self._keys = [claim_key(c.text) for c in self.current]
        self._reads = [supersede.read(c.text) for c in self.current]  # what the same-subject test reads of each
        self._conflicts = [conflict_key(c.text) for c in self.current]  # computed once per claim, not per fact
        # Lookups that keep a fold linear in the page's size: exact keys (rebuilt only after a claim is replaced,
        # which shifts positions) and how many current claims each subject has (most facts have none).
        self._exact: dict[str, int] | None = None
        self._held: set[str] | None = None  # holds()'s keys, dropped when a claim is added or retired
        self._subjects = Counter(subject for subject, _ in self._conflicts)

    def match(self, text: str) -> int | None:
        """Index of the current claim ``text`` repeats (exact key, else near-identical with equal specifics)."""
        key = claim_key(text)
        if self._exact is None:
            self._exact = {}
            for i, k in enumerate(self._keys):
                self._exact.setdefault(k, i)
        if key in self._exact:
            return self._exact[key]
        if not self._keys:
            return None
        found = process.extractOne(key, self._keys, scorer=fuzz.ratio, score_cutoff=NEAR_IDENTICAL)
        if found and is_repeat(key, found[0]):
            return found[2]
        return None

    def fold(self, fact: BatchFact) -> bool:
        """Fold ``fact`` in; True when it repeated an existing claim (its line is then superseded)."""
        position = (f"{fact.day.isoformat()}.md", fact.line)
        already = fact.late <= self.late_before if fact.late else position <= self.folded_start
        i = self.match(fact.content)
        if already:
            return i is not None and self.current[i].source != fact.source
        if fact.late:
            self.late_through = max(self.late_through, fact.late)
        else:
            self.folded_through = max(self.folded_through, position)
        self.tags.extend(t for t in fact.tags if t not in self.tags and t not in _NOT_TOPICS
                         and not t.startswith(_NOT_TOPIC_PREFIXES))
        return self._state(fact.content, fact.day, fact.source, i)

    def _state(self, content: str, day: dt.date, source: str | None, i: int | None, count: int = 1) -> bool:
        """``content`` stated on ``day``: bump claim ``i`` if it repeats one (True), else make it current — a
        claim it conflicts with moves to ``## Previously`` — and add it with provenance ``source`` (False)."""
        self.changed = True
        self.latest = max(self.latest or day, day)
        if i is not None:
            claim = self.current[i]
            claim.count = (claim.count or 1) + 1
            claim.last = max(claim.last or day, day)
            return True
        subject, value = conflict_key(content)
        rivals = self._subjects[subject] > 0
        newer = [s for j, other in enumerate(self._conflicts) if other[0] == subject and other[1] != value
                 and (s := claim_since(self.current[j])) is not None and s > day] if rivals else []
        if subject and newer:
            # A late line (a backfill, an exported legacy row) older than the claim it conflicts with: it was true
            # before, so it is history, not the current value.
            self._add_history(Claim(content, 1, day, source, until=min(newer)))
            return False
        replaced: list[Claim] = []
        ended: str | None = None  # of a combined claim, the parts the statement replaced
        for j in reversed(range(len(self.current)) if rivals else ()):
            other = self._conflicts[j]
            if other[0] == subject and other[1] != value:  # the newer claim replaces it: history, not deletion
                replaced.append(self._retire(j, day))
        if not replaced:
            # Beyond the single-valued subjects: the one current claim this statement replaces by the shared
            # same-subject test (a change cue about a shared entity, a new number for the same statement). Only
            # claims that became true no later than this statement compete; a tie replaces nothing (lint asks).
            said = [j for j, c in enumerate(self.current) if (s := claim_since(c)) is None or s <= day]
            read = supersede.read(content)
            j = supersede.best_replaced(read, [self._reads[k] for k in said], self.judge)
            if j is not None:
                changed = supersede.compare(self._reads[said[j]], read).parts  # a combined claim: the parts replaced
                old = self._retire(said[j], day)
                replaced.append(old)
                self.keep_rest(old, changed)
                ended = structure.only(old.text, set(changed)) if changed else None
        text = content
        if replaced:  # the schema's change-over-time form, so the current claim answers for the old one too
            text = f"{content.rstrip(' .')} (since {day.isoformat()}); previously: {ended or replaced[0].text}"
        claim = Claim(text, count, day, source)
        self._add_current(claim)
        if not replaced:  # a statement replaces one claim: one that did so here looks no further
            self.added.append((day, claim))
        return False

    def keep_rest(self, old: Claim, changed: frozenset[int] | None) -> None:
        """After ``old`` (a combined claim) was retired because its parts ``changed`` were replaced, keep the parts
        that still hold as a current claim with ``old``'s provenance and confirmations ("I'm a data engineer
        living in Berlin", then a move: "I'm a data engineer." stays current). Nothing when the whole changed."""
        rest = structure.remainder(old.text, set(changed)) if changed else None
        if rest and self.match(rest) is None:
            self._add_current(Claim(rest, old.count, old.last, old.source))

    def retire_named(self, key: str, source: str | None, statement: supersede.Statement,
                     day: dt.date) -> Claim | None:
        """Retire the current claim whose :func:`claim_key` of its base text is ``key`` and whose provenance is
        ``source`` (the claim the across-pages pass chose on the page as it read it) because ``statement`` replaces
        it; None, retiring nothing, when no current claim is that one any more (a person edited or removed it
        meanwhile): a retirement is never moved onto another line."""
        j = next((k for k, c in enumerate(self.current) if c.source == source and claim_key(base_text(c.text)) == key),
                 None)
        return None if j is None else self._retire_for(j, statement, day)

    def _retire_for(self, j: int, statement: supersede.Statement, day: dt.date) -> Claim:
        """Retire current claim ``j`` as replaced by ``statement`` on ``day``, keeping the parts that still hold."""
        changed = supersede.compare(self._reads[j], statement).parts
        self.changed = True
        old = self._retire(j, day)
        self.keep_rest(old, changed)
        return old

    def retired_by(self, content: str, statement: supersede.Statement, day: dt.date) -> Claim | None:
        """The claim of ``## Previously`` ended on ``day`` that ``statement`` replaces, if any: its retirement is
        already on this page (an earlier pass over the same statement wrote it before it was interrupted)."""
        said = conflict_key(content)
        return next((h for h in self.history if isinstance(h, Claim) and h.until == day
                     and (_rivals(said, conflict_key(base_text(h.text)))
                          or supersede.best_replaced(statement, [supersede.read(base_text(h.text))]) is not None)),
                    None)

    def holds(self, text: str) -> bool:
        """True when a current claim of this page says ``text`` (compared by :func:`claim_key` of the base text)."""
        if self._held is None:  # computed once per state of the page: the pass asks once per statement
            self._held = {claim_key(base_text(c.text)) for c in self.current}
        return claim_key(base_text(text)) in self._held

    def _add_current(self, new: Claim) -> None:
        """Add ``new`` as a current claim: after the last claim bullet (and the notes nested under it), or after a
        person's intro text on a page without claims; every lookup of the fold learns it."""
        last_claim = next((k for k in range(len(self.claims) - 1, -1, -1) if isinstance(self.claims[k], Claim)), None)
        if last_claim is None:
            at = len(self.claims)
            while at > 0 and not str(self.claims[at - 1]).strip():
                at -= 1  # a fresh claim goes after a person's intro text, before trailing blank lines
        else:
            at = last_claim + 1
            while at < len(self.claims) and _nested(self.claims[at]):
                at += 1  # past the notes nested under the last claim: they stay with it
        self.claims.insert(at, new)
        self.current.append(new)
        self._held = None
        content = base_text(new.text)
        subject, value = conflict_key(content)
        self._keys.append(claim_key(content))
        self._reads.append(supersede.read(content))
        self._conflicts.append((subject, value))
        self._subjects[subject] += 1
        if self._exact is not None:
            self._exact.setdefault(self._keys[-1], len(self._keys) - 1)

    def _retire(self, j: int, day: dt.date) -> Claim:
        """Move current claim ``j`` (and the notes nested under it) to ``## Previously`` with ``(until day)``: a
        replaced claim becomes history, never deleted. Returns it."""
        old = self.current.pop(j)
        self._held = None
        self._keys.pop(j)
        self._reads.pop(j)
        subject = self._conflicts.pop(j)[0]
        self._subjects[subject] -= 1
        self._exact = None  # positions shifted
        at = next(k for k, e in enumerate(self.claims) if e is old)
        end = at + 1
        while end < len(self.claims) and _nested(self.claims[end]):
            end += 1  # the notes nested under a claim go with it
        moved = self.claims[at:end]
        del self.claims[at:end]
        old.until = day
        old.text = base_text(old.text)
        if old.source:
            self.replaced.append(old.source)
        while self.history and isinstance(self.history[-1], str) and not self.history[-1].strip():
            self.history.pop()  # keep ## Previously a tight list
        self.history.extend(moved)
        return old

    def _add_history(self, claim: Claim) -> None:
        while self.history and isinstance(self.history[-1], str) and not self.history[-1].strip():
            self.history.pop()
        self.history.append(claim)

    def confirm(self, record: dict) -> None:
        """Fold one ``confirmations.jsonl`` record: bump the matching claim, or add it when no claim matches (the
        restatement was never logged, so it must not be lost). Records up to ``confirmed_through`` are skipped."""
        ts, day = str(record.get("ts") or ""), _record_day(record)
        if not ts or ts <= self.folded_before or day is None:
            return
        self.confirmed_through = max(self.confirmed_through, ts)
        content = str(record.get("content") or record.get("matched") or "")
        for text in (record.get("content"), record.get("matched")):
            i = self.match(str(text)) if text else None
            if i is not None:
                self._state(content, day, None, i)
                return
        # No current claim: the restated record was replaced since (a change back: it is current again) or was
        # never folded. Either way it is a statement as of its day, and must not be lost.
        source = str(record.get("source") or "")
        provenance = (f"{source.removeprefix('archive:')}:{record.get('locator')}"
                      if source.startswith("archive:") and record.get("locator") else None)
        self._state(content, day, provenance, None, count=2)  # the original statement and this one

    def backfill_stale_after(self) -> None:
        """A personal page with no ``stale_after`` gets one from its claims' last confirmations (or ``updated``)."""
        if "stale_after" in self.page.meta or not is_personal(self.rel):
            return
        fallback = meta_date(self.page.meta.get("updated")) or self.run_date
        expiries = [e for c in self.current if (last := c.last or fallback)
                    and (e := stale_after(self.category, c.text, last))]
        if not expiries and fallback:  # a page without claim bullets: the category's own expiry
            expiries = [e for e in [stale_after(self.category, "", fallback)] if e]
        if expiries:
            self.page.meta["stale_after"] = min(expiries)
            self.changed = True

    def finish(self, related: list[str]) -> Page:
        """The page with claims, frontmatter and ``## Related`` brought up to date."""
        page, meta = self.page, self.page.meta
        title = Path(self.rel).stem
        meta.setdefault("type", page_type(self.rel))
        meta.setdefault("title", title)
        meta.setdefault("status", "active")
        if self.scope:
            meta[PROJECT_KEY] = self.scope
        if self.latest and (not isinstance(meta.get("updated"), dt.date) or meta["updated"] < self.latest):
            meta["updated"] = self.latest
        if is_personal(self.rel):
            expiries = [e for c in self.current if c.last and (e := stale_after(self.category, c.text, c.last))]
            if expiries:
                meta["stale_after"] = min(expiries)
        if self.tags:
            have = meta.get("tags") if isinstance(meta.get("tags"), list) else []
            merged = list(dict.fromkeys([*map(str, have), *self.tags]))
            if "tags" not in meta or isinstance(meta.get("tags"), list):
                meta["tags"] = merged[:MAX_TAGS] if len(have) <= MAX_TAGS else list(map(str, have))
        if self.folded_through[0]:
            meta["folded_through"] = f"{self.folded_through[0]}:{self.folded_through[1]}"
        if self.confirmed_through:
            meta["confirmed_through"] = self.confirmed_through
        if self.late_through:
            meta["late_through"] = self.late_through
        if self.fresh:
            about = (f"{title} of the project {self.scope}: notes consolidated from the daily logs." if self.scope
                     else _DESCRIPTIONS.get(self.rel, f"{title}: notes consolidated from the daily logs."))
            page.body = f"# {title}\n\n{about}\n"
        render = [e.render() if isinstance(e, Claim) else e for e in self.claims]
        page.set_section(CLAIMS, _trim(render), before=RELATED)
        if self.history:
            page.set_section(PREVIOUSLY, _trim([e.render() if isinstance(e, Claim) else e for e in self.history]),
                             before=RELATED)
        existing = page.section(RELATED) or []
        extra = [f"- [[{r}]]" for r in related if f"[[{r}]]" not in "\n".join(existing)]
        if extra:
            page.set_section(RELATED, _trim(existing) + extra)
        return page


def _rivals(new: tuple[str, str], old: tuple[str, str]) -> bool:
    """Two :func:`conflict_key` s that cannot both hold: one subject, different values (the on-page test)."""
    return bool(new[0]) and new[0] == old[0] and new[1] != old[1]


def _replaced_across(content: str, statement: supersede.Statement, day: dt.date,
                     others: list[tuple[str, _PageWork]]) -> tuple[str, int] | None:
    """``(page, index)`` of the one current claim of ``others`` (pages of the statement's scope other than its
    own) that ``content`` (read as ``statement``), said on ``day``, replaces; None when there is none. Only claims
    that became true before ``day`` compete. The on-page tests, words only: a claim of the same single-valued
    subject (or the same statement with the other polarity) with another value — of several, the one true most
    recently (a statement retires at most one claim on another page) —, else :func:`supersede.best_replaced`
    without a judge (a change cue about a shared entity, a new number for the same statement)."""
    said = conflict_key(content)
    cands = [(rel, j, since) for rel, w in others for j, c in enumerate(w.current)
             if (since := claim_since(c)) is not None and since < day]
    if not cands:
        return None
    pages = dict(others)
    rivals = [(since, rel, j) for rel, j, since in cands if _rivals(said, pages[rel]._conflicts[j])]
    if rivals:
        _, rel, j = max(rivals, key=lambda r: r[0])
        return rel, j
    k = supersede.best_replaced(statement, [pages[rel]._reads[j] for rel, j, _ in cands])
    return None if k is None else cands[k][:2]


class _PastDeadline(DreamFailed):
    """The run's deadline passed mid-fold: the whole run fails (pages already written stay; a re-run converges)."""


class RulesEngine:
    """The offline engine (module doc). ``embedder`` (an embedder object) or ``embedder_spec`` (a name, loaded
    lazily) lets the same-subject test ask a model whether a new value stands in for an older one
    (:mod:`suzent_cli.dream.values`); with neither, words alone decide. Safe to reuse across runs (each run and
    each lint pass gets a fresh cache of vectors)."""

    name = "offline"

    def __init__(self, embedder=None, *, embedder_spec: str | None = None):
        self.embedder, self.embedder_spec = embedder, embedder_spec

    def judge(self) -> supersede.ValueJudge | None:
        """A fresh :class:`~suzent_cli.dream.values.ModelJudge` on the engine's embedder, or None without one."""
        if self.embedder is None and not self.embedder_spec:
            return None
        from suzent_cli.dream.values import ModelJudge

        return ModelJudge(self.embedder, spec=self.embedder_spec)

    def ingest(self, batch: IngestBatch) -> IngestResult:
        """Fold ``batch.facts`` into pages and write the changed ones (one by one, each through
        :func:`.pages.write_page`: a page a person edited while it was being folded is folded again from what is
        there now), then index.md. A page that does not parse is left as it is, its facts not handed off.

        Raises :class:`DreamFailed` when the deadline passes before the pages are written (pages already written
        stay; a re-run converges) or a page cannot be written.
        """
        if batch.scope is None:  # not split by scope yet: fold each scope on its own (dream.scopes)
            from suzent_cli.dream.scopes import ingest_by_scope

            return ingest_by_scope(self, batch)
        vault = batch.vault_dir
        result = IngestResult()
        routes: dict[str, tuple[str, list[tuple[int, BatchFact | dict]]]] = {}
        spelled: dict[str, str] = {}  # casefolded page path -> the spelling this batch writes it with
        for n, (_when, item) in enumerate(_in_time_order(batch)):
            category = item.category if isinstance(item, BatchFact) else str(item.get("category") or "general")
            page = project_page_for(category, batch.folder) if batch.scope else page_for(category)
            rel = existing_case(vault, page)  # Profile.md beside a person's profile.md: one page
            # Tools, tools and TOOLS in one batch: one page too, spelled as on disk, else as the first fact routed
            rel = spelled.setdefault(rel.casefold(), rel)
            routes.setdefault(rel, (category, []))[1].append((n, item))
        revisit = set(batch.revisit)
        revisit_only = sorted({rel for rel in batch.revisit
                               if rel not in routes and is_personal(rel) and (vault / rel).is_file()})
        routed = sorted(routes)
        superseded: list[tuple[int, str]] = []  # (position in time order, raw line): reported in time order
        replaced: list[tuple[int, list[str]]] = []  # (position of the page's first event, sources moved to history)
        judge = self.judge()
        works: dict[str, _PageWork] = {}
        recorded: list[owed.Owed] = []  # this run's records in across_pages.jsonl
        plans: dict[str, tuple[str, list[tuple[int, BatchFact | dict]], list[str]]] = {}
        for rel in routed + revisit_only:
            category, events = routes.get(rel) or (_PAGE_CATEGORY.get(Path(rel).stem, "personal"), [])
            zone = rel.rsplit("/", 1)[0] if batch.scope else rel.split("/", 1)[0]
            siblings = [] if rel in revisit_only else [r[:-3] for r in _routed_pages(vault, zone, routed, batch.folder)
                                                          if r != rel]
            work = self._start(batch, rel, category, rel in revisit, result, judge)
            if work is not None:
                works[rel], plans[rel] = work, (category, events, siblings)
        # the scope's other pages: a statement of this batch may end a claim there (invariant 40)
        passive = _passive_pages(vault, batch.scope or "", batch.folder, {r.casefold() for r in routed + revisit_only})
        ops, compared = _fold_in_said_order(batch, works, {rel: plan[1] for rel, plan in plans.items()}, passive)
        for rel in [*plans, *passive]:
            if rel in plans:
                category, events, siblings = plans[rel]
                work = self._write(batch, rel, category, events, rel in revisit, siblings, result, judge, recorded,
                                   works[rel], ops.get(rel, []))
            else:
                category, events = _PAGE_CATEGORY.get(Path(rel).stem, "general"), []
                work = _write_passive(batch, rel, passive[rel], ops.get(rel, []), result)
            if work is None:
                works.pop(rel, None)
                continue
            works[rel] = work
            superseded += work.superseded
            replaced.append((events[0][0] if events else len(batch.facts) + len(batch.confirmations), work.replaced))
        replaced.append((len(batch.facts) + len(batch.confirmations),
                         _retire_across_pages(batch, works, result, recorded, compared)))
        result.superseded = [raw for _, raw in sorted(superseded)]
        if getattr(judge, "unavailable", False):  # a model that cannot tell kinds apart (hash) is a choice; this is not
            result.warnings.append(f"changes that share no word with what they replace were decided by words alone: "
                                   f"{judge.problem}")
        for _, sources in sorted(replaced, key=lambda r: r[0]):  # a replaced claim's log line: the page holds it
            for source in sources:
                raw = batch.log_line(source)
                if raw and parse_fact_line(raw):
                    result.superseded.append(raw)
        _update_index(vault, routed, result, batch.scope or "")
        late = f" and late lines of {len(batch.late)} consolidated days" if batch.late else ""
        result.summary = (f"rules engine: {len(batch.facts)} facts from {len(batch.days)} days{late}; "
                          f"{len(result.superseded)} repeats folded; {len(result.pages)} pages written")
        return result

    @staticmethod
    def _start(batch: IngestBatch, rel: str, category: str, revisit: bool, result: IngestResult,
               judge: supersede.ValueJudge | None) -> _PageWork | None:
        """Page ``rel`` read to be folded into (a fresh page when absent), or None with a warning when it is left as
        it is (it records another scope, its frontmatter does not load, it cannot be read)."""
        path = batch.vault_dir / rel
        try:
            return _page_work(batch, rel, category, read_page(path) if path.is_file() else None, judge, revisit)
        except (DreamFailed, OSError) as exc:
            result.warnings.append(f"{rel} left as it is, its facts not folded: {exc}")
            return None

    @staticmethod
    def _write(batch: IngestBatch, rel: str, category: str, events: list[tuple[int, BatchFact | dict]],
               revisit: bool, siblings: list[str], result: IngestResult, judge: supersede.ValueJudge | None,
               recorded: list[owed.Owed], work: _PageWork,
               ops: list[_Op]) -> _PageWork | None:
        """Write page ``rel`` folded as ``work`` when it changed. The statements it makes current are recorded in
        ``across_pages.jsonl`` (added to ``recorded``) before the write: the across-pages pass owes them a
        comparison even if this run does not live to make it. A page a person edited meanwhile is folded again from
        what is there now (its own ``events``, then the retirements ``ops`` that statements of other pages made
        here, each onto the very claim chosen). The work written (or found nothing to write), or None when the page
        was left as it is (a warning says why)."""
        path = batch.vault_dir / rel
        if not work.changed:
            return work
        final = [work]
        across = {(day, claim.text) for day, claim in work.across}

        def refold(now: Page | None) -> Page:  # the page changed on disk since it was read: fold again from it
            again = _page_work(batch, rel, category, now, judge, revisit)
            for k, (n, item) in enumerate(events):
                if k % 256 == 0 and time.monotonic() > batch.deadline:
                    raise _PastDeadline(f"rules engine ran past its timeout while folding into {rel}")
                _fold_one(again, n, item)
            if revisit:
                again.backfill_stale_after()
            for statement, day, key, source in ops:
                again.retire_named(key, source, statement, day)
            # a statement that retired a claim of another page in the first fold still did: not compared again
            again.across = [a for a in again.added if (a[0], a[1].text) in across]
            again.added = [a for a in again.added if (a[0], a[1].text) not in across]
            final[0] = again
            _record_owed(batch, _owed_by(batch, rel, again), recorded, result.warnings)
            return again.finish(siblings)

        _record_owed(batch, _owed_by(batch, rel, work), recorded, result.warnings)
        try:
            if write_page(path, work.finish(siblings), refold=refold, lock_path=pages_lock(batch.vault_dir)):
                result.pages.append(rel)
        except _PastDeadline:
            raise
        except (DreamFailed, LockTimeout) as exc:
            result.warnings.append(f"{rel} left as it is, its facts not folded: it changed meanwhile and {exc}")
            return None
        except OSError as exc:
            raise DreamFailed(f"cannot write {rel}: {exc.strerror or exc}") from None
        return final[0]

    def lint(self, job: LintJob) -> LintFindings:
        """Contradictions among current claims (same single-valued subject, different values)."""
        from suzent_cli.dream.lint import rules_contradictions

        return rules_contradictions(job.vault_dir, job.run_date, judge=self.judge())


def _page_work(batch: IngestBatch, rel: str, category: str, page: Page | None, judge: supersede.ValueJudge | None,
               revisit: bool) -> _PageWork:
    """A :class:`_PageWork` on ``page`` (None: a fresh page) of ``batch``'s scope. Raises :class:`DreamFailed`
    when the page records another scope (never folded across scopes: :mod:`.scopes`; a page of the project's own
    folder that records no key is adopted, ``finish`` records it)."""
    recorded = meta_scope(page.meta) if page is not None else batch.scope
    if recorded != batch.scope and not (batch.scope and not recorded):
        raise DreamFailed(f"it records {'project ' + recorded if recorded else 'no project (the person)'}, "
                          f"not {'project ' + str(batch.scope) if batch.scope else 'the person'}")
    work = _PageWork(rel, page or Page(), category, fresh=page is None, judge=judge, scope=batch.scope or "")
    if revisit:
        work.run_date = batch.run_date
    return work


def _fold_one(work: _PageWork, n: int, item: BatchFact | dict) -> None:
    """Fold one event (a log line or a confirmation record, ``n``: its position in said order) into ``work``."""
    if isinstance(item, BatchFact):
        if work.fold(item):
            work.superseded.append((n, item.raw))
    else:
        work.confirm(item)


def _passive_pages(vault: Path, scope: str, folder: str, taken: set[str]) -> dict[str, _PageWork]:
    """The pages of ``scope`` this batch routes nothing to (``taken``: casefolded paths it folds into), read so
    the batch's statements can end a claim there in said order; a page that does not parse or records another
    scope is left out (the post-pass :func:`across_pages` skips it too)."""
    out: dict[str, _PageWork] = {}
    for rel in _scope_pages(vault, folder):
        if rel.casefold() in taken:
            continue
        try:
            page = read_page(vault / rel)
        except (DreamFailed, OSError):
            continue
        if meta_scope(page.meta) == scope:
            out[rel] = _PageWork(rel, page, _PAGE_CATEGORY.get(Path(rel).stem, "general"), fresh=False, scope=scope)
    return out


def _fold_in_said_order(batch: IngestBatch, works: dict[str, _PageWork],
                        events: dict[str, list[tuple[int, BatchFact | dict]]],
                        passive: dict[str, _PageWork]) -> tuple[dict[str, list[_Op]], bool]:
    """Fold the batch's events into their pages (``works``) in the order they were said, whatever their page, so a
    statement that a page makes current without replacing a claim there ends the one claim, current *at its time*,
    that it replaces on another page of the scope (:func:`_replaced_across`; ``passive``: the scope's pages the
    batch routes nothing to). Such a statement moves from the page's ``added`` to its ``across``: it retired its one
    claim and is not compared again. Skipped (the post-pass warns) when the scope holds more than
    :data:`MAX_ACROSS_CLAIMS` current claims. Returns, per page, the retirements made there
    ``(statement, day, claim_key of the claim, its source)``, replayed by a refold, and whether the statements were
    compared (False past the bound). Raises :class:`_PastDeadline`."""
    merged = sorted(((n, rel, item) for rel, evs in events.items() for n, item in evs), key=lambda e: e[0])
    every = {**passive, **works}
    compare = sum(len(w.current) for w in every.values()) <= MAX_ACROSS_CLAIMS
    ops: dict[str, list[_Op]] = {}
    for k, (n, rel, item) in enumerate(merged):
        if k % 256 == 0 and time.monotonic() > batch.deadline:
            raise _PastDeadline(f"rules engine ran past its timeout while folding into {rel}")
        work = works[rel]
        before = len(work.added)
        _fold_one(work, n, item)
        if not compare or len(work.added) == before:
            continue
        day, claim = work.added[-1]
        content = base_text(claim.text)
        said = conflict_key(content)
        newer = [since for o, w in every.items() if o != rel for j, c in enumerate(w.current)
                 if _rivals(said, w._conflicts[j]) and (since := claim_since(c)) is not None and since > day]
        if newer:  # another page states this subject's value as of later (a run killed between its page writes,
            # a late line): this statement was true before it, so it is history at once, as on one page
            work.added.pop()
            work._retire(next(j for j, c in enumerate(work.current) if c is claim), min(newer))
            continue
        statement = supersede.read(content)
        found = _replaced_across(content, statement, day, [(o, w) for o, w in every.items() if o != rel])
        if found is None:
            continue
        other, j = found
        old = every[other]._retire_for(j, statement, day)
        ops.setdefault(other, []).append((statement, day, claim_key(old.text), old.source))
        work.across.append(work.added.pop())
    for work in works.values():
        if work.run_date is not None:  # a revisited page (a personal page with no expiry yet)
            work.backfill_stale_after()
    return ops, compare


def _write_passive(batch: IngestBatch, rel: str, work: _PageWork,
                   ops: list[_Op], result: IngestResult) -> _PageWork | None:
    """Write a page the batch routed nothing to but whose claims ``ops`` retired (:func:`_write_retired`). The work
    written, or None when the page was left as it is."""
    if not work.changed:
        return work
    if time.monotonic() > batch.deadline:  # the statements' pages are written and their records owed: resumable
        raise _PastDeadline("rules engine ran past its timeout while comparing claims across pages")
    done = _write_retired(batch.vault_dir, rel, work, ops, batch.scope or "", result.warnings, result.pages)
    return None if done is None else done[0]


def _write_retired(vault: Path, rel: str, work: _PageWork, ops: list[_Op], scope: str, warnings: list[str],
                   written: list[str]) -> tuple[_PageWork, bool] | None:
    """Write page ``rel`` of ``scope`` whose current claims ``ops`` retired (``work``: the page as read, with them
    retired) through :func:`.pages.write_page`. When a person edited the page after it was read, the retirements are
    replayed onto what is there now, each onto the very claim chosen (same text, same source:
    :meth:`_PageWork.retire_named`); a claim the person changed or removed is left as they wrote it, with one
    warning, never replaced on another line; a removed page stays removed, with a warning. ``rel`` is added to
    ``written`` when written. Returns ``(the work written, whether the page was written)``, or None, with a warning,
    when the page is left as it is (it no longer parses, its lock timed out). Raises :class:`DreamFailed` when it
    cannot be written (OSError)."""
    missed: list[str] = []  # the last replay's claims a person changed (a replay may run again)
    final = [work]

    def replay(now: Page | None) -> Page | None:
        if now is None:
            missed[:] = ["the page was removed"]
            return None
        again = _PageWork(rel, now, work.category, fresh=False, scope=scope)
        missed[:] = [key for statement, day, key, source in ops
                     if again.retire_named(key, source, statement, day) is None]
        final[0] = again
        return again.finish([]) if again.changed else None

    try:
        wrote = write_page(vault / rel, work.finish([]), refold=replay, lock_path=pages_lock(vault))
    except (DreamFailed, LockTimeout) as exc:
        warnings.append(f"{rel}: claims replaced on other pages left current: {exc}")
        return None
    except OSError as exc:
        raise DreamFailed(f"cannot write {rel}: {exc.strerror or exc}") from None
    if wrote and rel not in written:
        written.append(rel)
    if missed:
        warnings.append(f"{rel} changed while claims were retired across pages; left current as the person "
                        f"wrote it: {'; '.join(m[:80] for m in missed)}")
    return final[0], wrote


def _scope_pages(vault: Path, folder: str) -> list[str]:
    """Vault-relative paths of the content pages of one scope: a project's ``folder`` (under ``1_Projects/``), else
    (``folder`` empty) every page outside ``1_Projects/<folder>/`` (the person's profile, preferences, wiki and
    legacy project pages)."""
    out = []
    for path in content_pages(vault):
        rel = path.relative_to(vault).as_posix()
        if rel.count("/") == 0:
            continue  # index.md, log.md, schema.md: not pages of claims
        in_folder = rel.startswith("1_Projects/") and rel.count("/") >= 2
        if (folder and rel.startswith(f"1_Projects/{folder}/")) or (not folder and not in_folder):
            out.append(rel)
    return out


MAX_ACROSS_CLAIMS = 5000  # current claims of a scope the across-pages pass compares with (a larger vault: skipped)


@dataclass(frozen=True)
class _Said:
    """A statement the across-pages pass compares: current claim ``text`` of page ``rel`` said on ``day``;
    ``resumed``: owed by an earlier, interrupted pass (its retirement may already be on disk)."""

    day: dt.date
    rel: str
    text: str
    resumed: bool = False


def _owed_by(batch: IngestBatch, rel: str, work: _PageWork) -> list[owed.Owed]:
    """The across-pages records of the statements ``work`` made current on page ``rel``."""
    return [owed.Owed(batch.scope or "", batch.folder, rel, day, claim.text, claim.source)
            for day, claim in [*work.added, *work.across]]


def _record_owed(batch: IngestBatch, statements: list[owed.Owed], recorded: list[owed.Owed],
                 warnings: list[str]) -> None:
    """Record ``statements`` in ``across_pages.jsonl`` before the page that makes them current is written (a pass
    interrupted later is finished by the next dream); on failure one warning, and the pass goes on from memory."""
    new = [s for s in statements if s not in recorded]
    if not new:
        return
    try:
        owe(state_dir_of(batch.vault_dir), new, timeout=PAGE_LOCK_TIMEOUT)
        recorded.extend(new)
    except (OSError, LockTimeout) as exc:
        warnings.append(f"{ACROSS_PAGES} not written ({getattr(exc, 'strerror', None) or exc}): if this run is "
                        "interrupted, its statements are not compared with the other pages")


def _retire_across_pages(batch: IngestBatch, works: dict[str, _PageWork], result: IngestResult,
                         recorded: list[owed.Owed] | None = None, compared: bool = False) -> list[str]:
    """Supersession across the pages of one scope: a statement this run made current on one page retires the one
    current claim it replaces on *another* page of the same scope (:func:`across_pages`). ``compared``: the fold
    already compared every statement in said order (:func:`_fold_in_said_order`) and wrote what they retired, so
    none is compared again (each is compared once). ``recorded``: this run's records in ``across_pages.jsonl``,
    dropped once the pass has written what it retired (a deadline or a crash before then leaves them for the next
    dream). Returns the sources of the claims retired."""
    said = [] if compared else [_Said(day, rel, claim.text) for rel, work in works.items() for day, claim in work.added]
    sources, _ = across_pages(batch.vault_dir, batch.scope or "", batch.folder, said, batch.deadline, result.warnings,
                              result.pages)
    if recorded:
        try:
            settle(state_dir_of(batch.vault_dir), recorded, timeout=PAGE_LOCK_TIMEOUT)
        except (OSError, LockTimeout) as exc:
            result.warnings.append(f"{ACROSS_PAGES} not cleared ({getattr(exc, 'strerror', None) or exc}): the next "
                                   "dream compares those statements again (retiring nothing twice)")
    return sources


def across_pages(vault: Path, scope: str, folder: str, said: list[_Said], deadline: float, warnings: list[str],
                 written: list[str]) -> tuple[list[str], int]:
    """Compare each statement of ``said`` with the current claims of the other pages of ``scope`` (``folder``: its
    folder under ``1_Projects/``, ``""`` for the person's) and retire the one claim it replaces there.

    Category routing puts one subject's statements on different pages ("I use light mode in every editor now",
    filed under ``2_Wiki``, retires the dark-mode part of a preference on ``3_Personal/Preferences.md``); the
    same-subject test does not care where a claim lives. Words only (no judge): across pages only what the words
    show replaces (:func:`_replaced_across`). A dream's own statements are compared while it folds, in said order
    (:func:`_fold_in_said_order`); this pass finishes the ones an interrupted dream left owed. Statements are
    taken in time order; only claims that became true before a statement compete. A
    statement that is no longer a current claim of its page (replaced since, edited by a person) compares nothing;
    a resumed one whose retirement is already on a page (:meth:`_PageWork.retired_by`) retires nothing again (the
    retired claim's source is returned again: the hand-off is idempotent, and the killed run may not have made it).

    Each changed page is written through :func:`.pages.write_page`: when a person edited it after the pass read it,
    the same retirements are replayed onto what is there now, each onto the very claim chosen (same text, same
    source: :meth:`_PageWork.retire_named`); a claim the person changed or removed is left as it is, with a
    warning, never replaced on another line. A page that no longer parses or was removed is left as it is, with a
    warning. Pages written are added to ``written``.

    Returns ``(sources of the claims retired, statements compared)``. Raises :class:`_PastDeadline` when
    ``deadline`` (monotonic) passes before the writes (nothing written then) and :class:`DreamFailed` when a page
    cannot be written (OSError)."""
    said = sorted(said, key=lambda s: (s.day, s.rel))
    if not said:
        return [], 0
    pages: dict[str, _PageWork] = {}
    for rel in _scope_pages(vault, folder):
        try:
            page = read_page(vault / rel)
        except (DreamFailed, OSError):
            continue
        if meta_scope(page.meta) != scope:
            continue
        pages[rel] = _PageWork(rel, page, _PAGE_CATEGORY.get(Path(rel).stem, "general"), fresh=False, scope=scope)
    if sum(len(w.current) for w in pages.values()) > MAX_ACROSS_CLAIMS:
        warnings.append(f"more than {MAX_ACROSS_CLAIMS} current claims: supersession across pages skipped")
        return [], 0
    ops: dict[str, list[tuple[supersede.Statement, dt.date, str, str | None]]] = {}
    again: list[str] = []  # sources of retirements an interrupted pass wrote but did not live to hand off
    for s in said:
        if time.monotonic() > deadline:
            raise _PastDeadline("rules engine ran past its timeout while comparing claims across pages")
        if s.rel not in pages or not pages[s.rel].holds(s.text):
            continue  # replaced since, or a person changed it: it is not what is said now
        content = base_text(s.text)
        statement = supersede.read(content)
        if s.resumed and (done := next((h for o, w in pages.items() if o != s.rel
                                        if (h := w.retired_by(content, statement, s.day)) is not None), None)):
            if done.source:  # an interrupted pass already wrote this retirement: hand its line off (once) again
                again.append(done.source)
            continue
        found = _replaced_across(content, statement, s.day, [(o, w) for o, w in pages.items() if o != s.rel])
        if found is None:
            continue
        other, j = found
        old = pages[other]._retire_for(j, statement, s.day)
        ops.setdefault(other, []).append((statement, s.day, claim_key(old.text), old.source))
    sources: list[str] = again
    for rel, todo in ops.items():
        done = _write_retired(vault, rel, pages[rel], todo, scope, warnings, written)
        if done is not None and done[1]:
            sources += done[0].replaced
    return sources, len(said)


def _routed_pages(vault: Path, zone: str, routed: list[str], folder: str = "") -> list[str]:
    """Pages of ``zone`` the engine routes to that exist now or are being written (as spelled on disk). A project's
    zone (``folder``: its folder, ``zone`` its path) is that folder alone: the routed pages and the pages in it."""
    if folder:
        here = [f"{zone}/{p.name}" for p in (vault / zone).glob("*.md") if p.is_file() and not p.name.startswith(".")]
        return sorted({r for r in [*routed, *here] if r.rsplit("/", 1)[0] == zone})
    known = [f"3_Personal/{t}.md" for t in PERSONAL_PAGES.values()] + [f"1_Projects/{t}.md" for t in PROJECT_PAGES.values()]
    known = [existing_case(vault, r) for r in known]
    return sorted({r for r in known + routed if r.startswith(zone + "/") and (r in routed or (vault / r).is_file())})


def _update_index(vault: Path, routed: list[str], result: IngestResult, scope: str = "") -> None:
    """Add an ``index.md`` line for each routed page it does not link yet (index.md is not a content page), through
    the vault's index writer (:func:`suzent_cli.vault.pages.link_in_index`: page lock, concurrent-edit check)."""
    entries = [(rel, f"project {scope}: claims consolidated from the daily logs" if scope
                else _DESCRIPTIONS.get(rel, "claims consolidated from the daily logs")) for rel in routed]
    try:
        link_in_index(vault, entries)
    except (OSError, LockTimeout) as exc:
        result.warnings.append(f"index.md not updated: {getattr(exc, 'strerror', None) or exc}")


@dataclass
class OwedFinished:
    """What :func:`finish_owed` did: ``compared`` statements it took from ``across_pages.jsonl`` (``left`` still
    owed: the deadline passed first), the log lines of the claims it retired (``superseded``, to hand off), the
    pages it wrote, and its warnings."""

    compared: int = 0
    left: int = 0
    superseded: list[str] | None = None
    pages: list[str] | None = None
    warnings: list[str] | None = None


def finish_owed(vault: Path, archive_dir: Path | None, deadline: float, timeout: float) -> OwedFinished:
    """Finish the across-pages comparisons an interrupted dream left in ``<vault>/.state/across_pages.jsonl``
    (:mod:`suzent_cli.vault.state.owed`): the statements of each scope are compared (:func:`across_pages`, as
    resumed statements: a retirement already on disk is not made twice) and dropped from the file once the pages
    are written. Bad lines are quarantined with one warning. Stops at ``deadline`` (monotonic), leaving the rest
    owed, with a warning. ``archive_dir``: the daily logs, where the retired claims' sources are read for the
    superseded hand-off. Raises :class:`DreamFailed` when a page cannot be written; LockTimeout/OSError when the
    file cannot be read."""
    done = OwedFinished(superseded=[], pages=[], warnings=[])
    state = state_dir_of(vault)
    if not (state / ACROSS_PAGES).is_file():
        return done
    todo = owed.read_owed(state, warnings=done.warnings, timeout=timeout)
    done.warnings[:] = [w for w in done.warnings if w]
    groups: dict[tuple[str, str], list[owed.Owed]] = {}
    for record in todo:
        groups.setdefault((record.scope, record.folder), []).append(record)
    for (scope, folder), records in groups.items():
        said = [_Said(r.day, r.page, r.claim, resumed=True) for r in records]
        try:
            sources, _ = across_pages(vault, scope, folder, said, deadline, done.warnings, done.pages)
        except _PastDeadline:
            done.left = sum(len(g) for g in groups.values()) - done.compared
            done.warnings.append(f"{ACROSS_PAGES}: the dream's timeout passed; {done.left} statement(s) still owe "
                                 "the comparison with the other pages (the next dream finishes them)")
            return done
        done.compared += len(records)
        for source in sources:
            raw = log_line(archive_dir, source)
            if raw and parse_fact_line(raw):
                done.superseded.append(raw)
        settle(state, records, timeout=timeout)
    return done

