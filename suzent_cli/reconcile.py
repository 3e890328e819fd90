"""Reconcile: the runner-owned clean-up after a productive dream (``suzent reconcile``, and the dream's first
follow-up step). Three steps, in this order:

1. **Retire superseded.** Every line of ``notebook/.state/superseded.txt`` (log fact lines the dream folded into
   vault pages) becomes a tombstone of its fact text (``tombstones.jsonl``, once), then every daily log holding
   that text is reindexed explicitly — appending a tombstone changes no log's mtime, so a sweep alone would
   never revisit those days. Logs are reindexed in groups; ``superseded.txt`` is truncated LAST and only by
   the lines read, so lines the dream appends meanwhile survive.
2. **Sweep** (check_and_update): one indexer pass over changed files (vault pages the dream wrote, core files).
3. **Optimize**: compact the LanceDB table and delete versions older than ``keep_versions`` (default one
   minute: long enough for any query in flight, short enough that a retired or forgotten text does not linger
   in old versions), with fragments reported before and after.

Crash at any point replays rather than loses: tombstones are a set (re-adding is a no-op); the days to reindex
are recomputed from ALL lines still in ``superseded.txt`` (not only newly added tombstones); the file is only
truncated after every reindex succeeded. A re-run converges to the state of an uninterrupted run.

Rule for a text retired (or forgotten) and later captured again: tombstones are keyed by normalized text, so
the same words stay out of the index — they are already represented by the vault claim that absorbed them (or
were deliberately forgotten); a re-capture that differs in any word is a new fact and is indexed as usual.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suzent_cli.archive import list_logs, parse_fact_line, read_log
from suzent_cli.config import Settings
from suzent_cli.text import normalize
from suzent_cli.vault.state import SUPERSEDED_REASON, append_tombstones, read_superseded, truncate_superseded

REINDEX_GROUP = 8
KEEP_VERSIONS = dt.timedelta(minutes=1)


@dataclass
class ReconcileReport:
    """What one reconcile did (``--json``). ``rows_removed``/``rows_reembedded``: rows deleted from and added to the
    index by the explicit reindex (retired facts go; facts that had one as context, or were not indexed yet,
    come back or in). ``errors`` non-empty means superseded.txt was left for a re-run."""

    lines_read: int = 0
    lines_retired: int = 0
    lines_unparsed: int = 0
    tombstones_added: int = 0
    days_reindexed: list[str] = field(default_factory=list)
    rows_removed: int = 0
    rows_reembedded: int = 0
    swept: dict | None = None
    optimized: dict | None = None
    index_built: bool = True
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def fragments_compacted(self) -> tuple[int, int] | None:
        if not self.optimized:
            return None
        return self.optimized["fragments_before"], self.optimized["fragments_after"]

    def to_json(self) -> dict:
        out = asdict(self)
        out["fragments_compacted"] = list(self.fragments_compacted) if self.fragments_compacted else None
        return out


def logs_holding(archive_dir: Path, keys: set[str]) -> list[Path]:
    """Daily logs with at least one fact whose normalized text is in ``keys``, oldest first."""
    if not keys:
        return []
    out = []
    for _day, path in list_logs(archive_dir):
        try:
            if any(normalize(f.content) in keys for f in read_log(path)):
                out.append(path)
        except OSError:
            continue
    return out


def retire_superseded(settings: Settings, report: ReconcileReport, *, embedder=None) -> None:
    """Step 1 (module doc). Fills ``report``; leaves superseded.txt untouched when a reindex fails."""
    from suzent_cli.index.api import reindex_files  # lancedb only when there is something to do
    from suzent_cli.index.store import table_exists

    state_dir = settings.paths.state_dir
    lines = read_superseded(state_dir, warnings=report.warnings, timeout=settings.lock_timeout)
    report.lines_read = len(lines)
    if not lines:
        return
    texts = []
    for line in lines:
        parsed = parse_fact_line(line)
        if parsed:
            texts.append(parsed[1])
        else:
            report.lines_unparsed += 1
    if report.lines_unparsed:
        report.warnings.append(f"{report.lines_unparsed} line(s) of superseded.txt are not log fact lines; dropped")
    report.tombstones_added = len(append_tombstones(state_dir, texts, reason=SUPERSEDED_REASON,
                                                   timeout=settings.lock_timeout))
    days = logs_holding(settings.paths.archive_dir, {normalize(t) for t in texts})
    report.index_built = table_exists(settings.paths.index_dir)
    if report.index_built:
        for start in range(0, len(days), REINDEX_GROUP):
            group = days[start:start + REINDEX_GROUP]
            result = reindex_files(settings, group, embedder=embedder)
            # rows out and in: a fact that had a retired one as context is re-embedded without it (one out, one in)
            report.rows_removed += result.rows_removed
            report.rows_reembedded += result.rows_added
            if result.errors:
                report.errors += [f"{key}: {message}" for key, message in result.errors]
                report.errors.append("superseded.txt kept: the next reconcile retries every line")
                return
            report.days_reindexed += [p.name for p in group]
    truncate_superseded(state_dir, lines, timeout=settings.lock_timeout)
    report.lines_retired = len(texts)


def reconcile(settings: Settings, *, embedder=None, sweep: bool = True, optimize: bool = True,
              keep_versions: dt.timedelta = KEEP_VERSIONS) -> ReconcileReport:
    """Run the three steps (module doc). ``embedder``: for reindexing (None: the configured model, loaded only
    if a row needs embedding). Raises LockTimeout, :class:`IndexIncompatible` and the indexer's errors; a file
    that fails to reindex is reported in ``errors`` (and stops before the truncate) rather than raised."""
    from suzent_cli.index.api import optimize_index, run_index
    from suzent_cli.index.store import table_exists

    started = time.perf_counter()
    report = ReconcileReport()
    if embedder is None and table_exists(settings.paths.index_dir):
        from suzent_cli.index.api import index_embedder

        embedder = index_embedder(settings)  # one model load for every group and the sweep, not one per pass
    retire_superseded(settings, report, embedder=embedder)
    report.index_built = table_exists(settings.paths.index_dir)
    if not report.errors and report.index_built:
        if sweep:
            swept = run_index(settings, embedder=embedder)
            report.swept = swept.as_dict()
            report.errors += [f"{key}: {message}" for key, message in swept.errors]
        if optimize:
            report.optimized = optimize_index(settings, keep_versions)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
