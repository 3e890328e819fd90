"""Ranking a person can trust (issue 16, section 3): importance reorders relevant hits and never lifts an unrelated
one, results are not padded with rows that share no meaning with the query (and say so when nothing is relevant),
and stop or question words ("which", "does", "use") do not decide the BM25 ranking. Real LanceDB index, hash
embedder."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from conftest import HASH_ENV, CountingEmbedder, invoke
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import HashEmbedder
from suzent_cli.index.rank import final_score
from suzent_cli.init import init_home
from suzent_cli.recall import fts_query, recall
from suzent_cli.text import content_words
from suzent_cli.vault.memory_md import verify_fact

DAY = dt.date(2026, 6, 9)

# A home of 33 facts, captured one by one over a week (as hooks would), several of them "We use …".
FACTS_33 = """Prefers compact dashboards
Lives in Lisbon
We use ClickHouse for analytics
Drinks green tea in the morning
Works at a fintech startup as a backend engineer
Is learning Spanish on weekends
Runs 10k every Sunday
We use Kubernetes on GCP for deploys
Prefers dark mode in every app
Writes Python and Go
We use PostgreSQL for transactional data
Manager is Priya
Commutes by bike
Is vegetarian
Plays the guitar
Reads science fiction before bed
Prefers async standups over meetings
Uses a mechanical keyboard with brown switches
Sister lives in Porto
Birthday is in March
Allergic to peanuts
Wants to run a marathon in October
We use pytest for tests and ruff for linting
Keeps notes in Obsidian
Listens to jazz while coding
Prefers tabs over spaces in Go
Travels to Berlin for work twice a year
Uses Firefox as browser
On-call rotation every fourth week
Favourite food is ramen
We use GitHub Actions for CI
Uses tmux for terminal sessions""".splitlines()
NEOVIM = "Uses neovim as editor"


@pytest.fixture
def home_hash(settings):
    s = dataclasses.replace(settings, embedder="hash:256")
    init_home(s)
    return s


@pytest.fixture
def embedder():
    """The hash embedder at 256 dimensions: at 64, two unrelated words share a dimension often enough to give an
    unrelated short fact a cosine above the floor (a hash collision, not meaning)."""
    return CountingEmbedder(256)


def capture_one_by_one(s, facts: list[str]) -> None:
    for i, fact in enumerate(facts):
        write_facts(s, [Fact(fact)], day=DAY - dt.timedelta(days=i // 6), time=f"{9 + i % 6:02d}:00",
                    session=f"sess{i:04d}")


# --- 1. importance reorders relevant hits, never lifts irrelevant ones ------------------------------------------
def test_a_lift_is_a_share_of_relevance_so_an_unrelated_verified_row_cannot_pass_a_match():
    assert final_score(0.9, 0.9) > final_score(1.0, 0.5)          # comparably relevant: importance decides
    assert final_score(0.244, 0.9) < final_score(0.343, 0.5)      # a weak query (every hit ~0.3-0.4): +0.2 used to
    assert final_score(0.1, 0.9) == pytest.approx(0.12)           # lift 0.244 over 0.343; now +20 % of its own
    assert final_score(1.0, 0.9) == pytest.approx(1.2)
    assert final_score(0.5, 0.1) == pytest.approx(0.3)            # a demotion stays a fixed amount (−0.2):
    assert final_score(0.45, 0.18) < final_score(0.33, 0.63)      # history under the current claim
    assert final_score(0.7312, 0.5) == 0.7312                     # neutral rows: exactly their relevance
    assert final_score(0.0, 0.9) == 0.0                           # nothing relevant stays nothing


def test_a_verified_memory_line_does_not_win_an_unrelated_query(settings):
    # hash:64, where "the user's dog" shares two query words and a hash dimension with the question: before, its
    # relevance came close enough to the answer's for the +0.2 of the human floor to put it first.
    s = dataclasses.replace(settings, embedder="hash:64")
    init_home(s)
    embedder = CountingEmbedder(64)
    verify_fact(s, "The user's dog is named Rex", "ana", day=DAY)
    write_facts(s, [Fact("Neovim is my editor now", category="technical")], day=DAY, time="10:00",
                session="sess0001")
    run_index(s, embedder=embedder)
    hits = recall(s, embedder, "which editor does the user use", limit=5, log=False)
    assert hits[0].content == "Neovim is my editor now", [(h.content, h.score) for h in hits]
    dog = [h for h in hits if "Rex" in h.content]
    assert all(h.score < hits[0].score for h in dog)
    # ... and the verified line still wins the query it answers.
    assert "Rex" in recall(s, embedder, "what is the dog called", limit=5, log=False)[0].content


# --- 2. minimum relevance ------------------------------------------------------------------------------------------
def test_nothing_relevant_is_an_empty_answer_not_padding(home_hash, embedder):
    s = home_hash
    capture_one_by_one(s, [*FACTS_33, NEOVIM])
    run_index(s, embedder=embedder)
    assert recall(s, embedder, "quantum chromodynamics lattice", limit=10, log=False) == []
    hits = recall(s, embedder, "neovim", limit=10, log=False)
    assert hits[0].content == NEOVIM
    # Every hit matched the query, or is the neighbour of one that did (a fact is read with its neighbours).
    assert all("fts_content" in h.runs or "fts" in h.runs or h.neighbour > 0 for h in hits), \
        [(h.content, h.runs, h.neighbour) for h in hits]
    assert len(hits) < 10


def test_recall_cli_says_when_nothing_is_relevant(home):
    env = HASH_ENV
    assert invoke(home, "--today", "2026-06-10", "capture", "--fact", "[technical] Uses neovim as editor",
                  "--fact", "[personal] Lives in Lisbon", env_extra=env).returncode == 0
    assert invoke(home, "index", env_extra=env).returncode == 0
    r = invoke(home, "recall", "quantum chromodynamics lattice", env_extra=env)
    assert r.returncode == 0 and r.stdout.strip() == "nothing relevant found", (r.stdout, r.stderr)
    r = invoke(home, "recall", "quantum chromodynamics lattice", "--json", env_extra=env)
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["hits"] == [] and doc["note"] == "nothing relevant found"
    r = invoke(home, "recall", "neovim", "--json", env_extra=env)
    doc = json.loads(r.stdout)
    assert doc["hits"][0]["content"] == NEOVIM and doc["note"] is None


def test_mcp_recall_notes_when_nothing_is_relevant(tmp_path):
    from conftest import settings_at
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    warm = Warm(settings_at(tmp_path / "home", env=HASH_ENV))
    try:
        backend = LocalBackend(warm)
        backend.remember(facts=["[technical] Uses neovim as editor", "[personal] Lives in Lisbon"])
        assert warm.index.reindex(None, wait=120), warm.index.last_error
        result = backend.recall("quantum chromodynamics lattice")
        assert result["hits"] == [] and result["note"] == "nothing relevant found"
        assert backend.recall("neovim")["hits"][0]["content"] == NEOVIM
    finally:
        warm.close()


# --- 3. query-term weighting -----------------------------------------------------------------------------------
def test_the_bm25_query_drops_stop_and_question_words():
    assert fts_query("which editor does the user use?") == "editor"
    assert fts_query("what is the user's dog called") == "dog called"
    assert fts_query("What did we do on 8 May, 2023") == "May 2023" or fts_query("What did we do on 8 May, 2023") \
        == "8 May 2023"
    assert fts_query("what did you do") == "what did you do"  # only stop words: keep them, nothing else to search
    assert content_words("Which editor does the user use?") == ["editor"]  # the hooks' words, same list


class ConceptEmbedder(HashEmbedder):
    """A stand-in for a semantic model, deterministic and instant: a bag of concepts. Words are lowercased, stop
    words carry no meaning, and a few words share a concept ("neovim" is an "editor"), as a model has learnt."""

    CONCEPTS = {"neovim": "editor", "vim": "editor", "emacs": "editor"}

    def __init__(self):
        super().__init__(256)
        self.name = "concept:256"

    def encode(self, texts):
        return super().encode([" ".join(self.CONCEPTS.get(w, w) for w in content_words(t)) for t in texts])


def test_which_editor_ranks_neovim_first_in_a_home_of_33_facts(settings):
    """The README's example: the fact the offline extractor keeps from "I switched to neovim last month. How do I
    map jk to escape?" shares no word with "which editor does the user use"; only the vector run can find it. With
    the question's words in the BM25 query, the six "We use …" facts matched "use" and ranked first."""
    s = dataclasses.replace(settings, embedder="concept:256")
    init_home(s)
    embedder = ConceptEmbedder()
    answer = "I switched to neovim last month."
    # The answer is the last fact of its day, so no other row carries it as context (context is not the point).
    capture_one_by_one(s, [*FACTS_33[:5], answer, *FACTS_33[5:]])
    run_index(s, embedder=embedder)
    hits = recall(s, embedder, "which editor does the user use", limit=10, log=False)
    assert hits[0].content == answer, [(h.content, h.score) for h in hits]
    assert not any("fts_content" in h.runs or "fts" in h.runs for h in hits), [(h.content, h.runs) for h in hits]
