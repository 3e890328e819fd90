"""The trial's "now" questions with the bundled model (issue 27, item 3; in-process, the real MiniLM: integration,
it loads the model). With the hash embedder: tests/test_now_ranking.py.

* "what is the name of the user's pet" put "My daughter Mira starts school in Porto…" first and "The user's dog is
  called Biscuit" third; a brother's cat (BM25 "named") outranked the user's dog until a row about another person
  ranked lower for a question about the user.
* "how does the user commute" gave "I switched to neovim last month." when no commute fact matched; with one, it
  comes first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import BUNDLED_NAME, load_embedder
from suzent_cli.init import init_home
from suzent_cli.recall import recall

DAY = dt.date(2026, 11, 4)
SESSIONS = [  # the trial's home, one session a day
    ["I prefer green tea over coffee, and I prefer dark mode.", "I'm a data engineer living in Berlin.",
     "I switched to neovim last month."],
    ["My daughter Mira starts school in Porto next September, and I'm learning Portuguese",
     "The user's dog is called Biscuit", "My brother has a cat named Pixie"],
    ["I moved to Lisbon in October.", "I've quit tea completely; I drink coffee now", "I now prefer light mode."],
    ["I cycle to the office most days"],
]


def test_the_trials_now_questions_with_the_bundled_model(settings):
    s = dataclasses.replace(settings, embedder=BUNDLED_NAME, today=DAY)
    init_home(s)
    for i, facts in enumerate(SESSIONS):
        write_facts(s, [Fact(f) for f in facts], day=DAY - dt.timedelta(days=len(SESSIONS) - i), time="09:00",
                    session=f"sess{i}")
    emb = load_embedder(BUNDLED_NAME)
    run_index(s, embedder=emb)

    pet = recall(s, emb, "what is the name of the user's pet", limit=5, log=False)
    texts = [h.text for h in pet]
    assert texts[0] == "The user's dog is called Biscuit", [(h.text, round(h.score, 4)) for h in pet]
    off = recall(dataclasses.replace(s, now_ranking=False), emb, "what is the name of the user's pet", limit=5,
                 log=False)
    assert off[0].text == "My brother has a cat named Pixie"  # what the rule changes, under this model

    commute = recall(s, emb, "how does the user commute", limit=5, log=False)
    assert commute[0].text == "I cycle to the office most days", [(h.text, round(h.score, 4)) for h in commute]
    assert "I switched to neovim last month." not in [h.text for h in commute[:1]]


@pytest.mark.parametrize("day2", [
    ["My daughter Mira starts school in Porto next September, and I'm learning Portuguese",
     "The user's dog is called Biscuit", "My brother has a cat named Pixie", "Visited the Lisbon aquarium last week"],
    ["My daughter Mira starts school in Porto next September, and I'm learning Portuguese",
     "Our dog is called Biscuit", "Visited the Lisbon aquarium last week", "My brother has a cat named Pixie"],
])
def test_a_log_row_next_to_the_answer_is_not_lifted_above_it_by_its_neighbours(settings, day2):
    """The trial case still open after the first pass: with MiniLM, "Visited the Lisbon aquarium last week", written
    next to the dog and the brother's cat, is embedded with what precedes it (its context) and gains a neighbour's
    share, and ranked first for "what is the name of the user's pet". On its own it is far from the question
    (cosine 0.14 against the dog's 0.68), so it ranks below every row that matches it on its own
    (recall.own_first); the brother's cat, about another person, ranks below the user's dog too."""
    s = dataclasses.replace(settings, embedder=BUNDLED_NAME, today=DAY)
    init_home(s)
    sessions = [SESSIONS[0], day2, SESSIONS[2]]
    for i, facts in enumerate(sessions):
        write_facts(s, [Fact(f) for f in facts], day=DAY - dt.timedelta(days=len(sessions) - i), time="09:00",
                    session=f"sess{i}")
    emb = load_embedder(BUNDLED_NAME)
    run_index(s, embedder=emb)
    query = "what is the name of the user's pet"
    dog = day2[1]
    off = recall(dataclasses.replace(s, now_slots=False), emb, query, limit=5, log=False)
    assert off[0].text != dog  # what the rule changes, under this model
    hits = recall(s, emb, query, limit=5, log=False)
    assert hits[0].text == dog, [(h.text, round(h.score, 4)) for h in hits]
    outing = next(h for h in hits if h.text.startswith("Visited"))
    assert outing.capped is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
