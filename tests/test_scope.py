"""Project identity (suzent_cli.scope, `suzent project`): real git repositories, clones, worktrees, subfolders."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import invoke
from suzent_cli.scope import identify, normalise_remote


@pytest.mark.parametrize("url", [
    "git@github.com:o/r.git", "git@github.com:o/r", "ssh://git@github.com/o/r.git", "ssh://git@github.com:22/o/r",
    "https://github.com/o/r", "https://github.com/o/r.git", "https://github.com/o/r/", "https://GitHub.com/o/r",
    "https://user:s3cret-token@github.com/o/r.git", "git://github.com/o/r.git",
])
def test_every_spelling_of_one_remote_is_one_key(url):
    assert normalise_remote(url) == "github.com/o/r"


def test_other_remotes_stay_apart_and_local_ones_are_paths(tmp_path):
    assert normalise_remote("git@gitlab.com:group/sub/r.git") == "gitlab.com/group/sub/r"
    assert normalise_remote("https://github.com/o/other") != normalise_remote("https://github.com/o/r")
    assert normalise_remote(str(tmp_path / "bare.git")) == f"file:{tmp_path / 'bare'}"
    assert normalise_remote(f"file://{tmp_path}/bare.git") == f"file:{tmp_path / 'bare'}"
    assert normalise_remote("   ") is None


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "tax-client"
    (root / "services" / "api").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README").write_text("x\n")
    git(root, "add", "README")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_without_a_remote_every_worktree_and_subfolder_shares_the_repository(repo, tmp_path):
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    main, sub, worktree = identify(repo), identify(repo / "services" / "api"), identify(tmp_path / "wt")
    assert main.key == sub.key == worktree.key == f"git:{repo.resolve()}"
    assert main.name == "tax-client" and "no origin remote" in main.why


def test_with_a_remote_every_clone_is_one_project_and_the_token_is_never_shown(repo, tmp_path, monkeypatch):
    git(repo, "remote", "add", "origin", "https://me:ghp_secret@github.com/acme/tax-client.git")
    other = tmp_path / "elsewhere" / "copy"
    other.mkdir(parents=True)
    git(other, "init", "-q")
    git(other, "remote", "add", "origin", "git@github.com:acme/tax-client")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))  # a caller's repository variable is not obeyed
    a, b = identify(repo / "services"), identify(other)
    assert a.key == b.key == "github.com/acme/tax-client" and a.name == "tax-client"
    assert "ghp_secret" not in json.dumps(a.as_dict())


def test_outside_git_the_directory_is_the_project(tmp_path):
    plain = tmp_path / "scratch"
    plain.mkdir()
    got = identify(plain)
    assert got.key == f"dir:{plain}" and "not inside a git repository" in got.why
    assert identify(tmp_path / "missing").key == f"dir:{tmp_path / 'missing'}"


def test_the_command_shows_the_key_and_why(repo, tmp_path):
    r = invoke(tmp_path / "home", "project", str(repo / "services"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"key": f"git:{repo.resolve()}", "name": "tax-client",
                                    "why": f"git repository at {repo.resolve()} (no origin remote)",
                                    "root": str(repo.resolve())}
    text = invoke(tmp_path / "home", "project", str(repo)).stdout
    assert text.splitlines()[0] == f"key   git:{repo.resolve()}"


def test_the_command_refuses_a_path_that_is_not_a_directory(tmp_path):
    for bad in (tmp_path / "tax-clinet", tmp_path / "file.txt"):
        if bad.suffix:
            bad.write_text("x")
        r = invoke(tmp_path / "home", "project", str(bad))
        assert r.returncode == 2 and r.stderr.startswith("Error: ") and "is not a directory" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


# --- the scope of a fact: the tag, and the default rule -------------------------------------------------------------

@pytest.mark.parametrize("key", ["github.com/o/r", "git:/home/a/r", "dir:/home/a/my notes", "dir:/x/`odd`%20/ü"])
def test_scope_tag_round_trips_through_a_fact_line(key):
    from suzent_cli.archive import Fact, parse_fact_line, render_fact
    from suzent_cli.scope import scope_of_tags, scope_tag

    fact = Fact("Uses Postgres 16", "tech", ("db", scope_tag(key))).clean()
    category, content, tags = parse_fact_line(render_fact(fact))
    assert (category, content) == ("tech", "Uses Postgres 16")
    assert scope_of_tags(tags) == key
    assert " " not in scope_tag(key) and "`" not in scope_tag(key)


def test_untagged_line_is_the_persons_and_the_person_carries_no_tag():
    from suzent_cli.scope import PERSON, scope_of_tags, scope_tag

    assert scope_of_tags(("revision", "project:")) == PERSON
    with pytest.raises(ValueError):
        scope_tag(PERSON)


def test_scope_for_the_default_rule_and_its_overrides():
    from suzent_cli.scope import PERSON, scope_for

    key = "github.com/o/r"
    assert scope_for("Preference", key) == PERSON  # the person's categories, any case
    assert scope_for("tech", key) == key
    assert scope_for("tech", None) == PERSON  # outside any project
    assert scope_for("tech", key, "global") == PERSON
    assert scope_for("personal", key, "project") == key
    with pytest.raises(ValueError):
        scope_for("tech", key, "everywhere")


# --- canonical keys: a key never makes its fact the person's ---------------------------------------------------------

@pytest.mark.parametrize("key", ["git:/home/u/src/k8s-Xy9Qz7Lm3NpR4tW8", "github.com/o/AKIAIOSFODNN7EXAMPLE",
                                 "dir:/home/u/p/ghp_16C7e42F292c6912E7710c838347Ae178B4a"])
def test_a_token_shaped_key_is_recorded_by_its_digest_and_the_fact_stays_scoped(key):
    """A repository or folder named like a token: capture's screen would drop its tag and the fact would become the
    person's, recalled in every project. The key is spelled by its digest everywhere instead."""
    from suzent_cli.archive import Fact
    from suzent_cli.capture import clean_facts
    from suzent_cli.scope import canonical_key, resolve_project, scope_of_tags, scope_tag

    canon = canonical_key(key)
    assert "/sha256/" in canon and canonical_key(canon) == canon
    assert resolve_project(key, lambda: []) == canon
    warnings: list[str] = []
    [fact] = clean_facts([Fact("Uses Postgres 16", "technical", (scope_tag(key),))], warnings)
    assert scope_of_tags(fact.tags) == canon and not warnings


def test_identify_spells_a_token_shaped_folder_by_its_digest(tmp_path):
    from suzent_cli.scope import canonical_key, identify

    folder = tmp_path / "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    folder.mkdir()
    found = identify(folder)
    assert found.key == canonical_key(f"dir:{folder}") and "/sha256/" in found.key
    assert "ghp_" not in found.key and "ghp_" not in found.why and "ghp_" not in found.name


def test_ordinary_keys_are_kept_and_undecodable_bytes_read_as_replacement():
    from suzent_cli.scope import canonical_key, decode_key, scope_of_tags, scope_tag

    assert canonical_key("github.com/acme/billing") == "github.com/acme/billing"
    assert canonical_key("dir:/tmp/x\udcff") == "dir:/tmp/x\ufffd"
    assert decode_key("dir:/x%FF") == "dir:/x\ufffd"
    assert scope_of_tags((scope_tag("dir:/tmp/x\udcff"),)) == "dir:/tmp/x\ufffd"
