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
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Relevant memories (suzent):
…"}}``, which Claude Code adds to the model's context. Nothing is printed for a short prompt, no index or no hit.

Both run their work in a worker thread under a hard deadline (``--timeout``): on time-out, or any error, they
print one warning line on stderr and exit 0 (:func:`os._exit`, so no slow call can hold the agent). Capture's
payload stays in the spool then (``<vault>/.state/spool/``, or ``<home>/spool/`` when that cannot be written), and
the next call or ``suzent run`` finishes it; when neither could be written the warning says so, and what recovers
the turns (they stay in the transcript: the session's next hook call captures everything after the last recorded
position).

The parts: :mod:`.transcript` (payloads; transcript → entries → turns), :mod:`.capture` (per-session positions;
capture of new turns), :mod:`.recall` (the recall hook). This module holds the hook commands' plumbing (stdin,
``--timeout``, warnings, the hard exit) and :func:`run_capture`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from typing import BinaryIO

from suzent_cli.config import Settings
from suzent_cli.hooks.capture import capture_payload
from suzent_cli.hooks.spool import is_tty as _is_tty
from suzent_cli.hooks.spool import read_stdin as _read_stdin
from suzent_cli.hooks.transcript import PayloadInvalid, decode_payload, payload_from_dict

SOURCE = "claude-code"
CAPTURE_TIMEOUT = 10.0
STDIN_FLOOR = 1.0  # a payload on a closed pipe is read in microseconds; only a stdin left open waits this long


# --- the hook commands ------------------------------------------------------------------------------------

def warn(message: str) -> None:
    """One warning line on stderr (a hook's stderr is shown to the user, never to the model, on exit 0)."""
    try:
        sys.stderr.write(f"suzent: {' '.join(str(message).split())}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def hard_exit(code: int = 0) -> None:
    """Leave now, whatever a worker thread is doing (flush first: os._exit skips it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def parse_timeout(text: str | None, default: float) -> tuple[float, str | None]:
    """``--timeout`` in seconds: ``(value, warning)``; a bad value falls back to ``default`` with a warning (a
    hook must not fail the agent over its own flag)."""
    if text is None:
        return default, None
    try:
        value = float(text)
        if not (0 < value <= 86400):
            raise ValueError
    except ValueError:
        return default, f"--timeout must be seconds > 0, got {text!r}; using {default:g}"
    return value, None


def bounded(work, seconds: float, name: str) -> bool:
    """Run ``work()`` in a daemon thread for at most ``seconds``; True when it finished. The hard time bound of both
    hooks: on False the caller warns and calls :func:`hard_exit` (a thread blocked in LanceDB cannot be stopped).
    ``work`` must catch its own exceptions (they are the caller's to report)."""
    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


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


def run_capture(settings: Settings, *, timeout: float = CAPTURE_TIMEOUT, extractor: str | None = None,
                json_out: bool = False, stdin: BinaryIO | None = None) -> int:
    """``suzent capture --from claude-code``: spool the payload on stdin, then drain the spool (oldest first)
    within ``timeout`` seconds. Always returns 0 (or leaves through :func:`hard_exit` with 0).

    Every warning says where the payload is: spooled (in ``<vault>/.state/spool/``, or the fallback
    ``<home>/spool/`` when that cannot be written), or — when neither can be written — captured directly without a
    safety copy, and if that does not finish, what recovers its turns (:func:`_not_spooled`)."""
    from suzent_cli.hooks import spool  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    if _is_tty(stdin):
        warn("capture --from claude-code reads a Claude Code hook payload on stdin (see README, Claude Code hooks)")
        return 0
    raw = _read_stdin(max(timeout, STDIN_FLOOR), stdin)
    if raw is None:
        warn(f"no hook payload on stdin within {max(timeout, STDIN_FLOOR):g} s; nothing captured")
        hard_exit(0)
    payload = data = own = None
    try:
        data = decode_payload(raw)
        payload = payload_from_dict(data)
    except PayloadInvalid as exc:
        try:
            where = f"; kept in {spool.keep_invalid(settings, raw, str(exc))}"
        except OSError as err:
            where = f"; could not keep it ({err.strerror or err})"
        warn(f"ignored a malformed Claude Code hook payload ({exc}){where}")
    if payload is not None:
        notes: list[str] = []
        try:
            own = spool.spool(settings, data, notes)
        except OSError as exc:
            warn(f"could not spool the hook payload ({exc.strerror or exc}); capturing it directly, without a "
                 "safety copy")
        for note in notes:
            warn(note)

    progress = {"planned": 0, "done": 0}
    box: dict = {}

    def work() -> None:
        try:
            report = spool.drain(settings, deadline=deadline, extractor=extractor, progress=progress)
            if payload is not None and own is None:  # not spooled: capture it directly
                from suzent_cli.files import locked  # noqa: PLC0415

                wait = max(0.0, min(settings.lock_timeout, deadline - time.monotonic()))
                with locked(spool.session_lock(settings, payload.session_id), wait):
                    outcome = capture_payload(settings, payload, deadline=deadline, extractor=extractor,
                                              progress=progress)
                report["turns"] += outcome.turns
                report["facts"] += outcome.facts
                report["warnings"].extend(outcome.warnings)
                box["direct_finished"] = outcome.finished
            box["report"] = report
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread, never raised at the agent
            box["error"] = exc

    def fate() -> str:
        """Where this call's payload is now, for a warning about an unfinished or failed capture."""
        if own is not None:
            return f"the payload stays spooled in {own.parent} for the next run" if own.exists() else ""
        return _not_spooled(settings, data, payload) if payload is not None else ""

    def unfinished() -> str:
        left = progress["planned"] - progress["done"]
        what = f"capture of {left} turn(s)" if left > 0 else "capture"
        where = "spooled for the next run" if own is not None or payload is None else fate()
        return f"{what} not finished in {timeout:g} s; {where}"

    if not bounded(work, max(0.0, deadline - time.monotonic()), "suzent-capture"):
        warn(unfinished())
        hard_exit(0)
    if "error" in box:
        exc = box["error"]
        tail = fate()
        warn(f"capture failed ({type(exc).__name__}: {exc})" + (f"; {tail}" if tail else ""))
        return 0
    report = box["report"]
    for message in report["errors"] + report["warnings"]:
        warn(message)
    if own is not None and own.exists() and time.monotonic() >= deadline:  # else: an error above says why
        warn(unfinished())
    elif box.get("direct_finished") is False:
        warn(unfinished())
    if json_out:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
    return 0
