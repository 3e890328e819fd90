"""One pass of the whole chain, for ``suzent run`` and ``suzent loop``: drain the hook spool → index → dream →
reconcile → promote → lint (when due). Each stage's outcome is one row, a
:class:`~suzent_cli.dream.runner.StepResult` (data only: :mod:`suzent_cli.cli.render` words it); the pass is a
:class:`PassReport`.

Stages, in order, and when each one runs:

* ``spool`` — :func:`suzent_cli.hooks.spool.drain` with a deadline (``time.monotonic()`` based), only when
  :func:`~suzent_cli.hooks.spool.pending` says something is queued.
* ``index`` — :func:`suzent_cli.index.api.run_index`, always: ``run`` is the whole chain, so it builds the index
  when there is none yet and otherwise brings it up to date (a pass that finds nothing new loads no model).
* ``dream`` — one gated :meth:`DreamRunner.tick` with its follow-ups deferred: the gate alone decides ingest /
  lint / idle; reconcile and promote are stages of their own here, run through :meth:`DreamRunner.follow_up` so
  each is cleared from the dream's pending follow-ups as it completes (a pass killed in between leaves them to
  the next tick, which finishes them first). A failure of the index stage does not stop it.
* ``reconcile`` — :func:`suzent_cli.reconcile.reconcile` when the dream ingested or superseded lines are still
  pending in ``.state/superseded.txt`` (a crash or failure of an earlier reconcile); skipped after a failed or
  busy dream.
* ``promote`` — :func:`suzent_cli.promote.promote` when the dream ingested.
* ``lint`` — reports the lint the dream tick ran when the gate chose it (the dream row then says "ingest not
  due"); otherwise skipped with the gate's reason. The gate stays the single decision maker.

A stage that raises is recorded (``ok`` False, a one-line ``error``) and the chain goes on where that is safe.
``stop()`` is asked before every stage: once it says True, the remaining stages are recorded as ``stopped``
(a stage in progress is never interrupted from here).

Exit code of a pass (:attr:`PassReport.exit_code`): 0 every stage ok (idle and skipped count as ok), 1 a stage
failed, 3 a lock was busy — the dream's consolidation lock or the indexer's (and nothing failed). Bad configuration (2) is raised before
a pass starts, by the caller.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from suzent_cli import errors
from suzent_cli.config import Settings
from suzent_cli.dream.runner import DreamRunner, StepResult, TickResult, reconcile_step
from suzent_cli.errors import describe

STAGES = ("spool", "index", "dream", "reconcile", "promote", "lint")
SPOOL_SECONDS = 120.0  # how long one pass may spend draining the hook spool (the rest waits for the next pass)
EXIT_OK, EXIT_FAILED, EXIT_BUSY = errors.OK, errors.FAILED, errors.BUSY
LOCK_HELD = "another dream holds the consolidation lock"


@dataclass
class PassReport:
    """Every stage of one pass, in :data:`STAGES` order, each a :class:`~suzent_cli.dream.runner.StepResult` row
    (``outcome``, ``ok``, ``seconds``, JSON-ready ``detail``, one-line ``error``). ``tick``: the dream's
    :class:`TickResult` (None when the dream stage failed or never ran). ``stopped``: ``stop()`` cut the pass short."""

    stages: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0
    started: str = ""
    stopped: bool = False
    tick: TickResult | None = None

    def stage(self, name: str) -> StepResult | None:
        return next((s for s in self.stages if s.name == name), None)

    @property
    def exit_code(self) -> int:
        if any(not s.ok for s in self.stages):
            return EXIT_FAILED
        if any(s.outcome == "busy" for s in self.stages):
            return EXIT_BUSY
        return EXIT_OK

    @property
    def behind(self) -> bool:
        """The dream ingested a batch while far behind: the next pass should start without waiting."""
        dream = self.stage("dream")
        return bool(dream and dream.outcome == "ingested" and (dream.detail.get("decision") or {}).get("behind"))

    def to_json(self) -> dict[str, Any]:
        """``{stages: [row_json…], exit_code, seconds, started, stopped}`` (data only: the CLI adds each row's
        ``detail.summary``)."""
        return {"stages": [s.row_json() for s in self.stages], "exit_code": self.exit_code,
                "seconds": round(self.seconds, 3), "started": self.started, "stopped": self.stopped}


def shared_embedder(settings: Settings):
    """One (lazy) embedder for every stage of a pass — and for every pass of a loop — so the model loads at most
    once, and only when something needs embedding. None when it cannot be made (each stage then reports why)."""
    try:
        from suzent_cli.index.api import index_embedder

        return index_embedder(settings)
    except Exception:  # noqa: BLE001 - the index stage makes its own and fails with the real message
        return None


def _skipped(name: str, why: str) -> StepResult:
    return StepResult(name, True, {"skipped": why}, outcome="skipped")


# --- the stages ---------------------------------------------------------------------------------------------

def _spool(settings: Settings, deadline_seconds: float) -> StepResult:
    from suzent_cli.hooks import spool

    waiting = spool.pending(settings)
    if not waiting:
        return StepResult("spool", True, {"pending": 0}, outcome="skipped")
    result = dict(spool.drain(settings, deadline=time.monotonic() + deadline_seconds))
    failed = int(result.get("failed") or 0)
    problems = result.get("errors") or []
    first = problems[0] if problems else None
    if isinstance(first, dict):
        first = first.get("error") or first.get("message") or str(first)
    return StepResult("spool", not failed, {"pending": waiting, **result}, outcome="drained" if not failed else "failed",
                      error=None if not failed else f"{failed} spooled item(s) failed" + (f": {first}" if first else ""))


def _index(settings: Settings, embedder) -> StepResult:
    from suzent_cli.errors import LockTimeout
    from suzent_cli.index.api import run_index
    from suzent_cli.index.store import table_exists

    existed = table_exists(settings.paths.index_dir)
    try:
        report = run_index(settings, embedder=embedder)
    except LockTimeout as exc:  # another indexer pass (an `index`, a capture --index) is at work: busy, not failed
        return StepResult("index", True, {}, outcome="busy", source=exc)
    changed = report.files_updated or report.files_removed
    outcome = "built" if not existed else ("updated" if changed else "unchanged")
    if report.errors:
        source, message = report.errors[0]
        return StepResult("index", False, report.as_dict(), outcome="failed", source=report,
                          error=f"{len(report.errors)} file(s) failed to index, first {source}: {message}")
    return StepResult("index", True, report.as_dict(), outcome=outcome, source=report)


def _dream_row(result: TickResult) -> StepResult:
    """The dream row for a tick result (a lint the gate chose goes to the lint row; the dream row is then idle)."""
    detail = result.to_json()
    detail.pop("lint", None)
    outcome, ok, error = {"ingested": ("ingested", True, None), "skipped": ("skipped batch", True, None),
                          "busy": ("busy", True, None),
                          "unproductive": ("failed", False, result.error or result.summary)
                          }.get(result.outcome, ("idle", True, None))
    return StepResult("dream", ok, detail, error, outcome=outcome, source=result)


def _lint_row(result: TickResult | None, dream_row: StepResult | None) -> StepResult:
    """The lint row: what the dream tick's lint did, or why there was none."""
    if result is not None and result.outcome == "linted":
        counts = {k: (len(v) if isinstance(v, list) else v) for k, v in (result.lint or {}).items()
                  if k in ("broken_links", "orphans", "related_fixed", "stale", "contradictions")}
        detail = {"counts": counts, "lint": result.lint, "pages_changed": result.pages_changed,
                  "steps": [s.to_json() for s in result.steps]}
        failed = [s for s in result.steps if not s.ok]
        return StepResult("lint", not failed, detail, outcome="failed" if failed else "linted", source=result,
                          error=f"index refresh after the lint failed: {failed[0].error}" if failed else None)
    if result is not None and result.outcome == "lint_failed":
        return StepResult("lint", False, {"engine": result.engine}, result.error or result.summary, outcome="failed",
                          source=result)
    if dream_row is None or not dream_row.ok:
        why = "dream failed"
    elif dream_row.outcome == "busy":
        why = LOCK_HELD
    elif dream_row.outcome in ("ingested", "skipped batch"):
        why = "ingest comes first; lint waits for a pass with nothing pending"
    else:
        decision = result.decision if result is not None else None
        why = f"not due: {decision.reason}" if decision else "not due"
    return _skipped("lint", why)


def _step_row(step: StepResult) -> StepResult:
    """A runner follow-up's :class:`StepResult` as a stage row (its ``outcome`` set)."""
    if step.ok and step.detail.get("skipped"):
        step.outcome = "skipped"
    elif step.name == "reconcile":
        step.outcome = "reconciled" if step.ok else "failed"
    else:
        step.outcome = (step.detail.get("status") or "promoted") if step.ok else "failed"
    return step


# --- the pass -----------------------------------------------------------------------------------------------

class _Pass:
    """The state one pass carries from stage to stage: the report so far, the dream's runner and tick."""

    def __init__(self, settings: Settings, config, *, force: bool, engine: str | None, embedder,
                 spool_seconds: float) -> None:
        self.settings, self.config, self.force, self.embedder = settings, config, force, embedder
        self.engine = engine or config.engine_for(settings)
        self.spool_seconds = spool_seconds
        self.report = PassReport(started=settings.clock.isoformat(timespec="seconds"))
        self.runner: DreamRunner | None = None

    def spool(self) -> StepResult:
        return _spool(self.settings, self.spool_seconds)

    def index(self) -> StepResult:
        return _index(self.settings, self.embedder)

    def dream(self) -> StepResult:
        self.runner = DreamRunner(self.settings, self.config, engine=self.engine, embedder=self.embedder,
                                  defer_follow_ups=True)
        self.report.tick = self.runner.tick(force=self.force)
        return _dream_row(self.report.tick)

    def _dream_blocked(self) -> str | None:
        """Why the steps after the dream cannot run (it failed or was busy), or None."""
        row = self.report.stage("dream")
        if row is None or not row.ok:
            return "dream failed"
        return LOCK_HELD if row.outcome == "busy" else None

    def reconcile(self) -> StepResult:
        from suzent_cli.vault.state import read_superseded

        why = self._dream_blocked()
        if why:
            return _skipped("reconcile", why)
        if self.report.stage("dream").outcome == "ingested":
            return _step_row(self.runner.follow_up("reconcile"))
        if not read_superseded(self.settings.paths.state_dir):
            return _skipped("reconcile", "nothing to retire")
        return _step_row(reconcile_step(self.settings, self.report.tick or TickResult("idle"), self.embedder))

    def promote(self) -> StepResult:
        why = self._dream_blocked()
        if why is None and self.report.stage("dream").outcome != "ingested":
            why = "nothing ingested"
        return _skipped("promote", why) if why else _step_row(self.runner.follow_up("promote"))

    def lint(self) -> StepResult:
        return _lint_row(self.report.tick, self.report.stage("dream"))

    def run(self, name: str) -> StepResult:
        """Stage ``name``, timed; an exception becomes a failed row (never the end of the chain)."""
        t0 = time.monotonic()
        try:
            row = getattr(self, name)()
        except Exception as exc:  # noqa: BLE001 - a stage's failure is a row, never the end of the chain
            row = StepResult(name, False, {}, describe(exc), outcome="failed", source=exc)
            if name == "dream":
                self.report.tick = None
        row.seconds = time.monotonic() - t0
        tick = self.report.tick
        if name == "lint" and tick is not None and tick.outcome in ("linted", "lint_failed"):
            row.seconds = tick.seconds  # the lint ran inside the dream's tick: show its time on its own row
            dream_row = self.report.stage("dream")
            if dream_row is not None:
                dream_row.seconds = max(0.0, dream_row.seconds - tick.seconds)
        return row


def run_pass(settings: Settings, config, *, force: bool = False, engine: str | None = None,
             stop: Callable[[], bool] | None = None, embedder=None,
             spool_seconds: float = SPOOL_SECONDS, progress: Callable[[str], None] | None = None) -> PassReport:
    """One pass of the chain (module doc). ``config``: the :class:`DreamConfig` (validated by the caller);
    ``engine``: ``rules``/``claude`` (None: ``config.engine_for(settings)``); ``embedder``: shared by every stage
    (None: one lazy embedder for this pass); ``progress(stage)`` is called as each stage starts. Never raises for
    a stage's failure."""
    started = time.monotonic()
    stop = stop or (lambda: False)
    chain = _Pass(settings, config, force=force, engine=engine, spool_seconds=spool_seconds,
                  embedder=shared_embedder(settings) if embedder is None else embedder)
    report = chain.report
    for name in STAGES:
        if report.stopped or stop():
            report.stopped = True
            report.stages.append(StepResult(name, True, {"skipped": "stopped"}, outcome="stopped"))
            continue
        if progress is not None:
            progress(name)
        report.stages.append(chain.run(name))
    report.seconds = time.monotonic() - started
    return report


def refresh_today(settings: Settings) -> Settings:
    """``settings`` with ``today`` moved to the current UTC date when no clock override fixed it (a loop that
    runs past midnight must see yesterday's log as complete)."""
    import dataclasses

    if settings.now is not None:  # --now (or its old name --today) fixed the clock
        return settings
    today = dt.datetime.now(dt.UTC).date()
    return settings if today == settings.today else dataclasses.replace(settings, today=today)
