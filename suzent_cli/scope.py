"""Project scopes: which project a working directory belongs to (issue 26, "project scopes").

A project is identified from git, in this order (:func:`identify`):

1. **The remote.** The normalised URL of the repository's ``origin`` remote (:func:`normalise_remote`):
   ``git@github.com:o/r.git``, ``ssh://git@github.com:22/o/r``, ``https://user:token@GitHub.com/o/r/`` are all
   ``github.com/o/r``. Every clone of one repository, on any machine, is one project.
2. **The repository.** Without an ``origin``, the repository's common git directory (``git rev-parse
   --git-common-dir``), so every worktree of one repository shares a key, and a monorepo's subfolders share the
   repository's: ``git:<the main worktree's absolute path>``.
3. **The directory.** Outside any repository (or with no usable ``git`` binary): ``dir:<the absolute path>``.

Reads only: runs ``git`` (the system binary) with the repository variables of the caller's environment removed
(``GIT_DIR`` and its family would point every question at another repository), a bounded time each. Never raises
for a directory git cannot read: it falls through to the next rule and says why.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 5.0  # seconds a git question may take (a cold disk, a large repository)
# what would make `git -C PATH` answer about another repository than PATH's
REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES")
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[^/:]+):(?P<path>(?!//).+)$")  # git@host:owner/repo.git


@dataclass(frozen=True)
class Project:
    """One project: ``key`` (``github.com/o/r``, ``git:/abs/path`` or ``dir:/abs/path``; the scope's identity),
    ``name`` (short, for people and page folders: the repository's or the folder's last name), ``why`` (one line:
    which rule gave the key), ``root`` (the repository's main worktree, or the directory)."""

    key: str
    name: str
    why: str
    root: Path

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "name": self.name, "why": self.why, "root": str(self.root)}


def normalise_remote(url: str) -> str | None:
    """A remote URL as a project key: ``host/path`` with the host lower-cased, no user, password or port, no
    ``.git`` suffix and no trailing slash (``git@github.com:o/r.git`` → ``github.com/o/r``). A local path or
    ``file://`` URL gives ``file:<absolute path>``. None for an empty or unreadable URL."""
    url = url.strip()
    if not url:
        return None
    scp = _SCP.match(url) if "://" not in url else None
    if scp and not re.match(r"^[A-Za-z]:[\\/]", url):  # not a Windows drive path
        host, path = scp.group("host"), scp.group("path")
    elif "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme.lower() == "file":
            return "file:" + _clean_path(os.path.abspath(rest))
        hostpart, _, path = rest.partition("/")
        host = hostpart.rsplit("@", 1)[-1]
        if host.startswith("["):  # [::1]:22
            host = host.split("]", 1)[0] + "]"
        else:
            host = host.split(":", 1)[0]
    else:
        return "file:" + _clean_path(os.path.abspath(url))
    path = _clean_path(path.lstrip("~/").lstrip("/"))
    host = host.lower()
    if not host or not path:
        return None
    return f"{host}/{path}"


def _clean_path(path: str) -> str:
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    return path.rstrip("/")


def _git(cwd: Path, *args: str) -> str | None:
    """``git -C cwd ARGS``'s stdout (stripped), or None when git is missing, fails, or takes too long."""
    env = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def identify(path: Path | str) -> Project:
    """The project of the directory ``path`` (a file's folder when ``path`` is a file), by the rules of the module
    doc. Never raises for an unreadable or missing directory: ``dir:`` of its absolute path, saying why."""
    where = Path(os.path.abspath(os.path.expanduser(str(path))))
    if where.is_file():
        where = where.parent
    if not where.is_dir():
        return Project(f"dir:{where}", where.name or str(where), "not a directory git can read", where)
    common = _git(where, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common is None:
        return Project(f"dir:{where}", where.name or str(where), "not inside a git repository", where)
    common_dir = Path(common)
    root = common_dir.parent if common_dir.name == ".git" else common_dir  # a bare repository is its own root
    url = _git(where, "config", "--get", "remote.origin.url")
    key = normalise_remote(url) if url else None
    if key is not None:
        name = key.rsplit("/", 1)[-1] or root.name
        return Project(key, name, f"the git remote origin ({key})", root)  # never the URL: it may hold a token
    return Project(f"git:{root}", root.name or str(root), f"git repository at {root} (no origin remote)", root)


# --- Scopes of facts (the contract capture, the index, recall, the dream, sync and import share) -------------------
#
# A fact's scope is either the person's (PERSON, "": recalled everywhere) or one project's key. It is written in the
# fact line's backtick span as one tag, ``project:<key>`` with the key percent-encoded (scope_tag), so the original
# app still parses ``- [category] content``; a line without that tag is the person's. A vault page's scope is its
# frontmatter ``project:`` key; an index row's, its ``scope`` column.

PERSON = ""  # the person's scope: facts about them, recalled in every project
PERSON_CATEGORIES = frozenset({"personal", "preference", "goal", "interaction"})  # the person's wherever captured
SCOPE_TAG_PREFIX = "project:"
SCOPE_MODES = ("auto", "global", "project")  # the `scope` setting; `--global` and `--project NAME` override it
_KEY_SAFE = "/:@+,=~!$&'()*;"  # kept as is in an encoded key: everything else outside [A-Za-z0-9_.-] is %XX


def encode_key(key: str) -> str:
    """``key`` as one space-free, backtick-free tag value: UTF-8 percent-encoding of every character but letters,
    digits, ``_.-`` and ``/:@+,=~!$&'()*;`` (``dir:/home/a/my notes`` → ``dir:/home/a/my%20notes``).
    :func:`decode_key` inverts it."""
    from urllib.parse import quote

    return quote(key, safe=_KEY_SAFE)


def decode_key(value: str) -> str:
    """The key an :func:`encode_key` value stands for (invalid escapes are kept as written)."""
    from urllib.parse import unquote

    return unquote(value, errors="surrogateescape") if "%" in value else value


def scope_tag(key: str) -> str:
    """The tag recording project ``key`` in a fact line's backtick span: ``project:<encoded key>``. Raises
    ValueError for the person's scope (a person's fact carries no tag)."""
    if not key:
        raise ValueError("the person's scope carries no tag")
    return SCOPE_TAG_PREFIX + encode_key(key)


def scope_of_tags(tags: tuple[str, ...] | list[str]) -> str:
    """The scope recorded in a fact line's tags: the first ``project:<key>`` tag's decoded key, else PERSON."""
    for tag in tags:
        if tag.startswith(SCOPE_TAG_PREFIX) and len(tag) > len(SCOPE_TAG_PREFIX):
            return decode_key(tag[len(SCOPE_TAG_PREFIX):])
    return PERSON


def without_scope_tags(tags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``tags`` without any ``project:`` tag (to replace a fact's scope)."""
    return tuple(t for t in tags if not t.startswith(SCOPE_TAG_PREFIX))


def scope_for(category: str, project_key: str | None, mode: str = "auto") -> str:
    """The scope a fact of ``category`` captured in project ``project_key`` (None: outside any project) gets:

    - ``mode="global"`` (``--global``): PERSON;
    - ``mode="project"`` (``--project NAME``, ``project_key`` that project's key): ``project_key``, whatever the
      category;
    - ``mode="auto"`` (the default): PERSON for the person's categories (:data:`PERSON_CATEGORIES`, compared
      case-insensitively) or when there is no project, else ``project_key``.

    Raises ValueError for an unknown mode."""
    if mode not in SCOPE_MODES:
        raise ValueError(f"unknown scope mode {mode!r} (one of {', '.join(SCOPE_MODES)})")
    if mode == "global" or not project_key:
        return PERSON
    if mode == "project":
        return project_key
    return PERSON if category.strip().lower() in PERSON_CATEGORIES else project_key
