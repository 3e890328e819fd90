"""The catalogue of runner-owned state: every file under ``<vault>/.state/`` (and the home-level fallback), its
lock, its format, its writer and its reader. Every module that opens one of these files takes its name from here.

Paths are relative to ``<vault>/.state/`` (:attr:`suzent_cli.config.Paths.state_dir`) unless they start with
``<home>/``. Locks are :mod:`filelock` files in the same folder; "state lock" is :data:`STATE_LOCK`. Every rewrite is
atomic (temp file, fsync, rename); every append is one locked, fsynced write (:mod:`suzent_cli.files`).

| file | lock | format | written by | read by | purpose |
| --- | --- | --- | --- | --- | --- |
| `tombstones.jsonl` | `.state.lock` | JSON lines `{"content", "reason"}` | forget, reconcile: `state.tombstones.append_tombstones`; sync: the union with another machine's | indexer, forget, reconcile, dream, legacy: `read_tombstones`, `read_forgotten` | texts never indexed again; reason `forget` also keeps them out of the vault |
| `superseded.txt` | `.state.lock` | text, one log fact line per line | dream runner: `state.handoff.append_superseded` | reconcile: `read_superseded`, `truncate_superseded` | log lines a dream folded into claims, for reconcile to retire |
| `confirmations.jsonl` | `.state.lock` | JSON lines `{"ts", "day", "time", "content", "category", "matched", …}` | capture: `state.handoff.append_confirmations`; sync: the three-way merge with another machine's | dream: `read_confirmations`, `truncate_confirmations`; status | restatements capture recognised instead of logging them, for the dream to fold |
| `late_lines.jsonl` | `.state.lock` | JSON lines `{"ts", "day", "from_line"}` | daily-log appender: `state.handoff.append_late_lines` | dream: `read_late_lines`, `truncate_late_lines`; status | lines appended to a past day's log, for the dream to fold |
| `recall_log.jsonl` | `.state.lock` | JSON lines `{"ts", "snippet", "source_type", "query"}` (+ `"scope"` for a project's hit) | recall, hook recall: `state.recall_log.append_recall_log`; forget: `purge_recall_log` | promote: `recall_snippets`; forget: `count_recall_log` | what recall returned (best-effort) |
| `quarantine/<file>.jsonl` | `the file's own lock` | JSON lines `{"ts", "file", "reason", "record"}` | the reader of `<file>`: `state.records.quarantine` | people | records a reader refused, kept instead of dropped |
| `across_pages.jsonl` | `.state.lock` | JSON lines `{"scope", "folder", "page", "day", "claim", "source"}` | rules engine: `state.owed.owe` (before a page write), `settle` (after the pass) | dream runner, rules engine: `read_owed` | folded statements that still owe the comparison with the scope's other pages |
| `dream_state.json` | `.dream.lock` | JSON object, version 1 | dream runner: `vault.dream_state.save_state` | dream runner: `load_state`; status: `peek_state` | retry counters, last results, the run in flight, pending follow-ups |
| `dream_state.json.corrupt` | `.dream.lock` | the unparseable dream state as it was | `vault.dream_state.load_state` | people | an unreadable dream state, moved aside |
| `.dream.lock` | - | lock file | dream runner, lint, forget (hold it) | status (probes it) | the consolidation lock: one dream, lint or forget at a time |
| `.dream.lock.holder` | `.dream.lock` | JSON `{"pid", "since"}` | dream runner | status, dry-run | who holds the consolidation lock (informational) |
| `memory_md.json` | `.memory_md.lock` | JSON `{"version": 1, "generated": [sha256, …]}` | MEMORY.md writers: `vault.memory_md` | `vault.memory_md` | proof that suzent wrote an unmarked MEMORY.md |
| `.memory_md.lock` | - | lock file | MEMORY.md writers: `vault.memory_md` | status (probes it) | serializes suzent's MEMORY.md writers |
| `.pages.lock` | - | lock file | vault page writers: `vault.pages.write_page`, the dream's tools | - | serializes suzent's page writers (people edit without it) |
| `.ledger.lock` | - | lock file | `vault.ledger.append_ledger` | - | serializes `log.md` appends |
| `.state.lock` | - | lock file | every writer of the files it guards | - | guards the tombstones, the hand-offs and the recall log |
| `claude_code.json` | `.claude_code.lock` | JSON `{session_id: {"last_uuid", "offset", "last_ts", "transcript", "updated"}}` | Claude Code hook capture: `hooks.capture` | `hooks.capture` | how far each session's transcript was captured |
| `.claude_code.lock` | - | lock file | `hooks.capture` | - | serializes `claude_code.json` rewrites |
| `spool/` | `spool/.<session>.lock` | one JSON payload per file | hooks: `hooks.spool` | hook drain, status | hook payloads waiting to be captured |
| `spool/failed/` | - | payload + `.error.txt` | hook drain: `hooks.spool` | people, status | payloads given up after 3 failed attempts |
| `<home>/spool/` | `spool/.<session>.lock` | as `spool/` | hooks: `hooks.spool` | hook drain, status | the fallback when `.state/spool/` cannot be written |

Not here: the index's own files live in the index dir (``index_state.json``, ``.indexer.lock``,
:mod:`suzent_cli.index.indexer`), the daily logs' append lock in the archive dir (``.append.lock``,
:mod:`suzent_cli.archive`), and a page's own lock next to it (``.<page>.lock``, when a writer names none).

The family modules hold the readers and writers: :mod:`.tombstones`, :mod:`.handoff` (superseded, confirmations,
late lines), :mod:`.owed` (the across-pages pass owed), :mod:`.recall_log`, :mod:`.records` (the shared JSON-lines reader and the quarantine); the dream
state is :mod:`suzent_cli.vault.dream_state`, the MEMORY.md proof :mod:`suzent_cli.vault.memory_md`. Their public
names are re-exported here, so ``from suzent_cli.vault.state import read_tombstones`` is the usual import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# --- the names (every module that opens a state file takes its name from here) -----------------------------------

TOMBSTONES = "tombstones.jsonl"
SUPERSEDED = "superseded.txt"
CONFIRMATIONS = "confirmations.jsonl"
LATE_LINES = "late_lines.jsonl"
RECALL_LOG = "recall_log.jsonl"
QUARANTINE = "quarantine"
DREAM_STATE = "dream_state.json"
ACROSS_PAGES = "across_pages.jsonl"
DREAM_STATE_CORRUPT = DREAM_STATE + ".corrupt"
DREAM_LOCK = ".dream.lock"
DREAM_HOLDER = ".dream.lock.holder"
MEMORY_MD_STATE = "memory_md.json"
MEMORY_MD_LOCK = ".memory_md.lock"
PAGES_LOCK = ".pages.lock"
LEDGER_LOCK = ".ledger.lock"
STATE_LOCK = ".state.lock"
CLAUDE_CODE = "claude_code.json"
CLAUDE_CODE_LOCK = ".claude_code.lock"
SPOOL = "spool"
SPOOL_FAILED = "failed"
STATE_DIR = ".state"  # under the vault: ``<vault>/.state``


@dataclass(frozen=True)
class StateFile:
    """One row of the catalogue (the module doc's table): ``name`` relative to ``.state/`` (a folder ends in ``/``;
    ``<home>/…`` for the home-level fallback), ``lock`` its lock's name ("" for a lock itself or an unlocked
    file), ``format``, its ``writer`` and ``reader`` (modules or stages) and its ``purpose``."""

    name: str
    lock: str
    format: str
    writer: str
    reader: str
    purpose: str


CATALOGUE: tuple[StateFile, ...] = (  # the module doc's table is table() of this (a test keeps them equal)
    StateFile(TOMBSTONES, STATE_LOCK, 'JSON lines `{"content", "reason"}`',
              "forget, reconcile: `state.tombstones.append_tombstones`; sync: the union with another machine's",
              "indexer, forget, reconcile, dream, legacy: `read_tombstones`, `read_forgotten`",
              "texts never indexed again; reason `forget` also keeps them out of the vault"),
    StateFile(SUPERSEDED, STATE_LOCK, "text, one log fact line per line", "dream runner: `state.handoff.append_superseded`",
              "reconcile: `read_superseded`, `truncate_superseded`",
              "log lines a dream folded into claims, for reconcile to retire"),
    StateFile(CONFIRMATIONS, STATE_LOCK, 'JSON lines `{"ts", "day", "time", "content", "category", "matched", …}`',
              "capture: `state.handoff.append_confirmations`; sync: the three-way merge with another machine's",
              "dream: `read_confirmations`, `truncate_confirmations`; status",
              "restatements capture recognised instead of logging them, for the dream to fold"),
    StateFile(LATE_LINES, STATE_LOCK, 'JSON lines `{"ts", "day", "from_line"}`',
              "daily-log appender: `state.handoff.append_late_lines`",
              "dream: `read_late_lines`, `truncate_late_lines`; status",
              "lines appended to a past day's log, for the dream to fold"),
    StateFile(RECALL_LOG, STATE_LOCK, 'JSON lines `{"ts", "snippet", "source_type", "query"}` (+ `"scope"` for a '
              "project's hit)",
              "recall, hook recall: `state.recall_log.append_recall_log`; forget: `purge_recall_log`",
              "promote: `recall_snippets`; forget: `count_recall_log`", "what recall returned (best-effort)"),
    StateFile(QUARANTINE + "/<file>.jsonl", "the file's own lock", 'JSON lines `{"ts", "file", "reason", "record"}`',
              "the reader of `<file>`: `state.records.quarantine`", "people",
              "records a reader refused, kept instead of dropped"),
    StateFile(ACROSS_PAGES, STATE_LOCK, 'JSON lines `{"scope", "folder", "page", "day", "claim", "source"}`',
              "rules engine: `state.owed.owe` (before a page write), `settle` (after the pass)",
              "dream runner, rules engine: `read_owed`",
              "folded statements that still owe the comparison with the scope's other pages"),
    StateFile(DREAM_STATE, DREAM_LOCK, "JSON object, version 1", "dream runner: `vault.dream_state.save_state`",
              "dream runner: `load_state`; status: `peek_state`",
              "retry counters, last results, the run in flight, pending follow-ups"),
    StateFile(DREAM_STATE_CORRUPT, DREAM_LOCK, "the unparseable dream state as it was", "`vault.dream_state.load_state`",
              "people", "an unreadable dream state, moved aside"),
    StateFile(DREAM_LOCK, "", "lock file", "dream runner, lint, forget (hold it)", "status (probes it)",
              "the consolidation lock: one dream, lint or forget at a time"),
    StateFile(DREAM_HOLDER, DREAM_LOCK, 'JSON `{"pid", "since"}`', "dream runner", "status, dry-run",
              "who holds the consolidation lock (informational)"),
    StateFile(MEMORY_MD_STATE, MEMORY_MD_LOCK, 'JSON `{"version": 1, "generated": [sha256, …]}`',
              "MEMORY.md writers: `vault.memory_md`", "`vault.memory_md`",
              "proof that suzent wrote an unmarked MEMORY.md"),
    StateFile(MEMORY_MD_LOCK, "", "lock file", "MEMORY.md writers: `vault.memory_md`", "status (probes it)",
              "serializes suzent's MEMORY.md writers"),
    StateFile(PAGES_LOCK, "", "lock file", "vault page writers: `vault.pages.write_page`, the dream's tools", "-",
              "serializes suzent's page writers (people edit without it)"),
    StateFile(LEDGER_LOCK, "", "lock file", "`vault.ledger.append_ledger`", "-", "serializes `log.md` appends"),
    StateFile(STATE_LOCK, "", "lock file", "every writer of the files it guards", "-",
              "guards the tombstones, the hand-offs and the recall log"),
    StateFile(CLAUDE_CODE, CLAUDE_CODE_LOCK, 'JSON `{session_id: {"last_uuid", "offset", "last_ts", "transcript", '
              '"updated"}}`', "Claude Code hook capture: `hooks.capture`", "`hooks.capture`",
              "how far each session's transcript was captured"),
    StateFile(CLAUDE_CODE_LOCK, "", "lock file", "`hooks.capture`", "-", "serializes `claude_code.json` rewrites"),
    StateFile(SPOOL + "/", "spool/.<session>.lock", "one JSON payload per file", "hooks: `hooks.spool`",
              "hook drain, status", "hook payloads waiting to be captured"),
    StateFile(f"{SPOOL}/{SPOOL_FAILED}/", "", "payload + `.error.txt`", "hook drain: `hooks.spool`", "people, status",
              "payloads given up after 3 failed attempts"),
    StateFile(f"<home>/{SPOOL}/", "spool/.<session>.lock", "as `spool/`", "hooks: `hooks.spool`",
              "hook drain, status", "the fallback when `.state/spool/` cannot be written"),
)


SYNC_POLICY: dict[str, str] = {  # every catalogue row: does it travel with `suzent sync`? (one place; a test checks)
    TOMBSTONES: "travels",  # a forget is total on every machine; three-way merge of record sets
    CONFIRMATIONS: "travels",  # restatements captured anywhere reach the machine that dreams
    SUPERSEDED: "local",  # the dreaming machine's queue for its own reconcile; what it retires travels as tombstones
    LATE_LINES: "local",  # names line numbers of this machine's logs; sync records the late lines it brings
    RECALL_LOG: "local",  # what this machine recalled (promote's order is per machine)
    QUARANTINE + "/<file>.jsonl": "local",
    ACROSS_PAGES: "local",  # the dreaming machine's unfinished pass over its own pages
    DREAM_STATE: "local",  # retry counters, the run in flight: of this machine's dream
    DREAM_STATE_CORRUPT: "local",
    DREAM_LOCK: "local",
    DREAM_HOLDER: "local",
    MEMORY_MD_STATE: "local",
    MEMORY_MD_LOCK: "local",
    PAGES_LOCK: "local",
    LEDGER_LOCK: "local",
    STATE_LOCK: "local",
    CLAUDE_CODE: "local",  # offsets into this machine's transcripts
    CLAUDE_CODE_LOCK: "local",
    SPOOL + "/": "local",
    f"{SPOOL}/{SPOOL_FAILED}/": "local",
    f"<home>/{SPOOL}/": "local",
}
"""Which ``.state/`` files ``suzent sync`` carries between machines (``travels``) and which stay on the machine
that wrote them (``local``). :func:`travelling` is the one list sync copies; a catalogue row without a policy fails
``tests/test_sync.py``."""


def travelling() -> tuple[str, ...]:
    """The names (relative to ``.state/``) of the state files that travel with ``suzent sync``, in catalogue order."""
    return tuple(r.name for r in CATALOGUE if SYNC_POLICY.get(r.name) == "travels")


def table() -> str:
    """The catalogue as a Markdown table (the one in the module doc; docs/FORMAT.md copies it)."""
    rows = [("file", "lock", "format", "written by", "read by", "purpose"), ("---",) * 6]
    rows += [(f"`{r.name}`", f"`{r.lock}`" if r.lock else "-", r.format, r.writer, r.reader, r.purpose)
             for r in CATALOGUE]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in rows)


def state_dir_of(vault_dir: Path) -> Path:
    """``<vault>/.state``: where the catalogue's files live (the same as ``Settings.paths.state_dir``)."""
    return vault_dir / STATE_DIR


def entry(name: str) -> StateFile:
    """The catalogue row of ``name`` (KeyError for a name the catalogue does not list)."""
    for row in CATALOGUE:
        if row.name == name:
            return row
    raise KeyError(name)


# --- the readers and writers, re-exported (imported last: the family modules take their names from above) --------

from suzent_cli.vault.state.handoff import (  # noqa: E402
    MAX_FACT_LINE,
    append_confirmations,
    append_late_lines,
    append_superseded,
    bad_superseded,
    read_confirmations,
    read_late_lines,
    read_superseded,
    truncate_confirmations,
    truncate_late_lines,
    truncate_superseded,
    valid_confirmation,
    valid_late_line,
)
from suzent_cli.vault.state.recall_log import append_recall_log, count_recall_log, purge_recall_log, recall_snippets  # noqa: E402
from suzent_cli.vault.state.records import MAX_LINE, Validator, quarantine, quarantine_path, read_jsonl  # noqa: E402
from suzent_cli.vault.state.tombstones import (  # noqa: E402
    FORGET,
    QUARANTINE_TIMEOUT,
    SUPERSEDED_REASON,
    TombstonesUnreadable,
    append_tombstones,
    read_forgotten,
    read_tombstones,
)

__all__ = [
    "CATALOGUE", "CLAUDE_CODE", "CLAUDE_CODE_LOCK", "CONFIRMATIONS", "DREAM_HOLDER", "DREAM_LOCK", "DREAM_STATE",
    "DREAM_STATE_CORRUPT", "FORGET", "LATE_LINES", "LEDGER_LOCK", "MAX_FACT_LINE", "MAX_LINE", "MEMORY_MD_LOCK",
    "MEMORY_MD_STATE", "PAGES_LOCK", "QUARANTINE", "QUARANTINE_TIMEOUT", "RECALL_LOG", "SPOOL", "SPOOL_FAILED",
    "STATE_DIR", "STATE_LOCK", "SUPERSEDED", "SYNC_POLICY", "travelling", "SUPERSEDED_REASON", "StateFile", "TOMBSTONES", "TombstonesUnreadable",
    "Validator", "append_confirmations", "append_late_lines", "append_recall_log", "append_superseded",
    "append_tombstones", "bad_superseded", "count_recall_log", "entry", "purge_recall_log", "quarantine",
    "quarantine_path", "read_confirmations", "read_forgotten", "read_jsonl", "read_late_lines",
    "read_superseded", "read_tombstones", "recall_snippets", "state_dir_of", "truncate_confirmations",
    "truncate_late_lines", "truncate_superseded", "valid_confirmation", "valid_late_line",
]
