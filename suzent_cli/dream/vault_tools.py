"""The claude dream engine's sandbox: file tools confined to the vault, with their Anthropic tool definitions.

The agent's only capability is editing content pages. :class:`VaultTools` offers six tools — ``list_files``,
``read_file``, ``search``, ``write_file``, ``edit_file`` and (ingest only) ``hand_off_superseded`` — and
:meth:`VaultTools.call` runs one of them on the model's JSON input. It never raises: a refused path, a bad input
or an OS error comes back as ``(one-line reason, True)``, so the tool-use loop goes on and the model can correct
itself. Nothing is written by a refused call.

Paths are vault-relative POSIX paths, matched case-insensitively against what exists (``3_personal/PROFILE.md``
is the existing ``3_Personal/Profile.md``: names that differ only by case are one page). Refused: absolute paths
(``/x``, ``C:x``, ``~``), backslashes, ``..``, any component that is a symlink (file or directory) or starts with a
dot (``.state/``, ``.obsidian/``, temp files), the runner's ledger ``log.md`` at the vault root, anything whose
resolved path leaves the vault, and anything a ``protected`` tier holds (:func:`tier_paths`: the daily-log archive,
the memory dir with ``MEMORY.md``, the search index and ``.state``, whichever of them an odd configuration places
inside the vault; a tier folder that holds the vault itself guards the files directly in it). Comparisons are made
on resolved paths, case-insensitively. Only ``.md`` files are written. Writes hold the vault's page lock and never
land over an edit made meanwhile (:func:`~suzent_cli.files.update_file`): ``edit_file`` applies to the page as it
is at the rename, and ``write_file`` of a page that changed since the agent read it is refused (read it again).
``search`` runs a regular expression (the ``regex`` package) with a time budget — :data:`SEARCH_SECONDS`, and no
more than the time left before the run's deadline — so a pattern that backtracks catastrophically ends the call
with an error instead of hanging the dream past its ``--timeout``. The package counts that budget in CPU time of
the match, so on a heavily loaded machine one call may take a few times longer on the clock; the next call, and
the next model request, see the deadline and end the run.
Tool output is capped at :data:`OUTPUT_CAP` characters.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex as _regex

from suzent_cli.errors import LockTimeout, describe, one_line
from suzent_cli.files import read_text
from suzent_cli.vault import utf8_name
from suzent_cli.vault.pages import existing_case, update_page
from suzent_cli.vault.projects import PROJECTS, data_scope, in_a_project_folder, in_folder
from suzent_cli.vault.state import STATE_DIR

if TYPE_CHECKING:
    from suzent_cli.config import Paths

OUTPUT_CAP = 20_000
MAX_PAGE_CHARS = 200_000
MAX_LIST = 500
MAX_MATCHES = 200
MAX_MATCH_LINE = 300
HANDOFF_TOOL = "hand_off_superseded"
SEARCH_SECONDS = 3.0  # time budget of one search call (all pages), and of one list_files glob match

# A line-number column as the ingest message shows logs ("  12 | - [x] …"): tolerated on hand-off.
_NUMBER_PREFIX = re.compile(r"^\s*\d*\s*\|\s?")

_PATH_PROP = {"type": "string", "description": "Vault-relative POSIX path, e.g. '3_Personal/Profile.md'."}

TOOL_SCHEMAS: dict[str, dict] = {
    "list_files": {
        "name": "list_files",
        "description": "List the vault's files matching a glob pattern (relative to the vault root; '*' stays "
                       "within one folder, '**' spans folders). Hidden folders such as .state/ are never listed.",
        "input_schema": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Glob, e.g. '**/*.md' (the default: '**/*'), "
                                                         "'3_Personal/*.md', '2_Wiki/**'."}}},
    },
    "read_file": {
        "name": "read_file",
        "description": "Read a vault file as text, optionally a window of its lines.",
        "input_schema": {"type": "object", "properties": {
            "path": _PATH_PROP,
            "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to return."}},
            "required": ["path"]},
    },
    "search": {
        "name": "search",
        "description": "Search the vault's .md pages, case-insensitively, for a substring (or a regular "
                       "expression with regex=true). Returns 'path:line: text' per matching line.",
        "input_schema": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Text (or regex) to look for."},
            "regex": {"type": "boolean", "description": "Treat query as a Python regular expression."},
            "glob": {"type": "string", "description": "Only search pages matching this glob, e.g. '3_Personal/**'."}},
            "required": ["query"]},
    },
    "write_file": {
        "name": "write_file",
        "description": "Create or replace a .md page with the given full content (parent folders are created). "
                       "Prefer edit_file for changes to an existing page.",
        "input_schema": {"type": "object", "properties": {
            "path": _PATH_PROP,
            "content": {"type": "string", "description": "The complete new text of the page."}},
            "required": ["path", "content"]},
    },
    "edit_file": {
        "name": "edit_file",
        "description": "Replace one exact occurrence of old_string with new_string in a .md page. old_string "
                       "must occur exactly once (include surrounding lines to make it unique).",
        "input_schema": {"type": "object", "properties": {
            "path": _PATH_PROP,
            "old_string": {"type": "string", "description": "Exact text to replace, whitespace included."},
            "new_string": {"type": "string", "description": "Replacement text."}},
            "required": ["path", "old_string", "new_string"]},
    },
    HANDOFF_TOOL: {
        "name": HANDOFF_TOOL,
        "description": "Hand off daily-log fact lines you folded into an existing claim (a repeat that only bumped "
                       "its (confirmed Nx, last DATE) marker). Copy each line exactly as it appears in the logs "
                       "of this batch, without the line-number column. The runner retires them from search.",
        "input_schema": {"type": "object", "properties": {
            "lines": {"type": "array", "items": {"type": "string"},
                      "description": "Log fact lines, e.g. '- [preference] Likes tea `drinks`'."}},
            "required": ["lines"]},
    },
}


class ToolError(Exception):
    """A tool call that cannot be done (bad input, missing file, rejected hand-off): its text goes to the model."""


class Refused(ToolError):
    """A path the tools may not touch (outside the vault, symlink, ledger, state, protected, non-.md write)."""


def _cap(text: str, limit: int = OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated at {limit} characters]"


def glob_regex(pattern: str) -> _regex.Pattern[str]:
    """A regex matching vault-relative POSIX paths against ``pattern``: ``*`` and ``?`` stay within one path
    component, a ``**`` component spans any number of folders (zero included), ``[…]`` is a character class."""
    out: list[str] = []
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        j = 0
        while j < len(part):
            ch = part[j]
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            elif ch == "[" and (end := part.find("]", j + 2)) != -1:
                body = part[j + 1: end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append("[" + body.replace("\\", "\\\\") + "]")
                j = end
            else:
                out.append(re.escape(ch))
            j += 1
        if not last:
            out.append("/")
    return _regex.compile("".join(out) + r"\Z")  # the regex package: its matches take a timeout


class VaultTools:
    """File tools for one dream run, confined to ``vault_dir``.

    ``protected``: tiers no tool may touch (:func:`tier_paths`; a file, or a folder and anything in it).
    ``deadline``: the run's :func:`time.monotonic` deadline, which no search runs past. ``allowed_superseded``: the raw
    fact lines of the batch's logs, which ``hand_off_superseded`` may accept; None (lint) leaves that tool out of
    :attr:`schemas`. After the run, :attr:`written` holds the vault-relative paths written or edited,
    :attr:`accepted_superseded` the handed-off lines (raw, as in the logs, first-seen order) and :attr:`refusals`
    the one-line reasons of refused paths (outside the vault, symlinks, ledger, state, protected, non-.md writes).

    The scope fence (a batch is one scope's: :func:`suzent_cli.dream.scopes.split_by_scope`): ``fenced`` are the
    folders under ``1_Projects/`` of the other scopes' projects, which no tool lists, reads, searches or writes;
    ``home``, for a project's batch, is that project's folder: its pages are written there and nowhere else
    (``index.md`` excepted: it links pages of every scope). ``scope``: the batch's scope; a page written may record
    that project (``project:`` in its frontmatter) or none, never another (the index would recall it there).
    """

    def __init__(self, vault_dir: Path, protected: Iterable[Path | str] = (),
                 allowed_superseded: Iterable[str] | None = None, deadline: float | None = None,
                 home: str | None = None, fenced: Iterable[str] = (), scope: str | None = None) -> None:
        self.root = Path(vault_dir).resolve()
        self.home = home  # a project batch: its folder under 1_Projects/, the only place its pages are written
        self.fenced = tuple(f for f in fenced if f and f != home)  # other scopes' folders: never read nor written
        self.scope = scope  # the batch's scope (None: lint, no batch): a page written records it or none
        self.protected = tuple(Path(p).expanduser().resolve() for p in protected)
        self.deadline = deadline
        self._seen: dict[str, bytes] = {}  # page → bytes as the agent last read or wrote it
        self.handoff = allowed_superseded is not None
        self._allowed = set(allowed_superseded or ())
        self._by_stripped = {line.strip(): line for line in sorted(self._allowed)}
        self.written: set[str] = set()
        self.accepted_superseded: list[str] = []
        self.refusals: list[str] = []

    @property
    def schemas(self) -> list[dict]:
        """The Anthropic tool definitions (``name``, ``description``, ``input_schema``) to send with each request."""
        return [s for name, s in TOOL_SCHEMAS.items() if name != HANDOFF_TOOL or self.handoff]

    # --- dispatch -------------------------------------------------------------------------------------------
    def call(self, name: str, tool_input: Any) -> tuple[str, bool]:
        """Run tool ``name`` on ``tool_input`` (the model's JSON object). Returns ``(text, is_error)``; never raises
        for a refused path, bad input or OS error — those come back as ``(one-line reason, True)``."""
        handlers = {"list_files": self._list_files, "read_file": self._read_file, "search": self._search,
                    "write_file": self._write_file, "edit_file": self._edit_file}
        if self.handoff:
            handlers[HANDOFF_TOOL] = self._hand_off
        handler = handlers.get(name)
        if handler is None:
            return f"unknown tool {name!r}; available: {', '.join(handlers)}", True
        if not isinstance(tool_input, dict):
            return f"{name}: the input must be a JSON object", True
        try:
            return _cap(handler(tool_input)), False
        except ToolError as exc:
            reason = one_line(f"{name}: {exc}", 200)
            if isinstance(exc, Refused):
                self.refusals.append(reason)
            return reason, True
        except (OSError, ValueError) as exc:
            return one_line(f"{name} failed: {describe(exc)}", 200), True

    # --- paths ----------------------------------------------------------------------------------------------
    def resolve(self, path: Any, *, write: bool = False) -> tuple[str, Path]:
        """``(normalized relative path, absolute path)`` for a path the tools may use. Raises :class:`Refused`
        with the reason when it is refused (see the module docstring); ``write`` also requires a ``.md`` name."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("'path' must be a non-empty string")
        if "\x00" in path or "\\" in path:
            raise Refused(f"{path!r}: use a plain vault-relative path with forward slashes")
        if not utf8_name(path):  # lone surrogates (a JSON "\udcff"): the name of no page (vault.utf8_name)
            raise Refused(f"{path!r}: not valid UTF-8; refused")
        if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", path):
            raise Refused(f"{path!r}: absolute paths are refused; use a path relative to the vault root")
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts:
            raise Refused(f"{path!r}: not a file in the vault")
        if ".." in parts:
            raise Refused(f"{path!r}: '..' is refused; paths stay inside the vault")
        rel = "/".join(parts)
        if any(p.startswith(".") for p in parts):
            what = "the runner's state" if parts[0] == STATE_DIR else "hidden files and folders"
            raise Refused(f"{rel}: {what} are off limits")
        if len(parts) == 1 and parts[0].lower() == "log.md":
            raise Refused("log.md is the runner's ledger; only the runner writes it")
        rel = existing_case(self.root, rel)  # TOOLS.md beside Tools.md is Tools.md
        parts = rel.split("/")
        current = self.root
        for part in parts:
            current = current / part
            if current.is_symlink():
                raise Refused(f"{rel}: {current.relative_to(self.root).as_posix()} is a symlink; refused")
            if not current.exists():
                break
        target = (self.root / rel).resolve()
        if target != self.root and self.root not in target.parents:
            raise Refused(f"{rel}: resolves outside the vault")
        if self._guarded(target):
            raise Refused(f"{rel}: belongs to another tier (daily logs, MEMORY.md and the memory dir, the index or "
                          f"the runner's state); refused")
        if write and rel.lower() == "schema.md":
            raise Refused("schema.md is the vault's rulebook; the dream follows it and does not rewrite it")
        if write and not rel.lower().endswith(".md"):
            raise Refused(f"{rel}: only .md pages may be written")
        if in_a_project_folder(rel, self.fenced):
            raise Refused(f"{rel}: another scope's project folder; this batch folds one scope only")
        if write and self.home is not None and not in_folder(rel, self.home) and rel.lower() != "index.md":
            raise Refused(f"{rel}: this batch is one project's; write its pages under {PROJECTS}/{self.home}/ only")
        return rel, target

    def _guarded(self, target: Path) -> bool:
        """True when ``target`` (resolved) is a protected tier's: inside a protected file or folder, or directly in
        a protected folder that holds the vault itself. Compared case-insensitively (a case-insensitive filesystem
        spells one file many ways)."""
        t = os.path.normcase(str(target)).casefold()
        parent = os.path.normcase(str(target.parent)).casefold()
        for guard in self.protected:
            g = os.path.normcase(str(guard)).casefold()
            if guard == self.root or guard in self.root.parents:  # the vault lives inside this tier's folder
                if parent == g:
                    return True
            elif t == g or t.startswith(g.rstrip(os.sep) + os.sep):
                return True
        return False

    def _allowed_dir(self, path: Path) -> bool:
        return not (path.name.startswith(".") or not utf8_name(path.name) or path.is_symlink()
                    or self._guarded(path.resolve()))

    def _walk(self) -> list[str]:
        """Vault-relative paths of the files the tools may read, sorted (no dot, symlink or protected paths, no
        name that is not valid UTF-8: :func:`suzent_cli.vault.utf8_name`, the rule every vault walker applies, so
        no surrogate reaches the API request; the runner warns about those files once)."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if self._allowed_dir(here / d))
            for name in filenames:
                full = here / name
                if name.startswith(".") or not utf8_name(name) or full.is_symlink():
                    continue
                rel = full.relative_to(self.root).as_posix()
                if rel.lower() == "log.md" or self._guarded(full.resolve()) or in_a_project_folder(rel, self.fenced):
                    continue
                found.append(rel)
        return sorted(found)

    # --- tools ----------------------------------------------------------------------------------------------
    def _list_files(self, args: dict) -> str:
        pattern = _opt(args, "pattern", str, "**/*").strip() or "**/*"
        if pattern.startswith(("/", "~")) or ".." in pattern.split("/") or "\\" in pattern:
            raise ToolError(f"pattern {pattern!r}: use a glob relative to the vault root, without '..'")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        glob = glob_regex(pattern)
        end = time.monotonic() + self._budget()
        try:
            matches = [rel for rel in self._walk() if glob.match(rel, timeout=_left(end))]
        except TimeoutError:
            raise ToolError(f"pattern {pattern!r} took too long to match; use fewer wildcards") from None
        if not matches:
            return f"no files match {pattern!r}"
        shown = matches[:MAX_LIST]
        note = f"\n[{len(matches) - MAX_LIST} more not shown; narrow the pattern]" if len(matches) > MAX_LIST else ""
        return "\n".join(shown) + note

    def _budget(self) -> float:
        """Seconds one search or glob call may take: :data:`SEARCH_SECONDS`, never past the run's deadline."""
        left = SEARCH_SECONDS if self.deadline is None else min(SEARCH_SECONDS, self.deadline - time.monotonic())
        if left <= 0:
            raise ToolError("the run's time is up; finish now with your summary")
        return left

    def _read_file(self, args: dict) -> str:
        rel, target = self.resolve(_req(args, "path", str))
        if not target.is_file():
            raise ToolError(f"{rel}: no such file" if not target.exists() else f"{rel}: not a file")
        offset = _opt(args, "offset", int, 1)
        limit = _opt(args, "limit", int, None)
        if offset < 1 or (limit is not None and limit < 1):
            raise ToolError("'offset' and 'limit' must be at least 1")
        data = target.read_bytes()
        self._seen[rel] = data  # what a later write_file of this page must still find on disk
        lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
        if not lines:
            return f"({rel} is empty)"
        window = lines[offset - 1: offset - 1 + limit if limit else None]
        if not window:
            raise ToolError(f"{rel} has {len(lines)} lines; offset {offset} is past the end")
        text = "".join(window)
        last = offset - 1 + len(window)
        if len(text) > OUTPUT_CAP:
            return _cap(text) + f"\n[{rel} has {len(lines)} lines; read it in parts with offset/limit]"
        if offset > 1 or last < len(lines):
            more = f"; read on with offset={last + 1}" if last < len(lines) else ""
            text += ("" if text.endswith("\n") else "\n") + f"[lines {offset}-{last} of {len(lines)}{more}]"
        return text

    def _search(self, args: dict) -> str:
        query = _req(args, "query", str)
        if not query:
            raise ToolError("'query' must not be empty")
        scope = _opt(args, "glob", str, None)
        if scope and (scope.startswith(("/", "~")) or ".." in scope.split("/")):
            raise ToolError(f"glob {scope!r}: use a glob relative to the vault root, without '..'")
        budget = self._budget()
        try:
            needle = _regex.compile(query if _opt(args, "regex", bool, False) else _regex.escape(query),
                                    _regex.IGNORECASE)
        except (_regex.error, OverflowError, RecursionError) as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        in_scope = glob_regex(scope).match if scope else (lambda rel, timeout=None: True)
        hits: list[str] = []
        total = 0
        end = time.monotonic() + budget
        try:
            for rel in self._walk():
                if not rel.lower().endswith(".md") or not in_scope(rel, timeout=_left(end)):
                    continue
                for number, line in enumerate(read_text(self.root / rel).splitlines(), 1):
                    if needle.search(line, timeout=_left(end)):
                        total += 1
                        if len(hits) < MAX_MATCHES:
                            hits.append(f"{rel}:{number}: {line.strip()[:MAX_MATCH_LINE]}")
        except TimeoutError:
            raise ToolError(f"search for {query!r} stopped after {budget:.3g}s: the pattern backtracks too much "
                            "(nested repeats like '(a+)+'?); simplify it or search for plain text") from None
        if not hits:
            return f"no matches for {query!r}"
        note = f"\n[{total - MAX_MATCHES} more matches not shown; narrow the query]" if total > MAX_MATCHES else ""
        return "\n".join(hits) + note

    def _update(self, rel: str, target: Path, merge) -> bytes | None:
        """Rewrite page ``rel`` to ``merge(current bytes)`` under the vault's page lock, never over an edit made
        meanwhile (:func:`suzent_cli.vault.pages.update_page`). Returns the bytes on disk after, or None if left."""
        try:
            status, data = update_page(self.root, target, merge)
        except LockTimeout as exc:
            raise ToolError(f"{rel}: {exc}") from None
        if status == "left":
            return None
        self._seen[rel] = data
        self.written.add(rel)
        return data

    def _write_file(self, args: dict) -> str:
        rel, target = self.resolve(_req(args, "path", str), write=True)
        content = _req(args, "content", str)
        if len(content) > MAX_PAGE_CHARS:
            raise ToolError(f"{rel}: {len(content)} characters is too long for one page (max {MAX_PAGE_CHARS}); "
                            "split it")
        if target.is_dir():
            raise ToolError(f"{rel} is a folder")
        data = content.encode("utf-8", errors="replace")
        base: list[bytes | None] = [self._seen[rel]] if rel in self._seen else []
        existed: list[bool] = []

        self._check_scope(rel, data)

        def merge(current: bytes | None) -> bytes:
            if not base:
                base.append(current)  # never read by the agent: the page as it is now is what it replaces
            if current is not None and current != base[0]:
                raise ToolError(f"{rel} changed since you read it (a person may have edited it); read it again "
                                "and write your changes into what is there now")
            existed[:] = [current is not None]
            return data

        self._update(rel, target, merge)
        return f"{'replaced' if existed and existed[0] else 'created'} {rel} ({len(content.splitlines())} lines)"

    def _check_scope(self, rel: str, data: bytes) -> None:
        """Refuse page bytes that record a project other than the batch's (:func:`suzent_cli.vault.projects.
        data_scope`): a person's batch writes no ``project:`` key, a project's batch only its own."""
        if self.scope is None:
            return
        recorded = data_scope(data)
        if recorded and recorded != self.scope:
            raise Refused(f"{rel}: records project {recorded!r}; this batch is "
                          + (f"project {self.scope!r}'s" if self.scope else "the person's")
                          + " (write `project:` only as the batch's own key)")

    def _edit_file(self, args: dict) -> str:
        rel, target = self.resolve(_req(args, "path", str), write=True)
        old, new = _req(args, "old_string", str), _req(args, "new_string", str)
        if not old:
            raise ToolError("'old_string' must not be empty (use write_file to create a page)")

        def merge(current: bytes | None) -> bytes | None:  # applied to the page as it is at the rename
            if current is None:
                raise ToolError(f"{rel}: no such file; use write_file to create it")
            text = current.decode("utf-8", errors="replace")
            count = text.count(old)
            if count == 0:
                raise ToolError(f"old_string not found in {rel} (it must match exactly, whitespace included)")
            if count > 1:
                raise ToolError(f"old_string occurs {count} times in {rel}; include more context to make it unique")
            if old == new:
                return None
            updated = text.replace(old, new, 1)
            if len(updated) > MAX_PAGE_CHARS:
                raise ToolError(f"{rel} would grow past {MAX_PAGE_CHARS} characters; split the page")
            self._check_scope(rel, updated.encode("utf-8", errors="replace"))
            return updated.encode("utf-8", errors="replace")

        if not target.is_file():
            raise ToolError(f"{rel}: no such file; use write_file to create it")
        if self._update(rel, target, merge) is None:
            return f"{rel}: old_string equals new_string; nothing changed"
        return f"edited {rel}"

    def _hand_off(self, args: dict) -> str:
        lines = _req(args, "lines", list)
        if not lines or not all(isinstance(line, str) for line in lines):
            raise ToolError("'lines' must be a non-empty list of strings")
        accepted, rejected = 0, []
        for line in lines:
            raw = self._match_log_line(line)
            if raw is None:
                rejected.append(line)
                continue
            accepted += 1
            if raw not in self.accepted_superseded:
                self.accepted_superseded.append(raw)
        reply = f"handed off {accepted} line{'s' if accepted != 1 else ''}"
        if rejected:
            named = "; ".join(repr(one_line(r, 160)) for r in rejected[:10])
            raise ToolError(f"{reply}; rejected {len(rejected)} not found among this batch's log fact lines "
                            f"(copy them exactly as shown, without the line-number column): {named}")
        return reply

    def _match_log_line(self, line: str) -> str | None:
        """The raw log line ``line`` stands for: exact, else whitespace-trimmed, else without a number column."""
        if line in self._allowed:
            return line
        for probe in (line.strip(), _NUMBER_PREFIX.sub("", line, count=1).strip()):
            if probe in self._by_stripped:
                return self._by_stripped[probe]
        return None


def _left(end: float) -> float:
    """Seconds until the monotonic instant ``end`` (at least a millisecond: a call gets a chance to finish)."""
    return max(end - time.monotonic(), 0.001)


def tier_paths(paths: Paths) -> tuple[Path, ...]:
    """What the agent's tools must never touch, whatever the nesting of the configured folders: the daily-log
    archive, the memory dir (``MEMORY.md``, ``persona.md``, ``user.md``; when the vault lies inside it, only the
    files directly in it), the search index and the runner's ``.state``. Pass as ``protected`` to
    :class:`VaultTools`."""
    return (paths.archive_dir, paths.memory_dir, paths.memory_dir / "MEMORY.md", paths.index_dir, paths.state_dir)


def _req(args: dict, key: str, kind: type) -> Any:
    """``args[key]``, which must be present, not null and of type ``kind``; else :class:`ToolError`."""
    if args.get(key) is None:
        raise ToolError(f"missing required input {key!r}")
    return _opt(args, key, kind, None)


def _opt(args: dict, key: str, kind: type, default: Any) -> Any:
    """``args[key]`` checked to be of type ``kind`` (an integral float counts as int), or ``default`` when absent."""
    value = args.get(key)
    if value is None:
        return default
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ToolError(f"input {key!r} must be {_KIND_NAMES.get(kind, kind.__name__)}, got {type(value).__name__}")
    return value


_KIND_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}
