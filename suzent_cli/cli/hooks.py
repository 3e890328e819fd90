"""The Claude Code hook commands' plumbing: stdin, ``--timeout``, warnings on stderr, stdout, the hard exit.

This is the cold path: the hook's work done in this process. With a ``suzent serve`` running on the home, the
documented hook command lines are answered by it before the app is even imported (:mod:`suzent_cli.cli.fasthook`),
and come here only when none answers (or it failed: then ``sys.stdin`` holds the same payload bytes again).

``suzent capture --from claude-code`` (:func:`capture_hook`) and ``suzent recall --from claude-code``
(:func:`recall_hook`, which also answers a ``SessionStart`` payload with the session briefing) call here; the work
itself is :mod:`suzent_cli.hooks`, which returns data and never prints or exits. A hook never fails its agent (Claude Code reads exit 2 as "block"): every problem is one warning line on
stderr (shown to the user, never to the model, on exit 0) and the exit status is 0. When the work does not finish
in time the process leaves through :func:`os._exit` at once (:func:`hard_exit`): a worker thread blocked in
LanceDB or the API cannot be stopped, and the agent must not wait for it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import BinaryIO

from suzent_cli.cli.fasthook import event_of, warn  # warn: one `suzent: …` line, shared with the fast path
from suzent_cli.config import Settings
from suzent_cli.errors import OK
from suzent_cli.hooks import claude_code
from suzent_cli.hooks.stdin import is_tty, read_stdin


def hard_exit(code: int = OK) -> None:
    """Leave now, whatever a worker thread is doing (flush first: ``os._exit`` skips it)."""
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


def _seconds(text: str | None, default: float) -> float:
    seconds, problem = parse_timeout(text, default)
    if problem:
        warn(problem)
    return seconds


def capture_hook(settings: Settings, *, timeout: str | None = None, extractor: str | None = None,
                 json_out: bool = False, stdin: BinaryIO | None = None) -> int:
    """``suzent capture --from claude-code``: read the hook payload on ``stdin`` (default: the process's), spool it
    (:func:`suzent_cli.hooks.claude_code.accept`), then drain the spool within ``timeout`` seconds (the flag's text;
    default 10) (:func:`~suzent_cli.hooks.claude_code.capture_within`). ``--json`` prints the drain report as one
    object. Returns 0, or leaves through :func:`hard_exit` with 0 when stdin stays open or the capture does not
    finish in time."""
    seconds = _seconds(timeout, claude_code.CAPTURE_TIMEOUT)
    deadline = time.monotonic() + seconds
    if is_tty(stdin):
        warn("capture --from claude-code reads a Claude Code hook payload on stdin (see docs/hooks.md)")
        return OK
    wait = max(seconds, claude_code.STDIN_FLOOR)
    raw = read_stdin(wait, stdin)
    if raw is None:
        warn(f"no hook payload on stdin within {wait:g} s; nothing captured")
        hard_exit(OK)
    accepted = claude_code.accept(settings, raw)
    for message in accepted.warnings:
        warn(message)
    outcome = claude_code.capture_within(settings, accepted, deadline=deadline, timeout=seconds, extractor=extractor)
    for message in outcome.warnings:
        warn(message)
    if outcome.timed_out:
        hard_exit(OK)
    if json_out and outcome.report is not None:
        sys.stdout.write(json.dumps(outcome.report, ensure_ascii=False, sort_keys=True) + "\n")
    return OK


def recall_hook(settings: Settings, *, timeout: str | None = None, mode: str | None = None, limit: int | None = None,
                model: str | None = None, stdin: BinaryIO | None = None) -> int:
    """``suzent recall --from claude-code``: print the memories for the payload's prompt as one JSON line, or
    nothing, within ``timeout`` seconds (the flag's text; default 2) (:func:`suzent_cli.hooks.recall.recall_within`;
    ``mode`` default ``fts``: no model to load here, ``limit`` default 5). A ``SessionStart`` payload
    (``hook_event_name``) gets the session briefing instead (:func:`session_start_within`). Returns 0, or leaves
    through :func:`hard_exit` with 0 when no answer comes in time."""
    from suzent_cli.hooks.recall import RECALL_LIMIT, RECALL_TIMEOUT, RecallAnswer, recall_within

    seconds = _seconds(timeout, RECALL_TIMEOUT)
    raw = b"" if is_tty(stdin) else read_stdin(seconds, stdin)  # a closed pipe is read in microseconds
    if raw is None:
        answer = RecallAnswer(warning=f"recall skipped: no answer within {seconds:g} s", timed_out=True)
    elif event_of(raw) == "SessionStart":
        answer = session_start_within(settings, raw, timeout=seconds)
    else:
        answer = recall_within(settings, lambda: raw, timeout=seconds, mode=mode or "fts",
                               limit=limit or RECALL_LIMIT, model=model)
    if answer.warning:
        warn(answer.warning)
    if answer.timed_out:
        hard_exit(OK)
    if answer.output:
        sys.stdout.write(answer.output + "\n")
        sys.stdout.flush()
    return OK


def session_start_within(settings: Settings, raw: bytes, *, timeout: float):
    """The cold ``SessionStart`` briefing for payload ``raw`` (:func:`suzent_cli.hooks.session_start.
    session_start_output`, full-text: no model to load) within ``timeout`` seconds, in a worker thread; a
    :class:`~suzent_cli.hooks.recall.RecallAnswer`. Never raises."""
    from suzent_cli.errors import describe
    from suzent_cli.hooks.recall import RecallAnswer

    box: dict = {}

    def work() -> None:
        try:
            from suzent_cli.hooks.session_start import session_start_output

            box["out"] = session_start_output(settings, raw)  # no embedder: full-text
        except BaseException as exc:  # noqa: BLE001 - reported by the caller, never raised at the agent
            box["error"] = exc

    if not claude_code.bounded(work, timeout, "suzent-session-start"):
        return RecallAnswer(warning=f"briefing skipped: no answer within {timeout:g} s", timed_out=True)
    if "error" in box:
        return RecallAnswer(warning=f"briefing skipped ({describe(box['error'])})")
    return RecallAnswer(output=box.get("out") or None)
