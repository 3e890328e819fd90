"""``suzent status``: a read-only report of every tier — capture buffer (logs, fact lines), vault (pages, current
claims, pages needing review or past ``stale_after``), MEMORY.md (zones), index (rows by source kind, fragments,
embedder), queues (hook spool, late lines, superseded, confirmations, tombstones), the dream (watermark, pending
work, next tick, retries, last results), lock holders, whether the memory is private to its user (one warning when
the home or a tier folder is open to other users) and the cheap part of ``suzent verify`` (seals, state, locks).
Never takes a lock for longer than a probe, never writes. Without ``with_index`` nothing imports LanceDB."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import Timeout

from suzent_cli import privacy
from suzent_cli.archive import APPEND_LOCK, list_logs
from suzent_cli.config import DreamConfig, Settings, check_engine
from suzent_cli.dream.gate import count_fact_lines, count_late_facts, pending_logs
from suzent_cli.dream.runner import DREAM_LOCK, HOLDER, DreamRunner
from suzent_cli.errors import ConfigInvalid
from suzent_cli.files import file_lock, read_text
from suzent_cli.vault import content_pages, ledger, skipped_warning
from suzent_cli.vault.dream_state import peek_state
from suzent_cli.vault.state import (
    MEMORY_MD_LOCK,
    STATE_LOCK,
    TombstonesUnreadable,
    read_confirmations,
    read_late_lines,
    read_superseded,
    read_tombstones,
)


def lock_state(lock_path: Path, holder: Path | None = None) -> dict[str, Any]:
    """``{"held": bool, ...holder note}`` by probing ``lock_path`` without waiting (a missing lock is free)."""
    if not lock_path.exists():
        return {"held": False}
    lock = file_lock(lock_path, timeout=0)
    try:
        lock.acquire()
    except Timeout:  # (a TimeoutError, so an OSError: caught first)
        info: dict[str, Any] = {"held": True}
        if holder is not None and holder.is_file():
            try:
                note = json.loads(read_text(holder))
            except (OSError, ValueError, RecursionError):
                note = None
            if isinstance(note, dict):  # only the fields the runner writes, of their types: never "held"
                if isinstance(note.get("pid"), int) and not isinstance(note["pid"], bool) and note["pid"] > 0:
                    info["pid"] = note["pid"]
                if isinstance(note.get("since"), str):
                    info["since"] = note["since"][:40]
        return info
    except OSError as exc:  # a read-only .state: the probe cannot open the lock file; say so, never fail status
        return {"held": None, "unknown": f"cannot probe ({exc.strerror or exc})"}
    lock.release()
    return {"held": False}


def index_counts(settings: Settings) -> dict[str, Any]:
    """Row counts of the search index by source type (opens LanceDB read-only); ``{"built": False}`` if absent."""
    from suzent_cli.index.store import ReadStore, table_exists

    if not table_exists(settings.paths.index_dir):
        return {"built": False}
    try:
        store = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home)
        by_source = store.ids_by_source()
    except Exception as exc:  # noqa: BLE001 - status reports, it does not fail
        return {"built": True, "error": " ".join(str(exc).split())[:200]}
    counts: dict[str, int] = {}
    for source, ids in by_source.items():
        kind = "legacy" if source is None else source.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + len(ids)
    try:
        name, dim = store.recorded_embedder()
    except Exception:  # noqa: BLE001
        name, dim = None, None
    return {"built": True, "rows": sum(counts.values()), "by_source": dict(sorted(counts.items())),
            "fragments": store.fragments(), "embedder": name, "dim": dim}


def vault_counts(settings: Settings) -> dict[str, Any]:
    """Content pages (total and per top-level zone), current claims (top-level bullets under ``## Claims`` that
    are not ended), pages flagged ``review: needs-review``, pages past ``stale_after``, pages that do not parse."""
    from suzent_cli.errors import SuzentError
    from suzent_cli.vault.pages import CLAIMS, meta_date, read_page

    vault = settings.paths.vault_dir
    skipped: list[str] = []
    refused: list[str] = []
    pages = content_pages(vault, skipped, refused)
    out: dict[str, Any] = {"pages": len(pages), "claims": 0, "needs_review": 0, "stale": 0, "unreadable": 0,
                           "by_zone": {}, "skipped_names": skipped_warning(skipped), "refused_links": refused}
    for path in pages:
        rel = path.relative_to(vault)
        zone = rel.parts[0] if len(rel.parts) > 1 else "."
        out["by_zone"][zone] = out["by_zone"].get(zone, 0) + 1
        try:
            page = read_page(path)
        except (SuzentError, OSError, UnicodeError, ValueError):
            out["unreadable"] += 1
            continue
        out["claims"] += sum(1 for c in page.claims(CLAIMS) if c.until is None)
        if page.meta.get("review") == "needs-review":
            out["needs_review"] += 1
        until = meta_date(page.meta.get("stale_after"))
        if until is not None and until < settings.today:
            out["stale"] += 1
    out["by_zone"] = dict(sorted(out["by_zone"].items()))
    return out


def memory_md_counts(settings: Settings) -> dict[str, Any]:
    """MEMORY.md: whether it exists, its generated zone's lines (0 without the marker: an unmarked file is all
    manual) and whether a manual zone with any content is present."""
    from suzent_cli.vault.memory_md import memory_path, split_zones

    path = memory_path(settings)
    out: dict[str, Any] = {"path": str(path), "exists": path.is_file(), "has_marker": False, "generated_lines": 0,
                           "manual_lines": 0, "manual": False}
    if not out["exists"]:
        return out
    try:
        zones = split_zones(path.read_bytes())
    except OSError as exc:
        out["error"] = exc.strerror or str(exc)
        return out
    lines = lambda data: len(data.decode("utf-8", "replace").splitlines())  # noqa: E731
    out.update(has_marker=zones.has_marker, generated_lines=lines(zones.generated), manual_lines=lines(zones.manual),
               manual=bool(zones.manual.strip()))
    return out


def spool_counts(settings: Settings) -> dict[str, Any]:
    """The hook spool's queue through :func:`suzent_cli.hooks.spool.pending` (``available`` is always True: the
    key stays for readers of ``status --json``)."""
    from suzent_cli.hooks import spool

    try:
        return {"available": True, "pending": int(spool.pending(settings)), "failed": int(spool.given_up(settings)),
                "failed_dir": str(spool.failed_dir(settings))}
    except Exception as exc:  # noqa: BLE001 - status reports, it does not fail
        return {"available": True, "pending": None, "error": " ".join(str(exc).split())[:200]}


def queue_counts(settings: Settings, warnings: list[str]) -> dict[str, int | None]:
    """What waits in the hand-off files and the spool: ``{spool, late_lines, superseded, confirmations, tombstones}``.
    A tombstone file that cannot be read whole (``tombstones`` None) or that lost tombstones the index applied adds a
    line to ``warnings``: status is where a person looks, so it shows the problem instead of failing."""
    paths = settings.paths
    queues = {"spool": spool_counts(settings), "late_lines": sum(1 for r in read_late_lines(paths.state_dir) if r),
              "superseded": len(read_superseded(paths.state_dir)),
              "confirmations": sum(1 for r in read_confirmations(paths.state_dir) if r),
              "tombstones": None}
    try:
        tombstones = read_tombstones(paths.state_dir)
        queues["tombstones"] = len(tombstones)
    except TombstonesUnreadable as exc:
        warnings.append(str(exc))
    else:  # a deleted or older tombstone file: the next index pass refuses; say so here (plain JSON, no LanceDB)
        from suzent_cli.index.indexer import lost_tombstones, lost_tombstones_message

        if lost := lost_tombstones(paths.index_dir, tombstones):
            warnings.append(lost_tombstones_message(paths.index_dir, paths.state_dir, lost))
    return queues


def lock_states(settings: Settings) -> dict[str, dict]:
    """Each lock suzent takes and whether it is held now (:func:`lock_state`), by what it guards."""
    paths = settings.paths
    return {
        "dream": lock_state(paths.state_dir / DREAM_LOCK, paths.state_dir / HOLDER),
        "capture": lock_state(paths.archive_dir / APPEND_LOCK),
        "state": lock_state(paths.state_dir / STATE_LOCK),
        "index": lock_state(paths.index_dir / ".indexer.lock"),
        "memory_md": lock_state(paths.state_dir / MEMORY_MD_LOCK),
    }


def privacy_state(settings: Settings, warnings: list[str]) -> dict[str, Any]:
    """``{"private": bool, "exposed": [{"path", "mode"}]}``: the roots (home, tier folders outside it) open to the
    group or others (:func:`suzent_cli.privacy.exposure`: one stat per root, nothing changed); an open one adds the
    one warning line to ``warnings`` (``suzent init`` fixes it)."""
    exposed = privacy.exposure(settings.paths)
    if exposed:
        warnings.append(privacy.exposure_warning(exposed))
    return {"private": not exposed, "exposed": privacy.exposure_json(exposed)}


def verify_row(settings: Settings) -> dict[str, Any]:
    """The cheap part of ``suzent verify`` (:func:`suzent_cli.verify.verify` with ``cheap``: the logs' seals, the
    watermark, the state files, locks and the roots' modes; no index scan, no LanceDB):
    ``{"ok", "checked", "violations": [first 5], "more": n}`` (no timing: a status relayed to a server prints what
    the cold one prints). Never raises."""
    from suzent_cli.verify import verify

    try:
        report = verify(settings, cheap=True)
    except Exception as exc:  # noqa: BLE001 - status reports, it does not fail
        return {"ok": None, "error": " ".join(str(exc).split())[:200]}
    violations = report.violations
    return {"ok": report.ok, "checked": {n: c.checked for n, c in report.checks.items()},
            "violations": violations[:5], "more": max(0, len(violations) - 5)}


def llm_row(settings: Settings, config: DreamConfig, warnings: list[str]) -> dict[str, Any]:
    """The model endpoint row of ``suzent status``: :func:`suzent_cli.claude.endpoint` (URL without credentials,
    local or not, model, key ``set``/``not needed``/``missing``, per-request bounds; never the key) plus
    ``extractor`` and ``dream``, the engine each would use (``claude`` or ``offline``; an unknown extractor name
    as given). Adds a warning when a local server is set but ``claude.model`` is still the default (a local server
    serves its own models: the requests would answer "model not found")."""
    from suzent_cli.claude import endpoint  # light: anthropic loads only when a client is built
    from suzent_cli.config import DEFAULT_CLAUDE_MODEL, canonical_engine

    row = endpoint(settings)
    extractor = canonical_engine(settings.extractor) or str(settings.extractor)
    if extractor == "auto":
        extractor = "claude" if settings.claude_configured else "offline"
    row |= {"extractor": extractor, "dream": config.engine_for(settings)}
    if row["local"] and row["model"] == DEFAULT_CLAUDE_MODEL and "claude" in (extractor, row["dream"]):
        warnings.append(f"claude.base_url is a local server but claude.model is still {DEFAULT_CLAUDE_MODEL!r}: "
                        "set it to a model the server serves (SUZENT_CLAUDE_MODEL, e.g. qwen3:8b)")
    if row["problem"]:
        warnings.append(row["problem"])
    return row


def status(settings: Settings, config: DreamConfig, *, with_index: bool = True) -> dict[str, Any]:
    """Everything ``suzent status`` shows, as a JSON-ready dict. Reads only."""
    paths = settings.paths
    open_warnings: list[str] = []
    private = privacy_state(settings, open_warnings)  # first: the one thing to fix before anything else
    text = ledger.read_ledger(paths.vault_dir)
    mark = ledger.watermark(text)
    pending = pending_logs(paths.archive_dir, mark, settings.today)
    state = peek_state(paths.state_dir, settings.clock)
    logs = list_logs(paths.archive_dir)
    today_log = paths.log_path(settings.today)
    decision = DreamRunner(settings, config, engine_factory=lambda name: None).decision(state=state)
    warnings = open_warnings + list(state.warnings)
    vault = vault_counts(settings)
    if vault["unreadable"]:
        warnings.append(f"{vault['unreadable']} vault page(s) do not parse (broken frontmatter?): not counted")
    if skipped := vault.pop("skipped_names"):
        warnings.append(skipped)
    warnings += vault.pop("refused_links")
    queues = queue_counts(settings, warnings)
    from suzent_cli.copies import find_copies  # names and a walk: no git

    if copies := find_copies(paths):
        warnings.append(f"{len(copies)} folder-sync conflict cop{'y' if len(copies) == 1 else 'ies'} (e.g. "
                        f"{copies[0][1].name}): suzent sync --fold-conflicts folds them back")
    try:
        check_engine(settings, config)
    except ConfigInvalid as exc:
        warnings.append(f"the next run will fail: {exc}")
    llm = llm_row(settings, config, warnings)
    return {
        "today": settings.today.isoformat(),
        "now": settings.clock.isoformat(timespec="seconds"),
        "watermark": mark.isoformat() if mark else None,
        "last_lint": (d.isoformat() if (d := ledger.last_lint(text)) else None),
        "logs": {"count": len(logs), "first": logs[0][0].isoformat() if logs else None,
                 "last": logs[-1][0].isoformat() if logs else None, "facts": count_fact_lines([p for _, p in logs]),
                 "today_facts": count_fact_lines([today_log]) if today_log.is_file() else 0},
        "pending": {"dates": [d.isoformat() for d, _ in pending], "facts": count_fact_lines([p for _, p in pending]),
                    "late": {d.isoformat(): line for d, line in decision.late},
                    "late_facts": count_late_facts(paths.archive_dir, dict(decision.late))},
        "next_tick": decision.to_json(),
        "engine": config.engine_for(settings),
        "llm": llm,
        "retries": {"max": config.max_retries, "failures": state.failures},
        "engine_backoff": state.engine_backoff,
        "in_flight": ({k: v for k, v in state.in_flight.items() if k != "snapshot"} if state.in_flight else None),
        "last_attempt": state.last_attempt.isoformat() if state.last_attempt else None,
        "last_lint_attempt": state.last_lint_attempt.isoformat() if state.last_lint_attempt else None,
        "last_ingest": state.last_ingest,
        "last_lint_result": state.last_lint,
        "vault": {**vault, "superseded_pending": queues["superseded"],
                  "confirmations_pending": queues["confirmations"], "tombstones": queues["tombstones"]},
        "memory_md": memory_md_counts(settings),
        "queues": queues,
        "locks": lock_states(settings),
        "index": index_counts(settings) if with_index else None,
        "privacy": private,
        "verify": verify_row(settings),
        "warnings": warnings,
    }
