"""The indexer against a real LanceDB table in a temp dir, with a deterministic embedder."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import CountingEmbedder
from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.errors import IndexIncompatible
from suzent_cli.index.indexer import STATE_FILE, STATE_VERSION, Indexer
from suzent_cli.index.store import ReadStore, TableWriter
from suzent_cli.init import init_home
from suzent_cli.vault.state import append_tombstones

D1, D2 = dt.date(2026, 6, 1), dt.date(2026, 6, 2)


def capture(settings, day, *contents, time="10:00", session="s"):
    archive.append_entry(settings.paths.archive_dir, day, time, session, [Fact(c) for c in contents], timeout=5)


def rows(settings, embedder):
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    return sorted((r["source"], r["locator"], r["content"]) for r in store.rows())


@pytest.fixture
def home_ready(settings):
    init_home(settings)
    return settings


def test_index_is_idempotent(home_ready, embedder):
    s = home_ready
    capture(s, D1, "Lives in Berlin", "Likes tea")
    (s.paths.vault_dir / "3_Personal" / "Food.md").write_text("# Food\n\nLikes tea.\n\nHates coffee.\n")
    first = Indexer(s, embedder).run()
    assert (first.rows_added, first.embeddings, first.files_updated) == (3, 3, 2)
    before = rows(s, embedder)
    second = Indexer(s, embedder).run()
    assert (second.rows_added, second.rows_removed, second.embeddings, second.files_updated) == (0, 0, 0, 0)
    full = Indexer(s, embedder).run(full=True)
    assert (full.rows_added, full.rows_removed, full.embeddings) == (0, 0, 0)
    assert rows(s, embedder) == before


def test_log_reindex_is_a_diff(home_ready, embedder):
    s = home_ready
    capture(s, D1, "one", "two", "three")
    Indexer(s, embedder).run()
    capture(s, D1, "four", time="11:00")
    report = Indexer(s, embedder).run()
    assert (report.embeddings, report.rows_added, report.rows_removed) == (1, 1, 0)
    assert [r[2] for r in rows(s, embedder)] == ["one", "two", "three", "four"]


def test_only_reindexes_named_files_whatever_their_mtime(home_ready, embedder):
    s = home_ready
    capture(s, D1, "alpha")
    capture(s, D2, "beta")
    report = Indexer(s, embedder).run(only=[s.paths.log_path(D2)])
    assert report.rows_added == 1 and [r[2] for r in rows(s, embedder)] == ["beta"]


def test_embedding_failure_keeps_old_rows_and_retries(home_ready):
    s = home_ready
    capture(s, D1, "kept fact")
    Indexer(s, CountingEmbedder()).run()
    capture(s, D1, "BOOM fact", time="11:00")
    capture(s, D2, "other day fine")
    failing = CountingEmbedder(fail_on="BOOM")
    report = Indexer(s, failing).run()
    assert [e[0] for e in report.errors] == ["archive:2026-06-01.md"]
    assert [r[2] for r in rows(s, failing)] == ["kept fact", "other day fine"]
    healthy = CountingEmbedder()
    again = Indexer(s, healthy).run()
    assert not again.errors and again.embeddings == 1
    assert [r[2] for r in rows(s, healthy)] == ["kept fact", "BOOM fact", "other day fine"]


def test_deleted_and_emptied_files_lose_their_rows(home_ready, embedder):
    s = home_ready
    capture(s, D1, "day one")
    capture(s, D2, "day two")
    page = s.paths.vault_dir / "2_Wiki" / "Concepts" / "RRF.md"
    page.write_text("Reciprocal rank fusion.\n")
    Indexer(s, embedder).run()
    s.paths.log_path(D1).unlink()
    page.write_text("\n\n")
    report = Indexer(s, embedder).run()
    assert report.rows_removed == 2
    assert [r[2] for r in rows(s, embedder)] == ["day two"]


def test_unversioned_state_is_discarded_and_triggers_full_rebuild(home_ready, embedder):
    s = home_ready
    capture(s, D1, "a fact")
    Indexer(s, embedder).run()
    # A v1 state as the original app wrote it: absolute paths → mtimes, no version.
    (s.paths.index_dir / STATE_FILE).write_text(json.dumps({str(s.paths.log_path(D1)): 1.0}))
    report = Indexer(s, embedder).run()
    assert report.full and report.files_checked == 1
    assert report.rows_added == 0 and len(rows(s, embedder)) == 1
    state = json.loads((s.paths.index_dir / STATE_FILE).read_text())
    assert state["version"] == STATE_VERSION and list(state["files"]) == ["archive:2026-06-01.md"]


def test_tombstoned_text_is_never_indexed_from_any_source(home_ready, embedder):
    s = home_ready
    capture(s, D1, "Secret   THING", "public thing")
    (s.paths.vault_dir / "0_Inbox" / "n.md").write_text("secret thing\n\nother paragraph that is long enough" * 1)
    (s.paths.memory_dir / "user.md").write_text("Secret thing\n")
    Indexer(s, embedder).run()
    assert "Secret   THING" in [r[2] for r in rows(s, embedder)]
    append_tombstones(s.paths.state_dir, ["secret thing"], reason="forget", timeout=5)
    report = Indexer(s, embedder).run()  # the tombstone set changed: every file is looked at again
    contents = [r[2] for r in rows(s, embedder)]
    assert not [c for c in contents if c.lower().split() == ["secret", "thing"]]
    # issue 13: no row shows it, not even inside a longer chunk — the vault chunk loses that line (one re-embed)
    assert not [c for c in contents if "secret thing" in c.lower()]
    assert "public thing" in contents and "other paragraph that is long enough" in contents
    assert report.embeddings == 1


def test_legacy_rows_are_never_deleted(home_ready, embedder):
    s = home_ready
    capture(s, D1, "ours")
    Indexer(s, embedder).run()
    store = TableWriter.open(s.paths.index_dir, embedder.name, embedder.dim)  # a test may write; suzent_cli may not
    legacy = {"id": "legacy-1", "content": "pre-markdown memory", "vector": [0.0] * (embedder.dim - 1) + [1.0],
              "user_id": "default-user", "metadata": json.dumps({"category": "personal"}), "importance": 0.8,
              "access_count": 0}
    store.commit([legacy], None)
    for full in (False, True):
        report = Indexer(s, embedder).run(full=full)
        assert report.legacy_rows == 1
    s.paths.log_path(D1).unlink()
    Indexer(s, embedder).run(full=True)
    assert rows(s, embedder) == [(None, None, "pre-markdown memory")]


def test_non_ascii_file_names(home_ready, embedder):
    s = home_ready
    page = s.paths.vault_dir / "3_Personal" / "Café ☕ — naïve.md"
    page.write_text("Drinks flat whites.\n")
    Indexer(s, embedder).run()
    assert rows(s, embedder) == [("notebook:3_Personal/Café ☕ — naïve.md", 0, "Drinks flat whites.")]
    page.unlink()
    assert Indexer(s, embedder).run().rows_removed == 1


def test_what_is_and_is_not_indexed(home_ready, embedder):
    s = home_ready
    v = s.paths.vault_dir
    (v / ".state" / "notes.md").write_text("state is not content\n")
    (v / "2_Wiki" / "index.md").write_text("nested index counts\n")
    (s.paths.memory_dir / "MEMORY.md").write_text("# Long-term Memory\n\nPrefers tea.\n")
    (s.paths.memory_dir / "persona.md").write_text("Helpful.\n")
    Indexer(s, embedder).run()
    sources = {r[0] for r in rows(s, embedder)}
    assert sources == {"notebook:2_Wiki/index.md", "facts:MEMORY.md", "persona:persona.md"}


def test_pages_are_chunked_by_paragraph(home_ready, embedder):
    s = home_ready
    para = "word " * 100  # ~500 chars
    (s.paths.vault_dir / "1_Projects" / "p.md").write_text("\n\n".join([para.strip()] * 5))
    Indexer(s, embedder).run()
    assert [r[1] for r in rows(s, embedder)] == [0, 1, 2]


def test_another_embedder_is_refused_with_the_way_out(home_ready, embedder):
    s = home_ready
    capture(s, D1, "x fact")
    Indexer(s, embedder).run()
    with pytest.raises(IndexIncompatible, match="--rebuild"):
        Indexer(s, CountingEmbedder(dim=32)).run()


def test_table_of_another_tool_is_refused_and_left_alone(home_ready, embedder):
    import lancedb
    import pyarrow as pa

    s = home_ready
    s.paths.index_dir.mkdir(parents=True, exist_ok=True)
    db = lancedb.connect(str(s.paths.index_dir))
    db.create_table("archival_memories", data=pa.table({"id": ["1"], "content": ["old"], "metadata": ["{}"],
                                                        "vector": pa.array([[0.1, 0.2]], pa.list_(pa.float32(), 2))}))
    capture(s, D1, "new fact")
    with pytest.raises(IndexIncompatible, match="retire-legacy"):
        Indexer(s, embedder).run()
    assert db.open_table("archival_memories").count_rows() == 1


def test_crash_between_commit_and_state_save_converges(home_ready, embedder, monkeypatch):
    s = home_ready
    capture(s, D1, "first")
    indexer = Indexer(s, embedder)
    monkeypatch.setattr(Indexer, "_save_state", lambda self, state: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        indexer.run()
    monkeypatch.undo()
    report = Indexer(s, embedder).run()
    assert report.rows_added == 0 and [r[2] for r in rows(s, embedder)] == ["first"]


def test_diff_unavailable_falls_back_to_whole_file_replacement(home_ready, embedder, monkeypatch):
    s = home_ready
    capture(s, D1, "one", "two")
    Indexer(s, embedder).run()
    capture(s, D1, "three", time="11:00")

    def broken(self):
        raise OSError("scan failed")

    monkeypatch.setattr(ReadStore, "ids_by_source", broken)
    counting = CountingEmbedder()
    report = Indexer(s, counting).run()
    assert counting.texts == 3  # the whole file was re-embedded
    monkeypatch.undo()
    assert [r[2] for r in rows(s, embedder)] == ["one", "two", "three"]  # replaced, not duplicated
    assert not report.errors and "replaced whole" in report.warnings[0]


def test_a_tombstoned_fact_leaves_no_trace_in_its_neighbours(home_ready, embedder):
    s = home_ready
    s = s.__class__(**{**s.__dict__, "context_window": 2})
    capture(s, D1, "Had surgery for a hernia in 2024", "Likes jazz", "Plays chess")
    Indexer(s, embedder, context_window=2).run()
    append_tombstones(s.paths.state_dir, ["had surgery for a hernia in 2024"], reason="forget", timeout=5)
    Indexer(s, embedder, context_window=2).run()
    store = ReadStore.open(s.paths.index_dir, embedder.name, embedder.dim)
    texts = [r["search_text"] + r["content"] for r in store.rows()]
    assert len(texts) == 2 and not [t for t in texts if "hernia" in t]


def test_frontmatter_and_hidden_folders_are_not_content(home_ready, embedder):
    s = home_ready
    v = s.paths.vault_dir
    (v / "3_Personal" / "Health.md").write_text("---\ntitle: Health notes\nstale_after: 2027-01-01\n---\n\nAllergic to bees.\n")
    (v / ".trash").mkdir()
    (v / ".trash" / "old.md").write_text("deleted note\n")
    (v / ".obsidian").mkdir()
    (v / ".obsidian" / "x.md").write_text("app settings\n")
    Indexer(s, embedder).run()
    store = ReadStore.open(s.paths.index_dir, embedder.name, embedder.dim)
    [row] = store.rows()
    assert row["content"] == "Allergic to bees." and row["search_text"].startswith("Health notes")


def test_many_small_commits_are_compacted(home_ready, embedder, monkeypatch):
    from suzent_cli.index import indexer as indexer_mod

    s = home_ready
    monkeypatch.setattr(indexer_mod, "COMPACT_FRAGMENTS", 4)
    for i in range(6):
        capture(s, D1, f"fact number {i}", time=f"10:0{i}")
        report = Indexer(s, embedder).run(only=[s.paths.log_path(D1)])
    store = ReadStore.open(s.paths.index_dir, embedder.name, embedder.dim)
    assert store.fragments() <= 4
    assert store.count() == 6
    assert report.fragments_compacted is None or report.fragments_compacted[1] < report.fragments_compacted[0]


def test_known_facts_for_extraction_come_from_full_text_search(home_ready, embedder):
    from suzent_cli.capture.known import known_facts_for

    s = home_ready
    capture(s, D1, "Drinks oolong tea every morning", "Lives in Oslo")
    Indexer(s, embedder).run()
    assert known_facts_for(s)("what tea do I drink")[0] == "Drinks oolong tea every morning"


def test_a_partial_pass_does_not_mark_new_tombstones_as_applied(home_ready, embedder):
    s = home_ready
    capture(s, D1, "forget me")
    capture(s, D2, "other day")
    Indexer(s, embedder).run()
    append_tombstones(s.paths.state_dir, ["forget me"], reason="forget", timeout=5)
    Indexer(s, embedder).run(only=[s.paths.log_path(D2)])  # e.g. capture --index into another day
    assert "forget me" in [r[2] for r in rows(s, embedder)]
    Indexer(s, embedder).run()
    assert [r[2] for r in rows(s, embedder)] == ["other day"]


def test_a_pass_killed_between_batches_keeps_the_committed_batch_and_the_next_pass_does_only_the_rest(
        home_ready, embedder, monkeypatch):
    """Several files per commit (BATCH_TEXTS): a pass whose second commit fails leaves the first batch's rows and
    names exactly its files in the state; the next pass embeds only the other files and converges."""
    from suzent_cli.index import indexer as indexer_mod

    s = home_ready
    days = [dt.date(2026, 6, d) for d in range(1, 7)]
    for n, day in enumerate(days):
        capture(s, day, f"fact {n} a", f"fact {n} b")  # 2 rows a file
    monkeypatch.setattr(indexer_mod, "BATCH_TEXTS", 4)  # 2 files a batch
    real, calls = TableWriter.commit, []

    def second_fails(self, rows_, delete_where):
        calls.append(len(rows_["id"]))
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed mid-pass: lance never saw this commit
        return real(self, rows_, delete_where)

    monkeypatch.setattr(TableWriter, "commit", second_fails)
    with pytest.raises(KeyboardInterrupt):
        Indexer(s, embedder).run()
    monkeypatch.setattr(TableWriter, "commit", real)
    assert calls == [4, 4]  # one commit per batch of two files, not one per file
    state = json.loads((s.paths.index_dir / STATE_FILE).read_text())
    first = {f"archive:{d.isoformat()}.md" for d in days[:2]}
    assert set(state["files"]) == first and state["rows"] == 4
    assert {r[0] for r in rows(s, embedder)} == first
    counting = CountingEmbedder()
    report = Indexer(s, counting).run()
    assert counting.texts == 8 and report.rows_added == 8 and report.rows_removed == 0
    assert [r[2] for r in rows(s, embedder)] == sorted(f"fact {n} {x}" for n in range(6) for x in "ab")


def test_commit_takes_columns_and_refuses_a_vector_of_another_width(home_ready, embedder):
    """The indexer hands commit() columns (vectors as one float array); a bad batch commits nothing."""
    import numpy as np

    from suzent_cli.index.store import archival_schema, arrow_rows

    s = home_ready
    capture(s, D1, "one")
    Indexer(s, embedder).run()
    schema = archival_schema(embedder.dim, embedder.name)
    stamp = dt.datetime(2026, 6, 1, 10, tzinfo=dt.UTC)
    vecs = np.eye(2, embedder.dim, dtype=np.float64)
    columns = {"id": ["a", "b"], "content": ["x", "y"], "vector": vecs, "created_at": [stamp, stamp],
               "source": ["archive:x.md"] * 2, "locator": [1, 2]}
    dicts = [{"id": i, "content": c, "vector": v.tolist(), "created_at": stamp, "source": "archive:x.md",
              "locator": loc} for i, c, v, loc in zip(["a", "b"], ["x", "y"], vecs, [1, 2], strict=True)]
    assert arrow_rows(columns, schema).equals(arrow_rows(dicts, schema))
    store = TableWriter.open_or_create(s.paths.index_dir, embedder.name, embedder.dim)
    with pytest.raises(ValueError, match="width"):
        store.commit({**columns, "vector": np.ones((2, embedder.dim + 1))}, "source = 'archive:2026-06-01.md'")
    assert [r[2] for r in rows(s, embedder)] == ["one"]  # neither added nor deleted
    assert store.commit(columns, "source = 'archive:2026-06-01.md'") == (2, 1)
    assert [r[2] for r in rows(s, embedder)] == ["x", "y"]
