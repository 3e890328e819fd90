"""Recall ranking internals: score fusion, query dates, neighbouring-fact context, field weighting."""

from __future__ import annotations

import datetime as dt

import pytest

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.recall import normalize_scores, query_dates, search, spread_to_neighbours


def test_normalize_scores_min_max():
    assert normalize_scores([]) == []
    assert normalize_scores([3.0]) == [1.0]
    assert normalize_scores([2.0, 2.0]) == [1.0, 1.0]
    pool = [float(x) for x in range(20, 8, -1)]  # a pool of 12: min-max
    assert normalize_scores(pool)[0] == 1.0 and normalize_scores(pool)[-1] == 0.0
    assert normalize_scores([4.0, 3.0, 2.0]) == [1.0, 0.75, 0.5]  # a pool of 3 has no meaningful worst: / best


@pytest.mark.parametrize("text, expected", [
    ("what did I buy on 1 February, 2023?", [(dt.date(2023, 2, 1), dt.date(2023, 2, 1))]),
    ("dinner on May 3rd, 2023", [(dt.date(2023, 5, 3), dt.date(2023, 5, 3))]),
    ("notes from 2024-06-30", [(dt.date(2024, 6, 30), dt.date(2024, 6, 30))]),
    ("the 3rd of Sept 2021", [(dt.date(2021, 9, 3), dt.date(2021, 9, 3))]),
    ("trips in March 2022", [(dt.date(2022, 3, 1), dt.date(2022, 3, 31))]),
    ("in February 2024", [(dt.date(2024, 2, 1), dt.date(2024, 2, 29))]),
    ("May I ask what happened last week?", []),
    ("2023-02-30 is not a day", []),
])
def test_query_dates(text, expected):
    assert query_dates(text) == expected


def test_spread_to_neighbours_uses_the_better_adjacent_row_of_the_same_file():
    positions = [("a", "archive:x.md", 3), ("b", "archive:x.md", 7), ("c", "archive:x.md", 11),
                 ("d", "archive:y.md", 3)]
    out = spread_to_neighbours({"a": 1.0, "c": 0.2, "d": 0.4}, positions, share=0.5)
    assert out["a"] == pytest.approx(1.0)          # its only neighbour b scores 0
    assert out["b"] == pytest.approx(0.5)          # max(a, c) * 0.5: surfaced though no run returned it
    assert out["c"] == pytest.approx(0.2)          # neighbour b had no score of its own
    assert out["d"] == pytest.approx(0.4)          # other file: a is not its neighbour


def _home(tmp_path, embedder, window=0):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"[index]\ncontext_window = {window}\n", encoding="utf-8")
    s = resolve_settings(home=home, today="2026-06-10", env={})
    return s


def _store(s, embedder):
    run_index(s, embedder=embedder)
    return ReadStore.open(s.paths.index_dir, embedder.name, embedder.dim)


def test_both_fts_indexes_are_built_and_content_matches_win(tmp_path, embedder):
    s = _home(tmp_path, embedder, window=1)
    write_facts(s, [Fact("We talked about the garden shed")], day=dt.date(2026, 6, 1), time="09:00", session="a")
    write_facts(s, [Fact("Alice is painting it blue")], day=dt.date(2026, 6, 1), time="09:01", session="b")
    write_facts(s, [Fact("The shed roof leaks")], day=dt.date(2026, 6, 2), time="09:00", session="c")
    store = _store(s, embedder)
    assert store.has_fts_index("search_text") and store.has_fts_index("content")
    hits = search(store, embedder, "shed", mode="fts", limit=3)
    # "b" only mentions the shed through its context (the fact before it): it ranks below both real matches.
    assert [h.session for h in hits][-1] == "b"
    assert {h.session for h in hits[:2]} == {"a", "c"}


def test_a_date_in_the_query_prefers_that_days_facts(tmp_path, embedder):
    s = _home(tmp_path, embedder)
    write_facts(s, [Fact("Lunch with Bob at the harbour")], day=dt.date(2026, 5, 1), time="12:00", session="may1")
    write_facts(s, [Fact("Lunch with Bob at the station")], day=dt.date(2026, 5, 2), time="12:00", session="may2")
    store = _store(s, embedder)
    for day, expected in (("1 May, 2026", "may1"), ("May 2, 2026", "may2")):
        hits = search(store, embedder, f"Where was lunch with Bob on {day}?", mode="hybrid", limit=2)
        assert hits[0].session == expected


def test_neighbour_of_a_strong_hit_is_recalled(tmp_path, embedder):
    s = _home(tmp_path, embedder)
    day = dt.date(2026, 5, 1)
    write_facts(s, [Fact("Which pottery class did you sign up for?")], day=day, time="10:00", session="q")
    write_facts(s, [Fact("The Thursday evening one, with Mira")], day=day, time="10:01", session="answer")
    write_facts(s, [Fact("Unrelated note about taxes")], day=dt.date(2026, 5, 9), time="10:00", session="x")
    store = _store(s, embedder)
    hits = search(store, embedder, "pottery class", mode="fts", limit=3)
    sessions = [h.session for h in hits]
    assert sessions[:2] == ["q", "answer"]
    assert hits[1].ranks == {}  # surfaced by neighbour context only
    assert "x" not in sessions


def test_a_log_row_and_the_claim_citing_it_are_one_hit():
    from suzent_cli.recall import Hit, collapse_cited

    def hit(i, content, source_type, source_file=None, locator=None):
        return Hit(id=str(i), content=content, score=1.0 - i / 10, source=None, source_type=source_type,
                   source_file=source_file, locator=locator, date=None, session=None, category=None, tags=[],
                   importance=0.5)

    hits = [hit(0, "- Likes tea (confirmed 3x, last 2026-06-02) · source: 2026-06-01.md:5", "notebook", "P.md", 0),
            hit(1, "Likes tea", "archive_log", "2026-06-01.md", 5),
            hit(2, "Likes jazz", "archive_log", "2026-06-01.md", 6),
            hit(3, "- Likes jazz (confirmed 1x, last 2026-06-01) · source: 2026-06-01.md:6", "notebook", "P.md", 1)]
    assert [h.id for h in collapse_cited(hits)] == ["0", "3"]  # the claim takes its log row's place
    assert collapse_cited(hits)[1].score == 0.8


@pytest.mark.parametrize("text, expected", [
    ("What inspired you?", True),
    ('Did she say "see you Tuesday?"', True),
    ("- Which editor? (confirmed 1x, last 2026-06-01) · source: 2026-06-01.md:3", True),  # markers aside
    ("I switched to neovim. Have you tried it?", True),
    ("Is it? I think the shed roof leaks.", False),
    ("The shed roof leaks.", False),
    ("", False),
])
def test_asks_is_a_row_that_ends_with_a_question(text, expected):
    from suzent_cli.recall import asks

    assert asks(text) is expected


def test_a_question_row_ranks_by_a_share_of_its_relevance(tmp_path, embedder, monkeypatch):
    from suzent_cli import recall

    s = _home(tmp_path, embedder)
    write_facts(s, [Fact("Which pottery class did you sign up for?")], day=dt.date(2026, 5, 1), time="10:00",
                session="question")
    write_facts(s, [Fact("I signed up for the Thursday pottery class")], day=dt.date(2026, 5, 9), time="10:00",
                session="statement")
    store = _store(s, embedder)

    def relevance():
        hits = search(store, embedder, "pottery class sign up", mode="hybrid", limit=2)
        return {h.session: (h.relevance, h.asks) for h in hits}

    monkeypatch.setattr(recall, "QUESTION_FACTOR", 1.0)
    plain = relevance()
    monkeypatch.undo()
    ranked = relevance()
    assert recall.QUESTION_FACTOR < 1.0
    assert ranked["question"] == (pytest.approx(plain["question"][0] * recall.QUESTION_FACTOR), True)
    assert ranked["statement"] == (pytest.approx(plain["statement"][0]), False)


def test_explain_shows_the_question_factor_so_the_relevance_line_adds_up():
    from suzent_cli.cli.recall import explain_lines
    from suzent_cli.recall import QUESTION_FACTOR, Hit

    hit = Hit(id="q", content="Which pottery class did you sign up for?", score=0.4, source="archive:2026-05-01.md",
              source_type="archive_log", source_file="2026-05-01.md", locator=5, date="2026-05-01", session="s",
              category=None, tags=[], importance=0.5, relevance=0.4 * QUESTION_FACTOR,
              runs={"fts": 1.0, "vector": 1.0 / 3}, asks=True)
    first = explain_lines(hit)[0]
    assert first.startswith(f"relevance {0.4 * QUESTION_FACTOR:.4f} = (runs: fts 1.0000×0.3 + vector 0.3333×0.3")
    assert first.endswith(f") × {QUESTION_FACTOR:g} (the row asks a question)")
