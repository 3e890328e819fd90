"""``suzent status``: a read-only report of every tier — watermark, pending work, retries, last results,
locks and index row counts. Never takes a lock for longer than a probe, never writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ..archive import APPEND_LOCK, list_logs
from ..config import Settings
from ..files import read_text
from ..state import STATE_LOCK, read_confirmations, read_superseded, read_tombstones
from ..vault import content_pages
from . import ledger
from ..errors import ConfigInvalid
from .config import DreamConfig, check_engine
from .gate import count_fact_lines, count_late_facts, pending_logs
from .runner import DREAM_LOCK, HOLDER, DreamRunner
from .state import peek_state


def lock_state(lock_path: Path, holder: Path | None = None) -> dict[str, Any]:
    """``{"held": bool, ...holder note}`` by probing ``lock_path`` without waiting (a missing lock is free)."""
    if not lock_path.exists():
        return {"held": False}
    lock = FileLock(str(lock_path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        info: dict[str, Any] = {"held": True}
        if holder is not None and holder.is_file():
            try:
                info.update(json.loads(read_text(holder)))
            except (OSError, ValueError):
                pass
        return info
    lock.release()
    return {"held": False}


def index_counts(settings: Settings) -> dict[str, Any]:
    """Row counts of the search index by source type (opens LanceDB read-only); ``{"built": False}`` if absent."""
    from ..index.store import Store, table_exists  # noqa: PLC0415

    if not table_exists(settings.paths.index_dir):
        return {"built": False}
    try:
        store = Store.open_existing(settings.paths.index_dir)
        by_source = store.ids_by_source()
    except Exception as exc:  # noqa: BLE001 - status reports, it does not fail
        return {"built": True, "error": " ".join(str(exc).split())[:200]}
    counts: dict[str, int] = {}
    for source, ids in by_source.items():
        kind = "legacy" if source is None else source.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + len(ids)
    return {"built": True, "rows": sum(counts.values()), "by_source": dict(sorted(counts.items())),
            "fragments": store.fragments()}


def status(settings: Settings, config: DreamConfig, *, with_index: bool = True) -> dict[str, Any]:
    """Everything ``suzent status`` shows, as a JSON-ready dict. Reads only."""
    paths = settings.paths
    text = ledger.read_ledger(paths.vault_dir)
    mark = ledger.watermark(text)
    pending = pending_logs(paths.archive_dir, mark, settings.today)
    state = peek_state(paths.state_dir)
    logs = list_logs(paths.archive_dir)
    decision = DreamRunner(settings, config, engine_factory=lambda name: None).decision(state=state)
    warnings = list(state.warnings)
    try:
        check_engine(settings, config)
    except ConfigInvalid as exc:
        warnings.append(f"the next run will fail: {exc}")
    return {
        "today": settings.today.isoformat(),
        "now": settings.clock.isoformat(timespec="seconds"),
        "watermark": mark.isoformat() if mark else None,
        "last_lint": (d.isoformat() if (d := ledger.last_lint(text)) else None),
        "logs": {"count": len(logs), "first": logs[0][0].isoformat() if logs else None,
                 "last": logs[-1][0].isoformat() if logs else None},
        "pending": {"dates": [d.isoformat() for d, _ in pending], "facts": count_fact_lines([p for _, p in pending]),
                    "late": {d.isoformat(): line for d, line in decision.late},
                    "late_facts": count_late_facts(paths.archive_dir, dict(decision.late))},
        "next_tick": decision.to_json(),
        "engine": config.engine_for(settings),
        "retries": {"max": config.max_retries, "failures": state.failures},
        "in_flight": ({k: v for k, v in state.in_flight.items() if k != "snapshot"} if state.in_flight else None),
        "last_attempt": state.last_attempt.isoformat() if state.last_attempt else None,
        "last_lint_attempt": state.last_lint_attempt.isoformat() if state.last_lint_attempt else None,
        "last_ingest": state.last_ingest,
        "last_lint_result": state.last_lint,
        "vault": {"pages": len(content_pages(paths.vault_dir)), "superseded_pending": len(read_superseded(paths.state_dir)),
                  "confirmations_pending": len(read_confirmations(paths.state_dir)),
                  "tombstones": len(read_tombstones(paths.state_dir))},
        "locks": {
            "dream": lock_state(paths.state_dir / DREAM_LOCK, paths.state_dir / HOLDER),
            "capture": lock_state(paths.archive_dir / APPEND_LOCK),
            "state": lock_state(paths.state_dir / STATE_LOCK),
            "index": lock_state(paths.index_dir / ".indexer.lock"),
        },
        "index": index_counts(settings) if with_index else None,
        "warnings": warnings,
    }
