"""The model half of the same-subject test (:mod:`suzent_cli.dream.values`): a new value that shares no word with
the older statement ("I switched to coffee" after "I drink tea every morning") replaces it when the bundled MiniLM
finds the two the same kind of thing, never otherwise; a hash embedder turns the model half off (no supersession,
never a false one). One load of the bundled MiniLM for the module."""

from __future__ import annotations

import datetime as dt

import pytest
from test_update_scenarios import walk_tuning_set

from suzent_cli.dream.values import ModelJudge
from suzent_cli.index.embed import HashEmbedder, load_embedder
from suzent_cli.vault.supersede import REPLACES, UNRELATED, best_replaced, compare, pairs_to_review, read, value_of

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("all-MiniLM-L6-v2")


@pytest.fixture
def judge(minilm):
    return ModelJudge(minilm)


def test_the_value_a_change_ends_at():
    assert value_of(read("I switched to coffee")) == "coffee"
    assert value_of(read("Switched to an iPhone 15")) == "iphone 15"
    assert value_of(read("I'm vegan these days")) == "vegan"
    assert value_of(read("I now prefer light mode")) == "light mode"
    assert value_of(read("I take the bus these days")) == "bus"
    # an end names no value, nor a statement without a cue, nor a long one
    assert value_of(read("Our cat Miso died in April")) is None
    assert value_of(read("I quit coffee two weeks ago")) is None
    assert value_of(read("Drinks tea")) is None
    assert value_of(read("Now I spend most weekends hiking with friends in the hills")) is None


def test_a_new_value_of_the_same_kind_replaces_what_shares_no_word(judge):
    assert compare("I drink tea every morning", "I switched to coffee", judge).relation == REPLACES
    assert compare("Eats a vegetarian diet", "I'm vegan these days", judge).relation == REPLACES
    assert compare("Takes French classes on Tuesdays", "Switched to German", judge).relation == REPLACES
    olds = ["Likes dark chocolate", "I drink tea every morning", "Prefers window seats on trains"]
    assert best_replaced("I switched to coffee", olds, judge) == 1
    assert best_replaced("Switched to an iPhone 15", ["Wears a Garmin watch for running",
                                                      "Uses a Samsung Galaxy phone"], judge) == 1


def test_words_still_decide_first(judge):
    assert best_replaced("I now prefer light mode", ["Likes dark chocolate", "Prefers dark mode"], judge) == 1
    assert best_replaced("Work gave me a MacBook Pro, that's my laptop now", ["My laptop is a ThinkPad"], judge) == 0
    assert best_replaced("I drink tea every morning", ["I drink tea every morning"], judge) is None


def test_distractors_are_never_replaced(judge):
    # without the value's own kind among the older claims, nothing close enough is replaced
    assert best_replaced("I switched to coffee", ["Works at Acme", "Went to Paris in May"], judge) is None
    assert best_replaced("I switched to Acme", ["I drink tea every morning"], judge) is None
    assert best_replaced("Switched to German", ["Plans a trip to Paris in the summer"], judge) is None
    assert best_replaced("I'm vegan these days", ["Is allergic to peanuts"], judge) is None
    assert best_replaced("I now prefer light mode", ["Likes dark chocolate"], judge) is None  # "dark", not "dark mode"
    # a past event is never replaced; a "now" about a shared word is the words' business ("Lisbon is now…")
    assert compare("Went to Paris in May", "I switched to London", judge).relation == UNRELATED
    assert compare("Lives in Lisbon", "Lisbon is now very expensive", judge).relation != REPLACES
    # an end without a value names what ended, or replaces nothing
    assert best_replaced("Our cat died last week", ["Has a dog named Rex"], judge) is None


def test_a_tie_replaces_nothing_and_lint_names_both_pairs(judge):
    assert best_replaced("I switched to coffee", ["Likes tea", "Likes green tea"], judge) is None
    d = dt.date
    pairs = pairs_to_review([("a", "Likes tea", d(2026, 3, 1)), ("b", "Likes green tea", d(2026, 3, 2)),
                             ("c", "I switched to coffee", d(2026, 3, 9))], judge)
    assert {(o, n) for o, n, v in pairs} == {("a", "c"), ("b", "c")}
    assert all(v.relation == REPLACES and "model" in v.why for _, _, v in pairs)


def test_the_tuning_set_with_the_model_supersedes_precisely(judge):
    tp, fp, olds = walk_tuning_set(judge)
    assert fp == 0
    assert tp / olds >= 0.8 and tp >= walk_tuning_set()[0] + 5, (tp, olds)  # 37/44 with MiniLM, 32/44 words only
    tp, fp, olds = walk_tuning_set(judge, kinds={"no_shared_word"})
    assert fp == 0 and tp >= 6, (tp, olds)


def test_a_hash_embedder_turns_the_model_half_off():
    for dim in (64, 256):
        judge = ModelJudge(HashEmbedder(dim))
        assert judge.closeness(read("I switched to coffee"), "coffee", [read("I drink tea every morning")]) == [None]
        assert "kinds of things" in (judge.problem or "")
        assert best_replaced("I switched to coffee", ["I drink tea every morning"], judge) is None
        tp, fp, _ = walk_tuning_set(judge)
        assert fp == 0 and (tp, fp) == walk_tuning_set()[:2]  # exactly the words-only choices


def test_an_embedder_that_cannot_load_turns_the_model_half_off():
    judge = ModelJudge(spec="no-such-model")
    assert best_replaced("I switched to coffee", ["I drink tea every morning"], judge) is None
    assert "no embedder" in (judge.problem or "")


def test_lint_reports_a_close_pair_it_cannot_decide_and_no_distractor(judge):
    d = dt.date
    claims = [("car", "Commutes by car", d(2026, 3, 1)), ("rex", "Owns a dog named Rex", d(2026, 3, 2)),
              ("paris", "Went to Paris in May", d(2026, 3, 3)), ("bus", "I take the bus these days", d(2026, 3, 11))]
    assert best_replaced("I take the bus these days", [c[1] for c in claims[:3]], judge) is None  # not sure enough
    assert [(o, n) for o, n, _ in pairs_to_review(claims, judge)] == [("car", "bus")]  # but a person should look
    assert pairs_to_review(claims) == []  # words alone see nothing


def test_the_rules_engine_and_lint_use_the_model(tmp_path, minilm):
    """Through the dream: "I switched to coffee" retires "I drink tea every morning" (not "Likes dark chocolate");
    with "Likes tea" and "Likes green tea" both current, lint names both pairs."""
    from conftest import log, settings_at
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.lint import rules_contradictions
    from suzent_cli.dream.rules import RulesEngine
    from suzent_cli.dream.runner import DreamRunner
    from suzent_cli.vault.pages import PREVIOUSLY, read_page

    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", "[preference] I drink tea every morning", "[preference] Likes dark chocolate")
    log(s, "2026-06-09", "[preference] I switched to coffee")
    runner = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[],
                         engine_factory=lambda name: RulesEngine(minilm))
    assert runner.tick(force=True).outcome == "ingested"
    page = read_page(s.paths.vault_dir / "3_Personal/Preferences.md")
    assert [c.text for c in page.claims(PREVIOUSLY)] == ["I drink tea every morning"]
    assert "Likes dark chocolate" in [c.text for c in page.claims()]

    v = tmp_path / "vault"
    (v / "3_Personal").mkdir(parents=True)
    (v / "3_Personal/Preferences.md").write_text(
        "---\ntype: personal\n---\n# Preferences\n\n## Claims\n\n- Likes tea · source: 2026-03-01.md:5\n"
        "- Likes green tea · source: 2026-03-02.md:5\n- I switched to coffee · source: 2026-03-09.md:5\n")
    found = rules_contradictions(v, dt.date(2026, 3, 10), judge=ModelJudge(minilm))
    assert sum("I switched to coffee" in line for line in found.contradictions) == 2
    assert rules_contradictions(v, dt.date(2026, 3, 10)).contradictions == []  # words alone: nothing to say


def test_the_model_loads_only_for_a_change_that_names_a_value_and_shares_no_word():
    from suzent_cli.index.embed import lazy_embedder

    lazy = lazy_embedder("all-MiniLM-L6-v2")
    judge = ModelJudge(lazy)
    assert best_replaced("Now prefers light mode", ["Prefers dark mode"], judge) == 0  # the words decide
    assert best_replaced("Our cat Miso died in April", ["Has a cat called Miso"], judge) == 0
    assert best_replaced("Likes green tea", ["Likes tea"], judge) is None  # no cue, no value
    assert pairs_to_review([("a", "Likes tea", None), ("b", "Reads before bed", None)], judge) == []
    assert not lazy.loaded
