"""Project scopes: which project a working directory belongs to (issue 26, "project scopes").

A project is identified from git, in this order (:func:`identify`):

1. **The remote.** The normalised URL of the repository's ``origin`` remote (:func:`normalise_remote`):
   ``git@github.com:o/r.git``, ``ssh://git@github.com:22/o/r``, ``https://user:token@GitHub.com/o/r/`` are all
   ``github.com/o/r``. Every clone of one repository, on any machine, is one project.
2. **The repository.** Without an ``origin``, the repository's common git directory (``git rev-parse
   --git-common-dir``), so every worktree of one repository shares a key, and a monorepo's subfolders share the
   repository's: ``git:<the main worktree's absolute path>``.
3. **The directory.** Outside any repository (or with no usable ``git`` binary): ``dir:<the absolute path>``.

Reads only. The repository is found as git finds it, without running git (:func:`_discover`: walking up for
``.git``, following a worktree's ``gitdir:`` file and ``commondir``; a bare repository is its own), and ``origin``
is read from the repository's ``config`` file: a capture or a hook pays no process. Only what that cannot settle
(an ``[include]``, a ``.git`` that is not plainly a git directory) is asked of ``git`` (the system binary) with the
repository variables of the caller's environment removed (``GIT_DIR`` and its family would point every question at
another repository), a bounded time each; ``tests/test_scope_core.py`` checks both agree. Unlike git, the walk
ignores ``safe.directory`` (a repository owned by another user is still that repository) and filesystem
boundaries. Never raises for a directory it cannot read: it falls through to the next rule and says why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
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
    import subprocess  # only when the walk (_discover) or the config file (_origin_url) cannot answer

    env = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


_SECTION = re.compile(r'^\s*\[\s*remote\s+"origin"\s*\]\s*$')
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _origin_url(where: Path, common_dir: Path) -> str | None:
    """The ``origin`` remote's URL: read from the repository's own ``config`` file (saves a second ``git`` run,
    ~5 ms, on every capture and hook), or asked of ``git config`` when that file cannot settle it (unreadable, an
    ``[include]``, a quoted or continued value, an ``insteadOf`` rewrite)."""
    try:
        text = (common_dir / "config").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None and not re.search(r"^\s*\[\s*(include|url\b)", text, re.IGNORECASE | re.MULTILINE):
        section, url = False, None
        for line in text.splitlines():
            if line.lstrip().startswith("["):
                section = bool(_SECTION.match(line))
                continue
            found = _URL.match(line) if section else None
            if found:
                url = found.group(1)  # the last one wins, as git's --get does
        if url is None:
            return None
        if not any(c in url for c in '"\\;#'):
            return url or None
    return _git(where, "config", "--get", "remote.origin.url")


def _is_git_dir(path: Path) -> bool:
    """Does ``path`` look like a git directory (as git's discovery checks it: ``HEAD`` and ``objects``/``refs``,
    or a worktree's ``commondir``)?"""
    return (path / "HEAD").is_file() and ((path / "commondir").is_file()
                                          or ((path / "objects").is_dir() and (path / "refs").is_dir()))


def _discover(where: Path) -> Path | None:
    """The common git directory of the repository ``where`` is in, found the way git finds it but without running
    git (a process costs ~4 ms, plus ~3 ms to import :mod:`subprocess`, on every capture and hook): walking up from
    ``where``, the first ``.git`` (a directory, or a worktree's or submodule's ``gitdir:`` file; then its
    ``commondir``), or a directory that is a git directory itself (a bare repository, the inside of ``.git``).
    None: no repository up to the root. Raises ValueError when what it found is not plainly a git directory (git
    then answers: :func:`_common_dir`)."""
    for d in (where, *where.parents):
        dotgit = d / ".git"
        if dotgit.is_dir():
            gitdir = dotgit
        elif dotgit.is_file():
            line = dotgit.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                raise ValueError(f"{dotgit} holds no gitdir line")
            gitdir = (d / line[len("gitdir:"):].strip())
        elif _is_git_dir(d):
            gitdir = d
        else:
            continue
        if not _is_git_dir(gitdir):
            raise ValueError(f"{gitdir} is not plainly a git directory")
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()
            if not ((common / "objects").is_dir() and (common / "refs").is_dir()):
                raise ValueError(f"{gitdir}'s commondir names no git directory")
        return Path(os.path.realpath(common))
    return None


def _common_dir(where: Path) -> str | None:
    """The absolute common git directory of ``where``'s repository (:func:`_discover`; ``git rev-parse
    --git-common-dir`` when the walk cannot settle it), or None outside any repository."""
    try:
        found = _discover(where)
    except (OSError, ValueError, UnicodeDecodeError):
        return _git(where, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return str(found) if found is not None else None


def identify(path: Path | str) -> Project:
    """The project of the directory ``path`` (a file's folder when ``path`` is a file), by the rules of the module
    doc, its key spelled by :func:`canonical_key`. Never raises for an unreadable or missing directory: ``dir:`` of
    its absolute path, saying why."""
    found = _identify(path)
    key = canonical_key(found.key)
    if key == found.key:
        return found
    return Project(key, key_name(key), found.why.replace(found.key, key), found.root)


def _identify(path: Path | str) -> Project:
    where = Path(os.path.abspath(os.path.expanduser(str(path))))
    if where.is_file():
        where = where.parent
    if not where.is_dir():
        return Project(f"dir:{where}", where.name or str(where), "not a directory git can read", where)
    common = _common_dir(where)
    if common is None:
        return Project(f"dir:{where}", where.name or str(where), "not inside a git repository", where)
    common_dir = Path(common)
    root = common_dir.parent if common_dir.name == ".git" else common_dir  # a bare repository is its own root
    url = _origin_url(where, common_dir)
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
    """The key an :func:`encode_key` value stands for: valid text always (an escape of bytes that are not UTF-8,
    e.g. ``%FF`` written by hand, reads as U+FFFD, as :func:`canonical_key` spells such a key)."""
    from urllib.parse import unquote

    return unquote(value, errors="replace") if "%" in value else value


_SECRET_HINT = re.compile(r"[A-Za-z0-9_\-]{16,}|AKIA|ghp_|gho_|github_pat|glpat|sk-|xox[abp]-|AIza|npm_")
_DIGEST_KEY = re.compile(r"^(?:(?:dir|git|file):/|[^/]+/)sha256/[0-9a-f]{16}$")


def canonical_key(key: str) -> str:
    """``key`` as every writer and reader of scopes spells it (:func:`identify`, :func:`resolve_project`,
    :func:`scope_tag`), so the tag a capture writes and the scope a recall asks for always match:

    - text that is not valid UTF-8 (a path of undecodable bytes, as Python's surrogate escapes) has those bytes as
      U+FFFD;
    - a key whose tag would read as a secret to capture's screen (``guard.secrets.redact``: a repository or folder
      named like a token) is recorded by its digest, ``<dir:|git:|file:|host>/sha256/<16 hex>`` (a tag that looks
      like a secret would be dropped at capture, and the fact would silently become the person's, recalled in
      every project). Idempotent. The screen runs only for a key holding a token-shaped part (16+ word
      characters, or a known token prefix), so an ordinary key costs a regex search."""
    if any("\ud800" <= ch <= "\udfff" for ch in key):
        key = key.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not key or _DIGEST_KEY.match(key) or not _SECRET_HINT.search(key):
        return key
    from suzent_cli.guard.secrets import redact  # stdlib; its detectors load only for a candidate token

    if not redact(SCOPE_TAG_PREFIX + encode_key(key))[1]:
        return key
    import hashlib

    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    head = key.split(":", 1)[0] + ":" if key.startswith(("dir:", "git:", "file:")) else key.split("/", 1)[0]
    return f"{head}/sha256/{digest}"


def scope_tag(key: str) -> str:
    """The tag recording project ``key`` in a fact line's backtick span: ``project:<encoded key>``. Raises
    ValueError for the person's scope (a person's fact carries no tag)."""
    if not key:
        raise ValueError("the person's scope carries no tag")
    return SCOPE_TAG_PREFIX + encode_key(canonical_key(key))


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


# --- The current project of a session, and names people give projects ---------------------------------------------

ALL_PROJECTS = "*"  # recall's "every project": the MCP tools' `project: "*"`, `recall --all-projects`
CWD_ENV = "SUZENT_CWD"  # the working directory a relayed command was given in (suzent_cli.cli.relay sets it)
TRANSCRIPT_READ = 256 * 1024  # bytes of a transcript read to find the session's first real working directory
TRANSCRIPT_LINES = 200  # lines of it looked at


def temp_roots() -> tuple[Path, ...]:
    """The folders whose subfolders are scratch space (a subagent's or a throw-away session's working directory):
    :func:`tempfile.gettempdir`, ``/tmp``, ``/private/tmp``, ``/var/tmp``, ``/var/folders`` (macOS), resolved."""
    import tempfile

    roots = []
    for raw in (tempfile.gettempdir(), "/tmp", "/private/tmp", "/var/tmp", "/var/folders"):
        try:
            roots.append(Path(raw).resolve())
        except OSError:
            continue
    return tuple(dict.fromkeys(roots))


def is_scratch(project: Project) -> bool:
    """True when ``project`` is a directory (no git repository: a ``dir:`` key) inside a temporary folder
    (:func:`temp_roots`): a subagent's or scratch session's cwd, which belongs to the session that started it. A
    git repository cloned under ``/tmp`` is a project of its own."""
    if not project.key.startswith("dir:"):
        return False
    try:
        where = project.root.resolve()
    except (OSError, ValueError):  # ValueError: a NUL byte
        where = project.root
    return any(where != root and where.is_relative_to(root) for root in temp_roots())


def project_of(cwd: Path | str | None) -> Project | None:
    """The project a session working in ``cwd`` is in (:func:`identify`), or None — no project: no ``cwd``, one
    holding a NUL byte, the filesystem root, or the person's home directory itself (what is captured there is the
    person's)."""
    if cwd is None or not str(cwd).strip() or "\0" in str(cwd):
        return None  # a NUL byte names no directory (a junk payload or transcript line): no project
    found = identify(cwd)
    if found.key.startswith("dir:"):
        try:
            home = Path.home().resolve()
        except (OSError, RuntimeError):
            home = None
        where = found.root
        if where == Path(where.anchor) or (home is not None and where == home):
            return None
    return found


def session_project(cwd: Path | str | None, transcript: Path | str | None = None) -> Project | None:
    """The project of a hook's session: :func:`project_of` its ``cwd``; when that is a scratch folder
    (:func:`is_scratch`) and the session's ``transcript`` (Claude Code JSON lines, each carrying the ``cwd`` it ran
    in) names a working directory that is not one, the project of the first such (the session that started the
    subagent). At most :data:`TRANSCRIPT_READ` bytes / :data:`TRANSCRIPT_LINES` lines of a regular file are read
    (a FIFO or device is not opened: it could block); an unreadable one leaves the scratch folder's own project.
    Never raises."""
    found = project_of(cwd)
    if found is None or not is_scratch(found) or not transcript:
        return found
    import json
    import stat

    seen = {str(cwd)}
    try:
        if not stat.S_ISREG(os.stat(transcript).st_mode):
            return found  # a FIFO or a device would block the hook (or a server's worker) on its read
        fd = os.open(transcript, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(TRANSCRIPT_READ)
    except (OSError, ValueError):
        return found
    for raw in head.split(b"\n")[:TRANSCRIPT_LINES]:
        if b'"cwd"' not in raw:
            continue
        try:
            line = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        other = line.get("cwd") if isinstance(line, dict) else None
        if not isinstance(other, str) or not other.strip() or other in seen:
            continue
        seen.add(other)
        candidate = project_of(other)
        if candidate is not None and not is_scratch(candidate):
            return Project(candidate.key, candidate.name,
                           f"{candidate.why}; the session that started this one (cwd {found.root} is a scratch folder)",
                           candidate.root)
    return found


def key_name(key: str) -> str:
    """The short name of a project key: its last path part (``github.com/o/tax-client`` → ``tax-client``)."""
    tail = key.split(":", 1)[1] if key.startswith(("dir:", "git:", "file:")) else key
    return tail.rstrip("/").rsplit("/", 1)[-1] or key


def looks_like_key(text: str) -> bool:
    """Is ``text`` a project key as written (``dir:/…``, ``git:/…``, ``file:/…``, or ``host/owner/…`` with a dot in
    the host)?"""
    if text.startswith(("dir:/", "git:/", "file:/")):
        return True
    host, slash, rest = text.partition("/")
    return bool(slash and rest and "." in host and " " not in text and not text.startswith((".", "/", "~")))


def resolve_project(name: str, known: Callable[[], list[str]], cwd: Path | str | None = None) -> str:
    """The project key ``--project NAME`` / MCP ``project`` names: a key as written (:func:`looks_like_key`), an
    existing directory (relative to ``cwd``; its :func:`identify` key), or the short name (:func:`key_name`,
    case-insensitive) of exactly one of the ``known()`` keys. Raises ValueError (one line) for an empty name, an
    unknown name or one that names several projects."""
    text = name.strip()
    if not text:
        raise ValueError("--project needs a name: a project key, a directory or a known project's name")
    if looks_like_key(text):
        return canonical_key(text)
    base = Path(cwd) if cwd else Path.cwd()
    where = Path(os.path.expanduser(text))
    where = where if where.is_absolute() else base / where
    if ("/" in text or text.startswith((".", "~"))) and where.is_dir():
        return identify(where).key
    keys = [k for k in dict.fromkeys(known()) if k and key_name(k).lower() == text.lower()]
    if len(keys) == 1:
        return keys[0]
    if len(keys) > 1:
        raise ValueError(f"project {text!r} names {len(keys)} projects ({', '.join(sorted(keys)[:4])}): give the key")
    if where.is_dir():
        return identify(where).key
    raise ValueError(f"unknown project {text!r}: give a project key (see `suzent project --list`), a directory, or "
                     "the name of a project with captured facts")


def scopes_for(project_key: str | None) -> tuple[str, ...] | None:
    """The scopes a recall in project ``project_key`` may return: the person's and that project's (only the person's
    outside any project); None for :data:`ALL_PROJECTS` (no filter)."""
    if project_key == ALL_PROJECTS:
        return None
    return (PERSON,) if not project_key else (PERSON, project_key)
