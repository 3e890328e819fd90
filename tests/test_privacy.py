"""The memory is private (issue 24, item 1; suzent_cli/privacy.py): the modes suzent_cli.files gives the files it
makes, the umask of the entry points, the check ``status`` and ``init`` run and the fix ``init`` applies to a home
made before the rule (folders 0755, files 0644). The real processes under umask 022 and 000 are in
tests/integration/test_privacy_process.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import invoke, open_entries
from suzent_cli import privacy
from suzent_cli.config import resolve_settings
from suzent_cli.files import append_locked, atomic_write, atomic_write_bytes, file_lock, locked, write_if_absent


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)




def open_up(*roots: Path) -> None:
    """Make ``roots`` look like a home made under umask 022 before the rule: folders 0755, files 0644."""
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            os.chmod(folder, 0o755)
            for name in files:
                if not os.path.islink(os.path.join(folder, name)):
                    os.chmod(os.path.join(folder, name), 0o644)


def snapshot(*roots: Path) -> dict[str, tuple[int, int, int]]:
    """``{path: (mode, size, mtime_ns)}`` of everything under ``roots``: what a read-only command must not change."""
    out = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for path in [folder] + [os.path.join(folder, n) for n in dirs + files]:
                st = os.lstat(path)
                out[path] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def umask_zero():
    """The most open umask there is, for the duration of the test (a library caller that set none)."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


# --- suzent_cli.files: every file it makes is 0600, whatever the umask -------------------------------------------

def test_files_made_by_files_py_are_0600_even_under_umask_zero(tmp_path, umask_zero):
    append_locked(tmp_path / "log.md", "- [general] a\n", lock_path=tmp_path / ".append.lock", timeout=5)
    assert write_if_absent(tmp_path / "seed.md", "seed\n")
    atomic_write(tmp_path / "state.json", "{}\n")
    assert mode(tmp_path / "log.md") == 0o600
    assert mode(tmp_path / ".append.lock") == 0o600  # filelock's own file
    assert mode(tmp_path / "seed.md") == 0o600
    assert mode(tmp_path / "state.json") == 0o600


def test_a_replaced_file_keeps_its_owner_bits_and_loses_group_and_other_bits(tmp_path, umask_zero):
    page, script = tmp_path / "page.md", tmp_path / "tool.sh"
    page.write_text("old\n")
    os.chmod(page, 0o664)
    script.write_text("old\n")
    os.chmod(script, 0o755)
    atomic_write(page, "new\n")
    assert atomic_write_bytes(script, b"new\n")
    assert (page.read_text(), mode(page)) == ("new\n", 0o600)
    assert (script.read_text(), mode(script)) == ("new\n", 0o700)


def test_every_lock_file_is_made_0600(tmp_path, umask_zero):
    with locked(tmp_path / "a" / ".x.lock", 5):
        pass
    lock = file_lock(tmp_path / ".y.lock", timeout=0)
    lock.acquire()
    lock.release()
    assert mode(tmp_path / "a" / ".x.lock") == 0o600
    assert mode(tmp_path / ".y.lock") == 0o600


def test_replaced_mode():
    assert privacy.replaced_mode(None) == 0o600
    assert privacy.replaced_mode(0o100644) == 0o600
    assert privacy.replaced_mode(0o104777) == 0o700  # no setuid, group or other bit survives
    assert privacy.replaced_mode(0o100400) == 0o600  # we wrote it: we can read and write it


# --- the entry points' umask ------------------------------------------------------------------------------------

def test_the_entry_point_runs_under_a_private_umask_and_gives_the_callers_back(home, umask_zero):
    r = invoke(home, "init")  # the app's main(), in this process
    assert r.returncode == 0, r.stderr
    assert open_entries(home) == []
    assert mode(home) == 0o700 and mode(home / "config.toml") == 0o600
    assert os.umask(0) == 0  # restored on return


def test_private_umask_restores_the_umask_when_the_entry_point_raises():
    seen = []

    @privacy.private_umask
    def entry():
        seen.append(os.umask(0o077))
        raise KeyError("boom")

    previous = os.umask(0o022)
    try:
        with pytest.raises(KeyError):
            entry()
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(previous)
    assert seen == [0o077] and entry.__name__ == "entry"


def test_both_entry_points_are_private():
    from suzent_cli.cli import app, fasthook

    assert app.main.__wrapped__ is not None and fasthook.main.__wrapped__ is not None


# --- the check: which roots are open --------------------------------------------------------------------------

def _paths(home: Path, **dirs: Path):
    return resolve_settings(home=home, env={}, **{k: str(v) for k, v in dirs.items()}).paths


def test_roots_are_the_home_and_the_tiers_outside_it(tmp_path):
    home, vault, real_index = tmp_path / "home", tmp_path / "vault", tmp_path / "elsewhere" / "index"
    real_index.mkdir(parents=True)
    home.mkdir()
    (home / "idx").symlink_to(real_index)  # a tier behind a symlink in the home: others reach it by its real path
    paths = _paths(home, vault_dir=vault, index_dir=home / "idx")
    assert privacy.roots(paths) == [home, vault, real_index]
    assert privacy.roots(_paths(home)) == [home]
    assert privacy.roots(_paths(home, vault_dir=tmp_path, memory_dir=tmp_path / "m")) == [tmp_path]  # holds them all


def test_exposure_stats_the_roots_only(tmp_path):
    home, vault = tmp_path / "home", tmp_path / "vault"
    for d in (home / "inner", vault):
        d.mkdir(parents=True)
    os.chmod(home, 0o700)
    os.chmod(home / "inner", 0o755)  # guarded by the private home
    os.chmod(vault, 0o711)  # x alone opens known names (.state/tombstones.jsonl)
    assert privacy.exposure(_paths(home, vault_dir=vault)) == [(vault, 0o711)]
    os.chmod(vault, 0o700)
    assert privacy.exposure(_paths(home, vault_dir=vault)) == []
    assert privacy.exposure(_paths(tmp_path / "missing")) == []


def test_make_private_never_follows_a_symlink_out_of_the_home(tmp_path):
    home, outside = tmp_path / "home", tmp_path / "outside"
    (home / "notebook").mkdir(parents=True)
    outside.mkdir()
    (outside / "theirs.md").write_text("x")
    (home / "notebook" / "page.md").write_text("x")
    (home / "link").symlink_to(outside)
    (home / "file-link").symlink_to(outside / "theirs.md")
    open_up(home, outside)
    fixed = privacy.make_private(_paths(home))
    assert open_entries(home) == []
    assert (mode(outside), mode(outside / "theirs.md")) == (0o755, 0o644)
    assert (fixed.folders, fixed.files, fixed.left) == (2, 1, [])  # home and notebook/, page.md; no link
    assert privacy.make_private(_paths(home)).to_json() == {"folders": 0, "files": 0, "left": [], "more_left": 0}


def test_make_private_leaves_a_root_that_holds_the_users_home(tmp_path):
    user_home = Path.home()  # tests/conftest.py: <tmp>/user-home
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "notes.txt").write_text("x")
    os.chmod(user_home, 0o755)
    os.chmod(user_home / "notes.txt", 0o644)
    fixed = privacy.make_private(_paths(tmp_path / "home", memory_dir=user_home))
    assert [p for p, _ in fixed.left] == [str(user_home.resolve())]
    assert (mode(user_home), mode(user_home / "notes.txt")) == (0o755, 0o644)


# --- status warns, init fixes --------------------------------------------------------------------------------

def test_an_open_home_gets_one_warning_from_status_and_init_and_init_makes_it_private(tmp_path, home):
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    flags = ("--vault-dir", str(vault))
    assert invoke(home, *flags, "init").returncode == 0
    assert invoke(home, *flags, "capture", "--fact", "[personal] Lives in Lisbon").returncode == 0
    assert invoke(home, *flags, "forget", "Lives in Lisbon").returncode == 0
    outside.mkdir()
    (outside / "theirs.md").write_text("x")
    (home / "link").symlink_to(outside)
    open_up(home, vault, outside)  # as made under umask 022 before the rule
    assert open_entries(home, vault)

    before = snapshot(home, vault, outside)
    r = invoke(home, *flags, "status", "--no-index")
    warnings = [ln for ln in r.stderr.splitlines() if "other users can read the memory" in ln]
    assert r.returncode == 0 and len(warnings) == 1, r.stderr
    assert f"{home} (mode 0755)" in warnings[0] and f"{vault} (mode 0755)" in warnings[0]
    assert "run `suzent init`" in warnings[0]
    assert "OPEN to other users" in r.stdout
    r = invoke(home, *flags, "status", "--no-index", "--json")
    data = json.loads(r.stdout)
    assert data["privacy"] == {"private": False, "exposed": [{"path": str(home), "mode": "0755"},
                                                             {"path": str(vault), "mode": "0755"}]}
    assert sum("other users can read the memory" in w for w in data["warnings"]) == 1
    assert snapshot(home, vault, outside) == before  # status is read-only

    r = invoke(home, *flags, "init")
    warnings = [ln for ln in r.stderr.splitlines() if "other users can read the memory" in ln]
    assert r.returncode == 0 and len(warnings) == 1 and "making them private" in warnings[0], r.stderr
    assert "made private:" in r.stdout
    assert open_entries(home, vault) == []
    assert (mode(outside), mode(outside / "theirs.md")) == (0o755, 0o644)  # the link's target is not ours to change
    assert [p for p in snapshot(home, vault) if snapshot(home, vault)[p][1:] != before[p][1:]] == []  # no content

    r = invoke(home, *flags, "status", "--no-index", "--json")
    assert json.loads(r.stdout)["privacy"] == {"private": True, "exposed": []}
    r = invoke(home, *flags, "init", "--json")
    data = json.loads(r.stdout)
    assert (data["private"], data["warnings"], r.stderr) == ({"exposed": [], "fixed": None}, [], "")
