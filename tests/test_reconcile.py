"""Reconcile and forget: tombstones as the only removal mechanism, each paired with an explicit reindex; crash
safety by killing real processes at each step (integration/test_reconcile_crash.py); the invariants (append-only
logs, one LanceDB writer)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from conftest import HASH_ENV, REPO, CountingEmbedder, invoke, log
from suzent_cli import reconcile as reconcile_mod
from suzent_cli.archive import list_logs
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.reconcile import reconcile
from suzent_cli.vault.state import append_superseded, read_superseded, read_tombstones

EMB = HASH_ENV | {"SUZENT_NOW": "2026-06-20T12:00"}


def make_settings(home: Path):
    return dataclasses.replace(resolve_settings(home=home, now="2026-06-20T12:00", env={}), embedder="hash:64")


def rows(settings) -> list[tuple]:
    store = ReadStore.open_existing(settings.paths.index_dir)
    return sorted((r["source"], r["locator"], r["content"]) for r in store.rows())


def backlog(settings):
    for i, day in enumerate(["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05"]):
        log(settings, day, "[preference] Likes green tea", "[personal] Lives in Berlin", f"[technical] Read chapter {i}",
            "[goal] Wants to learn Rust")


def dreamed(home: Path):
    """A home with five days of logs, indexed, then dreamed (rules engine, no follow-ups): superseded lines pending."""
    s = make_settings(home)
    backlog(s)
    run_index(s, embedder=CountingEmbedder())
    DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
    return s


def test_reconcile_retires_superseded_lines_then_truncates(home):
    s = dreamed(home)
    assert read_superseded(s.paths.state_dir) == ["- [preference] Likes green tea", "- [personal] Lives in Berlin",
                                                  "- [goal] Wants to learn Rust"]
    before = {p.name: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)}
    report = reconcile(s, embedder=CountingEmbedder())
    assert (report.lines_read, report.lines_retired, report.tombstones_added) == (3, 3, 3)
    assert report.days_reindexed == [f"2026-06-0{i}.md" for i in range(1, 6)]
    # 15 retired rows, and the 5 facts that had a retired fact as context are re-embedded without it
    assert (report.rows_removed, report.rows_reembedded) == (20, 5) and not report.errors
    assert read_superseded(s.paths.state_dir) == []
    assert read_tombstones(s.paths.state_dir) == {"likes green tea", "lives in berlin", "wants to learn rust"}
    contents = [c for src, _, c in rows(s) if src.startswith("archive:")]
    assert sorted(contents) == [f"Read chapter {i}" for i in range(5)]
    assert any("Likes green tea (confirmed 5x" in c for src, _, c in rows(s) if src.startswith("notebook:"))
    assert {p.name: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)} == before  # logs untouched
    assert report.optimized["fragments_after"] <= report.optimized["fragments_before"]
    again = reconcile(s, embedder=CountingEmbedder())
    assert (again.lines_read, again.tombstones_added, again.rows_removed, again.days_reindexed) == (0, 0, 0, [])


def test_lines_handed_off_during_reconcile_survive_the_truncate(home, monkeypatch):
    s = dreamed(home)
    real = reconcile_mod.truncate_superseded

    def late_append_then_truncate(state_dir, processed, *, timeout):
        append_superseded(state_dir, ["- [personal] Has a cat"], timeout=timeout)  # the dream, meanwhile
        return real(state_dir, processed, timeout=timeout)

    monkeypatch.setattr(reconcile_mod, "truncate_superseded", late_append_then_truncate)
    reconcile(s, embedder=CountingEmbedder(), sweep=False, optimize=False)
    assert read_superseded(s.paths.state_dir) == ["- [personal] Has a cat"]


def test_a_failed_reindex_keeps_the_hand_off_for_a_retry(home):
    s = dreamed(home)
    report = reconcile(s, embedder=CountingEmbedder(fail_on="Read chapter 2"), sweep=False, optimize=False)
    assert report.errors and len(read_superseded(s.paths.state_dir)) == 3
    report = reconcile(s, embedder=CountingEmbedder())
    assert not report.errors and read_superseded(s.paths.state_dir) == []


def test_dream_runs_reconcile_after_a_productive_run(home):
    s = make_settings(home)
    backlog(s)
    run_index(s, embedder=CountingEmbedder())
    result = DreamRunner(s, DreamConfig(), engine="rules", embedder=CountingEmbedder()).tick(force=True)
    step, promote = result.steps  # reconcile, then the MEMORY.md promotion
    assert promote.name == "promote" and promote.ok
    assert step.name == "reconcile" and step.ok and step.detail["lines_retired"] == 3
    assert read_superseded(s.paths.state_dir) == [] and not any("Likes green tea" == c for _, _, c in rows(s))


# --- forget ------------------------------------------------------------------------------------------------
def test_forget_text_removes_every_copy_and_stays_gone(home):
    s = make_settings(home)
    log(s, "2026-06-01", "[personal] Has a secret diary", "[personal] Lives in Berlin")
    log(s, "2026-06-02", "[personal] has a  SECRET diary", "[preference] Likes tea")
    page = s.paths.vault_dir / "0_Inbox" / "notes.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Notes\n\nThe user has a secret diary under the bed.\n")
    run_index(s, embedder=CountingEmbedder())
    logs_before = {p: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)}

    proc = invoke(home, "forget", "--dry-run", "--", "- [personal] Has a secret diary", env_extra=EMB)  # as printed
    assert proc.returncode == 0 and "2 fact(s) or chunk(s) in 2 file(s) hold this text; 2 of them in the search index" \
        in proc.stdout, proc.stdout
    assert read_tombstones(s.paths.state_dir) == frozenset()

    proc = invoke(home, "forget", "has a secret DIARY", "--json", env_extra=EMB)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["tombstone_added"] and data["rows_indexed"] == 2
    # the two neighbours lose it as context; the notes page's chunk loses the line holding it (one out, one in)
    assert (data["rows_removed"], data["rows_reembedded"]) == (5, 3)
    assert data["optimized"]["versions_after"] == 1  # old versions holding the text are gone at once
    assert data["plan"]["mentions"] == ["0_Inbox/notes.md"] and "edit the page" in data["warnings"][0]
    assert not [c for _, _, c in rows(s) if "secret diary" in c.lower()]  # gone without an index pass
    proc = invoke(home, "index", "--full", env_extra=EMB)
    assert proc.returncode == 0
    assert not [c for _, _, c in rows(s) if "secret diary" in c.lower()]
    assert {p: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)} == logs_before

    # re-captured later: the same words stay hidden, different words are a new fact
    log(s, "2026-06-03", "[personal] Has a secret diary", "[personal] Has a secret diary in the attic")
    run_index(s, embedder=CountingEmbedder())
    assert [c for _, _, c in rows(s) if "secret diary" in c.lower() and "bed" not in c] == \
        ["Has a secret diary in the attic"]


def test_forget_by_row_id_and_bad_input(home):
    s = make_settings(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin", "[preference] Likes tea")
    run_index(s, embedder=CountingEmbedder())
    row = next(r for r in ReadStore.open_existing(s.paths.index_dir).rows() if r["content"] == "Likes tea")
    proc = invoke(home, "forget", "--id", row["id"], env_extra=EMB)
    assert proc.returncode == 0 and "1 index row(s) removed" in proc.stdout, proc.stderr
    assert [c for _, _, c in rows(s)] == ["Lives in Berlin"]
    for args, code, message in ((["forget", "--id", "nope"], 2, "no row with id"),
                                (["forget", "Never said this"], 1, "nothing recorded"),  # no match: exit 1
                                (["forget"], 2, "give either TEXT or --id"),
                                (["forget", "x", "--id", "y"], 2, "give either TEXT or --id")):
        proc = invoke(home, *args, env_extra=EMB)
        assert proc.returncode == code and proc.stderr.startswith("Error: ") and message in proc.stderr, proc.stderr
    # forgetting again is not an error: the tombstone is there; the files are reindexed anyway
    proc = invoke(home, "forget", "Likes tea", env_extra=EMB)
    assert proc.returncode == 0 and "it was already forgotten" in proc.stdout


# --- invariants --------------------------------------------------------------------------------------------
def test_daily_logs_are_append_only_through_every_stage(home):
    s = make_settings(home)
    backlog(s)
    stages = [
        ("index", ["index"]), ("dream", ["dream", "--force", "--engine", "rules"]), ("reconcile", ["reconcile"]),
        ("forget", ["forget", "Read chapter 1"]), ("lint", ["lint"]), ("capture", ["capture", "--fact", "[x] late"]),
        ("index --full", ["index", "--full"]), ("status", ["status"]),
    ]
    seen = {p.name: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)}
    for name, args in stages:
        proc = invoke(home, *args, env_extra=EMB)
        assert proc.returncode == 0, (name, proc.stderr)
        now = {p.name: p.read_bytes() for _, p in list_logs(s.paths.archive_dir)}
        for log_name, old in seen.items():
            assert now[log_name][: len(old)] == old, f"{name} rewrote {log_name}"
            if log_name != "2026-06-20.md":
                assert hashlib.sha256(now[log_name]).digest() == hashlib.sha256(old).digest(), f"{name} changed {log_name}"
        seen = now


def _py_sources() -> dict[str, str]:
    root = REPO / "suzent_cli"
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.py")}


def test_every_tombstone_write_is_paired_with_an_explicit_reindex():
    sources = _py_sources()
    callers = sorted(f for f, t in sources.items() if "append_tombstones(" in t and not f.startswith("vault/state"))
    assert callers == ["forget.py", "reconcile.py"]
    for f in callers:
        text = sources[f]
        assert text.index("append_tombstones(") < text.rindex("reindex_files("), f


def test_commands_use_the_embedder_the_index_was_built_with(home):
    """Built with --model hash:64, the index keeps working for reconcile, forget, dream and recall without the flag."""
    s = make_settings(home)
    backlog(s)
    env = {"SUZENT_NOW": "2026-06-20T12:00"}
    assert invoke(home, "index", "--model", "hash:64", env_extra=env).returncode == 0
    proc = invoke(home, "dream", "--force", env_extra=env)
    assert proc.returncode == 0 and "reconcile: retired 3 superseded lines" in proc.stdout, proc.stdout + proc.stderr
    assert "warning" not in proc.stderr
    for args in (["reconcile"], ["forget", "Read chapter 3"], ["recall", "green tea", "--limit", "2"]):
        proc = invoke(home, *args, env_extra=env)
        assert proc.returncode == 0, (args, proc.stderr)


def test_state_appenders_never_join_a_torn_last_line_and_forget_purges_the_recall_log(home):
    """A crash can leave the last line of a state file without its newline: the next append starts a new line
    rather than gluing onto it, and forget drops the forgotten text's recall-log snippets."""
    from suzent_cli.vault.state import (
        RECALL_LOG,
        SUPERSEDED,
        TOMBSTONES,
        append_recall_log,
        append_tombstones,
        purge_recall_log,
    )

    state = make_settings(home).paths.state_dir
    state.mkdir(parents=True)
    (state / SUPERSEDED).write_text("- [x] torn")
    append_superseded(state, ["- [personal] Has a cat"], timeout=5)
    assert read_superseded(state) == ["- [x] torn", "- [personal] Has a cat"]
    (state / TOMBSTONES).write_text('{"content": "torn"')
    append_tombstones(state, ["Likes tea"], reason="forget", timeout=5)
    assert read_tombstones(state) == {"likes tea"}  # the torn line is skipped, the new one is whole
    append_recall_log(state, "q", [{"content": "Has a secret diary", "source_type": "archive_log"},
                                   {"content": "Likes tea", "source_type": "archive_log"}])
    assert purge_recall_log(state, "has a secret diary", timeout=5) == 1
    assert "secret" not in (state / RECALL_LOG).read_text() and "Likes tea" in (state / RECALL_LOG).read_text()
