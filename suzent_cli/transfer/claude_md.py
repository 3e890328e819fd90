"""``CLAUDE.md`` and ``AGENTS.md`` files: project rules, scoped to their repository.

Formats: Claude Code's memory files (https://docs.anthropic.com/en/docs/claude-code/memory: ``./CLAUDE.md`` or
``./.claude/CLAUDE.md`` for the project, ``./CLAUDE.local.md`` for the person in that project,
``~/.claude/CLAUDE.md`` for the person everywhere; lines ``@path`` import another file) and AGENTS.md
(https://agents.md: plain markdown at a repository's root or in subfolders). Both are free markdown.

Found under PATH (default: the current directory; a file is read alone): those names, at most :data:`MAX_DEPTH`
folders deep, never inside ``.git``, ``node_modules`` or other hidden or vendored folders but ``.claude``. Every
bullet or paragraph line is one memory of category ``rule``; headings become a ``section:`` tag; code fences and
``@path`` import lines are skipped (the imported file is not followed: import it by naming it). The scope is the
project of the file's folder (:func:`suzent_cli.scope.identify`; for ``.claude/CLAUDE.md`` the folder holding
``.claude``); ``~/.claude/CLAUDE.md`` (and ``$CLAUDE_CONFIG_DIR/CLAUDE.md``) is the person's. The date is the
file's modification day.
"""

from __future__ import annotations

import os
from pathlib import Path

from suzent_cli.transfer import (
    Memory,
    ReadContext,
    file_day,
    heading_tag,
    markdown_statements,
    read_text_file,
    split_frontmatter,
    within,
)

NAMES = ("CLAUDE.md", "AGENTS.md", "CLAUDE.local.md")
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "vendor", "dist", "build", "target"}
MAX_DEPTH = 6
MAX_FILES = 10_000  # folders walked, at most: a PATH of `/` is refused rather than walked for ever
CATEGORY = "rule"


def default_path() -> Path:
    return Path.cwd()


def _person_files() -> set[Path]:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return {Path(base, "CLAUDE.md").resolve(), Path(os.path.expanduser("~"), ".claude", "CLAUDE.md").resolve()}


def find(path: Path) -> list[Path]:
    """The rule files under ``path`` (module doc), sorted; ``[path]`` for a file."""
    from suzent_cli.errors import InputInvalid

    if path.is_file():
        return [path]
    found: list[Path] = []
    walked = 0
    for folder, dirs, files in os.walk(path):
        walked += 1
        if walked > MAX_FILES:
            raise InputInvalid(f"{path}: more than {MAX_FILES} folders to search; name a project folder instead")
        depth = len(Path(folder).relative_to(path).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and (not d.startswith(".") or d == ".claude")
                         and depth < MAX_DEPTH)
        for name in NAMES:
            if name in files:
                found.append(Path(folder) / name)
    return sorted(found)


def scope_of(file: Path) -> str:
    """The person's for the person's CLAUDE.md, else the project of the file's folder (module doc)."""
    from suzent_cli.scope import identify

    if file.resolve() in _person_files():
        return ""
    folder = file.parent.parent if file.parent.name == ".claude" else file.parent
    return identify(folder).key


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    out: list[Memory] = []
    for f in within(path, find(path), ctx) if path.is_dir() else find(path):
        text = read_text_file(f, ctx)
        _, body = split_frontmatter(f, text)
        scope = scope_of(f)
        day = file_day(f)
        for number, statement, heading in markdown_statements(body):
            if statement.startswith("@") and " " not in statement:
                ctx.skip("@path import lines")
                continue
            out.append(Memory(statement, CATEGORY, scope, f.resolve(), str(number), day=day,
                              tags=heading_tag(heading)))
    return out
