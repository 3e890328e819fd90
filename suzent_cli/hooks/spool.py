"""The hook spool: payloads waiting to be captured, in ``<vault>/.state/spool/``.

A hook payload is written here (atomically, :func:`suzent_cli.files.atomic_write`) *before* any capture work
starts, and removed only after every complete turn it points at is captured and the session's position recorded
(:mod:`suzent_cli.hooks.capture`). A capture killed, timed out or failed half-way therefore leaves its payload
behind; the next ``suzent capture --from claude-code`` (oldest first, within its time budget) or ``suzent run``
drains it. Capturing is idempotent per session (the last captured transcript entry is recorded after each turn),
so draining a payload twice, or two payloads of one session, captures each turn once.

Layout::

    spool/<UTC yyyymmddTHHMMSSffffff>-<session8>-<rand>.json         waiting (first attempt not failed yet)
    spool/<…>-<rand>.a<N>.json                                        waiting, N attempts failed so far
    spool/failed/<…>.a3.json + <…>.a3.error.txt                       given up after 3 failed attempts
    spool/failed/<UTC stamp>-invalid-<rand>.raw                       stdin that was not a usable payload
    spool/.<session>.lock                                             the per-session capture lock

An attempt *fails* when its transcript is missing or unreadable, or capturing raised; a lock another hook holds
or a deadline reached is not a failure (the payload simply waits). After :data:`MAX_ATTEMPTS` failed attempts the
payload moves to ``failed/`` with a warning, so one bad payload never wedges the spool; feed it back by hand with
``suzent capture --from claude-code < FILE`` once the cause is fixed. Only light modules are imported here.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import time
from pathlib import Path
from ..config import Settings
from ..errors import LockTimeout
from ..files import atomic_write, atomic_write_bytes, locked

SPOOL = "spool"
FAILED = "failed"
MAX_ATTEMPTS = 3
_NAME = re.compile(r"^(?P<stem>\d{8}T\d{12}-[A-Za-z0-9]{1,8}-[0-9a-f]{8})(?:\.a(?P<attempts>\d+))?\.json$")


def spool_dir(settings: Settings) -> Path:
    return settings.paths.state_dir / SPOOL


def failed_dir(settings: Settings) -> Path:
    return spool_dir(settings) / FAILED


def _stamp() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")


def _session8(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", str(session_id))[:8] or "none"


def session_lock(settings: Settings, session_id: str) -> Path:
    """The lock held around "read the session's position → capture → record it" (one per session)."""
    sid = str(session_id)
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", sid):
        import hashlib  # noqa: PLC0415

        sid = hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()[:24]
    return spool_dir(settings) / f".{sid}.lock"


def attempts_of(path: Path) -> int:
    """Failed attempts recorded in a spool file's name (0 for a fresh one)."""
    m = _NAME.match(path.name)
    return int(m.group("attempts") or 0) if m else 0


def _with_attempts(path: Path, attempts: int) -> str:
    m = _NAME.match(path.name)
    stem = m.group("stem") if m else path.stem
    return f"{stem}.a{attempts}.json"


def waiting(settings: Settings) -> list[Path]:
    """The spooled payloads, oldest first (``failed/`` excluded)."""
    folder = spool_dir(settings)
    try:
        names = sorted(p.name for p in folder.iterdir() if _NAME.match(p.name))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in names]


def pending(settings: Settings) -> int:
    """How many payloads wait in the spool (``failed/`` excluded)."""
    return len(waiting(settings))


def spool(settings: Settings, payload: dict) -> Path:
    """Write ``payload`` (a hook payload with a ``session_id``) to the spool atomically; returns its path."""
    folder = spool_dir(settings)
    path = folder / f"{_stamp()}-{_session8(payload.get('session_id', ''))}-{secrets.token_hex(4)}.json"
    atomic_write(path, json.dumps(payload, ensure_ascii=False, sort_keys=True) + "\n")
    return path


def keep_invalid(settings: Settings, raw: bytes, reason: str) -> Path:
    """Keep stdin that was not a usable payload in ``failed/`` (raw bytes, plus a ``.error.txt`` saying why)."""
    path = failed_dir(settings) / f"{_stamp()}-invalid-{secrets.token_hex(4)}.raw"
    atomic_write_bytes(path, raw)
    atomic_write(path.with_suffix(".error.txt"), reason + "\n")
    return path


def _record_failure(path: Path, failed_to: Path, reason: str, report: dict) -> None:
    """One failed attempt of ``path``: count it in the name, or move it to ``failed/`` at MAX_ATTEMPTS."""
    n = attempts_of(path) + 1
    report["failed"] += 1
    try:
        if n >= MAX_ATTEMPTS:
            dest = failed_to / _with_attempts(path, n)
            failed_to.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
            try:
                atomic_write(dest.with_name(dest.name[: -len(".json")] + ".error.txt"), reason + "\n")
            except OSError:
                pass
            report["errors"].append(f"{path.name}: {reason}; gave up after {n} attempts, moved to {dest}")
        else:
            os.replace(path, path.with_name(_with_attempts(path, n)))
            report["errors"].append(f"{path.name}: {reason} (attempt {n} of {MAX_ATTEMPTS}; kept for the next run)")
    except FileNotFoundError:
        report["errors"].append(f"{path.name}: {reason} (meanwhile drained by another run)")
    except OSError as exc:
        report["errors"].append(f"{path.name}: {reason}; attempt not recorded ({exc.strerror or exc})")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def drain(settings: Settings, *, deadline: float | None = None, extractor: str | None = None,
          progress: dict | None = None) -> dict:
    """Capture the spooled payloads, oldest first, each under its session's lock; remove each one whose turns
    are all captured. ``deadline`` (a :func:`time.monotonic` instant): no payload — and no turn — is started after
    it (the one under way finishes). ``extractor``: as ``capture --extractor`` (default: the settings').

    Returns ``{"drained", "left", "failed", "errors", "turns", "facts", "warnings"}``: payloads removed, payloads
    still waiting at the end, failed attempts in this call (each with a message in ``errors``; at the third the
    payload moved to ``failed/``), turns captured, facts written to the daily logs, and the capture's own warnings
    (e.g. an extractor fallback). Never raises for a payload's problem. ``progress`` (optional dict) is updated
    as turns are planned and done (``planned``, ``done``), for a caller that reports on a timeout.
    """
    from .capture import capture_payload  # noqa: PLC0415
    from .transcript import PayloadInvalid, payload_from_dict  # noqa: PLC0415

    report: dict = {"drained": 0, "left": 0, "failed": 0, "errors": [], "turns": 0, "facts": 0, "warnings": []}
    failed_to = failed_dir(settings)
    todo = waiting(settings)
    if todo:
        from ..errors import ExtractorUnavailable  # noqa: PLC0415
        from ..extract import resolve_extractor_name  # noqa: PLC0415 - light: no model, no API client

        try:  # a configuration problem is not the payloads' fault: they wait, no attempt is counted
            if resolve_extractor_name(settings, extractor) == "claude" and not settings.claude_configured:
                raise ExtractorUnavailable("the claude extractor needs ANTHROPIC_API_KEY (or [claude] api_key)")
        except ExtractorUnavailable as exc:
            report["errors"].append(f"{len(todo)} payload(s) left spooled: {_reason(exc)}")
            report["left"] = len(todo)
            return report
    for path in todo:
        if deadline is not None and time.monotonic() >= deadline:
            break
        try:
            data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
            payload = payload_from_dict(data)
        except FileNotFoundError:
            continue  # drained meanwhile by a concurrent run
        except (ValueError, PayloadInvalid) as exc:  # never parses: no point retrying
            report["failed"] += 1
            try:
                failed_to.mkdir(parents=True, exist_ok=True)
                os.replace(path, failed_to / path.name)
                report["errors"].append(f"{path.name}: not a usable payload ({_reason(exc)}); moved to {failed_to}")
            except OSError as move:
                report["errors"].append(f"{path.name}: not a usable payload ({_reason(exc)}); {move}")
            continue
        wait = settings.lock_timeout if deadline is None else max(0.0, min(settings.lock_timeout,
                                                                              deadline - time.monotonic()))
        try:
            with locked(session_lock(settings, payload.session_id), wait):
                if not path.exists():
                    continue  # another run captured it while we waited for the lock
                try:
                    outcome = capture_payload(settings, payload, deadline=deadline, extractor=extractor,
                                              progress=progress)
                except LockTimeout as exc:  # e.g. the daily log's lock: busy, not broken
                    report["errors"].append(f"{path.name}: {_reason(exc)} (kept for the next run)")
                    continue
                except Exception as exc:  # noqa: BLE001 - one payload's problem never stops the drain
                    _record_failure(path, failed_to, _reason(exc), report)
                    continue
                report["turns"] += outcome.turns
                report["facts"] += outcome.facts
                report["warnings"].extend(w for w in outcome.warnings if w not in report["warnings"])
                if not outcome.finished:
                    break  # deadline reached between turns: the payload stays spooled
                path.unlink(missing_ok=True)
                report["drained"] += 1
        except LockTimeout:
            continue  # another hook of this session is capturing right now; it or the next run drains this one
    report["left"] = pending(settings)
    return report
