"""Claude Code auto memory: ``~/.claude/projects/<sanitized project path>/memory/``.

Format (Claude Code's memory docs, https://docs.anthropic.com/en/docs/claude-code/memory, "auto memory"): per
project a ``memory/`` folder with ``MEMORY.md``, an index whose lines point at topic files
(``- [Title](file.md) — hook``), and topic files: markdown with YAML frontmatter ``name``, ``description`` and
``type`` (``metadata.type`` is read too) in ``user``/``feedback``/``project``/``reference``. The project folder's
name is the project's absolute path with every character that is not a letter or digit replaced by ``-``
(:func:`sanitize`).

Read as: every bullet or paragraph line of a topic file's body is one memory (headings become a ``section:`` tag,
code fences are skipped); ``MEMORY.md``'s index lines that point at a topic file present are not imported (the
topic file is), its other lines are. ``type: user``/``feedback`` memories are the person's (categories
``personal``/``interaction``); ``project``/``reference`` ones (and MEMORY.md's own lines) belong to the project
(categories ``context``/``reference``). A topic file ``suzent export --format claude-code`` wrote also carries
``metadata.category`` and ``metadata.project`` (the exact category and project key), read back as they are. The project is :func:`suzent_cli.scope.identify` of the folder name
unsanitized (:func:`unsanitize`) when that folder still exists, else ``dir:<the best guess>``. The date is the
file's modification day (the format records none).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from suzent_cli.errors import InputInvalid
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

INDEX = "MEMORY.md"
_POINTER = re.compile(r"^\s*[-*+]\s+\[[^\]]*\]\(([^)\s]+\.md)\)")
TYPES = {"user": ("personal", True), "feedback": ("interaction", True), "project": ("context", False),
         "reference": ("reference", False)}
MAX_DEPTH = 64  # path components walked by unsanitize


def default_path() -> Path:
    """``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(base) / "projects"


def sanitize(path: str) -> str:
    """Claude Code's project folder name for the absolute path ``path``: every non-alphanumeric character → ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def unsanitize(name: str) -> tuple[Path, bool]:
    """``(path, exists)``: the existing directory whose :func:`sanitize` is ``name``, found by walking from ``/``
    one entry at a time (several candidates: the first in sorted order that leads all the way); when none
    exists, every ``-`` read as ``/`` (``exists`` False)."""
    def walk(base: Path, rest: str, depth: int) -> Path | None:
        if not rest:
            return base
        if depth > MAX_DEPTH:
            return None
        try:
            entries = sorted(e for e in os.listdir(base) if not e.startswith(".") or rest.startswith("-"))
        except OSError:
            return None
        for entry in entries:
            s = sanitize(entry)
            if rest.startswith("-" + s) and (len(rest) == len(s) + 1 or rest[len(s) + 1] == "-"):
                if (base / entry).is_dir():
                    found = walk(base / entry, rest[len(s) + 1:], depth + 1)
                    if found is not None:
                        return found
        return None

    if name.startswith("-"):
        found = walk(Path("/"), name, 0)
        if found is not None:
            return found, True
    return Path("/" + name.strip("-").replace("-", "/")), False


def project_of(folder_name: str) -> str:
    """The scope key of a Claude Code project folder name (module doc)."""
    from suzent_cli.scope import identify

    where, exists = unsanitize(folder_name)
    return identify(where).key if exists else f"dir:{where}"


def memory_dirs(path: Path) -> list[Path]:
    """The ``memory/`` folders under ``path``: ``path`` itself when it is one (named ``memory``), a project
    folder's, or every project folder's of a ``projects`` folder."""
    if path.is_file():
        raise InputInvalid(f"{path}: a folder was expected (~/.claude/projects, a project's folder or its memory/)")
    if path.name == "memory":
        return [path]
    if (path / "memory").is_dir():
        return [path / "memory"]
    return sorted(p / "memory" for p in path.iterdir() if (p / "memory").is_dir())


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    """Every memory of the auto-memory folders under ``path`` (module doc). Raises InputInvalid for a file where a
    folder belongs, a topic file over the size limit or with frontmatter that does not load."""
    out: list[Memory] = []
    for mem in memory_dirs(path):
        scope = project_of(mem.parent.name)
        files = within(mem, sorted(p for p in mem.glob("*.md") if p.is_file()), ctx)
        pointed: set[str] = set()
        index = mem / INDEX
        if index.is_file():
            for line in read_text_file(index, ctx).split("\n"):
                m = _POINTER.match(line)
                if m and (mem / m.group(1)).is_file():
                    pointed.add(m.group(1))
        for f in files:
            text = read_text_file(f, ctx)
            meta, body = split_frontmatter(f, text)
            extra = meta.get("metadata") if isinstance(meta.get("metadata"), dict) else {}
            kind = meta.get("type") or extra.get("type")
            category, personal = TYPES.get(str(kind).strip().lower() if kind else "", ("context", False))
            if isinstance(extra.get("category"), str) and extra["category"].strip():
                category = extra["category"].strip()  # written by `suzent export --format claude-code`
            where = scope
            if isinstance(extra.get("project"), str) and extra["project"].strip():
                where = extra["project"].strip()
            day = file_day(f)
            for number, statement, heading in markdown_statements(body):
                if f.name == INDEX and (m := _POINTER.match(f"- {statement}")) and m.group(1) in pointed:
                    ctx.skip("MEMORY.md index lines pointing at a topic file")
                    continue
                out.append(Memory(statement, category, "" if personal else where, f.resolve(), str(number),
                                  day=day, tags=heading_tag(heading)))
    return out
