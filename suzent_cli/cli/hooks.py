"""The Claude Code hook commands' plumbing: stdin, ``--timeout``, warnings on stderr, stdout, the hard exit.

This is the cold path: the hook's work done in this process. With a ``suzent serve`` running on the home, the
documented hook command lines are answered by it before the app is even imported (:mod:`suzent_cli.cli.fasthook`),
and come here only when none answers (or it failed: then ``sys.stdin`` holds the same payload bytes again).

``suzent capture --from claude-code`` (:func:`capture_hook`) and ``suzent recall --from claude-code``
(:func:`recall_hook`, which also answers a ``SessionStart`` payload with the session briefing) call here; the work
itself is :mod:`suzent_cli.hooks`, which returns data and never prints or exits. A hook never fails its agent
(Claude Code reads exit 2 as "block"): every problem is one warning line on stderr (shown to the user, never to the
model, on exit 0) and the exit status is 0. The deadline is the process's one (:mod:`suzent_cli.cli.watchdog`,
armed at the process's start for the documented hook lines, else when the command starts here): when the work does
not finish by it the process leaves through :func:`os._exit` at once (:func:`hard_exit`), since a worker thread
blocked in LanceDB or the API cannot be stopped and the agent must not wait for it; should this path itself be
stuck (an import, a read), the watchdog ends the process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import BinaryIO

from suzent_cli.cli import watchdog
from suzent_cli.cli.fasthook import event_of, warn  # warn: one `suzent: …` line, shared with the fast path
from suzent_cli.config import Settings
from suzent_cli.errors import OK
from suzent_cli.hooks import claude_code
from suzent_cli.hooks.stdin import PayloadTooLarge, is_tty, read_stdin


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
    (:func:`suzent_cli.hooks.claude_code.accept`), then drain the spool until the deadline, ``timeout`` seconds (the
    flag's text; default 10) after the process started (:func:`suzent_cli.cli.watchdog.scoped`;
    :func:`~suzent_cli.hooks.claude_code.capture_within`). ``--json`` prints the drain report as one object. A
    payload over :data:`~suzent_cli.hooks.stdin.MAX_PAYLOAD_BYTES` is not one: one warning, nothing read past the
    cap, nothing kept. Returns 0, or leaves through :func:`hard_exit` with 0 when stdin stays open or the capture
    does not finish in time (the watchdog ends the process should this path not get there)."""
    seconds = _seconds(timeout, claude_code.CAPTURE_TIMEOUT)
    if is_tty(stdin):
        warn("capture --from claude-code reads a Claude Code hook payload on stdin (see docs/hooks.md)")
        return OK
    with watchdog.scoped(seconds, f"capture not finished in {seconds:g} s; no payload was read: its turns stay in "
                                  "the transcript for the session's next hook call") as dog:
        try:
            raw = read_stdin(dog.stdin_left(), stdin)
        except PayloadTooLarge as exc:
            dog.answered()
            warn(f"{exc}; nothing captured")
            return OK
        if raw is None:
            dog.answered()
            warn(f"no hook payload on stdin within {dog.stdin_seconds:g} s; nothing captured")
            hard_exit(OK)
        accepted = claude_code.accept(settings, raw)
        dog.expect(claude_code.unfinished(settings, accepted, seconds))  # spooled (or kept in failed/) by now
        for message in accepted.warnings:
            warn(message)
        outcome = claude_code.capture_within(settings, accepted, deadline=dog.deadline, timeout=seconds,
                                             extractor=extractor)
        dog.answered()
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
    nothing, by the deadline, ``timeout`` seconds (the flag's text; default 2) after the process started
    (:func:`suzent_cli.cli.watchdog.scoped`; :func:`suzent_cli.hooks.recall.recall_within`; ``mode`` default
    ``fts``: no model to load here, ``limit`` default 5). A ``SessionStart`` payload (``hook_event_name``) gets
    the session briefing instead (:func:`session_start_within`). A payload over
    :data:`~suzent_cli.hooks.stdin.MAX_PAYLOAD_BYTES`: one warning, no recall. Returns 0, or leaves through
    :func:`hard_exit` with 0 when no answer comes in time (the watchdog ends the process should this path not get
    there)."""
    from suzent_cli.hooks.recall import RECALL_LIMIT, RECALL_TIMEOUT, RecallAnswer, recall_within

    seconds = _seconds(timeout, RECALL_TIMEOUT)
    late = f"recall skipped: no answer within {seconds:g} s"
    with watchdog.scoped(seconds, late) as dog:
        try:
            raw = b"" if is_tty(stdin) else read_stdin(dog.stdin_left(), stdin)
        except PayloadTooLarge as exc:
            answer = RecallAnswer(warning=f"{exc}; no recall")
        else:
            if raw is None:
                answer = RecallAnswer(warning=late, timed_out=True)
            elif event_of(raw) == "SessionStart":
                dog.expect(f"briefing skipped: no answer within {seconds:g} s")
                answer = session_start_within(settings, raw, timeout=seconds, deadline=dog.deadline)
            else:
                answer = recall_within(settings, lambda: raw, timeout=seconds, deadline=dog.deadline,
                                       mode=mode or "fts", limit=limit or RECALL_LIMIT, model=model)
        dog.answered()
        if answer.warning:
            warn(answer.warning)
        if answer.timed_out:
            hard_exit(OK)
        if answer.output:
            sys.stdout.write(answer.output + "\n")
            sys.stdout.flush()
        return OK


def session_start_within(settings: Settings, raw: bytes, *, timeout: float, deadline: float | None = None):
    """The cold ``SessionStart`` briefing for payload ``raw`` (:func:`suzent_cli.hooks.session_start.
    session_start_output`, full-text: no model to load) by ``deadline`` (a :func:`time.monotonic` instant; None:
    ``timeout`` seconds from now; ``timeout`` is also the number the warning names), in a worker thread; a
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

    wait = timeout if deadline is None else max(0.0, deadline - time.monotonic())
    if not claude_code.bounded(work, wait, "suzent-session-start"):
        return RecallAnswer(warning=f"briefing skipped: no answer within {timeout:g} s", timed_out=True)
    if "error" in box:
        return RecallAnswer(warning=f"briefing skipped ({describe(box['error'])})")
    return RecallAnswer(output=box.get("out") or None)
