"""BM25 from memory (suzent_cli/index/bm25.py), the first stage of a kept store's text runs, against lance's
full-text search on real LanceDB tables.

* Tokens: lance's own analyzer, word by word (stop words, stemming, ASCII folding, the 40-byte limit, non-ASCII).
* Scores: on a freshly built index the same rows, the same order up to ties, the same scores (float32); after an
  add, a delete and a tombstone (lance then scores over its index's older statistics) the same top rows and
  scores within 15 % (13 % seen on this small table), and exact again once the index is rebuilt.
* A table over the cap, or an index with options the copy does not reproduce: lance answers.
"""

from __future__ import annotations

import datetime as dt

import lancedb
import pytest
from test_vector_index import WORDS, _home

from conftest import CountingEmbedder
from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.index import bm25
from suzent_cli.index import store as store_mod
from suzent_cli.index.api import reindex_files, run_index
from suzent_cli.index.store import CANDIDATE_COLUMNS, FTS_COLUMNS, ReadStore, fts_options, fts_tokenizer
from suzent_cli.vault.state.tombstones import append_tombstones

OPTIONS = {"language": "English", "max_token_length": 40, "lower_case": True, "stem": True,
           "remove_stop_words": True, "custom_stop_words": None, "ascii_folding": True}
TEXTS = [
    "The user's being happier drinking coffees at Café Zürich!", "running runs ran generously, x_y and a1b2",
    "a" * 39 + " " + "b" * 40 + " " + "é" * 20 + " " + "1" * 39 + " " + "2" * 40, "thé their theirs THEIR Their",
    "ΟΔΟΣ 東京 straße naïve résumé", "Prefers oat milk in coffee; previously: soy (since 2024-01-02)", "", "   ",
    "it is what it is: s t y d ll re ve", "e-mail co-op o'clock 3.14 1,000 #tag @name under_score CamelCase",
]
QUERIES = ["tea garden shed", "lunch harbour station", "cello piano spring", "oat milk vegetarian",
           "dentist doctor monday", "berlin porto lisbon train", "tea tea tea", "keyboard", "winter lessons neovim",
           "item3 item17", "running the marathon", "gardens sheds roofs", "nothing-like-this zzz"]


def _tokens(analyzer: bm25.Analyzer, text: str) -> list[str]:
    ids = analyzer.ids(text)
    names = {tid: token for token, tid in analyzer.vocabulary.items()}
    return [names[tid] for tid in ids]


def test_tokens_are_lances_word_by_word():
    analyzer = bm25.Analyzer(fts_tokenizer(OPTIONS), None, 40)
    for text in TEXTS + [" ".join(TEXTS)] + QUERIES:
        want = [t.text for t in lancedb.tokenize(text, **OPTIONS)]
        assert _tokens(analyzer, text) == want, text
        assert analyzer.query(text) == [analyzer.vocabulary.get(t) for t in want]
    # cached words come back the same (the second pass reads the cache only)
    for text in TEXTS:
        assert _tokens(analyzer, text) == [t.text for t in lancedb.tokenize(text, **OPTIONS)]


def test_index_options_the_copy_cannot_reproduce_are_left_to_lance():
    details = {"lance_tokenizer": "text", "base_tokenizer": "simple", **OPTIONS, "with_position": False,
               "split_identifiers": False, "split_on_numerics": False, "preserve_original": False,
               "index_operators": False}
    assert fts_options(details) == OPTIONS
    assert fts_options({**details, "base_tokenizer": "ngram"}) is None
    assert fts_options({**details, "split_identifiers": True}) is None
    assert fts_options({**details, "lance_tokenizer": "json"}) is None
    assert fts_options(None) is None


def _same_ranking(mine: list[dict], theirs: list[dict], rel: float) -> None:
    """The same top rows with scores within ``rel`` of each other: every row one side ranks clear of the last row's
    score (by more than the scores may differ, ``2 * rel``) is on the other side too, at the same score within
    ``rel``; rows near the cut may differ (lance keeps any of a tie), and so may the order of near-equal scores."""
    assert len(mine) == len(theirs)
    if not theirs:
        return
    last = min(theirs[-1]["_score"], mine[-1]["_score"])
    mine_by, theirs_by = {r["id"]: r["_score"] for r in mine}, {r["id"]: r["_score"] for r in theirs}
    for one, other in ((mine_by, theirs_by), (theirs_by, mine_by)):
        for rid, score in one.items():
            if score > last * (1 + 2 * rel) + 1e-6:
                assert rid in other and other[rid] == pytest.approx(score, rel=rel, abs=1e-6)


def _compare(kept: ReadStore, plain: ReadStore, rel: float, limit: int = 25) -> None:
    compared = 0
    for q in QUERIES:
        for column in FTS_COLUMNS:
            mine = kept.fts_search(q, limit, column=column, columns=CANDIDATE_COLUMNS)
            theirs = plain.fts_search(q, limit, column=column, columns=CANDIDATE_COLUMNS)
            _same_ranking(mine, theirs, rel)
            compared += bool(theirs)
    assert compared >= 2 * (len(QUERIES) - 1)  # every query but the last matched rows in both fields


def _kept(s, emb) -> ReadStore:
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert store.keep_resident(wait=True)
    assert set(store._resident.fts) == set(FTS_COLUMNS)
    return store


def test_bm25_from_memory_is_lances_on_a_fresh_index(tmp_path, monkeypatch):
    s, emb = _home(tmp_path, days=3, per_day=60), CountingEmbedder()
    run_index(s, embedder=emb)
    kept, plain = _kept(s, emb), ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    _compare(kept, plain, rel=1e-5)
    _compare(kept, plain, rel=1e-5, limit=200)  # every matching row (180 rows)
    # the hits' other columns come from memory when asked for
    mine = kept.fts_search("tea garden", 5)
    stored = {r["id"]: r for r in plain.rows_by_id([r["id"] for r in mine])}
    assert [{k: v for k, v in r.items() if not k.startswith("_")} for r in mine] == [stored[r["id"]] for r in mine]
    # and it is the copy that answered
    monkeypatch.setattr(store_mod._Resident, "bm25", lambda *a, **k: pytest.fail("lance should answer"))
    with pytest.raises(pytest.fail.Exception):
        kept.fts_search("tea", 5, column="content")
    assert kept.fts_search("tea", 5, column="content", where="source_date >= '2026-06-02'")  # a filter: lance


def test_after_an_add_a_delete_and_a_tombstone(tmp_path):
    s, emb = _home(tmp_path, days=3, per_day=60), CountingEmbedder()
    run_index(s, embedder=emb)
    kept, plain = _kept(s, emb), ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    # an add (rows lance's index does not cover yet), a delete (a line rewritten), a tombstone (a line retired)
    archive.append_entry(s.paths.archive_dir, dt.date(2026, 6, 3), "18:00", "late",
                         [Fact(f"{WORDS[i]} {WORDS[i + 1]} tea added {i}") for i in range(0, 12, 2)], timeout=5)
    log = s.paths.archive_dir / "2026-06-01.md"
    rows = sorted((r for r in kept.rows(["id", "content", "source", "locator"]) if r["source"].endswith(log.name)),
                  key=lambda r: r["locator"])
    victim, retired = rows[5], rows[9]
    log.write_text(log.read_text(encoding="utf-8").replace(victim["content"], "walrus kayak tea"), encoding="utf-8")
    run_index(s, embedder=emb)
    append_tombstones(s.paths.state_dir, [retired["content"]], reason="forget", timeout=5)
    reindex_files(s, [log], embedder=emb)
    for store in (kept, plain):
        store.refresh()
    kept.settle_resident()
    assert kept._resident.version == kept.version and kept._resident.rows == kept.count()
    ids = {r["id"] for r in kept.rows(["id"])}
    assert victim["id"] not in ids and retired["id"] not in ids
    for column in FTS_COLUMNS:
        found = {r["id"] for r in kept.fts_search(retired["content"], 200, column=column, columns=["id"])}
        assert retired["id"] not in found and victim["id"] not in found
    # lance scores over its index's statistics (deleted rows still counted, added rows outside it): up to ~13 % on this small table
    _compare(kept, plain, rel=0.15)
    run_index(s, embedder=emb, full=True)  # a full pass rebuilds the full-text indexes: exact again
    for store in (kept, plain):
        store.refresh()
    kept.settle_resident()
    _compare(kept, plain, rel=1e-5)


def test_over_the_cap_lance_answers(tmp_path, monkeypatch):
    s, emb = _home(tmp_path, days=1, per_day=20), CountingEmbedder()
    run_index(s, embedder=emb)
    store, plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim), ReadStore.open(s.paths.index_dir, emb.name,
                                                                                         emb.dim)
    assert not store.keep_resident(max_bytes=20 * emb.dim * 4 - 1, wait=True)
    monkeypatch.setattr(store_mod._Resident, "bm25", lambda *a, **k: pytest.fail("no copy: lance answers"))
    for q in QUERIES[:4]:
        assert store.fts_search(q, 10, column="content") == plain.fts_search(q, 10, column="content")


def test_merged_segments_score_as_one_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "RESIDENT_SEGMENTS", 2)
    s, emb = _home(tmp_path, days=1, per_day=30), CountingEmbedder()
    run_index(s, embedder=emb)
    kept = _kept(s, emb)
    log = s.paths.archive_dir / "2026-06-01.md"
    for n in range(4):
        archive.append_entry(s.paths.archive_dir, dt.date(2026, 6, 2), f"10:0{n}", f"t{n}",
                             [Fact(f"{WORDS[n]} tea {WORDS[n + 5]} added {n}")], timeout=5)
        if n == 2:  # a delete among the adds: a masked row in a merged segment
            first = log.read_text(encoding="utf-8")
            line = next(r["content"] for r in kept.rows(["content", "source"]) if r["source"].endswith(log.name))
            log.write_text(first.replace(line, "walrus tea kayak"), encoding="utf-8")
        run_index(s, embedder=emb)
        kept.refresh()
        kept.settle_resident()
        assert len(kept._resident.segments) <= 2
        whole = _kept(s, emb)
        for q in (*QUERIES, "tea added", "walrus"):
            for column in FTS_COLUMNS:
                mine = kept.fts_search(q, 50, column=column, columns=CANDIDATE_COLUMNS)
                theirs = whole.fts_search(q, 50, column=column, columns=CANDIDATE_COLUMNS)
                assert [(r["id"], r["_rowid"]) for r in mine] == [(r["id"], r["_rowid"]) for r in theirs]
                assert [r["_score"] for r in mine] == pytest.approx([r["_score"] for r in theirs], rel=1e-6)


def test_a_segment_given_rows_out_of_address_order_sorts_them_with_their_vectors_and_postings():
    import numpy as np
    import pyarrow as pa

    analyzer = bm25.Analyzer(fts_tokenizer(OPTIONS), None, 40)
    texts = ["tea garden", "coffee shed", "tea tea roof", "harbour station"]
    addresses = [7, 2, 9, 4]
    vectors = np.eye(4, dtype=np.float32) * 3
    table = pa.table({"id": [f"r{a}" for a in addresses], "content": texts, "source": ["f"] * 4,
                      "locator": [1, 2, 3, 4], "source_date": [None] * 4, "_rowid": pa.array(addresses, pa.uint64())})
    segment = store_mod._Segment(table, 4, postings={"content": bm25.Postings.build(texts, analyzer)},
                                 matrix=vectors / 3)
    assert segment.row_ids.tolist() == [2, 4, 7, 9]
    assert segment.columns["id"] == ["r2", "r4", "r7", "r9"]
    assert segment.matrix.argmax(axis=1).tolist() == [1, 3, 0, 2]  # each row kept its own vector
    rows, counts = segment.postings["content"].of(analyzer.vocabulary["tea"])
    assert [segment.columns["id"][r] for r in rows] == ["r7", "r9"] and counts.tolist() == [1, 2]
    assert segment.postings["content"].lengths.tolist() == [2, 2, 2, 3]


def test_a_failing_first_stage_leaves_bm25_to_lance(tmp_path, monkeypatch):
    s, emb = _home(tmp_path, days=1, per_day=20), CountingEmbedder()
    run_index(s, embedder=emb)
    kept, plain = _kept(s, emb), ReadStore.open(s.paths.index_dir, emb.name, emb.dim)

    def broken(*args, **kwargs):
        raise ValueError("tokenizer refused the text")

    monkeypatch.setattr(store_mod._Resident, "bm25", broken)
    for q in QUERIES[:4]:
        assert kept.fts_search(q, 10, column="content") == plain.fts_search(q, 10, column="content")
    # a lancedb without its tokenizer: the copy is made all the same, without BM25 (lance answers it)
    monkeypatch.setattr(store_mod._lancedb(), "tokenize", None)
    again = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert again.keep_resident(wait=True) and again._resident.fts == {} and again._resident.vectors


def test_a_resident_read_gives_the_freed_heap_back(tmp_path, monkeypatch):
    """Reading the copy frees a few hundred MB of scan batches at 100k rows; glibc keeps freed heap mapped unless
    asked (BENCHMARKS.md, issue 25, item 5: +740 MB RSS without, +420 MB with). Every read, failed or not, ends by
    giving it back."""
    calls = []
    monkeypatch.setattr(store_mod, "release_freed_heap", lambda: calls.append(1))
    s, emb = _home(tmp_path, days=1, per_day=20), CountingEmbedder()
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert store.keep_resident(wait=True)
    assert calls, "the read did not release the freed heap"

