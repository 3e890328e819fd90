"""``log.md`` at the vault root: the runner-owned ledger of dream runs, and the one owner of the watermark.

Format (compat reference §1): entries appended as ``\\n## [<run date>] <kind> | …``. The watermark is the LAST
``watermark=YYYY-MM-DD`` token in file order (not the maximum), so a person's manual ingest entry using the same
token counts too. The last lint is the last ``## [YYYY-MM-DD] lint`` heading. No engine may write this file:
the claude engine's tools refuse it, and only :func:`append_ledger` appends to it (one locked, fsynced write).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from suzent_cli.files import append_locked, read_text
from suzent_cli.vault import LOG_SEED
from suzent_cli.vault.state import LEDGER_LOCK as LOCK_NAME
from suzent_cli.vault.state import STATE_DIR

LEDGER = "log.md"
LEDGER_LOCK = f"{STATE_DIR}/{LOCK_NAME}"  # relative to the vault dir
WATERMARK_RE = re.compile(r"watermark=(\d{4}-\d{2}-\d{2})")
LINT_RE = re.compile(r"##\s*\[(\d{4}-\d{2}-\d{2})\]\s*lint\b")


def _dates(pattern: re.Pattern[str], text: str) -> list[dt.date]:
    out = []
    for m in pattern.finditer(text):
        try:
            out.append(dt.date.fromisoformat(m.group(1)))
        except ValueError:
            continue
    return out


def read_ledger(vault_dir: Path) -> str:
    """The text of ``log.md`` ('' when missing)."""
    path = vault_dir / LEDGER
    return read_text(path) if path.is_file() else ""


def watermark(text: str) -> dt.date | None:
    """The watermark in ledger ``text``: the last valid ``watermark=`` date in file order, or None."""
    found = _dates(WATERMARK_RE, text)
    return found[-1] if found else None


def last_lint(text: str) -> dt.date | None:
    """The date of the last ``## [date] lint`` entry in ledger ``text``, or None when never linted."""
    found = _dates(LINT_RE, text)
    return found[-1] if found else None


def ingest_entry(run_date: dt.date, end: dt.date, note: str = "") -> str:
    """The entry of a productive ingest: ``## [run date] ingest | daily logs  watermark=T`` (``note`` goes in
    parentheses after ``daily logs``, e.g. for a batch with nothing to fold)."""
    what = f"daily logs ({note})" if note else "daily logs"
    return f"## [{run_date.isoformat()}] ingest | {what}  watermark={end.isoformat()}"


def skip_entry(run_date: dt.date, start: dt.date | None, end: dt.date, failures: int, note: str = "") -> str:
    """The entry of a batch skipped after ``failures`` failed attempts; it advances the watermark to ``end``.
    ``start`` None: the batch held only late lines of consolidated days (``note`` names them)."""
    what = f"daily logs {start.isoformat()}..{end.isoformat()}" if start else "late lines"
    return (f"## [{run_date.isoformat()}] ingest | skipped {what}{f' ({note})' if note else ''} "
            f"after {failures} failed attempts  watermark={end.isoformat()}")


def lint_entry(run_date: dt.date, counts: dict[str, int]) -> str:
    """The entry of a lint pass, with its counts: ``## [date] lint  broken_links=0 orphans=2 …``."""
    tail = " ".join(f"{k}={v}" for k, v in counts.items())
    return f"## [{run_date.isoformat()}] lint" + (f"  {tail}" if tail else "")


def append_ledger(vault_dir: Path, entry: str, *, timeout: float) -> None:
    """Append ``entry`` to ``log.md`` (seeded ``# Notebook Log`` if missing) as ``\\n`` + entry + ``\\n``.

    One locked ``O_APPEND`` write, fsynced: a crash leaves the entry whole or absent. Raises LockTimeout/OSError.
    """
    append_locked(vault_dir / LEDGER, "\n" + entry.rstrip() + "\n", lock_path=vault_dir / LEDGER_LOCK,
                  timeout=timeout, header=LOG_SEED)
