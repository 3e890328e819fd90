"""The resident first stage of a kept store (issue 25, item 5: ``ReadStore.keep_resident``) and recall's narrow
candidate reads.

* A store kept resident ranks exactly as lance does (exact vector search on both sides below the ANN threshold,
  above it exact in numpy;
  BM25 from memory, tests/test_bm25_resident.py) while lance's full-text index covers every row.
* The copy follows the table version by version (checked against a copy read whole at that version: after a
  commit lance scores BM25 over its index's older statistics, which the copy does not reproduce, see
  suzent_cli/index/bm25.py): a commit between two recalls shows the new row (at once, through
  lance, while the copy catches up; then through the copy); a row deleted and another added leave no stale
  position, address or vector behind; a version is never answered from an older copy.
* Too large a table keeps no copy; lance answers.
"""

from __future__ import annotations

import datetime as dt

import pytest
from test_vector_index import WORDS, _exact, _home

from conftest import CountingEmbedder
from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.index import store as store_mod
from suzent_cli.index.api import run_index
from suzent_cli.index.store import CANDIDATE_COLUMNS, ReadStore
from suzent_cli.recall import search

QUERIES = ["tea garden shed", "lunch harbour station", "cello piano spring", "oat milk vegetarian",
           "lunch on 3 June, 2026", "dentist doctor monday", "berlin porto lisbon train",
           "when was the dentist appointment"]  # the last asks when: the when step (recall.when_boost) on both


def _same(a, b) -> None:
    """The same hits with the same scores, in the same order up to ties: lance and numpy compute a cosine in
    float32 with other summation orders, so two rows whose scores are equal on one side may differ in the 8th digit
    on the other (hash vectors tie often) and swap places. Order is compared by score rounded to 5 digits."""
    def key(h):
        return (-round(h.score, 5), h.id)

    assert len(a) == len(b)
    assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)
    a, b = sorted(a, key=key), sorted(b, key=key)
    assert [h.id for h in a] == [h.id for h in b]
    assert [h.content for h in a] == [h.content for h in b]
    assert [h.neighbour for h in a] == pytest.approx([h.neighbour for h in b], abs=1e-5)
    assert [h.when_boost for h in a] == [h.when_boost for h in b]


def _kept(s, emb) -> ReadStore:
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert store.keep_resident(wait=True)
    return store


def _as_read_whole(store: ReadStore, s, emb, queries, limit: int) -> None:
    """``store``'s copy, followed version by version, ranks as a copy read whole at its version does (every mode),
    and its vector run as lance's."""
    fresh = _kept(s, emb)
    assert fresh.version == store.version
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    for q in queries:
        for mode in ("hybrid", "fts"):
            _same(search(store, emb, q, mode=mode, limit=limit, today=s.today),
                  search(fresh, emb, q, mode=mode, limit=limit, today=s.today))
        _same(search(store, emb, q, mode="vector", limit=limit, today=s.today),
              search(plain, emb, q, mode="vector", limit=limit, today=s.today))


def test_a_resident_store_ranks_as_lance_does(tmp_path):
    # 80 rows, under recall's pool of 100: every row is a vector candidate on both sides. (Over a larger table of
    # hash vectors, many rows tie at the pool's last distance, and lance and numpy keep different ones of them:
    # a tie only; on 100k rows the top 10 matched for every query, benchmarks/recall_floor.py.)
    s, emb = _home(tmp_path, days=2, per_day=40), CountingEmbedder()
    run_index(s, embedder=emb)
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    kept = _kept(s, emb)
    assert kept._resident is not None and kept._resident.rows == plain.count()
    for mode in ("hybrid", "vector", "fts"):
        for q in QUERIES:
            _same(search(kept, emb, q, mode=mode, limit=30, today=s.today),
                  search(plain, emb, q, mode=mode, limit=30, today=s.today))
    # the vector search itself: same rows, same order, same distances
    vector = emb.encode(["garden shed roof"])[0]
    mine = kept.vector_search(vector, 20, columns=CANDIDATE_COLUMNS)
    theirs = plain.vector_search(vector, 20, columns=CANDIDATE_COLUMNS)
    assert [r["_distance"] for r in mine] == pytest.approx([r["_distance"] for r in theirs], abs=1e-5)
    assert sorted((round(r["_distance"], 5), r["id"], r["_rowid"]) for r in mine) == \
        sorted((round(r["_distance"], 5), r["id"], r["_rowid"]) for r in theirs)
    assert kept.rows_at([r["_rowid"] for r in mine]) == plain.rows_at([r["_rowid"] for r in mine])


def test_a_commit_between_two_recalls_shows_the_new_row(tmp_path):
    s, emb = _home(tmp_path, days=2, per_day=30), CountingEmbedder()
    run_index(s, embedder=emb)
    store = _kept(s, emb)
    before = store._resident
    assert not [h for h in search(store, emb, "quokka zanzibar", mode="fts", limit=5) if "quokka" in h.content]
    archive.append_entry(s.paths.archive_dir, dt.date(2026, 6, 1), "18:00", "late",
                         [Fact("quokka zanzibar first"), Fact("quokka zanzibar second")], timeout=5)
    run_index(s, embedder=emb)
    store.refresh()  # what the server's store does before a request after a commit
    # the copy lags: this recall is answered by lance (the new version), never by the older copy
    hits = search(store, emb, "quokka zanzibar first", mode="hybrid", limit=3, today=s.today)
    assert {h.content for h in hits[:2]} == {"quokka zanzibar first", "quokka zanzibar second"}
    store.settle_resident()
    after = store._resident
    assert after is not None and after.version == store.version and after.rows == store.count()
    assert after.segments[0] is before.segments[0]  # the rows it held are kept, only the new ones were read
    again = search(store, emb, "quokka zanzibar first", mode="hybrid", limit=3, today=s.today)
    assert [h.content for h in again[:2]] == [h.content for h in hits[:2]]
    _as_read_whole(store, s, emb, ["quokka zanzibar first"], 3)
    near = store.neighbourhood([(again[0].id, again[0].source, again[0].locator)])
    assert {h.id for h in again[:2]} <= {p["id"] for p in near}  # the two new rows are neighbours


def test_no_stale_position_after_delete_then_add(tmp_path):
    s, emb = _home(tmp_path, days=1, per_day=12), CountingEmbedder()
    run_index(s, embedder=emb)
    store = _kept(s, emb)
    rows = {r["id"]: r for r in store.rows(["id", "content", "source", "locator"])}
    victim = sorted(rows.values(), key=lambda r: r["locator"])[-3]  # a row with rows after it
    token = victim["content"].split()[-1]  # "item<n>": one row's own
    old_address = store.fts_search(token, 1, column="content", columns=CANDIDATE_COLUMNS)[0]
    assert old_address["id"] == victim["id"] and store.rows_at([old_address["_rowid"]])[0]["id"] == victim["id"]
    log = s.paths.archive_dir / victim["source"].split(":", 1)[1]
    text = log.read_text(encoding="utf-8")
    assert text.count(victim["content"]) == 1
    log.write_text(text.replace(victim["content"], "walrus kayak replaced"), encoding="utf-8")  # delete + add
    report = run_index(s, embedder=emb)
    assert report.rows_added >= 1 and not report.errors
    store.refresh()
    store.settle_resident()
    resident = store._resident
    assert resident is not None and resident.version == store.version
    assert resident.rows == store.count()
    ids = {r["id"] for r in store.rows(["id"])}
    assert victim["id"] not in ids
    # the deleted row: no address, no vector hit, no neighbour position
    assert store.rows_at([old_address["_rowid"]]) == []
    found = store.vector_search(emb.encode([victim["content"]])[0], 50, columns=CANDIDATE_COLUMNS)
    assert victim["id"] not in {r["id"] for r in found}
    new = next(r for r in store.rows(["id", "content", "source", "locator"]) if r["content"] == "walrus kayak replaced")
    near = store.neighbourhood([(new["id"], new["source"], new["locator"])])
    assert victim["id"] not in {p["id"] for p in near} and new["id"] in {p["id"] for p in near}
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert near == plain._file_positions([(new["id"], new["source"], new["locator"])]).around(
        [(new["id"], new["source"], new["locator"])])
    _as_read_whole(store, s, emb, ("walrus kayak", *QUERIES[:3]), 20)


def test_many_versions_are_merged_into_few_segments(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "RESIDENT_SEGMENTS", 2)
    s, emb = _home(tmp_path, days=1, per_day=10), CountingEmbedder()
    run_index(s, embedder=emb)
    store = _kept(s, emb)
    for n in range(4):
        archive.append_entry(s.paths.archive_dir, dt.date(2026, 6, 2), f"10:0{n}", f"t{n}",
                             [Fact(f"{WORDS[n]} {WORDS[n + 5]} added {n}")], timeout=5)
        run_index(s, embedder=emb)
        store.refresh()
        store.settle_resident()
        assert store._resident.version == store.version and len(store._resident.segments) <= 2
        assert store._resident.rows == store.count()
        _as_read_whole(store, s, emb, (f"{WORDS[n]} added", QUERIES[n]), 15)


def test_a_table_over_the_budget_keeps_no_copy(tmp_path):
    s, emb = _home(tmp_path, days=1, per_day=10), CountingEmbedder()
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert not store.keep_resident(max_bytes=10 * emb.dim * 4 - 1, wait=True)  # 10 rows need 10 * dim * 4 bytes
    assert store._resident is None
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    _same(search(store, emb, "tea garden", limit=5), search(plain, emb, "tea garden", limit=5))


def test_candidates_are_read_narrow_and_the_hits_whole(tmp_path):
    """The runs read CANDIDATE_COLUMNS only; the hits still carry every result column (metadata, importance)."""
    s, emb = _home(tmp_path, days=1, per_day=20), CountingEmbedder()
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    row = store.fts_search("tea", 1, columns=CANDIDATE_COLUMNS)[0]
    assert set(row) == {*CANDIDATE_COLUMNS, "_score", "_rowid"}
    row = store.vector_search(emb.encode(["tea"])[0], 1, columns=CANDIDATE_COLUMNS)[0]
    assert set(row) == {*CANDIDATE_COLUMNS, "_distance", "_rowid"}
    hits = search(store, emb, "tea garden", limit=5, today=s.today)
    assert hits and all(h.source_type == "archive_log" and h.date and h.source_file for h in hits)


def test_with_an_ann_index_the_copy_still_searches_exactly(tmp_path, monkeypatch):
    """An ANN index on the table: the copy holds the vectors all the same and searches them exactly (cheaper than
    lance's ANN at 100k rows, BENCHMARKS.md); ``exact_vectors=False`` leaves vector search to lance."""
    from suzent_cli.index import indexer as indexer_mod

    monkeypatch.setattr(indexer_mod, "ANN_MIN_ROWS", 200)
    s, emb = _home(tmp_path), CountingEmbedder()
    run_index(s, embedder=emb)
    kept = _kept(s, emb)
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert kept.vector_index_kind() is not None
    assert kept._resident.vectors and all(seg.matrix is not None for seg in kept._resident.segments)
    vector = emb.encode(["garden shed roof"])[0]
    mine = kept.vector_search(vector, 20, columns=CANDIDATE_COLUMNS)
    want = _exact(kept, vector, 20)
    assert [r["_distance"] for r in mine] == pytest.approx([d for _, d in want], abs=1e-5)
    assert {r["id"] for r in mine if r["_distance"] < want[-1][1] - 1e-5} == \
        {rid for rid, d in want if d < want[-1][1] - 1e-5}
    lance_ann = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert lance_ann.keep_resident(wait=True, exact_vectors=False)
    assert not lance_ann._resident.vectors and all(seg.matrix is None for seg in lance_ann._resident.segments)
    assert lance_ann.vector_search(vector, 20, columns=CANDIDATE_COLUMNS) == \
        plain.vector_search(vector, 20, columns=CANDIDATE_COLUMNS)
    for q in QUERIES:  # the vector run from lance on both sides; BM25 from memory (float32, another summation order)
        _same(search(lance_ann, emb, q, limit=20, today=s.today), search(plain, emb, q, limit=20, today=s.today))


def test_the_planted_screen_runs_for_the_returned_hits_only(tmp_path, monkeypatch):
    from suzent_cli import recall as recall_mod

    s, emb = _home(tmp_path, days=1, per_day=30), CountingEmbedder()
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    screened = []
    real = recall_mod.planted
    monkeypatch.setattr(recall_mod, "planted", lambda text, *a, **k: screened.append(text) or real(text, *a, **k))
    hits = search(store, emb, "tea garden lunch", limit=3, today=s.today)
    assert len(hits) == 3 and sorted(screened) == sorted(h.text for h in hits)
    assert all(h.planted is None for h in hits)  # screened: none reads as an instruction


def test_a_version_without_a_copy_is_not_read_again_on_every_query(tmp_path, monkeypatch):
    s, emb = _home(tmp_path, days=1, per_day=10), CountingEmbedder()
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    reads = []
    real = ReadStore._read_resident
    monkeypatch.setattr(ReadStore, "_read_resident", lambda self, version: reads.append(version) or real(self, version))
    assert not store.keep_resident(max_bytes=1, wait=True)  # over the budget
    for q in QUERIES[:3]:
        search(store, emb, q, limit=5, today=s.today)
    store.settle_resident()
    assert reads == [store.version]
