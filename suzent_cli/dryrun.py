"""``suzent dry-run``: review what a dream (or a lint pass) would change before anything live is mutated.

How it works, step by step:

1. **Fingerprint the live data**: every regular file under the home and under each tier path (memory dir, vault,
   index), tier symlinks followed, keyed by real path: ``(size, sha256)``; files under ``<home>/backups/`` (which
   can hold whole LanceDB copies) by ``(size, mtime_ns)`` only. See :func:`fingerprint`.
2. **Clone** (:func:`build_clone`): ``<clone>/home`` is a copy of the home (without ``backups/``); every tier that
   lives outside the home is copied to ``<clone>/tiers/<memory|vault|index>``; a tier inside the home keeps its
   relative place. Symlinks are dereferenced (a vault at ``<home>/notebook -> /elsewhere`` is copied as real
   files) and the clone is then checked to hold no symlink at all, so nothing in it can lead back to live data.
   ``<clone>/home/config.toml`` is the live config with its ``[paths]`` table pointing inside the clone; the
   clone's :class:`Settings` are resolved from it (path variables of the environment dropped) and every path is
   checked to lie inside the clone.
3. **Run the real dream** on the clone: ``DreamRunner(settings, config, engine=…).tick(force=…)`` (or
   ``lint_now()``): gate, engine, watermark, reconcile, promotion — the code ``suzent dream`` runs.
4. **Diff** the clone's text files against the snapshot taken right after cloning (unified diff, paths labelled
   ``home/…``, ``memory/…``, ``vault/…``), and compare the clone index's rows per source before and after.
5. **Fingerprint the live data again**; any difference raises :class:`LiveDataChanged` (exit code 6).

Crash behaviour: every write of a dry run goes to the clone. A crash (or Ctrl-C) at any step leaves at most the
clone behind — a temporary directory removed on the way out, or the ``--keep`` directory — and never touches the
live home, vault, memory dir or index.
"""

from __future__ import annotations

import datetime as dt
import difflib
import errno
import hashlib
import math
import os
import re
import shutil
import stat
import tempfile
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.config import DreamConfig, Paths, Settings, resolve_settings
from suzent_cli.dream.runner import HOLDER, DreamRunner, TickResult
from suzent_cli.errors import CloneFailed, ConfigInvalid, InputInvalid, LiveDataChanged, SuzentError, describe
from suzent_cli.files import atomic_write

# The tiers a clone carries, by diff label and Paths attribute. Order matters for ties (same dir, two tiers).
TIERS = (("vault", "vault_dir"), ("memory", "memory_dir"), ("index", "index_dir"))
# Environment variables that would point the clone's settings back at live data.
PATH_ENV = ("SUZENT_HOME", "SUZENT_DATA_DIR", "SUZENT_MEMORY_DIR", "SUZENT_VAULT_DIR", "SUZENT_INDEX_DIR")
BACKUPS = "backups"
MAX_NAMED = 5  # changed live paths named in the LiveDataChanged message


# --- fingerprints of the live data --------------------------------------------------------------------------
def live_roots(paths: Paths) -> list[Path]:
    """The live directories a dry run must leave byte-identical: home, memory dir, vault, index dir."""
    return [paths.home, paths.memory_dir, paths.vault_dir, paths.index_dir]


def fingerprint(roots: Iterable[Path], *, cheap: Iterable[Path] = ()) -> dict[str, tuple]:
    """``{real path: fingerprint}`` of every regular file under ``roots``, following symlinks (each real directory
    is walked once, so symlink loops and overlapping roots are harmless).

    A fingerprint is ``("sha256", size, hexdigest)``; files under a ``cheap`` directory (lexically, e.g.
    ``<home>/backups``) get ``("stat", size, mtime_ns)``; an unreadable file ``("unreadable", errno)``; a dangling
    symlink ``("dangling", target)`` under its own path. Sockets, FIFOs and devices are skipped. Missing roots
    contribute nothing. Never raises for a file; reads only.
    """
    prints: dict[str, tuple] = {}
    seen: set[str] = set()
    cheap_dirs = [_norm(c) for c in cheap]
    stack: list[Path] = [_norm(r) for r in roots][::-1]
    while stack:
        top = stack.pop()
        is_cheap = any(top.is_relative_to(c) for c in cheap_dirs)
        try:
            st = os.stat(top)
        except OSError as exc:
            if os.path.islink(top):
                prints.setdefault(str(top), ("dangling", _readlink(top)))
            elif exc.errno not in (errno.ENOENT, errno.ENOTDIR):  # missing: simply not there
                prints.setdefault(str(top), ("unreadable", exc.errno))
            continue
        real = os.path.realpath(top)
        if stat.S_ISDIR(st.st_mode):
            if real in seen:
                continue
            seen.add(real)
            try:
                names = sorted(os.listdir(top), reverse=True)
            except OSError as exc:
                prints.setdefault(real + os.sep, ("unreadable", exc.errno))
                continue
            stack.extend(top / name for name in names)
        elif stat.S_ISREG(st.st_mode):
            if is_cheap:
                prints.setdefault(real, ("stat", st.st_size, st.st_mtime_ns))
            elif prints.get(real, ("",))[0] != "sha256":
                prints[real] = _hash_file(real, st.st_size)
    return prints


def compare_fingerprints(before: Mapping[str, tuple], after: Mapping[str, tuple]) -> list[str]:
    """Paths added, removed or changed between two :func:`fingerprint` results, sorted."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _hash_file(path: str, size: int) -> tuple:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        return ("unreadable", exc.errno)
    return ("sha256", size, digest.hexdigest())


def _readlink(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _live_changed(changed: list[str], report: DryRunReport | None = None) -> LiveDataChanged:
    named = ", ".join(changed[:MAX_NAMED]) + (f" and {len(changed) - MAX_NAMED} more" if len(changed) > MAX_NAMED
                                              else "")
    return LiveDataChanged(f"live data changed during the dry run ({len(changed)} paths: {named}); the dry run "
                           "writes only to its clone, so another process (a concurrent capture, dream or index) "
                           "most likely wrote meanwhile: re-run the dry run when it is done",
                           tuple(changed), report)


# --- paths --------------------------------------------------------------------------------------------------
def _norm(path: str | Path) -> Path:
    """Absolute and lexically normalised (``..`` folded), symlinks NOT resolved."""
    return Path(os.path.normpath(os.path.abspath(path)))


def _inside(child: Path, parent: Path) -> bool:
    """True when ``child`` is ``parent`` or below it, lexically or once symlinks are resolved."""
    return (_norm(child).is_relative_to(_norm(parent))
            or Path(child).resolve().is_relative_to(Path(parent).resolve()))


def check_keep(keep: Path, paths: Paths) -> Path:
    """Validate a ``--keep`` directory: it must not exist or be an empty directory, and must be neither inside
    nor around the live data. Returns it (absolute). Raises :class:`InputInvalid`."""
    keep = _norm(keep)
    if keep.exists() or keep.is_symlink():
        if not keep.is_dir():
            raise InputInvalid(f"--keep {keep}: exists and is not a directory")
        if any(keep.iterdir()):
            raise InputInvalid(f"--keep {keep}: directory is not empty (give a new or empty directory)")
    _check_apart(keep, paths, "--keep")
    return keep


def check_output(output: Path, paths: Paths) -> Path:
    """Validate ``--output FILE``: its directory must exist, it must not be a directory, and it must not lie in
    the live data (writing there would break the dry run's promise). Returns it (absolute). Raises
    :class:`InputInvalid`."""
    output = _norm(output)
    if output.is_dir():
        raise InputInvalid(f"--output {output}: is a directory (give a file name)")
    if not output.parent.is_dir():
        raise InputInvalid(f"--output {output}: directory {output.parent} does not exist")
    for root in live_roots(paths):
        if _inside(output, root):
            raise InputInvalid(f"--output {output}: inside the live data ({root}); a dry run never writes there, "
                               "write the patch elsewhere")
    return output


def _check_apart(directory: Path, paths: Paths, what: str) -> None:
    for root in live_roots(paths):
        if _inside(directory, root) or _inside(root, directory):
            raise InputInvalid(f"{what} {directory}: overlaps the live data ({root}); the clone must live elsewhere")


def write_patch(output: Path, patch: str) -> None:
    """Write ``patch`` to ``output`` atomically (temp file, fsync, rename)."""
    atomic_write(output, patch)


# --- the clone ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Clone:
    """A self-contained copy of the live data. ``labels`` maps a diff label (``home``, ``memory``, ``vault``) to
    its directory in the clone; ``index_dir`` (excluded from the diff) is the clone's index."""

    root: Path
    settings: Settings
    labels: Mapping[str, Path]
    index_dir: Path


def clone_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the variables that locate data (:data:`PATH_ENV`): the clone's config must decide."""
    return {k: v for k, v in env.items() if k not in PATH_ENV}


def build_clone(settings: Settings, root: Path, *, env: Mapping[str, str]) -> Clone:
    """Copy the live data of ``settings`` into ``root`` (an existing, empty directory) and resolve the clone's
    settings (layout in the module doc).

    ``env`` is the environment the clone's settings are resolved with (:data:`PATH_ENV` removed); the live
    clock override (``--now``, or its old name ``--today``) is passed through when it was set. Raises
    :class:`CloneFailed` when a file cannot be copied, a symlink loops, the layout cannot be copied (a tier that
    contains the home), a symlink survived the copy or a clone path resolves outside ``root``;
    :class:`ConfigInvalid` for a config.toml that cannot be read.
    Reads the live data only.
    """
    root = _norm(root)
    paths = settings.paths
    home = _norm(paths.home)
    tiers = {name: _norm(getattr(paths, attr)) for name, attr in TIERS}
    for name, path in tiers.items():
        if path != home and home.is_relative_to(path):
            raise CloneFailed(f"the {name} dir {path} contains the home {home}: dry-run cannot copy that layout")
    # Tiers outside the home are copied on their own, the outermost one when they nest.
    outside: dict[str, Path] = {}
    for name, path in sorted(((n, p) for n, p in tiers.items() if not p.is_relative_to(home)),
                             key=lambda item: len(item[1].parts)):
        if not any(path.is_relative_to(r) for r in outside.values()):
            outside[name] = path

    def place(path: Path) -> Path:
        if path.is_relative_to(home):
            return root / "home" / path.relative_to(home)
        for name, top in outside.items():
            if path.is_relative_to(top):
                return root / "tiers" / name / path.relative_to(top)
        raise AssertionError(path)  # every tier is inside the home or an outside root

    _copy_tree(paths.home, root / "home", skip={home / BACKUPS})
    (root / "home").mkdir(parents=True, exist_ok=True)
    for name, top in outside.items():
        _copy_tree(top, root / "tiers" / name, skip=set())
    _refuse_symlinks(root)

    clone_paths = {name: place(path) for name, path in tiers.items()}
    _write_clone_config(paths.config_file, root / "home" / "config.toml", clone_paths)
    origins = settings.origins
    now = (settings.now.isoformat() if settings.now is not None and origins.get("now", "default") != "default"
           else None)
    clone_settings = resolve_settings(home=root / "home", env=clone_env(env), now=now)
    if clone_settings.config_errors:
        raise ConfigInvalid(clone_settings.config_errors[0])
    real_root = root.resolve()
    cp = clone_settings.paths
    for label, path in (("home", cp.home), ("memory dir", cp.memory_dir), ("vault", cp.vault_dir),
                        ("index dir", cp.index_dir)):
        if not (_norm(path).is_relative_to(root) and path.resolve().is_relative_to(real_root)):
            raise CloneFailed(f"the clone's {label} {path} is outside the clone {root}; refusing to run")
    labels = {"home": _norm(cp.home), "memory": _norm(cp.memory_dir), "vault": _norm(cp.vault_dir)}
    return Clone(root, clone_settings, labels, _norm(cp.index_dir))


def _copy_tree(src: Path, dst: Path, *, skip: set[Path]) -> None:
    """Copy the directory ``src`` to ``dst`` with symlinks dereferenced (a missing ``src`` copies nothing).

    Dangling symlinks, sockets, FIFOs and devices are left out; a symlink leading back to one of its own
    ancestors raises :class:`CloneFailed`. (Dangling links are filtered here rather than with copytree's
    ``ignore_dangling_symlinks``, which tests a relative link's target against the working directory and would
    silently drop a valid ``notebook -> ../vault``.)
    """
    if not os.path.exists(src):
        return
    if not os.path.isdir(src):
        raise CloneFailed(f"cannot copy {src}: not a directory")
    top = _norm(src)

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = _norm(directory)
        left_out: set[str] = set()
        for name in names:
            path = here / name
            if path in skip:
                left_out.add(name)
                continue
            try:
                st = os.stat(path)
            except OSError:  # a dangling symlink (or one we may not follow): nothing to copy
                left_out.add(name)
                continue
            if stat.S_ISDIR(st.st_mode):
                if os.path.islink(path):
                    target = Path(os.path.realpath(path))
                    chain = [Path(os.path.realpath(a)) for a in (here, *here.parents) if a.is_relative_to(top)]
                    if any(c.is_relative_to(target) for c in chain):
                        raise CloneFailed(f"cannot copy {path}: the symlink loops back to {target}")
            elif not stat.S_ISREG(st.st_mode):
                left_out.add(name)
        return left_out

    try:
        shutil.copytree(src, dst, symlinks=False, ignore=ignore, ignore_dangling_symlinks=False, dirs_exist_ok=True)
    except shutil.Error as exc:
        problems = exc.args[0] if exc.args and isinstance(exc.args[0], list) else [(str(src), str(dst), str(exc))]
        first = problems[0]
        raise CloneFailed(f"cannot copy {first[0]} into the clone ({first[2]})"
                          + (f" and {len(problems) - 1} more files" if len(problems) > 1 else "")) from None
    except OSError as exc:
        raise CloneFailed(f"cannot copy {exc.filename or src} into the clone ({exc.strerror or exc})") from None


def _refuse_symlinks(root: Path) -> None:
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            if os.path.islink(os.path.join(directory, name)):
                raise CloneFailed(f"the clone holds a symlink ({os.path.join(directory, name)}) that could lead "
                                  "back to live data; refusing to run")


def _write_clone_config(live: Path, target: Path, clone_paths: Mapping[str, Path]) -> None:
    doc: dict[str, Any] = {}
    if live.is_file():
        try:
            doc = tomllib.loads(live.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigInvalid(f"{live}: not valid TOML ({exc})") from None
    doc["paths"] = {"memory_dir": str(clone_paths["memory"]), "vault_dir": str(clone_paths["vault"]),
                    "index_dir": str(clone_paths["index"])}
    atomic_write(target, "# Written by `suzent dry-run`: the live config.toml, [paths] pointing inside this clone.\n"
                 + dump_toml(doc))


# --- a small TOML writer (tomllib only reads) ---------------------------------------------------------------
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dump_toml(doc: Mapping[str, Any]) -> str:
    """Serialize a document as read by :mod:`tomllib` back to TOML: top-level values first, then one ``[table]``
    per top-level table; deeper tables and arrays of tables are written inline. ``tomllib.loads(dump_toml(d)) ==
    d`` for every ``d`` tomllib can produce. Raises ``TypeError`` for a value TOML cannot hold."""
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for key, table in doc.items():
        if isinstance(table, dict):
            lines += ["", f"[{_toml_key(key)}]"] + [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_str(key)


def _toml_str(text: str) -> str:
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}
    return '"' + "".join(escapes.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch)
                         for ch in text) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


# --- text snapshots and the diff ----------------------------------------------------------------------------
def text_snapshot(clone: Clone) -> dict[str, tuple[str, str]]:
    """``{label path: ("text", content) | ("binary", sha256)}`` of every file in the clone except the index dir
    and lock files (``*.lock``, ``.dream.lock.holder``). Label paths are ``home/…``, ``memory/…`` or ``vault/…``
    (the innermost tier holding the file). Raises OSError for an unreadable file."""
    snap: dict[str, tuple[str, str]] = {}
    for directory, dirs, files in os.walk(clone.root):
        here = Path(directory)
        dirs[:] = sorted(d for d in dirs if here / d != clone.index_dir)
        for name in files:
            if name.endswith(".lock") or name == HOLDER:
                continue
            path = here / name
            data = path.read_bytes()
            try:
                value = ("text", data.decode("utf-8"))
            except UnicodeDecodeError:
                value = ("binary", hashlib.sha256(data).hexdigest())
            snap[_label(clone, path)] = value
    return snap


def _label(clone: Clone, path: Path) -> str:
    best: tuple[int, str, Path] | None = None
    for label in ("vault", "memory", "home"):  # ties (two tiers in one dir): vault first
        top = clone.labels[label]
        if path.is_relative_to(top) and (best is None or len(top.parts) > best[0]):
            best = (len(top.parts), label, top)
    if best is None:
        return "clone/" + path.relative_to(clone.root).as_posix()
    rel = path.relative_to(best[2]).as_posix()
    return f"{best[1]}/{rel}"


@dataclass(frozen=True)
class FileChange:
    """One changed file of the clone: ``status`` is ``added``, ``modified`` or ``removed``; a ``binary`` change
    has no lines in the patch."""

    path: str
    status: str
    added_lines: int
    removed_lines: int
    binary: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "added_lines": self.added_lines,
                "removed_lines": self.removed_lines, "binary": self.binary}


def diff_snapshots(before: Mapping[str, tuple[str, str]],
                   after: Mapping[str, tuple[str, str]]) -> tuple[list[FileChange], str]:
    """The changed files (sorted by path) and one unified diff of every text change (``a/<label path>`` →
    ``b/<label path>``, ``/dev/null`` for an added or removed file, ``\\ No newline at end of file`` where due),
    which ``patch -p1`` and ``git apply`` accept against a tree holding ``home/``, ``memory/`` and ``vault/``."""
    changes: list[FileChange] = []
    chunks: list[str] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        status = "added" if old is None else "removed" if new is None else "modified"
        if (old and old[0] == "binary") or (new and new[0] == "binary"):
            changes.append(FileChange(key, status, 0, 0, binary=True))
            continue
        chunk, plus, minus = _unified(old[1] if old else "", new[1] if new else "",
                                      "/dev/null" if old is None else f"a/{key}",
                                      "/dev/null" if new is None else f"b/{key}")
        chunks.append(chunk)
        changes.append(FileChange(key, status, plus, minus))
    return changes, "".join(chunks)


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\\n`` only (``str.splitlines`` also splits on ``\\r``, ``\\f``, U+2028 …, which
    would make a patch that does not apply)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _unified(old: str, new: str, fromfile: str, tofile: str) -> tuple[str, int, int]:
    out: list[str] = []
    plus = minus = 0
    for i, line in enumerate(difflib.unified_diff(_lines(old), _lines(new), fromfile, tofile, lineterm="\n")):
        if i >= 2 and line[:1] in "+- ":
            plus += line[0] == "+"
            minus += line[0] == "-"
            if not line.endswith("\n"):
                line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out), plus, minus


# --- the index ----------------------------------------------------------------------------------------------
@dataclass
class IndexChange:
    """Rows added and removed per ``source`` in the clone's index; ``note`` says why nothing could be compared."""

    by_source: dict[str, dict[str, int]] = field(default_factory=dict)
    rows_before: int | None = None
    rows_after: int | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"by_source": self.by_source, "rows_before": self.rows_before, "rows_after": self.rows_after,
                "note": self.note}


def index_rows(index_dir: Path) -> tuple[dict[str, set[str]] | None, str | None]:
    """``({source: {row id}}, None)`` for a readable index (legacy rows under ``(none)``), else ``(None, why)``.
    Never raises."""
    from suzent_cli.index.store import ReadStore, table_exists  # lancedb only when there is an index

    if not table_exists(index_dir):
        return None, "no index yet (run `suzent index`): nothing to compare"
    try:
        rows = ReadStore.open_existing(index_dir).ids_by_source()
    except SuzentError as exc:
        return None, f"index not readable: {exc}"
    except Exception as exc:  # noqa: BLE001 - a lance failure is a note, not a failed dry run
        return None, f"index not readable: {describe(exc, 320)}"
    return {("(none)" if k is None else k): v for k, v in rows.items()}, None


def compare_index(before: tuple[dict[str, set[str]] | None, str | None],
                  after: tuple[dict[str, set[str]] | None, str | None]) -> IndexChange:
    """Rows added/removed per source between two :func:`index_rows` results (sources with no change left out)."""
    (old, old_note), (new, new_note) = before, after
    if old is None and new is None:
        return IndexChange(note=old_note or new_note)
    if new is None:
        return IndexChange(rows_before=sum(map(len, old.values())), note=f"after the run: {new_note}")
    change = IndexChange(rows_before=None if old is None else sum(map(len, old.values())),
                         rows_after=sum(map(len, new.values())),
                         note=None if old is not None else f"before the run: {old_note}")
    old = old or {}
    for source in sorted(old.keys() | new.keys()):
        added = len(new.get(source, set()) - old.get(source, set()))
        removed = len(old.get(source, set()) - new.get(source, set()))
        if added or removed:
            change.by_source[source] = {"added": added, "removed": removed}
    return change


# --- the dry run --------------------------------------------------------------------------------------------
@dataclass
class DryRunReport:
    """What a dry run found. ``clone`` is the kept clone (``--keep``) or None (a temporary clone, removed);
    ``verified_files`` is how many live files were fingerprinted before and after; ``live_changed`` lists the live
    paths that changed meanwhile (empty when the live data is byte-identical)."""

    result: TickResult
    files: list[FileChange]
    patch: str
    index: IndexChange
    clone: Path | None
    verified_files: int
    live_changed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result.to_json(), "files_changed": [f.to_json() for f in self.files],
                "index": self.index.to_json(), "patch": self.patch,
                "clone": str(self.clone) if self.clone is not None else None,
                "live_unchanged": not self.live_changed, "live_changed": self.live_changed[:100],
                "verified_files": self.verified_files}


def dry_run(settings: Settings, config: DreamConfig, *, env: Mapping[str, str], force: bool = False,
            lint: bool = False, keep: Path | None = None) -> DryRunReport:
    """Clone the live data of ``settings``, run one dream tick (``force`` bypasses the gate) or, with ``lint``, a
    lint pass on the clone with ``config``, and report the difference (module doc).

    ``env`` is the environment for the clone's settings (see :func:`build_clone`); ``keep`` (validated with
    :func:`check_keep`; created if missing) keeps the clone there, otherwise a temporary directory is used and
    removed before returning (also on error). Raises :class:`InputInvalid` for a bad ``keep`` or a temporary
    directory inside the live data, :class:`CloneFailed`/:class:`ConfigInvalid` when the clone cannot be built,
    whatever the dream raises for broken state it cannot work around, and :class:`LiveDataChanged` (carrying the
    report in ``.report`` when the run finished) when a live file changed between the first and the last
    fingerprint. The live data is only ever read.
    """
    paths = settings.paths
    roots = live_roots(paths)
    cheap = [paths.home / BACKUPS]
    if keep is not None:
        keep = check_keep(keep, paths)
    live_before = fingerprint(roots, cheap=cheap)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        root, temporary = keep, False
    else:
        root, temporary = Path(tempfile.mkdtemp(prefix="suzent-dryrun-")), True
    try:
        if temporary:
            _check_apart(root, paths, "the temporary directory")  # TMPDIR inside the home: use --keep
        clone = build_clone(settings, root, env=env)
        before = text_snapshot(clone)
        index_before = index_rows(clone.index_dir)
        runner = DreamRunner(clone.settings, config, engine=config.engine_for(clone.settings))
        result = runner.lint_now() if lint else runner.tick(force=force)
        after = text_snapshot(clone)
        index_after = index_rows(clone.index_dir)
    except Exception as exc:
        changed = compare_fingerprints(live_before, fingerprint(roots, cheap=cheap))
        if changed:
            raise _live_changed(changed) from exc
        raise
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    files, patch = diff_snapshots(before, after)
    report = DryRunReport(result, files, patch, compare_index(index_before, index_after),
                          None if temporary else root, len(live_before))
    report.live_changed = compare_fingerprints(live_before, fingerprint(roots, cheap=cheap))
    if report.live_changed:
        raise _live_changed(report.live_changed, report)
    return report
