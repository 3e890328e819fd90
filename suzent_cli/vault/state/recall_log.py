"""``recall_log.jsonl``: ``{"ts", "snippet", "source_type", "query"}`` per hit recall returned; best-effort.

Appended by recall (and the hooks' recall) under the state lock, read by promote (what was recalled most) and
forget (what a forget would purge), rewritten by forget (:func:`purge_recall_log`: a forgotten fact leaves no trace
in runner state). A line that is not a JSON object with a string ``snippet`` is skipped by every reader.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

from suzent_cli.files import append_locked, atomic_write, locked, read_text
from suzent_cli.vault.forgotten import Forgotten
from suzent_cli.vault.state import RECALL_LOG, STATE_LOCK


def append_recall_log(state_dir: Path, query: str, hits: list[dict], *, timeout: float = 2.0) -> None:
    """Best-effort: one JSON line per returned hit. Never raises (recall must not fail on its log). The query's
    secrets are redacted before it is logged (:func:`suzent_cli.guard.redact`; a key pasted into a query or a
    prompt must not land in the memory's state), then it is cut to 160 characters; the snippets are stored rows,
    screened when they were captured. A hit of a project (its ``scope``, issue 26) is logged with it, so what
    reads the log for the person's MEMORY.md can leave it out (:func:`recall_snippets` ``person_only``)."""
    from suzent_cli.guard.secrets import redact  # the detectors load only for a candidate token

    if not hits:
        return
    query = redact(query)[0][:160]
    ts = dt.datetime.now(dt.UTC).isoformat()
    record = "".join(
        json.dumps({"ts": ts, "snippet": h["content"][:160], "source_type": h.get("source_type", ""), "query": query}
                   | ({"scope": h["scope"]} if h.get("scope") else {}), ensure_ascii=False) + "\n"
        for h in hits
    )
    try:
        append_locked(state_dir / RECALL_LOG, record, lock_path=state_dir / STATE_LOCK, timeout=timeout)
    except Exception:  # noqa: BLE001 - best-effort by contract
        pass


def _snippets(lines: list[str]) -> Iterator[tuple[str, str | None]]:
    """``(line, snippet)`` for each line: its ``snippet`` when it is a JSON object with a string one, else None."""
    for line in lines:
        try:
            snippet = json.loads(line).get("snippet")
        except (ValueError, AttributeError, RecursionError):
            snippet = None
        yield line, snippet if isinstance(snippet, str) else None


def _lines(state_dir: Path) -> list[str]:
    path = state_dir / RECALL_LOG
    return read_text(path).splitlines() if path.is_file() else []


def recall_snippets(state_dir: Path, limit: int | None = None, *, person_only: bool = False) -> list[str]:
    """The non-blank ``snippet`` of each readable ``recall_log.jsonl`` line, oldest first; only the last ``limit``
    lines are read when given; ``person_only``: not those of a project's hit (a line with a ``scope``). Missing
    file → []. Raises OSError when the file cannot be read."""
    lines = _lines(state_dir)
    lines = lines[-limit:] if limit else lines
    if person_only:
        lines = [ln for ln in lines if '"scope"' not in ln or not _scope(ln)]
    return [s for _, s in _snippets(lines) if s and s.strip()]


def _scope(line: str) -> str:
    try:
        scope = json.loads(line).get("scope")
    except (ValueError, AttributeError, RecursionError):
        return ""
    return scope if isinstance(scope, str) else ""


def count_recall_log(state_dir: Path, key: str) -> int:
    """How many ``recall_log.jsonl`` lines hold the forgotten text ``key`` (what :func:`purge_recall_log` would
    drop), by the one matcher (:meth:`~suzent_cli.vault.forgotten.Forgotten.holds`). Read-only; missing file → 0."""
    only = Forgotten([key])
    return sum(1 for _, s in _snippets(_lines(state_dir)) if s is not None and only.holds(s))


def purge_recall_log(state_dir: Path, key: str, *, timeout: float) -> int:
    """Drop every ``recall_log.jsonl`` line whose snippet holds the forgotten text ``key`` (a forgotten fact leaves no
    trace in runner state), by the one matcher (:meth:`suzent_cli.vault.forgotten.Forgotten.holds`: whole words, a text
    of 1-2 words only by equality), so forgetting "eovi" keeps "Uses neovim". Atomic rewrite under the state lock;
    returns the number of lines dropped."""
    path = state_dir / RECALL_LOG
    only = Forgotten([key])
    if not only or not path.is_file():
        return 0
    with locked(state_dir / STATE_LOCK, timeout):
        kept, dropped = [], 0
        for line, snippet in _snippets(read_text(path).splitlines()):
            if snippet is not None and only.holds(snippet):
                dropped += 1
            else:
                kept.append(line)
        if dropped:
            atomic_write(path, "".join(line + "\n" for line in kept))
        return dropped
