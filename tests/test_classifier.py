"""The write-path classifier (invariant 5b) and its place in turn captures.

Table-driven checks of :func:`suzent_cli.capture.classify.classify` against recalled rows, then capture in process
(confirmations sidecar, revision tag, every failure degrading to a written fact), then end to end: a real LanceDB
index (hash embedder) and ``suzent capture --turn-from`` through the CLI, in-process.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import CountingEmbedder, invoke
from suzent_cli.archive import Fact, list_logs, parse_log
from suzent_cli.capture import extract_and_write, write_facts
from suzent_cli.capture.classify import CONFIRM, Classification, classify, classify_all, new_specifics
from suzent_cli.capture.known import recall_set_for
from suzent_cli.config import resolve_settings
from suzent_cli.index.api import run_index
from suzent_cli.recall import Hit
from suzent_cli.vault.state import read_confirmations

LOG = "archive:2026-06-01.md"
PAGE = "notebook:3_Personal/Profile.md"


def hit(content: str, source: str | None = LOG, locator: int = 5) -> Hit:
    label = source.split(":", 1)[0] if source else None
    source_type = {"archive": "archive_log", "notebook": "notebook", None: "legacy"}.get(label, "core_file")
    return Hit(id="x", content=content, score=1.0, source=source, source_type=source_type,
               source_file=source.split(":", 1)[1] if source else None, locator=locator, date=None, session=None,
               category=None, tags=[], importance=0.5)


VAULT_CHUNK = ("## Claims\n\n"
               "- Lives in Berlin (confirmed 3x, last 2026-06-09) · source: 2026-06-01.md:5\n"
               "- Prefers dark mode in every editor and terminal (confirmed 2x, last 2026-06-02) · source: 2026-06-02.md:7\n"
               "- Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7")

# (name, fact, recalled rows, expected outcome, expected matched text)
CASES = [
    ("exact repeat of a log row", "Drinks oolong tea every morning",
     [hit("Drinks oolong tea every morning")], "confirmation", "Drinks oolong tea every morning"),
    ("repeat, other case and final stop", "drinks Oolong tea every morning.",
     [hit("Drinks oolong tea every morning")], "confirmation", "Drinks oolong tea every morning"),
    ("repeat of a claim bullet inside a vault chunk", "Prefers dark mode in every editor and terminal.",
     [hit(VAULT_CHUNK, PAGE, 0)], "confirmation", "Prefers dark mode in every editor and terminal"),
    ("a vault chunk is compared per claim, not whole", "Lives in Berlin",
     [hit(VAULT_CHUNK, PAGE, 0)], "confirmation", "Lives in Berlin"),
    ("prose in a vault chunk is not a claim", "Lives in Berlin",
     [hit("# Profile\n\nLives in Berlin", PAGE, 0)], "new", None),
    ("the best durable match wins", "Drinks oolong tea every morning",
     [hit("Drinks green tea every evening"), hit("Drinks oolong tea every morning", locator=9)], "confirmation",
     "Drinks oolong tea every morning"),
    # new specifics make a revision however similar the prose
    ("new date (superset)", "Moved to Berlin in 2024", [hit("Moved to Berlin")], "revision", "Moved to Berlin"),
    ("new proper noun (superset)", "Moved to Berlin with Sam", [hit("Moved to Berlin")], "revision", "Moved to Berlin"),
    ("changed number", "Runs the quarterly infrastructure cost review with the finance team every 4 months",
     [hit("Runs the quarterly infrastructure cost review with the finance team every 3 months")], "revision", None),
    ("changed date", "Renewed the passport at the consulate and it is valid until 2031-05-07",
     [hit("Renewed the passport at the consulate and it is valid until 2031-05-01")], "revision", None),
    ("new path", "Keeps the personal journal as markdown files in the ~/journal folder at home",
     [hit("Keeps the personal journal as markdown files in the journal folder at home")], "revision", None),
    ("changed version", "Uses Python 3.12 for all the backend services at work and in side projects",
     [hit("Uses Python 3.11 for all the backend services at work and in side projects")], "revision", None),
    ("new quoted string",
     'Named the home wifi network after a favourite old band from the seventies "abba" and wrote the long password '
     "on a sticky note that lives on the fridge door next to the shopping list",
     [hit("Named the home wifi network after a favourite old band from the seventies and wrote the long password "
          "on a sticky note that lives on the fridge door next to the shopping list")], "revision", None),
    ("changed proper noun",
     "Is married to Anne and they go hiking in the mountains near the city with friends from university every summer",
     [hit("Is married to Anna and they go hiking in the mountains near the city with friends from university every "
          "summer")], "revision", None),
    ("similar, a word changed", "Works at Acme as a senior engineer", [hit("Works at Acme as an engineer")],
     "revision", "Works at Acme as an engineer"),
    # a negation is never a confirmation
    ("negation of a long claim", "Is not allergic to peanuts and tree nuts and carries an epinephrine pen everywhere",
     [hit("Is allergic to peanuts and tree nuts and carries an epinephrine pen everywhere")], "revision", None),
    ("contracted negation", "Doesn't like coffee", [hit("Likes coffee")], "new", None),
    # only durable sources can be matched
    ("match only in MEMORY.md (facts)", "Drinks oolong tea every morning",
     [hit("Drinks oolong tea every morning", "facts:MEMORY.md", 0)], "new", None),
    ("match only in persona.md", "Drinks oolong tea every morning",
     [hit("- Drinks oolong tea every morning", "persona:persona.md", 0)], "new", None),
    ("match only in user.md", "Drinks oolong tea every morning",
     [hit("Drinks oolong tea every morning", "user:user.md", 0)], "new", None),
    ("legacy row without a source", "Drinks oolong tea every morning",
     [hit("Drinks oolong tea every morning", None)], "new", None),
    ("a plain string has no provenance", "Drinks oolong tea every morning", ["Drinks oolong tea every morning"],
     "new", None),
    ("unrelated", "Has two kids", [hit("Drinks oolong tea every morning")], "new", None),
    ("empty recall set", "Has two kids", [], "new", None),
]


@pytest.mark.parametrize("name,fact,rows,outcome,matched", CASES, ids=[c[0] for c in CASES])
def test_classification_table(name, fact, rows, outcome, matched):
    c = classify(Fact(fact), rows)
    assert c.outcome == outcome, c
    if matched is not None:
        assert c.matched == matched
    if outcome == "confirmation":
        assert c.score >= CONFIRM and c.source in (LOG, PAGE) and c.locator == rows[-1].locator
    if outcome == "new":
        assert c.matched is None and c.source is None


@pytest.mark.parametrize("name", ["changed number", "changed date", "new path", "changed version",
                                  "new quoted string", "changed proper noun"])
def test_new_specific_is_what_blocks_a_near_identical_restatement(name):
    """These pairs are ≥ 0.97 similar: only the specifics guard keeps them from being confirmations."""
    _, fact, rows, _, _ = next(c for c in CASES if c[0] == name)
    c = classify(fact, rows)
    assert c.score >= CONFIRM and c.reason.startswith("new specific"), c


def test_negation_reason_names_polarity():
    _, fact, rows, _, _ = next(c for c in CASES if c[0] == "negation of a long claim")
    c = classify(fact, rows)
    assert c.score >= CONFIRM and "polarity" in c.reason


def test_new_specifics_kinds():
    assert new_specifics("Moved to Berlin in 2024", "Moved to Berlin") == ["2024"]
    assert new_specifics("Moved to Berlin", "moved to berlin") == []  # a proper noun the match has, lower-cased
    assert new_specifics("Berlin is home", "Home") == []  # a capital at a sentence start is not a proper noun
    assert new_specifics("I think I like it", "like it") == []  # nor is the pronoun
    assert new_specifics('Calls it "the box"', "Calls it the box") == []  # the quote's words are in the match
    assert new_specifics('Calls it "the box"', "Calls it the cube") == ["the box"]
    assert new_specifics("Keeps notes in ~/notes/work and todo.md", "Keeps notes") == ["~/notes/work", "todo.md"]
    assert new_specifics("Uses v3.12 now", "Uses v3.11 now") == ["3.12"]


class Exploding:
    @property
    def content(self):
        raise RuntimeError("index went away mid-read")

    source = LOG
    source_type = "archive_log"


def test_any_exception_inside_classification_is_new():
    c = classify(Fact("Drinks oolong tea every morning"), [Exploding()])
    assert c.outcome == "new" and "classifier failed" in c.reason

    def broken():
        yield hit("Drinks oolong tea every morning")
        raise OSError("disk")

    assert [c.outcome for c in classify_all([Fact("a"), Fact("b")], broken())] == ["new", "new"]


# --- capture, in process ----------------------------------------------------------------------------------------

TURN = json.dumps({"user": "I live in Berlin with my partner and our cat. Can you recommend a bakery?",
                   "assistant": "Sure."})
FACT = "I live in Berlin with my partner and our cat."


@pytest.fixture
def s(tmp_path):
    return resolve_settings(home=tmp_path / "home", today="2026-06-10", env={"SUZENT_EMBEDDER": "hash:64"})


def log_facts(settings) -> list[str]:
    return [f.content for day, p in list_logs(settings.paths.archive_dir)
            for f in parse_log(p.read_text(encoding="utf-8"), day)]


def test_a_confirmation_goes_to_the_sidecar_not_the_log(s):
    result = extract_and_write(s, TURN, extractor_name="offline", known_facts=lambda text: [hit(FACT)],
                               day=dt.date(2026, 6, 4), time="10:00", session="s9")
    assert result.path is None and result.facts == [] and log_facts(s) == []
    [(fact, c)] = result.confirmations
    assert (fact.content, c.outcome, c.source, c.locator) == (FACT, "confirmation", LOG, 5)
    [record] = read_confirmations(s.paths.state_dir)
    assert set(record) == {"ts", "day", "time", "content", "category", "matched", "source", "locator", "score", "session"}
    assert (record["day"], record["content"], record["matched"], record["source"], record["locator"],
            record["session"], record["category"]) == ("2026-06-04", FACT, FACT, LOG, 5, "s9", "personal")
    assert dt.datetime.fromisoformat(record["ts"]).tzinfo is not None


def test_a_revision_is_written_with_the_revision_tag(s):
    result = extract_and_write(s, TURN, extractor_name="offline", known_facts=lambda text: [hit("I live in Berlin")],
                               time="10:00")
    assert [c.outcome for c in result.outcomes] == ["revision"]
    assert result.facts[0].tags == ("revision",)
    assert f"- [personal] {FACT} `revision`" in result.path.read_text(encoding="utf-8")
    assert read_confirmations(s.paths.state_dir) == []


@pytest.mark.parametrize("lookup", [
    lambda text: (_ for _ in ()).throw(RuntimeError("index is down")),
    lambda text: [Exploding()],
    lambda text: [],
])
def test_recall_failure_or_empty_set_means_the_fact_is_written(s, lookup):
    result = extract_and_write(s, TURN, extractor_name="offline", known_facts=lookup, time="10:00")
    assert [c.outcome for c in result.outcomes] == ["new"] and log_facts(s) == [FACT]
    assert read_confirmations(s.paths.state_dir) == []


def test_no_index_at_all_means_new_and_written(s):
    result = extract_and_write(s, TURN, extractor_name="offline", known_facts=recall_set_for(s), time="10:00")
    assert [c.outcome for c in result.outcomes] == ["new"] and result.warnings == [] and log_facts(s) == [FACT]


def test_sidecar_failure_logs_the_restatement_instead(s, monkeypatch):
    import suzent_cli.vault.state as state

    def fail(*a, **k):
        raise OSError("read-only state dir")

    monkeypatch.setattr(state, "append_confirmations", fail)
    result = extract_and_write(s, TURN, extractor_name="offline", known_facts=lambda text: [hit(FACT)], time="10:00")
    assert log_facts(s) == [FACT] and result.confirmations == []
    assert any("confirmations not recorded" in w for w in result.warnings)


def test_fact_lines_are_never_classified(s):
    (s.paths.index_dir).mkdir(parents=True)
    result = write_facts(s, [Fact(FACT)], time="10:00")
    assert result.outcomes == [] and log_facts(s) == [FACT]


def test_claude_prompt_and_classifier_share_one_recall_set(tmp_path):
    from fake_anthropic import running, tool_use_reply

    known = [hit("Moved to Lisbon in May 2026."), hit("Prefers coffee", "facts:MEMORY.md", 0)]
    calls = []

    def lookup(text):
        calls.append(text)
        return known

    facts = {"facts": [{"content": "Moved to Lisbon in May 2026.", "category": "personal", "tags": ["location"]},
                       {"content": "Prefers tea over coffee now.", "category": "preference", "tags": []}]}
    with running([(200, tool_use_reply(("record_facts", facts)))]) as api:
        settings = resolve_settings(home=tmp_path / "home", today="2026-06-01",
                                    env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": api.url})
        result = extract_and_write(settings, TURN, extractor_name="claude", known_facts=lookup, time="10:00")
        system = api.requests[0]["body"]["system"]
    system = system if isinstance(system, str) else " ".join(b["text"] for b in system)
    assert len(calls) == 1 and result.known_facts == 2
    assert "- Moved to Lisbon in May 2026.\n- Prefers coffee" in system
    assert [f.content for f, _ in result.confirmations] == ["Moved to Lisbon in May 2026."]
    assert [(f.content, c.outcome) for f, c in zip(result.facts, result.outcomes, strict=False)] == \
        [("Prefers tea over coffee now.", "new")]


# --- end to end: real LanceDB, the CLI in-process -------------------------------------------------------------


def turn_json(sentence: str) -> str:
    return json.dumps({"user": f"{sentence} Any good parks nearby?", "assistant": "Yes, a few."})


def test_cli_restatement_of_an_indexed_fact_is_a_confirmation(s):
    home = s.paths.home
    env = {"SUZENT_EMBEDDER": "hash:64"}
    first = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-", "--json", "--date", "2026-06-03",
                    input=turn_json(FACT), env_extra=env)
    assert first.returncode == 0, first.stderr
    assert [f["outcome"] for f in json.loads(first.stdout)["facts"]] == ["new"]
    run_index(s, embedder=CountingEmbedder())

    again = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-", "--json", "--session", "s2",
                    input=turn_json("Oh, " + FACT.rstrip(".") + "!"), env_extra=env)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["captured"], summary["confirmations"], summary["path"]) == (0, 1, None)
    [fact] = summary["facts"]
    assert (fact["outcome"], fact["logged"], fact["matched"], fact["source"], fact["score"]) == \
        ("confirmation", False, FACT, "archive:2026-06-03.md", 1.0)
    assert log_facts(s) == [FACT] and not s.paths.log_path(dt.date(2026, 6, 10)).exists()
    [record] = read_confirmations(s.paths.state_dir)
    assert (record["source"], record["session"], record["day"]) == ("archive:2026-06-03.md", "s2", "2026-06-10")

    mixed = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-",
                    input=turn_json(FACT + " I work at Acme as a nurse."), env_extra=env)
    assert mixed.returncode == 0, mixed.stderr
    assert "captured 1 fact(s)" in mixed.stdout and "1 confirmation(s) recorded (not logged)" in mixed.stdout
    assert log_facts(s) == [FACT, "I work at Acme as a nurse."] and len(read_confirmations(s.paths.state_dir)) == 2


def test_cli_vault_claim_restatement_is_a_confirmation(s):
    page = s.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: Profile\n---\n\n" + VAULT_CHUNK.replace("Lives in Berlin",
                                                                         "I live in Berlin with my partner and our cat")
                    + "\n", encoding="utf-8")
    run_index(s, embedder=CountingEmbedder())
    home = s.paths.home
    r = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-", "--json", input=turn_json(FACT),
                env_extra={"SUZENT_EMBEDDER": "hash:64"})
    assert r.returncode == 0, r.stderr
    [fact] = json.loads(r.stdout)["facts"]
    assert (fact["outcome"], fact["source"], fact["matched"]) == \
        ("confirmation", "notebook:3_Personal/Profile.md", "I live in Berlin with my partner and our cat")
    assert log_facts(s) == []


def test_cli_a_broken_index_never_blocks_the_write(s):
    versions = s.paths.index_dir / "archival_memories.lance" / "_versions"  # a manifest that is no table
    versions.mkdir(parents=True)  # (an empty folder is "no index yet" now: nothing to look up, nothing to warn of)
    (versions / "1.manifest").write_bytes(b"not a manifest")
    home = s.paths.home
    r = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-", "--json", input=turn_json(FACT),
                env_extra={"SUZENT_EMBEDDER": "hash:64"})
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert [f["outcome"] for f in summary["facts"]] == ["new"] and summary["captured"] == 1
    assert any("known-fact lookup skipped" in w for w in summary["warnings"])
    assert log_facts(s) == [FACT]


def test_twelve_restatements_over_a_week_are_one_log_line_and_eleven_confirmations(s):
    days = [dt.date(2026, 6, 3) + dt.timedelta(days=i % 7) for i in range(12)]
    phrasings = [FACT, FACT.rstrip(".") + "!", "Oh, " + FACT.lower(), "Btw " + FACT]
    for i, day in enumerate(days):
        result = extract_and_write(s, turn_json(phrasings[i % len(phrasings)]), extractor_name="offline",
                                   known_facts=recall_set_for(s), day=day, time=f"{10 + i}:00", session=f"s{i}")
        if i == 0:
            assert [c.outcome for c in result.outcomes] == ["new"]
            run_index(s, embedder=CountingEmbedder())
        else:
            assert result.path is None and [c.outcome for _, c in result.confirmations] == ["confirmation"], result
    assert log_facts(s) == [FACT]
    records = read_confirmations(s.paths.state_dir)
    assert len(records) == 11 and {r["matched"] for r in records} == {FACT}
    assert {r["source"] for r in records} == {"archive:2026-06-03.md"}
    assert [r["day"] for r in records] == [d.isoformat() for d in days[1:]]


def test_classification_dict_shape():
    assert set(Classification("new").as_dict()) == {"outcome", "matched", "source", "locator", "score", "reason"}
