"""Recall's when step (issue 27 item 6, second pass; ``recall.when_boost``): for a query that asks when and names no
date, a row that says when (a relative day or period, a weekday, a month, a year) gains relevance; the step adds no
candidate, never crosses a scope, and gives the same hits on the lance and the resident paths. Real LanceDB, the
hash embedder."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import check_value, resolve_settings, setting
from suzent_cli.errors import ConfigInvalid
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.recall import WHEN_BOOST, Filters, asks_when, recall, search, tells_when
from tests.conftest import indexed_home

OTHER = "github.com/acme/other"
# The first row repeats the topic words, so BM25 and the hash vectors put it first; the second says when.
ROWS = [
    "Ben: camping at the lake, the lake camping spot is the best camping",
    "Ben: I went camping at the lake last weekend",
    "Carla: my garden needs water",
    "Ben: the train was late again",
]
QUERY = "When did Ben go camping at the lake?"


def test_a_query_asks_when_with_when_or_what_year_month_day():
    assert asks_when("When did Ben go camping?") and asks_when("when is the party")
    assert asks_when("What year did Jon move to Porto?") and asks_when("which day is the market")
    assert asks_when("so when is the party") and asks_when("Tell me, when did I move?")
    assert asks_when("How long has Ben had the kayak?")  # a duration is answered by a time too
    assert not asks_when("Where did Ben go camping?") and not asks_when("whenever you like")
    assert not asks_when("") and not asks_when("what did Ben say")
    # "when" as a conjunction asks nothing (a hook's prompt, a statement)
    assert not asks_when("the app crashes when I click save") and not asks_when("I get anxious when flying")
    assert not asks_when("Who supports Caroline when she has a negative experience?")


def test_a_row_says_when_with_a_relative_day_a_weekday_a_month_or_a_year():
    for text in ("I went camping last weekend", "yesterday we baked", "two years ago", "on Saturday",
                 "in March", "back in 2019", "the party is on the 3rd", "this summer", "Tonight: pizza",
                 "I've known them for 4 years", "a few weeks"):
        assert tells_when(text), text
    for text in ("camping at the lake", "I may go", "my garden needs water", "", None, "2 cats", "\x00??"):
        assert not tells_when(text), text


def _home(tmp_path, rows=ROWS, other_project: list[str] = ()):
    return indexed_home(tmp_path, rows, other_project, other_scope=OTHER)


def test_the_row_that_says_when_outranks_the_one_that_only_shares_the_topic(tmp_path):
    s, emb = _home(tmp_path)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    off = search(store, emb, QUERY, limit=4, when_boost=0)
    assert off[0].content == ROWS[0]  # the old order: the topic wins
    assert all(h.when_boost == 0 for h in off)
    on = search(store, emb, QUERY, limit=4)
    assert on[0].content == ROWS[1] and on[0].when_boost == WHEN_BOOST
    topic = next(h for h in on if h.content == ROWS[0])
    assert topic.when_boost == 0 and topic.score == pytest.approx(off[0].score)  # a row without a time: unchanged
    timed_off = next(h for h in off if h.content == ROWS[1])
    assert on[0].relevance == pytest.approx(timed_off.relevance + WHEN_BOOST)


def test_the_step_adds_no_candidate_and_off_restores_the_old_output(tmp_path):
    s, emb = _home(tmp_path, rows=ROWS + ["Dana: last year I sold my bicycle"])  # says when, shares no word
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    on = search(store, emb, QUERY, limit=10)
    off = search(store, emb, QUERY, limit=10, when_boost=0)
    assert {h.id for h in on} == {h.id for h in off}  # the same candidates; only their order may change
    for query in ("Where did Ben go camping?", "camping lake", "Ben went camping when the lake was warm"):
        # asks no when (the last: a conjunction): the step changes nothing
        a = search(store, emb, query, limit=5)
        b = search(store, emb, query, limit=5, when_boost=0)
        assert [(h.id, round(h.score, 6)) for h in a] == [(h.id, round(h.score, 6)) for h in b]


def test_a_query_naming_a_date_is_left_to_the_date_boost(tmp_path):
    s, emb = _home(tmp_path)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    hits = search(store, emb, "When did Ben go camping in May 2026?", limit=4)
    assert hits and all(h.when_boost == 0 for h in hits) and all(h.date_boost > 0 for h in hits)


def test_another_projects_row_is_never_lifted_into_a_scoped_recall(tmp_path):
    s, emb = _home(tmp_path, other_project=["Ben: camping at the lake last Saturday, camping in a hammock"])
    lance = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    resident = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert resident.keep_resident(wait=True)
    for store in (lance, resident):
        hits = search(store, emb, QUERY, limit=10, filters=Filters(scopes=("",)))
        assert hits and all(h.scope == "" for h in hits)
        assert not any("hammock" in h.content for h in hits)
        every = search(store, emb, QUERY, limit=10)  # unscoped: the project's row is there, and lifted
        assert next(h for h in every if "hammock" in h.content).when_boost == WHEN_BOOST


def test_the_resident_path_gives_the_same_hits(tmp_path):
    s, emb = _home(tmp_path)
    lance = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    resident = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert resident.keep_resident(wait=True)
    for query in (QUERY, "when was the train late", "What year did Carla water the garden?"):
        a = search(lance, emb, query, limit=6)
        b = search(resident, emb, query, limit=6)
        assert [(h.id, h.when_boost) for h in a] == [(h.id, h.when_boost) for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)


def test_the_setting_turns_it_off_and_a_bad_value_is_a_config_error(tmp_path):
    s, emb = _home(tmp_path)
    assert s.when_boost == WHEN_BOOST
    assert recall(s, emb, QUERY, limit=1, log=False)[0].content == ROWS[1]
    off = resolve_settings(home=s.paths.home, today="2026-06-10", env={"SUZENT_WHEN_BOOST": "0"})
    assert check_value(setting("recall.when_boost"), off.when_boost, "x") == 0
    assert recall(off, emb, QUERY, limit=1, log=False)[0].content == ROWS[0]
    for bad in ("often", 2, float("nan"), -0.1):
        with pytest.raises(ConfigInvalid):
            recall(dataclasses.replace(s, when_boost=bad), emb, QUERY, limit=1, log=False)


def test_a_pending_line_gets_the_step_as_it_will_once_indexed(tmp_path):
    """A line captured after the last index pass (read-your-writes) is lifted too, and lands where it lands once
    indexed."""
    s, emb = _home(tmp_path, rows=ROWS[2:])
    write_facts(s, [Fact(ROWS[0]), Fact(ROWS[1])], day=dt.date(2026, 5, 3), time="10:00", session="c")
    pending = recall(s, emb, QUERY, limit=3, log=False)
    assert pending[0].content == ROWS[1] and pending[0].when_boost == WHEN_BOOST
    run_index(s, embedder=emb)
    indexed = recall(s, emb, QUERY, limit=3, log=False)
    assert [h.content for h in indexed][:2] == [h.content for h in pending][:2]


def test_the_cli_explains_the_step_and_its_setting_turns_it_off(home):
    """``recall --explain`` names the step; ``--json --explain`` has ``when_boost``; SUZENT_WHEN_BOOST=0 gives the
    order without it; a bad value is one ``Error:`` line."""
    import json
    import re

    from conftest import HASH_ENV, invoke

    env = HASH_ENV | {"SUZENT_NOW": "2026-11-28"}
    for fact in ROWS[:3]:
        assert invoke(home, "capture", "--fact", fact, env_extra=env).returncode == 0
    assert invoke(home, "index", env_extra=env).returncode == 0
    out = json.loads(invoke(home, "recall", QUERY, "--json", "--explain", env_extra=env).stdout)
    assert out["hits"][0]["content"] == ROWS[1] and out["hits"][0]["when_boost"] == WHEN_BOOST
    text = re.sub(r"\x1b\[[0-9;]*m", "", invoke(home, "recall", QUERY, "--explain", env_extra=env).stdout)
    assert f"+ when {WHEN_BOOST:g} (the query asks when and the row says when)" in " ".join(text.split())
    off = json.loads(invoke(home, "recall", QUERY, "--json", "--explain",
                            env_extra=env | {"SUZENT_WHEN_BOOST": "0"}).stdout)
    assert off["hits"][0]["content"] == ROWS[0] and off["hits"][0]["when_boost"] == 0
    bad = invoke(home, "recall", QUERY, env_extra=env | {"SUZENT_WHEN_BOOST": "often"})
    assert bad.returncode != 0 and bad.stderr.strip().startswith("Error:") and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
