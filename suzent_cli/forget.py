"""``suzent forget``: the user's deletion. A forgotten text disappears everywhere a person could see it again.

* ``forget TEXT`` matches rows whose fact text equals ``TEXT`` (case, spacing and a trailing full stop aside):
  daily-log facts, vault claims (their markers aside) and lines of core files. ``forget --id ROW_ID`` looks the
  row up in the index and forgets its fact text (a vault claim row: the claim without its markers).
* What goes (:mod:`suzent_cli.vault.forgotten` decides what "holds" the text): every index row of it — log, vault, core
  files — and every line of a vault or core-file row that holds it (the rest of the row stays searchable); every
  vault claim that is the text or contains it verbatim (a text of 3+ words), from ``## Claims`` and
  ``## Previously`` (a current claim quoting it only as ``; previously: <text>`` keeps its current value); every line of
  MEMORY.md's generated zone that holds it; every recall-log snippet that holds it; old index versions.
* What stays: the daily logs keep the line (append-only history; hidden from recall). MEMORY.md's manual zone is
  the person's: a line there that holds the text is named, never edited (recall hides it). Prose on a vault page
  that mentions the text is named too (hidden from recall; only the person edits prose).
* Order: under the dream's consolidation lock (``.state/.dream.lock``, waited for at most ``lock_timeout``; busy →
  :class:`DreamBusy`, exit 3, nothing written) the tombstone is written, then the vault and the generated zone are
  scrubbed and the recall log purged; then the files that held it are reindexed. A running dream therefore cannot
  fold the text back, and the dream scrubs the vault again after every engine pass.
* It stays gone: the dream never folds a fact or restatement holding it (log facts, late lines, confirmations);
  promote never writes it; every later ``index`` pass (``--full`` too) and reconcile apply the tombstone.
* **A later capture of the same words** (case, spacing and a trailing full stop aside) is hidden again: the
  person forgot those words, and a restatement is not a reason to remember them. A later fact that *contains*
  the text in longer words is a new fact: it is recalled from its daily log, but never folded into the vault or
  MEMORY.md, which never hold a forgotten text.
* Crash after the tombstone: re-running ``forget`` finishes the scrub and the reindex (each step is idempotent);
  meanwhile every reader (index, dream, promote) already hides the text.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import asdict, dataclass, field

from suzent_cli import errors
from suzent_cli.config import Settings
from suzent_cli.errors import DreamBusy, InputInvalid, SuzentError
from suzent_cli.text import is_utf8, normalize
from suzent_cli.vault.forgotten import Forgotten, fact_key, held_claims, line_text, scrub_vault
from suzent_cli.vault.state import FORGET, append_tombstones, count_recall_log, purge_recall_log, read_forgotten


class NothingToForget(SuzentError):
    """No row of any tier matches the text or id (bad input: exit 2)."""

    exit_code = errors.BAD_INPUT


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

    exit_code = errors.FAILED

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
    """What ``forget`` would do: the tombstone ``key``; ``matches``, the rows whose fact text is exactly it;
    ``mentions``, the vault/core files with a longer line holding it that stays there after the scrub (hidden from
    recall, text kept); ``claims``, the vault claims removed (``{"page", "section", "line", "now": None}``) or
    rewritten without their ``; previously: …`` tail (``now``: the new line); ``memory_generated``/``memory_manual``, the
    ``{"line", "text"}`` of MEMORY.md lines holding it (removed / named only); ``recall_log``, the recall-log
    entries dropped; ``problems``, pages that could not be checked."""

    text: str
    key: str
    matches: list[Match] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    mention_files: list[str] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)
    memory_generated: list[dict] = field(default_factory=list)
    memory_manual: list[dict] = field(default_factory=list)
    recall_log: int = 0
    problems: list[str] = field(default_factory=list)
    already_tombstoned: bool = False

    @property
    def files(self) -> list[str]:
        """Every file whose index rows change: exact matches and longer mentions."""
        return sorted({m.path for m in self.matches} | set(self.mention_files))


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
    claims_removed: int = 0
    claims_rewritten: int = 0
    memory_md: str | None = None
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
    from suzent_cli.index.store import ReadStore

    rows = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home).rows_by_id([row_id])
    if not rows:
        raise NothingToForget(f"no row with id {row_id!r} in the index")
    if rows[0].get("source") is None:
        raise InputInvalid(f"row {row_id} is a legacy row with no source file; a tombstone cannot retire it "
                           "(export it with retire-legacy first)")
    return rows[0]["content"]


def as_fact_text(text: str) -> str:
    """The fact text of ``text``: a log line as capture printed it (``- [category] text `tags```, with or
    without the leading dash) is reduced to its text, and a vault claim line or a recall row of one
    (``- text (confirmed Nx, last D) · source: F:L``) or a stamped MEMORY.md line to the claim's text, so
    either can be pasted as is (or forgotten by ``--id``)."""
    from suzent_cli.archive import parse_fact_line
    from suzent_cli.vault.pages import parse_claim

    stripped = text.strip()
    for candidate in (stripped, f"- {stripped}"):
        if candidate.startswith("- ["):
            parsed = parse_fact_line(candidate)
            if parsed:
                return parsed[1]
    if "\n" not in stripped and stripped[:2] in ("- ", "* ", "+ "):
        claim = parse_claim(stripped)
        if claim is not None and (claim.count is not None or claim.source or claim.until or "<!--" in stripped):
            return re.sub(r"\s*<!--.*?-->\s*", " ", claim.text).strip() or text
    return text


def plan_forget(settings: Settings, text: str) -> ForgetPlan:
    """Find every place the text would disappear from, by reading the markdown tiers the index is derived from
    (so the plan is right even for an index that is behind), the vault, MEMORY.md and the recall log; see the
    module doc. Read-only. Raises :class:`InputInvalid` for empty text and :class:`NoExactMatch` (with the
    closest rows) when no row anywhere is exactly the text."""
    from suzent_cli.index.sources import discover, documents  # no lancedb: sources is plain markdown
    from suzent_cli.vault.memory_md import forgotten_lines

    text = as_fact_text(text)
    key = normalize(text)
    if not key:
        raise InputInvalid("forget needs a non-empty TEXT or --id ROW_ID")
    if not is_utf8(text):  # bytes that are not UTF-8 on the command line: no stored fact holds one
        raise InputInvalid("the text is not valid UTF-8")
    paths = settings.paths
    forgotten = read_forgotten(paths.state_dir, torn_ok=True)  # a torn line: this forget repairs it
    plan = ForgetPlan(text=text, key=key, already_tombstoned=key in forgotten)
    only = Forgotten([key])
    fkey = fact_key(key)
    claims, plan.problems = held_claims(paths.vault_dir, only)
    scrubbed: dict[str, set[str]] = {}  # the claim lines scrub_vault removes or rewrites: not left on the page
    for c in claims:
        scrubbed.setdefault(str(paths.vault_dir / c.page), set()).add(c.line.strip())
    for source in discover(paths):
        try:
            docs, _ = documents(source, frozenset(), 0)
        except (OSError, UnicodeError):
            continue
        exact, longer = [], False
        for d in docs:
            if source.label == "archive":
                hit = only.same(d.content)
            else:
                lines = d.content.split("\n")
                hit = normalize(d.content) == key or any(line_text(ln) == fkey for ln in lines)
                gone = scrubbed.get(str(source.path), set())
                longer = longer or (not hit and any(only.covers_line(ln) for ln in lines
                                                    if ln.strip() and ln.strip() not in gone))
            if hit:
                exact.append(d)
        for d in exact:
            where = f"line {d.locator}" if source.label == "archive" else f"chunk {d.locator}"
            plan.matches.append(Match(source.key, str(source.path), where, d.content))
        if longer:
            plan.mentions.append(source.filename)
            plan.mention_files.append(str(source.path))
    plan.claims = [{"page": c.page, "section": c.section, "line": c.line, "now": c.now} for c in claims]
    generated, manual = forgotten_lines(settings, only)
    plan.memory_generated = [{"line": n, "text": t} for n, t in generated]
    plan.memory_manual = [{"line": n, "text": t} for n, t in manual]
    plan.recall_log = _recall_log_entries(paths.state_dir, key)
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
    from rapidfuzz import fuzz, process

    from suzent_cli.config import context_window_of
    from suzent_cli.index.sources import discover, documents
    from suzent_cli.vault.state import read_tombstones

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
    """Carry out ``plan`` (module doc): under the consolidation lock, tombstone its key, scrub the vault and
    MEMORY.md's generated zone and purge the recall log; then reindex every file whose rows change and drop old
    index versions. ``dry_run``: only count what is indexed. Raises :class:`DreamBusy` (a dream held the lock
    for ``lock_timeout`` seconds; nothing written), LockTimeout, OSError, and the indexer's errors (the tombstone
    stays; the next index pass applies it)."""
    from pathlib import Path

    from suzent_cli.index.api import optimize_index, reindex_files
    from suzent_cli.index.store import table_exists
    from suzent_cli.vault.memory_md import memory_path, scrub_generated

    paths = settings.paths
    report = ForgetReport(plan=plan, dry_run=dry_run, index_built=table_exists(paths.index_dir))
    if plan.mentions:
        report.warnings.append("still written inside longer text on " + ", ".join(plan.mentions)
                               + ": hidden from recall; edit the page to remove it there")
    if plan.memory_manual:
        report.warnings.append("MEMORY.md below the marker is yours and was not edited: line "
                               + ", ".join(str(m["line"]) for m in plan.memory_manual)
                               + " holds it (hidden from recall); remove it there yourself")
    report.warnings += plan.problems
    if report.index_built:
        report.rows_indexed = _rows_holding(settings, plan.key)
    if dry_run:
        return report
    with _consolidation_lock(settings):
        report.tombstone_added = bool(append_tombstones(paths.state_dir, [plan.key], reason=FORGET,
                                                         timeout=settings.lock_timeout))
        forgotten = Forgotten.from_state(paths.state_dir)
        removed, problems = scrub_vault(paths.vault_dir, forgotten)
        report.claims_removed = sum(c.now is None for c in removed)
        report.claims_rewritten = len(removed) - report.claims_removed
        report.warnings += [p for p in problems if p not in plan.problems]
        report.memory_md = scrub_generated(settings, forgotten)
        report.recall_log_purged = purge_recall_log(paths.state_dir, plan.key, timeout=settings.lock_timeout)
    files = set(plan.files) | {str(paths.vault_dir / c.page) for c in removed}
    if plan.memory_manual or report.memory_md == "written":
        files.add(str(memory_path(settings)))
    if report.index_built and files:
        result = reindex_files(settings, [Path(p) for p in sorted(files)], embedder=embedder)
        report.files_reindexed, report.rows_removed = result.files_updated, result.rows_removed
        report.rows_reembedded = result.rows_added  # facts that had the forgotten one as context
        report.warnings += [f"{key}: {message}" for key, message in result.errors]
        # Old table versions still hold the text: drop them now (a query in flight may fail once; privacy wins).
        report.optimized = optimize_index(settings, dt.timedelta(0))
    return report


def _consolidation_lock(settings: Settings):
    """The dream's lock (``.state/.dream.lock``), waited for at most ``lock_timeout`` seconds; raises
    :class:`DreamBusy` when a dream or lint keeps holding it."""
    from contextlib import contextmanager

    from filelock import Timeout

    from suzent_cli.files import file_lock
    from suzent_cli.vault.state import DREAM_LOCK

    @contextmanager
    def held():
        paths = settings.paths
        paths.state_dir.mkdir(parents=True, exist_ok=True)
        lock = file_lock(paths.state_dir / DREAM_LOCK, timeout=settings.lock_timeout)
        try:
            lock.acquire()
        except Timeout:
            raise DreamBusy(f"a dream or lint is consolidating (it holds {paths.state_dir / DREAM_LOCK}); nothing "
                            "was forgotten: run forget again when it finishes") from None
        try:
            yield
        finally:
            lock.release()
    return held()


def _recall_log_entries(state_dir, key: str) -> int:
    """How many ``recall_log.jsonl`` entries hold ``key`` (what :func:`purge_recall_log` would drop)."""
    return count_recall_log(state_dir, key)


def _rows_holding(settings: Settings, key: str) -> int:
    """How many index rows are exactly ``key`` now — a log fact in the same words, a chunk, or a vault/core row
    with a line whose text it is (0 when the index cannot be read)."""
    from suzent_cli.index.store import ReadStore

    fkey = fact_key(key)
    try:
        store = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home)
        table = store.scan(["content", "source"])
    except Exception:  # noqa: BLE001 - the count is informational
        return 0
    count = 0
    for content, source in zip(table.column("content").to_pylist(), table.column("source").to_pylist(), strict=False):
        if not content:
            continue
        if str(source or "").startswith("archive:"):
            count += fact_key(content) == fkey
        else:
            count += normalize(content) == key or any(line_text(ln) == fkey for ln in content.split("\n"))
    return count
