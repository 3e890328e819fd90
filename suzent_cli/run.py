"""One pass of the whole chain, for ``suzent run`` and ``suzent loop``: drain the hook spool → index → dream →
reconcile → promote → lint (when due). Each stage's outcome is one :class:`StageResult`; the pass is a
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
from dataclasses import dataclass, field
from typing import Any, Callable

from suzent_cli import exit_codes
from suzent_cli.config import Settings

STAGES = ("spool", "index", "dream", "reconcile", "promote", "lint")
SPOOL_SECONDS = 120.0  # how long one pass may spend draining the hook spool (the rest waits for the next pass)
EXIT_OK, EXIT_FAILED, EXIT_BUSY = exit_codes.OK, exit_codes.FAILED, exit_codes.BUSY


@dataclass
class StageResult:
    """One stage of a pass. ``outcome`` is a short word (``built``, ``ingested``, ``skipped``, ``failed``, …);
    ``detail`` is JSON-ready and always holds a one-line ``summary``; ``error`` is one line when ``ok`` is False."""

    name: str
    outcome: str
    ok: bool = True
    detail: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None

    @property
    def summary(self) -> str:
        return str(self.detail.get("summary") or "")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, "ok": self.ok, "seconds": round(self.seconds, 3),
                "detail": self.detail, "error": self.error}


@dataclass
class PassReport:
    """Every stage of one pass, in :data:`STAGES` order. ``stopped``: ``stop()`` cut the pass short."""

    stages: list[StageResult] = field(default_factory=list)
    seconds: float = 0.0
    started: str = ""
    stopped: bool = False

    def stage(self, name: str) -> StageResult | None:
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
        return {"stages": [s.to_json() for s in self.stages], "exit_code": self.exit_code,
                "seconds": round(self.seconds, 3), "started": self.started, "stopped": self.stopped}


def one_line(exc: BaseException) -> str:
    """A suzent error's own message, or ``Type: message`` for anything else; one line, at most 500 characters."""
    from suzent_cli.errors import SuzentError  # noqa: PLC0415

    text = " ".join(str(exc).split()) if isinstance(exc, SuzentError) else f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    if isinstance(exc, OSError) and not isinstance(exc, SuzentError) and exc.filename:
        text = f"{type(exc).__name__}: {exc.strerror or exc}: {exc.filename}"
    return text if len(text) <= 500 else text[:499] + "…"


def shared_embedder(settings: Settings):
    """One (lazy) embedder for every stage of a pass — and for every pass of a loop — so the model loads at most
    once, and only when something needs embedding. None when it cannot be made (each stage then reports why)."""
    try:
        from suzent_cli.index.api import index_embedder  # noqa: PLC0415

        return index_embedder(settings)
    except Exception:  # noqa: BLE001 - the index stage makes its own and fails with the real message
        return None


# --- the stages ---------------------------------------------------------------------------------------------

def _spool(settings: Settings, deadline_seconds: float) -> StageResult:
    from suzent_cli.hooks import spool  # noqa: PLC0415

    waiting = spool.pending(settings)
    if not waiting:
        return StageResult("spool", "skipped", True, {"summary": "nothing pending", "pending": 0})
    result = dict(spool.drain(settings, deadline=time.monotonic() + deadline_seconds))
    failed = int(result.get("failed") or 0)
    errors = result.get("errors") or []
    summary = (f"drained {result.get('drained', 0)} of {waiting} ({result.get('turns', 0)} turns, "
               f"{result.get('facts', 0)} facts)" + (f", {result.get('left')} left for the next pass" if result.get("left") else "")
               + (f", {failed} failed" if failed else ""))
    first = errors[0] if errors else None
    if isinstance(first, dict):
        first = first.get("error") or first.get("message") or str(first)
    return StageResult("spool", "drained" if not failed else "failed", not failed,
                       {"summary": summary, "pending": waiting, **result},
                       error=None if not failed else f"{failed} spooled item(s) failed" + (f": {first}" if first else ""))


def _index(settings: Settings, embedder) -> StageResult:
    from suzent_cli.index.api import run_index  # noqa: PLC0415
    from suzent_cli.index.store import table_exists  # noqa: PLC0415

    from suzent_cli.errors import LockTimeout  # noqa: PLC0415

    existed = table_exists(settings.paths.index_dir)
    try:
        report = run_index(settings, embedder=embedder)
    except LockTimeout as exc:  # another indexer pass (an `index`, a capture --index) is at work: busy, not failed
        return StageResult("index", "busy", True, {"summary": f"busy: {exc}"})
    detail = report.as_dict()
    changed = report.files_updated or report.files_removed
    outcome = "built" if not existed else ("updated" if changed else "unchanged")
    detail["summary"] = (f"{'built: ' if not existed else ''}{report.files_checked} files checked, {report.files_updated} "
                         f"updated, {report.files_removed} removed; rows +{report.rows_added} −{report.rows_removed} "
                         f"({report.total_rows} in all)")
    if report.errors:
        source, message = report.errors[0]
        return StageResult("index", "failed", False, detail,
                           error=f"{len(report.errors)} file(s) failed to index, first {source}: {message}")
    return StageResult("index", outcome, True, detail)


def _dream_stage(result) -> StageResult:
    """The dream row for a tick result (a lint the gate chose goes to the lint row instead)."""
    detail = result.to_json()
    detail.pop("lint", None)
    reason = result.decision.reason if result.decision else ""
    if result.outcome in ("linted", "lint_failed"):
        detail["summary"] = f"ingest not due ({reason}): the gate chose lint"
        return StageResult("dream", "idle", True, detail)
    if result.outcome == "ingested":
        b = result.batch
        span = f"{b[0].isoformat()}..{b[-1].isoformat()}" if b else "late lines"
        detail["summary"] = (f"ingested {span} ({result.engine}): {result.facts} facts, {len(result.pages_changed)} "
                             f"pages changed, {result.superseded} superseded lines handed off; watermark "
                             f"{result.watermark_after.isoformat() if result.watermark_after else 'none'}")
        return StageResult("dream", "ingested", True, detail)
    if result.outcome == "skipped":
        detail["summary"] = result.summary
        return StageResult("dream", "skipped batch", True, detail)
    if result.outcome == "unproductive":
        detail["summary"] = (f"engine unreachable, not counted as an attempt; retrying after {result.retry_after}"
                             if result.retry_after else f"run not productive, attempt {result.failures}; watermark stays")
        return StageResult("dream", "failed", False, detail, error=result.error or result.summary)
    if result.outcome == "busy":
        detail["summary"] = result.summary
        return StageResult("dream", "busy", True, detail)
    detail["summary"] = f"ingest not due: {reason}" if reason else (result.summary or "idle")
    return StageResult("dream", "idle", True, detail)


def _lint_stage(result, dream_row: StageResult | None) -> StageResult:
    """The lint row: what the dream tick's lint did, or why there was none."""
    if result is not None and result.outcome == "linted":
        counts = {k: (len(v) if isinstance(v, list) else v) for k, v in (result.lint or {}).items()
                  if k in ("broken_links", "orphans", "related_fixed", "stale", "contradictions")}
        detail = {"summary": f"{result.summary}; {len(result.pages_changed)} pages changed", "counts": counts,
                  "lint": result.lint, "pages_changed": result.pages_changed,
                  "steps": [s.__dict__ for s in result.steps]}
        failed = [s for s in result.steps if not s.ok]
        if failed:
            return StageResult("lint", "failed", False, detail,
                               error=f"index refresh after the lint failed: {failed[0].error}")
        return StageResult("lint", "linted", True, detail)
    if result is not None and result.outcome == "lint_failed":
        return StageResult("lint", "failed", False, {"summary": "lint failed", "engine": result.engine},
                           error=result.error or result.summary)
    if dream_row is None or not dream_row.ok:
        why = "dream failed"
    elif dream_row.outcome == "busy":
        why = "another dream holds the consolidation lock"
    elif dream_row.outcome in ("ingested", "skipped batch"):
        why = "ingest comes first; lint waits for a pass with nothing pending"
    else:
        decision = result.decision if result is not None else None
        why = f"not due: {decision.reason}" if decision else "not due"
    return StageResult("lint", "skipped", True, {"summary": why, "skipped": why})


def _from_step(step) -> StageResult:
    """A runner follow-up's :class:`StepResult` as a stage row."""
    detail = dict(step.detail)
    if step.ok and detail.get("skipped"):
        detail["summary"] = str(detail["skipped"])
        return StageResult(step.name, "skipped", True, detail)
    detail["summary"] = step.summary()
    if step.name == "reconcile":
        return StageResult("reconcile", "reconciled" if step.ok else "failed", step.ok, detail, error=step.error)
    return StageResult("promote", (detail.get("status") or "promoted") if step.ok else "failed", step.ok, detail,
                       error=step.error)


# --- the pass -----------------------------------------------------------------------------------------------

def run_pass(settings: Settings, config, *, force: bool = False, engine: str | None = None,
             stop: Callable[[], bool] | None = None, embedder=None,
             spool_seconds: float = SPOOL_SECONDS, progress: Callable[[str], None] | None = None) -> PassReport:
    """One pass of the chain (module doc). ``config``: the :class:`DreamConfig` (validated by the caller);
    ``engine``: ``rules``/``claude`` (None: ``config.engine_for(settings)``); ``embedder``: shared by every stage
    (None: one lazy embedder for this pass); ``progress(stage)`` is called as each stage starts. Never raises for
    a stage's failure."""
    from suzent_cli.dream.runner import DreamRunner, TickResult, reconcile_step  # noqa: PLC0415
    from suzent_cli.vault.state import read_superseded  # noqa: PLC0415

    started = time.monotonic()
    report = PassReport(started=settings.clock.isoformat(timespec="seconds"))
    stop = stop or (lambda: False)
    state: dict[str, Any] = {"tick": None, "runner": None}
    if embedder is None:
        embedder = shared_embedder(settings)

    def dream() -> StageResult:
        runner = DreamRunner(settings, config, engine=engine or config.engine_for(settings), embedder=embedder,
                             defer_follow_ups=True)
        state["runner"] = runner
        state["tick"] = runner.tick(force=force)
        return _dream_stage(state["tick"])

    def reconcile() -> StageResult:
        row, tick = report.stage("dream"), state["tick"]
        if row is None or not row.ok or row.outcome == "busy":
            why = "another dream holds the consolidation lock" if row and row.outcome == "busy" else "dream failed"
            return StageResult("reconcile", "skipped", True, {"summary": why, "skipped": why})
        if row.outcome == "ingested":
            return _from_step(state["runner"].follow_up("reconcile"))
        if not read_superseded(settings.paths.state_dir):
            return StageResult("reconcile", "skipped", True, {"summary": "nothing to retire",
                                                              "skipped": "nothing to retire"})
        return _from_step(reconcile_step(settings, tick or TickResult("idle"), embedder))

    def promote() -> StageResult:
        row = report.stage("dream")
        if row is None or row.outcome != "ingested":
            why = ("dream failed" if row is None or not row.ok else
                   "another dream holds the consolidation lock" if row.outcome == "busy" else "nothing ingested")
            return StageResult("promote", "skipped", True, {"summary": why, "skipped": why})
        return _from_step(state["runner"].follow_up("promote"))

    def lint() -> StageResult:
        return _lint_stage(state["tick"], report.stage("dream"))

    bodies: dict[str, Callable[[], StageResult]] = {
        "spool": lambda: _spool(settings, spool_seconds), "index": lambda: _index(settings, embedder),
        "dream": dream, "reconcile": reconcile, "promote": promote, "lint": lint,
    }
    for name in STAGES:
        if report.stopped or stop():
            report.stopped = True
            report.stages.append(StageResult(name, "stopped", True, {"summary": "stopped by a signal before this stage",
                                                                     "skipped": "stopped"}))
            continue
        if progress is not None:
            progress(name)
        t0 = time.monotonic()
        try:
            row = bodies[name]()
        except Exception as exc:  # noqa: BLE001 - a stage's failure is a row, never the end of the chain
            message = one_line(exc)
            row = StageResult(name, "failed", False, {"summary": message}, error=message)
            if name == "dream":
                state["tick"] = None
        row.seconds = time.monotonic() - t0
        tick = state["tick"]
        if name == "lint" and tick is not None and tick.outcome in ("linted", "lint_failed"):
            row.seconds = tick.seconds  # the lint ran inside the dream's tick: show its time on its own row
            dream_row = report.stage("dream")
            if dream_row is not None:
                dream_row.seconds = max(0.0, dream_row.seconds - tick.seconds)
        report.stages.append(row)
    report.seconds = time.monotonic() - started
    return report


def refresh_today(settings: Settings) -> Settings:
    """``settings`` with ``today`` moved to the current UTC date when no clock override fixed it (a loop that
    runs past midnight must see yesterday's log as complete)."""
    import dataclasses  # noqa: PLC0415

    if settings.now is not None or settings.origins.get("today", "default") != "default":
        return settings
    today = dt.datetime.now(dt.timezone.utc).date()
    return settings if today == settings.today else dataclasses.replace(settings, today=today)
