"""The dream never folds across scopes: the one place that splits a batch by scope and checks what was written.

Issue 26: a fact is the person's (PERSON) or one project's (:mod:`suzent_cli.scope`); a page is the person's or one
project's (:mod:`suzent_cli.vault.projects`). Matching a fact against claims — a repeat, a change that retires a
claim to ``## Previously`` (:mod:`suzent_cli.vault.supersede`), a confirmation bumping a marker, the superseded
hand-off that follows — happens inside an engine's ``ingest``, so the runner hands each engine one scope at a time:

1. :func:`split_by_scope` partitions the batch before any matching: the facts by their line's ``project:`` tag;
   the confirmations by the scope of the claim they restate (:func:`confirmation_scope`); the revisit queue by
   page; each day's log text keeps only the fact lines of the part's scope. Each part names its scope and, for a
   project, its folder under ``1_Projects/`` (:func:`suzent_cli.vault.projects.folder_for`). The person's part
   comes first, then the projects by key.
2. :func:`ingest_by_scope` runs the engine on each part in turn and, after each, checks every page the part
   changed (:func:`check_writes`): a project's part writes only under its folder, and every page there records
   its key (a page the engine left without one is stamped); the person's part writes under no project's folder
   and into no page that records a project. A violation fails the run (:class:`~suzent_cli.errors.DreamFailed`:
   a counted attempt, the watermark stays); the claude engine's tools are fenced the same way
   (:class:`~suzent_cli.dream.vault_tools.VaultTools` ``home``/``fenced``), so an agent never gets that far.

Both engines go through here: the runner splits every batch, and an engine handed a batch that is not split yet
(``batch.scope is None``: a direct call) splits it with the same function.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from suzent_cli.archive import parse_fact_line
from suzent_cli.dream.engine import Engine, IngestBatch, IngestResult
from suzent_cli.errors import DreamFailed, LockTimeout
from suzent_cli.scope import PERSON, scope_of_tags
from suzent_cli.vault import content_pages, page_hashes
from suzent_cli.vault.projects import (
    PROJECT_KEY,
    PROJECTS,
    folder_for,
    in_a_project_folder,
    in_folder,
    meta_scope,
    page_scope,
    project_folders,
)


def writable(key: str) -> str:
    """``key`` as a page can record it: a key holding bytes that are not UTF-8 (a hand-written tag
    ``project:%FF`` decodes to a lone surrogate, which no page, YAML or index can hold) gets them as ``\\xNN`` text,
    so its facts are folded (into that spelling's folder) instead of wedging every run. Surrounding whitespace is
    dropped, as a page's frontmatter drops it (:func:`suzent_cli.vault.projects.meta_scope`). Any other key is
    itself."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        key = key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return key.strip()


def fact_scope(tags: tuple[str, ...] | list[str]) -> str:
    """The scope the dream folds a fact with these tags in: :func:`suzent_cli.scope.scope_of_tags`, made
    :func:`writable`."""
    return writable(scope_of_tags(tags))


def line_scope(line: str) -> str | None:
    """The scope of a daily-log fact line (:func:`fact_scope` of its tags); None for a line that is no fact."""
    parsed = parse_fact_line(line)
    return None if parsed is None else fact_scope(parsed[2])


def confirmation_scope(record: dict, vault_dir: Path, archive_dir: Path | None) -> str:
    """The scope a ``confirmations.jsonl`` record is folded in: the scope of the claim it restates — the page a
    ``notebook:<page>`` source names (:func:`suzent_cli.vault.projects.page_scope`), or the log line an
    ``archive:<day>.md`` source and ``locator`` name — else the record's own ``scope`` (a string), else PERSON.
    Never raises: a source that cannot be read falls through to the next rule."""
    source = str(record.get("source") or "")
    label, _, name = source.partition(":")
    parts = [p for p in name.split("/") if p]
    if parts and ".." not in parts and not name.startswith(("/", "\\")):
        try:
            if label == "notebook" and (vault_dir / name).is_file():
                return page_scope(vault_dir / name)
            locator = record.get("locator")
            if label == "archive" and archive_dir is not None and isinstance(locator, int) and locator > 0:
                lines = (archive_dir / name).read_bytes().decode("utf-8", "replace").split("\n")
                if locator <= len(lines) and (found := line_scope(lines[locator - 1].rstrip("\r"))) is not None:
                    return found
        except OSError:
            pass
    own = record.get("scope")
    return writable(own.strip()) if isinstance(own, str) else PERSON


def split_by_scope(batch: IngestBatch, known: dict[str, str] | None = None) -> list[IngestBatch]:
    """``batch`` as one batch per scope (module doc, step 1): every part's ``scope`` set (``folder`` for a
    project), its facts, confirmations, revisit pages and log lines that scope's only. A scope gets a part when it
    has a fact or a confirmation, the person's also when one of its pages is to be revisited; [] when the batch has
    none of these. ``known``: a
    :func:`~suzent_cli.vault.projects.project_folders` map to reuse (read from the vault when None). A batch
    already split comes back as it is."""
    if batch.scope is not None:
        return [batch]
    vault = batch.vault_dir
    known = project_folders(vault) if known is None else dict(known)
    facts: dict[str, list] = {}
    for f in batch.facts:
        facts.setdefault(fact_scope(f.tags), []).append(f)
    confirmations: dict[str, list[dict]] = {}
    for record in batch.confirmations:
        confirmations.setdefault(confirmation_scope(record, vault, batch.archive_dir), []).append(record)
    revisit: dict[str, list[str]] = {}
    for rel in batch.revisit:
        revisit.setdefault(page_scope(vault / rel), []).append(rel)
    parts: list[IngestBatch] = []
    person = {PERSON} if revisit.get(PERSON) else set()  # the person's pages are revisited as before
    for scope in sorted(set(facts) | set(confirmations) | person):  # PERSON ("") first
        folder = ""
        if scope:
            folder = known.setdefault(scope, folder_for(vault, scope, known))
        mine = facts.get(scope, [])
        logs = {}
        for day, text in batch.logs.items():
            if not any(f.day == day for f in mine):
                continue
            logs[day] = "\n".join(ln for ln in text.split("\n") if line_scope(ln) in (None, scope))
        parts.append(dataclasses.replace(
            batch, facts=tuple(mine), logs=logs, confirmations=tuple(confirmations.get(scope, [])),
            revisit=tuple(revisit.get(scope, [])), late={d: n for d, n in batch.late.items() if d in logs},
            scope=scope, folder=folder))
    return parts


def check_writes(part: IngestBatch, changed: list[str], folders: dict[str, str]) -> list[str]:
    """The scope violations among the pages ``changed`` (vault-relative) while folding ``part`` (module doc, step
    2), one line each; [] when every write stayed in the part's scope. For a project's part, then, every page of its
    folder that records no key is stamped with it (:func:`stamp_folder`). ``folders``: ``{key: folder}`` of every
    project known (:func:`~suzent_cli.vault.projects.project_folders`)."""
    vault = part.vault_dir
    others = {f for k, f in folders.items() if k != part.scope and f != part.folder}
    problems: list[str] = []
    for rel in changed:
        path = vault / rel
        if not path.is_file():
            continue  # a page removed is no fold into another scope (scrub, a person)
        recorded = page_scope(path)
        if part.scope:
            if not in_folder(rel, part.folder):
                problems.append(f"{rel}: written while folding project {part.scope}, outside its folder "
                                f"{PROJECTS}/{part.folder}/")
            elif recorded not in (PERSON, part.scope):
                problems.append(f"{rel}: records project {recorded} but was written while folding {part.scope}")
        elif in_a_project_folder(rel, others):
            problems.append(f"{rel}: a project's page, written while folding the person's facts")
        elif recorded != PERSON:
            problems.append(f"{rel}: records project {recorded} but was written while folding the person's facts")
    if part.scope and not problems:
        problems += stamp_folder(vault, part.folder, part.scope)
    return problems


def stamp_folder(vault_dir: Path, folder: str, key: str) -> list[str]:
    """Record ``project: <key>`` in every page of ``1_Projects/<folder>/`` that records no project (an agent that
    left it out, a person's page dropped there), through :func:`suzent_cli.vault.pages.write_page` (a page edited
    meanwhile is stamped as it is now). Without the key the index would read such a page as the person's and
    recall it in every project. Returns one line per page that could not be stamped."""
    from suzent_cli.vault.pages import pages_lock, read_page, write_page

    problems: list[str] = []
    base = vault_dir / PROJECTS / folder
    for path in content_pages(vault_dir):
        if base not in path.parents or page_scope(path) != PERSON:
            continue
        rel = path.relative_to(vault_dir).as_posix()

        def stamped(page):
            if page is None or meta_scope(page.meta) != PERSON:
                return None
            page.meta[PROJECT_KEY] = key
            return page

        try:
            page = read_page(path)
            if stamped(page) is not None:
                write_page(path, page, refold=stamped, lock_path=pages_lock(vault_dir))
        except (DreamFailed, LockTimeout, OSError) as exc:
            problems.append(f"{rel}: cannot record its project: {exc}")
    return problems


def ingest_by_scope(engine: Engine, batch: IngestBatch) -> IngestResult:
    """Run ``engine.ingest`` on each part of :func:`split_by_scope` (``batch`` itself when already split), checking
    each part's writes (:func:`check_writes`). Returns the parts' results merged (summaries joined with ``; ``,
    superseded lines, pages and warnings in part order). Raises :class:`DreamFailed` on a scope violation (the
    pages already written stay; the attempt counts) and whatever the engine raises."""
    folders = project_folders(batch.vault_dir)
    parts = split_by_scope(batch, folders)
    merged = IngestResult()
    summaries: list[str] = []
    for part in parts:
        if part.scope:
            folders.setdefault(part.scope, part.folder)
        before = page_hashes(batch.vault_dir)
        result = engine.ingest(part)
        after = page_hashes(batch.vault_dir)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        problems = check_writes(part, changed, folders)
        if problems:
            raise DreamFailed(f"the dream folded across scopes: {problems[0]}"
                              + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        if result.summary:
            summaries.append(result.summary if len(parts) == 1 or not part.scope
                             else f"[{part.folder}] {result.summary}")
        merged.superseded += result.superseded
        merged.pages += [p for p in result.pages if p not in merged.pages]
        merged.warnings += result.warnings
    merged.summary = "; ".join(summaries)
    return merged
