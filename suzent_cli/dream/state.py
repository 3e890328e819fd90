"""``notebook/.state/dream_state.json``: what the dream must remember across restarts.

Shape (version 1)::

    {"version": 1,
     "failures": {"2026-06-14": 2},            # failed attempts per batch end date T
     "last_attempt": "2026-06-15T03:00:00+00:00",   # last ingest attempt (the min_hours gate)
     "last_lint_attempt": "…",                  # last lint attempt (the 24 h lint back-off)
     "last_ingest": {...}, "last_lint": {...},  # the last result of each phase, as shown by `suzent status`
     "in_flight": {"end": "2026-06-14", "started": "…", "snapshot": {"3_Personal/Profile.md": "<sha256>"}},
     "logs_read": {"2026-06-14": 212},          # lines of each log the last productive batch read
     "followups_pending": {"watermark": "2026-06-14", "since": "…", "steps": ["reconcile", "promote"],
                           "ledger_at": 812, "entry": "## [2026-06-15] ingest | daily logs  watermark=2026-06-14"},
     "engine_backoff": {"engine": "claude", "since": "…", "until": "…", "attempts": 2, "error": "<one line>"}}

``logs_read`` closes a race: a line appended to a pending day while a run reads that day's log is folded by the
run, but its ``late_lines.jsonl`` record (written after the append) may not be among the records the run saw; the
next run then folds only the lines past what was read.

``in_flight`` is written before an engine runs and cleared when the run is recorded. A run killed in between
leaves it behind; the next run compares the vault against that original snapshot, so the
pages the killed run already wrote still count as its work and the re-run converges instead of looking unproductive.

``followups_pending`` is written before a productive run's ledger entry and each step is dropped as it completes;
any later tick (and ``suzent run``) finishes what is left first, so a kill after the entry cannot leave the
superseded lines undrained, the vault unindexed or MEMORY.md stale. ``ledger_at``/``entry`` (the ledger's length
before the entry, and the entry) tell whether the entry was written; ``since`` is the run's ``in_flight.started``.

``engine_backoff`` is set when the engine could not be reached (a connection error, 429, 5xx): such an attempt
does not count in ``failures``; ingest waits until ``until`` (exponential, capped; ``--force`` tries anyway) and
the entry is cleared by the next attempt that reaches the engine.

Written only by the dream runner under the consolidation lock, atomically (temp file + rename). An unreadable
file is moved aside to ``dream_state.json.corrupt`` and the dream starts from empty state: retry counters reset,
which costs at most ``max_retries`` extra attempts; the watermark lives in ``log.md`` and is unaffected.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write, read_text

STATE_FILE = "dream_state.json"
VERSION = 1


def _instant(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


@dataclass
class DreamState:
    """The decoded state; missing or malformed fields take their empty values."""

    failures: dict[str, int] = field(default_factory=dict)
    last_attempt: dt.datetime | None = None
    last_lint_attempt: dt.datetime | None = None
    last_ingest: dict[str, Any] | None = None
    last_lint: dict[str, Any] | None = None
    in_flight: dict[str, Any] | None = None
    logs_read: dict[str, int] = field(default_factory=dict)
    followups_pending: dict[str, Any] | None = None
    engine_backoff: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "failures": dict(sorted(self.failures.items())),
            "last_attempt": self.last_attempt.isoformat() if self.last_attempt else None,
            "last_lint_attempt": self.last_lint_attempt.isoformat() if self.last_lint_attempt else None,
            "last_ingest": self.last_ingest,
            "last_lint": self.last_lint,
            "in_flight": self.in_flight,
            "logs_read": dict(sorted(self.logs_read.items())),
            "followups_pending": self.followups_pending,
            "engine_backoff": self.engine_backoff,
        }


def load_state(state_dir: Path) -> DreamState:
    """Read the dream state (missing → empty). A corrupt file is renamed ``*.corrupt`` and reported in
    ``warnings``; never raises for bad content (OSError only if the directory is unreadable)."""
    path = state_dir / STATE_FILE
    if not path.is_file():
        return DreamState()
    try:
        data = json.loads(read_text(path))
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"unknown version {data.get('version') if isinstance(data, dict) else None!r}")
    except ValueError as exc:
        aside = path.with_name(STATE_FILE + ".corrupt")
        os.replace(path, aside)
        return DreamState(warnings=[f"{path.name} was unreadable ({str(exc)[:80]}); moved to {aside.name}, "
                                    "retry counters start again from zero"])
    return _decode(data)


def save_state(state_dir: Path, state: DreamState) -> None:
    """Write ``state`` atomically. The caller holds the consolidation lock. Raises OSError."""
    atomic_write(state_dir / STATE_FILE, json.dumps(state.to_json(), indent=2, ensure_ascii=False) + "\n")


def peek_state(state_dir: Path) -> DreamState:
    """Read-only view for ``suzent status``: like :func:`load_state` but never moves a corrupt file."""
    path = state_dir / STATE_FILE
    if not path.is_file():
        return DreamState()
    try:
        data = json.loads(read_text(path))
        if not isinstance(data, dict):
            raise ValueError
    except ValueError:
        return DreamState(warnings=[f"{path.name} is unreadable; the next dream will move it aside"])
    return _decode(data)


def _decode(data: dict) -> DreamState:
    failures = {k: int(v) for k, v in (data.get("failures") or {}).items()
                if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v > 0}
    in_flight = data.get("in_flight")
    return DreamState(
        failures=failures,
        last_attempt=_instant(data.get("last_attempt")),
        last_lint_attempt=_instant(data.get("last_lint_attempt")),
        last_ingest=data.get("last_ingest") if isinstance(data.get("last_ingest"), dict) else None,
        last_lint=data.get("last_lint") if isinstance(data.get("last_lint"), dict) else None,
        in_flight=in_flight if isinstance(in_flight, dict) and isinstance(in_flight.get("snapshot"), dict) else None,
        logs_read={k: int(v) for k, v in (data.get("logs_read") or {}).items()
                   if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0},
        followups_pending=_followups(data.get("followups_pending")),
        engine_backoff=_backoff(data.get("engine_backoff")),
    )


def _backoff(value: Any) -> dict[str, Any] | None:
    """``engine_backoff`` if well-formed (``until`` an instant, ``attempts`` ≥ 1), else None."""
    if not isinstance(value, dict) or _instant(value.get("until")) is None:
        return None
    attempts = value.get("attempts")
    return {"engine": str(value.get("engine") or ""), "since": str(value.get("since") or value["until"]),
            "until": str(value["until"]), "error": " ".join(str(value.get("error") or "").split())[:300],
            "attempts": attempts if isinstance(attempts, int) and not isinstance(attempts, bool) and attempts > 0 else 1}


def _followups(value: Any) -> dict[str, Any] | None:
    """``followups_pending`` if well-formed (``steps`` a non-empty list of names), else None."""
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list):
        return None
    steps = [s for s in value["steps"] if isinstance(s, str) and s]
    if not steps:
        return None
    at = value.get("ledger_at")
    return {"watermark": str(value.get("watermark") or ""), "since": str(value.get("since") or ""), "steps": steps,
            "ledger_at": at if isinstance(at, int) and not isinstance(at, bool) and at >= 0 else 0,
            "entry": str(value.get("entry") or "")}
