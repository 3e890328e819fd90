"""Per-project pages: where a project's claims live in the vault, and which scope a page belongs to (issue 26).

A fact whose log line carries a ``project:<key>`` tag (:mod:`suzent_cli.scope`) is consolidated into pages under
``1_Projects/<folder>/``, one folder per project key, each page recording the key in its frontmatter::

    ---
    type: project
    project: github.com/acme/api
    ---

The page inside the folder is named as the person's page for the same category would be
(``technical`` → ``Technical.md``, ``context`` → ``Context.md``, ``preference`` → ``Preferences.md``, …:
:func:`project_page_for`).

**The folder** (:func:`folder_for`). The folder that already holds pages recording the key wins (a person may have
renamed it); otherwise :func:`folder_name`: a safe name from the key's last part and the first 6 hex digits of the
key's SHA-256, ``api-3f2a1b``. The hash is always there, not only on a collision: two keys with one short name
(``github.com/a/api``, ``gitlab.com/b/api``) never share a folder, and two machines dreaming on their own (issue 26,
sync) pick the same folder for one key without asking each other. A folder whose pages record another key is never
reused (a longer hash is taken instead); pages there that record no key are adopted (the dream records the key).

**A page's scope** (:func:`page_scope`): its frontmatter ``project:`` key (a string); a page without one is the
person's, so every page written before issue 26 is the person's. A page under a project folder always records its
key (the dream stamps it); a person may write the key into any page to make it that project's.

Reads only; never raises for a page that does not parse (it records no key: the person's).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from suzent_cli.scope import PERSON

PROJECTS = "1_Projects"
PROJECT_KEY = "project"  # the frontmatter key recording a page's project
HASH_DIGITS = 6
MAX_NAME = 40
_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)


def folder_name(key: str, digits: int = HASH_DIGITS) -> str:
    """The folder name a project ``key`` gets when it has none yet: the key's last path part made safe (letters,
    digits, ``_.-``; other runs become ``-``; at most 40 characters; ``project`` when nothing is left), then ``-``
    and the first ``digits`` hex digits of the key's SHA-256. ``github.com/acme/api`` → ``api-<6 hex>``;
    ``dir:/home/a/my notes`` → ``my-notes-<6 hex>``. Deterministic: the same key gives the same name on every
    machine."""
    last = key.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    safe = _UNSAFE.sub("-", last).strip("-.")[:MAX_NAME].strip("-.") or "project"
    return f"{safe}-{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()[:digits]}"


def meta_scope(meta: dict) -> str:
    """The scope a page's frontmatter ``meta`` records: its ``project:`` value when a non-empty string, else
    PERSON."""
    value = meta.get(PROJECT_KEY) if isinstance(meta, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else PERSON


def data_scope(data: bytes) -> str:
    """The scope a page's bytes record (:func:`meta_scope` of its frontmatter); PERSON when the frontmatter does
    not load. Fast for the many pages that record none: the frontmatter is loaded only when the word ``project``
    occurs in it (a hook reads every page's scope)."""
    from suzent_cli.errors import DreamFailed
    from suzent_cli.vault.pages import parse_page

    text = data.decode("utf-8", errors="replace").lstrip()
    if not text.startswith("---"):
        return PERSON
    end = text.find("\n---", 3)
    if PROJECT_KEY not in (text[:end] if end > 0 else text):
        return PERSON
    try:
        return meta_scope(parse_page(data).meta)
    except (DreamFailed, ValueError):
        return PERSON


def page_scope(path: Path) -> str:
    """The scope of the page at ``path`` (:func:`data_scope`). PERSON for a page that is missing, unreadable or
    whose frontmatter does not load."""
    try:
        return data_scope(path.read_bytes())
    except OSError:
        return PERSON


def project_folders(vault_dir: Path) -> dict[str, str]:
    """``{project key: folder}`` for the folders directly under ``1_Projects/`` whose pages record a key (the
    folder of the first page, in path order, that records it; a person's folder without keys is not listed).
    Walks through :func:`suzent_cli.vault.content_pages`, so symlinks leaving the vault are never read."""
    from suzent_cli.vault import content_pages

    found: dict[str, str] = {}
    for path in content_pages(vault_dir):
        parts = path.relative_to(vault_dir).parts
        if len(parts) < 3 or parts[0] != PROJECTS:
            continue
        key = page_scope(path)
        if key and key not in found:
            found[key] = parts[1]
    return found


def folder_keys(vault_dir: Path, folder: str) -> set[str]:
    """The scopes the pages of ``1_Projects/<folder>/`` record (PERSON for a page with none)."""
    from suzent_cli.vault import content_pages

    base = vault_dir / PROJECTS / folder
    return {page_scope(p) for p in content_pages(vault_dir) if base in p.parents}


def folder_for(vault_dir: Path, key: str, known: dict[str, str] | None = None) -> str:
    """The folder under ``1_Projects/`` holding project ``key``'s pages (module doc): the one whose pages already
    record the key (``known``: a :func:`project_folders` map to reuse), else :func:`folder_name`, lengthened until no
    page of the folder records another project. Raises ValueError for the person's scope (it has no folder)."""
    if not key:
        raise ValueError("the person's scope has no project folder")
    known = project_folders(vault_dir) if known is None else known
    if key in known:
        return known[key]
    taken = {folder for k, folder in known.items() if k != key}
    for digits in (HASH_DIGITS, 12, 64):
        name = folder_name(key, digits)
        if name not in taken and folder_keys(vault_dir, name) <= {key, PERSON}:
            return name
    raise ValueError(f"no free folder for project {key!r}")  # a SHA-256 collision


def project_page_for(category: str, folder: str) -> str:
    """The vault-relative page a project fact of ``category`` goes to: ``1_Projects/<folder>/<name>``, ``<name>``
    the file name the person's page for that category has (:func:`suzent_cli.vault.claims.page_for`)."""
    from suzent_cli.vault.claims import page_for

    return f"{PROJECTS}/{folder}/{page_for(category).rsplit('/', 1)[-1]}"


def in_folder(rel: str, folder: str) -> bool:
    """True when the vault-relative POSIX path ``rel`` lies under ``1_Projects/<folder>/`` (any depth; compared
    case-insensitively, as page names are)."""
    return rel.casefold().startswith(f"{PROJECTS}/{folder}/".casefold())


def in_a_project_folder(rel: str, folders: set[str] | list[str] | tuple[str, ...]) -> bool:
    """True when ``rel`` lies under the folder of one of ``folders`` (project folders, :func:`project_folders`)."""
    return any(in_folder(rel, f) for f in folders)
