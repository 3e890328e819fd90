"""claude-mem's SQLite database (``~/.claude-mem/claude-mem.db``).

Format (github.com/thedotmack/claude-mem, ``src/services/sqlite/schema.sql`` and the migrations of
``src/services/sqlite/migrations/runner.ts``): table ``observations`` (``id``, ``project``, ``type``, ``title``,
``subtitle``, ``facts`` (a JSON list of strings), ``narrative``, ``created_at`` (ISO), ``created_at_epoch``, …),
``session_summaries`` (``id``, ``project``, ``request``, ``investigated``, ``learned``, ``completed``,
``next_steps``, ``notes``, ``created_at``, …) and ``sdk_sessions``. ``project`` is a name: the basename of the
session's git repository root, else of its working directory (claude-mem's ``getProjectName``).

Read with the standard library only, read-only (``file:…?mode=ro``; the database is never changed, and a
database claude-mem holds open in WAL mode is read as of its last checkpoint plus the WAL). One memory per
element of an observation's ``facts`` (locator ``o<id>.<n>``, category = the observation's ``type``: discovery,
decision, bugfix, feature, refactor, change), or, for an observation without facts, its title and subtitle
(``o<id>.title``); its narrative is not imported (a paragraph retelling the facts). From a session summary, its
``learned`` text (``s<id>.learned``, category ``learned``); the request, investigation, completed work and next
steps describe a session, not durable knowledge. The date and time are ``created_at``'s (else
``created_at_epoch``). The scope is the project named (:func:`suzent_cli.transfer.resolve_project`: the one
project already in the logs with that name, else ``dir:<name>``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from suzent_cli.errors import InputInvalid
from suzent_cli.transfer import Memory, ReadContext, instant, loads_noting, resolve_project

NEEDED = {"observations": ("id", "project", "type", "title", "facts", "created_at")}


def default_path() -> Path:
    base = os.environ.get("CLAUDE_MEM_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".claude-mem")
    return Path(base) / "claude-mem.db"


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _when(row: dict, where: str):
    day, time = instant(row.get("created_at"), where) if row.get("created_at") else (None, None)
    if day is None and row.get("created_at_epoch") is not None:
        day, time = instant(row["created_at_epoch"], where)
    return day, time


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    if path.is_dir():
        path = path / "claude-mem.db"
    file = path.resolve()
    try:
        db = sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputInvalid(f"{path}: cannot open as a SQLite database ({exc})") from None
    damaged = [0]

    def text_of(raw: bytes) -> str:  # a TEXT value that is not UTF-8 costs only its bad bytes, not the import
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            damaged[0] += 1
            return raw.decode("utf-8", errors="replace")

    try:
        db.row_factory = sqlite3.Row
        db.text_factory = text_of
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise InputInvalid(f"{path}: not a readable SQLite database ({exc})") from None
        if "observations" not in tables:
            raise InputInvalid(f"{path}: not a claude-mem database (no observations table)")
        missing = [c for c in NEEDED["observations"] if c not in _columns(db, "observations")]
        if missing:
            raise InputInvalid(f"{path}: its observations table lacks {', '.join(missing)} (an unknown claude-mem "
                               "schema)")
        cols = _columns(db, "observations")
        extra = ", ".join(c for c in ("subtitle", "created_at_epoch") if c in cols)
        out: list[Memory] = []
        scopes: dict[str, str] = {}

        def scope(project: object) -> str:
            name = str(project or "")
            if name not in scopes:
                scopes[name] = resolve_project(name, ctx)
            return scopes[name]

        try:
            rows = db.execute(f"SELECT id, project, type, title, facts, created_at{', ' + extra if extra else ''} "
                              "FROM observations ORDER BY id")
            for r in rows:
                row = dict(r)
                where = f"{path}: observation {row['id']}"
                day, time = _when(row, where)
                try:
                    facts = loads_noting(row["facts"], where, ctx) if row["facts"] else []
                except (ValueError, RecursionError):
                    raise InputInvalid(f"{where}: facts is not a JSON list") from None
                if not isinstance(facts, list):
                    raise InputInvalid(f"{where}: facts is not a JSON list")
                category = str(row["type"] or "observation")
                texts = [(f"o{row['id']}.{n}", f) for n, f in enumerate(facts, start=1)
                         if isinstance(f, str) and f.strip()]
                if not texts:
                    title = " — ".join(str(row[k]) for k in ("title", "subtitle") if row.get(k))
                    texts = [(f"o{row['id']}.title", title)] if title.strip() else []
                if not texts:
                    ctx.skip("observations with no facts and no title")
                for locator, text in texts:
                    out.append(Memory(text, category, scope(row["project"]), file, locator, day=day, time=time))
            if "session_summaries" in tables and {"id", "project", "learned", "created_at"} <= _columns(
                    db, "session_summaries"):
                ep = ", created_at_epoch" if "created_at_epoch" in _columns(db, "session_summaries") else ""
                for r in db.execute(f"SELECT id, project, learned, created_at{ep} FROM session_summaries ORDER BY id"):
                    row = dict(r)
                    if not (isinstance(row["learned"], str) and row["learned"].strip()):
                        continue
                    day, time = _when(row, f"{path}: session summary {row['id']}")
                    out.append(Memory(row["learned"], "learned", scope(row["project"]), file, f"s{row['id']}.learned",
                                      day=day, time=time))
        except sqlite3.DatabaseError as exc:
            raise InputInvalid(f"{path}: cannot read ({exc})") from None
        if damaged[0]:
            ctx.warnings.append(f"{path}: replaced invalid UTF-8 byte sequence(s) with U+FFFD in {damaged[0]} "
                                "value(s)")
        return out
    finally:
        db.close()
