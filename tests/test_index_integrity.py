"""The index never reports success while broken (issue 13 §5): a vanished or replaced table is rebuilt from
markdown, a damaged one is refused naming the file and ``--rebuild``, lance's temp files live under the index dir,
every error names its real cause, symlinks leaving the tiers are refused, and no library noise reaches a person.

Real LanceDB tables in tmp dirs; the CLI (in-process, conftest.invoke) where the exit code and the terminal output
are the point."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import shutil
import warnings

import pytest

from conftest import invoke
from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.errors import IndexUnreadable, SuzentError
from suzent_cli.index import store as store_mod
from suzent_cli.index.api import make_indexer, move_index_aside, optimize_index
from suzent_cli.index.indexer import STATE_FILE
from suzent_cli.index.sources import discover, source_for_path
from suzent_cli.index.store import TABLE, ReadStore, TableWriter, index_error
from suzent_cli.init import init_home

D1, D2 = dt.date(2026, 6, 1), dt.date(2026, 6, 2)


def capture(settings, day, *contents, time="10:00"):
    archive.append_entry(settings.paths.archive_dir, day, time, "s", [Fact(c) for c in contents], timeout=5)


def contents(settings, embedder) -> list[str]:
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    return sorted(r["content"] for r in store.rows())


def table_dir(settings):
    return settings.paths.index_dir / f"{TABLE}.lance"


def data_file(settings):
    return sorted((table_dir(settings) / "data").glob("*.lance"))[0]


@pytest.fixture
def indexed(settings, embedder):
    init_home(settings)
    capture(settings, D1, "Lives in Lisbon", "Prefers tea")
    capture(settings, D2, "Kayak trip in June")
    make_indexer(settings, embedder=embedder).run()
    return settings


# ---- 1. a table deleted (or replaced) under its state ----------------------------------------------------------
def test_a_deleted_table_is_rebuilt_from_markdown_with_one_warning(indexed, embedder):
    shutil.rmtree(table_dir(indexed))
    report = make_indexer(indexed, embedder=embedder).run()
    assert contents(indexed, embedder) == ["Kayak trip in June", "Lives in Lisbon", "Prefers tea"]
    assert report.rows_added == 3 and report.total_rows == 3 and not report.errors
    assert len(report.warnings) == 1 and "missing" in report.warnings[0] and STATE_FILE in report.warnings[0]
    assert make_indexer(indexed, embedder=embedder).run().warnings == []  # healed: the next pass is quiet


def test_a_table_restored_from_an_older_copy_gets_its_missing_rows_back(indexed, embedder, tmp_path):
    old = tmp_path / "old-table"
    shutil.copytree(table_dir(indexed), old)
    capture(indexed, D2, "Adopted a cat", time="11:00")
    make_indexer(indexed, embedder=embedder).run()
    shutil.rmtree(table_dir(indexed))
    shutil.copytree(old, table_dir(indexed))  # the state still records the D2 log as indexed with the cat
    report = make_indexer(indexed, embedder=embedder).run()
    assert "Adopted a cat" in contents(indexed, embedder)
    assert report.warnings and "recorded 4" in report.warnings[0] and "3 row(s)" in report.warnings[0]


def test_run_after_a_deleted_table_rebuilds_it(indexed, embedder):
    from suzent_cli.run import _index

    shutil.rmtree(table_dir(indexed))
    stage = _index(indexed, embedder)
    assert stage.ok and stage.detail["total_rows"] == 3 and stage.detail["warnings"]


def test_run_shows_the_indexers_warnings_in_its_row_on_stderr_and_in_json(indexed, embedder, tmp_path, monkeypatch):
    from rich.console import Console

    from suzent_cli.cli import render as run_cli_mod
    from suzent_cli.run import PassReport, _index

    (tmp_path / "secret.md").write_text("outside\n")
    (indexed.paths.vault_dir / "leak.md").symlink_to(tmp_path / "secret.md")
    shutil.rmtree(table_dir(indexed))
    stage = _index(indexed, embedder)
    assert stage.ok and len(stage.detail["warnings"]) == 2, stage.detail  # the vanished table, the refused link
    assert "2 warnings" in run_cli_mod.row_detail(stage)
    shown: list[str] = []
    monkeypatch.setattr(run_cli_mod, "out", Console(file=io.StringIO(), force_terminal=False))
    monkeypatch.setattr(run_cli_mod, "warn", shown.append)
    run_cli_mod.print_pass(PassReport(stages=[stage]))
    assert any("table was missing" in w for w in shown) and any("leak.md" in w for w in shown), shown
    assert PassReport(stages=[stage]).to_json()["stages"][0]["detail"]["warnings"] == stage.detail["warnings"]


# ---- 1b. a table folder without a manifest: no index yet (issue 24, item 6) ------------------------------------
def _shell(settings, shape: str, embedder) -> None:
    """Leave ``archival_memories.lance`` without a committed version, as a first pass that failed leaves it.

    ``empty``: only ``_versions/`` and ``_transactions/`` (what lance leaves when the disk fills before its first
    manifest: tests/integration/test_index_first_pass.py makes a real one); ``txn``: with a transaction file too;
    ``data``: a real table's data and transaction files whose manifests are gone."""
    table = table_dir(settings)
    if shape == "data":
        init_home(settings)
        capture(settings, D1, "Lives in Lisbon")
        make_indexer(settings, embedder=embedder).run()
        for manifest in (table / "_versions").iterdir():
            manifest.unlink()
        (settings.paths.index_dir / STATE_FILE).unlink()
        return
    (table / "_versions").mkdir(parents=True)
    (table / "_transactions").mkdir()
    if shape == "txn":
        (table / "_transactions" / "0-5e2f.txn").write_bytes(b"\x08\x01half a transaction")


@pytest.mark.parametrize("shape", ["empty", "txn", "data"])
def test_a_table_folder_without_a_manifest_is_no_index_yet_and_the_next_pass_builds_it(settings, embedder, shape):
    from suzent_cli.errors import IndexMissing
    from suzent_cli.status import index_counts

    _shell(settings, shape, embedder)
    init_home(settings)
    capture(settings, D2, "Kayak trip in June")
    with pytest.raises(IndexMissing, match="run `suzent index` first"):
        ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    assert index_counts(settings) == {"built": False}
    before = sorted(str(p.relative_to(table_dir(settings))) for p in table_dir(settings).rglob("*"))

    report = make_indexer(settings, embedder=embedder).run()
    assert not report.errors and report.total_rows >= 1
    assert "Kayak trip in June" in contents(settings, embedder)
    backups = settings.paths.home / "backups"
    if shape == "empty":  # nothing in it: removed, nothing said
        assert report.warnings == [] and not backups.exists()
    else:  # anything in it is moved aside whole, and one line says where
        moved = [w for w in report.warnings if "held no committed version" in w]
        assert len(moved) == 1 and str(backups) in moved[0] and "\n" not in moved[0], report.warnings
        (backup,) = backups.iterdir()
        kept = sorted(str(p.relative_to(backup / f"{TABLE}.lance")) for p in (backup / f"{TABLE}.lance").rglob("*"))
        assert kept == before
    assert make_indexer(settings, embedder=embedder).run().warnings == []  # healed


def test_the_cli_index_after_a_failed_first_pass_builds_the_index(home):
    """The issue's sequence, in the CLI: `index` (the failed first pass left its folder), then `index` again."""
    invoke(home, "--today", "2026-06-10", "capture", "--fact", "kayak trip in June")
    table = home / "memory" / f"{TABLE}.lance"
    (table / "_versions").mkdir(parents=True)
    (table / "_transactions").mkdir()
    r = invoke(home, "recall", "kayak", "--model", "hash")  # no index yet: the captured line is searched unindexed
    assert r.returncode == 0 and "kayak trip in June" in r.stdout and "not found" not in r.stderr, r.stderr
    empty = home.parent / "nothing-captured"  # the same folder and nothing to search: no index yet, said so
    (empty / "memory" / f"{TABLE}.lance" / "_versions").mkdir(parents=True)
    r = invoke(empty, "recall", "kayak", "--model", "hash")
    assert r.returncode != 0 and "run `suzent index` first" in r.stderr and "not found" not in r.stderr, r.stderr
    r = invoke(home, "index", "--model", "hash")
    assert r.returncode == 0 and "not found" not in r.stderr, r.stderr
    r = invoke(home, "recall", "kayak", "--model", "hash", "--json")
    assert json.loads(r.stdout)["hits"][0]["content"] == "kayak trip in June"


def test_a_memory_blocks_folder_without_a_manifest_is_made_a_table(indexed, embedder):
    blocks = indexed.paths.index_dir / "memory_blocks.lance"
    shutil.rmtree(blocks)
    (blocks / "_versions").mkdir(parents=True)
    (blocks / "_transactions").mkdir()
    report = make_indexer(indexed, embedder=embedder).run()
    assert not report.errors and report.warnings == []
    assert store_mod.committed(blocks)
    assert store_mod._lancedb().connect(str(indexed.paths.index_dir)).open_table("memory_blocks").count_rows() == 0


@pytest.mark.parametrize("damage", ["junk manifest", "empty manifest", "versions is a file"])
def test_a_table_with_a_manifest_that_does_not_open_is_never_moved_nor_recreated(indexed, embedder, damage):
    """Such a table may be the only copy of its rows (the original app's): an error naming --rebuild, untouched."""
    versions = table_dir(indexed) / "_versions"
    if damage == "versions is a file":
        shutil.rmtree(versions)
        versions.write_bytes(b"not a folder")
    else:
        for manifest in versions.glob("*.manifest"):
            manifest.write_bytes(b"" if damage == "empty manifest" else b"not a manifest")
    before = {str(p): p.read_bytes() for p in table_dir(indexed).rglob("*") if p.is_file()}
    assert store_mod.table_exists(indexed.paths.index_dir)
    with pytest.raises(IndexUnreadable, match="--rebuild"):
        make_indexer(indexed, embedder=embedder).run()
    assert {str(p): p.read_bytes() for p in table_dir(indexed).rglob("*") if p.is_file()} == before
    assert not (indexed.paths.home / "backups").exists()


def test_a_bm25_index_a_failed_pass_did_not_build_is_built_by_the_next_pass(settings, embedder, monkeypatch):
    """The disk filled after the rows were committed, while the BM25 indexes were built: the next pass, with
    nothing new to add, still builds them (else keyword search stays off for good)."""
    init_home(settings)
    capture(settings, D1, "Lives in Lisbon", "Prefers tea")
    real = TableWriter.ensure_fts_index

    def full_disk(self, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(TableWriter, "ensure_fts_index", full_disk)
    with pytest.raises(SuzentError, match="disk is full"):
        make_indexer(settings, embedder=embedder).run()
    monkeypatch.setattr(TableWriter, "ensure_fts_index", real)
    report = make_indexer(settings, embedder=embedder).run()
    assert report.rows_added == 0 and report.fts_rebuilt
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    assert all(store.has_fts_index(column) for column in store_mod.FTS_COLUMNS)
    assert [r["content"] for r in store.fts_search("Lisbon", 5, column="content")] == ["Lives in Lisbon"]


# ---- 2. a damaged data fragment ------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["remove", "truncate"])
@pytest.mark.parametrize("full", [False, True])
def test_a_damaged_fragment_is_refused_naming_the_file_and_rebuild(indexed, embedder, damage, full):
    broken = data_file(indexed)
    if damage == "remove":
        broken.unlink()
    else:
        with broken.open("r+b") as fh:
            fh.truncate(broken.stat().st_size // 2)
    with pytest.raises(IndexUnreadable) as err:
        make_indexer(indexed, embedder=embedder).run(full=full)
    message = str(err.value)
    assert f"data/{broken.name}" in message and "--rebuild" in message and "\n" not in message
    assert ("missing" if damage == "remove" else "cut short") in message
    assert ".rs:" not in message and ".cargo" not in message
    assert move_index_aside(indexed) is not None  # what `index --rebuild` does first
    make_indexer(indexed, embedder=embedder).run()
    assert contents(indexed, embedder) == ["Kayak trip in June", "Lives in Lisbon", "Prefers tea"]


@pytest.mark.parametrize("damage", ["data", "manifest"])
@pytest.mark.parametrize("mode", ["hybrid", "fts"])
def test_recall_on_a_damaged_index_names_the_real_home_in_its_hint(indexed, embedder, damage, mode):
    from suzent_cli.recall import recall

    if damage == "data":
        data_file(indexed).unlink()
    else:
        for manifest in (table_dir(indexed) / "_versions").iterdir():
            manifest.write_bytes(b"not a manifest")
    with pytest.raises(IndexUnreadable) as err:
        recall(indexed, embedder if mode == "hybrid" else None, "Lisbon", mode=mode, log=False)
    message = str(err.value)
    assert f"{indexed.paths.home}/backups/" in message and "<home>" not in message, message


def test_a_missing_fts_index_file_is_refused_too(indexed, embedder):
    victim = sorted((table_dir(indexed) / "_indices").rglob("*.lance"))[0]
    victim.unlink()
    with pytest.raises(IndexUnreadable, match="--rebuild") as err:
        make_indexer(indexed, embedder=embedder).run()
    assert f"_indices/{victim.parent.name}/ is incomplete" in str(err.value), str(err.value)


def test_cli_damaged_index_exits_1_with_one_line_and_rebuild_recovers(home):
    invoke(home, "--today", "2026-06-10", "capture", "--fact", "kayak trip in June")
    assert invoke(home, "index", "--model", "hash").returncode == 0
    broken = sorted((home / "memory" / f"{TABLE}.lance" / "data").glob("*.lance"))[0]
    broken.unlink()
    for args in (("index", "--model", "hash"), ("index", "--model", "hash", "--full")):
        r = invoke(home, *args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and broken.name in lines[0] and "suzent index --rebuild" in lines[0], r.stderr
        assert ".cargo" not in r.stderr and ".rs:" not in r.stderr
    assert invoke(home, "index", "--model", "hash", "--rebuild").returncode == 0
    r = invoke(home, "recall", "kayak", "--model", "hash", "--json")
    assert json.loads(r.stdout)["hits"][0]["content"] == "kayak trip in June"


# ---- 3. lance's temp files live under the index dir ----------------------------------------------------------
@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_an_unusable_tmpdir_does_not_break_indexing(settings, embedder, monkeypatch, tmp_path, kind):
    bad = tmp_path / "no-such-tmp"
    if kind == "a file":
        bad.write_text("not a directory")
    monkeypatch.setenv("TMPDIR", str(bad))
    init_home(settings)
    capture(settings, D1, "Lives in Lisbon", "Prefers tea")
    report = make_indexer(settings, embedder=embedder).run()
    capture(settings, D1, "Kayak trip in June", time="11:00")
    make_indexer(settings, embedder=embedder).run()  # a merge-insert that deletes nothing and adds: lance spills to its temp dir
    optimize_index(settings, dt.timedelta(0))
    assert report.rows_added == 2 and len(contents(settings, embedder)) == 3
    assert os.environ["TMPDIR"] == str(bad)  # restored for everything else in the process


def test_temp_dir_points_tmpdir_under_the_index_and_restores_it(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # as in a fresh process: Python has not picked its temp dir yet
    with store_mod.temp_dir(tmp_path / "idx"):
        assert os.environ["TMPDIR"] == str(tmp_path / "idx" / ".tmp") and (tmp_path / "idx" / ".tmp").is_dir()
        assert not tempfile.gettempdir().startswith(str(tmp_path / "idx"))  # torch & co. stay out of the index
    assert "TMPDIR" not in os.environ and not tempfile.gettempdir().startswith(str(tmp_path / "idx"))


# ---- 4. error hints name the real cause ------------------------------------------------------------------------
@pytest.mark.parametrize("raw, expected", [
    ("lance error: LanceError(IO): Permission denied (os error 13), /root/.cargo/registry/src/x/local.rs:1:2",
     "permission denied"),
    ("lance error: Read-only file system (os error 30) at path \"/x\"", "read-only file system"),
    ("lance error: No space left on device (os error 28), /rustc/abc/library/std/src/io.rs:5:6", "disk is full"),
    ("lance error: Failed to create temp dir: LanceError(IO): No such file or directory (os error 2) at path "
     "\"/tmp/gone/.tmpX\"", "temporary directory"),
])
def test_directory_problems_name_the_directory_not_rebuild(tmp_path, raw, expected):
    message = str(index_error(tmp_path, RuntimeError(raw), doing="write"))
    assert expected in message and str(tmp_path) in message
    assert "--rebuild" not in message and ".rs:" not in message and ".cargo" not in message


def test_a_failed_commit_names_the_cause(indexed, embedder, monkeypatch):
    capture(indexed, D1, "Adopted a cat", time="11:00")

    def full_disk(self, rows, delete_where):
        raise RuntimeError("lance error: IO: No space left on device (os error 28), /root/.cargo/x/local.rs:1:1")

    monkeypatch.setattr(TableWriter, "commit", full_disk)
    with pytest.raises(SuzentError) as err:
        make_indexer(indexed, embedder=embedder).run()
    assert "disk is full" in str(err.value) and "nothing committed" in str(err.value)
    assert "--rebuild" not in str(err.value) and ".cargo" not in str(err.value)


@pytest.mark.parametrize("state", ['{"version": 3, "files": ', "[1, 2]", "\x00\x00", "[" * 100000])
def test_an_unreadable_index_state_is_named_and_the_pass_goes_on(indexed, embedder, state):
    (indexed.paths.index_dir / STATE_FILE).write_text(state)
    report = make_indexer(indexed, embedder=embedder).run()
    assert report.full and not report.errors and report.rows_added == 0
    assert len(report.warnings) == 1 and STATE_FILE in report.warnings[0]


def test_a_bad_record_in_the_index_state_is_dropped_with_one_warning(indexed, embedder):
    path = indexed.paths.index_dir / STATE_FILE
    state = json.loads(path.read_text())
    state["files"]["archive:2026-06-01.md"] = 5
    state["files"]["archive:2026-06-02.md"] = {"mtime_ns": "x", "size": True}
    path.write_text(json.dumps(state))
    report = make_indexer(indexed, embedder=embedder).run()
    assert not report.errors and report.rows_added == 0
    assert len(report.warnings) == 1 and "2 unusable record(s)" in report.warnings[0]
    recorded = json.loads(path.read_text())["files"]
    assert all(isinstance(recorded[k]["size"], int) for k in ("archive:2026-06-01.md", "archive:2026-06-02.md"))


# ---- 5. symlinks that leave the tiers ------------------------------------------------------------------------
def test_symlinks_leaving_the_tiers_are_refused_with_one_warning_each(settings, embedder, tmp_path):
    init_home(settings)
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("The root password is hunter2\n")
    (secret.parent / "more.md").write_text("Another outside secret\n")
    vault = settings.paths.vault_dir
    (vault / "3_Personal" / "Food.md").write_text("# Food\n\nLikes tea.\n")
    (vault / "3_Personal" / "leak.md").symlink_to(secret)
    (vault / "1_Projects" / "linked").symlink_to(secret.parent, target_is_directory=True)
    (vault / "1_Projects" / "alias.md").symlink_to(vault / "3_Personal" / "Food.md")  # stays inside: read
    log_link = settings.paths.archive_dir / "2026-06-03.md"
    log_link.symlink_to(secret)
    report = make_indexer(settings, embedder=embedder).run()
    texts = contents(settings, embedder)
    assert not [t for t in texts if "hunter2" in t or "outside secret" in t]
    assert len([t for t in texts if "Likes tea." in t]) == 2
    refused = [w for w in report.warnings if "symlink" in w]
    assert len(refused) == 3, report.warnings
    assert any("leak.md" in w for w in refused) and any("linked" in w for w in refused)
    assert any("2026-06-03.md" in w for w in refused)
    assert source_for_path(settings.paths, log_link) is None  # `capture --index` cannot sneak it in either
    assert make_indexer(settings, embedder=embedder).run(only=[log_link]).rows_added == 0
    assert [s.key for s in discover(settings.paths) if "leak" in s.key] == []


def test_every_vault_walker_refuses_links_leaving_the_vault_with_one_warning_each(settings, tmp_path):
    from suzent_cli import vault as vault_mod
    from suzent_cli.promote import personal_pages
    from suzent_cli.status import vault_counts

    init_home(settings)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd.md").write_text("root:x:0:0\n")
    vault = settings.paths.vault_dir
    (vault / "3_Personal" / "Food.md").write_text("# Food\n\nLikes tea.\n")
    (vault / "3_Personal" / "x.md").symlink_to(outside / "passwd.md")
    (vault / "3_Personal" / "linked").symlink_to(outside, target_is_directory=True)
    (vault / "1_Projects" / "alias.md").symlink_to(vault / "3_Personal" / "Food.md")  # stays inside: read
    refused: list[str] = []
    pages = [p.relative_to(vault).as_posix() for p in vault_mod.content_pages(vault, refused=refused)]
    assert pages == ["1_Projects/alias.md", "3_Personal/Food.md"]
    assert len(refused) == 2 and any("x.md" in w for w in refused) and any("linked" in w for w in refused), refused
    assert [p.name for p in personal_pages(vault)] == ["Food.md"]  # promote
    assert vault_counts(settings)["refused_links"] == refused  # status (and its warnings)


def test_the_indexer_still_reads_vault_links_into_the_other_tiers(settings, embedder):
    init_home(settings)
    capture(settings, D1, "Lives in Lisbon")
    link = settings.paths.vault_dir / "3_Personal" / "day.md"
    link.symlink_to(settings.paths.archive_dir / "2026-06-01.md")
    from suzent_cli import vault as vault_mod

    assert vault_mod.content_pages(settings.paths.vault_dir) == []  # the dream's walkers: the vault only
    refused: list[str] = []
    keys = [s.key for s in discover(settings.paths, refused)]
    assert "notebook:3_Personal/day.md" in keys and not refused


# ---- 6. no library noise ---------------------------------------------------------------------------------------
def test_forgets_zero_retention_compaction_prints_no_library_warning(indexed, embedder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimize_index(indexed, dt.timedelta(0))
    assert [str(w.message) for w in caught] == []


def test_lancedb_rust_log_defaults_to_errors_only_and_a_persons_choice_stands(monkeypatch):
    monkeypatch.delenv("LANCEDB_LOG", raising=False)
    store_mod._lancedb()
    assert os.environ["LANCEDB_LOG"] == "error"
    monkeypatch.setenv("LANCEDB_LOG", "debug")
    store_mod._lancedb()
    assert os.environ["LANCEDB_LOG"] == "debug"


def test_verify_asks_lance_for_what_its_search_returns(settings, embedder):
    """verify's one BM25 query per index asked for ``id`` alone; when a row matched its probe word ("suzent"),
    lance's scanner logged a deprecation (``_score`` not asked for but returned, which a later lance stops doing).
    suzent runs lance's logger at ``error`` (so a person saw nothing), but a test worker whose lancedb was imported
    first at the default level printed it into a CLI test's stderr. Asked with ``LANCEDB_LOG=warn`` in a real
    process, since that logger writes to fd 2: no deprecation."""
    import subprocess
    import sys

    init_home(settings)
    capture(settings, D1, "I keep my memory in suzent", "Likes tea")
    make_indexer(settings, embedder=embedder).run()
    script = ("import sys; from pathlib import Path; from suzent_cli.index.store import ReadStore; "
              "ReadStore.open_existing(Path(sys.argv[1])).verify()")
    done = subprocess.run([sys.executable, "-c", script, str(settings.paths.index_dir)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "LANCEDB_LOG": "warn"})
    assert done.returncode == 0, done.stderr
    assert "Deprecation" not in done.stderr, done.stderr
