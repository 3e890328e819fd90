"""``suzent verify``: each invariant proved on a real home (real files, real LanceDB through the indexer with the hash
embedder), each violation detected, ``--repair`` fixing what it says it fixes and naming what needs a person."""

from __future__ import annotations

import json
import os

import pytest

from conftest import HASH_ENV, CountingEmbedder, invoke, log
from suzent_cli import errors
from suzent_cli.index import seals
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.verify import needs_person, reseal, verify

ENV = HASH_ENV | {"SUZENT_NOW": "2026-06-10T12:00"}
DAY = "2026-06-09"


def _index(settings):
    return run_index(settings, embedder=CountingEmbedder())


def _cli(home, *args):
    return invoke(home, *args, env_extra=ENV)


def _json(home, *args):
    result = _cli(home, "verify", "--json", *args)
    return result.returncode, json.loads(result.stdout)


@pytest.fixture(autouse=True)
def _private_umask():
    """The umask suzent's entry points run under (privacy.private_umask): what the library calls here create is
    private, as it is in a real run."""
    previous = os.umask(0o077)
    yield
    os.umask(previous)


@pytest.fixture
def indexed(settings):
    """A home with two days of facts, a vault page whose claim cites a fact line, all indexed."""
    log(settings, "2026-06-08", "[personal] Lives in Berlin", "[tool] Uses neovim every day")
    log(settings, DAY, "[preference] Drinks oolong tea", "[project] Postgres 16 on Hetzner")
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n\n## Claims\n\n"
                    "- Lives in Berlin (confirmed 1x, last 2026-06-08) · source: 2026-06-08.md:5\n", encoding="utf-8")
    _index(settings)
    return settings


def _log_path(settings, day=DAY):
    return settings.paths.archive_dir / f"{day}.md"


def _violations(report, check):
    return report.checks[check].violations


def test_a_fresh_home_passes(home):
    code, data = _json(home)
    assert code == 0 and data["ok"] is True and data["repaired"] == [] and data["needs_person"] == []
    assert set(data["checks"]) == {"index_backed", "facts_indexed", "tombstones", "logs", "claim_sources", "state"}
    assert all(c["ok"] and c["violations"] == [] for c in data["checks"].values())


def test_a_clean_indexed_home_passes_and_every_check_looked_at_something(indexed):
    report = verify(indexed)
    assert report.ok, report.violations
    checked = {n: c.checked for n, c in report.checks.items()}
    assert checked["index_backed"] >= 5 and checked["facts_indexed"] == 4 and checked["logs"] == 2
    assert checked["claim_sources"] == 1 and checked["tombstones"] >= 5
    assert sorted(seals.sealed_names(indexed.paths.index_dir)) == ["2026-06-08.md", f"{DAY}.md"]
    result = _cli(indexed.paths.home, "verify")
    assert result.returncode == 0 and result.stdout.startswith("ok (index_backed")


def test_a_home_never_indexed_says_so_and_repair_builds_the_index(settings):
    # a home a first sync or an import filled: the old message spoke of a change "since the last index pass"
    log(settings, DAY, "[general] Runs on Mondays")
    report = verify(settings)
    assert [v.split(": ")[0] for v in report.violations] == ["facts_indexed"]
    assert "this home has no index yet: run `suzent index`" in report.violations[0]
    code, data = _json(settings.paths.home, "--repair")
    assert code == 0 and data["ok"], data


def test_lines_captured_after_the_pass_are_named_stale_and_repair_indexes_them(indexed):
    log(indexed, DAY, "[general] Runs on Mondays")
    report = verify(indexed)
    assert [v.split(": ")[0] for v in report.violations] == ["facts_indexed"]
    assert "not in the index yet, first line 10" in report.violations[0]
    assert "run `suzent index`" in report.violations[0]
    assert report.checks["logs"].ok  # an append is no rewrite
    code, data = _json(indexed.paths.home, "--repair")
    assert code == 0 and data["ok"] and data["repaired"][0].startswith("index pass: 1 file(s) updated, rows +1")


def test_a_rewritten_log_names_its_first_changed_line_and_needs_a_person(indexed):
    path = _log_path(indexed)
    path.write_text(path.read_text(encoding="utf-8").replace("- [preference] Drinks oolong tea\n", ""),
                    encoding="utf-8")
    report = verify(indexed)
    assert _violations(report, "logs") == [
        f"logs: archive/{DAY}.md: rewritten: is {path.stat().st_size} bytes, shorter than the "
        f"{seals.read_seal(indexed.paths.index_dir, f'{DAY}.md').size} bytes sealed; line 5 is not what was indexed"]
    assert any("stale" in v for v in _violations(report, "index_backed"))  # the vanished line's row
    code, data = _json(indexed.paths.home, "--repair")
    assert code == errors.VIOLATED and data["repaired"]  # the reindex ran; the log itself is a person's
    assert data["checks"]["index_backed"]["ok"] and data["checks"]["facts_indexed"]["ok"]
    assert not data["checks"]["logs"]["ok"]
    assert data["needs_person"] == [f"archive/{DAY}.md was rewritten: compare it with a backup (or `git log -p "
                                    f"archive/{DAY}.md` in a synced home); once it holds what it should, `suzent "
                                    f"verify --reseal {DAY}.md` records it as it is"]
    # an index pass keeps the seal it cannot match, and says so
    assert any("rewritten; its seal is kept" in w for w in _index(indexed).warnings)
    assert not verify(indexed).checks["logs"].ok
    # the person's act: reseal; then all holds
    result = _cli(indexed.paths.home, "verify", "--reseal", f"{DAY}.md")
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith(f"repaired: resealed {DAY}.md\nok (")


def test_a_removed_log_is_named(indexed):
    _log_path(indexed).unlink()
    report = verify(indexed)
    assert any(v.startswith(f"logs: archive/{DAY}.md: removed (it was sealed at") for v in report.violations)
    assert any("from a file that is gone" in v for v in _violations(report, "index_backed"))


def test_a_row_the_markdown_does_not_yield_though_its_file_looks_unchanged_is_no_stale_row(indexed):
    """The indexer decides by mtime and size: a same-size edit with the old mtime is never re-read, so its old row
    stays. verify sees the row is unbacked (not stale), and the fact missing; --repair reindexes that file."""
    path = _log_path(indexed)
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Drinks oolong tea", b"Drinks sencha tea"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    report = verify(indexed)
    (unbacked,) = _violations(report, "index_backed")
    assert unbacked.startswith(f"index_backed: archive:{DAY}.md: ")  # the row, and its neighbour's (context)
    assert "row(s) the file does not yield though it is unchanged since the last index pass: rows that should not " \
           "exist (first " in unbacked
    (missing,) = _violations(report, "facts_indexed")
    assert "missing from the index though the file is unchanged since the last index pass, first line 5" in missing
    assert "line 5 is not what was indexed" in _violations(report, "logs")[0]
    after = _json(indexed.paths.home, "--repair")[1]
    assert after["checks"]["index_backed"]["ok"] and after["checks"]["facts_indexed"]["ok"]
    assert any("reindexed 1 file(s) unchanged since the last pass" in r for r in after["repaired"])


def test_a_tombstone_written_without_a_reindex_is_recallable_text_and_repair_sweeps_it(indexed):
    from suzent_cli.vault.state import append_tombstones

    append_tombstones(indexed.paths.state_dir, ["Drinks oolong tea"], reason="forget", timeout=5)
    report = verify(indexed)
    (held,) = _violations(report, "tombstones")
    assert held.startswith(f"tombstones: archive:{DAY}.md row ") and "holds tombstoned or forgotten text" in held
    code, data = _json(indexed.paths.home, "--repair")
    assert code == 0 and data["ok"], data
    store = ReadStore.open_existing(indexed.paths.index_dir)
    assert "Drinks oolong tea" not in store.scan(["content"]).column("content").to_pylist()


def test_a_claim_citing_no_fact_line_needs_a_person_and_repair_leaves_the_page(indexed):
    page = indexed.paths.vault_dir / "3_Personal" / "Profile.md"
    page.write_text(page.read_text(encoding="utf-8")
                    + "- Has a cat · source: 2026-01-01.md:3\n- Likes rain · source: 2026-06-08.md:1\n",
                    encoding="utf-8")
    before = page.read_bytes()
    report = verify(indexed)
    assert _violations(report, "claim_sources") == [
        "claim_sources: 3_Personal/Profile.md:8: cites 2026-01-01.md:3, a daily log that does not exist",
        "claim_sources: 3_Personal/Profile.md:9: cites 2026-06-08.md:1, a line that is not a fact line"]
    code, data = _json(indexed.paths.home, "--repair")
    assert code == errors.VIOLATED and page.read_bytes() == before
    assert len(data["needs_person"]) == 2 and "correct or remove that claim's source by hand" in data["needs_person"][0]


def test_a_future_watermark_and_a_broken_one_are_violations(indexed):
    ledger = indexed.paths.vault_dir / "log.md"
    ledger.write_text("## [2026-06-01] ingest | daily logs  watermark=2026-07-01\n", encoding="utf-8")
    assert _violations(verify(indexed), "state") == [
        f"state: {ledger}: the watermark 2026-07-01 is in the future (today is 2026-06-10): the dream would skip "
        "the days up to it"]
    ledger.write_text("watermark=2026-06-01\nwatermark=2026-13-40\n", encoding="utf-8")
    assert "(2026-13-40) is not a date" in _violations(verify(indexed), "state")[0]


def test_a_corrupt_state_file_is_a_violation_and_quarantined_records_are_notes(indexed):
    state = indexed.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    (state / "dream_state.json").write_text("{not json", encoding="utf-8")
    (state / "late_lines.jsonl").write_text('{"day": "nope"}\n', encoding="utf-8")
    (indexed.paths.index_dir / "index_state.json").write_text("[]", encoding="utf-8")
    check = verify(indexed).checks["state"]
    assert sorted(check.violations) == sorted([
        f"state: {state / 'dream_state.json'}: does not parse (JSONDecodeError) (the next dream moves it aside as "
        "dream_state.json.corrupt)",
        f"state: {indexed.paths.index_dir / 'index_state.json'}: is not a JSON object (the next index pass re-indexes "
        "every file)"])
    assert "late_lines.jsonl: 1 bad record(s), quarantined by their next reader" in check.notes


def test_a_lock_that_is_not_a_regular_file_is_a_violation(indexed):
    lock = indexed.paths.state_dir / ".state.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    if lock.exists():
        lock.unlink()
    lock.symlink_to("/dev/null")
    assert any(str(lock) in v and "not a regular file" in v for v in _violations(verify(indexed), "state"))


def test_open_modes_are_violations_and_repair_makes_them_private(indexed):
    os.chmod(indexed.paths.home, 0o755)
    os.chmod(_log_path(indexed), 0o644)
    report = verify(indexed)
    assert f"state: {indexed.paths.home}: mode 0755: open to the group or others (folders 0700, files 0600)" \
        in report.violations
    assert f"state: {_log_path(indexed)}: mode 0644: open to the group or others" in report.violations
    code, data = _json(indexed.paths.home, "--repair")
    assert code == 0 and data["ok"] and any(r.startswith("made private:") for r in data["repaired"])
    assert (os.stat(indexed.paths.home).st_mode & 0o777) == 0o700


def test_an_open_folder_inside_the_home_is_one_violation_not_two(indexed):
    # os.walk gives a folder both as an entry of its parent and as the folder it then walks
    os.chmod(indexed.paths.vault_dir, 0o755)
    named = [v for v in verify(indexed).violations if f"{indexed.paths.vault_dir}:" in v]
    assert named == [f"state: {indexed.paths.vault_dir}: mode 0755: open to the group or others"]


def test_an_unreadable_seal_is_kept_by_the_indexer_and_reported(indexed):
    seal = seals.seal_path(indexed.paths.index_dir, f"{DAY}.md")
    seal.write_text("{", encoding="utf-8")
    log(indexed, DAY, "[general] One more")
    assert any("unreadable" in w and "left as it is" in w for w in _index(indexed).warnings)
    assert seal.read_text(encoding="utf-8") == "{"
    report = verify(indexed)
    assert any("its seal cannot be checked" in v for v in _violations(report, "logs"))
    assert needs_person(indexed, report).needs_person == [
        f"archive/{DAY}.md: its seal cannot be checked: {seal} is unreadable (JSONDecodeError); once you have "
        f"checked the log by hand, `suzent verify --reseal {DAY}.md` records it as it is",
        f"{seal}: unreadable (JSONDecodeError)"]
    assert reseal(indexed, [_log_path(indexed)]) == [f"{DAY}.md"] and verify(indexed).ok


def test_reseal_is_what_sync_calls_after_a_legitimate_merge(indexed):
    path = _log_path(indexed)
    path.write_text(path.read_text(encoding="utf-8").replace("## 09:00", "## 08:59"), encoding="utf-8")
    assert not verify(indexed, cheap=True).ok
    assert reseal(indexed, [path]) == [f"{DAY}.md"]
    assert verify(indexed, cheap=True).ok


@pytest.mark.parametrize("name", ["../2026-06-09.md", "notes.md", "2026-01-01.md", "/etc/2026-06-09.md"])
def test_reseal_refuses_what_is_no_daily_log_of_this_home(indexed, name):
    result = _cli(indexed.paths.home, "verify", "--reseal", name)
    assert result.returncode == errors.BAD_INPUT and result.stdout == ""
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_bad_bytes_are_bad_input_in_one_line(indexed):
    result = invoke(indexed.paths.home, "verify", "--reseal", b"\xff\xfe.md".decode("utf-8", "surrogateescape"),
                    env_extra=ENV)
    assert result.returncode == errors.BAD_INPUT and "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_the_table_is_read_without_its_vectors(indexed, monkeypatch):
    read: list = []
    original = ReadStore.scan

    def scan(self, columns=None):
        read.append(columns)
        return original(self, columns)

    monkeypatch.setattr(ReadStore, "scan", scan)
    monkeypatch.setattr(ReadStore, "ids_by_source", lambda self: pytest.fail("reads the whole table"))
    assert verify(indexed).ok
    assert read and all(cols is not None and "vector" not in cols for cols in read)


def test_status_shows_the_cheap_part(indexed):
    path = _log_path(indexed)
    path.write_bytes(path.read_bytes().replace(b"oolong", b"sencha"))
    result = invoke(indexed.paths.home, "status", "--json", "--no-index", env_extra=ENV)
    row = json.loads(result.stdout)["verify"]
    assert row["ok"] is False and row["violations"][0].startswith(f"logs: archive/{DAY}.md: rewritten:")
    assert set(row["checked"]) == {"logs", "state"}
    text = invoke(indexed.paths.home, "status", "--no-index", env_extra=ENV).stdout
    assert "verify" in text and "run `suzent verify`" in text


def test_a_changed_context_window_makes_every_row_stale_not_unbacked(indexed):
    """Rows embed their preceding facts (index.context_window): another window yields other row ids, which the
    next pass rebuilds (its state names the old window), so they are stale, not rows that should not exist."""
    import dataclasses

    other = dataclasses.replace(indexed, context_window=0 if indexed.context_window else 1)
    report = verify(other)
    assert report.checks["index_backed"].violations and all(
        "stale" in v for v in report.checks["index_backed"].violations)
    assert report.stale and not report.reindex


def test_verify_writes_nothing_into_a_home_that_does_not_exist(tmp_path):
    home = tmp_path / "nowhere"
    assert _cli(home, "verify").returncode == 0
    assert not home.exists()


def test_many_dangling_sources_are_listed_up_to_a_bound(indexed):
    from suzent_cli.verify import MAX_LISTED

    page = indexed.paths.vault_dir / "2_Wiki" / "Many.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("## Claims\n\n" + "".join(f"- Claim {i} · source: 2020-01-01.md:{i + 1}\n" for i in range(50)),
                    encoding="utf-8")
    code, data = _json(indexed.paths.home)
    listed = data["checks"]["claim_sources"]["violations"]
    assert code == errors.VIOLATED and data["checks"]["claim_sources"]["checked"] == 51
    assert len(listed) == MAX_LISTED + 1 and listed[-1] == f"claim_sources: …: and {50 - MAX_LISTED} more like these"
    assert len(data["needs_person"]) == MAX_LISTED + 1


def test_a_log_is_sealed_only_with_no_append_in_flight(settings):
    """The seal is read under the daily logs' append lock: while a capture holds it, the log is left for the next
    pass (a failed append rolls its bytes back, and a seal over them would read as a rewrite)."""
    from suzent_cli.archive import APPEND_LOCK
    from suzent_cli.files import locked

    log(settings, DAY, "[general] One fact")
    with locked(settings.paths.archive_dir / APPEND_LOCK, 5):
        assert seals.seal_logs(settings.paths.index_dir, settings.paths.archive_dir, timeout=0.05) == []
        assert seals.sealed_names(settings.paths.index_dir) == []
    assert seals.seal_logs(settings.paths.index_dir, settings.paths.archive_dir) == []
    assert seals.sealed_names(settings.paths.index_dir) == [f"{DAY}.md"]


def test_a_damaged_table_is_named_with_its_way_out_and_never_a_traceback(indexed):
    data = sorted((indexed.paths.index_dir / "archival_memories.lance" / "data").glob("*.lance"))
    assert data
    data[0].write_bytes(b"not lance")
    result = _cli(indexed.paths.home, "verify")
    assert result.returncode == errors.VIOLATED and "Traceback" not in result.stdout + result.stderr
    assert "index_backed: " in result.stdout and "suzent index --rebuild" in result.stdout


def test_the_original_apps_table_is_all_legacy_and_a_legacy_row_holding_forgotten_text_needs_a_person(settings):
    import datetime as dt

    from conftest import load_script
    from suzent_cli.vault.state import append_tombstones

    rows = [{"id": f"app-{i}", "content": text, "metadata": "{}", "created_at": dt.datetime(2026, 1, i + 1)}
            for i, text in enumerate(["Lives in Porto", "Plays the cello"])]
    load_script("benchmarks/synthetic.py", "synthetic_for_verify").app_table(settings.paths.index_dir, rows, dim=8)
    report = verify(settings)
    (refused,) = report.violations  # the indexer cannot update another tool's table: the way out is named
    assert refused.startswith("state: ") and "written by another tool" in refused
    assert report.checks["index_backed"].ok and report.checks["index_backed"].notes == [
        "2 legacy row(s) (no source: the original app's; `suzent retire-legacy` reviews them)"]
    append_tombstones(settings.paths.state_dir, ["Plays the cello"], reason="forget", timeout=5)
    code, data = _json(settings.paths.home, "--repair")
    assert code == errors.VIOLATED
    assert not data["repaired"] and data["checks"]["tombstones"]["violations"] == [
        "tombstones: legacy row app-1: holds tombstoned or forgotten text, so recall can return it; no reindex "
        "retires a legacy row (`suzent retire-legacy` exports and removes it)"]
    assert any(p.startswith("legacy row app-1: holds tombstoned") for p in data["needs_person"])
    # with a daily log to index, the repair's reindex is refused by the indexer: named, not a traceback
    log(settings, DAY, "[general] Something new")
    code, data = _json(settings.paths.home, "--repair")
    assert code == errors.VIOLATED and data["repaired"] == []
    assert data["needs_person"][0].startswith("the reindex refused: the index at ")


def test_a_missing_bm25_index_is_a_violation_and_repair_builds_it(indexed):
    import lancedb

    from suzent_cli.index.store import FTS_COLUMNS

    table = lancedb.connect(str(indexed.paths.index_dir)).open_table("archival_memories")
    (name,) = [i.name for i in table.list_indices() if list(i.columns) == [FTS_COLUMNS[0]]]
    table.drop_index(name)
    (missing,) = verify(indexed).checks["state"].violations
    assert f"the BM25 index on {FTS_COLUMNS[0]!r} is missing" in missing
    code, data = _json(indexed.paths.home, "--repair")
    assert code == 0 and data["ok"] and data["repaired"]
    assert ReadStore.open_existing(indexed.paths.index_dir).has_fts_index(FTS_COLUMNS[0])


def test_what_a_killed_seal_write_leaves_is_a_stray_note_not_a_violation(indexed):
    stray = seals.seals_dir(indexed.paths.index_dir) / f".{DAY}.md.json.x1y2.tmp"
    stray.write_text('{"half": ', encoding="utf-8")  # atomic_write's temp file, as a kill -9 before the rename
    report = verify(indexed)
    assert report.ok, report.violations
    assert any("no seal" in n and stray.name in n for n in report.checks["logs"].notes)
