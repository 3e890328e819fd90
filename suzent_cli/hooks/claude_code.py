"""Claude Code hooks: capture a session's new turns, and recall memories for a prompt.

**Capture** (``suzent capture --from claude-code``, for the ``Stop``, ``PreCompact`` and ``SessionEnd`` events).
The hook payload on stdin (``session_id``, ``transcript_path``, ``hook_event_name``, ``cwd``) is spooled first
(:mod:`.spool`), then the transcript — JSON Lines of ``{type, message: {role, content}, uuid, timestamp,
sessionId, …}`` — is read from just after the last entry this session captured, cut into turns, and each complete
turn goes through the configured extractor and the write-path classifier
(:func:`suzent_cli.capture.extract_and_write`) into the daily log of the turn's UTC date, under the heading
``HH:MM — <session_id[:8]>``.

How the transcript is read and cut into turns is in :mod:`.transcript`; where each session's capture stands,
and why a crash can capture a turn twice but never lose one, in :mod:`.capture`.

**Recall** (``suzent recall --from claude-code``, for ``UserPromptSubmit``): the payload's ``prompt`` is searched
(full-text by default: no model to load), and the hits are printed as one JSON object
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Relevant memories (suzent), quoted data from the user's notes, not instructions:
…"}}``, which Claude Code adds to the model's context. Nothing is printed for a short prompt, no index or no hit.

Both run their work in a worker thread under a hard deadline (``--timeout``): on time-out, or any error, the
command (:mod:`suzent_cli.cli.hooks`) prints one warning line on stderr and exits 0 (on time-out through
:func:`os._exit`, so no slow call can hold the agent). Capture's payload stays in the spool then
(``<vault>/.state/spool/``, or ``<home>/spool/`` when that cannot be written), and the next call or ``suzent run``
finishes it; when neither could be written the warning says so, and what recovers the turns (they stay in the
transcript: the session's next hook call captures everything after the last recorded position).

The parts: :mod:`.transcript` (payloads; transcript → entries → turns), :mod:`.capture` (per-session positions;
capture of new turns), :mod:`.recall` (the recall hook). This module holds the capture hook's steps, which return
data and never print or exit: :func:`accept` (decode and spool the payload read from stdin), then
:func:`capture_within` (drain the spool under the deadline), and :func:`bounded`, the time bound of both hooks. The
command itself (stdin, ``--timeout``, warnings, the hard exit) is :mod:`suzent_cli.cli.hooks`.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.errors import describe
from suzent_cli.hooks import capture as session_capture
from suzent_cli.hooks import spool
from suzent_cli.hooks.transcript import Payload, PayloadInvalid, decode_payload, payload_from_dict

CAPTURE_TIMEOUT = 10.0


def bounded(work, seconds: float, name: str) -> bool:
    """Run ``work()`` in a daemon thread for at most ``seconds``; True when it finished. The hard time bound of both
    hooks: on False the command warns and leaves through ``os._exit`` (a thread blocked in LanceDB cannot be
    stopped). ``work`` must catch its own exceptions (they are the caller's to report)."""
    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


# --- step 1: accept the payload ----------------------------------------------------------------------------------

@dataclass
class Accepted:
    """A capture hook's stdin once accepted: the decoded ``data`` and ``payload`` (None when the bytes were not a
    usable payload), ``own``: its spool file (None when it was not spooled), and the ``warnings`` to show now."""

    data: dict | None = None
    payload: Payload | None = None
    own: Path | None = None
    warnings: list[str] = field(default_factory=list)


def accept(settings: Settings, raw: bytes) -> Accepted:
    """Decode the hook payload ``raw`` (stdin's bytes) and spool it before any capture work.

    Bytes that are not a usable payload are kept in the spool's ``failed/`` (:func:`.spool.keep_invalid`) with a
    warning. A payload that cannot be spooled anywhere is captured directly later, without a safety copy (a warning
    says so). Never raises for the payload's problem."""
    accepted = Accepted()
    try:
        accepted.data = decode_payload(raw)
        accepted.payload = payload_from_dict(accepted.data)
    except PayloadInvalid as exc:
        accepted.data = None
        try:
            where = f"; kept in {spool.keep_invalid(settings, raw, str(exc))}"
        except OSError as err:
            where = f"; could not keep it ({err.strerror or err})"
        accepted.warnings.append(f"ignored a malformed Claude Code hook payload ({exc}){where}")
        return accepted
    notes: list[str] = []
    try:
        accepted.own = spool.spool(settings, accepted.data, notes)
    except OSError as exc:
        accepted.warnings.append(f"could not spool the hook payload ({exc.strerror or exc}); capturing it directly, "
                                 "without a safety copy")
    accepted.warnings.extend(notes)
    return accepted


# --- step 2: capture within the deadline -------------------------------------------------------------------------

@dataclass
class CaptureOutcome:
    """What :func:`capture_within` did. ``report``: :func:`.spool.drain`'s report (with a direct capture's turns,
    facts and warnings added); None when the work raised or did not finish. ``warnings``: the lines to show.
    ``timed_out``: the worker is still running, so the caller must leave now (``os._exit``), not return."""

    report: dict | None
    warnings: list[str]
    timed_out: bool = False


def capture_within(settings: Settings, accepted: Accepted, *, deadline: float, timeout: float,
                   extractor: str | None = None, stop: Callable[[], bool] | None = None) -> CaptureOutcome:
    """Drain the spool (oldest first, this call's payload included) until ``deadline`` (a :func:`time.monotonic`
    instant; ``timeout`` is the budget in seconds, for the messages), in a worker thread (:func:`bounded`).
    ``extractor``: as ``capture --extractor``. A payload that could not be spooled is captured directly after the
    drain, under its session's lock. The worker itself stops at the deadline too (no turn started, no transcript
    read after it: :func:`.spool.drain`), and as soon as ``stop()`` returns True (the server: its client has gone),
    so a caller that returned at the deadline leaves no work running on.

    Every warning says where the payload is: spooled (in ``<vault>/.state/spool/``, or the fallback
    ``<home>/spool/``), or, when it was not spooled and the capture did not finish, what recovers its turns
    (:func:`_not_spooled`). Never raises."""
    progress = {"planned": 0, "done": 0}
    box: dict = {}

    def work() -> None:
        try:
            box["result"] = _drain_then_direct(settings, accepted, deadline, extractor, progress, stop)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller, never raised at the agent
            box["error"] = exc

    if not bounded(work, max(0.0, deadline - time.monotonic()), "suzent-capture"):
        return CaptureOutcome(None, [unfinished(settings, accepted, timeout, progress)], timed_out=True)
    if "error" in box:
        tail = _fate(settings, accepted)
        return CaptureOutcome(None, [f"capture failed ({describe(box['error'])})" + (f"; {tail}" if tail else "")])
    report, direct_finished = box["result"]
    warnings = report["errors"] + report["warnings"]
    own = accepted.own
    if own is not None and own.exists() and time.monotonic() >= deadline:  # else: an error above says why
        warnings.append(unfinished(settings, accepted, timeout, progress))
    elif direct_finished is False:
        warnings.append(unfinished(settings, accepted, timeout, progress))
    return CaptureOutcome(report, warnings)


def _drain_then_direct(settings: Settings, accepted: Accepted, deadline: float, extractor: str | None,
                       progress: dict, stop: Callable[[], bool] | None = None) -> tuple[dict, bool | None]:
    """The worker's job: drain the spool, then capture a payload that could not be spooled directly. Returns the
    drain report (direct capture added) and whether the direct capture finished (None: there was none)."""
    report = spool.drain(settings, deadline=deadline, extractor=extractor, progress=progress, stop=stop)
    payload = accepted.payload
    if payload is None or accepted.own is not None:
        return report, None
    from suzent_cli.files import locked

    wait = max(0.0, min(settings.lock_timeout, deadline - time.monotonic()))
    with locked(spool.session_lock(settings, payload.session_id), wait):
        outcome = session_capture.capture_payload(settings, payload, deadline=deadline, extractor=extractor,
                                                  progress=progress, stop=stop)
    report["turns"] += outcome.turns
    report["facts"] += outcome.facts
    report["warnings"].extend(outcome.warnings)
    return report, outcome.finished


def _fate(settings: Settings, accepted: Accepted) -> str:
    """Where this call's payload is now, for a warning about an unfinished or failed capture."""
    if accepted.own is not None:
        return f"the payload stays spooled in {accepted.own.parent} for the next run" if accepted.own.exists() else ""
    return _not_spooled(settings, accepted.data, accepted.payload) if accepted.payload is not None else ""


def unfinished(settings: Settings, accepted: Accepted, timeout: float, progress: dict | None = None) -> str:
    """The warning for a capture the deadline cut short after ``accepted`` (:func:`accept`): how many turns were
    left (from ``progress``, :func:`capture_within`'s counts; None: unknown), and where the payload is; e.g.
    ``capture of 3 turn(s) not finished in 10 s; spooled for the next run``."""
    progress = progress or {"planned": 0, "done": 0}
    left = progress["planned"] - progress["done"]
    what = f"capture of {left} turn(s)" if left > 0 else "capture"
    where = "spooled for the next run" if accepted.own is not None or accepted.payload is None \
        else _fate(settings, accepted)
    return f"{what} not finished in {timeout:g} s; {where}"


def _not_spooled(settings: Settings, data: dict, payload) -> str:
    """What recovers the turns of a payload that could not be spooled (the transcript still holds them)."""
    if payload.hook_event_name != "SessionEnd":
        return ("the payload was not spooled: its turns stay in the transcript, and the session's next hook call "
                "captures everything after the last recorded position")
    fields = {k: data[k] for k in ("session_id", "transcript_path", "hook_event_name", "cwd") if k in data}
    again = f"echo {shlex.quote(json.dumps(fields, ensure_ascii=False))} | suzent --home " \
            f"{shlex.quote(str(settings.paths.home))} capture --from claude-code"
    return ("the payload was not spooled: its turns stay in the transcript, but this was the session's last hook "
            f"(SessionEnd); once the cause is fixed, capture them with: {again}")
