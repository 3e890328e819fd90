"""What the indexer reads: the source files of the index and the documents (future rows) each one yields.

Sources, in index order: core files (``persona.md``, ``user.md``, ``MEMORY.md`` as label ``facts``), daily logs
(``archive``), vault content pages (``notebook``). Each is keyed ``label:filename`` — never an absolute path, so
an index state survives a moved or synced home.

Each document carries its **scope** (:mod:`suzent_cli.scope`): a daily-log fact's is its line's ``project:<key>``
tag, a vault page's its frontmatter ``project:`` key, a core file's the person's (``""``). A project row's id
covers its scope; a person's row keeps the id it had before scopes existed.

A daily log yields one document per fact line; a core file one per paragraph chunk; a vault page one per
paragraph chunk of each ``##`` section, its importance stamped from the page's lifecycle signals
(:mod:`suzent_cli.index.rank`). A document whose normalized content is tombstoned is never produced.

The one tombstone filter is here: a log fact that is tombstoned (any reason) or forgotten in the same words
(:meth:`suzent_cli.vault.forgotten.Forgotten.same`) yields no document; a vault or core-file chunk loses every line that
holds a forgotten text (:meth:`~suzent_cli.vault.forgotten.Forgotten.scrub_chunk`: a claim by its text, markers aside)
and yields nothing when no line is left, so a person's other lines in the same chunk stay searchable. Row ids are
derived from everything that determines a row (source, locator, texts, metadata, importance), so an unchanged line
keeps its id and re-indexing is a diff: only new ids are embedded, only vanished ids are deleted. An edited
frontmatter (``status``, ``verified``, ``stale_after``) changes its page's rows' ids, so it takes effect on the
next pass.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli import archive, vault
from suzent_cli.config import Paths
from suzent_cli.files import read_text
from suzent_cli.index import rank
from suzent_cli.index.chunking import chunk_paragraphs, chunk_sections, memory_chunks
from suzent_cli.scope import PERSON, scope_of_tags
from suzent_cli.text import normalize
from suzent_cli.vault.forgotten import Forgotten

CORE_FILES = (("persona", "persona.md"), ("user", "user.md"), ("facts", "MEMORY.md"))
_ID_NAMESPACE = uuid.UUID("6f1f2a8e-3c1b-4d5e-9a7b-5d0c3e2f1a90")
RAW_IMPORTANCE = 0.5
_NOTHING_FORGOTTEN = Forgotten(())


@dataclass(frozen=True)
class Source:
    """One markdown file the index is derived from."""

    label: str  # archive | notebook | persona | user | facts
    filename: str  # daily-log name, vault-relative POSIX path, or core file name
    path: Path

    @property
    def key(self) -> str:
        return f"{self.label}:{self.filename}"

    @property
    def source_type(self) -> str:
        return {"archive": "archive_log", "notebook": "notebook"}.get(self.label, "core_file")


@dataclass
class Document:
    """A future row: ``content`` is returned by recall, ``embed_text`` embedded, ``search_text`` BM25-indexed."""

    source: str
    locator: int
    content: str
    embed_text: str
    search_text: str
    metadata: dict
    importance: float
    created_at: dt.datetime
    source_date: str | None = None
    id: str = field(default="")
    scope: str = PERSON  # the row's scope (suzent_cli.scope): "" the person's, else a project key

    def __post_init__(self) -> None:
        if not self.id:
            fields = [self.source, self.locator, self.content, self.embed_text, self.search_text, self.metadata,
                      self.importance]
            if self.scope:  # a person's row keeps the id it had before scopes existed (no re-embedding)
                fields.append(["scope", self.scope])
            ident = json.dumps(fields, sort_keys=True, ensure_ascii=False)
            self.id = str(uuid.uuid5(_ID_NAMESPACE, ident))


def discover(paths: Paths, refused: list[str] | None = None, skipped: list[str] | None = None) -> list[Source]:
    """Every source file that exists now, in index order.

    A symlink (file or directory) whose target leaves the tiers — the vault, the daily-log archive and the memory
    dir, each resolved — is refused by the vault's one rule (:func:`suzent_cli.vault.link_leaving`, which every
    walker of the vault applies): the indexer never reads ``notebook/x.md -> /etc/passwd``. With ``refused``, one
    line per refused link is appended to it (a linked directory counts once). Links that stay inside the tiers are
    read. ``skipped`` receives the vault files left out because their names are not valid UTF-8
    (:func:`suzent_cli.vault.content_pages`)."""
    roots = _tier_roots(paths)
    out: list[Source] = []
    for source in [Source(label, name, paths.memory_dir / name) for label, name in CORE_FILES
                   if (paths.memory_dir / name).is_file()] + \
            [Source("archive", p.name, p) for _, p in archive.list_logs(paths.archive_dir)]:
        link = vault.link_leaving(source.path, roots)
        if link is None:
            out.append(source)
        elif refused is not None:
            refused.append(vault.refusal(link, vault.TIERS))
    out += [Source("notebook", p.relative_to(paths.vault_dir).as_posix(), p)
            for p in vault.content_pages(paths.vault_dir, skipped, refused,
                                         also_inside=(paths.archive_dir, paths.memory_dir))]
    return out


def _tier_roots(paths: Paths) -> tuple[Path, ...]:
    return tuple(p.resolve() for p in (paths.vault_dir, paths.archive_dir, paths.memory_dir))


def source_for_path(paths: Paths, path: Path) -> Source | None:
    """The :class:`Source` a file path stands for, or None if the indexer does not read it (including a symlink
    that leaves the tiers, see :func:`discover`)."""
    path = path.absolute()
    if vault.link_leaving(path, _tier_roots(paths)) is not None:
        return None
    if path.parent == paths.archive_dir.absolute() and archive.log_day(path):
        return Source("archive", path.name, path)
    for label, name in CORE_FILES:
        if path == (paths.memory_dir / name).absolute():
            return Source(label, name, path)
    try:
        rel = path.relative_to(paths.vault_dir.absolute())
    except ValueError:
        return None
    if vault.is_content_page(paths.vault_dir.absolute(), path):
        return Source("notebook", rel.as_posix(), path)
    return None


def _fact_created_at(day: dt.date, time: str | None) -> dt.datetime:
    hour, minute = 0, 0
    if time:
        try:
            hour, minute = (int(x) for x in time.split(":"))
            dt.time(hour, minute)
        except ValueError:
            hour, minute = 0, 0
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=dt.UTC)


def log_documents(source: Source, text: str, tombstones: frozenset[str], context_window: int = 0,
                  forgotten: Forgotten = _NOTHING_FORGOTTEN) -> list[Document]:
    """One document per fact line of a daily log. With ``context_window`` N > 0, the N preceding facts of the same
    log are added to the search and embedding texts (never to ``content``): neighbouring-turn context."""
    day = archive.log_day(source.path)
    # Tombstoned facts go first, so their text cannot survive as another fact's context either.
    facts = [f for f in archive.parse_log(text, day)
             if normalize(f.content) not in tombstones and not forgotten.same(f.content)]
    docs: list[Document] = []
    for i, fact in enumerate(facts):
        context = [f.content for f in facts[max(0, i - context_window):i]] if context_window else []
        meta = {"source_type": "archive_log", "source_file": source.filename, "source_date": day.isoformat(),
                "category": fact.category, "tags": list(fact.tags), "line": fact.line, "session_id": fact.session}
        combined = "\n".join([*context, fact.content])
        docs.append(Document(source.key, fact.line, fact.content, combined, combined, meta, RAW_IMPORTANCE,
                             _fact_created_at(day, fact.time), day.isoformat(), scope=scope_of_tags(fact.tags)))
    return docs


def parse_frontmatter(text: str, warn: Callable[[str], None] | None = None) -> tuple[str, dict]:
    """``(body, frontmatter mapping)`` of a page by the one page parser in its lenient mode
    (:func:`suzent_cli.vault.frontmatter.parse` with ``lenient=True``: never raises; a bad value is read as a
    string, frontmatter past the loader's bounds is skipped with one line to ``warn``)."""
    if not text.startswith("---"):
        return text, {}
    from suzent_cli.vault import frontmatter  # yaml only for pages that have frontmatter

    meta, body = frontmatter.parse(text, lenient=True, warn=warn)
    return body, meta


def page_documents(source: Source, text: str, tombstones: frozenset[str], mtime: float,
                   forgotten: Forgotten = _NOTHING_FORGOTTEN,
                   warn: Callable[[str], None] | None = None) -> list[Document]:
    """One document per chunk of a vault page or core file; the page title helps full-text search.

    YAML frontmatter is not content: it is left out of the chunks (its ``title`` joins the search text).
    A vault page is chunked per ``##`` section (:func:`chunk_sections`: ``## Claims`` and ``## Previously`` never
    share a row; metadata ``section`` names the heading, ``""`` before the first one) and each chunk's importance
    is stamped from the page's lifecycle signals (:func:`rank.chunk_importance`; factors in metadata
    ``importance_factors``, which recall reads for the stale decay). Core files keep paragraph chunking and the
    neutral importance; MEMORY.md (``facts``) is chunked per zone (:func:`_memory_documents`). Locators count chunks
    in page order, tombstoned ones included. A line holding a forgotten text is left out of its chunk (module doc).
    Frontmatter past the loader's bounds is left out with one line to ``warn`` (naming the page).
    """
    created = dt.datetime.fromtimestamp(mtime, dt.UTC)
    if source.label == "facts":
        return _memory_documents(source, text, tombstones, created, forgotten)
    body, fm = parse_frontmatter(text, (lambda m: warn(f"{source.key}: {m}")) if warn else None)
    title = str(fm.get("title") or "") or Path(source.filename).stem
    scope = page_scope(fm) if source.label == "notebook" else PERSON
    if source.label == "notebook":
        signals = rank.page_signals(fm)
        pieces: list[tuple[str | None, str]] = list(chunk_sections(body))
    else:
        signals = None
        pieces = [(None, c) for c in chunk_paragraphs(body)]
    docs: list[Document] = []
    for i, (section, chunk) in enumerate(pieces):
        if normalize(chunk) in tombstones or not (chunk := forgotten.scrub_chunk(chunk)):
            continue
        importance = RAW_IMPORTANCE
        if signals is not None:
            importance, factors = rank.chunk_importance(signals, section, chunk)
            meta = {"source_type": "notebook", "source_file": source.filename, "chunk_index": i, "label": "notebook",
                    "category": "notebook", "tags": ["notebook", source.filename], "section": section or "",
                    rank.FACTORS_KEY: factors}
        else:
            meta = {"source_type": "core_file", "source_file": source.filename, "chunk_index": i, "label": source.label,
                    "category": "core_file", "tags": ["core_memory", source.label, source.filename]}
        context = f"{title}\n{section}" if section else title  # a claim row is found by its page and section too
        docs.append(Document(source.key, i, chunk, chunk, f"{context}\n{chunk}", meta, importance, created,
                             scope=scope))
    return docs


def page_scope(frontmatter: dict) -> str:
    """A vault page's scope: the vault's one rule (:func:`suzent_cli.vault.projects.meta_scope`: its frontmatter
    ``project:`` key, else the person's)."""
    from suzent_cli.vault.projects import meta_scope

    return meta_scope(frontmatter if isinstance(frontmatter, dict) else {})


def _memory_documents(source: Source, text: str, tombstones: frozenset[str], created: dt.datetime,
                      forgotten: Forgotten = _NOTHING_FORGOTTEN) -> list[Document]:
    """MEMORY.md: one document per paragraph chunk of its manual zone (:func:`~suzent_cli.index.chunking.memory_chunks`: a chunk
    never spans the ``<!-- /memory:generated -->`` marker; an unmarked file is all manual), metadata ``zone``. The
    generated zone is not indexed: it only restates daily-log facts and vault claims that are rows already. A
    manual-zone chunk carrying a ``verified: human:<name>@<date>`` stamp is stamped with the human floor (factors in
    ``importance_factors``); every other chunk keeps the neutral importance. No frontmatter is parsed."""
    docs: list[Document] = []
    for i, (zone, chunk) in enumerate(memory_chunks(text)):
        if zone == "generated" or normalize(chunk) in tombstones:
            continue  # the generated zone is a summary of the logs and the vault, which are indexed themselves
        if not (chunk := forgotten.scrub_chunk(chunk)):
            continue  # a person's line stays in their file; only what is indexed loses it
        importance, factors = rank.memory_chunk_importance(zone, chunk)
        meta = {"source_type": "core_file", "source_file": source.filename, "chunk_index": i, "label": source.label,
                "category": "core_file", "tags": ["core_memory", source.label, source.filename], "zone": zone}
        if factors is not None:
            meta[rank.FACTORS_KEY] = factors
        docs.append(Document(source.key, i, chunk, chunk, f"MEMORY\n{chunk}", meta, importance, created))
    return docs


def documents(source: Source, tombstones: frozenset[str], context_window: int = 0,
              forgotten: Forgotten = _NOTHING_FORGOTTEN,
              warn: Callable[[str], None] | None = None) -> tuple[list[Document], os.stat_result]:
    """Read ``source`` and build its documents. Returns ``(documents, stat taken before the read)``.
    ``tombstones``: every tombstoned text (:func:`~suzent_cli.vault.state.read_tombstones`); ``forgotten``: the texts a
    person forgot (:meth:`Forgotten.from_state`), applied as the module doc says. ``warn`` gets one line per problem
    that skipped part of the file (a page's frontmatter past the loader's bounds).

    The stat is taken first so that an append racing the read makes the recorded stat stale, and the file is
    looked at again on the next pass. Raises OSError if the file cannot be read.
    """
    st = source.path.stat()
    text = read_text(source.path)
    if source.label == "archive":
        return log_documents(source, text, tombstones, context_window, forgotten), st
    return page_documents(source, text, tombstones, st.st_mtime, forgotten, warn), st


