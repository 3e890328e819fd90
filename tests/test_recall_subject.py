"""Recall's subject step (issue 27 item 6, ``recall.subject_boost``): a row whose subject is a name the query uses
gains relevance; a row that only mentions the name does not. Real LanceDB, the hash embedder."""

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
from suzent_cli.recall import (
    SUBJECT_BOOST,
    Filters,
    names_subject,
    query_names,
    recall,
    row_subject,
    search,
)
from tests.conftest import indexed_home

OTHER = "github.com/acme/other"
# Ben's line says "camped" three times, so BM25 and the hash vectors put it first; Anna's line is about Anna.
ROWS = [
    "Ben: we camped by the lake and Anna camped too, we all camped",
    "Anna: I went on a camping trip last summer with a tent and a little stove",
    "Ben: the lake was cold this morning",
    "Carla: my garden needs water",
    "Anna: the bakery on the corner opened",
    "Ben: the train was late again today",
]


def test_query_names_are_capitalised_words_that_are_not_stop_words():
    assert query_names("What do Melanie's kids like?") == {"melanie"}
    assert query_names("Would Caroline and Jon go to Porto?") == {"caroline", "jon", "porto"}
    assert query_names("which editor does the user use") == frozenset()
    assert query_names("I think A is fine") == frozenset()  # "I" is a stop word, "A" one letter
    assert query_names("Where does Ólafur live?") == {"ólafur"}  # any script's capitals
    assert query_names("") == frozenset() and query_names("\x00 ?? 12") == frozenset()


def test_a_rows_subject_is_its_first_word_when_it_is_a_name():
    assert row_subject("Mira starts school in Porto") == "mira"
    assert row_subject("Melanie: I signed up for pottery") == "melanie"
    assert row_subject("- [personal] Anna likes tea") == "anna"  # a list bullet and a category are not words
    assert row_subject("the user's dog is called Biscuit") is None
    assert row_subject("") is None
    assert row_subject("Ólafur: hæ") == "ólafur"
    assert row_subject("123 Main Street") is None and row_subject("   ") is None
    assert names_subject(frozenset({"anna"}), "Anna: hello") == "anna"
    assert names_subject(frozenset({"anna"}), "Ben: thanks, Anna!") is None  # only mentioned: not its subject
    assert names_subject(frozenset(), "Anna: hello") is None


def _home(tmp_path, rows=ROWS, other_project: list[str] = ()):
    return indexed_home(tmp_path, rows, other_project, other_scope=OTHER)


def test_the_row_about_the_named_one_outranks_a_row_that_only_mentions_it(tmp_path):
    s, emb = _home(tmp_path)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    off = search(store, emb, "Where has Anna camped?", limit=3, subject_boost=0)
    assert off[0].content.startswith("Ben: we camped")  # the old order: the mention wins
    assert all(h.subject is None and h.subject_boost == 0 for h in off)
    on = search(store, emb, "Where has Anna camped?", limit=3)
    assert on[0].content.startswith("Anna: I went on a camping trip")
    assert on[0].subject == "anna" and on[0].subject_boost == SUBJECT_BOOST
    ben = next(h for h in on if h.content.startswith("Ben: we camped"))
    assert ben.subject is None and ben.score == pytest.approx(off[0].score)  # the mention's score is unchanged
    anna_off = next(h for h in off if h.content.startswith("Anna: I went"))
    assert on[0].relevance == pytest.approx(anna_off.relevance + SUBJECT_BOOST)


def test_the_step_adds_no_candidate_a_subject_row_unrelated_to_the_query_stays_out(tmp_path):
    """The step re-scores rows the query already found: "Anna: the bakery …" shares no word with "camped"."""
    s, emb = _home(tmp_path)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    on = search(store, emb, "Where has Anna camped lake?", limit=10)
    off = search(store, emb, "Where has Anna camped lake?", limit=10, subject_boost=0)
    assert {h.id for h in on} == {h.id for h in off}


def test_off_restores_the_old_output_exactly(tmp_path):
    s, emb = _home(tmp_path)
    store = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    for query in ("Where has Anna camped?", "lake", "What does Carla grow in the garden?"):
        off = search(store, emb, query, limit=5, subject_boost=0)
        plain = search(store, emb, query.lower(), limit=5, subject_boost=SUBJECT_BOOST)  # no capital: no name
        assert [(h.id, round(h.score, 6)) for h in off] == [(h.id, round(h.score, 6)) for h in plain]


def test_another_projects_row_is_never_lifted_into_a_scoped_recall(tmp_path):
    s, emb = _home(tmp_path, other_project=["Anna: camping camping camping at the lake in a hammock"])
    lance = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    resident = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert resident.keep_resident(wait=True)
    for store in (lance, resident):
        hits = search(store, emb, "Where has Anna camped?", limit=10, filters=Filters(scopes=("",)))
        assert hits and all(h.scope == "" for h in hits)
        assert not any("hammock" in h.content for h in hits)
        every = search(store, emb, "Where has Anna camped?", limit=10)  # unscoped: the project's row is there
        assert any("hammock" in h.content for h in every)


def test_the_resident_path_gives_the_same_hits(tmp_path):
    s, emb = _home(tmp_path)
    lance = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    resident = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert resident.keep_resident(wait=True)
    for query in ("Where has Anna camped?", "What did Ben say about the train?", "Carla garden"):
        a = search(lance, emb, query, limit=6)
        b = search(resident, emb, query, limit=6)
        assert [(h.id, h.subject) for h in a] == [(h.id, h.subject) for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)


def test_the_setting_turns_it_off_and_a_bad_value_is_a_config_error(tmp_path):
    s, emb = _home(tmp_path)
    assert s.subject_boost == SUBJECT_BOOST
    assert recall(s, emb, "Where has Anna camped?", limit=1, log=False)[0].content.startswith("Anna:")
    off = resolve_settings(home=s.paths.home, today="2026-06-10", env={"SUZENT_SUBJECT_BOOST": "0"})
    assert check_value(setting("recall.subject_boost"), off.subject_boost, "x") == 0
    assert recall(off, emb, "Where has Anna camped?", limit=1, log=False)[0].content.startswith("Ben:")
    for bad in ("many", 2, float("nan")):
        with pytest.raises(ConfigInvalid):
            recall(dataclasses.replace(s, subject_boost=bad), emb, "Where has Anna camped?", limit=1, log=False)


def test_the_cli_explains_the_step_and_its_setting_turns_it_off(home):
    """``recall --explain`` names the subject and the boost; ``--json --explain`` has ``subject`` and
    ``subject_boost``; SUZENT_SUBJECT_BOOST=0 gives the order without it; a bad value is one ``Error:`` line."""
    import json
    import re

    from conftest import HASH_ENV, invoke

    env = HASH_ENV | {"SUZENT_NOW": "2026-11-28"}
    for fact in ROWS:
        assert invoke(home, "capture", "--fact", fact, env_extra=env).returncode == 0
    assert invoke(home, "index", env_extra=env).returncode == 0
    out = json.loads(invoke(home, "recall", "Where has Anna camped?", "--json", "--explain", env_extra=env).stdout)
    first = out["hits"][0]
    assert first["content"].startswith("Anna: I went on a camping trip")
    assert first["subject"] == "anna" and first["subject_boost"] == SUBJECT_BOOST
    text = re.sub(r"\x1b\[[0-9;]*m", "", invoke(home, "recall", "Where has Anna camped?", "--explain",
                                                  env_extra=env).stdout)
    assert f"+ subject {SUBJECT_BOOST:g} (the row is about 'anna', a name the query uses)" in " ".join(text.split())
    off = json.loads(invoke(home, "recall", "Where has Anna camped?", "--json", "--explain",
                            env_extra=env | {"SUZENT_SUBJECT_BOOST": "0"}).stdout)
    assert off["hits"][0]["content"].startswith("Ben: we camped") and off["hits"][0]["subject"] is None
    bad = invoke(home, "recall", "Where has Anna camped?", env_extra=env | {"SUZENT_SUBJECT_BOOST": "lots"})
    assert bad.returncode != 0 and bad.stderr.strip().startswith("Error:") and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_pending_line_gets_the_step_as_it_will_once_indexed(tmp_path):
    """A line captured after the last index pass (read-your-writes, :mod:`suzent_cli.index.pending`) is ranked
    with the step too, and lands where it lands once indexed."""
    s, emb = _home(tmp_path, rows=ROWS[2:])  # neither camping line indexed
    write_facts(s, [Fact(ROWS[0]), Fact(ROWS[1])], day=dt.date(2026, 5, 3), time="10:00", session="c")
    pending = recall(s, emb, "Where has Anna camped?", limit=3, log=False)
    assert pending[0].content == ROWS[1] and pending[0].subject == "anna"
    run_index(s, embedder=emb)
    indexed = recall(s, emb, "Where has Anna camped?", limit=3, log=False)
    assert [h.content for h in indexed][:2] == [h.content for h in pending][:2]
