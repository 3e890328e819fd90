"""Issue 27, item 2: supersession read on structure (whose attribute, which part), and the trial's cases end to end.

Unit tests of :mod:`suzent_cli.vault.structure` and of the same-subject test's use of it; then the new user's
trial on ``main`` 053a215, each case through the real CLI (capture on its own day, the offline dream, reconcile,
promote) with the hash embedder, reading the vault pages and MEMORY.md as a person would.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from suzent_cli.promote import RankedClaim, one_value_per_slot
from suzent_cli.vault import structure
from suzent_cli.vault.pages import CLAIMS, PREVIOUSLY, read_page
from suzent_cli.vault.supersede import REPLACES, UNRELATED, best_replaced, compare, names_another_old_value, read
from tests.conftest import invoke

# --- whose attribute -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "who"), [
    ("I live in Leeds", "user"),
    ("Prefers window seats on flights", "user"),
    ("My laptop is a ThinkPad", "user"),
    ("My manager is Deepa Rao", "user"),  # the user's manager, whose value is a name
    ("My wife and I moved to Leeds", "user"),
    ("My partner and I both work night shifts", "user"),
    ("Brother lives in Leeds with his two kids", "brother"),
    ("My daughter Mira starts school in Porto next September", "daughter"),
    ("Parents' dog Biscuit just turned 3", "parents"),
    ("Neighbour's cat Mochi visits the garden", "neighbour"),
    ("Best friend Marta is getting married in June", "friend"),
    ("My mum still uses LastPass", "mother"),
    ("Has a friend who works at Initech", "friend"),
])
def test_the_holder_is_the_subject_when_it_is_another_person(text, who):
    assert structure.holder(text) == who


@pytest.mark.parametrize(("text", "expected"), [
    ("I prefer green tea over coffee, and I prefer dark mode.", ("I prefer green tea over coffee", "I prefer dark mode")),
    ("I'm a data engineer living in Berlin.", ("I'm a data engineer", "living in Berlin")),
    ("My daughter Mira starts school in Porto next September, and I'm learning Portuguese",
     ("My daughter Mira starts school in Porto next September", "I'm learning Portuguese")),
    ("I've quit tea completely; I drink coffee now.", ("I've quit tea completely", "I drink coffee now")),
    # one fact whose words are joined: never split
    ("I like salt and vinegar crisps", ("I like salt and vinegar crisps",)),
    ("I live with my wife and two kids", ("I live with my wife and two kids",)),
    ("My partner and I both work night shifts", ("My partner and I both work night shifts",)),
    ("I work on billing and payments at Acme", ("I work on billing and payments at Acme",)),
])
def test_a_combined_statement_is_read_as_its_parts(text, expected):
    assert structure.parts(text) == expected


def test_the_remainder_keeps_the_parts_still_true_and_only_names_the_parts_that_ended():
    text = "I'm a data engineer living in Berlin."
    assert structure.remainder(text, {1}) == "I'm a data engineer."
    assert structure.only(text, {1}) == "Living in Berlin."
    assert structure.remainder(text, {0, 1}) is None  # the whole changed: nothing left
    assert structure.remainder("Lives in Leeds", {0}) is None  # one part: nothing to keep


# --- the same-subject test reads them ----------------------------------------------------------------------------

def test_a_move_replaces_only_the_residence_part_of_a_combined_claim():
    v = compare("I'm a data engineer living in Berlin.", "I moved to Lisbon last month.")
    assert v.relation == REPLACES and v.parts == frozenset({1})
    assert best_replaced("I moved to Lisbon last month.", ["I'm a data engineer living in Berlin."]) == 0


def test_someone_elses_attribute_never_replaces_the_users_nor_the_reverse():
    assert compare("I live in Leeds", "Brother lives in Leeds with his two kids").relation == UNRELATED
    assert compare("I have two cats, Pixel and Byte", "Sister has a cat named Pixie now").relation == UNRELATED
    assert compare("Smokes about half a pack a day", "Partner still smokes out on the balcony").relation == UNRELATED
    # naming the other holder relates them: the user's dog Rufus, whose death ends "has a beagle called Rufus"
    assert compare("Has a 14-year-old beagle called Rufus", "Rufus passed away last weekend").relation == REPLACES


class _CloseJudge:
    """A judge that finds every value close (the MiniLM trial: Lisbon is a city like Porto)."""

    def closeness(self, newer, value, olders, *, strict=True):
        return [5.0 for _ in olders]


def test_a_model_judge_is_never_asked_about_another_persons_attribute():
    # the trial: "I moved to Lisbon" superseded "My daughter Mira starts school in Porto" through the model
    olds = [read("My daughter Mira starts school in Porto next September.")]
    assert best_replaced(read("I moved to Lisbon last month."), olds, _CloseJudge()) is None
    assert compare(olds[0], "I moved to Lisbon last month.", _CloseJudge()).relation == UNRELATED


def test_a_new_modifier_of_the_same_thing_with_a_now_replaces():
    v = compare("I prefer green tea over coffee, and I prefer dark mode.", "I use light mode in every editor now.")
    assert v.relation == REPLACES and v.parts == frozenset({1})
    assert compare("Prefers dark mode in every app", "Keeps the e-reader in night mode at bedtime").relation \
        != REPLACES  # no change said: a second mode, not a new value


@pytest.mark.parametrize("wording", [
    "Added backlog item {n} to project Heron",
    "Backlog item {n} for project Heron: set up the pipeline",
])
def test_numbered_items_of_one_list_never_replace_one_another(wording):
    olds = [wording.format(n=f"{n:02d}") for n in range(1, 6)]
    for k in range(1, 6):
        assert best_replaced(wording.format(n="06"), olds[:k]) is None
    # even with a change word: moving item 04 says nothing about item 03
    assert compare("Backlog item 03 for Heron: billing export", "Moved backlog item 04 for Heron to the next sprint"
                   ).relation == UNRELATED
    # the same item's value, changed: still a change
    assert compare("Sprint 12 ends on March 3", "Sprint 12 ends on March 10").relation == REPLACES


def test_memory_md_keeps_one_value_per_subject():
    day = dt.date(2026, 11, 1)
    claims = [RankedClaim("Preferences", "3_Personal/Preferences.md", 0, "I prefer green tea over coffee", 0, 0.0,
                          1, day, day),
              RankedClaim("Profile", "3_Personal/Profile.md", 0, "I'm a data engineer living in Berlin.", 0, 0.0,
                          1, day, day),
              RankedClaim("Profile", "3_Personal/Profile.md", 1, "The user's dog is called Biscuit", 0, 0.0,
                          1, day, day)]
    claims.append(RankedClaim("Profile", "3_Personal/Profile.md", 2, "I moved out of Berlin to Lisbon", 0, 0.0, 1,
                              day + dt.timedelta(days=3), day + dt.timedelta(days=3)))
    recent = ["I've quit tea completely; I drink coffee now."]
    kept, still = one_value_per_slot(claims, recent)
    texts = [c.text for c in kept]
    assert "I prefer green tea over coffee" not in texts  # the newer fact (not yet dreamed) replaced it
    assert "I'm a data engineer." in texts and "The user's dog is called Biscuit" in texts
    assert "I'm a data engineer living in Berlin." not in texts
    assert still == recent


# --- the trial, end to end ---------------------------------------------------------------------------------------

TRIAL = [
    ("01", "[preference] I prefer green tea over coffee, and I prefer dark mode."),
    ("01", "[personal] I'm a data engineer living in Berlin."),
    ("01", "[personal] The user's dog is called Biscuit."),
    ("02", "[context] Added backlog item 01 to project Heron"),
    ("02", "[context] Added backlog item 02 to project Heron"),
    ("03", "[context] Added backlog item 03 to project Heron"),
    ("03", "[context] Added backlog item 04 to project Heron"),
    ("04", "[context] Added backlog item 05 to project Heron"),
    ("04", "[context] Added backlog item 06 to project Heron"),
    ("05", "[personal] My daughter Mira starts school in Porto next September."),
    ("06", "[technical] I use light mode in every editor now."),
    ("07", "[personal] I've quit tea completely; I drink coffee now."),
    ("08", "[personal] I moved to Lisbon last month."),
]


def _claims(vault: Path) -> tuple[list[str], list[str]]:
    current, history = [], []
    for page in sorted(vault.rglob("*.md")):
        if page.parent == vault:
            continue
        p = read_page(page)
        current += [c.text for c in p.claims(CLAIMS)]
        history += [c.text for c in p.claims(PREVIOUSLY)]
    return current, history


@pytest.fixture(scope="module")
def trial_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("trial")
    env = {"SUZENT_EMBEDDER": "hash:64"}
    for day, fact in TRIAL:
        r = invoke(home, "--now", f"2026-11-{day}T10:00:00", "capture", "--fact", fact, env_extra=env)
        assert r.returncode == 0, r.stderr
    for args in (("dream", "--force", "--engine", "offline", "--no-lint"), ("reconcile",), ("promote",)):
        r = invoke(home, "--now", "2026-11-20T10:00:00", *args, env_extra=env)
        assert r.returncode == 0, r.stderr
    return home


def test_trial_the_light_mode_fact_filed_elsewhere_replaces_the_dark_mode_preference(trial_home):
    current, history = _claims(trial_home / "notebook")
    assert not any("dark mode" in c for c in current)
    assert any("dark mode" in h for h in history)  # history, never deleted
    assert any(c.startswith("I use light mode in every editor now") for c in current)


def test_trial_memory_md_never_states_both_tea_and_coffee(trial_home):
    memory = (trial_home / "notebook" / "MEMORY.md")
    memory = memory if memory.is_file() else next(trial_home.rglob("MEMORY.md"))
    text = memory.read_text(encoding="utf-8")
    assert "I've quit tea completely; I drink coffee now." in text
    assert "I prefer green tea" not in text
    assert "dark mode" not in text


def test_trial_a_move_keeps_the_job(trial_home):
    current, history = _claims(trial_home / "notebook")
    assert "I'm a data engineer." in current  # the part still true stays current
    assert any(c.startswith("I moved to Lisbon last month") and "previously: Living in Berlin" in c for c in current)
    assert "I'm a data engineer living in Berlin." in history


def test_trial_backlog_items_never_replace_one_another(trial_home):
    current, history = _claims(trial_home / "notebook")
    for n in range(1, 7):
        assert f"Added backlog item 0{n} to project Heron" in current
    assert not any("backlog" in h for h in history)


def test_trial_a_move_never_ends_the_daughters_school(trial_home):
    current, _ = _claims(trial_home / "notebook")
    assert "My daughter Mira starts school in Porto next September." in current


# --- a value moved, a value named -----------------------------------------------------------------------------

@pytest.mark.parametrize(("older", "newer"), [
    ("The platform team has 6 engineers", "Platform team headcount: 11 engineers after the merger with infra"),
    ("The admin portal runs Django 3.2", "Admin portal: Django 5.1, deployed Tuesday"),
    ("Thesis draft due to the supervisor on March 20", "Supervisor wants the thesis draft by April 24"),
])
def test_the_same_thing_with_a_new_number_or_date_in_other_words_is_a_change(older, newer):
    assert compare(older, newer).relation == REPLACES


@pytest.mark.parametrize(("older", "newer"), [
    ("Has 2 cats", "Wants 3 cats"),  # another verb: another statement
    ("Uses Python 3.11", "Uses Python 3.12 and Go 1.22"),  # one name in common
    ("The main database is PostgreSQL 14", "Nightly backups of the main database go to S3"),  # S3 is a name
    ("Thesis draft due May 15", "Conference abstract due May 1"),
    ("Sprint 12 retro went well", "Sprint 13 retro is on Friday"),
])
def test_a_number_in_a_statement_about_something_else_changes_nothing(older, newer):
    assert compare(older, newer).relation != REPLACES


def test_a_change_that_names_what_it_replaces_ends_only_a_claim_holding_it():
    assert compare("Uses npm for the frontend", "Uses pnpm instead of npm").relation == REPLACES
    assert compare("frontend build: node v20 LTS (pinned in .nvmrc)", "Uses pnpm instead of npm").relation \
        != REPLACES
    assert best_replaced("Uses pnpm instead of npm", ["frontend build: node v20 LTS"], _CloseJudge()) is None
    # "from now on" names no old value
    assert not names_another_old_value(read("Wants replies in English"), read("From now on reply in French please"))


def test_a_transcript_speaker_is_not_a_subject_but_a_note_label_is():
    assert read("Caroline: I moved to Lisbon last year").body == "i moved to lisbon last year"
    assert read("Caroline: Yeah, painting is so relaxing for me these days").body.startswith("yeah")
    assert read("Admin portal: Django 5.1").body == "admin portal django 5.1"


@pytest.mark.parametrize(("older", "newer"), [
    ("Reports to Hannah on the payments team", "Line manager: Oleksandr (platform group)"),
    ("Address: flat in Kreuzberg, Berlin", "Home is Utrecht, NL"),
    ("Uses LastPass for passwords", "Ditched LastPass after the breach, everything lives in 1Password"),
    ("Budget for the new car is about 25k", "Car budget crept up to 32k after test-driving the hybrid"),
])
def test_more_ways_of_saying_a_slot_or_a_change(older, newer):
    assert compare(older, newer).relation == REPLACES


def test_a_participle_with_a_preposition_is_a_state_not_an_event():
    assert not read("Employed by the city council, planning department").event
    assert not read("Based in Leeds").event
    assert read("Adopted Biscuit from a shelter").event
    assert compare("Hannah is organising the team offsite", "Line manager: Oleksandr (platform group)").relation \
        != REPLACES  # Hannah's offsite is no manager statement


def test_another_act_or_another_team_with_a_number_is_no_moved_value():
    assert compare("Picks the kids up from school at 3 pm", "Drops the kids at school at 8:20").relation != REPLACES
    assert compare("The platform team has 6 engineers", "The data team has 4 engineers").relation != REPLACES
    assert compare("Our Pro plan costs $29 per month", "The Team plan costs $99 per month").relation != REPLACES
    assert compare("Goes to the gym Monday, Wednesday and Friday mornings",
                   "Goes to the climbing gym with friends on Saturdays").relation != REPLACES


def test_a_reported_question_states_nothing():
    assert compare("Daily driver is a ThinkPad X1 Carbon",
                   "Asked whether the X1 Carbon battery can be replaced at home").relation == UNRELATED


def test_a_moved_number_needs_the_same_thing_named_the_same_way():
    assert compare("Tax return due April 30", "Tax payment due June 15").relation != REPLACES
    assert compare("Conference abstract due May 1", "Conference talk slides due May 20").relation != REPLACES


def test_a_thing_owned_by_name_is_that_names_and_a_change_of_the_user_does_not_end_it():
    assert structure.holder("Quillfeather's main product is written in Elixir.") == "quillfeather"
    assert structure.holder("It's raining") == structure.holder("Today's standup is at 9") == "user"
    assert best_replaced("I left Quillfeather and joined Marrow Health last week.",
                         ["I work at Quillfeather, a small invoicing startup.",
                          "Quillfeather's main product is written in Elixir."]) == 0
    assert compare("Anouk's clinic treats mostly horses.",
                   "Anouk and I tied the knot at the town hall, so she's my wife.").relation == UNRELATED


def test_a_new_value_of_the_kind_the_older_gave_is_the_better_match():
    assert best_replaced("I now go into the office only on Tuesdays and Thursdays.",
                         ["The office is in Canary Wharf.", "I work from the office Monday to Wednesday."]) == 1
    assert compare("Grant application due March 20",
                   "Progress report for the existing grant due March 31").relation != REPLACES


def test_blind5_wrong_supersessions_read_and_fixed():
    """blind5's wrong supersessions, read after its totals-only report (BLIND_SETS.md): a count is no new date, an
    intention changes nothing yet, a ticket key after "Ticket" names which ticket."""
    assert compare("Quarry beta testers get their builds on 6 May.",
                   "The Quarry beta has 300 testers signed up.").relation != REPLACES
    assert compare("Clover crossed the rainbow bridge in April; the hutch is empty.",
                   "I'm thinking of building a new hutch for the garden.").relation == UNRELATED
    assert compare("Ticket PLV-202 for the Plover app is assigned to me.",
                   "Ticket PLV-204 for the Plover app is assigned to me.").relation == UNRELATED
    # two intentions: a plan may replace a plan
    assert compare("Wants to learn Rust this year", "Wants to learn Go this year instead").relation == REPLACES


# --- the second trial (a fresh user on the merged code) ----------------------------------------------------------

def test_a_move_with_someone_else_is_the_users_move_and_ends_only_the_residence(tmp_path):
    home = tmp_path / "h"
    env = {"SUZENT_EMBEDDER": "hash:64"}
    for now, fact in [("2026-11-01T09:00", "[personal] I work as a nurse at St James hospital"),
                      ("2026-11-01T09:01", "[personal] I live in Leeds"),
                      ("2026-11-02T09:00", "[personal] My brother and I moved to York")]:
        assert invoke(home, "--now", now, "capture", "--fact", fact, env_extra=env).returncode == 0
    r = invoke(home, "--now", "2026-11-03T12:00", "dream", "--engine", "offline", "--force", env_extra=env)
    assert r.returncode == 0, r.stderr
    current, history = _claims(home / "notebook")
    assert "I work as a nurse at St James hospital" in current
    assert "I live in Leeds" in history


@pytest.mark.parametrize(("older", "newer", "relation"), [
    ("My manager is Priya Raman", "Priya moved to Berlin", UNRELATED),  # Priya's move, not a new manager
    ("My manager is Priya Raman", "Priya left the company last week", REPLACES),  # an ending: the user's changes
    ("I have a cat called Miso", "I also have a cat called Tofu now", UNRELATED),  # one more, none replaced
    ("I'm working on project Kite", "I'm now also working on project Osprey", UNRELATED),
])
def test_a_named_things_own_change_and_one_more_of_a_kind_replace_nothing(older, newer, relation):
    assert compare(older, newer).relation == relation


def test_memory_md_keeps_one_value_among_facts_not_consolidated_yet():
    kept, recent = one_value_per_slot([], ["I moved to Lisbon last week.", "I'm a data engineer living in Berlin."])
    assert kept == [] and recent == ["I moved to Lisbon last week.", "I'm a data engineer."]


def test_a_turn_with_a_lone_surrogate_escape_is_captured_with_a_replacement_character(tmp_path):
    home = tmp_path / "h"
    r = invoke(home, "--now", "2026-11-01T09:01", "capture", "--turn-from", "-",
               input='{"user": "I live in Oslo \\ud83d and I like tea."}')
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    log = next(home.rglob("2026-11-01.md")).read_text(encoding="utf-8")
    assert "I live in Oslo \ufffd" in log and "I like tea." in log


def test_a_couples_news_does_not_end_what_one_of_them_does():
    assert compare("Chris works as a pilot", "Chris and I got married in June").relation == UNRELATED
    assert compare("I have a girlfriend, Anika", "Anika and I tied the knot on Saturday!").relation == REPLACES


@pytest.mark.parametrize(("older", "newer", "relation"), [
    # the user leaving a named thing ends the user's tie to it, not what is true of the thing
    ("Tallow & Finch runs its pipelines on Airflow.", "I left Tallow & Finch and joined Orrin Health.", UNRELATED),
    ("Lisbon is lovely in spring.", "I left Lisbon for Porto last month.", UNRELATED),
    ("I'm a data engineer at Tallow & Finch.", "I left Tallow & Finch and joined Orrin Health.", REPLACES),
    ("Works at Acme.", "I left Acme and joined Initech.", REPLACES),
    ("Acme employs me as a designer.", "I left Acme and joined Initech.", REPLACES),  # the user is in it
    # a question someone else reports states nothing, whoever asks it and whatever cue word it holds
    ("I invoice freelance clients at the end of each month.",
     "A new client asked whether 70 euros an hour still applies.", UNRELATED),
    ("My rate is 70 euros an hour.", "My old teammate Priya wondered if the rate went up.", UNRELATED),
])
def test_a_named_things_own_state_and_a_reported_question_are_not_ended(older, newer, relation):
    """blind6, read for its wrong supersessions: "I left Tallow & Finch" ended a fact about the firm's pipelines;
    "A new client asked whether …" ended the invoicing habit on the cue word "new"."""
    assert compare(older, newer).relation == relation


def test_an_activity_put_on_the_back_burner_is_ended_by_the_new_one_not_a_neighbour_of_it():
    """blind6: "Japanese went on the back burner; Korean is my evening study these days" was read as Japanese's
    own news (a name in the older statement) and ended the Anki habit instead of the evening Japanese."""
    new = "Japanese went on the back burner; Korean is my evening study these days."
    olds = ["I write Python at work and I'm learning Japanese in the evenings.", "I study vocabulary with Anki flashcards."]
    verdict = compare(olds[0], new)
    assert verdict.relation == REPLACES and verdict.parts == frozenset({1})  # the job part stays current
    assert best_replaced(new, olds, None) == 0
