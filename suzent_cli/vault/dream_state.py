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

Every field is validated on read (:func:`_decode`): a field of the wrong type or with an absurd value (a count
that is not an int from 1 to :data:`MAX_FAILURES`, a key that is not a date, a line count past
:data:`suzent_cli.vault.state.MAX_LINE`, an attempt time more than a day after now, which would hold the gate shut for
ever) takes its empty value. :func:`load_state` then copies the file as it was to
``.state/quarantine/dream_state.json.jsonl`` with the reasons and reports one warning; the next save writes the
clean state. :func:`peek_state` (``suzent status``) only warns.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.files import atomic_write, read_text
from suzent_cli.vault.state import DREAM_STATE, DREAM_STATE_CORRUPT, MAX_LINE, quarantine

STATE_FILE = DREAM_STATE  # the names come from the catalogue (suzent_cli.vault.state)
CORRUPT = DREAM_STATE_CORRUPT
VERSION = 1
MAX_FAILURES = 1000  # the largest max_retries the config accepts: a larger count is not one the runner wrote
FUTURE_SLACK = dt.timedelta(days=1)  # an attempt "in the future" by more than this is a broken clock or a bad edit


def _instant(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


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


def _parse(state_dir: Path, now: dt.datetime | None) -> tuple[str, DreamState | None, str, list[str]]:
    """Read and decode the file: ``(raw text, state, why unreadable, bad-field problems)``. ``state`` is None when
    the file does not parse as a version-:data:`VERSION` object (``why`` says so); a missing file reads as ``("",
    DreamState(), "", [])``. Moves nothing; OSError only if the file cannot be read."""
    path = state_dir / STATE_FILE
    if not path.is_file():
        return "", DreamState(), "", []
    raw = read_text(path)
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"unknown version {data.get('version') if isinstance(data, dict) else None!r}")
    except (ValueError, RecursionError) as exc:
        return raw, None, str(exc), []
    problems: list[str] = []
    return raw, _decode(data, problems, now), "", problems


def load_state(state_dir: Path, now: dt.datetime | None = None) -> DreamState:
    """Read the dream state (missing → empty). A corrupt file is renamed ``*.corrupt`` and reported in
    ``warnings``; bad fields take their empty values, the file as it was is copied to the quarantine and one
    warning says which (module doc). ``now``: the runner's clock, for the "attempt in the future" check.
    Never raises for bad content (OSError only if the directory is unreadable)."""
    raw, state, why, problems = _parse(state_dir, now)
    if state is None:
        path = state_dir / STATE_FILE
        aside = path.with_name(CORRUPT)
        os.replace(path, aside)
        return DreamState(warnings=[f"{path.name} was unreadable ({why[:80]}); moved to {aside.name}, "
                                    "retry counters start again from zero"])
    if problems:
        try:
            state.warnings.append(quarantine(state_dir, STATE_FILE, [(raw, "; ".join(problems))]))
            save_state(state_dir, state)  # clean now: an idle tick saves nothing, and must not warn again
        except OSError as exc:
            state.warnings.append(f"{STATE_FILE}: ignored bad fields ({'; '.join(problems)}); the quarantine "
                                  f"could not be written ({exc.strerror or exc})")
    return state


def save_state(state_dir: Path, state: DreamState) -> None:
    """Write ``state`` atomically. The caller holds the consolidation lock. Raises OSError."""
    atomic_write(state_dir / STATE_FILE, json.dumps(state.to_json(), indent=2, ensure_ascii=False) + "\n")


def peek_state(state_dir: Path, now: dt.datetime | None = None) -> DreamState:
    """Read-only view for ``suzent status``: like :func:`load_state` but never moves or copies anything (bad fields
    take their empty values, with a warning)."""
    _, state, _, problems = _parse(state_dir, now)
    if state is None:
        return DreamState(warnings=[f"{STATE_FILE} is unreadable; the next dream will move it aside"])
    if problems:
        state.warnings.append(f"{STATE_FILE} has bad fields ({'; '.join(problems)}); the next dream ignores them "
                              "and moves a copy to the quarantine")
    return state


def _is_day(value: Any) -> bool:
    try:
        return isinstance(value, str) and dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


def _counts(data: dict, key: str, low: int, high: int, problems: list[str]) -> dict[str, int]:
    """``data[key]`` as ``{YYYY-MM-DD: int in [low, high]}``; anything else is dropped and named in ``problems``."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{key} is not an object")
        return {}
    good = {k: v for k, v in value.items()
            if _is_day(k) and isinstance(v, int) and not isinstance(v, bool) and low <= v <= high}
    if len(good) != len(value):
        bad = next(k for k in value if k not in good)
        problems.append(f"{key}[{str(bad)[:40]!r}] is not a date with a count from {low} to {high}")
    return good


def _moment(data: dict, key: str, now: dt.datetime | None, problems: list[str]) -> dt.datetime | None:
    value = data.get(key)
    if value is None:
        return None
    moment = _instant(value)
    if moment is None:
        problems.append(f"{key} is not an ISO date-time")
    elif now is not None and moment - now > FUTURE_SLACK:
        problems.append(f"{key} {value} is after now")
        return None
    return moment


def _record(data: dict, key: str, problems: list[str]) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        problems.append(f"{key} is not an object")
    return value if isinstance(value, dict) else None


def _in_flight(data: dict, problems: list[str]) -> dict[str, Any] | None:
    value = data.get("in_flight")
    if value is None:
        return None
    snapshot = value.get("snapshot") if isinstance(value, dict) else None
    if (not isinstance(snapshot, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in snapshot.items())
            or not _is_day(value.get("end")) or not isinstance(value.get("started"), str)):
        problems.append("in_flight is not {end: date, started, snapshot: {page: sha256}}")
        return None
    return value


def _decode(data: dict, problems: list[str] | None = None, now: dt.datetime | None = None) -> DreamState:
    """The state from the decoded file; every bad field takes its empty value and is named in ``problems``."""
    problems = [] if problems is None else problems
    return DreamState(
        failures=_counts(data, "failures", 1, MAX_FAILURES, problems),
        last_attempt=_moment(data, "last_attempt", now, problems),
        last_lint_attempt=_moment(data, "last_lint_attempt", now, problems),
        last_ingest=_record(data, "last_ingest", problems),
        last_lint=_record(data, "last_lint", problems),
        in_flight=_in_flight(data, problems),
        logs_read=_counts(data, "logs_read", 0, MAX_LINE, problems),
        followups_pending=_checked(data, "followups_pending", _followups, problems),
        engine_backoff=_checked(data, "engine_backoff", _backoff, problems),
    )


def _checked(data: dict, key: str, decode: Callable[[Any], dict[str, Any] | None],
             problems: list[str]) -> dict[str, Any] | None:
    """``decode(data[key])``; a value present but not decodable is named in ``problems``."""
    value = data.get(key)
    out = decode(value)
    if value is not None and out is None:
        problems.append(f"{key} is malformed")
    return out


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
