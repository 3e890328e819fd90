"""The offline same-subject test (suzent_cli/vault/supersede.py) and its three users: the rules engine supersedes
the claim a newer statement replaces and keeps distractors current, lint reports the pairs it cannot decide, and
recall ranks the newer of two same-subject rows first before any dream. Wording here is not from the benchmark's
scenario files."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import pytest

from conftest import invoke, log, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream.lint import rules_contradictions
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import bootstrap, supersede
from suzent_cli.vault.pages import read_page
from suzent_cli.vault.supersede import COMPATIBLE, REPLACES, UNDECIDED, UNRELATED, best_replaced, compare

D = dt.date.fromisoformat

REPLACING = [
    # (older, newer): a change cue about an entity both name
    ("Plays tennis on Wednesdays", "No longer plays tennis, the club closed"),
    ("Our team uses Trello for planning", "We switched planning from Trello to a whiteboard"),
    ("The staging server runs Ubuntu 20.04", "The staging server was upgraded to Ubuntu 24.04"),
    ("Has a parrot called Kiwi", "Kiwi passed away in the night"),
    ("Rides a scooter to the lab", "Sold the scooter, walking to the lab now"),
    ("The design review is on Friday", "The design review was moved to Monday"),
    ("Drinks energy drinks while coding", "Gave up energy drinks"),
    ("Reads the news on the tablet", "Reads the news on paper instead of the tablet"),
    ("Uses Python 3.11 for the API", "Upgraded the API to Python 3.12"),  # the target shares "python", not 3.12
    ("Works at Acme", "Got a new job at Initech"),  # "new" about what the older one names (job → work)
    ("I drink tea every morning", "I drink coffee now"),  # a bare "now" sharing the older one's head (drink)
    ("Prefers dark mode", "Now prefer light mode"),
]
# The same words with another number, date or version: a quantity has one current value, no cue needed. Which
# one replaces the other is the time order alone (callers pass the older first).
QUANTITIES = [
    ("The support team has 4 engineers", "The support team has 7 engineers"),
    ("Grant report due to the funder on May 12", "Grant report due to the funder on June 2"),
    ("Tablet is an iPad Air 4", "Tablet is an iPad Air 5"),
]
NOT_REPLACING = [
    # (older, newer, expected relation): refinements, events, other entities, no change said
    ("Likes tea", "Likes green tea", COMPATIBLE),
    ("Visited Oslo for a workshop", "Now lives in Oslo", UNRELATED),  # a past event stays true
    ("Adopted Kiwi from a breeder", "Kiwi passed away in the night", UNRELATED),
    ("Works at Acme", "Visited the Initech office", UNRELATED),
    ("Plays tennis on Wednesdays", "Watches chess streams in the evening", UNRELATED),
    ("Plays tennis on Wednesdays", "Plays tennis on Wednesdays.", UNRELATED),  # a restatement
    ("Prefers tea in the afternoon", "Prefers coffee in the afternoon", UNDECIDED),  # no cue: a person decides
    ("The project uses Stripe", "The project ships every two weeks", UNRELATED),  # same entity, other attribute
    # a change that ends at the value already held is told again, not a change (seen in the LoCoMo e2e test)
    ("I live in Lisbon with my two cats.", "I moved to Lisbon from Oslo in 2019.", COMPATIBLE),
    ("Lives in Lisbon", "Moved to Lisbon last year", COMPATIBLE),
    # "new" about a thing the older statement does not name is no change of it (seen trying issue 16 as a user:
    # the dream moved "Has a dog named Rex" under "## Previously")
    ("Has a dog named Rex", "Bought a new collar for Rex", UNRELATED),
    # a bare "now" in a statement that shares one word, not the older one's head, with it: news about the entity,
    # no change of the older fact (each moved a current fact under "## Previously" when alone on its page)
    ("Lives in Lisbon", "Lisbon is now very expensive", UNRELATED),
    ("Has a dog named Rex", "Took Rex to the vet, he is fine now", UNRELATED),
    ("Prefers dark mode in the editor", "Now uses the editor for Go too", UNRELATED),
    ("Has family in Vancouver", "I'm living in Vancouver now", UNRELATED),
    # another number in a past event is another event, not a new value
    ("Ran the 10k in 52 minutes", "Ran the 10k in 49 minutes", UNRELATED),
    # other words besides the number: not the same statement
    ("Uses Python 3.11", "Uses Python 3.12 and Go 1.22", UNRELATED),
]


@pytest.mark.parametrize(("older", "newer"), REPLACING)
def test_a_change_cue_about_a_shared_entity_replaces(older, newer):
    verdict = compare(older, newer)
    assert verdict.relation == REPLACES, verdict
    assert verdict.score > 1 and verdict.why


@pytest.mark.parametrize(("older", "newer"), QUANTITIES)
def test_the_same_statement_with_another_quantity_replaces_in_time_order(older, newer):
    verdict = compare(older, newer)
    assert verdict.relation == REPLACES and "another number" in verdict.why, verdict
    assert best_replaced(newer, ["Likes long walks", older]) == 1


@pytest.mark.parametrize(("older", "newer", "relation"), NOT_REPLACING)
def test_distractors_do_not_replace(older, newer, relation):
    assert compare(older, newer).relation == relation


def test_the_older_statement_never_replaces_the_newer():
    for older, newer in REPLACING:
        assert compare(newer, older).relation != REPLACES or supersede.read(older).cue, (older, newer)


def test_best_replaced_picks_the_closest_claim_and_refuses_a_tie():
    olds = ["Owns a cargo bike", "The cargo bike has a child seat", "Keeps a kayak in the garage"]
    assert best_replaced("Sold the cargo bike last spring", olds) == 0
    assert best_replaced("Sold the kayak", olds) == 2
    assert best_replaced("Learned to juggle", olds) is None
    tie = ["Uses a Kindle for novels", "Uses a Kindle for papers"]
    assert best_replaced("Replaced the Kindle with a Kobo", tie) is None


def test_stem_folds_inflections_and_frame_synonyms():
    assert supersede.stem("driving") == supersede.stem("drives") == supersede.stem("drive")
    assert supersede.stem("replies") == supersede.stem("reply")
    assert supersede.stem("job") == supersede.stem("works")
    assert supersede.stem("3.12") == "3.12"


# --- the rules engine ------------------------------------------------------------------------------------------

def _dream(s) -> None:
    DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)


def test_rules_engine_supersedes_a_generic_pair_and_keeps_distractors(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Plays tennis on Wednesdays", "[personal] Visited the tennis museum in Paris")
    log(s, "2026-06-02", "[personal] Watches tennis with friends")
    log(s, "2026-06-05", "[personal] No longer plays tennis on Wednesdays, the club closed")
    _dream(s)
    page = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    current = [c.text for c in page.claims()]
    assert "Visited the tennis museum in Paris" in current and "Watches tennis with friends" in current
    assert "No longer plays tennis on Wednesdays, the club closed (since 2026-06-05); previously: Plays tennis on " \
           "Wednesdays" in current
    assert [(c.text, c.until) for c in page.claims("Previously")] == [("Plays tennis on Wednesdays", D("2026-06-05"))]


def test_rules_engine_replaces_nothing_on_a_tie_and_lint_reports_both_pairs(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[technical] Uses a Kindle for novels", "[technical] Uses a Kindle for papers")
    log(s, "2026-06-04", "[technical] Replaced the Kindle with a Kobo")
    _dream(s)
    rel = "2_Wiki/Concepts/Technical.md"
    page = read_page(s.paths.vault_dir / rel)
    assert [c.text for c in page.claims()] == ["Uses a Kindle for novels", "Uses a Kindle for papers",
                                               "Replaced the Kindle with a Kobo"]
    assert page.claims("Previously") == []
    found = rules_contradictions(s.paths.vault_dir, D("2026-06-10")).contradictions
    for old in ("Uses a Kindle for novels", "Uses a Kindle for papers"):  # each (old, new) pair, by name
        assert any(old in line and "Replaced the Kindle with a Kobo" in line for line in found), found
    assert read_page(s.paths.vault_dir / rel).meta["review"] == "needs-review"


# --- lint ------------------------------------------------------------------------------------------------------

@pytest.fixture
def vault(tmp_path):
    v = tmp_path / "notebook"
    bootstrap(v)
    return v


def _page(vault, rel: str, body: str) -> None:
    """Write the vault page ``rel`` (its folder made if needed) with ``body``."""
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text(body, encoding="utf-8")


def test_lint_flags_an_undecided_pair_and_not_a_refinement(vault):
    _page(vault, "3_Personal/Preferences.md",
          "# Preferences\n\n## Claims\n\n"
          "- Prefers tea in the afternoon · source: 2026-06-01.md:3\n"
          "- Likes jazz · source: 2026-06-01.md:4\n"
          "- Likes modal jazz · source: 2026-06-02.md:3\n"
          "- Prefers coffee in the afternoon · source: 2026-06-03.md:3\n")
    findings = rules_contradictions(vault, D("2026-06-10"))
    assert len(findings.contradictions) == 1
    line = findings.contradictions[0]
    assert "Prefers tea in the afternoon" in line and "Prefers coffee in the afternoon" in line
    assert "jazz" not in line
    page = read_page(vault / "3_Personal/Preferences.md")
    assert "> [!warning] Conflicting claims: Prefers tea in the afternoon / Prefers coffee in the afternoon" in page.body
    again = rules_contradictions(vault, D("2026-06-10"))
    assert again.contradictions == findings.contradictions and again.pages == []  # the callout is not added twice


def test_lint_leaves_a_change_the_dream_already_placed(vault):
    _page(vault, "3_Personal/Profile.md",
          "# Profile\n\n## Claims\n\n"
          "- Watches tennis with friends · source: 2026-06-02.md:3\n"
          "- No longer plays tennis (since 2026-06-05); previously: Plays tennis · source: 2026-06-05.md:3\n"
          "\n## Previously\n\n- Plays tennis (until 2026-06-05) · source: 2026-06-01.md:3\n")
    assert rules_contradictions(vault, D("2026-06-10")).contradictions == []


# --- recall before any dream -----------------------------------------------------------------------------------

@dataclass
class Row:
    text: str
    date: str | None
    score: float


def test_prefer_newer_moves_the_newer_row_just_above_the_older_and_leaves_the_rest():
    rows = [Row("Plays tennis on Wednesdays", "2026-06-01", 0.9),
            Row("Watches chess streams", "2026-06-08", 0.8),
            Row("No longer plays tennis, the club closed", "2026-06-05", 0.7),
            Row("Visited the tennis museum", "2026-06-09", 0.6),
            Row("Plays tennis on Fridays", None, 0.5)]
    out = supersede.prefer_newer(rows)
    # the older row stays next to its replacement; the unrelated chess row moves down one place, not above it
    assert [r.text for r in out] == ["No longer plays tennis, the club closed", "Plays tennis on Wednesdays",
                                     "Watches chess streams", "Visited the tennis museum",
                                     "Plays tennis on Fridays"]
    assert [r.score for r in out] == [0.7, 0.9, 0.8, 0.6, 0.5]  # each row keeps its own score
    assert [r.text for r in rows][0] == "Plays tennis on Wednesdays"  # the input list is left as it was


def test_prefer_newer_reorders_only_the_first_rows():
    rows = [Row(f"Reads the paper on page {i}", "2026-06-01", 1 - i / 10) for i in range(6)] + \
        [Row("Switched from the paper to a news app", "2026-06-09", 0.2)]
    assert supersede.prefer_newer(rows, window=5) == rows  # the newer row is 7th: outside the window, no change


def test_recall_prefers_the_newer_near_duplicate_before_any_dream(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[preference] Listens to podcasts on the morning run")
    log(s, "2026-06-06", "[preference] Switched to audiobooks on the morning run")
    env = {"SUZENT_EMBEDDER": "hash:64"}
    assert invoke(home, "index", env_extra=env).returncode == 0
    out = invoke(home, "recall", "listens to podcasts on the morning run", "--mode", "hybrid", "--json",
                 env_extra=env)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)["hits"]
    texts = [h["content"] for h in hits]
    assert texts.index("Switched to audiobooks on the morning run") < \
        texts.index("Listens to podcasts on the morning run")


def test_pairs_to_review_ignores_an_anchor_too_common_to_name_a_subject():
    """A word shared by more than MAX_ANCHOR_CLAIMS claims pairs nothing on its own (lint over a big vault must not
    compare every claim with every other, nor report thousands of pairs); a real pair still comes back."""
    from suzent_cli.vault.supersede import MAX_ANCHOR_CLAIMS, pairs_to_review

    many = [(i, f"Runs the project report number {i}", None) for i in range(MAX_ANCHOR_CLAIMS + 60)]
    pair = [("old", "Prefers tea in the afternoon", D("2026-06-01")),
            ("new", "Prefers coffee in the afternoon", D("2026-06-03"))]
    found = pairs_to_review(many + pair)
    assert [(o, n) for o, n, _ in found] == [("old", "new")]


@pytest.mark.parametrize(("older", "newer"), [
    ("Team size is 5", "Team size is 7?"),  # a number change asked, not stated
    ("Prefers dark mode", "Do I now prefer light mode?"),
    ("Lives in Lisbon", "Moved to Berlin?"),
    ("Is the team size 5?", "Team size is 7"),  # a question held nothing to replace
])
def test_a_question_neither_replaces_nor_is_replaced(older, newer):
    assert supersede.compare(older, newer).relation == supersede.UNRELATED
    assert supersede.best_replaced(newer, [older]) is None


def test_the_model_is_not_asked_about_a_question():
    class Judge:  # would say "close" to anything it is asked
        def closeness(self, newer, value, olders, *, strict=True):
            raise AssertionError("asked")

    assert supersede.compare("I drink tea every morning", "I switched to coffee?", Judge()).relation == \
        supersede.UNRELATED
    assert supersede.best_replaced("I switched to coffee?", ["I drink tea every morning"], Judge()) is None


@pytest.mark.parametrize(("spec", "warned"), [("no-such-model", True), ("hash:64", False)])
def test_a_dream_whose_model_cannot_load_decides_by_words_and_says_so(tmp_path, spec, warned):
    """A broken or unknown model never fails the dream: the words decide (tea stays current), and one warning
    says why; a hash embedder (a choice: it cannot tell kinds apart) is not a problem to warn about."""
    from suzent_cli.dream.rules import RulesEngine

    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", "[preference] I drink tea every morning")
    log(s, "2026-06-09", "[preference] I switched to coffee")
    runner = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[],
                         engine_factory=lambda name: RulesEngine(embedder_spec=spec))
    result = runner.tick(force=True)
    assert result.outcome == "ingested"
    assert any("decided by words alone" in w and "no-such-model" in w for w in result.warnings) == warned
    page = (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert "## Previously" not in page and "I drink tea every morning" in page


@pytest.mark.parametrize(("older", "newer", "relation"), [
    ("Draft due on March 20", "Draft due on April 3", supersede.REPLACES),  # the module doc's own example
    ("My daughter is 5", "My daughter is 6", supersede.REPLACES),  # too few words for a frame, only the number moved
    ("Has 2 cats", "Wants 3 cats", supersede.UNRELATED),  # another verb: not the same statement
    ("Paid 20 dollars for lunch", "Paid 15 dollars for lunch", supersede.UNRELATED),  # two lunches: past events
    ("Likes tea", "Likes green tea", supersede.COMPATIBLE),
])
def test_a_short_statement_with_another_number_or_date(older, newer, relation):
    assert supersede.compare(older, newer).relation == relation


@pytest.mark.parametrize(("older", "newer", "relation"), [
    ("Sprint 12 retro went well", "Sprint 13 retro went well", supersede.UNRELATED),  # two sprints
    ("Issue #12 blocks the release", "Issue #14 blocks the release", supersede.UNRELATED),
    ("Enjoys tea with friend number 1 in Lisbon", "Enjoys tea with friend number 2 in Lisbon", supersede.UNRELATED),
    ("Sprint 12 ends on March 3", "Sprint 12 ends on March 10", supersede.REPLACES),  # one sprint, its date moved
    ("The platform team has 6 engineers", "The platform team has 8 engineers", supersede.REPLACES),
])
def test_a_number_that_names_which_one_is_not_a_changed_value(older, newer, relation):
    assert supersede.compare(older, newer).relation == relation


def test_a_dream_keeps_many_numbered_things_current(tmp_path):
    """Facts that differ only by which friend they name all stay current (a 660-fact home retired 550 of them)."""
    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", *[f"[preference] Enjoys tea with friend number {i} in Lisbon" for i in range(30)])
    runner = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[])
    assert runner.tick(force=True).outcome == "ingested"
    text = (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert "## Previously" not in text and text.count("Enjoys tea with friend number") == 30


@pytest.mark.parametrize(("older", "newer", "relation"), [
    # a quantity that moved, said with a verb of change and the new number
    ("Rent is 980 pounds a month", "Rent went up to 1,040 pounds a month", REPLACES),
    ("The gym fee is 30 euros", "The gym fee rose to 35 euros", REPLACES),
    ("The support team has 6 people", "The support team grew to 9 people after the merger", REPLACES),
    ("Budget for the offsite is 20k", "Budget for the offsite was cut by 10% this quarter", REPLACES),
    # the same verbs without a number are no quantity: a trip, a childhood, a haircut
    ("Lives in Scotland", "Went up to Scotland for the weekend", UNRELATED),
    ("Lives in Porto", "Grew up in Porto", UNRELATED),
    ("Rent is 980 pounds a month", "Went down to the letting agent about the rent", UNRELATED),
])
def test_a_quantity_said_to_move_replaces_only_with_a_number(older, newer, relation):
    assert compare(older, newer).relation == relation


@pytest.mark.parametrize(("text", "expected"), [
    ("Employed by Ferrovia Logistics in the billing team", ("employer", "ferrovia logistics in the billing team")),
    ("Employer: Ferrovia Logistics, billing team", ("employer", "ferrovia logistics")),
    ("Job title: staff accountant", ("role", "staff accountant")),
    ("Home address: 4 Quay Street, Galway", ("residence", "4 quay street")),
    ("My time zone: CET", ("timezone", "cet")),
    # a label that is not one of the attribute names is a speaker or a topic, not a subject
    ("Caroline: I moved to Paris last spring", None),
    ("Work: remote on Fridays", None),
    ("Title: The Left Hand of Darkness", None),
    # a note's value is a short phrase; a sentence after the label is not one
    ("Employer: the company my uncle started many years ago in a garage", None),
])
def test_an_attribute_note_states_the_same_subjects_as_a_sentence(text, expected):
    from suzent_cli.vault.claims import subject_of

    assert subject_of(text) == expected


def test_an_attribute_note_replaces_the_sentence_it_updates_and_keeps_the_same_value():
    assert compare("Employed by Ferrovia Logistics in the billing team",
                   "Employer: Quayside Bank, risk team").relation == REPLACES
    assert compare("Works as a bookkeeper", "Job title: staff accountant").relation == REPLACES
    assert compare("Works at Ferrovia Logistics", "Employer: Ferrovia Logistics, billing team").relation != REPLACES
