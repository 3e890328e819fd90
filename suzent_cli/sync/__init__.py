"""Stage: ``suzent sync``, one memory on several machines through any git remote (docs/sync.md).

One sync, under ``<home>/sync/sync.lock`` (a second sync on the home refuses at once, exit 3):

1. **Recover** what a killed sync left: stale git locks, an unfinished merge, and a write-back it had begun
   (``<home>/sync/writeback.json``, the journal: it names the commit the live files were copied from and the commit
   to write back; a journal without the second means the merge never finished: the staging repository goes back to
   the first and the merge is redone).
2. **Fold** folder-sync conflict copies back (:mod:`suzent_cli.sync.conflicts`).
3. **Copy in** the files that travel (:func:`travellers`) from the live tiers into the staging repository
   (``<home>/sync/repo``, :mod:`suzent_cli.sync.repo`), each read under its writer's lock; **commit**.
4. **Fetch; merge** with the remote's branch per file (:mod:`suzent_cli.sync.merge`); **push**. A push refused
   because the remote moved is retried from step 4 over the new remote (the staging repository first goes back
   to the local commit, so no merge is ever merged again); refused otherwise (a hook): one line, exit 1, the
   merge is still written back and the next sync pushes it.
5. **Write back** every file the merge changed into the live tiers, under the same locks as the writers (the
   append lock for a log, the page lock for a page, the state lock for a state file), merging with what the file
   holds *now*: a log that grew since it was copied keeps its new lines, a page a person edited meanwhile is
   merged again (:func:`write_back`).
6. **Index** what changed: the files written back, and every daily log holding a text a tombstone that arrived
   forgets (a tombstone changes no file's mtime), through :func:`suzent_cli.index.api.reindex_files`.

Line numbers. One machine dreams (:mod:`suzent_cli.dreamer`). A daily log merged on the dreaming machine keeps
its text whole and in place (the other machines' entries are appended after it); merged anywhere else, the
remote's version is kept whole and this machine's new entries follow. So the dreaming machine's lines never move on
any machine, and the ``source: DATE.md:LINE`` of a claim, ``folded_through`` and the dreamer's late-line records
stay true everywhere. A non-dreaming machine's unsynced entries may move down its log (the file is then replaced,
never shortened: :func:`suzent_cli.archive.merge_into_log`). On the dreaming machine, lines that arrive in a day
before today are recorded as late lines, as a backfill is, so the dream folds them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suzent_cli import archive
from suzent_cli.config import Settings
from suzent_cli.dreamer import DREAMER_FILE, ROLE_FILE, machine_id, sync_dir
from suzent_cli.errors import InputInvalid, LockTimeout, SuzentError
from suzent_cli.files import atomic_write_bytes, file_lock, locked, update_file
from suzent_cli.sync import merge as merges
from suzent_cli.sync.repo import BRANCH, Repo, SyncFailed, masked
from suzent_cli.vault.state import (
    CONFIRMATIONS,
    LEDGER_LOCK,
    MEMORY_MD_LOCK,
    PAGES_LOCK,
    STATE_DIR,
    STATE_LOCK,
    TOMBSTONES,
    travelling,
)

__all__ = ["SyncBusy", "SyncFailed", "SyncReport", "fold_only", "rewritten_files", "sync", "travellers", "write_back"]

LOCK_FILE = "sync.lock"
JOURNAL = "writeback.json"
CORE_FILES = ("MEMORY.md", "persona.md", "user.md")
MARKER = ".suzent-sync"  # at the root of every synced repository: a remote without it is no suzent memory
MARKER_TEXT = "A suzent memory synced by `suzent sync` (docs/sync.md). Private: keep this repository private.\n"
MAX_ATTEMPTS = 5  # pushes refused because the remote moved meanwhile, before giving up with one line


class SyncBusy(SuzentError):
    """Another ``suzent sync`` holds the home's ``sync.lock``."""

    exit_code = 3


@dataclass(frozen=True)
class Traveller:
    """One file that travels: ``rel`` its path in the synced repository, ``live`` where it lives on this machine,
    ``kind`` (``log``, ``ledger``, ``records``, ``page``) and ``lock`` the lock its writers take (None: none)."""

    rel: str
    live: Path
    kind: str
    lock: Path | None


@dataclass
class SyncReport:
    """What one sync did (``--json``): ``commits`` made here (the local one, a merge), ``pushed``, ``files_merged``
    (paths merged from both sides), ``lines_sent`` (log lines the remote gained), ``lines_received`` (log lines
    this machine's logs gained), ``conflicts_folded`` (folder-sync copies, :mod:`suzent_cli.sync.conflicts`),
    ``written`` (live files sync changed: the hook the verify stage (issue 26 §4) re-seals, :func:`rewritten_files`),
    ``moved`` (logs whose lines moved), ``indexed`` (files reindexed; None: no index) and ``index_via`` (``server``: by the running server, ``here``),
    ``dreamer`` and ``dreams``
    (this machine), ``verified`` (``suzent verify``'s cheap part after the sync), ``warnings``."""

    remote: str | None = None
    machine: str = ""
    commits: list[str] = field(default_factory=list)
    pushed: bool = False
    fast_forward: bool = False
    files_merged: list[str] = field(default_factory=list)
    page_conflicts: list[str] = field(default_factory=list)
    lines_sent: int = 0
    lines_received: int = 0
    conflicts_folded: list[dict] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    late_days: list[str] = field(default_factory=list)
    tombstones_received: int = 0
    indexed: int | None = None
    index_via: str = ""
    verified: bool | None = None
    dreamer: str = ""
    dreams: bool = True
    recovered: str = ""
    error: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def rewritten_files(report: SyncReport) -> list[Path]:
    """The live files the sync changed (appended to, merged or replaced), for the verify stage (issue 26 §4) to re-seal: a log
    in it may have had lines moved (``report.moved``) by a merge that lost none."""
    return [Path(p) for p in report.written]


# --- what travels -------------------------------------------------------------------------------------------------

def travellers(settings: Settings) -> list[Traveller]:
    """Every file that travels, as it exists on this machine now: the daily logs (``archive/``), MEMORY.md,
    persona.md, user.md (``memory/``), the vault's markdown outside hidden folders (pages, ``log.md``, the root
    files: ``vault/``) and the state files :func:`suzent_cli.vault.state.travelling` names (``vault/.state/``).
    Never: the index, locks, the spool, ``server/``, ``backups/``, ``sync/``, config.toml, the other state files.
    Tier folders may live outside the home (``--memory-dir``, ``--vault-dir``)."""
    paths = settings.paths
    state = paths.state_dir
    out = [Traveller(f"archive/{p.name}", p, "log", paths.archive_dir / archive.APPEND_LOCK)
           for _, p in archive.list_logs(paths.archive_dir)]
    out += [Traveller(f"memory/{name}", paths.memory_dir / name, "page", state / MEMORY_MD_LOCK)
            for name in CORE_FILES if (paths.memory_dir / name).is_file()]
    vault_dir = paths.vault_dir
    if vault_dir.is_dir():
        for p in sorted(vault_dir.rglob("*.md")):
            rel = p.relative_to(vault_dir)
            if any(part.startswith(".") for part in rel.parts) or not p.is_file() or p.is_symlink():
                continue
            if _copy_name(rel.name):
                continue  # a folder-sync conflict copy: folded or moved aside, never synced
            try:
                rel.as_posix().encode("utf-8")
            except UnicodeEncodeError:
                continue
            if rel.as_posix() == "log.md":
                out.append(Traveller("vault/log.md", p, "ledger", state / LEDGER_LOCK))
            else:
                out.append(Traveller(f"vault/{rel.as_posix()}", p, "page", state / PAGES_LOCK))
    for name in travelling():
        if (state / name).is_file():
            out.append(Traveller(f"vault/{STATE_DIR}/{name}", state / name, "records", state / STATE_LOCK))
    return [t for t in out if _stays_inside(settings, t.live)]  # never a file a link leads out of the tiers to


def _copy_name(name: str) -> bool:
    from suzent_cli.copies import page_copy_of

    return page_copy_of(name) is not None


def traveller_for(settings: Settings, rel: str) -> Traveller | None:
    """The live file a repository path stands for, or None for a path that is not ours (left alone): no ``..``,
    no hidden part but ``.state/<a travelling file>``, a log name that is a date, a page inside the vault."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or not rel.endswith((".md", ".jsonl")):
        return None
    paths = settings.paths
    state = paths.state_dir
    if parts[0] == "archive" and len(parts) == 2:
        p = paths.archive_dir / parts[1]
        return Traveller(rel, p, "log", paths.archive_dir / archive.APPEND_LOCK) if archive.log_day(p) else None
    if parts[0] == "memory" and len(parts) == 2 and parts[1] in CORE_FILES:
        return Traveller(rel, paths.memory_dir / parts[1], "page", state / MEMORY_MD_LOCK)
    if parts[0] != "vault" or len(parts) < 2:
        return None
    inner = parts[1:]
    if inner[0] == STATE_DIR:
        if len(inner) == 2 and inner[1] in travelling():
            return Traveller(rel, state / inner[1], "records", state / STATE_LOCK)
        return None
    if any(p.startswith(".") for p in inner) or not rel.endswith(".md") or _copy_name(inner[-1]):
        return None
    if inner == ["log.md"]:
        return Traveller(rel, paths.vault_dir / "log.md", "ledger", state / LEDGER_LOCK)
    return Traveller(rel, paths.vault_dir.joinpath(*inner), "page", state / PAGES_LOCK)


def _read_live(t: Traveller, timeout: float) -> bytes | None:
    """The bytes of ``t`` as its writers last left them: read under its lock when it has an appender (a log, the
    ledger, a state file), so a half-written append is never copied; pages are replaced atomically."""
    try:
        if t.kind in ("log", "ledger", "records") and t.lock is not None and t.lock.parent.is_dir():
            with locked(t.lock, timeout):
                return t.live.read_bytes()
        return t.live.read_bytes()
    except FileNotFoundError:
        return None


# --- the stage ----------------------------------------------------------------------------------------------------

def check_remote(url: str) -> str:
    """``url`` stripped, or :class:`InputInvalid`: empty, a control character, or one git would read as an option
    (``-…``, ``--upload-pack=…``)."""
    url = url.strip()
    if not url:
        raise InputInvalid("the remote is empty: give a URL git accepts (a path, ssh://, https://, git@host:repo)")
    if url.startswith("-") or any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise InputInvalid(f"not a remote URL: {masked(url)!r}")
    if "::" in url.split("/", 1)[0]:  # git's remote helpers (ext::sh -c …) run commands
        raise InputInvalid(f"remote helpers are not accepted as a sync remote: {masked(url)!r}")
    return url


def sync(settings: Settings, *, remote: str | None = None, index: bool = True,
         pause: Callable[[str], None] | None = None) -> SyncReport:
    """One sync of the home with its remote (module doc). ``remote``: a URL to use and remember (the staging
    repository's ``origin``); else ``sync.remote`` (config, environment), else the remembered one. ``index``: bring
    the index up to date after (when the home has one). ``pause(point)``: a test hook called at the named points
    (``committed``: the local commit made; ``merging``: a merge begun in the staging repository; ``pushing``:
    merged, before each push; ``merged``: pushed; ``writing``: before each file written back) so a test can kill
    the process there.

    Raises :class:`SyncBusy` (another sync), :class:`InputInvalid` (a bad URL, no remote), :class:`SyncFailed`
    (git or the remote failed: the report so far is in its ``report`` attribute; nothing was lost) and
    LockTimeout/OSError from the tiers' locks."""
    home = settings.paths.home
    sdir = sync_dir(home)
    sdir.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = file_lock(sdir / LOCK_FILE, timeout=0)
    from filelock import Timeout

    try:
        lock.acquire()
    except Timeout:
        raise SyncBusy("another suzent sync is running on this home; try again when it ends") from None
    try:
        return _sync_held(settings, sdir, remote, index, pause or (lambda _point: None))
    finally:
        lock.release()


def _sync_held(settings: Settings, sdir: Path, remote: str | None, index: bool,
               pause: Callable[[str], None]) -> SyncReport:
    from suzent_cli.sync.conflicts import fold_conflicts

    report = SyncReport(machine=machine_id(settings.paths.home))
    repo = Repo(sdir)
    repo.ensure()
    # an empty --remote '' is a bad URL (exit 2), not "use the remembered one"
    url = remote if remote is not None else (getattr(settings, "sync_remote", None) or repo.remote_url())
    if remote is None and not url:
        raise InputInvalid("no remote to sync with: give one, suzent sync --remote URL (it is remembered)")
    url = check_remote(url)
    remembered = repo.remote_url()
    if url != remembered:
        repo.set_remote(url)
    report.remote = masked(url)
    dreamer_setting = str(getattr(settings, "sync_dream", "auto") or "auto")
    try:
        report.recovered = _recover(settings, repo, report)
        report.conflicts_folded = fold_conflicts(settings, report.warnings)
        _count_folds(report)
        _copy_in(settings, repo, report, dreamer_setting)
        before = repo.commit_all(f"sync: {report.machine} at {settings.clock.isoformat(timespec='seconds')}")
        if before:
            report.commits.append(before)
        local = repo.head()
        pause("committed")
        merged = _merge_and_push(settings, repo, report, local, dreamer_setting, pause)
        pause("merged")
        if merged and merged != local:
            write_back(settings, repo, local, merged, report, pause=pause)
        _journal_clear(sdir)
        _scrub(settings, report)
    except SyncFailed as exc:  # the remote: what was done here (a recovery, folded copies) is still indexed
        report.error = str(exc)
    finally:
        _save_role(settings, repo, report)
        _reseal(settings, report)
        if remote is None and remembered and url != remembered:
            repo.set_remote(remembered)  # sync.remote (config, a one-off SUZENT_SYNC_REMOTE) never replaces it
    if index:
        _index(settings, report)
    _verify(settings, report)
    if report.error:
        failed = SyncFailed(report.error)
        failed.report = report  # type: ignore[attr-defined]
        raise failed
    return report


def _scrub(settings: Settings, report: SyncReport) -> None:
    """After a write-back that changed pages: no forgotten text stays on a page (two machines' versions of a page
    merged line by line can bring back a claim one of them forgot). :func:`suzent_cli.vault.forgotten.scrub_vault`
    under the consolidation lock, as forget and the dream scrub; a dream holding it past ``lock_timeout`` scrubs
    after its own pass instead (a warning here). Recall hides the text meanwhile (the index's filter)."""
    vault = str(settings.paths.vault_dir)
    if not any(p.startswith(vault) and p.endswith(".md") for p in report.written):
        return
    from filelock import Timeout

    from suzent_cli.vault.forgotten import Forgotten, scrub_vault
    from suzent_cli.vault.state import DREAM_LOCK

    forgotten = Forgotten.from_state(settings.paths.state_dir)
    if not forgotten:
        return
    try:
        with file_lock(settings.paths.state_dir / DREAM_LOCK, timeout=settings.lock_timeout):
            removed, problems = scrub_vault(settings.paths.vault_dir, forgotten)
    except (Timeout, OSError) as exc:
        report.warnings.append(f"forgotten claims not removed from merged pages now ({exc}); the next dream does")
        return
    if removed:
        report.warnings.append(f"removed {len(removed)} forgotten claim(s) a merged page brought back")
        report.written += sorted({str(settings.paths.vault_dir / c.page) for c in removed} - set(report.written))
    report.warnings.extend(f"forgotten text may remain on {p}" for p in problems)


def _reseal(settings: Settings, report: SyncReport) -> None:
    """The logs whose lines the merge moved are sealed as they are now (:func:`suzent_cli.verify.reseal`): a
    legitimate rewrite, which ``suzent verify`` would otherwise name (a log only appended to extends its seal by
    itself at the next index pass). A failure is a warning: ``suzent verify`` names the log, ``--reseal`` fixes it."""
    moved = sorted({Path(p) for p in report.moved if Path(p).is_file()})
    if not moved:
        return
    from suzent_cli.verify import reseal

    try:
        reseal(settings, moved)
    except (SuzentError, OSError) as exc:
        report.warnings.append(f"could not reseal the merged logs ({exc}); suzent verify --reseal them")


def _verify(settings: Settings, report: SyncReport) -> None:
    """``suzent verify``'s cheap part (seals and state, no index scan: tens of ms) after the sync; a violation is
    one warning each and ``report.verified`` False."""
    from suzent_cli.verify import verify

    try:
        found = verify(settings, cheap=True)
    except (SuzentError, OSError) as exc:
        report.warnings.append(f"verify could not run ({exc})")
        report.verified = False
        return
    report.verified = found.ok
    report.warnings += [f"verify: {v}" for v in found.violations]


def _count_folds(report: SyncReport) -> None:
    """Conflict copies folded into live files count as written (reindexed, re-sealed); a tombstones copy's records
    as tombstones received (the logs holding their texts are reindexed)."""
    for record in report.conflicts_folded:
        if record.get("lines_added") and record.get("into"):
            report.written.append(record["into"])
            if record.get("kind") == "tombstones":
                report.tombstones_received += int(record["lines_added"])


def fold_only(settings: Settings, *, index: bool = True) -> SyncReport:
    """``suzent sync --fold-conflicts``: only step 2 (no git, no remote), then the index."""
    from suzent_cli.sync.conflicts import fold_conflicts

    report = SyncReport()
    report.conflicts_folded = fold_conflicts(settings, report.warnings)
    _count_folds(report)
    if index:
        _index(settings, report)
    _verify(settings, report)
    return report


def _recover(settings: Settings, repo: Repo, report: SyncReport) -> str:
    """Finish or undo what a killed sync left (module doc, step 1). Returns a note ("" when nothing was left)."""
    journal = _journal_read(repo.sync_dir)
    if journal is None:
        if repo.head() is not None:
            repo.git("reset", "-q", "--hard", "HEAD")  # a killed copy-in: recopied below
        return ""
    before, after = journal.get("before"), journal.get("after")
    if not (_a_commit(repo, before) and _a_commit(repo, after)):
        # not what _journal_write writes (hand-edited, or copied from another machine by a folder-sync tool): the
        # commits it names cannot be reset to, and every sync would fail on it (or pass an option to git)
        _journal_clear(repo.sync_dir)
        if repo.head() is not None:
            repo.git("reset", "-q", "--hard", "HEAD")
        return "a sync journal naming no commit of the staging repository was set aside"
    if not after:
        if before:
            repo.git("reset", "-q", "--hard", before)
        _journal_clear(repo.sync_dir)
        return "an interrupted merge was undone; it is redone now"
    repo.git("reset", "-q", "--hard", after)
    write_back(settings, repo, before, after, report)
    _journal_clear(repo.sync_dir)
    return "an interrupted write-back was finished"


def _a_commit(repo: Repo, value: object) -> bool:
    """True for None (nothing recorded) or the hex id of a commit the staging repository holds."""
    if value is None:
        return True
    if not isinstance(value, str) or not 4 <= len(value) <= 64 or any(c not in "0123456789abcdef" for c in value):
        return False
    return repo.git("rev-parse", "--verify", "-q", f"{value}^{{commit}}", check=False).returncode == 0


def _journal_read(sdir: Path) -> dict | None:
    try:
        data = json.loads((sdir / JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _journal_write(sdir: Path, before: str | None, after: str | None) -> None:
    atomic_write_bytes(sdir / JOURNAL, json.dumps({"before": before, "after": after}).encode())


def _journal_clear(sdir: Path) -> None:
    (sdir / JOURNAL).unlink(missing_ok=True)


def _copy_in(settings: Settings, repo: Repo, report: SyncReport, dreamer_setting: str) -> dict[str, bytes]:
    """Step 3: write every traveller's live bytes into the staging work tree (only where they differ); claim the
    dreamer role when the setting says so. Returns ``{rel: bytes}`` as copied."""
    copied: dict[str, bytes] = {}
    for t in travellers(settings):
        data = _read_live(t, settings.lock_timeout)
        if data is None:
            continue
        copied[t.rel] = data
        target = repo.root / t.rel
        try:
            if target.read_bytes() == data:
                continue
        except OSError:
            pass
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.write_bytes(data)
    marker = repo.root / MARKER
    if not marker.is_file():
        marker.write_text(MARKER_TEXT, encoding="utf-8")
    dreamer_file = repo.root / DREAMER_FILE
    current = dreamer_file.read_text(encoding="utf-8").strip() if dreamer_file.is_file() else ""
    if (dreamer_setting == "yes" and current != report.machine) or (dreamer_setting == "auto" and not current):
        dreamer_file.write_text(report.machine + "\n", encoding="utf-8")
    return copied


def _is_dreamer(repo: Repo, commit: str | None, machine: str) -> bool:
    data = repo.show(commit, DREAMER_FILE) if commit else None
    return (data or b"").decode("utf-8", "replace").strip() == machine


def _merge_and_push(settings: Settings, repo: Repo, report: SyncReport, local: str | None, dreamer_setting: str,
                    pause: Callable[[str], None]) -> str | None:
    """Step 4. Returns the commit the live files must reflect (the merge, the remote's head on a fast-forward, or
    ``local``). A refused push sets ``report.error`` (the merge is still written back)."""
    for _attempt in range(MAX_ATTEMPTS):
        repo.fetch()
        theirs = repo.remote_head()
        if theirs is not None and repo.show(theirs, MARKER) is None:
            raise InputInvalid(f"the remote's branch {BRANCH} is not a suzent memory (it has no {MARKER}): refusing to "
                               "merge it; give an empty repository or one suzent sync made (nothing was changed)")
        if local is None and theirs is None:
            return None  # nothing here, nothing there
        if theirs is None or theirs == local or (local is not None and repo.is_ancestor(theirs, local)):
            merged = local
        elif local is None or repo.is_ancestor(local, theirs):
            _journal_write(repo.sync_dir, local, theirs)
            repo.git("reset", "-q", "--hard", theirs)
            report.fast_forward = True
            return theirs
        else:
            _journal_write(repo.sync_dir, local, None)
            merged = _merge(settings, repo, report, local, theirs, dreamer_setting, pause)
            _journal_write(repo.sync_dir, local, merged)
            report.commits.append(merged)
        report.lines_sent = _lines_between(repo, theirs, merged)
        if merged == theirs:
            return merged
        pause("pushing")
        ok, said = repo.push()
        if ok:
            report.pushed = True
            return merged
        repo.fetch()
        now = repo.remote_head()
        if now is not None and now != theirs and not repo.is_ancestor(now, merged):
            # the remote moved while we merged: merge again over it, from the local commit
            _journal_write(repo.sync_dir, local, None)
            if merged != local:
                repo.git("reset", "-q", "--hard", local)
                report.commits.remove(merged)
                report.files_merged.clear()
                report.page_conflicts.clear()
            _journal_clear(repo.sync_dir)
            continue
        report.error = f"the remote refused the push: {said}; this machine's memory is merged and kept, sync again"
        report.lines_sent = 0
        return merged
    report.error = f"the remote kept moving ({MAX_ATTEMPTS} attempts); nothing was lost, sync again"
    return repo.head()


def _lines_between(repo: Repo, older: str | None, newer: str | None) -> int:
    """Daily-log lines ``newer`` holds beyond ``older`` (what a push sends, what a fast-forward brings)."""
    if newer is None or older == newer:
        return 0
    total = 0
    for rel in repo.changed(older, newer):
        if rel.startswith("archive/"):
            a = (repo.show(older, rel) or b"").count(b"\n")
            b = (repo.show(newer, rel) or b"").count(b"\n")
            total += max(0, b - a)
    return total


def _merge(settings: Settings, repo: Repo, report: SyncReport, local: str, theirs: str, dreamer_setting: str,
           pause: Callable[[str], None]) -> str:
    """Merge the remote's ``theirs`` into ``local`` file by file (module :mod:`.merge`) and commit the merge."""
    base = repo.merge_base(local, theirs)
    mine, other, was = (repo.show(c, DREAMER_FILE) for c in (local, theirs, base))
    if mine == other or other is None or other == was:
        dreamer = mine
    elif mine is None or mine == was:
        dreamer = other
    else:
        dreamer = _merge_file(DREAMER_FILE, was, mine, other, False, dreamer_setting, report)
    i_dream = (dreamer or b"").decode("utf-8", "replace").strip() == report.machine
    repo.git("merge", "-q", "--no-ff", "--no-commit", "--allow-unrelated-histories", "-s", "ours", theirs)
    paths = sorted(set(repo.changed(base, local)) | set(repo.changed(base, theirs)))
    pause("merging")
    for rel in paths:
        ours, them, old = repo.show(local, rel), repo.show(theirs, rel), repo.show(base, rel)
        if ours == them or them is None:
            continue
        if ours is None or ours == old:
            merged = them
        elif them == old:
            continue
        else:
            merged = _merge_file(rel, old, ours, them, i_dream, dreamer_setting, report)
            report.files_merged.append(rel)
        target = repo.root / rel
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.write_bytes(merged)
    done = repo.commit_all(f"sync: merge on {report.machine}", merging=True)
    return done or repo.head() or local


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _merge_file(rel: str, old: bytes | None, ours: bytes, them: bytes, i_dream: bool, dreamer_setting: str,
                report: SyncReport) -> bytes:
    """One path changed on both sides since the base."""
    if rel == DREAMER_FILE:
        return ours if dreamer_setting == "yes" else them
    if rel == "vault/log.md":
        # the ledger is the dreaming machine's: its last watermark= token is the watermark, so another machine's own
        # entries (dreams it ran before it joined) are never appended after it; they stay in the sync history
        kept, other = (ours, them) if i_dream else (them, ours)
        if merges.merge_appended(_text(kept), _text(other)) != _text(kept):
            report.warnings.append("log.md: entries of a machine that does not dream were left out of the ledger "
                                   "(one machine dreams; they stay in the sync history)")
        return kept
    if rel.startswith("archive/"):
        a, b = (_text(ours), _text(them)) if i_dream else (_text(them), _text(ours))
        return _bytes(merges.merge_appended(a, b))
    if rel.endswith(".jsonl"):
        base = "" if rel.endswith(TOMBSTONES) else _text(old)  # tombstones are never removed: a union
        return _bytes(merges.merge_records(base, _text(ours), _text(them)))
    if rel == "memory/MEMORY.md":
        data, clean = merges.merge_memory_md(old or b"", ours, them, ours_first=i_dream)
        if not clean:
            report.page_conflicts.append(rel)
        return data
    merged, clean = merges.merge_page(_text(old), _text(ours), _text(them))
    if not clean:
        report.page_conflicts.append(rel)
        report.warnings.append(f"{rel}: both machines changed the same lines; both versions are kept in the page")
    return _bytes(merged)


# --- write-back ---------------------------------------------------------------------------------------------------

def write_back(settings: Settings, repo: Repo, before: str | None, after: str, report: SyncReport, *,
               pause: Callable[[str], None] | None = None) -> None:
    """Step 5: every file that differs between the commit the live files were copied from (``before``) and the one
    to reflect (``after``), merged into its live file under its writers' lock with what the file holds now:

    * a daily log: :func:`suzent_cli.archive.merge_into_log` with :func:`.merge.merge_appended` (the dreaming
      machine's text first), a late-line record when the day is before today;
    * ``log.md``: the same merge under the ledger lock;
    * a state file: :func:`.merge.merge_records` of (copied, now, merged) under the state lock; on the dreaming
      machine a confirmation that arrives is re-stamped (``ts`` now, ``said_ts`` the original) so the dream folds
      it even when a page has folded later ones;
    * a page: unchanged since copied → the merged version; edited meanwhile → merged again (three-way), never over
      a person's edit; deleted here since → left deleted, with a warning.

    Idempotent (the journal replays it after a crash). Appends to ``report.written``, ``moved``, ``late_days``."""
    from suzent_cli.vault.state import append_late_lines

    i_dream = _is_dreamer(repo, after, report.machine)
    wanted = set(repo.files(after))
    today = settings.today
    for rel in repo.changed(before, after):
        if rel not in wanted:
            continue
        t = traveller_for(settings, rel)
        if t is None:
            continue
        if not _stays_inside(settings, t.live):
            report.warnings.append(f"{rel}: not written back: a symlink on its path leaves the tiers")
            continue
        new, old = repo.show(after, rel), repo.show(before, rel)
        if new is None:
            continue
        if pause is not None:
            pause("writing")
        new_text = _text(new)
        if t.kind == "log":
            day = archive.log_day(t.live)
            assert day is not None

            def merge(live: str, new_text: str = new_text) -> str:
                return merges.merge_appended(live, new_text) if i_dream else merges.merge_appended(new_text, live)

            def late(from_line: int, day: dt.date = day) -> None:
                if i_dream and day < today:  # only the dreaming machine folds late lines (and its lines never move)
                    append_late_lines(settings.paths.state_dir, day, from_line, timeout=settings.lock_timeout)
                    report.late_days.append(day.isoformat())

            done = archive.merge_into_log(t.live.parent, day, merge, timeout=settings.lock_timeout, on_changed=late)
            if done.from_line:
                report.written.append(str(t.live))
                report.lines_received += max(0, done.lines_added)
                if done.moved:
                    report.moved.append(str(t.live))
        elif t.kind == "ledger":  # the dreamer's: appended to here; elsewhere its version replaces this one
            if not i_dream:
                _keep_copy(settings, t.live, "log.md")
            _merge_locked(t, settings, lambda live, n=new_text: (
                merges.merge_appended(live, n) if i_dream else n), report)
        elif t.kind == "records":
            restamp = i_dream and t.live.name == CONFIRMATIONS
            base = "" if t.live.name == TOMBSTONES else _text(old)
            if t.live.name == TOMBSTONES:
                had = set(merges._records(_text(old)))
                report.tombstones_received += len([r for r in merges._records(_text(new)) if r not in had])

            def records(live: str, n: str = new_text, base: str = base, restamp: bool = restamp) -> str:
                out = merges.merge_records(base, live, n)
                return _restamped(out, live, base, settings) if restamp else out

            _merge_locked(t, settings, records, report)
        else:
            _write_page(t, settings, old, new, report)


def _keep_copy(settings: Settings, live: Path, name: str) -> None:
    """A copy of ``live`` in ``<home>/backups/sync/`` (0700) before a write-back replaces it with another machine's
    version (nothing a machine wrote is lost, even runner state)."""
    import shutil

    from suzent_cli.sync.conflicts import backup_path

    if not live.is_file():
        return
    target = backup_path(settings, "sync", f"{name}.{settings.clock.strftime('%Y%m%dT%H%M%S')}")
    shutil.copy2(live, target)
    os.chmod(target, 0o600)


def _stays_inside(settings: Settings, target: Path) -> bool:
    """True when ``target`` (which may not exist yet) resolves inside its tier: no symlink on its path — a linked
    folder in the vault, a log that is a link — may carry a write-back out of the archive, the memory dir or the
    vault (the tiers' one rule: :func:`suzent_cli.vault.link_leaving`)."""
    paths = settings.paths
    roots = [p.resolve() for p in (paths.archive_dir, paths.memory_dir, paths.vault_dir)]
    try:
        where = target.resolve()
    except (OSError, RuntimeError):
        return False
    return any(where == r or where.is_relative_to(r) for r in roots) and not (target.is_symlink() and not target.exists())


def _restamped(merged: str, live: str, base: str, settings: Settings) -> str:
    """Confirmations in ``merged`` that are neither ``live``'s nor the base's (they came from another machine),
    re-stamped now (module doc of :func:`write_back`)."""
    keep = set(merges._records(live)) | set(merges._records(base))
    now = settings.clock.isoformat(timespec="seconds")
    out = []
    for line in merges._records(merged):
        if line not in keep:
            try:
                record = json.loads(line)
                if isinstance(record, dict) and "said_ts" not in record:
                    record["said_ts"] = record.get("ts")
                    record["ts"] = now
                    line = json.dumps(record, ensure_ascii=False)
            except ValueError:
                pass
        out.append(line)
    return "".join(line + "\n" for line in out)


def _merge_locked(t: Traveller, settings: Settings, merge: Callable[[str], str], report: SyncReport) -> None:
    """An append-only file (the ledger, a state file) brought to ``merge(now)`` under its lock: appended when the
    result extends it, else replaced atomically."""
    t.live.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = t.lock if t.lock is not None else t.live.with_name(f".{t.live.name}.lock")
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with locked(lock, settings.lock_timeout):
        try:
            live = _text(t.live.read_bytes())
        except FileNotFoundError:
            live = ""
        merged = merge(live)
        if merged == live:
            return
        if merged.startswith(live) and (not live or live.endswith("\n")):
            from suzent_cli.files import append_held

            append_held(t.live, merged[len(live):].encode("utf-8", "surrogateescape"))
        else:
            atomic_write_bytes(t.live, _bytes(merged))
    report.written.append(str(t.live))


def _write_page(t: Traveller, settings: Settings, old: bytes | None, new: bytes, report: SyncReport) -> None:
    """A page, MEMORY.md, persona.md or user.md written back through :func:`suzent_cli.files.update_file` (the
    read-merge-replace loop every page writer uses: an edit made meanwhile is merged again, never overwritten)."""
    if old is not None and not t.live.exists():
        report.warnings.append(f"{t.rel}: deleted on this machine and changed on another; left deleted here "
                               "(the other version is in the synced repository)")
        return

    def merge(current: bytes | None) -> bytes | None:
        if current == new:
            return None
        if current is None or current == old:
            return new
        if t.rel == "memory/MEMORY.md":  # the zone just merged is the one to keep; the person's part merged again
            data, clean = merges.merge_memory_md(old or b"", new, current, ours_first=True)
        else:
            text, clean = merges.merge_page(_text(old), _text(current), _text(new))
            data = _bytes(text)
        if not clean and t.rel not in report.page_conflicts:
            report.page_conflicts.append(t.rel)
        return data

    t.live.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = t.lock if t.lock is not None else t.live.with_name(f".{t.live.name}.lock")
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    outcome, _ = update_file(t.live, merge, lock_path=lock, timeout=settings.lock_timeout)
    if outcome == "written":
        report.written.append(str(t.live))


def _save_role(settings: Settings, repo: Repo, report: SyncReport) -> None:
    """Cache who dreams (:func:`suzent_cli.dreamer.may_dream`) from the staging repository's head."""
    head = repo.head()
    dreamer = (repo.show(head, DREAMER_FILE) or b"").decode("utf-8", "replace").strip() if head else ""
    report.dreamer = dreamer
    report.dreams = not dreamer or dreamer == report.machine
    try:
        before = json.loads((repo.sync_dir / ROLE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = None
    if isinstance(before, dict) and before.get("dreamer") not in ("", None, report.machine) and \
            dreamer == report.machine:
        # taking the dream over: this machine's late-line records name lines the last dreamer already folded
        from suzent_cli.vault.state import LATE_LINES

        late = settings.paths.state_dir / LATE_LINES
        if late.is_file():
            _keep_copy(settings, late, LATE_LINES)
            late.unlink()
            report.warnings.append(f"this machine now dreams; its old late-line records were moved to "
                                   f"{settings.paths.home / 'backups' / 'sync'}")
    try:
        atomic_write_bytes(repo.sync_dir / ROLE_FILE, json.dumps({"dreamer": dreamer, "me": report.machine}).encode())
    except OSError as exc:
        report.warnings.append(f"could not record who dreams ({exc.strerror or exc})")


# --- indexing -----------------------------------------------------------------------------------------------------

def _index(settings: Settings, report: SyncReport) -> None:
    """Step 6: bring the index up to date with the files written back and every daily log and page holding a newly
    arrived tombstone's text, when the home has an index (the index never travels: each machine derives its own).
    A tombstone changes no file's mtime, so those files get a new one (their bytes are untouched): then one
    ``suzent index`` pass run by the home's server when one answers (its warm model, its index worker, the way a
    relayed ``suzent index`` runs), else :func:`suzent_cli.index.api.reindex_files` in this process. Failures are
    warnings (``suzent index`` later catches up)."""
    from suzent_cli.index.store import table_exists

    if not table_exists(settings.paths.index_dir):
        return
    files = {Path(p) for p in report.written}
    if report.tombstones_received:
        from suzent_cli.reconcile import logs_holding
        from suzent_cli.text import normalize
        from suzent_cli.vault.state import read_tombstones

        keys = {normalize(t) for t in read_tombstones(settings.paths.state_dir)}
        held = set(logs_holding(settings.paths.archive_dir, keys)) | set(report_pages(settings))
        for path in held:
            try:
                os.utime(path)  # the content is untouched; an mtime pass must look at it again
            except OSError:
                pass
        files |= held
    files = {f for f in files if f.exists() and f.suffix == ".md"}
    if not files:
        report.indexed = 0
        return
    via = _index_through_server(settings)
    if via is not None:
        report.indexed = len(files)
        report.index_via = "server"
        if via:
            report.warnings.append(f"index (through the server): {via}")
        return
    from suzent_cli.index.api import reindex_files

    try:
        result = reindex_files(settings, sorted(files))
    except (SuzentError, LockTimeout, OSError) as exc:
        report.warnings.append(f"the index was not brought up to date ({exc}); run suzent index")
        return
    report.indexed = len(files)
    report.index_via = "here"
    for key, message in result.errors:
        report.warnings.append(f"index: {key}: {message}")


def _index_through_server(settings: Settings) -> str | None:
    """Run ``suzent index`` on the home's running server (the local API's ``cli`` op, as the CLI relay sends it),
    its output discarded. None: no server answered or it declined (index here); "" it ran; else what went wrong."""
    import base64

    from suzent_cli import __version__
    from suzent_cli.server import paths as server_paths

    home = settings.paths.home
    if _no_server() or server_paths.untrusted_socket(server_paths.socket_path(home)) is not None:
        return None
    from suzent_cli.server.client import alive, connect

    backend = connect(home, timeout=600.0)
    if backend is None or not alive(backend):
        return None
    p = settings.paths
    argv = ["--home", str(home), "--memory-dir", str(p.memory_dir), "--vault-dir", str(p.vault_dir),
            "--index-dir", str(p.index_dir), "index"]
    env = dict(os.environ)
    env["SUZENT_HOME"] = str(home)
    request = {"argv": argv, "env": env, "stdout_tty": False, "stderr_tty": False, "terminal_size": None,
               "stdout_encoding": "utf-8", "stderr_encoding": "utf-8", "version": __version__}
    try:
        answer = backend.call("cli", request)
    except Exception as exc:  # noqa: BLE001 - the server may have gone mid-request: a warning, never a lost sync
        return f"the server failed ({exc}); run suzent index"
    if answer.get("ran") is not True:
        return None
    if int(answer.get("exit", 1)) != 0:
        err = base64.b64decode(answer.get("stderr_b64") or b"").decode("utf-8", "replace").strip()
        return (err.splitlines() or ["exit " + str(answer.get("exit"))])[-1]
    return ""


def _no_server() -> bool:
    """``SUZENT_NO_SERVER`` (not empty, not ``0``) or ``SUZENT_DEBUG``: the cold path, as for every relayed command."""
    return os.environ.get("SUZENT_NO_SERVER", "") not in ("", "0") or bool(os.environ.get("SUZENT_DEBUG"))


def report_pages(settings: Settings) -> list[Path]:
    """The vault's content pages (a tombstone that arrived may hide a claim on any of them)."""
    from suzent_cli.vault import content_pages

    return content_pages(settings.paths.vault_dir)
