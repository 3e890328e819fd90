"""The minimum relevance with the bundled model (issue 16, section 3), where a fixed cosine floor failed: a
newcomer's home of the README's three facts must find the neovim fact for "editor", and an unrelated query must
find nothing in a home of three or of 33 facts. In-process, the real MiniLM (integration: it loads the model)."""

from __future__ import annotations

import dataclasses

import pytest
from test_ranking_trust import DAY, README_FACTS, README_QUERY, capture_readme_home

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import BUNDLED_NAME, load_embedder
from suzent_cli.init import init_home
from suzent_cli.recall import recall

UNRELATED_QUERIES = ("quantum chromodynamics lattice", "volcano eruption in iceland", "stock market crash")


@pytest.fixture(scope="module")
def minilm():
    return load_embedder(BUNDLED_NAME)


def home_of(settings, minilm, later: int | None):
    s = dataclasses.replace(settings, embedder=BUNDLED_NAME)
    init_home(s)
    if later is None:
        write_facts(s, [Fact(f) for f in README_FACTS], day=DAY, time="08:00", session="readme")
    else:
        capture_readme_home(s, later)
    run_index(s, embedder=minilm)
    return s


def test_a_newcomer_finds_the_editor_in_a_home_of_three_facts(settings, minilm):
    s = home_of(settings, minilm, None)
    for query in ("editor", "what editor do I use", README_QUERY):
        hits = recall(s, minilm, query, limit=5, log=False)
        assert hits and hits[0].content == README_FACTS[2], (query, [(h.content, h.score) for h in hits])
    for query in UNRELATED_QUERIES:
        assert recall(s, minilm, query, limit=5, log=False) == [], query


def test_unrelated_queries_find_nothing_in_a_home_of_33_facts_and_the_editor_stays_relevant(settings, minilm):
    s = home_of(settings, minilm, 30)
    for query in UNRELATED_QUERIES:
        assert recall(s, minilm, query, limit=10, log=False) == [], query
    # MiniLM ranks tools used every day ("Uses tmux …", "We use GitHub Actions …") nearer to the question than
    # the neovim fact (docs/ranking.md); what ranking owes it is not to drop it and not to let "use" decide.
    hits = recall(s, minilm, README_QUERY, limit=30, log=False)
    assert README_FACTS[2] in [h.content for h in hits], [(h.content, h.score) for h in hits]
    assert not any("fts" in h.runs or "fts_content" in h.runs for h in hits)
    assert recall(s, minilm, "where does the user live", limit=3, log=False)[0].content == "Lives in Lisbon"
