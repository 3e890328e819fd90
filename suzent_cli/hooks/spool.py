"""The hook spool: payloads waiting to be captured, in ``<vault>/.state/spool/`` (or, when that cannot be written,
the fallback ``<home>/spool/``).

A hook payload is written here (atomically, :func:`suzent_cli.files.atomic_write_bytes`) *before* any capture work
starts, and removed only after every complete turn it points at is captured and the session's position recorded
(:mod:`suzent_cli.hooks.capture`). A capture killed, timed out or failed half-way therefore leaves its payload
behind; the next ``suzent capture --from claude-code`` (oldest first, within its time budget) or ``suzent run``
drains it. Capturing is idempotent per session (the last captured transcript entry is recorded after each turn),
so draining a payload twice, or two payloads of one session, captures each turn once.

Layout (each of the two spool folders)::

    spool/<UTC yyyymmddTHHMMSSffffff>-<session8>-<rand>.json         waiting (first attempt not failed yet)
    spool/<…>-<rand>.a<N>.json                                        waiting, N attempts failed so far
    spool/failed/<…>-<rand>.json + <…>.error.txt                      given up after 3 failed attempts
    spool/failed/<UTC stamp>-invalid-<rand>.raw + .error.txt          stdin that was not a usable payload
    spool/.<session>.lock                                             the per-session capture lock (vault only)

**Fallback.** When ``<vault>/.state/spool/`` cannot be written (disk full, read-only, permissions), the payload goes
to ``<home>/spool/`` (``settings.paths.home``), same names and format; :func:`waiting`, :func:`pending` and
:func:`drain` take both folders (oldest first across them), and a payload that fails there moves to that folder's
own ``failed/``. :func:`spool_without_settings` writes there too, for a hook whose settings could not be resolved
(an invalid ``config.toml``): the CLI finds the home without the config (:func:`suzent_cli.config.resolve_home`,
through :func:`suzent_cli.cli.app.capture_hook_home`), see :func:`rescue_unread_payload`.

An attempt *fails* when its transcript is missing or unreadable, or capturing raised; a lock another hook holds
or a deadline reached is not a failure (the payload simply waits). After :data:`MAX_ATTEMPTS` failed attempts the
payload moves to ``failed/`` (named without its attempt count) with a warning, so one bad payload never wedges the
spool; once the cause is fixed, retry it by moving it back into its ``spool/`` folder (``mv spool/failed/X.json
spool/``: 3 fresh attempts), or feed it by hand with ``suzent capture --from claude-code < FILE``. A ``.raw`` (stdin
that was no payload) is retried only by hand, once repaired. Only light modules are imported here (not the
configuration: :func:`spool_without_settings` must work when the config is what is broken).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from suzent_cli.errors import LockTimeout
from suzent_cli.files import atomic_write, atomic_write_bytes, locked
from suzent_cli.hooks.stdin import PayloadTooLarge, is_tty, read_stdin  # light; kept importable from here
from suzent_cli.vault.state import SPOOL as SPOOL_NAME
from suzent_cli.vault.state import SPOOL_FAILED

if TYPE_CHECKING:
    from suzent_cli.config import Settings

SPOOL, FAILED = SPOOL_NAME, SPOOL_FAILED  # names from the catalogue (suzent_cli.vault.state)
MAX_ATTEMPTS = 3
RESCUE_STDIN_SECONDS = 2.0  # a payload on a closed pipe is read in microseconds; only a stdin left open waits
_NAME = re.compile(r"^(?P<stem>\d{8}T\d{12}-[A-Za-z0-9]{1,8}-[0-9a-f]{8})(?:\.a(?P<attempts>\d+))?\.json$")


class SpoolUnwritable(OSError):
    """Neither ``<vault>/.state/spool/`` nor the fallback ``<home>/spool/`` could be written: nothing was spooled."""


def spool_dir(settings: Settings) -> Path:
    return settings.paths.state_dir / SPOOL


def fallback_dir(home: Path | str) -> Path:
    """``<home>/spool/``: where a payload goes when ``<vault>/.state/spool/`` cannot be written (or the settings
    cannot be resolved at all)."""
    return Path(home) / SPOOL


def spool_dirs(settings: Settings) -> list[Path]:
    """The spool folders, the vault's first: ``[<vault>/.state/spool, <home>/spool]``."""
    main, extra = spool_dir(settings), fallback_dir(settings.paths.home)
    return [main] if extra == main else [main, extra]


def failed_dir(settings: Settings) -> Path:
    return spool_dir(settings) / FAILED


def failed_dirs(settings: Settings) -> list[Path]:
    """Each spool folder's ``failed/`` (the vault's first)."""
    return [d / FAILED for d in spool_dirs(settings)]


def given_up(settings: Settings) -> int:
    """How many payloads (``.json``) and unusable stdins (``.raw``) wait in the ``failed/`` folders."""
    n = 0
    for folder in failed_dirs(settings):
        try:
            n += sum(1 for f in folder.iterdir() if f.suffix in (".json", ".raw"))
        except (FileNotFoundError, NotADirectoryError):
            pass
    return n


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")


def _session8(session_id: object) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", str(session_id))[:8] or "none"


def _new_name(session_id: object) -> str:
    return f"{_stamp()}-{_session8(session_id)}-{secrets.token_hex(4)}.json"


def _write(path: Path, data: bytes) -> None:
    """The one write of every spool file (atomic; creates the folder)."""
    atomic_write_bytes(path, data)


def _why(exc: OSError) -> str:
    return exc.strerror or " ".join(str(exc).split()) or type(exc).__name__


def session_lock(settings: Settings, session_id: str) -> Path:
    """The lock held around "read the session's position → capture → record it" (one per session)."""
    sid = str(session_id)
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", sid):
        import hashlib

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
    """The spooled payloads of both spool folders, oldest first (``failed/`` excluded)."""
    found: list[tuple[str, Path]] = []
    for folder in spool_dirs(settings):
        try:
            found += [(p.name, folder / p.name) for p in folder.iterdir() if _NAME.match(p.name)]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return [path for _, path in sorted(found)]


def pending(settings: Settings) -> int:
    """How many payloads wait in the spool folders (``failed/`` excluded)."""
    return len(waiting(settings))


def _payload_bytes(payload: dict) -> bytes:
    return (json.dumps(payload, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def spool(settings: Settings, payload: dict, notes: list[str] | None = None) -> Path:
    """Write ``payload`` (a hook payload with a ``session_id``) to the spool atomically; returns its path.

    When ``<vault>/.state/spool/`` cannot be written the payload goes to the fallback ``<home>/spool/`` (a line
    saying so is added to ``notes``). Raises :class:`SpoolUnwritable` (an ``OSError``) when neither can be
    written: then nothing was spooled."""
    name, data = _new_name(payload.get("session_id", "")), _payload_bytes(payload)
    main = spool_dir(settings)
    try:
        _write(main / name, data)
        return main / name
    except OSError as first:
        problem = first
    for extra in spool_dirs(settings)[1:]:
        try:
            _write(extra / name, data)
        except OSError as second:
            raise SpoolUnwritable(f"cannot write {main} ({_why(problem)}) nor {extra} ({_why(second)})") from second
        if notes is not None:
            notes.append(f"could not write {main} ({_why(problem)}); spooled the hook payload in {extra} instead")
        return extra / name
    raise SpoolUnwritable(f"cannot write {main} ({_why(problem)})") from problem


def _keep_raw(folder: Path, raw: bytes, reason: str) -> Path:
    """Keep ``raw`` (stdin that was no usable payload) in ``folder`` with its ``.error.txt``; its secrets redacted
    first (:func:`suzent_cli.guard.redact`; a real payload names a transcript and holds no credential, so a retry
    loses nothing), every other byte, bad UTF-8 included, kept as it came."""
    from suzent_cli.guard import redact  # the detectors load only for a candidate token

    text, kinds = redact(raw.decode("utf-8", errors="surrogateescape"))
    if kinds:
        raw = text.encode("utf-8", errors="surrogateescape")
        reason += f" (kept with {len(kinds)} secret(s) redacted)"
    path = folder / f"{_stamp()}-invalid-{secrets.token_hex(4)}.raw"
    _write(path, raw)
    atomic_write(path.with_suffix(".error.txt"), reason + "\n")
    return path


def keep_invalid(settings: Settings, raw: bytes, reason: str) -> Path:
    """Keep stdin that was not a usable payload in ``failed/`` (raw bytes, plus a ``.error.txt`` saying why): the
    vault's, or the fallback's when that cannot be written. Raises ``OSError`` when neither can."""
    folders = failed_dirs(settings)
    for folder in folders[:-1]:
        try:
            return _keep_raw(folder, raw, reason)
        except OSError:
            continue
    return _keep_raw(folders[-1], raw, reason)


# --- without settings: a hook whose configuration is broken ---------------------------------------------------

def spool_without_settings(home: Path | str, raw: bytes) -> Path:
    """Keep a hook's raw stdin in the fallback spool ``<home>/spool/`` when the settings cannot be resolved (an
    invalid ``config.toml``); the next hook call or ``suzent run`` with a working config drains it.

    A usable payload is written as any spooled one (``<home>/spool/<stamp>-<session8>-<rand>.json``); stdin that
    is not one goes to ``<home>/spool/failed/<stamp>-invalid-<rand>.raw`` with a ``.error.txt``, as the hook does
    with it. Returns the path written. Raises ``OSError`` when it cannot be written. Reads no configuration."""
    from suzent_cli.hooks.transcript import PayloadInvalid, decode_payload, payload_from_dict  # light

    folder = fallback_dir(Path(home).expanduser())
    try:
        data = decode_payload(raw)
        payload_from_dict(data)
    except PayloadInvalid as exc:
        return _keep_raw(folder / FAILED, raw, f"not a usable Claude Code hook payload ({exc})")
    path = folder / _new_name(data.get("session_id", ""))
    _write(path, _payload_bytes(data))
    return path


def rescue_unread_payload(home: Path | None, *, stdin: BinaryIO | None = None) -> str:
    """For :func:`suzent_cli.cli.app.main` when a :class:`~suzent_cli.errors.SuzentError` (e.g. an invalid
    ``config.toml``) stopped ``suzent capture --from claude-code`` before it read its payload: keep the payload
    from stdin in ``<home>/spool/`` (:func:`spool_without_settings`) so it is not lost if this was the session's
    last hook. ``home``: the capture hook's home, resolved without the config
    (:func:`suzent_cli.cli.app.capture_hook_home`); None when the command line is no capture hook. Returns the
    text to append to the one-line warning (``"; …"``, or ``""`` when ``home`` is None, stdin is a terminal, or
    stdin is empty, e.g. already read by the capture). Never raises."""
    try:
        if home is None or is_tty(stdin):
            return ""
        try:
            raw = read_stdin(RESCUE_STDIN_SECONDS, stdin)
        except PayloadTooLarge as exc:
            return f"; {exc}, nothing kept"
        if raw is None:
            return f"; no hook payload on stdin within {RESCUE_STDIN_SECONDS:g} s, nothing kept"
        if not raw.strip():
            return ""
        try:
            path = spool_without_settings(home, raw)
        except OSError as exc:
            return (f"; the hook payload could not be kept either ({_why(exc)}): its turns stay in the transcript, "
                    f"and the session's next hook call after the fix captures everything after the last recorded "
                    f"position")
        if path.suffix == ".raw":
            return f"; the hook's stdin was not a usable payload, kept in {path}"
        return f"; the hook payload is kept in {path}: the next hook call or `suzent run` captures it once this is fixed"
    except Exception as exc:  # noqa: BLE001 - an error path must not raise
        return f"; the hook payload could not be kept ({type(exc).__name__}: {exc})"


# --- draining -------------------------------------------------------------------------------------------------

def _record_failure(path: Path, failed_to: Path, reason: str, report: dict) -> None:
    """One failed attempt of ``path``: count it in the name, or move it to ``failed/`` at MAX_ATTEMPTS."""
    n = attempts_of(path) + 1
    report["failed"] += 1
    try:
        if n >= MAX_ATTEMPTS:
            m = _NAME.match(path.name)  # without the count: moved back into spool/, it gets fresh attempts
            dest = failed_to / f"{m.group('stem') if m else path.stem}.json"
            failed_to.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
            try:
                atomic_write(dest.with_suffix(".error.txt"), f"{reason}\n(gave up after {n} attempts)\n")
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
          progress: dict | None = None, stop: Callable[[], bool] | None = None) -> dict:
    """Capture the spooled payloads of both spool folders, oldest first, each under its session's lock; remove each
    one whose turns are all captured. ``deadline`` (a :func:`time.monotonic` instant): no payload — and no turn —
    is started after it (the one under way finishes its turn; its transcript is read no further). ``stop``: a
    callable that ends the drain the same way when it returns True (the server's client has gone). ``extractor``:
    as ``capture --extractor`` (default: the settings').

    Returns ``{"drained", "left", "failed", "errors", "turns", "facts", "warnings"}``: payloads removed, payloads
    still waiting at the end, failed attempts in this call (each with a message in ``errors``; at the third the
    payload moved to its folder's ``failed/``), turns captured, facts written to the daily logs, and the capture's
    own warnings (e.g. an extractor fallback). Never raises for a payload's problem; a session lock that cannot be
    created (``.state`` read-only) stops the drain with one message in ``errors``, counting no attempt.
    ``progress`` (optional dict) is updated as turns are planned and done (``planned``, ``done``), for a caller
    that reports on a timeout.
    """
    report: dict = {"drained": 0, "left": 0, "failed": 0, "errors": [], "turns": 0, "facts": 0, "warnings": []}
    todo = waiting(settings)
    problem = _configuration_problem(settings, extractor) if todo else None
    if problem:  # not the payloads' fault: they wait, no attempt is counted
        report["errors"].append(f"{len(todo)} payload(s) left spooled: {problem}")
        report["left"] = len(todo)
        return report
    for path in todo:
        if (deadline is not None and time.monotonic() >= deadline) or (stop is not None and stop()):
            break
        payload = _load(path, report)
        if payload is not None and not _drain_one(settings, path, payload, report, deadline, extractor, progress,
                                                  stop):
            break
    report["left"] = pending(settings)
    return report


def _configuration_problem(settings: Settings, extractor: str | None) -> str | None:
    """Why no payload can be captured now, or None: an unknown extractor, or claude without an API key."""
    from suzent_cli.capture.extract import resolve_extractor_name  # light: no model, no API client
    from suzent_cli.capture.extract.claude import INSTEAD, USER  # light: anthropic loads on use
    from suzent_cli.claude import require_key
    from suzent_cli.errors import ClaudeUnavailable, ExtractorUnavailable

    try:
        if resolve_extractor_name(settings, extractor) == "claude":
            require_key(settings, USER, INSTEAD)
    except (ExtractorUnavailable, ClaudeUnavailable) as exc:
        return _reason(exc)
    return None


def _load(path: Path, report: dict):
    """The :class:`~suzent_cli.hooks.transcript.Payload` spooled at ``path``, or None when there is none to capture:
    gone (drained meanwhile), unreadable (a failed attempt, recorded) or never usable (moved to ``failed/``)."""
    from suzent_cli.hooks.transcript import PayloadInvalid, payload_from_dict

    failed_to = path.parent / FAILED
    try:
        return payload_from_dict(json.loads(path.read_text(encoding="utf-8", errors="replace")))
    except FileNotFoundError:
        return None  # drained meanwhile by a concurrent run
    except OSError as exc:  # a directory or an unreadable file under a payload's name: counts as an attempt
        _record_failure(path, failed_to, f"unreadable ({_why(exc)})", report)
        return None
    except (ValueError, RecursionError, PayloadInvalid) as exc:  # never parses: no point retrying
        report["failed"] += 1
        try:
            failed_to.mkdir(parents=True, exist_ok=True)
            os.replace(path, failed_to / path.name)
            report["errors"].append(f"{path.name}: not a usable payload ({_reason(exc)}); moved to {failed_to}")
        except OSError as move:
            report["errors"].append(f"{path.name}: not a usable payload ({_reason(exc)}); {move}")
        return None


def _drain_one(settings: Settings, path: Path, payload, report: dict, deadline: float | None,
               extractor: str | None, progress: dict | None, stop: Callable[[], bool] | None = None) -> bool:
    """Capture the payload spooled at ``path`` under its session's lock (:func:`_capture_locked`). Returns False
    when the drain must stop: the deadline cut a capture short, or the lock file cannot be created."""
    wait = settings.lock_timeout if deadline is None else max(0.0, min(settings.lock_timeout,
                                                                          deadline - time.monotonic()))
    lock = session_lock(settings, payload.session_id)
    try:
        with locked(lock, wait):
            return _capture_locked(settings, path, payload, report, deadline, extractor, progress, stop)
    except LockTimeout:
        return True  # another hook of this session is capturing right now; it or the next run drains this one
    except OSError as exc:  # the lock file cannot be created: the state folder's problem, not the payloads'
        report["errors"].append(f"cannot lock {lock} ({_why(exc)}); the spooled payloads wait for the next run")
        return False


def _capture_locked(settings: Settings, path: Path, payload, report: dict, deadline: float | None,
                    extractor: str | None, progress: dict | None, stop: Callable[[], bool] | None = None) -> bool:
    """With the session's lock held: capture the payload's new turns, add them to ``report`` and remove ``path``
    once all are captured. Returns False when the deadline (or ``stop``) stopped the capture (the payload stays)."""
    from suzent_cli.hooks import capture as session_capture

    if not path.exists():
        return True  # another run captured it while we waited for the lock
    try:
        outcome = session_capture.capture_payload(settings, payload, deadline=deadline, extractor=extractor,
                                                  progress=progress, stop=stop)
    except LockTimeout as exc:  # e.g. the daily log's lock: busy, not broken
        report["errors"].append(f"{path.name}: {_reason(exc)} (kept for the next run)")
        return True
    except Exception as exc:  # noqa: BLE001 - one payload's problem never stops the drain
        _record_failure(path, path.parent / FAILED, _reason(exc), report)
        return True
    report["turns"] += outcome.turns
    report["facts"] += outcome.facts
    report["warnings"].extend(w for w in outcome.warnings if w not in report["warnings"])
    if not outcome.finished:
        return False  # deadline reached between turns: the payload stays spooled
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:  # captured (and recorded): the next drain of it finds nothing new
        report["errors"].append(f"{path.name}: captured, but could not remove it ({_why(exc)})")
        return True
    report["drained"] += 1
    return True
