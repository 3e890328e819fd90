"""Ranking questions about now (issue 27, item 3): for a question about the present of the user, a row about
another person and a one-off outing rank below the user's standing state (``rank.now_factor``, recall step 3d);
vault pages lend no neighbour share; the current claim carries its own history's relevance. Real LanceDB, the hash
embedder; the trial's cases with the bundled model are in tests/integration/test_now_model.py."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from conftest import CountingEmbedder
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.errors import ConfigInvalid
from suzent_cli.index import rank
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.init import init_home
from suzent_cli.recall import Hit, carry_to_current, recall, search

DAY = dt.date(2026, 11, 3)


@pytest.mark.parametrize(("query", "holder"), [
    ("what is the name of the user's pet", "user"),
    ("how does the user commute", "user"),
    ("which editor do I use", "user"),
    ("where does the user's grandmother live", "grandmother"),  # a relation named as the user's
    ("what does my older brother do", "brother"),
    ("does the user have a partner", "user"),  # "partner" is asked about, not whose state: the user's
    ("where did the user live before", None),  # the past
    ("what was the user's first car", None),
    ("what editor did I use last year", None),
    ("What is Caroline's identity?", None),  # no user named: a conversation about others (LoCoMo) is left alone
    ("Lisbon", None),
])
def test_whose_present_a_question_asks_about(query, holder):
    assert rank.now_holder(query) == holder


@pytest.mark.parametrize(("text", "holder"), [
    ("My brother has a cat named Pixie", "brother"),
    ("My daughter Mira starts school in Porto next September, and I'm learning Portuguese", "daughter"),
    ("Mom still uses LastPass and the user helps her reset it", "mother"),
    ("parents' dog Biscuit just turned 3", "parents"),
    ("Gran has settled into assisted living", "grandmother"),
    ("Best friend Leila is single and on the apps", "friend"),
    ("[personal] Wife uses a Galaxy S23", "partner"),
    ("A colleague recommended Rust", "colleague"),
    ("My older sister's flat is in Leeds", "sister"),
    ("The user's dog is called Biscuit", None),  # a pet is no person: the user's own
    ("My wife and I moved to Lisbon", None),  # the user beside the relation
    ("My sister Ana and I run a bakery", None),
    ("Manager is Priya", None),  # who the user's manager is: a fact of the user's
    ("My manager is Priya Raman", None),
    ("Momentum is key", None), ("Daddy longlegs everywhere in the shed", "father"),  # a word list, not a parser
    ("I switched to neovim last month.", None),
    ("Has a friend who works at Initech", "friend"),  # the clause after "who" is the friend's
    ("[personal] I have two brothers who live in Leeds", "brother"),
    ("Has a friend in every city", None), ("Has a cat who hates the vet", None),  # no person, no "who" clause
])
def test_the_holder_of_a_statement_is_the_relation_it_opens_with(text, holder):
    assert rank.row_holder(text) == holder


def test_a_one_off_outing_is_a_past_outing_verb_with_a_past_time_and_no_change_word():
    assert rank.one_off("Visited Lisbon last week")
    assert rank.one_off("Gave a talk at the Northwind meetup on Friday")
    assert rank.one_off("Went to a jazz concert yesterday")
    assert not rank.one_off("Visited Lisbon for a conference")  # no time: may be a habit, left alone
    assert not rank.one_off("Moved to Lisbon last week")  # a change is a state
    assert not rank.one_off("Visits Porto every summer")
    assert not rank.one_off("Went to the gym yesterday, now goes every morning")


def test_now_factor_demotes_another_persons_row_and_a_one_off_only_for_a_question_about_now():
    brother = "My brother has a cat named Pixie"
    assert rank.now_factor("user", brother) == (rank.OTHER_HOLDER_FACTOR, "about the user's brother, not the user")
    assert rank.now_factor("brother", brother) == (1.0, None)  # the question is about him
    assert rank.now_factor("grandmother", "Aunt Siobhan lives alone in Kinsale")[0] == rank.OTHER_HOLDER_FACTOR
    assert rank.now_factor("grandmother", "Lives in Lisbon") == (1.0, None)  # the user's row: not demoted
    assert rank.now_factor("user", "Visited Lisbon last week")[0] == rank.ONE_OFF_FACTOR
    assert rank.now_factor(None, brother) == (1.0, None)  # not a question about now: nothing changes
    assert rank.now_factor("user", "The user's dog is called Biscuit") == (1.0, None)


# --- through recall, on a real index ---------------------------------------------------------------------------

TRIAL = [  # the new user's trial on main 053a215 (issue 27), one session a day
    ["I prefer green tea over coffee, and I prefer dark mode.", "I'm a data engineer living in Berlin.",
     "I switched to neovim last month."],
    ["My daughter Mira starts school in Porto next September, and I'm learning Portuguese",
     "The user's dog is called Biscuit", "My brother has a cat named Pixie"],
    ["I moved to Lisbon in October.", "I commute by bike to the office.", "Visited the Lisbon aquarium last week"],
]


@pytest.fixture
def trial(settings):
    s = dataclasses.replace(settings, embedder="hash:256", today=DAY)
    init_home(s)
    for i, facts in enumerate(TRIAL):
        write_facts(s, [Fact(f) for f in facts], day=DAY - dt.timedelta(days=len(TRIAL) - i), time="09:00",
                    session=f"sess{i}")
    emb = CountingEmbedder(256)
    run_index(s, embedder=emb)
    return s, emb


def _texts(hits):
    return [h.text for h in hits]


def test_the_users_pet_ranks_above_another_persons_pet_and_the_daughters_school(trial):
    """The trial: "what is the name of the user's pet" gave the Mira line first, "The user's dog is called
    Biscuit" third. The brother's cat shares "name" with the question (BM25: named) and ranks first without the
    rule; with it, the user's own dog does."""
    s, emb = trial
    hits = recall(s, emb, "what is the name of the user's pet", limit=5, log=False)
    texts = _texts(hits)
    assert texts[0] == "The user's dog is called Biscuit", [(h.text, h.score) for h in hits]
    mira = next((h for h in hits if h.text.startswith("My daughter Mira")), None)
    assert mira is None or texts.index(mira.text) > 0
    pixie = next(h for h in hits if h.text == "My brother has a cat named Pixie")
    assert pixie.now_factor == rank.OTHER_HOLDER_FACTOR and "brother" in pixie.now
    off = recall(dataclasses.replace(s, now_ranking=False), emb, "what is the name of the user's pet", limit=5,
                 log=False)
    assert off[0].text == "My brother has a cat named Pixie"  # the setting switches the rule off
    assert all(h.now_factor == 1.0 and h.now is None for h in off)
    # the scores still read best first (invariant 34)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_commute_fact_ranks_above_neovim_and_a_one_off_outing(trial):
    s, emb = trial
    hits = recall(s, emb, "how does the user commute", limit=5, log=False)
    assert hits[0].text == "I commute by bike to the office.", [(h.text, h.score) for h in hits]
    assert "I switched to neovim last month." not in _texts(hits)[:1]
    where = recall(s, emb, "where does the user live in Lisbon", limit=5, log=False)
    outing = next(h for h in where if h.text.startswith("Visited the Lisbon aquarium"))
    assert outing.now_factor == rank.ONE_OFF_FACTOR
    assert _texts(where).index("I moved to Lisbon in October.") < _texts(where).index(outing.text)


def test_a_question_about_the_past_or_a_date_is_ranked_as_before(trial):
    s, emb = trial
    for query in ("what pet did the user's brother have", "what was the name of the pet on 1 November, 2026"):
        hits = recall(s, emb, query, limit=5, log=False)
        assert hits and all(h.now_factor == 1.0 for h in hits), query


def test_the_setting_reads_true_or_false_and_names_a_bad_value(home):
    assert resolve_settings(home=home, env={"SUZENT_NOW_RANKING": "0"}).now_ranking is False
    assert resolve_settings(home=home, env={}).now_ranking is True
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[recall]\nnow_ranking = \"maybe\"\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match=r"\[recall\] now_ranking must be true or false, got 'maybe'"):
        resolve_settings(home=home, env={})


def test_the_resident_copy_ranks_questions_about_now_as_lance_does(trial):
    s, emb = trial
    plain = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    kept = ReadStore.open(s.paths.index_dir, emb.name, emb.dim)
    assert kept.keep_resident(wait=True)
    for query in ("what is the name of the user's pet", "how does the user commute",
                  "where does the user's daughter go to school", "where does the user live",
                  "where does the user live these days", "which pet does my brother have now"):
        a = search(plain, emb, query, limit=8, today=s.today)
        b = search(kept, emb, query, limit=8, today=s.today)
        assert [h.id for h in a] == [h.id for h in b], query
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)
        assert [(h.now_factor, h.now, h.capped) for h in a] == [(h.now_factor, h.now, h.capped) for h in b]


# --- the vault: no neighbour share between claims, the chain carries --------------------------------------------

def test_claims_of_a_vault_page_lend_no_neighbour_share(settings):
    """A category page files unrelated claims next to each other: "Hannah is organising the team offsite" took half
    the score of "Reports to Hannah" above it and outranked the new line manager (issue 27, blind2)."""
    s = dataclasses.replace(settings, embedder="hash:256", today=DAY)
    init_home(s)
    page = s.paths.vault_dir / "3_Personal" / "Context.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Context\ntype: personal\n---\n\n# Context\n\n## Claims\n\n"
                    "- Reports to Hannah on the payments team · source: 2026-10-05.md:5\n"
                    "- Hannah is organising the team offsite · source: 2026-10-10.md:5\n"
                    "- Line manager: Oleksandr (platform group) · source: 2026-10-17.md:5\n", encoding="utf-8")
    emb = CountingEmbedder(256)
    run_index(s, embedder=emb)
    hits = recall(s, emb, "who does the user report to", limit=5, log=False)
    assert hits and all(h.neighbour == 0 for h in hits), [(h.text, h.neighbour) for h in hits]
    assert "Hannah is organising the team offsite" not in _texts(hits)  # nothing lifted it in


def _claim(hid: str, content: str, relevance: float, *, superseded: bool = False) -> Hit:
    importance = 0.1 if superseded else 0.5
    return Hit(id=hid, content=content, score=rank.final_score(relevance, importance), source="notebook:P.md",
               source_type="notebook", source_file="P.md", locator=0, date=None, session=None, category=None,
               tags=[], importance=importance, relevance=relevance,
               factors={"section": "Previously" if superseded else "Claims"})


def test_the_current_claim_carries_its_history_and_its_own_match_above_a_related_claim():
    """The question found the subject twice, in its history and in its current value: the current claim scores
    the better relevance plus half the other, so it outranks a related claim that matched better than either
    alone (blind: "Pays for iCloud+ 200 GB" above "Cancelled ChatGPT Plus and subscribed to Claude Pro")."""
    old = _claim("old", "- Pays for ChatGPT Plus (until 2026-03-17)", 0.6854, superseded=True)
    new = _claim("new", "- Cancelled ChatGPT Plus and subscribed to Claude Pro instead (since 2026-03-17); "
                        "previously: Pays for ChatGPT Plus", 0.6488)
    other = _claim("other", "- Pays for iCloud+ 200 GB", 0.9227)
    carry_to_current([other, new, old])
    assert new.score == pytest.approx(0.6854 + 0.5 * 0.6488) and new.score > other.score
    assert old.score == pytest.approx(0.6854 - 0.2)  # the history keeps its demotion


# --- the slot (issue 27, second pass: rank.now_factor with slots, recall.own_first) -----------------------------

@pytest.mark.parametrize(("text", "factor"), [
    ("Ngozi Achterberg is the boss of the database team.", rank.NAMED_OTHER_FACTOR),  # a named third party
    ("Marek Duda is still the line manager for the two interns.", rank.NAMED_OTHER_FACTOR),
    ("Annika works as a radiographer.", rank.NAMED_OTHER_FACTOR),
    ("Leontine's closest friend at work is Malik.", rank.NAMED_OTHER_FACTOR),  # a name owns the subject
    ("My climbing partner Joost lives in Groningen.", rank.OTHER_HOLDER_FACTOR),  # a relation with a modifier
    ("My one-on-ones are with Felix Rautio; he approves my on-call swaps.", 1.0),  # the user's
    ("Jasper from accounts is the colleague I go to with everything.", 1.0),  # names the user: the user's
    ("Home is Utrecht", 1.0), ("Rent is 1,240 a month", 1.0),  # a common noun opens it, not a name
    ("Lives in Lisbon", 1.0), ("Prefers dark mode", 1.0),  # a note with the user as its unstated subject
    ("Married Marco in a small ceremony on Saturday", 1.0),  # a verb opens it, then a name: the user's
    ("Tower's got an RTX 4070 Super in it", 1.0), ("Go's been demoted to legacy stuff", 1.0),  # "'s": has / is
    ("My business partner and I run a shop", 1.0),  # the user beside the relation
])
def test_a_present_question_about_the_user_ranks_a_named_third_party_and_a_modified_relation_lower(text, factor):
    query = "Where does the user live these days?"
    assert rank.now_factor(rank.now_holder(query), text, query, slots=True)[0] == factor
    assert rank.now_factor(rank.now_holder(query), text, query, slots=False)[0] in (1.0, rank.OTHER_HOLDER_FACTOR)


def test_a_name_the_question_uses_is_not_a_third_party():
    query = "What is the user's relationship with Annika now?"
    assert rank.now_factor(rank.now_holder(query), "Annika works as a radiographer.", query, slots=True) == (1.0, None)


def test_another_numbered_item_of_the_frame_the_question_names_ranks_lower():
    query = "When does milestone 2 of the Tern rewrite land?"
    assert rank.query_items(query) == {"milestone": 2}
    assert rank.now_factor(rank.now_holder(query), "Tern rewrite milestone 3 is now set for 15 May.", query,
                           slots=True) == (rank.OTHER_ITEM_FACTOR, "another item (milestone 3) than the one the question names")
    for same in ("Tern milestone 2 slid yet again; 24 April is the date we're holding to.",
                 "Milestone 02 and milestone 3 both moved"):  # the item asked about (also when another is named)
        assert rank.now_factor(None, same, query, slots=True) == (1.0, None)
    assert rank.query_items("What did the user do in 2024?") == {}  # a year is a date, not an item
    assert rank.query_items("what is due on October 13") == {}  # a month and its day too
    assert rank.now_factor(None, "Tern rewrite milestone 3 is now set for 15 May.", query, slots=False) == (1.0, None)


def test_a_phrase_that_only_says_now_is_no_search_word():
    from suzent_cli.recall import fts_query

    assert fts_query("What exercise does the user do these days?") == "exercise"
    assert fts_query("Where does the user live at the moment, currently?") == "live"
    assert fts_query("these days") == "days"  # nothing else to search for: the phrase is searched as before


NEIGHBOURS = [  # one session: the last row is embedded and BM25-searched with the two before it (context_window 2)
    ["I cycle to work", "The user's dog is called Biscuit", "My brother has a cat named Pixie",
     "Visited the Lisbon aquarium last week"],
]


def test_a_row_matching_a_present_question_only_through_its_neighbours_ranks_below_the_rows_that_match(settings):
    """The trial's class (item 3): "Visited the Lisbon aquarium last week" shares nothing with "what is the name of
    the user's pet"; its context (the dog and the brother's cat before it) and the cat's share put it first. On its
    own it matches neither by word nor by meaning, so it ranks below every row that does."""
    s = dataclasses.replace(settings, embedder="hash:256", today=DAY)
    init_home(s)
    write_facts(s, [Fact(f) for f in NEIGHBOURS[0]], day=DAY, time="09:00", session="s0")
    emb = CountingEmbedder(256)
    run_index(s, embedder=emb)
    query = "what is the name of the user's pet"
    off = recall(dataclasses.replace(s, now_slots=False), emb, query, limit=5, log=False)
    on = recall(s, emb, query, limit=5, log=False)
    aquarium = "Visited the Lisbon aquarium last week"
    assert _texts(off).index(aquarium) < _texts(off).index("The user's dog is called Biscuit"), [
        (h.text, h.score) for h in off]  # what the rule changes
    outing = next(h for h in on if h.text == aquarium)
    assert outing.capped and ("Biscuit" in outing.capped or "Pixie" in outing.capped)
    assert all(_texts(on).index(aquarium) > _texts(on).index(t) for t in
               ("The user's dog is called Biscuit", "My brother has a cat named Pixie"))
    assert [h.score for h in on] == sorted((h.score for h in on), reverse=True)  # invariant 34
    hit = outing.as_dict(explain=True)
    assert hit["capped"] == outing.capped
    assert recall(s, emb, "what was the name of the pet on 3 November, 2026", limit=5, log=False)[0].capped is None


def test_the_slot_setting_reads_true_or_false(home):
    assert resolve_settings(home=home, env={"SUZENT_NOW_SLOTS": "0"}).now_slots is False
    assert resolve_settings(home=home, env={}).now_slots is True


def test_a_row_about_another_person_ranks_below_the_users_own_match_and_scores_stay_in_order():
    """blind3: "My sister lives in York with her partner" ×0.5 still outscored the user's "Home base these days is
    a narrowboat moored outside Skipton" (0.486 against 0.151): another person's row ranks below every checked row
    of the user's that matches on its own. A row of the user's that matches only through its neighbours does not
    count as a floor, and a row outside the check is left alone."""
    from suzent_cli.recall import own_first

    query = "Where is the user living at the moment?"
    holder = rank.now_holder(query)
    sister = _claim("sister", "- My sister lives in York with her partner", 0.972)
    sister.now_factor, sister.now = rank.now_factor(holder, "My sister lives in York with her partner", query,
                                                    slots=True)
    sister.relevance *= sister.now_factor
    sister.score = rank.final_score(sister.relevance, sister.importance)
    home = _claim("home", "- Home base these days is a narrowboat moored outside Skipton", 0.151)
    towpath = _claim("towpath", "- I walk the towpath most mornings before work", 0.249)
    hits = [sister, towpath, home]
    own_first(hits, {"sister": True, "home": True, "towpath": False})
    assert sister.capped and "Skipton" in sister.capped and sister.score < home.score
    assert towpath.capped and towpath.score < home.score  # matched only through its neighbours
    assert home.capped is None and home.score == pytest.approx(0.151)
    assert sister.relevance == pytest.approx(sister.score)  # neutral importance: the score is the relevance
    unchecked = _claim("far", "- My brother lives in Leeds", 0.9)
    unchecked.now = "about the user's brother, not the user"
    own_first([unchecked, home], {"home": True})
    assert unchecked.capped is None and unchecked.score == pytest.approx(0.9)


def test_a_relation_the_question_names_is_not_another_holder():
    query = "does the user have a partner"
    assert rank.now_factor(rank.now_holder(query), "Partner Jonah moved in last month", query, slots=True) == (
        1.0, None)
    assert rank.now_factor(rank.now_holder(query), "Partner Jonah moved in last month", query,
                           slots=False)[0] == rank.OTHER_HOLDER_FACTOR  # the first pass's reading
    gym = "what gym membership does the user have"
    assert rank.now_factor(rank.now_holder(gym), "Partner has a PureGym membership", gym, slots=True)[0] == (
        rank.OTHER_HOLDER_FACTOR)


@pytest.mark.parametrize(("text", "is_intent"), [
    ("Wants to run a marathon", True), ("I want to reach B2 Italian by December.", True),
    ("Wants a hybrid or EV", True), ("I'm thinking of building a new hutch for the garden.", True),
    ("Asked how long a thesis acknowledgements section should be", True),
    ("Finance asked for a post-mortem of the billing migration", True),
    ("Wants replies in English from here on, the team reads the chat logs", False),  # a standing preference
    ("I stopped running and swim laps at lunchtime instead.", False), ("Lives in Lisbon", False),
])
def test_an_intention_or_a_reported_question_is_not_a_standing_state(text, is_intent):
    """Every intention and reported question in the seven readable update sets is a distractor ("Wants to learn
    dbt properly" for "which tools does the user use"): for a question about the user they rank lower."""
    assert rank.intent(text) is is_intent
    query = "which notes app does the user use now"
    expected = (rank.INTENT_FACTOR, rank.INTENT_WHY) if is_intent else (1.0, None)
    assert rank.now_factor(rank.now_holder(query), text, query, slots=True) == expected
    assert not rank.about_another(rank.INTENT_WHY)  # the user's own row: a factor, not placed below the matches


def test_a_row_whose_own_text_cannot_be_embedded_is_left_unchecked_and_the_recall_still_answers(settings):
    """The own-match check embeds a few rows' text once per recall; if the embedder fails on one, the recall
    answers as without the check for those rows (never capped, never an error)."""
    s = dataclasses.replace(settings, embedder="hash:256", today=DAY)
    init_home(s)
    write_facts(s, [Fact(f) for f in NEIGHBOURS[0]], day=DAY, time="09:00", session="s0")
    run_index(s, embedder=CountingEmbedder(256))
    failing = CountingEmbedder(256, fail_on="aquarium")
    hits = recall(s, failing, "what is the name of the user's pet", limit=5, log=False)
    outing = next(h for h in hits if h.text == "Visited the Lisbon aquarium last week")
    assert outing.capped is None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_rows_own_text_is_embedded_once_per_process(settings):
    """The own-match check costs an encode of the checked rows' text the first time they are asked about; a warm
    process (a server answering the hooks) asks again for nothing more than the query."""
    s = dataclasses.replace(settings, embedder="hash:256", today=DAY)
    init_home(s)
    write_facts(s, [Fact(f) for f in NEIGHBOURS[0]], day=DAY, time="09:00", session="s0")
    run_index(s, embedder=CountingEmbedder(256))
    emb = CountingEmbedder(256)
    first = recall(s, emb, "what is the name of the user's pet", limit=5, log=False)
    once = emb.texts
    again = recall(s, emb, "what is the name of the user's pet", limit=5, log=False)
    assert emb.texts - once == 1  # the query alone
    assert [(h.id, h.score, h.capped) for h in again] == [(h.id, h.score, h.capped) for h in first]
