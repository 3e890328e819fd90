"""The dream runner: one gated tick under the consolidation lock — ingest a batch, lint, or stay idle.

The runner owns everything an engine must not touch: the watermark (``log.md``, :mod:`.ledger`), the retry
counters and last results (``.state/dream_state.json``, :mod:`.state`), the superseded hand-off
(``.state/superseded.txt``) and the follow-up steps after a productive run.

A run, step by step, and what a crash at each step leaves:

1. Take ``.state/.dream.lock`` (non-blocking: a second dream reports *busy*). ``capture`` never takes it.
2. Snapshot the content pages (sha256) into ``dream_state.in_flight`` and save — a killed run leaves it behind
   and the next run measures against it, so pages the killed run wrote still count.
3. The engine folds the batch into pages, one scope at a time (:func:`.scopes.ingest_by_scope`: the person's
   facts, then each project's, each part's writes checked to stay in its scope). Crash: watermark unmoved; the
   re-run converges (engines are idempotent). Before it, inside the attempt (so the pages it writes count), the
   across-pages comparisons an interrupted run left in ``.state/across_pages.jsonl`` are finished
   (:meth:`DreamRunner._finish_owed`); an idle tick, a lint or a skipped batch finishes them too, owing the
   follow-ups when a page changed.
4. Productive (engine finished cleanly AND a content page changed): append the superseded lines (no duplicates),
   drop the confirmations and late-line records the run was shown, record the follow-ups as
   ``dream_state.followups_pending``, then the ``ingest … watermark=T`` entry, then clear ``in_flight``. Crash
   before the entry: replayed as in 3. Not productive: ``failures[T] += 1``; at ``max_retries`` the next attempt
   skips the batch with a ``skipped … watermark=T`` entry, so a wedged batch cannot strand the watermark. An
   engine that could not be reached (:class:`~suzent_cli.errors.EngineUnreachable`: no network, 429, 5xx) is not a
   failed attempt: the runner records ``engine_backoff`` (retry time doubling per attempt, capped), keeps
   ``in_flight`` for the retry, and the gate waits (:func:`_back_off`).
5. Follow-up steps (:data:`FOLLOW_UPS`: reconcile — retire superseded, sweep, optimize; then promote — MEMORY.md's
   generated zone from the personal pages), each best-effort: a failure is reported and the step stays pending.
   Each step is dropped from ``followups_pending`` as it completes; every later tick (or lint) first finishes what
   a killed or failed run left pending, so a kill after the entry cannot leave superseded lines undrained, vault
   rows unindexed or MEMORY.md stale. ``suzent run`` defers the steps to its own stages (:meth:`DreamRunner.follow_up`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import Timeout

from suzent_cli import errors
from suzent_cli.archive import APPEND_LOCK, parse_log
from suzent_cli.config import DreamConfig, Settings, canonical_engine
from suzent_cli.dream.engine import BatchFact, Engine, IngestBatch
from suzent_cli.dream.gate import (
    Decision,
    backoff_delay,
    count_fact_lines,
    count_late_facts,
    decide,
    late_days,
    oldest_pending,
    pending_logs,
)
from suzent_cli.dream.revisit import revisit_queue
from suzent_cli.dream.scopes import ingest_by_scope
from suzent_cli.errors import EngineUnreachable, SuzentError, describe
from suzent_cli.files import atomic_write, file_lock, locked, read_text
from suzent_cli.guard import planted
from suzent_cli.vault import bootstrap, content_pages, ledger, page_hashes, skipped_warning
from suzent_cli.vault import state as state_names
from suzent_cli.vault.dream_state import DreamState, load_state, peek_state, save_state
from suzent_cli.vault.forgotten import Forgotten, scrub_vault
from suzent_cli.vault.state import (
    append_superseded,
    read_confirmations,
    read_late_lines,
    truncate_confirmations,
    truncate_late_lines,
)

# The consolidation lock and its holder note ({"pid", "since"}, for `suzent status`): names from the catalogue.
DREAM_LOCK, HOLDER = state_names.DREAM_LOCK, state_names.DREAM_HOLDER

# Exit codes of `suzent dream` / `suzent lint` (documented in their --help; the table is suzent_cli.errors.EXIT_CODES).
EXIT_RAN, EXIT_IDLE, EXIT_FAILED, EXIT_BUSY = errors.OK, errors.IDLE, errors.RUN_FAILED, errors.BUSY


@dataclass
class StepResult:
    """One step's outcome, as data (the CLI words it, :mod:`suzent_cli.cli.render`): a follow-up after a productive
    run or a lint that changed pages, or one stage of a ``suzent run`` pass (:mod:`suzent_cli.run`).

    ``detail`` is JSON-ready (a skipped step says why in ``detail["skipped"]``); ``error`` is one line when ``ok`` is
    False. A pass's stage also has ``outcome`` (a short word: ``built``, ``ingested``, ``skipped``, ``failed``, …),
    ``seconds``, and ``source``: the result it was made from (a :class:`TickResult`, an exception), never serialized.
    """

    name: str
    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    outcome: str = ""
    seconds: float = 0.0
    source: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """A follow-up as a tick's JSON keeps it: ``{name, ok, detail, error}``."""
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "error": self.error}

    def row_json(self) -> dict[str, Any]:
        """A pass's stage: ``{name, outcome, ok, seconds (rounded to ms), detail, error}``."""
        return {"name": self.name, "outcome": self.outcome, "ok": self.ok, "seconds": round(self.seconds, 3),
                "detail": self.detail, "error": self.error}


@dataclass
class TickResult:
    """What one tick did. ``outcome`` is one of ``idle``, ``busy``, ``ingested``, ``unproductive``, ``skipped``,
    ``linted``, ``lint_failed``."""

    outcome: str
    decision: Decision | None = None
    engine: str | None = None
    watermark_before: dt.date | None = None
    watermark_after: dt.date | None = None
    batch: tuple[dt.date, ...] = ()
    facts: int = 0
    pages_changed: list[str] = field(default_factory=list)
    superseded: int = 0
    confirmations: int = 0
    failures: int = 0
    summary: str = ""
    error: str | None = None
    lint: dict[str, Any] | None = None
    steps: list[StepResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    retry_after: str | None = None  # the engine was unreachable: not a counted attempt, next try after this instant

    @property
    def exit_code(self) -> int:
        return {"idle": EXIT_IDLE, "busy": EXIT_BUSY, "unproductive": EXIT_FAILED,
                "lint_failed": EXIT_FAILED}.get(self.outcome, EXIT_RAN)

    def to_json(self) -> dict[str, Any]:
        iso = lambda d: d.isoformat() if d else None  # noqa: E731
        return {
            "outcome": self.outcome, "exit_code": self.exit_code,
            "decision": self.decision.to_json() if self.decision else None, "engine": self.engine,
            "watermark_before": iso(self.watermark_before), "watermark_after": iso(self.watermark_after),
            "batch": [d.isoformat() for d in self.batch], "facts": self.facts, "pages_changed": self.pages_changed,
            "superseded": self.superseded, "confirmations": self.confirmations, "failures": self.failures,
            "summary": self.summary, "error": self.error,
            "lint": self.lint, "steps": [s.to_json() for s in self.steps], "warnings": self.warnings,
            "seconds": round(self.seconds, 3), "retry_after": self.retry_after,
        }

    def record(self) -> dict[str, Any]:
        """The compact form kept in ``dream_state.json`` as the phase's last result."""
        out = {k: v for k, v in self.to_json().items() if k in (
            "outcome", "engine", "watermark_after", "batch", "facts", "pages_changed", "superseded", "confirmations",
            "failures",
            "summary", "error", "lint", "seconds")}
        out["pages_changed"] = len(self.pages_changed)
        return out


EngineFactory = Callable[[str], Engine]


def refresh_index(settings: Settings, result: TickResult, embedder=None) -> StepResult:
    """Follow-up: an indexer pass so changed vault pages become searchable. Skipped when no index was built yet."""
    from suzent_cli.errors import IndexIncompatible
    from suzent_cli.index.api import run_index  # lancedb and the model only when needed
    from suzent_cli.index.store import table_exists

    if not table_exists(settings.paths.index_dir):
        return StepResult("index", True, {"skipped": "no index yet (run `suzent index`)"})
    try:
        report = run_index(settings, embedder=embedder)
    except IndexIncompatible as exc:
        return StepResult("index", True, {"skipped": f"the index is not suzent's ({exc})"})
    return StepResult("index", not report.errors, report.as_dict(),
                      None if not report.errors else f"{report.errors} files failed to index")


def reconcile_step(settings: Settings, result: TickResult, embedder=None) -> StepResult:
    """Follow-up: :func:`suzent_cli.reconcile.reconcile` — retire the superseded lines, sweep, optimize."""
    from suzent_cli.errors import IndexIncompatible
    from suzent_cli.reconcile import reconcile

    try:
        report = reconcile(settings, embedder=embedder)
    except IndexIncompatible as exc:  # another tool's table (mid retire-legacy): the hand-off waits for suzent's
        return StepResult("reconcile", True, {"skipped": f"the index is not suzent's ({exc}); superseded lines "
                                                         "stay queued until it is"})
    return StepResult("reconcile", not report.errors, report.to_json(), "; ".join(report.errors) or None)


def promote_step(settings: Settings, result: TickResult, embedder=None) -> StepResult:
    """Follow-up: :func:`suzent_cli.promote.promote` (engine ``auto``) — MEMORY.md's generated zone from the
    personal pages. A manual MEMORY.md (left untouched) and nothing to promote are both ok."""
    from suzent_cli.promote import promote

    report = promote(settings)
    detail = report.to_json()
    if report.status == "manual":
        detail["note"] = "MEMORY.md is manual (no generated zone we wrote): left untouched"
    return StepResult("promote", True, detail)


# Ordered follow-ups after a productive ingest: reconcile, then the MEMORY.md promotion. Each gets the settings, the
# tick's result and the embedder, and must not raise for expected failures (the runner turns any exception into a
# failed StepResult).
FOLLOW_UPS: list[tuple[str, Callable[..., StepResult]]] = [("reconcile", reconcile_step), ("promote", promote_step)]


class DreamRunner:
    """Runs ticks for one :class:`Settings`. ``engine_factory(name)`` builds the engine (``rules``/``claude``);
    ``embedder`` is passed to follow-ups (None: the configured model, loaded only if something needs embedding).
    ``follow_ups``: the steps a productive ingest owes (default :data:`FOLLOW_UPS`; ``[]`` owes none);
    ``defer_follow_ups``: record them as pending but leave running them to the caller (:meth:`follow_up`)."""

    def __init__(self, settings: Settings, config: DreamConfig, *, engine_factory: EngineFactory | None = None,
                 engine: str | None = None, embedder=None, follow_ups: list | None = None,
                 defer_follow_ups: bool = False):
        self.settings, self.config = settings, config
        self.engine_name = canonical_engine(engine) or engine or config.engine_for(settings)
        self.engine_factory = engine_factory or default_engine_factory(settings, config)
        self.embedder = embedder
        self.follow_ups = FOLLOW_UPS if follow_ups is None else follow_ups
        self.defer_follow_ups = defer_follow_ups
        self.vault = settings.paths.vault_dir
        self.state_dir = settings.paths.state_dir
        self._shown = 0  # confirmations.jsonl lines the current batch showed the engine
        self._late_shown = 0  # late_lines.jsonl records the current batch folded
        self._logs_read: dict[str, int] = {}  # lines of each pending day's log the current batch read

    # --- public ---------------------------------------------------------------------------------------------
    def tick(self, *, force: bool = False) -> TickResult:
        """One gated tick (module doc). Never raises for an engine failure (that is an ``unproductive`` or
        ``lint_failed`` outcome); raises :class:`SuzentError`/OSError for broken state it cannot work around."""
        return self._locked(lambda state: self._tick(state, force))

    def lint_now(self) -> TickResult:
        """A lint pass now, whatever the gate says (``suzent lint``); same lock and log entry as the gate's. The
        across-pages comparisons an interrupted dream owes are finished first (:meth:`_finish_owed`)."""
        def body(state: DreamState) -> TickResult:
            owed = TickResult("linted")
            self._finish_owed(state, owed, time.monotonic() + self.config.timeout_seconds, follow_up=True)
            result = self._lint(state, None)
            result.warnings[:0] = owed.warnings
            result.steps[:0] = owed.steps
            return result

        return self._locked(body)

    def follow_up(self, name: str) -> StepResult:
        """Run the pending follow-up ``name`` now, under the consolidation lock, and drop it from
        ``followups_pending`` when it succeeds (for ``suzent run``, which shows each step as a stage). Skipped
        (ok) when it is no longer pending or another dream holds the lock (that dream finishes it first)."""
        with self._holding() as held:
            if not held:
                return StepResult(name, True, {"skipped": "another dream holds the consolidation lock; it finishes "
                                                          "this step first"})
            state = load_state(self.state_dir, self.settings.clock)
            if name not in ((state.followups_pending or {}).get("steps") or []):
                return StepResult(name, True, {"skipped": "not pending (already done)"})
            return self._follow_ups(TickResult("ingested"), steps=[(name, self._step_named(name))], state=state)[0]

    def decision(self, *, force: bool = False, state: DreamState | None = None) -> Decision:
        """What a tick would do now (read-only; used by ``status`` and ``--json``)."""
        from suzent_cli.dreamer import may_dream  # stdlib only

        dreams, why = may_dream(self.settings.paths.home)
        if not dreams:  # a synced home: one machine dreams (docs/sync.md); this one gets its pages by suzent sync
            return Decision("idle", why)
        state = state or peek_state(self.state_dir, self.settings.clock)
        text = ledger.read_ledger(self.vault)
        mark = ledger.watermark(text)
        archive_dir = self.settings.paths.archive_dir
        pending = pending_logs(archive_dir, mark, self.settings.today)
        records = read_late_lines(self.state_dir, log_exists=self._log_exists)
        late = late_days(records, mark, self.settings.today, state.logs_read)
        backoff = state.engine_backoff if (state.engine_backoff or {}).get("engine") == self.engine_name else None
        retry_after = dt.datetime.fromisoformat(backoff["until"]) if backoff else None
        if retry_after is not None and retry_after.tzinfo is None:
            retry_after = retry_after.replace(tzinfo=dt.UTC)
        return decide(config=self.config, pending=[d for d, _ in pending],
                      pending_facts=count_fact_lines([p for _, p in pending]) + count_late_facts(archive_dir, late),
                      last_attempt=state.last_attempt, last_lint=ledger.last_lint(text),
                      last_lint_attempt=state.last_lint_attempt, now=self.settings.clock, force=force, late=late,
                      retry_after=retry_after, waiting_since=oldest_pending(
                          pending, records, {d: n for d, n in late.items() if count_late_facts(archive_dir, {d: n})}),
                      unreachable=(f"{self.engine_name} engine unreachable since {backoff['since']}: {backoff['error']}"
                                   if backoff else ""))

    # --- internals ------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _holding(self):
        """Take the consolidation lock without waiting; yields False (nothing held) when another process has it."""
        bootstrap(self.vault)
        lock = file_lock(self.state_dir / DREAM_LOCK, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            yield False
            return
        holder = self.state_dir / HOLDER
        try:
            try:
                atomic_write(holder, json.dumps({"pid": os.getpid(), "since": self.settings.clock.isoformat()}))
            except OSError:
                pass  # the holder note is informational (`suzent status`)
            yield True
        finally:
            with contextlib.suppress(OSError):
                holder.unlink()
            lock.release()

    def _locked(self, body: Callable[[DreamState], TickResult]) -> TickResult:
        started = time.monotonic()
        with self._holding() as held:
            if not held:
                return TickResult("busy", summary="another dream or lint holds the consolidation lock",
                                  seconds=time.monotonic() - started)
            state = load_state(self.state_dir, self.settings.clock)
            Forgotten.from_state(self.state_dir)  # an unreadable tombstone file refuses before any attempt is recorded
            queued = self._check_inputs()
            resumed = self._finish_pending(state)
            result = body(state)
            result.warnings[:0] = state.warnings + queued + resumed[1]
            result.steps[:0] = resumed[0]
        result.seconds = time.monotonic() - started
        return result

    def _finish_pending(self, state: DreamState) -> tuple[list[StepResult], list[str]]:
        """Run the follow-ups a killed (or failed) productive run left in ``followups_pending``, before anything
        else; returns ``(steps, warnings)``. When that run's ledger entry was written, its ``in_flight`` snapshot
        is spent and is dropped (a later run must not count that run's pages as its own work)."""
        pending = state.followups_pending
        if not pending:
            return [], []
        text = ledger.read_ledger(self.vault)
        at = min(int(pending.get("ledger_at") or 0), len(text))
        if (state.in_flight and state.in_flight.get("started") == pending.get("since") and pending.get("entry")
                and pending["entry"] in text[at:]):
            state.in_flight = None
            save_state(self.state_dir, state)
        names, mark = list(pending["steps"]), pending.get("watermark") or "?"
        steps = self._follow_ups(TickResult("ingested"), steps=[(n, self._step_named(n)) for n in names], state=state)
        failed = [st.name for st in steps if not st.ok]
        if failed:
            return steps, [f"follow-ups of the run that moved the watermark to {mark} still pending "
                           f"({', '.join(failed)} failed again); the next tick retries them"]
        return steps, [f"finished the follow-ups ({', '.join(names)}) of the run that moved the watermark to {mark}; "
                       "it did not complete them"]

    def _step_named(self, name: str) -> Callable[..., StepResult]:
        """The follow-up step called ``name``: this runner's own, else the standard one of :data:`FOLLOW_UPS`."""
        found = dict(FOLLOW_UPS) | dict(self.follow_ups)
        if name in found:
            return found[name]
        return lambda settings, result, embedder=None: StepResult(name, True, {"skipped": "unknown step, dropped"})

    def _owe_follow_ups(self, state: DreamState, key: str, entry: str) -> None:
        """Record this run's follow-ups (plus any still pending) as ``followups_pending``, before its entry."""
        names = [n for n in (state.followups_pending or {}).get("steps") or []]
        names += [n for n, _ in self.follow_ups if n not in names]
        state.followups_pending = None if not names else {
            "watermark": key, "since": (state.in_flight or {}).get("started", ""), "steps": names,
            "ledger_at": len(ledger.read_ledger(self.vault)), "entry": entry}

    def _check_inputs(self) -> list[str]:
        """Quarantine the bad records of the queues a tick may fold (late lines, confirmations) before the gate
        reads them, so even a tick that only lints moves them aside: one warning per file. Also one warning for
        vault files every walker skips because their names are not valid UTF-8, and one per symlink leaving the
        vault (:func:`suzent_cli.vault.content_pages`)."""
        warnings: list[str] = []
        timeout = self.settings.lock_timeout
        read_late_lines(self.state_dir, warnings=warnings, timeout=timeout, log_exists=self._log_exists)
        read_confirmations(self.state_dir, warnings=warnings, timeout=timeout)
        skipped: list[str] = []
        content_pages(self.vault, skipped, warnings)  # symlinks leaving the vault: one warning each
        if skipped:
            warnings.append(skipped_warning(skipped))
        return warnings

    def _tick(self, state: DreamState, force: bool) -> TickResult:
        decision = self.decision(force=force, state=state)
        if decision.action == "ingest":
            return self._ingest(state, decision)  # finishes what is owed inside the attempt: its pages count
        owed = TickResult("idle")
        self._finish_owed(state, owed, time.monotonic() + self.config.timeout_seconds, follow_up=True)
        if decision.action == "lint":
            result = self._lint(state, decision)
        else:
            mark = ledger.watermark(ledger.read_ledger(self.vault))
            result = TickResult("idle", decision, watermark_before=mark, watermark_after=mark, summary=decision.reason,
                                pages_changed=owed.pages_changed)
        result.warnings[:0] = owed.warnings
        result.steps[:0] = owed.steps
        return result

    def _finish_owed(self, state: DreamState, result: TickResult, deadline: float, *, follow_up: bool = False) -> None:
        """Finish the across-pages comparisons an interrupted dream left in ``.state/across_pages.jsonl``
        (:func:`suzent_cli.dream.rules.finish_owed`) before anything else of the tick, whatever the engine: hand off
        the log lines of the claims retired, note the pages in ``result.pages_changed`` and say what was done in
        ``result.warnings``. ``follow_up``: no ingest follows to owe the follow-ups, so when a page changed they are
        recorded as pending here and run (unless deferred). A page that cannot be written is one warning; the
        statements stay owed."""
        if not (self.state_dir / state_names.ACROSS_PAGES).is_file():
            return
        from suzent_cli.dream.rules import finish_owed

        timeout = self.settings.lock_timeout
        try:
            done = finish_owed(self.vault, self.settings.paths.archive_dir, deadline, timeout)
        except (SuzentError, OSError) as exc:
            result.warnings.append(f"{state_names.ACROSS_PAGES}: the comparisons an interrupted dream left are still "
                                   f"owed: {getattr(exc, 'strerror', None) or exc}")
            return
        result.warnings.extend(done.warnings or [])
        if done.compared:
            result.warnings.append(f"finished the comparison across pages of {done.compared} statement(s) an "
                                   f"interrupted dream left: {len(done.superseded or [])} claim(s) retired")
        if done.superseded:
            append_superseded(self.state_dir, done.superseded, timeout=timeout)
        result.pages_changed += [p for p in done.pages or [] if p not in result.pages_changed]
        if follow_up and done.pages:
            names = [n for n in (state.followups_pending or {}).get("steps") or []]
            names += [n for n, _ in self.follow_ups if n not in names]
            if names:
                mark = ledger.watermark(ledger.read_ledger(self.vault))
                state.followups_pending = {**(state.followups_pending or {
                    "watermark": mark.isoformat() if mark else "", "since": "", "ledger_at": 0, "entry": ""}),
                    "steps": names}
                save_state(self.state_dir, state)
                if not self.defer_follow_ups:
                    result.steps += self._follow_ups(result, state=state)

    def _ingest(self, state: DreamState, decision: Decision) -> TickResult:
        """Fold the gate's batch (module doc, steps 2-5): skip it after ``max_retries`` failed attempts, advance past
        it when it holds nothing to fold, else run the engine and keep the attempt when it was productive."""
        mark = ledger.watermark(ledger.read_ledger(self.vault))
        batch_days = decision.batch
        end = batch_days[-1] if batch_days else mark  # only late lines: the watermark stays where it is
        if end is None:  # cannot happen: late lines exist only at or below a watermark
            return TickResult("idle", decision, summary="nothing to ingest")
        result = TickResult("unproductive", decision, self.engine_name, mark, mark, batch_days)
        failures = state.failures.get(end.isoformat(), 0)
        engine = self.engine_factory(self.engine_name) if failures < self.config.max_retries else None
        state.last_attempt = self.settings.clock
        if failures >= self.config.max_retries:
            self._finish_owed(state, result, time.monotonic() + self.config.timeout_seconds, follow_up=True)
            return self._skip_batch(state, result, end, failures)
        batch = self._batch(mark, batch_days, end, state, result.warnings)
        result.facts = len(batch.facts)
        if not batch.facts and not batch.confirmations:
            self._finish_owed(state, result, batch.deadline, follow_up=True)
            return self._fold_nothing(state, result, end)
        before = self._begin_attempt(state, result, end)
        self._finish_owed(state, result, batch.deadline)  # inside the attempt: the pages it retires on count
        outcome = None
        try:
            outcome = ingest_by_scope(engine, batch)  # one scope at a time, writes checked (dream.scopes)
            result.summary = outcome.summary
            result.warnings.extend(outcome.warnings)
        except EngineUnreachable as exc:  # no network, 429, 5xx: not this batch's fault
            return self._back_off(state, result, exc, failures)
        except SuzentError as exc:  # DreamFailed and friends: one-line messages already
            result.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - an engine bug must still count as a failed attempt
            result.error = describe(exc)
        self._scrub(result)
        result.pages_changed = changed_pages(before, snapshot(self.vault))
        if outcome is not None and result.pages_changed:
            return self._productive(state, result, end, outcome.superseded, _late_note(batch.late))
        return self._unproductive(state, result, failures, end)

    @staticmethod
    def _span(result: TickResult, end: dt.date) -> str:
        days = result.batch
        return f"{days[0].isoformat()}..{end.isoformat()}" if days else "late lines"

    def _moved(self, state: DreamState, result: TickResult, outcome: str, end: dt.date) -> TickResult:
        """The ledger entry moving the watermark to ``end`` is written: drop the counters of the batches it passed
        and the in-flight snapshot, record ``result`` (now ``outcome``) as the last ingest and save the state."""
        self._clear_counters(state, end)
        state.in_flight = None
        result.outcome, result.watermark_after = outcome, end
        state.last_ingest = result.record()
        save_state(self.state_dir, state)
        return result

    def _skip_batch(self, state: DreamState, result: TickResult, end: dt.date, failures: int) -> TickResult:
        """``max_retries`` attempts failed: a ``skipped`` entry moves the watermark past the batch (its late lines
        are dropped too), so a wedged batch cannot strand it."""
        timeout, days = self.settings.lock_timeout, result.batch
        self._late_shown = len(read_late_lines(self.state_dir, warnings=result.warnings, timeout=timeout,
                                               log_exists=self._log_exists))
        late_note = _late_note(dict(result.decision.late))
        ledger.append_ledger(self.vault, ledger.skip_entry(self.settings.today, days[0] if days else None, end,
                                                           failures, late_note), timeout=timeout)
        truncate_late_lines(self.state_dir, self._late_shown, timeout=timeout)
        result.failures = failures
        result.summary = (f"skipped {self._span(result, end)} after {failures} failed attempts"
                          + (f" (with {late_note})" if late_note and days else "")
                          + f"; watermark {'advanced to' if days else 'stays at'} {end.isoformat()}")
        return self._moved(state, result, "skipped", end)

    def _fold_nothing(self, state: DreamState, result: TickResult, end: dt.date) -> TickResult:
        """Nothing to fold (empty logs, or every fact forgotten): no engine can change a page, so waiting for one
        would only wedge the watermark. Advance it and say so."""
        timeout = self.settings.lock_timeout
        truncate_late_lines(self.state_dir, self._late_shown, timeout=timeout)
        ledger.append_ledger(self.vault, ledger.ingest_entry(self.settings.today, end, note="nothing to fold"),
                             timeout=timeout)
        state.logs_read = self._logs_read
        result.summary = (f"no facts to fold in {self._span(result, end)}; watermark "
                          f"{'advanced to' if result.batch else 'stays at'} {end.isoformat()}")
        return self._moved(state, result, "ingested", end)

    def _begin_attempt(self, state: DreamState, result: TickResult, end: dt.date) -> dict[str, str]:
        """Save the ``in_flight`` snapshot the attempt is measured against, and return it. A killed run's snapshot is
        kept: measured against the vault as it was before that run, its pages still count."""
        key = end.isoformat()
        if state.in_flight:
            before = dict(state.in_flight["snapshot"])
            result.warnings.append(f"resuming after an interrupted run of the batch ending {state.in_flight.get('end')} "
                                   f"(started {state.in_flight.get('started')})")
            state.in_flight["end"] = key
        else:
            before = snapshot(self.vault)
            state.in_flight = {"end": key, "started": self.settings.clock.isoformat(), "snapshot": before}
        save_state(self.state_dir, state)
        return before

    def _productive(self, state: DreamState, result: TickResult, end: dt.date, superseded, late_note: str) -> TickResult:
        """The engine finished and changed a page (module doc, step 4): hand off the superseded lines, drop the
        queue records it was shown, owe the follow-ups, then write the ``ingest`` entry; run the follow-ups unless
        deferred."""
        timeout = self.settings.lock_timeout
        result.superseded = append_superseded(self.state_dir, superseded, timeout=timeout)
        # only the lines the engine was shown: captures keep appending while it runs
        result.confirmations = truncate_confirmations(self.state_dir, self._shown, timeout=timeout)
        # before the entry: a crash between the two leaves a re-run that finds the late lines on the pages
        truncate_late_lines(self.state_dir, self._late_shown, timeout=timeout)
        entry = ledger.ingest_entry(self.settings.today, end, note=late_note)
        self._clear_counters(state, end)
        state.logs_read = self._logs_read
        state.engine_backoff = None
        self._owe_follow_ups(state, end.isoformat(), entry)  # durable before the entry: a kill after it resumes them
        save_state(self.state_dir, state)
        ledger.append_ledger(self.vault, entry, timeout=timeout)
        self._moved(state, result, "ingested", end)
        if not self.defer_follow_ups:
            result.steps = self._follow_ups(result, state=state)
            state.last_ingest = result.record()
            save_state(self.state_dir, state)
        return result

    def _unproductive(self, state: DreamState, result: TickResult, failures: int, end: dt.date) -> TickResult:
        """The engine failed or changed no page: one more failed attempt at this batch; the watermark stays."""
        state.engine_backoff = None  # the engine was reached: a real attempt
        state.failures[end.isoformat()] = failures + 1
        state.in_flight = None
        result.failures = failures + 1
        if result.error is None:
            result.error = "the engine finished but changed no content page"
        result.summary = result.summary or result.error
        state.last_ingest = result.record()
        save_state(self.state_dir, state)
        return result

    def _lint(self, state: DreamState, decision: Decision | None) -> TickResult:
        from suzent_cli.dream.lint import lint_vault

        settings = self.settings
        mark = ledger.watermark(ledger.read_ledger(self.vault))
        result = TickResult("lint_failed", decision, self.engine_name, mark, mark)
        engine = self.engine_factory(self.engine_name)  # a configuration error is raised before any attempt counts
        state.last_lint_attempt = settings.clock
        save_state(self.state_dir, state)
        deadline = time.monotonic() + self.config.timeout_seconds
        try:
            report = lint_vault(self.vault, settings.today, engine, deadline)
        except SuzentError as exc:
            result.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - an engine bug must still count as a failed lint
            result.error = describe(exc)
        else:
            self._scrub(result)
            ledger.append_ledger(self.vault, ledger.lint_entry(settings.today, report.counts()),
                                 timeout=settings.lock_timeout)
            result.outcome, result.lint = "linted", report.to_json()
            result.pages_changed = list(report.pages_changed)
            result.warnings.extend(report.warnings)
            result.summary = "lint: " + ", ".join(f"{k} {v}" for k, v in report.counts().items())
            if result.pages_changed:
                result.steps = self._follow_ups(result, steps=[("index", refresh_index)])
        result.summary = result.summary or result.error or ""
        state.last_lint = result.record()
        save_state(self.state_dir, state)
        return result

    def _scrub(self, result: TickResult) -> None:
        """Whatever an engine wrote, the vault holds no forgotten text (:func:`suzent_cli.vault.forgotten.scrub_vault`,
        the tombstones read now, under the consolidation lock a ``forget`` also takes). A page that cannot be
        scrubbed is a warning: recall hides the text anyway and the next run tries again."""
        try:
            removed, problems = scrub_vault(self.vault, Forgotten.from_state(self.state_dir))
        except OSError as exc:
            result.warnings.append(f"could not remove forgotten claims from the vault: {exc}")
            return
        if removed:
            result.warnings.append(f"removed {len(removed)} forgotten claim(s) the engine wrote")
        result.warnings.extend(f"forgotten text may remain on {p}" for p in problems)

    def _back_off(self, state: DreamState, result: TickResult, exc: EngineUnreachable, failures: int) -> TickResult:
        """An attempt that could not reach the engine: not counted in ``failures``; ``engine_backoff`` says when to
        try again (the gate waits until then; ``--force`` does not). ``in_flight`` stays, so pages the attempt wrote
        before the outage still count for the retry."""
        now = self.settings.clock
        previous = state.engine_backoff if (state.engine_backoff or {}).get("engine") == self.engine_name else None
        attempts = (previous or {}).get("attempts", 0) + 1
        until = now + backoff_delay(attempts)
        error = " ".join(str(exc).split())[:300]
        state.engine_backoff = {"engine": self.engine_name,
                                "since": (previous or {}).get("since") or now.isoformat(timespec="seconds"),
                                "until": until.isoformat(timespec="seconds"), "attempts": attempts, "error": error}
        result.failures, result.retry_after = failures, until.isoformat(timespec="seconds")
        result.error = (f"{error}; not counted as a failed attempt, retrying after "
                        f"{until.isoformat(timespec='minutes')}")
        result.summary = result.error
        result.pages_changed = []
        state.last_ingest = result.record()
        save_state(self.state_dir, state)
        return result

    @staticmethod
    def _clear_counters(state: DreamState, end: dt.date) -> None:
        """Drop the retry counters of every batch end at or before ``end``: those days are behind the watermark."""
        for key in [k for k in state.failures if k <= end.isoformat()]:
            del state.failures[key]

    def _follow_ups(self, result: TickResult, steps: list | None = None,
                    state: DreamState | None = None) -> list[StepResult]:
        """Run ``steps`` (default: this runner's follow-ups) in order; never raises. With ``state``, each step that
        succeeds is dropped from ``followups_pending`` and the state saved at once (a failed one stays pending)."""
        done: list[StepResult] = []
        for name, step in (self.follow_ups if steps is None else steps):
            try:
                done.append(step(self.settings, result, self.embedder))
            except SuzentError as exc:  # best-effort after the watermark moved
                done.append(StepResult(name, False, error=str(exc)))
            except Exception as exc:  # noqa: BLE001
                done.append(StepResult(name, False, error=describe(exc)))
            pending = state.followups_pending if state is not None else None
            if pending and done[-1].ok and name in pending["steps"]:
                pending["steps"] = [n for n in pending["steps"] if n != name]
                state.followups_pending = pending if pending["steps"] else None
                save_state(self.state_dir, state)
        return done

    def _log_exists(self, day: dt.date) -> bool:
        return self.settings.paths.log_path(day).is_file()

    def _batch(self, start: dt.date | None, days: tuple[dt.date, ...], end: dt.date, state: DreamState,
               warnings: list[str] | None = None) -> IngestBatch:
        """Read the batch's logs and the late lines of consolidated days; drop every fact and restatement holding a
        forgotten text (:meth:`Forgotten.covers`: they must not come back through the vault), and every fact that
        reads as a planted instruction (:func:`suzent_cli.guard.planted`: it never becomes a claim). Facts retired as
        superseded stay: a restatement of a folded claim still confirms it. The late-line records and the logs are
        one snapshot (:meth:`_read_logs`): every line read has its record among the records seen, and every record
        seen names lines that were read. Bad confirmation and late-line records (wrong types, absurd values, a log
        that is gone) are quarantined with one warning each in ``warnings`` (:func:`suzent_cli.vault.state.read_jsonl`)."""
        warnings = [] if warnings is None else warnings
        forgotten = Forgotten.from_state(self.state_dir)
        confirmations = read_confirmations(self.state_dir, warnings=warnings, timeout=self.settings.lock_timeout)
        self._shown = len(confirmations)
        records, late, texts = self._read_logs(start, days, state, warnings)
        self._late_shown = len(records)
        stamps: dict[dt.date, list[tuple[int, str]]] = {}
        for r in records:  # each new line belongs to the last record of its day that starts at or before it
            try:
                stamps.setdefault(dt.date.fromisoformat(str(r["day"])), []).append((int(r["from_line"]), str(r["ts"])))
            except (TypeError, KeyError, ValueError):
                continue
        logs: dict[dt.date, str] = {}
        facts: list[BatchFact] = []
        self._logs_read = {}
        for day, first in [*late.items(), *((d, 1) for d in days)]:
            text = texts.get(day)
            if text is None:  # moved away since it was listed: nothing of it to fold (warned in _read_logs)
                continue
            lines = text.split("\n")
            if day not in late:
                self._logs_read[day.isoformat()] = len(lines) - (1 if lines and lines[-1] == "" else 0)
            dropped: set[int] = set()
            for f in parse_log(text, day):
                if f.line < first:
                    continue
                if forgotten.covers(f.content) or planted(f.content, f.tags, f.category):
                    dropped.add(f.line)  # a planted instruction is not the person's fact (suzent_cli.guard)
                    continue
                ts = max((t for line, t in stamps.get(day, []) if line <= f.line), default="") if day in late else None
                facts.append(BatchFact(day, f.line, lines[f.line - 1].rstrip("\r"), f.category, f.content, f.tags,
                                       f.time, f.session, late=ts or (None if day not in late else "0")))
            logs[day] = "\n".join(ln for i, ln in enumerate(lines, 1) if i >= first and i not in dropped)
        return IngestBatch(vault_dir=self.vault, run_date=self.settings.today, start=start, end=end,
                           days=days, logs=logs, facts=tuple(facts),
                           deadline=time.monotonic() + self.config.timeout_seconds,
                           confirmations=tuple(c for c in confirmations if c is not None
                                               and not _restates_forgotten(c, forgotten)),
                           revisit=revisit_queue(self.vault, self.settings.today),
                           archive_dir=self.settings.paths.archive_dir, late=late)

    def _read_logs(self, start: dt.date | None, days: tuple[dt.date, ...], state: DreamState,
                   warnings: list[str]) -> tuple[list[dict | None], dict[dt.date, int], dict[dt.date, str]]:
        """``(late-line records, late days {day: first new line}, {day: log text})`` read as one snapshot under the
        archive's append lock, which every log append holds until its late-line record is written. Without it a
        backfill landing between the read of the records and the read of its log was folded under an older record
        and then folded again from its own record by the next run. The lock is held only while reading (a capture
        waits milliseconds); an archive where the lock cannot be created (read-only) has no appender to wait for.
        Bad late-line records are quarantined into ``warnings``; a log gone since it was listed is left out of
        the texts with one warning. Raises LockTimeout/OSError."""
        timeout = self.settings.lock_timeout
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(locked(self.settings.paths.archive_dir / APPEND_LOCK, timeout))
            except OSError:  # a read-only archive: nothing can append to it while we read
                pass
            records = read_late_lines(self.state_dir, warnings=warnings, timeout=timeout, log_exists=self._log_exists)
            late = late_days(records, start, self.settings.today, state.logs_read)
            texts: dict[dt.date, str] = {}
            for day in [*late, *days]:
                try:
                    texts[day] = read_text(self.settings.paths.log_path(day))
                except FileNotFoundError:  # moved away since it was listed: nothing of it to fold
                    warnings.append(f"the daily log of {day.isoformat()} disappeared while the dream read it")
        return records, late, texts


def _restates_forgotten(record: dict, forgotten: Forgotten) -> bool:
    """A confirmations record whose restated text or matched claim holds a forgotten text (never folded)."""
    return forgotten.covers(str(record.get("content") or "")) or forgotten.covers_line(str(record.get("matched") or ""))


def _late_note(late: dict[dt.date, int]) -> str:
    """How a ledger entry names the late lines a run folded: ``late lines of 2026-03-01, 2026-03-04`` (or a count)."""
    if not late:
        return ""
    days = [d.isoformat() for d in sorted(late)]
    return "late lines of " + (", ".join(days) if len(days) <= 5 else f"{len(days)} consolidated days {days[0]}..{days[-1]}")


def snapshot(vault_dir: Path) -> dict[str, str]:
    """``{vault-relative path: sha256 of bytes}`` of every content page (unreadable pages hash to ``?``)."""
    return page_hashes(vault_dir)


def changed_pages(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Pages added, removed or changed between two snapshots, sorted."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def default_engine_factory(settings: Settings, config: DreamConfig) -> EngineFactory:
    """Engines by name: ``offline`` (the rules engine; ``rules`` is its old name) or ``claude`` (needs an API key; confined to the vault)."""
    def make(name: str) -> Engine:
        if canonical_engine(name) == "offline":
            from suzent_cli.dream.rules import RulesEngine

            return RulesEngine(embedder_spec=settings.embedder)  # the model loads only if a value needs it
        from suzent_cli.dream.claude_agent import ClaudeEngine
        from suzent_cli.dream.vault_tools import tier_paths

        return ClaudeEngine.from_settings(settings, max_turns=config.max_turns, protected=tier_paths(settings.paths))
    return make
