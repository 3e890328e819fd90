"""Tier 2, the knowledge base: an Obsidian-style markdown vault (``notebook/``).

This package is the vault's format, read and written by every stage through it:

* this module: the layout (zones, root files, which files are content pages) and :func:`bootstrap`;
* :mod:`.pages` (a page: frontmatter, ``## Claims``, ``## Previously``, the heading rule; read, render, write,
  ``index.md`` links) and :mod:`.claims` (claim keys, subjects, polarity, ``stale_after``, human stamps);
  :mod:`.supersede` (the offline same-subject test: does a newer statement replace an older one; shared by the
  rules engine, lint and recall);
  :mod:`.frontmatter` (the one bounded YAML loader and page parser, strict or lenient);
  :mod:`.projects` (per-project pages: a project's folder under ``1_Projects/``, a page's scope);
* :mod:`.ledger` (``log.md``: the watermark and lint entries);
* :mod:`.memory_md` (MEMORY.md's zones and its writer);
* :mod:`.state` (the catalogue of every file under ``.state/``, with their readers and writers) and
  :mod:`.dream_state` (``dream_state.json``);
* :mod:`.forgotten` (the one forget matcher and the vault scrub).

Only the dream writes pages; ``log.md`` is the runner's; nothing here imports a stage or the index
(``tests/test_layering.py``).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from suzent_cli.copies import page_copy_of
from suzent_cli.files import write_if_absent
from suzent_cli.vault.state import STATE_DIR

ZONES = (
    "0_Inbox", "1_Projects", "2_Wiki/Concepts", "2_Wiki/Literature", "2_Wiki/Syntheses", "2_Wiki/Entities",
    "3_Personal", "4_Assets", "5_Archives",
)
ROOT_FILES = ("schema.md", "index.md", "log.md")
INDEX_SEED = "# Notebook Index\n\nOne line per page: `[[path]]` — what it holds.\n"
LOG_SEED = "# Notebook Log\n\n"


def bootstrap(vault_dir: Path) -> list[Path]:
    """Create the vault's zones, ``.state/`` and root files where missing; never overwrite. Returns what was created."""
    created: list[Path] = []
    for rel in (*ZONES, STATE_DIR):
        d = vault_dir / rel
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            created.append(d)
    schema = resources.files("suzent_cli").joinpath("data/schema.md").read_text(encoding="utf-8")
    for name, text in (("schema.md", schema), ("index.md", INDEX_SEED), ("log.md", LOG_SEED)):
        if write_if_absent(vault_dir / name, text):
            created.append(vault_dir / name)
    return created


def utf8_name(path: Path | str) -> bool:
    """True when ``path`` encodes as UTF-8. A file name that is not valid UTF-8 (bytes such as ``b"\\xff"``) reaches
    Python as lone surrogates (``surrogateescape``): it cannot be written to a page, a state file, the index or
    the terminal, so every walker of the vault skips it (:func:`content_pages`, :func:`skipped_warning`)."""
    from suzent_cli.text import is_utf8

    return is_utf8(str(path))


def shown_name(name: str) -> str:
    """``name`` printable whatever it holds: undecodable bytes as ``\\xNN`` (for warnings)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def skipped_warning(skipped: list[str]) -> str:
    """The one warning line for vault files skipped because their names are not valid UTF-8 ("" for none)."""
    if not skipped:
        return ""
    return (f"skipped {len(skipped)} vault file(s) whose name is not valid UTF-8 (e.g. {shown_name(skipped[0])}): "
            "rename them to read them")


def is_content_page(vault_dir: Path, path: Path) -> bool:
    """True for a vault ``.md`` page the indexer reads: not under a hidden folder (``.state``, Obsidian's
    ``.trash`` and ``.obsidian``, …), not hidden itself, not a root schema/index/log.md, a name that is valid
    UTF-8 (:func:`utf8_name`), not a folder-sync conflict copy (:func:`suzent_cli.copies.page_copy_of`)."""
    rel = path.relative_to(vault_dir)
    if path.suffix.lower() != ".md" or any(part.startswith(".") for part in rel.parts) or not utf8_name(rel):
        return False
    if page_copy_of(rel.name) is not None:  # a folder-sync conflict copy: folded by suzent sync, never indexed
        return False
    return not (len(rel.parts) == 1 and rel.name.lower() in ROOT_FILES)


def inside(target: Path, roots: tuple[Path, ...]) -> bool:
    """True when the resolved ``target`` is one of the resolved ``roots`` or lies under one."""
    return any(target == root or target.is_relative_to(root) for root in roots)


def link_leaving(path: Path, roots: tuple[Path, ...]) -> Path | None:
    """The one rule for symlinks in the tiers: None when ``path`` resolves inside one of ``roots`` (resolved
    directories); else the deepest symlink on it whose own target leaves them (the link to name in a warning), or
    ``path`` itself when none does (e.g. a dangling or looping link). Never raises."""
    try:
        if inside(path.resolve(strict=True), roots):
            return None
    except (OSError, RuntimeError):  # dangling or a loop: nothing to read either way
        pass
    absolute = path.absolute()
    for i in range(len(absolute.parts), 0, -1):
        candidate = Path(*absolute.parts[:i])
        try:
            if candidate.is_symlink() and not inside(candidate.resolve(), roots):
                return candidate
        except (OSError, RuntimeError):
            return candidate
    return absolute


def dir_links_leaving(vault_dir: Path, roots: tuple[Path, ...]) -> list[Path]:
    """Symlinked directories under the vault (outside hidden folders) whose target leaves ``roots``; the
    walkers never enter them (pathlib's ``rglob`` does not follow directory links), this names them."""
    out: list[Path] = []
    if not vault_dir.is_dir():
        return out
    for top, dirs, _files in os.walk(vault_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in list(dirs):
            full = Path(top) / d
            if full.is_symlink():
                dirs.remove(d)
                try:
                    target = full.resolve(strict=True)
                except (OSError, RuntimeError):
                    continue
                if not inside(target, roots):
                    out.append(full)
    return out


def refusal(link: Path, where: str = "the vault") -> str:
    """The one warning line for a symlink refused because its target leaves ``where`` (a phrase)."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return f"skipped {shown_name(str(link))}: a symlink to {shown_name(target)}, outside {where}"


TIERS = "the vault, the daily logs and the memory dir"  # ``where`` for the indexer, which also reads those tiers


def content_pages(vault_dir: Path, skipped: list[str] | None = None, refused: list[str] | None = None, *,
                  also_inside: tuple[Path, ...] = ()) -> list[Path]:
    """All content pages of the vault, sorted by vault-relative POSIX path (missing vault → empty). The one
    walker of the vault: every reader of pages (dream, lint, status, promote, the indexer) goes through it.

    A page that is a symlink — or lies under one — whose target leaves the vault (and the directories in
    ``also_inside``: the indexer also accepts links into the daily-log archive and the memory dir) is left out:
    ``notebook/x.md -> /etc/passwd`` is never read. ``refused`` (optional) receives one :func:`refusal` line per
    such link (a linked directory counts once). ``skipped`` (optional) receives the vault-relative names of the
    files left out because their names are not valid UTF-8 (for :func:`skipped_warning`)."""
    if not vault_dir.is_dir():
        return []
    files = [p for p in vault_dir.rglob("*") if p.is_file()]
    if skipped is not None:
        skipped += [p.relative_to(vault_dir).as_posix() for p in files if not utf8_name(p.relative_to(vault_dir))]
    roots = tuple(r.resolve() for r in (vault_dir, *also_inside))
    where = "the vault" if not also_inside else TIERS
    pages, seen = [], set()
    for p in files:
        if not is_content_page(vault_dir, p):
            continue
        link = link_leaving(p, roots)
        if link is None:
            pages.append(p)
        elif link not in seen:
            seen.add(link)
            if refused is not None:
                refused.append(refusal(link, where))
    if refused is not None:
        refused += [refusal(link, where) for link in dir_links_leaving(vault_dir, roots) if link not in seen]
    return sorted(pages, key=lambda p: p.relative_to(vault_dir).as_posix())


def page_hashes(vault_dir: Path) -> dict[str, str]:
    """``{vault-relative POSIX path: sha256 hex of the bytes}`` of every content page (:func:`content_pages`; a page
    that cannot be read hashes to ``?``): what a run compares before and after to know the pages it changed."""
    import hashlib

    out: dict[str, str] = {}
    for page in content_pages(vault_dir):
        try:
            out[page.relative_to(vault_dir).as_posix()] = hashlib.sha256(page.read_bytes()).hexdigest()
        except OSError:
            out[page.relative_to(vault_dir).as_posix()] = "?"
    return out
