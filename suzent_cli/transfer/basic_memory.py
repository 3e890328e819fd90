"""A basic-memory project folder: markdown notes with observations and relations.

Format (basic-memory's note format, https://docs.basicmemory.com/concepts/knowledge-format and NOTE-FORMAT.md in
github.com/basicmachines-co/basic-memory): YAML frontmatter (``title``, ``type``, ``tags``, ``permalink``);
observations ``- [category] content #tag (context)`` and relations ``- relation_type [[Target]] (context)``
anywhere in the body (``## Observations``/``## Relations`` are conventional).

Read as: every ``*.md`` under the folder (hidden folders skipped). An observation is one memory: its category, its
content without the ``#tags`` (kept as tags) and with its ``(context)``; a relation is one memory ``<title>
<relation type, _ as space> <Target>`` of category ``relation``; task boxes (``- [ ]``, ``- [x]``) and links are
neither. Free prose is not imported (basic-memory itself keeps it as the note's content, not as facts). The date
is the frontmatter's ``created``/``date`` when present, else the file's modification day. A basic-memory project is
a knowledge base, not a repository: its memories are the person's unless the frontmatter names a ``project``.
"""

from __future__ import annotations

import re
from pathlib import Path

from suzent_cli.transfer import (
    Memory,
    ReadContext,
    file_day,
    instant,
    read_text_file,
    resolve_project,
    split_frontmatter,
    within,
)

_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([^\]\[]+)\]\s+(?!\()(.+)$")
_RELATION = re.compile(r"^\s*[-*]\s+([A-Za-z][\w-]*)\s+\[\[([^\]]+)\]\](?:\s*\((.*)\))?\s*$")
_HASHTAG = re.compile(r"(?<![\w&])#([\w/-]+)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _tags(found: list[str]) -> tuple[str, ...]:
    from suzent_cli.scope import encode_key

    return tuple(f"tag:{encode_key(t)}" for t in dict.fromkeys(found))


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    from suzent_cli.errors import InputInvalid

    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*.md") if p.is_file() and not any(part.startswith(".") for part in
                                                                 p.relative_to(path).parts))
    if not files:
        raise InputInvalid(f"{path}: no markdown notes here (a basic-memory project is a folder of *.md)")
    out: list[Memory] = []
    for f in within(path, files, ctx) if path.is_dir() else files:
        meta, body = split_frontmatter(f, read_text_file(f, ctx))
        title = str(meta.get("title") or f.stem).strip()
        day, time = (None, None)
        for key in ("created", "date"):
            if meta.get(key) is not None:
                day, time = instant(str(meta[key]), f"{f}: frontmatter {key}")
                break
        day = day or file_day(f)
        scope = resolve_project(meta["project"], ctx) if isinstance(meta.get("project"), str) else ""
        fence = False
        for number, line in body:
            if _FENCE.match(line):
                fence = not fence
                continue
            if fence:
                continue
            if (m := _OBSERVATION.match(line)) and m.group(1).strip() not in ("", "x", "X"):
                content = m.group(2).strip()
                tags = _tags(_HASHTAG.findall(content))
                content = " ".join(_HASHTAG.sub("", content).split())
                if content:
                    out.append(Memory(content, m.group(1).strip(), scope, f.resolve(), str(number), day=day,
                                      time=time, tags=tags))
            elif m := _RELATION.match(line):
                relation = m.group(1).replace("_", " ")
                text = f"{title} {relation} {m.group(2).strip()}"
                if m.group(3):
                    text += f" ({m.group(3).strip()})"
                out.append(Memory(text, "relation", scope, f.resolve(), str(number), day=day, time=time))
    return out
