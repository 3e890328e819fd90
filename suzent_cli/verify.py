"""``suzent verify``: prove the home's invariants, in the spirit of ``git fsck``; ``--repair`` does what is safe.

Six checks, each a list of violations, one line each, ``<check>: <file or row>: <what>``:

1. ``index_backed`` — every index row is backed by a line or chunk that exists now. The rows the markdown yields
   now are recomputed without embedding (:func:`suzent_cli.index.sources.documents`: row ids derive from
   content) and diffed with the table's ids (one scan of ``id``, ``source``, ``content``; never the vectors).
   A row its file no longer yields is *stale* when the file changed since the last index pass (or the tombstones
   did): ``suzent index`` removes it; otherwise it is a row that should not exist. Legacy rows (no ``source``,
   the original app's) are counted as legacy, never as unbacked.
2. ``facts_indexed`` — every live fact line of every daily log is in the index, unless the indexer's one filter
   (tombstoned, forgotten) leaves it out. Lines captured since the last pass are named as such (recall finds them
   meanwhile through the pending search).
3. ``tombstones`` — no tombstoned or forgotten text is recallable: no markdown-derived row's ``content`` is a
   tombstoned text or holds a forgotten one, as the indexer's filter matches them; nor is a legacy row's (recall
   returns legacy rows as they are, and only ``retire-legacy`` removes one: it needs a person).
4. ``logs`` — no daily log was rewritten: each log's seal (:mod:`suzent_cli.index.seals`: length and sha256 of the
   bytes the indexer read) is re-hashed; a shorter file or another prefix names the first differing line.
5. ``claim_sources`` — every vault claim's ``· source: DATE.md:LINE`` exists: the log exists and that line is a
   fact line.
6. ``state`` — the watermark parses and is not in the future; the JSON state files of the catalogue parse (bad
   records of the JSON-lines files, which their readers quarantine, and quarantine files are counted in
   ``notes``, not violations); a catalogue name is the kind of entry it should be; lock files are regular,
   private files; the index table is readable (:meth:`ReadStore.verify`) and has its BM25 indexes; the index
   state parses; the seal files parse; every folder and file of the memory is private
   (:func:`suzent_cli.privacy.exposure` for the roots, then a walk).

``--repair`` (:func:`repair`) does only what is safe and derived: a reindex (the indexer's delete-then-add, which
also builds a missing BM25 index) of every file with stale, missing or unbacked rows, and private modes
(:func:`suzent_cli.privacy.make_private`). It never touches a daily log, a vault page, MEMORY.md or a state file.
It then verifies again and names what needs a person (``needs_person``): a rewritten log (how to inspect it, and
``suzent verify --reseal``), a dangling claim source, an unreadable state or seal file.

:func:`verify` with ``cheap=True`` runs checks 4 and 6 without the index and without the walk of file modes: a
stat and a hash per log and a parse per state file (``suzent status``'s ``verify`` row).

:func:`reseal` is for a stage that rewrites a log legitimately (``sync`` after a merge): call it with the logs it
rewrote, after the rewrite, so verify does not report them.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli import archive, privacy
from suzent_cli.config import Settings
from suzent_cli.errors import SuzentError, describe

CHECKS = ("index_backed", "facts_indexed", "tombstones", "logs", "claim_sources", "state")
CHEAP_CHECKS = ("logs", "state")
MAX_LISTED = 20  # violations listed per check and kind before "… and N more"


@dataclass
class Check:
    """One check's result: ``checked`` counts what it looked at (rows, lines, logs, claims, files); ``violations``
    one line each; ``notes`` facts worth showing that are no violation (legacy rows, quarantined records)."""

    name: str
    checked: int = 0
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the check could not run (e.g. the tombstones cannot be read)

    @property
    def ok(self) -> bool:
        return not self.violations

    def fail(self, where: str, what: str) -> None:
        self.violations.append(f"{self.name}: {where}: {what}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "checked": self.checked, "violations": list(self.violations)}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.skipped:
            out["skipped"] = self.skipped
        return out


@dataclass
class Report:
    """What one verify found (``checks`` by name, in :data:`CHECKS` order), what ``--repair`` repaired and what
    needs a person; ``seconds`` it took. For :func:`repair`, filled by the checks: ``stale`` (an index pass would
    fix something), ``reindex`` (files to reindex whatever their mtime), ``open_modes``."""

    checks: dict[str, Check]
    repaired: list[str] = field(default_factory=list)
    needs_person: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stale: bool = False  # a normal index pass would fix something (files changed, tombstones changed)
    reindex: set[Path] = field(default_factory=set)  # files whose rows are wrong though unchanged since the pass
    open_modes: bool = False

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks.values())

    @property
    def violations(self) -> list[str]:
        return [v for c in self.checks.values() for v in c.violations]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": {n: c.to_json() for n, c in self.checks.items()},
                "repaired": list(self.repaired), "needs_person": list(self.needs_person),
                "seconds": round(self.seconds, 3)}


def _listed(check: Check, items: list[tuple[str, str]]) -> None:
    for where, what in items[:MAX_LISTED]:
        check.fail(where, what)
    if len(items) > MAX_LISTED:
        check.fail("…", f"and {len(items) - MAX_LISTED} more like these")


# --- 4. the seals -----------------------------------------------------------------------------------------------

def check_logs(settings: Settings) -> Check:
    """Check 4: every sealed daily log still starts with its sealed bytes (module doc)."""
    from suzent_cli.index import seals

    paths = settings.paths
    check = Check("logs")
    names = seals.sealed_names(paths.index_dir)
    for name in names:
        check.checked += 1
        where = f"archive/{name}"
        try:
            seal = seals.read_seal(paths.index_dir, name)
        except seals.SealUnreadable as exc:
            check.fail(where, f"its seal cannot be checked: {exc}")
            continue
        if seal is None:
            continue
        path = paths.archive_dir / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            check.fail(where, f"removed (it was sealed at {seal.size} bytes)")
            continue
        except OSError as exc:
            check.fail(where, f"cannot be read ({exc.strerror or exc})")
            continue
        if (what := seals.compare(seal, data)) is not None:
            check.fail(where, f"rewritten: {what}")
    sealed = set(names)
    unsealed = [p.name for _, p in archive.list_logs(paths.archive_dir) if p.name not in sealed]
    if unsealed:
        check.notes.append(f"{len(unsealed)} log(s) not sealed yet (the next index pass seals them): "
                           + ", ".join(unsealed[:5]) + (" …" if len(unsealed) > 5 else ""))
    if strays := seals.strays(paths.index_dir):
        check.notes.append(f"{seals.seals_dir(paths.index_dir)} holds {len(strays)} file(s) that are no seal: "
                           + ", ".join(strays[:5]))
    return check


# --- 6. state, locks, modes -------------------------------------------------------------------------------------

def _check_watermark(settings: Settings, check: Check) -> None:
    from suzent_cli.vault import ledger

    path = settings.paths.vault_dir / ledger.LEDGER
    try:
        text = ledger.read_ledger(settings.paths.vault_dir)
    except OSError as exc:
        check.fail(str(path), f"cannot be read ({exc.strerror or exc})")
        return
    check.checked += 1
    tokens = ledger.WATERMARK_RE.findall(text)
    if tokens:
        import datetime as dt

        try:
            mark = dt.date.fromisoformat(tokens[-1])
        except ValueError:
            check.fail(str(path), f"the last watermark= token ({tokens[-1]}) is not a date (the dream falls back "
                                  "to the one before it)")
            return
        if mark > settings.today:
            check.fail(str(path), f"the watermark {mark.isoformat()} is in the future (today is "
                                  f"{settings.today.isoformat()}): the dream would skip the days up to it")


def _json_object(path: Path) -> str | None:
    """Why ``path`` is not a JSON object file, or None (missing files are fine)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        return f"does not parse ({exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__})"
    return None if isinstance(data, dict) else "is not a JSON object"


def _check_state_files(settings: Settings, check: Check) -> None:
    from suzent_cli.vault import state as catalogue
    from suzent_cli.vault.state.handoff import bad_superseded
    from suzent_cli.vault.state.owed import bad_owed

    state_dir = settings.paths.state_dir
    if not state_dir.exists():
        return
    if not state_dir.is_dir():
        check.fail(str(state_dir), "is not a folder")
        return
    for name in (catalogue.DREAM_STATE, catalogue.MEMORY_MD_STATE, catalogue.CLAUDE_CODE):
        path = state_dir / name
        if path.exists():
            check.checked += 1
            if (why := _json_object(path)) is not None:
                check.fail(str(path), why + (" (the next dream moves it aside as dream_state.json.corrupt)"
                                             if name == catalogue.DREAM_STATE else ""))
    try:
        catalogue.read_tombstones(state_dir)
        check.checked += 1
    except catalogue.TombstonesUnreadable as exc:
        check.fail(str(state_dir / catalogue.TOMBSTONES), str(exc))
    bad = {catalogue.LATE_LINES: sum(1 for r in catalogue.read_late_lines(state_dir) if r is None),
           catalogue.CONFIRMATIONS: sum(1 for r in catalogue.read_confirmations(state_dir) if r is None),
           catalogue.ACROSS_PAGES: bad_owed(state_dir)}
    sup = state_dir / catalogue.SUPERSEDED
    if sup.is_file():
        try:
            bad[catalogue.SUPERSEDED] = sum(1 for ln in sup.read_text(encoding="utf-8", errors="replace").split("\n")
                                            if ln.strip() and bad_superseded(ln))
        except OSError as exc:
            check.fail(str(sup), f"cannot be read ({exc.strerror or exc})")
    for name, count in bad.items():
        check.checked += 1
        if count:
            check.notes.append(f"{name}: {count} bad record(s), quarantined by their next reader")
    quarantine = state_dir / catalogue.QUARANTINE
    if quarantine.is_dir():
        for q in sorted(quarantine.iterdir()):
            try:
                count = sum(1 for ln in q.read_text(encoding="utf-8", errors="replace").split("\n") if ln.strip())
            except OSError:
                count = 0
            check.notes.append(f"quarantine/{q.name}: {count} record(s) kept for a person")
    known = {row.name.rstrip("/").split("/")[0] for row in catalogue.CATALOGUE if not row.name.startswith("<home>")}
    unknown = sorted(p.name for p in state_dir.iterdir() if p.name not in known and not p.name.endswith(".tmp"))
    if unknown:
        check.notes.append(f"{len(unknown)} file(s) in {state_dir} the catalogue does not name: "
                           + ", ".join(unknown[:5]))
    for row in catalogue.CATALOGUE:
        if row.name.startswith("<home>") or "<" in row.name:
            continue
        path = state_dir / row.name.rstrip("/")
        if not os.path.lexists(path):
            continue
        want_dir = row.name.endswith("/")
        st = os.lstat(path)
        if want_dir and not stat.S_ISDIR(st.st_mode):
            check.fail(str(path), "should be a folder")
        elif not want_dir and not stat.S_ISREG(st.st_mode):
            check.fail(str(path), "should be a regular file" + (" (a lock file)" if row.format == "lock file" else ""))


def _lock_files(settings: Settings) -> list[Path]:
    from suzent_cli.index.indexer import LOCK_FILE
    from suzent_cli.vault import state as catalogue

    paths = settings.paths
    return [paths.archive_dir / archive.APPEND_LOCK, paths.index_dir / LOCK_FILE] + \
        [paths.state_dir / row.name for row in catalogue.CATALOGUE if row.format == "lock file"]


def _check_locks(settings: Settings, check: Check) -> None:
    for path in _lock_files(settings):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            check.fail(str(path), f"cannot be looked at ({exc.strerror or exc})")
            continue
        check.checked += 1
        if not stat.S_ISREG(st.st_mode):
            check.fail(str(path), "a lock file that is not a regular file (a link or a folder): locking through it "
                                  "is not safe")


def _check_index_files(settings: Settings, check: Check) -> None:
    """The index's manifest and data files readable, its BM25 indexes present, its state and seals parse."""
    from suzent_cli.index import seals
    from suzent_cli.index.indexer import STATE_FILE

    paths = settings.paths
    state = paths.index_dir / STATE_FILE
    if state.exists():
        check.checked += 1
        if (why := _json_object(state)) is not None:
            check.fail(str(state), why + " (the next index pass re-indexes every file)")
    for name in seals.sealed_names(paths.index_dir):
        check.checked += 1
        try:
            seals.read_seal(paths.index_dir, name)
        except seals.SealUnreadable as exc:
            check.fail(str(seals.seal_path(paths.index_dir, name)), str(exc).split(" is ", 1)[-1])


def _check_table(settings: Settings, check: Check, report: Report) -> None:
    from suzent_cli.index.store import FTS_COLUMNS, ReadStore, table_exists

    paths = settings.paths
    if not table_exists(paths.index_dir):
        return
    check.checked += 1
    try:
        store = ReadStore.open_existing(paths.index_dir, home=paths.home)
        total, _derived = store.verify(home=paths.home)
        for column in FTS_COLUMNS:
            if total and not store.has_fts_index(column):
                check.fail(str(paths.index_dir), f"the BM25 index on {column!r} is missing (full-text recall falls "
                                                 "back to a scan; an index pass builds it)")
                report.stale = True
    except SuzentError as exc:
        check.fail(str(paths.index_dir), describe(exc))


def _open_entries(roots: Iterable[Path], limit: int) -> tuple[list[tuple[str, int]], int]:
    found: list[tuple[str, int]] = []
    more = 0
    for root in roots:
        for folder, dirs, files in os.walk(root):
            # a folder is listed once: the root as itself, every other one as an entry of its parent's walk
            for p in ([folder] if folder == str(root) else []) + [os.path.join(folder, n) for n in dirs + files]:
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) and st.st_mode & privacy.OPEN_BITS:
                    if len(found) < limit:
                        found.append((p, stat.S_IMODE(st.st_mode)))
                    else:
                        more += 1
    return found, more


def _check_modes(settings: Settings, check: Check, report: Report, walk: bool) -> None:
    before = len(check.violations)
    exposed = privacy.exposure(settings.paths)
    check.checked += len(privacy.roots(settings.paths))
    for root, mode in exposed:
        check.fail(str(root), f"mode {mode:04o}: open to the group or others (folders 0700, files 0600)")
    if walk:
        roots = [r for r in privacy.roots(settings.paths) if r.is_dir()]
        found, more = _open_entries(roots, MAX_LISTED)
        rooted = {str(r) for r, _ in exposed}
        for p, mode in found:
            if p not in rooted:
                check.fail(p, f"mode {mode:04o}: open to the group or others")
        if more:
            check.fail("…", f"and {more} more open file(s) or folder(s)")
    report.open_modes = len(check.violations) > before


def check_state(settings: Settings, report: Report, *, cheap: bool = False) -> Check:
    """Check 6 (module doc). ``cheap``: no LanceDB, no walk of file modes (the roots' modes only)."""
    check = Check("state")
    _check_watermark(settings, check)
    _check_state_files(settings, check)
    _check_locks(settings, check)
    _check_index_files(settings, check)
    if not cheap:
        _check_table(settings, check, report)
    _check_modes(settings, check, report, walk=not cheap)
    return check


# --- 5. claim sources -------------------------------------------------------------------------------------------

def check_claim_sources(settings: Settings) -> Check:
    """Check 5: every ``· source: DATE.md:LINE`` on a top-level claim bullet of a content page names a daily log
    that exists and a line of it that is a fact line. Pages are read as text (no YAML), so a page whose frontmatter
    does not load is checked too."""
    from suzent_cli.files import read_text
    from suzent_cli.vault import content_pages
    from suzent_cli.vault.pages import parse_claim

    paths = settings.paths
    check = Check("claim_sources")
    logs: dict[str, list[str] | None] = {}
    dangling: list[tuple[str, str]] = []
    for page in content_pages(paths.vault_dir):
        rel = page.relative_to(paths.vault_dir).as_posix()
        try:
            text = read_text(page)
        except OSError as exc:
            check.fail(rel, f"cannot be read ({exc.strerror or exc})")
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if "source:" not in line or (claim := parse_claim(line)) is None or not claim.source:
                continue
            check.checked += 1
            name, _, at = claim.source.rpartition(":")
            if name not in logs:
                path = paths.archive_dir / name
                try:
                    logs[name] = read_text(path).split("\n") if path.is_file() else None
                except OSError:
                    logs[name] = None
            lines = logs[name]
            where = f"{rel}:{number}"
            if lines is None:
                dangling.append((where, f"cites {claim.source}, a daily log that does not exist"))
            elif not (1 <= int(at) <= len(lines)) or archive.parse_fact_line(lines[int(at) - 1]) is None:
                dangling.append((where, f"cites {claim.source}, a line that is not a fact line"))
    _listed(check, dangling)
    return check


# --- 1, 2, 3. the index against the markdown --------------------------------------------------------------------

def check_index(settings: Settings, report: Report) -> tuple[Check, Check, Check]:
    """Checks 1, 2 and 3 (module doc): one pass over the sources (no embedding) and one scan of three string
    columns of the table."""
    from suzent_cli.config import context_window_of
    from suzent_cli.index.indexer import STATE_FILE, STATE_VERSION, _tombstone_fingerprint
    from suzent_cli.index.sources import discover, documents
    from suzent_cli.index.store import ReadStore, table_exists
    from suzent_cli.text import normalize
    from suzent_cli.vault.forgotten import Forgotten
    from suzent_cli.vault.state import TombstonesUnreadable, read_tombstones

    paths = settings.paths
    backed, indexed, hidden = Check("index_backed"), Check("facts_indexed"), Check("tombstones")
    try:
        tombstones = read_tombstones(paths.state_dir)
        forgotten = Forgotten.from_state(paths.state_dir)
    except TombstonesUnreadable as exc:
        for c in (backed, indexed, hidden):
            c.skipped = f"the tombstones cannot be read: {exc}"
        hidden.fail(str(paths.state_dir), "the tombstones cannot be read, so what is hidden cannot be proved")
        return backed, indexed, hidden
    try:
        state = json.loads((paths.index_dir / STATE_FILE).read_text(encoding="utf-8"))
        files = state.get("files") if isinstance(state, dict) else None
        files = files if isinstance(files, dict) else {}
        # the next pass re-reads every file when the tombstones, the state's version or the context window changed
        swept = isinstance(state, dict) and state.get("tombstones") == _tombstone_fingerprint(tombstones) \
            and state.get("version") == STATE_VERSION and state.get("context_window") == context_window_of(settings)
    except (OSError, ValueError, RecursionError):
        files, swept = {}, False

    def stale(key: str, path: Path | None) -> bool:
        """The file changed since the last pass (or is gone, or was never recorded), or the tombstones did."""
        if not swept:
            return True
        rec = files.get(key)
        if not isinstance(rec, dict) or path is None:
            return True
        try:
            st = path.stat()
        except OSError:
            return True
        return st.st_mtime_ns != rec.get("mtime_ns") or st.st_size != rec.get("size")

    # Order matters against a concurrent index pass or capture: the state first, then the table, then the files.
    # Rows a pass commits after the state was read belong to files whose stat no longer matches it (stale, never
    # "should not exist"); lines appended after the table was read are missing from a changed file (stale too).
    rows: dict[str, dict[str, int]] = {}
    legacy = 0
    has_table = table_exists(paths.index_dir)
    if has_table:
        try:
            store = ReadStore.open_any(paths.index_dir, home=paths.home)  # the original app's table too (state
            app = store.schema_kind == "app"  # says the indexer cannot update it): every row of it is legacy
            data = store.scan(["id", "content"] if app else ["id", "source", "content"]).to_pydict() \
                if store.count() else {"id": [], "content": []}
            data.setdefault("source", [None] * len(data["id"]))
        except SuzentError as exc:
            for c in (backed, indexed, hidden):
                c.skipped = describe(exc)
            backed.fail(str(paths.index_dir), f"the table cannot be read: {describe(exc)}")
            return backed, indexed, hidden
        except Exception as exc:  # noqa: BLE001 - lance's own errors: named on one line
            backed.fail(str(paths.index_dir), f"the table cannot be read: {describe(exc)}")
            return backed, indexed, hidden
    else:
        data = {"id": [], "source": [], "content": []}
    window = context_window_of(settings)
    desired: dict[str, dict[str, int]] = {}
    sources = {}
    for source in discover(paths):
        try:
            docs, _st = documents(source, tombstones, window, forgotten)
        except OSError as exc:
            backed.fail(source.key, f"cannot be read ({exc.strerror or exc})")
            continue
        sources[source.key] = source
        desired[source.key] = {d.id: d.locator for d in docs}

    for rid, source, content in zip(data["id"], data["source"], data["content"], strict=False):
        if source is None:
            legacy += 1
            hidden.checked += 1
            if content and (normalize(content) in tombstones or forgotten.same(content)):
                hidden.fail(f"legacy row {rid}", "holds tombstoned or forgotten text, so recall can return it; no "
                                                 "reindex retires a legacy row (`suzent retire-legacy` exports and "
                                                 "removes it)")
            continue
        rows.setdefault(source, {})[rid] = 0
        hidden.checked += 1
        text = content or ""
        if source.startswith("archive:"):
            held = normalize(text) in tombstones or forgotten.same(text)
        else:
            held = normalize(text) in tombstones or any(
                ln.strip() and forgotten.covers_line(ln) for ln in text.split("\n"))
        if held:
            path = sources[source].path if source in sources else None
            if not stale(source, path) and path is not None:
                report.reindex.add(path)
            report.stale = True
            hidden.fail(f"{source} row {rid}", "holds tombstoned or forgotten text, so recall can return it "
                        "(written without a reindex: run `suzent index` or `suzent verify --repair`)")

    # 1. every row backed
    unbacked: list[tuple[str, str]] = []
    for key, ids in sorted(rows.items()):
        backed.checked += len(ids)
        want = desired.get(key, {})
        extra = [rid for rid in ids if rid not in want]
        if not extra:
            continue
        source = sources.get(key)
        if source is None:
            unbacked.append((key, f"{len(extra)} row(s) from a file that is gone (stale: run `suzent index`)"))
            report.stale = True
        elif stale(key, source.path):
            unbacked.append((key, f"{len(extra)} row(s) the file no longer yields (stale: the file or the tombstones "
                                  "changed since the last index pass; run `suzent index`)"))
            report.stale = True
        else:
            unbacked.append((key, f"{len(extra)} row(s) the file does not yield though it is unchanged since the "
                                  f"last index pass: rows that should not exist (first {extra[0]})"))
            report.reindex.add(source.path)
    _listed(backed, unbacked)
    if legacy:
        backed.notes.append(f"{legacy} legacy row(s) (no source: the original app's; `suzent retire-legacy` "
                            "reviews them)")

    # 2. every live fact line indexed
    missing: list[tuple[str, str]] = []
    for key, want in sorted(desired.items()):
        if not key.startswith("archive:"):
            continue
        indexed.checked += len(want)
        have = rows.get(key, {})
        lost = sorted(loc for rid, loc in want.items() if rid not in have)
        if not lost:
            continue
        if not has_table:  # a home synced or imported into that was never indexed: no pass to have changed since
            missing.append((key, f"{len(lost)} fact line(s) not in the index yet, first line {lost[0]} (this home "
                                 "has no index yet: run `suzent index`)"))
            report.stale = True
        elif stale(key, sources[key].path):
            missing.append((key, f"{len(lost)} fact line(s) not in the index yet, first line {lost[0]} (the file "
                                 "changed since the last index pass: run `suzent index`)"))
            report.stale = True
        else:
            missing.append((key, f"{len(lost)} fact line(s) missing from the index though the file is unchanged "
                                 f"since the last index pass, first line {lost[0]}"))
            report.reindex.add(sources[key].path)
    _listed(indexed, missing)
    return backed, indexed, hidden


# --- the command ------------------------------------------------------------------------------------------------

def verify(settings: Settings, *, cheap: bool = False) -> Report:
    """Run the checks (all six, or with ``cheap`` only ``logs`` and ``state`` without the index) and return the
    :class:`Report`. Reads only (the tombstone reader may move a bad line to the quarantine, as every reader does).
    Raises nothing for a damaged home: what it cannot read is a violation."""
    started = time.perf_counter()
    report = Report(checks={})
    checks: dict[str, Check] = {}
    if not cheap:
        backed, indexed, hidden = check_index(settings, report)
        checks.update(index_backed=backed, facts_indexed=indexed, tombstones=hidden)
    checks["logs"] = check_logs(settings)
    if not cheap:
        checks["claim_sources"] = check_claim_sources(settings)
    checks["state"] = check_state(settings, report, cheap=cheap)
    report.checks = {name: checks[name] for name in CHECKS if name in checks}
    report.seconds = time.perf_counter() - started
    return report


def _needs_person(settings: Settings, report: Report) -> list[str]:
    """What no repair may do, worded for the person who can."""
    out: list[str] = []
    for v in report.checks["logs"].violations if "logs" in report.checks else []:
        _check, where, what = v.split(": ", 2)
        name = where.removeprefix("archive/")
        reseal = f"`suzent verify --reseal {name}` records it as it is"
        if what.startswith("its seal cannot be checked"):
            out.append(f"{where}: {what}; once you have checked the log by hand, {reseal}")
        elif what.startswith("cannot be read"):
            out.append(f"{where} {what}: fix its permissions")
        else:  # rewritten: …, removed (…)
            out.append(f"{where} was {what.split(':', 1)[0]}: compare it with a backup (or `git log -p {where}` in "
                       f"a synced home); once it holds what it should, {reseal}")
    for v in report.checks.get("claim_sources", Check("x")).violations:
        _check, where, what = v.split(": ", 2)
        if where == "…":
            out.append(f"{what.removesuffix(' like these')} dangling claim source(s): fix the ones listed, then "
                       "run `suzent verify` again for the next ones")
            continue
        out.append(f"{where} {what}: correct or remove that claim's source by hand (the dream never rewrites a "
                   "source)")
    for v in report.checks.get("tombstones", Check("x")).violations:
        if ": legacy row " in v:
            out.append(v.split(": ", 1)[1])
    for v in report.checks["state"].violations:
        if "open to the group or others" in v or "more open file(s) or folder(s)" in v:
            continue  # modes: a repair's (make_private); one it could not fix shows again as a violation
        out.append(v.split(": ", 1)[1])
    return out


def repair(settings: Settings, report: Report) -> Report:
    """Do what is safe for ``report``'s violations, then verify again: a reindex when anything in the index is stale,
    missing or unbacked (a normal pass, then the named files whatever their mtime), and private modes. Never touches
    a log, a page, MEMORY.md or a state file. Returns the new report with ``repaired`` (what was done) and
    ``needs_person``. Raises what the indexer raises (LockTimeout, an unreadable index, TombstonesUnreadable)."""
    from suzent_cli.errors import LockTimeout

    done: list[str] = []
    refused: list[str] = []
    if report.stale or report.reindex:
        from suzent_cli.index.api import reindex_files, run_index

        try:
            ran = run_index(settings)
            done.append(f"index pass: {ran.files_updated} file(s) updated, rows +{ran.rows_added} "
                        f"−{ran.rows_removed}")
            if report.reindex:
                again = reindex_files(settings, sorted(report.reindex))
                done.append(f"reindexed {len(report.reindex)} file(s) unchanged since the last pass: rows "
                            f"+{again.rows_added} −{again.rows_removed}")
        except LockTimeout:
            raise  # busy: nothing was written (exit 3), run it again
        except SuzentError as exc:  # another tool's table, an unreadable one, unreadable tombstones: a person's
            refused.append(f"the reindex refused: {describe(exc)}")
    if report.open_modes:
        fixed = privacy.make_private(settings.paths)
        done.append(f"made private: {fixed.folders} folder(s), {fixed.files} file(s)"
                    + (f"; left {len(fixed.left)}" if fixed.left else ""))
    after = verify(settings)
    after.repaired = done
    after.needs_person = refused + _needs_person(settings, after)
    return after


def needs_person(settings: Settings, report: Report) -> Report:
    """``report`` with ``needs_person`` filled (a run without ``--repair`` names them too)."""
    report.needs_person = _needs_person(settings, report)
    return report


def reseal(settings: Settings, paths: list[Path]) -> list[str]:
    """Seal the current content of the daily logs at ``paths`` (each ``<archive>/YYYY-MM-DD.md``), so verify's
    ``logs`` check accepts them as they are now. For a stage that rewrote a log legitimately (``sync`` after it
    merged two machines' entries of one day): call it after the rewrite, with the logs rewritten; and for a person
    who inspected a log verify reported (``suzent verify --reseal``). Takes the indexer lock (seals live in the
    index dir) and the daily logs' append lock for each read. Returns the names resealed (a path that is gone
    loses its seal). Raises InputInvalid for a path that is no daily log of this home, LockTimeout, OSError."""
    from suzent_cli.errors import InputInvalid
    from suzent_cli.index.api import reseal_logs
    from suzent_cli.index.seals import seal_path

    names: list[str] = []
    for path in paths:
        p = Path(path)
        inside = p.parent == Path(".") or p.absolute().parent.resolve() == settings.paths.archive_dir.resolve()
        known = (settings.paths.archive_dir / p.name).is_file() or seal_path(settings.paths.index_dir, p.name).exists()
        if not archive.LOG_NAME_RE.match(p.name) or archive.log_day(p) is None or not inside or not known:
            raise InputInvalid(f"{path} is not a daily log of this home (YYYY-MM-DD.md in "
                               f"{settings.paths.archive_dir})")
        names.append(p.name)
    return reseal_logs(settings, sorted(set(names)))
