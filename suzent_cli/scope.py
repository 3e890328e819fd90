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
