"""The staging repository of ``suzent sync``: ``<home>/sync/repo``, a git work tree that only sync writes.

Git never touches a live tier: sync copies the travelling files in, commits, fetches, merges and pushes here, and
writes the results back into the tiers itself, under the writers' locks (:mod:`suzent_cli.sync`). Git is the
system binary, run with ``GIT_TERMINAL_PROMPT=0`` (a remote that wants a password fails instead of prompting), the
repository variables of the caller stripped (:data:`suzent_cli.scope.REPO_ENV`: a hook run inside another
repository must not redirect us), and every setting that would change what a commit holds or runs pinned in the
staging repository's own config (author, no signing, no hooks, no excludes, no line-ending conversion), so the
person's git config cannot change a sync; their credential helpers and ssh config still apply to the remote.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from suzent_cli.config import _masked_url
from suzent_cli.errors import InputInvalid, SuzentError
from suzent_cli.privacy import DIR_MODE
from suzent_cli.scope import REPO_ENV

BRANCH = "main"
REMOTE = "origin"
GIT_TIMEOUT = 600.0  # seconds for one git command (a fetch over a slow link)
PINNED = {
    "user.name": "suzent sync",
    "user.email": "sync@suzent.invalid",
    "commit.gpgsign": "false",
    "tag.gpgsign": "false",
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.fsmonitor": "false",
    "core.quotepath": "false",
    "core.precomposeunicode": "true",
    "gc.auto": "0",
    "merge.renames": "false",
    "diff.renames": "false",
    "advice.detachedHead": "false",
    "push.default": "simple",
    "fetch.prune": "false",
}


class SyncFailed(SuzentError):
    """``suzent sync`` could not finish (no remote, the remote unreachable, a push refused, git missing). Nothing
    already stored was lost: the local commit is kept and the next sync goes on from it."""


def masked(url: str) -> str:
    """``url`` without credentials (``https://user:token@host/x`` -> ``https://***@host/x``); an scp-like
    ``git@host:path`` is shown as it is (it holds no secret)."""
    return _masked_url(url) or url


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REPO_ENV and not k.startswith("GIT_CONFIG")}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")  # never a password prompt from ssh either
    return env


class Repo:
    """The staging repository at ``<sync dir>/repo``. Every method raises :class:`SyncFailed` with one line (a
    remote URL in it masked) when git fails."""

    def __init__(self, sync_dir: Path):
        self.sync_dir = sync_dir
        self.root = sync_dir / "repo"
        self.hooks = sync_dir / "no-hooks"
        self.excludes = sync_dir / "no-excludes"

    # --- running git -------------------------------------------------------------------------------------------
    def git(self, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess:
        """Run ``git ARGS`` in the staging work tree; bytes out. Raises SyncFailed (``check``) on a non-zero exit."""
        try:
            done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True, env=_env(),
                                  input=input, stdin=None if input is not None else subprocess.DEVNULL,
                                  timeout=GIT_TIMEOUT)
        except FileNotFoundError:
            raise SyncFailed("git is not installed (suzent sync runs the system git)") from None
        except subprocess.TimeoutExpired:
            raise SyncFailed(f"git {args[0]} took more than {GIT_TIMEOUT:.0f} s; nothing was lost, sync again") from None
        if check and done.returncode != 0:
            # a command on the staging repository itself (the remote's are checked by their callers): when it is
            # damaged, every sync fails here until it is rebuilt, so say how (the live tiers are the truth)
            raise SyncFailed(f"git {args[0]} failed: {self.said(done)} (if {self.root} is damaged, move it aside: "
                             "`suzent sync --remote URL` rebuilds it from this home's files and the remote)")
        return done

    def said(self, done: subprocess.CompletedProcess) -> str:
        """The first meaningful line git printed (remote URLs masked)."""
        text = (done.stderr or b"").decode("utf-8", "replace") + (done.stdout or b"").decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("hint:")]
        picked = next((ln for ln in lines if ln.lower().startswith(("fatal", "error", "remote: error", " ! ", "!"))),
                      lines[0] if lines else f"exit {done.returncode}")
        url = self.remote_url()
        if url and url in picked:
            picked = picked.replace(url, masked(url))
        return _mask_any(picked)

    def out(self, *args: str) -> str:
        return self.git(*args).stdout.decode("utf-8", "surrogateescape").strip()

    # --- set-up and repair ------------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create the staging repository (0700) on branch ``main`` with the pinned config, or repair one a killed
        sync left: stale ``*.lock`` files (we hold ``sync.lock``: no git of ours runs), an unfinished merge."""
        for d in (self.sync_dir, self.hooks):
            d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self.excludes.touch(mode=0o600, exist_ok=True)
        if not (self.root / ".git").is_dir():
            self.root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            self.git("init", "-q")
            self.git("symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
        for key, value in {**PINNED, "core.hooksPath": str(self.hooks), "core.excludesFile": str(self.excludes)}.items():
            self.git("config", key, value)
        git_dir = self.root / ".git"
        for stale in [*git_dir.glob("*.lock"), *git_dir.glob("refs/**/*.lock")]:
            stale.unlink(missing_ok=True)
        if (git_dir / "MERGE_HEAD").exists():
            self.git("merge", "--abort", check=False)
            (git_dir / "MERGE_HEAD").unlink(missing_ok=True)

    def remote_url(self) -> str | None:
        done = subprocess.run(["git", "-C", str(self.root), "config", "--get", f"remote.{REMOTE}.url"],
                              capture_output=True, env=_env(), stdin=subprocess.DEVNULL)
        url = done.stdout.decode("utf-8", "replace").strip()
        return url or None

    def set_remote(self, url: str) -> None:
        """Remember ``url`` as the remote (``origin`` of the staging repository)."""
        if self.remote_url() is None:
            self.git("remote", "add", REMOTE, url)
        else:
            self.git("remote", "set-url", REMOTE, url)

    # --- commits -------------------------------------------------------------------------------------------------
    def head(self) -> str | None:
        done = self.git("rev-parse", "--verify", "-q", "HEAD", check=False)
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def remote_head(self) -> str | None:
        done = self.git("rev-parse", "--verify", "-q", f"refs/remotes/{REMOTE}/{BRANCH}", check=False)
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def commit_all(self, message: str, *, merging: bool = False) -> str | None:
        """Stage every file of the work tree (ignore rules off) and commit; the new commit, or None when nothing
        changed (``merging``: a merge is always committed, even one whose tree is ours: it records the remote's
        head as a parent, so the push that follows is a fast-forward)."""
        self.git("add", "--all", "--force", "--", ".")
        if not merging and self.head() is not None and self.git("diff", "--cached", "--quiet", check=False).returncode == 0:
            return None
        self.git("commit", "-q", "--no-verify", "-m", message)
        return self.head()

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.git("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        done = self.git("merge-base", a, b, check=False)
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def files(self, commit: str) -> list[str]:
        """Every regular file path of ``commit``'s tree (a symlink or submodule a remote holds is never a file of
        ours: it is left out)."""
        text = self.git("ls-tree", "-r", "-z", commit).stdout.decode("utf-8", "surrogateescape")
        out = []
        for entry in text.split("\0"):
            meta, _, path = entry.partition("\t")
            if path and meta.split(" ")[0] in ("100644", "100755"):
                out.append(path)
        return out

    def changed(self, a: str | None, b: str) -> list[str]:
        """Paths that differ between commits ``a`` (None: the empty tree) and ``b``."""
        if a is None:
            return self.files(b)
        text = self.git("diff", "--name-only", "-z", "--no-renames", a, b).stdout.decode("utf-8", "surrogateescape")
        return [p for p in text.split("\0") if p]

    def show(self, commit: str | None, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, or None when it has no such file."""
        if commit is None:
            return None
        done = self.git("cat-file", "blob", f"{commit}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def fetch(self) -> None:
        done = self.git("fetch", "-q", "--no-tags", REMOTE, f"+refs/heads/{BRANCH}:refs/remotes/{REMOTE}/{BRANCH}",
                        check=False)
        if done.returncode != 0:
            said = self.said(done)
            if "couldn't find remote ref" in said.lower():
                self._refuse_a_remote_with_other_branches()
                self.git("update-ref", "-d", f"refs/remotes/{REMOTE}/{BRANCH}", check=False)
                return  # an empty remote: the first push makes the branch
            raise SyncFailed(f"cannot reach the remote {masked(self.remote_url() or '?')}: {said}; "
                             "the local commit is kept, sync again later")

    def _refuse_a_remote_with_other_branches(self) -> None:
        """The remote has no branch ``main``: it must be empty, else it is someone's code repository (a ``master``
        or ``trunk`` branch) and the first push would put the whole memory into it. Raises InputInvalid (exit 2)
        when it has any branch; SyncFailed when it cannot be listed."""
        done = self.git("ls-remote", "--heads", REMOTE, check=False)
        if done.returncode != 0:
            raise SyncFailed(f"cannot reach the remote {masked(self.remote_url() or '?')}: {self.said(done)}; "
                             "the local commit is kept, sync again later")
        heads = [line.split("\t", 1)[-1] for line in done.stdout.decode("utf-8", "replace").splitlines() if line]
        if heads:
            raise InputInvalid(f"the remote has no branch {BRANCH} but has {', '.join(heads[:3])}: it is not a suzent "
                               "memory; refusing to push into it; give an empty repository or one suzent sync made "
                               "(nothing was changed)")

    def push(self) -> tuple[bool, str]:
        """``(pushed, what git said)``."""
        done = self.git("push", "-q", "--no-verify", REMOTE, f"HEAD:refs/heads/{BRANCH}", check=False)
        return done.returncode == 0, self.said(done) if done.returncode else ""


def _mask_any(text: str) -> str:
    """Credentials of any URL in ``text`` masked."""
    import re

    return re.sub(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]*@", r"\1***@", text)
