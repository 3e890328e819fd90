"""``suzent forget``: the user's deletion. A tombstone for the exact (normalized) text, then an explicit reindex
of every file holding it; the markdown is never modified.

* ``forget TEXT`` matches rows whose whole text equals ``TEXT`` after normalisation (case and spacing aside):
  daily-log facts, and whole vault/core chunks. ``forget --id ROW_ID`` looks the row up in the index and
  forgets its text. Every copy of the text goes, in every file, since tombstones are keyed by text.
* What stays: the daily logs (append-only history) and the vault pages — a page that still *mentions* the text
  inside a longer chunk is named in a warning, because only editing that page removes it there.
* Traces go too: recall-log snippets holding the text are dropped, and old index versions are cleaned up at once.
* It stays gone: every later ``index`` pass, ``--full`` included, applies the tombstone. The same words captured
  again stay hidden; different words are a new fact (see :mod:`suzent_cli.reconcile`).
* Crash between the tombstone and the reindex: the tombstone changed the set, so the next ``index`` pass sweeps
  every file and the rows go then; re-running ``forget`` does the same at once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import asdict, dataclass, field

from . import exit_codes
from .config import Settings
from .errors import InputInvalid, SuzentError
from .state import FORGET, append_tombstones, purge_recall_log, read_forgotten
from .textnorm import normalize


class NothingToForget(SuzentError):
    """No row of any tier matches the text or id (bad input: exit 2)."""

    exit_code = exit_codes.BAD_INPUT


@dataclass
class Candidate:
    """A row close to a text ``forget`` did not find exactly: ``score`` 0..100 (rapidfuzz token-set ratio of the
    normalized texts), ``id`` the index row id it has (or will have once indexed), ``source`` ``label:filename``,
    ``where`` ``line N`` (a log fact) or ``chunk N``, ``copies`` how many rows hold this same text."""

    content: str
    id: str
    source: str
    path: str
    where: str
    score: int
    copies: int = 1


class NoExactMatch(NothingToForget):
    """``forget TEXT`` matched no whole fact or chunk; nothing was recorded (exit 1). ``closest`` lists the nearest
    rows, best first (empty when nothing is close), for the person to pick one by ``--id`` or its exact text."""

    exit_code = exit_codes.FAILED

    def __init__(self, message: str, text: str, closest: list[Candidate], mentions: list[str]):
        super().__init__(message)
        self.text, self.closest, self.mentions = text, closest, mentions

    def to_json(self) -> dict:
        return {"matched": False, "text": self.text, "error": str(self), "mentions": self.mentions,
                "closest": [asdict(c) for c in self.closest]}


@dataclass
class Match:
    """A row-to-be (one fact or chunk) holding the text: ``source`` is ``label:filename``, ``where`` a line or chunk."""

    source: str
    path: str
    where: str
    content: str


@dataclass
class ForgetPlan:
    """What ``forget`` would do: the tombstone ``key``, the rows that would disappear and pages still mentioning it."""

    text: str
    key: str
    matches: list[Match] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    already_tombstoned: bool = False

    @property
    def files(self) -> list[str]:
        return sorted({m.path for m in self.matches})


@dataclass
class ForgetReport:
    plan: ForgetPlan
    dry_run: bool = False
    tombstone_added: bool = False
    files_reindexed: int = 0
    rows_indexed: int = 0
    rows_removed: int = 0
    rows_reembedded: int = 0
    recall_log_purged: int = 0
    optimized: dict | None = None
    index_built: bool = True
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        out = asdict(self)
        out["plan"]["files"] = self.plan.files
        return out


def text_of_row(settings: Settings, row_id: str) -> str:
    """The content of index row ``row_id``. Raises :class:`NothingToForget` for an unknown id, and
    :class:`InputInvalid` for a legacy row (no source file: no tombstone and reindex can retire it)."""
    from .index.store import Store  # noqa: PLC0415

    rows = Store.open_existing(settings.paths.index_dir).rows_by_id([row_id])
    if not rows:
        raise NothingToForget(f"no row with id {row_id!r} in the index")
    if rows[0].get("source") is None:
        raise InputInvalid(f"row {row_id} is a legacy row with no source file; a tombstone cannot retire it "
                           "(export it with retire-legacy first)")
    return rows[0]["content"]


def as_fact_text(text: str) -> str:
    """The fact text of ``text``: a log line as capture printed it (``- [category] text `tags```, with or
    without the leading dash) is reduced to its text, so it can be pasted as is."""
    from .archive import parse_fact_line  # noqa: PLC0415

    stripped = text.strip()
    for candidate in (stripped, f"- {stripped}"):
        if candidate.startswith("- ["):
            parsed = parse_fact_line(candidate)
            if parsed:
                return parsed[1]
    return text


def plan_forget(settings: Settings, text: str) -> ForgetPlan:
    """Find every fact and chunk whose normalized text equals ``text``'s, by reading the markdown tiers the index
    is derived from (so the plan is right even for an index that is behind). Raises :class:`InputInvalid` for
    empty text and :class:`NoExactMatch` (with the closest rows) when nothing matches anywhere."""
    from .index.sources import discover, documents  # noqa: PLC0415 - no lancedb: sources is plain markdown

    text = as_fact_text(text)
    key = normalize(text)
    if not key:
        raise InputInvalid("forget needs a non-empty TEXT or --id ROW_ID")
    forgotten = read_forgotten(settings.paths.state_dir, torn_ok=True)  # a torn line: this forget repairs it
    plan = ForgetPlan(text=text, key=key, already_tombstoned=key in forgotten)
    for source in discover(settings.paths):
        try:
            docs, _ = documents(source, frozenset(), 0)
        except OSError:
            continue
        hits = [d for d in docs if normalize(d.content) == key]
        for d in hits:
            where = f"line {d.locator}" if source.label == "archive" else f"chunk {d.locator}"
            plan.matches.append(Match(source.key, str(source.path), where, d.content))
        if not hits and source.label != "archive" and any(key in normalize(d.content) for d in docs):
            plan.mentions.append(source.filename)
    if not plan.matches and not plan.already_tombstoned:
        raise no_exact_match(settings, text, key, plan.mentions)
    return plan


def no_exact_match(settings: Settings, text: str, key: str, mentions: list[str]) -> NoExactMatch:
    """The error for a ``text`` (normalized ``key``) that no row holds whole: it carries the :data:`CLOSEST` rows
    nearest to it (score at least :data:`CLOSE_ENOUGH`), one per distinct text, best first."""
    hint = f"; it is mentioned inside {', '.join(mentions[:3])} (edit that page)" if mentions else ""
    closest = closest_rows(settings, key)
    if closest:
        listed = "closest row is" if len(closest) == 1 else f"{len(closest)} closest rows are"
        said = (f"no fact or chunk is exactly {text!r}{hint}; nothing recorded: the {listed} listed, forget one "
                "by --id ROW_ID or by its exact text")
    else:
        said = (f"nothing in the daily logs, vault or core files is exactly or nearly {text!r}{hint}; nothing "
                "recorded (forget matches a whole fact, case and spacing aside)")
    return NoExactMatch(said, text, closest, mentions)


CLOSEST, CLOSE_ENOUGH = 5, 60


def closest_rows(settings: Settings, key: str, *, limit: int = CLOSEST, cutoff: int = CLOSE_ENOUGH) -> list[Candidate]:
    """The rows (facts and chunks the indexer derives from the markdown tiers now, tombstoned ones left out) whose
    normalized text is nearest to ``key``: rapidfuzz's token-set ratio, at least ``cutoff`` of 100, best first,
    one per distinct text (``copies`` counts the rest), at most ``limit``. Ids are computed as the indexer does,
    so they are the index's row ids once it is up to date. Raises :class:`TombstonesUnreadable`."""
    from rapidfuzz import fuzz, process  # noqa: PLC0415

    from .config import context_window_of  # noqa: PLC0415
    from .index.sources import discover, documents  # noqa: PLC0415
    from .state import read_tombstones  # noqa: PLC0415

    try:
        window = context_window_of(settings)
    except SuzentError:
        window = 0
    tombstones = read_tombstones(settings.paths.state_dir, torn_ok=True)
    rows: dict[str, list[Candidate]] = {}
    for source in discover(settings.paths):
        try:
            docs, _ = documents(source, tombstones, window)
        except OSError:
            continue
        for d in docs:
            where = f"line {d.locator}" if source.label == "archive" else f"chunk {d.locator}"
            rows.setdefault(normalize(d.content), []).append(
                Candidate(d.content, d.id, source.key, str(source.path), where, 0))
    texts = list(rows)
    found = process.extract(key, texts, scorer=fuzz.token_set_ratio, limit=None, score_cutoff=cutoff)
    out = []
    for _, score, i in sorted(found, key=lambda hit: (-hit[1], hit[2]))[:limit]:
        first = rows[texts[i]][0]
        out.append(dataclasses.replace(first, score=round(score), copies=len(rows[texts[i]])))
    return out


def forget(settings: Settings, plan: ForgetPlan, *, dry_run: bool = False, embedder=None) -> ForgetReport:
    """Carry out ``plan``: tombstone its key (unless ``dry_run``), then reindex exactly the files that hold it.
    Raises LockTimeout and the indexer's errors (the tombstone stays; the next index pass applies it)."""
    from pathlib import Path  # noqa: PLC0415

    from .index.api import optimize_index, reindex_files  # noqa: PLC0415
    from .index.store import table_exists  # noqa: PLC0415

    report = ForgetReport(plan=plan, dry_run=dry_run, index_built=table_exists(settings.paths.index_dir))
    if plan.mentions:
        report.warnings.append("still mentioned inside longer text on " + ", ".join(plan.mentions)
                               + ": tombstones remove whole facts and chunks only; edit the page to remove it there")
    if report.index_built:
        report.rows_indexed = _rows_holding(settings, plan.key)
    if any(m.source.startswith("notebook:") for m in plan.matches):
        report.warnings.append("a vault row is a whole paragraph chunk of its page: forgetting it hides that whole "
                               "chunk from recall; editing the page is usually what you want")
    if dry_run:
        return report
    report.tombstone_added = bool(append_tombstones(settings.paths.state_dir, [plan.key], reason=FORGET,
                                                     timeout=settings.lock_timeout))
    report.recall_log_purged = purge_recall_log(settings.paths.state_dir, plan.key, timeout=settings.lock_timeout)
    if report.index_built and plan.files:
        result = reindex_files(settings, [Path(p) for p in plan.files], embedder=embedder)
        report.files_reindexed, report.rows_removed = result.files_updated, result.rows_removed
        report.rows_reembedded = result.rows_added  # facts that had the forgotten one as context
        report.warnings += [f"{key}: {message}" for key, message in result.errors]
        # Old table versions still hold the text: drop them now (a query in flight may fail once; privacy wins).
        report.optimized = optimize_index(settings, dt.timedelta(0))
    return report


def _rows_holding(settings: Settings, key: str) -> int:
    """How many index rows hold exactly ``key`` now (0 when the index cannot be read)."""
    from .index.store import Store  # noqa: PLC0415

    try:
        store = Store.open_existing(settings.paths.index_dir)
        contents = store.table.search().select(["content"]).limit(None).to_arrow().column("content").to_pylist()
        return sum(1 for c in contents if c and normalize(c) == key)
    except Exception:  # noqa: BLE001 - the count is informational
        return 0
