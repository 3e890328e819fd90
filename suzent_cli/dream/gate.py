"""The dream's gate: one decision per tick — ingest a batch, lint, or stay idle. Pure functions, no I/O
beyond reading the daily logs' names and fact lines.

* Pending dates are the daily logs strictly after the watermark (all of them when there is none) and strictly
  before today: today's log is still being appended to and is never ingested.
* Late lines: lines appended to a day at or below the watermark since it was consolidated (a ``capture --date``
  backfill, a ``retire-legacy --export``), as recorded in ``.state/late_lines.jsonl``. They are pending too: their
  facts count toward ``min_facts``, and a run folds all of them along with its batch of days.
* Pending logs and more of them than ``max_days`` ("far behind"): ingest now — a backlog drains batch by batch.
* Otherwise ingest only when the pending logs hold at least ``min_facts`` fact lines AND ``min_hours`` have passed
  since the last attempt. ``force`` skips these two conditions (never the lock).
* **Waited long enough** (issue 27): when the oldest pending fact line has waited ``max_wait_hours`` (72), any
  pending fact line (one is enough) stands in for ``min_facts``; ``min_hours`` still spaces the attempts. A person
  who captures a few facts a day never piles up ``min_facts``, and without this nothing of theirs was ever folded.
  A fact's wait starts at the ``## HH:MM`` heading of its entry in its daily log (:func:`oldest_pending`); a late
  line's when its ``late_lines.jsonl`` record was written (``ts``), since it may have been appended to a day long
  past. Today's log is never pending, so it never starts a wait. ``max_wait_hours`` 0 turns this rule off (the
  original app's gate).
* An engine that could not be reached (``dream_state.engine_backoff``): no ingest before its retry time, even far
  behind; ``force`` tries anyway. The wait doubles per unreachable attempt (:func:`backoff_delay`).
* No pending logs: lint when due — enabled, never linted or the last ``lint`` entry is ``lint_min_days`` old, and
  no lint attempt in the last 24 h. Ingest always wins over lint, so an audit can never starve consolidation.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.archive import list_logs
from suzent_cli.config import DreamConfig
from suzent_cli.files import read_text
from suzent_cli.vault.state.handoff import late_days  # noqa: F401 - the dream's name for it

FACT_LINE_RE = re.compile(r"^\s*-\s*\[", re.M)
HEADING_RE = re.compile(r"^## (\d\d):(\d\d)\b")
LINT_BACKOFF = dt.timedelta(hours=24)
ENGINE_BACKOFF_BASE = dt.timedelta(minutes=5)  # wait after the first unreachable attempt; doubles per attempt
ENGINE_BACKOFF_CAP = dt.timedelta(hours=6)


def backoff_delay(attempts: int) -> dt.timedelta:
    """How long to wait after ``attempts`` (≥ 1) consecutive unreachable attempts: 5 min, 10, 20, … capped at 6 h."""
    return min(ENGINE_BACKOFF_CAP, ENGINE_BACKOFF_BASE * (2 ** min(max(attempts, 1) - 1, 16)))


@dataclass(frozen=True)
class Decision:
    """``action`` is ``ingest``, ``lint`` or ``idle``; ``reason`` says why in words; ``batch`` is the dates an
    ingest would fold (the first ``max_days`` pending ones); ``waiting_since``/``wait_due`` (aware UTC, or None):
    since when the oldest pending fact waits and when it will have waited ``max_wait_hours``."""

    action: str
    reason: str
    pending: tuple[dt.date, ...] = ()
    pending_facts: int = 0
    batch: tuple[dt.date, ...] = ()
    behind: bool = False
    lint_due: bool = False
    forced: bool = False
    late: tuple[tuple[dt.date, int], ...] = ()
    extra: dict = field(default_factory=dict)
    waiting_since: dt.datetime | None = None  # when the oldest pending fact line was written (oldest_pending)
    wait_due: dt.datetime | None = None  # when it will have waited max_wait_hours (None: the rule is off or moot)

    def to_json(self) -> dict:
        return {"action": self.action, "reason": self.reason, "pending": [d.isoformat() for d in self.pending],
                "late": {d.isoformat(): line for d, line in self.late},
                "pending_facts": self.pending_facts, "batch": [d.isoformat() for d in self.batch],
                "behind": self.behind, "lint_due": self.lint_due, "forced": self.forced,
                "waiting_since": _iso(self.waiting_since), "wait_due": _iso(self.wait_due)}


def pending_logs(archive_dir: Path, watermark: dt.date | None, today: dt.date) -> list[tuple[dt.date, Path]]:
    """Daily logs dated after ``watermark`` (exclusive; None = all) and before ``today`` (exclusive), oldest first."""
    return [(d, p) for d, p in list_logs(archive_dir) if d < today and (watermark is None or d > watermark)]


def count_late_facts(archive_dir: Path, late: dict[dt.date, int]) -> int:
    """Fact lines at or after each late day's first new line; an unreadable log counts 0."""
    total = 0
    for day, first in late.items():
        try:
            lines = read_text(archive_dir / f"{day.isoformat()}.md").split("\n")[first - 1:]
        except OSError:
            continue
        total += sum(1 for line in lines if FACT_LINE_RE.match(line))
    return total


def count_fact_lines(paths: list[Path]) -> int:
    """Fact lines (``- [category] …``) in the given logs; an unreadable log counts 0."""
    total = 0
    for path in paths:
        try:
            total += len(FACT_LINE_RE.findall(read_text(path)))
        except OSError:
            continue
    return total


def first_fact_time(day: dt.date, text: str) -> dt.datetime | None:
    """When the first fact line of ``day``'s log ``text`` was written: the ``## HH:MM`` heading (UTC) of its entry,
    or the start of ``day`` when no heading above it reads as a time. None: the log holds no fact line."""
    heading = dt.time()
    for line in text.split("\n"):
        match = HEADING_RE.match(line)
        if match:
            hour, minute = int(match.group(1)), int(match.group(2))
            if hour < 24 and minute < 60:
                heading = dt.time(hour, minute)
        elif FACT_LINE_RE.match(line):
            return dt.datetime.combine(day, heading, dt.UTC)
    return None


def oldest_pending(pending: list[tuple[dt.date, Path]], late_records: list[dict | None],
                   late: dict[dt.date, int]) -> dt.datetime | None:
    """Since when the oldest pending fact line has waited (aware UTC), or None when nothing pending holds a fact.
    ``pending``: :func:`pending_logs` (oldest first: the first log holding a fact line decides); ``late_records``:
    the ``late_lines.jsonl`` records, whose ``ts`` (ISO date-time, UTC when naive) counts for the days in ``late``
    (:func:`late_days`) — a record without a readable ``ts`` counts from the end of its day. An unreadable log is
    skipped."""
    times: list[dt.datetime] = []
    for day, path in pending:
        try:
            first = first_fact_time(day, read_text(path))
        except OSError:
            continue
        if first is not None:
            times.append(first)
            break
    for record in late_records:
        try:
            day = dt.date.fromisoformat(str(record["day"]))  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            continue
        if day not in late:
            continue
        try:
            ts = dt.datetime.fromisoformat(str(record.get("ts") or ""))  # type: ignore[union-attr]
            ts = ts if ts.tzinfo else ts.replace(tzinfo=dt.UTC)
        except ValueError:
            ts = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC)
        times.append(ts)
    return min(times) if times else None


def lint_due(config: DreamConfig, last_lint: dt.date | None, last_lint_attempt: dt.datetime | None,
             now: dt.datetime) -> tuple[bool, str]:
    """Whether a lint pass is due at ``now``, and why (or why not)."""
    if not config.lint_enabled:
        return False, "lint is disabled"
    if last_lint_attempt is not None and now - last_lint_attempt < LINT_BACKOFF:
        return False, f"lint attempted {_ago(now - last_lint_attempt)} ago (at most one attempt per 24 h)"
    if last_lint is None:
        return True, "never linted"
    since = now - dt.datetime.combine(last_lint, dt.time(), dt.UTC)
    if since < dt.timedelta(days=config.lint_min_days):
        return False, f"last lint {last_lint.isoformat()} is under {config.lint_min_days:g} days old"
    return True, f"last lint {last_lint.isoformat()} is {since.days} days old"


def decide(*, config: DreamConfig, pending: list[dt.date], pending_facts: int, last_attempt: dt.datetime | None,
           last_lint: dt.date | None, last_lint_attempt: dt.datetime | None, now: dt.datetime,
           force: bool = False, late: dict[dt.date, int] | None = None,
           retry_after: dt.datetime | None = None, unreachable: str = "",
           waiting_since: dt.datetime | None = None) -> Decision:
    """The gate (module doc). ``pending`` must be sorted ascending; ``now`` is aware UTC; ``late`` is
    :func:`late_days`, and ``pending_facts`` counts its facts too. ``retry_after``: no ingest before it (the engine
    was unreachable; ``unreachable`` says since when and why). ``waiting_since``: :func:`oldest_pending` (None:
    no pending fact has a known wait, so the ``max_wait_hours`` rule cannot fire)."""
    batch = tuple(pending[: config.max_days])
    late = dict(late or {})
    pending_any = bool(pending or late)
    due = (waiting_since + dt.timedelta(hours=config.max_wait_hours)
           if pending_any and waiting_since is not None and pending_facts > 0 and config.max_wait_hours > 0 else None)
    common = dict(pending=tuple(pending), pending_facts=pending_facts, batch=batch, forced=force,
                  late=tuple(late.items()), waiting_since=waiting_since if pending_any else None, wait_due=due)
    if pending or late:
        behind = len(pending) > config.max_days
        what = f"{len(pending)} pending days" + (f" and late lines in {len(late)} consolidated days" if late else "")
        if retry_after is not None and not force and now < retry_after:
            return Decision("idle", f"{unreachable or 'engine unreachable'}; retrying after "
                                    f"{retry_after.isoformat(timespec='minutes')}", behind=len(pending) > config.max_days,
                            **common)
        if behind:
            return Decision("ingest", f"far behind: {len(pending)} pending days > max_days {config.max_days}",
                            behind=True, **common)
        if force:
            return Decision("ingest", f"forced: {what}", **common)
        waited = now - waiting_since if waiting_since is not None else None
        long_wait = due is not None and now >= due
        if pending_facts < config.min_facts and not long_wait:
            why = f"{pending_facts} new facts < min_facts {config.min_facts}"
            if due is not None:
                why += (f"; the oldest has waited {_hours(waited)} of max_wait_hours {config.max_wait_hours:g} "
                        f"(due {due.isoformat(timespec='minutes')})")
            return Decision("idle", why, **common)
        if last_attempt is not None and now - last_attempt < dt.timedelta(hours=config.min_hours):
            return Decision("idle", f"last attempt {_ago(now - last_attempt)} ago < min_hours {config.min_hours:g}",
                            **common)
        if pending_facts < config.min_facts:
            return Decision("ingest", f"{pending_facts} new facts in {what}; the oldest has waited {_hours(waited)} "
                                      f">= max_wait_hours {config.max_wait_hours:g}", **common)
        return Decision("ingest", f"{pending_facts} new facts in {what}", **common)
    lint_now, why = lint_due(config, last_lint, last_lint_attempt, now)
    if lint_now:
        return Decision("lint", f"nothing pending; lint due ({why})", lint_due=True, **common)
    return Decision("idle", f"nothing pending; {why}", **common)


def _iso(when: dt.datetime | None) -> str | None:
    return None if when is None else when.isoformat(timespec="minutes")


def _hours(delta: dt.timedelta) -> str:
    return f"{max(0.0, delta.total_seconds() / 3600):.1f} h"  # in the unit of max_wait_hours, however long


def _ago(delta: dt.timedelta) -> str:
    hours = max(0.0, delta.total_seconds() / 3600)  # a clock set before the last attempt reads as "just now"
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"
