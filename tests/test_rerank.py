"""Re-ranking the fused candidates by the fact's own text (suzent_cli.index.rerank), with the hash embedder."""

from __future__ import annotations

import datetime as dt

import pytest

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.index import rerank
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import HashEmbedder
from suzent_cli.index.store import ReadStore
from suzent_cli.recall import search


def test_content_similarity_is_min_max_normalized_over_the_candidates():
    emb = HashEmbedder(256)
    sims = rerank.content_similarity("adopted puppy", [("same", "adopted puppy"), ("half", "adopted a cat"),
                                                        ("none", "tax forms are due")], emb)
    assert sims["same"] == pytest.approx(1.0)
    assert sims["none"] == pytest.approx(0.0)
    assert 0.0 < sims["half"] < 1.0
    assert rerank.content_similarity("anything", [], emb) == {}
    assert rerank.content_similarity("x", [("a", "same"), ("b", "same")], emb) == {"a": 1.0, "b": 1.0}


def test_content_run_rescores_only_the_top_candidates_and_fetches_rows_a_neighbour_brought():
    emb = HashEmbedder(256)
    rows = {"r1": {"id": "r1", "content": "the puppy is called Rex"}, "r3": {"id": "r3", "content": "puppy food"}}
    scores = {"r1": 0.9, "r2": 0.8, "r3": 0.1, "r4": 0.7}
    asked: list[list[str]] = []

    def fetch(ids):
        asked.append(sorted(ids))
        return [{"id": "r2", "content": "what is the puppy called?"}]  # r4: gone from the store, not found

    out = rerank.content_run("puppy called", scores, rows, emb, fetch, top=3)
    assert asked == [["r2", "r4"]]
    assert set(out) == {"r1", "r2"}          # r3 is below the top 3; r4 could not be read: left as it was
    assert "r2" in rows                      # the fetched row is kept for the caller
    assert rerank.content_run("puppy", scores, rows, None, fetch, top=3) == {}  # no embedder (fts mode): no stage
    assert rerank.content_run("puppy", scores, rows, emb, fetch, top=0) == {}  # off (the default setting)


def _home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[index]\ncontext_window = 2\n", encoding="utf-8")
    return resolve_settings(home=home, today="2026-06-10", env={})


def test_a_statement_outranks_the_reaction_that_only_inherits_its_words_from_context(tmp_path):
    """With context in the embedding text, a short reaction after a statement is embedded with the statement's
    words; the re-ranking run compares the facts themselves, so the statement gets the larger share."""
    emb = HashEmbedder(64)
    s = _home(tmp_path)
    day = dt.date(2026, 5, 1)
    write_facts(s, [Fact("Melanie: I painted a horse and a lake sunrise last year")], day=day, time="10:00",
                session="statement")
    write_facts(s, [Fact("Caroline: Wow, Melanie, that is lovely! Tell me more?")], day=day, time="10:01",
                session="reaction")
    write_facts(s, [Fact("Caroline: I went to a support group yesterday")], day=dt.date(2026, 5, 8), time="09:00",
                session="other")
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    hits = search(store, emb, "What has Melanie painted?", mode="hybrid", limit=3, rerank_top=rerank.TOP)
    by = {h.session: h for h in hits}
    assert hits[0].session == "statement"
    assert by["statement"].runs[rerank.RUN] == pytest.approx(1.0)
    assert by["reaction"].runs[rerank.RUN] < by["statement"].runs[rerank.RUN]
    # The share is part of the relevance, and not counted as a neighbour's.
    statement = by["statement"]
    weighted = sum(w * statement.runs.get(name, 0.0) for name, w in
                   {"fts_content": 0.4, "fts": 0.3, "vector": 0.3, rerank.RUN: rerank.WEIGHT}.items())
    assert statement.relevance == pytest.approx(weighted + statement.neighbour + statement.date_boost
                                                + statement.subject_boost, abs=1e-6)  # the subject step (3d)


def test_fts_mode_has_no_rerank_run(tmp_path):
    emb = HashEmbedder(64)
    s = _home(tmp_path)
    write_facts(s, [Fact("I painted a horse")], day=dt.date(2026, 5, 1), time="10:00", session="a")
    run_index(s, embedder=emb)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    hits = search(store, emb, "painted horse", mode="fts", limit=3, rerank_top=rerank.TOP)
    assert hits and all(rerank.RUN not in h.runs for h in hits)


def test_the_stage_is_off_by_default_and_the_setting_turns_it_on(tmp_path):
    """``recall.rerank`` (default 0): each recall would encode that many facts, ~0.5 s for 15 on one core with the
    bundled model (BENCHMARKS.md), so it is opt-in; ``SUZENT_RERANK`` / config.toml turn it on."""
    import dataclasses

    from suzent_cli.recall import recall

    emb = HashEmbedder(64)
    s = _home(tmp_path)
    write_facts(s, [Fact("I painted a horse"), Fact("I painted a lake")], day=dt.date(2026, 5, 1), time="10:00",
                session="a")
    run_index(s, embedder=emb)
    assert s.rerank_top == 0
    hits = recall(s, emb, "painted horse", mode="hybrid", limit=3, log=False)
    assert hits and all(rerank.RUN not in h.runs for h in hits)
    on = dataclasses.replace(s, rerank_top=15)
    hits = recall(on, emb, "painted horse", mode="hybrid", limit=3, log=False)
    assert hits and all(rerank.RUN in h.runs for h in hits)
    from suzent_cli.config import check_value, setting
    from suzent_cli.errors import ConfigInvalid

    row = setting("recall.rerank")
    assert check_value(row, resolve_settings(home=s.paths.home, env={"SUZENT_RERANK": "15"}).rerank_top, "x") == 15
    bad = dataclasses.replace(s, rerank_top="many")
    with pytest.raises(ConfigInvalid):
        recall(bad, emb, "painted horse", mode="hybrid", limit=3, log=False)
