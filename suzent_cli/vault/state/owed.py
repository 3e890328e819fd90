"""``.state/across_pages.jsonl``: the statements a dream folded that still owe the comparison across pages.

The rules engine compares each statement that replaced nothing on its own page with the current claims of the
scope's other pages, in said order while it folds (:func:`suzent_cli.dream.rules._fold_in_said_order`), and
writes those other pages after the statements' own. The statements are folded (their page's ``folded_through``
has passed them) once their page is written, so a run that fails on its deadline or is killed before the other
pages are written would never compare them again (:func:`suzent_cli.dream.rules.across_pages` finishes them). Each is therefore recorded here *before*
the page that makes it current is written, and dropped only after the pass that compared it has written what it
retired; the next dream (:meth:`suzent_cli.dream.runner.DreamRunner`) finishes the records it finds first.

One JSON line per statement::

    {"scope": "", "folder": "", "page": "2_Wiki/Concepts/Technical.md", "day": "2026-06-05",
     "claim": "I use light mode in every editor now", "source": "2026-06-05.md:5"}

``scope``: the person's (``""``) or a project key; ``folder``: the project's folder under ``1_Projects/`` (``""``
for the person); ``page``: vault-relative page the statement is a current claim of; ``day``: the day it was said;
``claim``: the claim's text; ``source``: its ``YYYY-MM-DD.md:LINE`` provenance or null. Appended and rewritten under
the state lock (``.state.lock``, one fsynced append; the drop is an atomic rewrite). A bad line (junk bytes, a wrong
type) is moved to ``.state/quarantine/across_pages.jsonl`` with one warning by the consuming reader: that statement
is then not compared across pages (its claim and the one it replaces stay current, and lint reports the pair).
Idempotent: a record compared twice retires nothing twice (the pass skips a record whose retirement is already on
disk).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suzent_cli.files import atomic_write, locked, read_text
from suzent_cli.vault.state import ACROSS_PAGES, STATE_LOCK
from suzent_cli.vault.state.records import append_jsonl, check_line, read_jsonl

MAX_CLAIM = 10_000  # characters: a longer "claim" is not one the engine wrote


@dataclass(frozen=True)
class Owed:
    """One statement that owes the across-pages comparison (module doc: the fields of a record)."""

    scope: str
    folder: str
    page: str
    day: dt.date
    claim: str
    source: str | None

    def record(self) -> dict[str, Any]:
        """The JSON record of this statement (the module doc's shape)."""
        return {"scope": self.scope, "folder": self.folder, "page": self.page, "day": self.day.isoformat(),
                "claim": self.claim, "source": self.source}


def _valid(record: Any) -> dict | str:
    """``record`` when it has the module doc's shape, else why not."""
    if not isinstance(record, dict):
        return "not an object"
    for key in ("scope", "folder", "page", "claim"):
        if not isinstance(record.get(key), str):
            return f"{key} is not a string"
    page, folder = record["page"], record["folder"]
    if (not page.endswith(".md") or page.startswith(("/", "\\")) or ".." in page.split("/")
            or "/" in folder or ".." == folder or "\\" in folder):
        return "page or folder is not a path inside the vault"
    if not record["claim"].strip() or len(record["claim"]) > MAX_CLAIM:
        return "claim is empty or too long"
    if record.get("source") is not None and not isinstance(record["source"], str):
        return "source is not a string"
    try:
        if dt.date.fromisoformat(str(record.get("day"))).isoformat() != record.get("day"):
            raise ValueError
    except ValueError:
        return "day is not a YYYY-MM-DD date"
    return record


def _owed(record: dict) -> Owed:
    return Owed(record["scope"], record["folder"], record["page"], dt.date.fromisoformat(record["day"]),
                record["claim"], record.get("source"))


def read_owed(state_dir: Path, *, warnings: list[str] | None = None, timeout: float = 10.0) -> list[Owed]:
    """The statements still owed, in file order, without repeats. ``warnings`` a list (the dream): bad lines are
    quarantined with one warning there (:func:`~suzent_cli.vault.state.records.read_jsonl`); None (read-only):
    they are skipped. Missing file → ``[]``. Raises LockTimeout/OSError when the file cannot be read."""
    records = read_jsonl(state_dir, ACROSS_PAGES, _valid, warnings=warnings, timeout=timeout)
    return list(dict.fromkeys(_owed(r) for r in records if r is not None))


def bad_owed(state_dir: Path) -> int:
    """How many lines of the file a consuming reader would quarantine (read-only, for ``suzent verify``)."""
    return sum(1 for r in read_jsonl(state_dir, ACROSS_PAGES, _valid) if r is None)


def owe(state_dir: Path, statements: list[Owed], *, timeout: float) -> None:
    """Record ``statements`` as owing the comparison (one locked, fsynced append; a statement already recorded is
    recorded again, which :func:`read_owed` folds into one). Raises LockTimeout/OSError: the caller goes on with
    the statements in memory (a crash then loses only their comparison, never a claim)."""
    append_jsonl(state_dir, ACROSS_PAGES, [s.record() for s in statements], timeout=timeout)


def settle(state_dir: Path, done: list[Owed], *, timeout: float) -> None:
    """Drop ``done`` (every copy of each) from the file, keeping the lines of any other statement and lines a
    reader could not decode (the consuming reader quarantines those); the file is removed when nothing is left.
    Atomic rewrite under the state lock. Raises LockTimeout/OSError (the records stay; a re-run retires nothing
    twice)."""
    path = state_dir / ACROSS_PAGES
    if not done or not path.is_file():
        return
    gone = set(done)
    with locked(state_dir / STATE_LOCK, timeout):
        keep = []
        for line in read_text(path).split("\n"):
            if not line.strip():
                continue
            record = check_line(line, _valid)
            if isinstance(record, dict) and _owed(record) in gone:
                continue
            keep.append(line + "\n")
        if keep:
            atomic_write(path, "".join(keep))
        else:
            path.unlink()
