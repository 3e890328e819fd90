"""``suzent dry-run``: the real dream on a clone, shown as a patch, and the live data byte-identical afterwards —
with the vault in the home, elsewhere, or behind a symlink. The CLI in-process; the rules engine."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import invoke, log
from suzent_cli import dryrun
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.errors import CloneFailed, InputInvalid, LiveDataChanged
from suzent_cli.init import init_home

NOW = "2026-06-20T12:00"
RULES = DreamConfig(engine="rules")


# --- helpers ---------------------------------------------------------------------------------------------
def make_home(home: Path, *, vault: Path | None = None, config: str | None = None, env: dict | None = None):
    """An initialised home (optionally with its vault elsewhere, via config.toml) with facts pending in two logs."""
    home.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (home / "config.toml").write_text(config)
    s = resolve_settings(home=home, vault_dir=vault, now=NOW, env=env or {})
    init_home(s)
    log(s, "2026-06-01", "[personal] Lives in Berlin", "[preference] Likes green tea")
    log(s, "2026-06-02", "[personal] Works at ACME", "[preference] Likes green tea")
    return s


def tree(*roots: Path) -> dict[str, str]:
    """``{root#relative path: sha256}`` of every file under ``roots``, symlinks followed — the test's own hash."""
    out = {}
    for root in roots:
        for directory, _dirs, files in os.walk(root, followlinks=True):
            for name in files:
                path = Path(directory, name)
                out[f"{root}#{path.relative_to(root)}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def symlinks_in(root: Path) -> list[Path]:
    return [Path(d, n) for d, dirs, files in os.walk(root) for n in dirs + files if Path(d, n).is_symlink()]


def dry(home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return invoke(home, "--now", NOW, "dry-run", "--engine", "rules", *args, env_extra=env)


def stage(s, target: Path) -> Path:
    """A tree the patch applies to: ``home/``, ``memory/`` and ``vault/`` copied from the live data."""
    shutil.copytree(s.paths.home, target / "home", symlinks=False)
    shutil.copytree(s.paths.memory_dir, target / "memory")
    shutil.copytree(s.paths.vault_dir, target / "vault")
    return target


# --- (1) the real dream, shown, and nothing live changed -------------------------------------------------
def test_dry_run_shows_the_dream_and_matches_the_real_one(home, tmp_path):
    s = make_home(home)
    env = {"SUZENT_NOW": NOW}
    assert invoke(home, "index", "--model", "hash:64", env_extra=env).returncode == 0
    live = tree(home)
    proc = dry(home, "--force", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert tree(home) == live and data["live_unchanged"] is True and data["verified_files"] >= len(live)
    assert data["result"]["outcome"] == "ingested" and data["clone"] is None
    changed = {f["path"]: f for f in data["files_changed"]}
    assert changed["vault/3_Personal/Profile.md"]["status"] == "added"
    assert changed["vault/log.md"]["status"] == "modified" and changed["vault/log.md"]["added_lines"] >= 1
    assert {"vault/.state/dream_state.json", "vault/.state/superseded.txt"} & set(changed)
    assert "memory/MEMORY.md" in changed
    assert not any(p.endswith(".lock") or p.endswith(".holder") for p in changed)
    assert "+## [2026-06-20] ingest | daily logs  watermark=2026-06-02" in data["patch"]
    assert "+++ b/vault/3_Personal/Profile.md" in data["patch"] and "--- /dev/null" in data["patch"]
    by_source = data["index"]["by_source"]
    assert by_source["notebook:3_Personal/Profile.md"]["added"] >= 2 and data["index"]["rows_after"] > 0

    # The patch, applied to a copy of the live tree, gives what the real dream writes.
    staged = stage(s, tmp_path / "staged")
    applied = subprocess.run(["patch", "-p1", "--batch", "--silent"], input=data["patch"], text=True, cwd=staged,
                             capture_output=True) if shutil.which("patch") else None
    proc = invoke(home, "dream", "--force", "--engine", "rules", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    if applied is not None:
        assert applied.returncode == 0, applied.stdout + applied.stderr
        for rel in ("3_Personal/Profile.md", "3_Personal/Preferences.md", "log.md", "index.md"):
            assert (staged / "vault" / rel).read_text() == (s.paths.vault_dir / rel).read_text(), rel


# --- (2) a vault outside the home ------------------------------------------------------------------------
def test_vault_outside_the_home_is_cloned_and_left_untouched(tmp_path):
    home, vault = tmp_path / "h", tmp_path / "elsewhere" / "vault"
    make_home(home, config=f'[paths]\nvault_dir = "{vault}"\n')
    live = tree(home, vault)
    keep = tmp_path / "clone"
    proc = dry(home, "--force", "--keep", str(keep))
    assert proc.returncode == 0, proc.stderr
    assert tree(home, vault) == live
    assert "+++ b/vault/3_Personal/Profile.md" in proc.stdout and "live home unchanged (" in proc.stdout
    assert (keep / "tiers" / "vault" / "3_Personal" / "Profile.md").is_file()
    assert not (vault / "3_Personal" / "Profile.md").exists()
    cfg = tomllib.loads((keep / "home" / "config.toml").read_text())
    assert cfg["paths"]["vault_dir"] == str(keep / "tiers" / "vault")


def test_vault_dir_flag_outside_the_home(tmp_path):
    home, vault = tmp_path / "h", tmp_path / "v2"
    s = make_home(home, vault=vault)
    live = tree(home, vault)
    report = dryrun.dry_run(s, RULES, env={}, force=True)
    assert tree(home, vault) == live
    assert "vault/3_Personal/Profile.md" in {f.path for f in report.files}
    assert report.result.outcome == "ingested" and report.clone is None


# --- (3) a symlinked vault -------------------------------------------------------------------------------
def test_symlinked_vault_is_copied_as_real_files(tmp_path):
    home, target = tmp_path / "h", tmp_path / "elsewhere" / "vault"
    target.mkdir(parents=True)
    home.mkdir()
    (home / "notebook").symlink_to(Path("..") / "elsewhere" / "vault")  # relative: copytree's dangling test trips on it
    s = make_home(home)
    assert (target / "log.md").is_file()  # init wrote through the link
    live = tree(home, target)
    keep = tmp_path / "kept"
    report = dryrun.dry_run(s, RULES, env={}, force=True, keep=keep)
    assert tree(home, target) == live and not (target / "3_Personal" / "Profile.md").exists()
    assert "+++ b/vault/3_Personal/Profile.md" in report.patch and "a/vault/log.md" in report.patch
    assert symlinks_in(keep) == [] and (keep / "home" / "notebook" / "3_Personal" / "Profile.md").is_file()
    assert not (keep / "home" / "notebook").is_symlink()


def test_symlink_loop_is_refused_and_the_clone_removed(tmp_path, monkeypatch):
    home = tmp_path / "h"
    s = make_home(home)
    (s.paths.vault_dir / "2_Wiki" / "loop").symlink_to(s.paths.vault_dir)
    made = []
    real_mkdtemp = dryrun.tempfile.mkdtemp
    monkeypatch.setattr(dryrun.tempfile, "mkdtemp", lambda **kw: made.append(real_mkdtemp(**kw)) or made[-1])
    with pytest.raises(CloneFailed, match="loops back"):
        dryrun.dry_run(s, RULES, env={}, force=True)
    assert made and not Path(made[0]).exists()


# --- (4) --output ----------------------------------------------------------------------------------------
def test_output_patch_matches_stdout_and_applies(home, tmp_path):
    s = make_home(home)
    out = tmp_path / "dream.patch"
    proc = dry(home, "--force", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    written = out.read_text()
    header, _, patch = written.partition("\n\n")
    assert header.startswith("# suzent dry-run of ") and "index " in header  # what ran, index rows per source
    assert patch.startswith("--- ") and patch in proc.stdout  # plain when piped (NO_COLOR): byte for byte
    assert "\x1b[" not in proc.stdout
    assert f"patch written to {out}" in proc.stdout
    staged = stage(s, tmp_path / "staged")
    if shutil.which("git"):
        check = subprocess.run(["git", "apply", "--check", str(out)], cwd=staged, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    if shutil.which("patch"):
        check = subprocess.run(["patch", "--dry-run", "-p1", "-i", str(out)], cwd=staged, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr


def test_bad_keep_and_output_are_one_line_errors(home, tmp_path):
    make_home(home)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("mine")
    for args, words in ((["--keep", str(busy)], "not empty"),
                        (["--output", str(tmp_path / "missing" / "x.patch")], "does not exist"),
                        (["--output", str(home / "x.patch")], "inside the live data"),
                        (["--keep", str(home / "clone")], "overlaps the live data"),
                        (["--lint", "--force"], "--force only applies")):
        proc = dry(home, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("Error: ") and words in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1
    assert not (home / "clone").exists() and not (home / "x.patch").exists()


# --- (5) --keep ------------------------------------------------------------------------------------------
def test_keep_leaves_a_self_contained_clone(home, tmp_path):
    s = make_home(home, config='# mine\nuser_id = "ana"\n\n[index]\ncontext_window = 1\n\n[dream]\nmin_facts = 3\n')
    keep = tmp_path / "empty"
    keep.mkdir()
    report = dryrun.dry_run(s, RULES, env={"SUZENT_HOME": str(home)}, force=True, keep=keep)
    assert report.clone == keep
    clone = resolve_settings(home=keep / "home", env={})
    for path in (clone.paths.memory_dir, clone.paths.vault_dir, clone.paths.index_dir):
        assert path.is_relative_to(keep)
    assert (clone.user_id, clone.context_window, dict(clone.dream)) == ("ana", 1, {"min_facts": 3})
    assert (clone.paths.vault_dir / "3_Personal" / "Profile.md").is_file()
    assert not (s.paths.vault_dir / "3_Personal" / "Profile.md").exists()
    assert symlinks_in(keep) == []


def test_toml_writer_round_trips():
    doc = tomllib.loads('top = "a \\"b\\" \\u0001 é"\nn = -3\nf = 1.5e-10\nb = true\nd = 2026-06-01\n'
                        't = 2026-06-01T10:00:00Z\nl = [1, [2, "x"]]\ninf = inf\n"odd key" = 1\n'
                        '[a]\nx = 1\n[a.b]\ny = "z"\n[[arr]]\nk = 1\n[[arr]]\nk = 2\n')
    assert tomllib.loads(dryrun.dump_toml(doc)) == doc


# --- (6) --lint ------------------------------------------------------------------------------------------
def test_lint_runs_on_the_clone(home):
    make_home(home)
    live = tree(home)
    proc = dry(home, "--lint", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["result"]["outcome"] == "linted" and tree(home) == live
    assert "vault/log.md" in {f["path"] for f in data["files_changed"]}
    assert "] lint " in data["patch"]


# --- (7) the idle gate -----------------------------------------------------------------------------------
def test_idle_without_force_reports_idle_and_an_empty_diff(home):
    make_home(home, config="[dream]\nmax_wait_hours = 0\n")  # 4 facts pending < min_facts 20, no wait rule
    live = tree(home)
    proc = dry(home)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout.startswith("idle: ") and "no file changed" in proc.stdout
    assert "live home unchanged (" in proc.stdout and tree(home) == live
    data = json.loads(dry(home, "--json").stdout)
    assert (data["result"]["exit_code"], data["patch"], data["files_changed"]) == (4, "", [])
    assert "no index yet" in data["index"]["note"]


def test_dry_run_uses_the_gates_wait_rule(home):
    """Issue 27: 4 facts < min_facts, but waiting since 2026-06-01 (> max_wait_hours 72): dry-run, as dream, ingests."""
    make_home(home)
    data = json.loads(dry(home, "--json").stdout)
    assert data["result"]["exit_code"] == 0 and data["files_changed"]
    assert ">= max_wait_hours 72" in json.dumps(data)


# --- (8) the live-changed detector -----------------------------------------------------------------------
def test_fingerprint_sees_every_change_and_backups_by_stat(tmp_path):
    home = tmp_path / "h"
    (home / "backups" / "index-1").mkdir(parents=True)
    (home / "a.md").write_text("one")
    (home / "backups" / "index-1" / "big.lance").write_bytes(b"x" * 10)
    elsewhere = tmp_path / "v"
    elsewhere.mkdir()
    (elsewhere / "p.md").write_text("page")
    (home / "notebook").symlink_to(elsewhere)
    roots = [home, home / "notebook"]
    before = dryrun.fingerprint(roots, cheap=[home / "backups"])
    assert before[str(elsewhere / "p.md")][0] == "sha256"  # through the symlink, keyed by the real path
    assert before[str(home / "backups" / "index-1" / "big.lance")][0] == "stat"
    assert dryrun.compare_fingerprints(before, dryrun.fingerprint(roots, cheap=[home / "backups"])) == []
    (elsewhere / "p.md").write_text("pagE")  # same size, other bytes
    (home / "new.md").write_text("")
    (home / "a.md").unlink()
    after = dryrun.fingerprint(roots, cheap=[home / "backups"])
    assert dryrun.compare_fingerprints(before, after) == sorted(
        [str(home / "a.md"), str(home / "new.md"), str(elsewhere / "p.md")])


def test_a_write_to_live_data_fails_loudly(home, monkeypatch, capsys):
    s = make_home(home)
    live_page = s.paths.vault_dir / "0_Inbox" / "intruder.md"

    class Intruding(DreamRunner):  # stands in for a concurrent writer
        def tick(self, *, force=False):
            live_page.write_text("written to the live vault\n")
            return super().tick(force=force)

    monkeypatch.setattr(dryrun, "DreamRunner", Intruding)
    with pytest.raises(LiveDataChanged) as caught:
        dryrun.dry_run(s, RULES, env={}, force=True)
    exc = caught.value
    assert exc.exit_code == 6 and exc.changed == (str(live_page.resolve()),)
    assert str(live_page.resolve()) in str(exc) and "concurrent" in str(exc)
    assert exc.report is not None and exc.report.result.outcome == "ingested"
    assert exc.report.to_json()["live_unchanged"] is False

    # Through the CLI entry point: the report, then one `Error:` line and exit code 6.
    live_page.unlink()
    from suzent_cli.cli.app import main

    monkeypatch.setattr(sys, "argv", ["suzent", "--home", str(home), "--now", NOW, "dry-run", "--force",
                                      "--engine", "rules"])
    assert main() == 6
    err = capsys.readouterr().err
    assert err.startswith("Error: live data changed during the dry run") and err.count("\n") == 1


def test_keep_must_not_be_a_file(home, tmp_path):
    s = make_home(home)
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputInvalid, match="not a directory"):
        dryrun.dry_run(s, RULES, env={}, keep=tmp_path / "f")
