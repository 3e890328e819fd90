"""The LoCoMo harness (benchmarks/locomo.py, benchmarks/locomo_e2e.py) on a tiny invented conversation in LoCoMo's
shape (no LoCoMo data): turns captured through the offline extractor keep their turn as session, survival is
counted per category, and every hit — a log row, a vault claim after the dream, a MEMORY.md line — maps back to
the turn that said it. The hash:64 embedder keeps it model-free. One check reads the real dev split and skips when
it is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_script

DEV = Path("/work/shared/data/locomo/locomo-dev.json")


def _harness():
    return load_script("benchmarks/locomo.py", "locomo")


L = _harness()

# An invented two-person chat in LoCoMo's JSON shape. Turns the offline extractor keeps: D1:1 (reworded: the
# leading "Oh by the way," is trimmed), D1:3, D2:1 (two facts), D2:3. Dropped: D1:2 (a question), D2:2 (small talk).
SAMPLE = [{
    "sample_id": "synthetic-1",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Ben",
        "session_1_date_time": "9:05 am on 3 March, 2021",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "Oh by the way, I live in Lisbon with my two cats."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice! How long have you been there?"},
            {"speaker": "Ada", "dia_id": "D1:3", "text": "I moved to Lisbon from Oslo in 2019."},
        ],
        "session_2_date_time": "6:40 pm on 20 April, 2021",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1",
             "text": "I work as a marine biologist. My favourite animal is the octopus."},
            {"speaker": "Ada", "dia_id": "D2:2", "text": "Thanks, that sounds great!"},
            {"speaker": "Ben", "dia_id": "D2:3", "text": "I have been learning the cello for years."},
        ],
        "session_3_date_time": "1:00 pm on 1 May, 2021",  # a date without a session: ignored
    },
    "qa": [
        {"question": "Where does Ada live?", "evidence": ["D1:1", "D1:3"], "category": 4},
        {"question": "What does Ben do for work?", "evidence": ["D2:1"], "category": 1},
        {"question": "How long had Ada lived there?", "evidence": ["D1:2"], "category": 2},
        {"question": "Which instrument does Ben learn?", "evidence": ["D2:3", "D9:9"], "category": 3},
        {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5},
    ],
}]
KEPT = {"D1:1": 1, "D1:3": 1, "D2:1": 2, "D2:3": 1}


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def embedder():
    from suzent_cli.index.embed import load_embedder

    return load_embedder("hash:64")


def _logged(settings) -> dict[str, list[str]]:
    from suzent_cli.archive import list_logs, read_log

    out: dict[str, list[str]] = {}
    for _, path in list_logs(settings.paths.archive_dir):
        for f in read_log(path):
            out.setdefault(f.session, []).append(f.content)
    return out


def _hit(content, *, session=None, source_type="archive_log"):
    from suzent_cli.recall import Hit

    return Hit(id="x", content=content, score=1.0, source=None, source_type=source_type, source_file=None,
               locator=None, date=None, session=session, category=None, tags=[], importance=0.5)


def test_the_loader_keeps_each_turn_s_words_and_session(data):
    (conv,) = L.load_conversations(data)
    assert conv.said["D1:1"] == (1, "Oh by the way, I live in Lisbon with my two cats.")
    assert conv.said["D2:3"][0] == 2
    assert [t[2] for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert len(conv.questions) == 4 and conv.skipped_ids == 1  # category 5 left out, D9:9 dangling


def test_extractor_capture_logs_each_kept_turn_under_its_dia_id_on_its_session_date(data, tmp_path, embedder):
    (conv,) = L.load_conversations(data)
    settings, _, _ = L.build_home(conv, tmp_path / "home", embedder, capture="extractor")
    logged = _logged(settings)
    assert {s: len(v) for s, v in logged.items()} == KEPT
    assert logged["D1:1"] == ["I live in Lisbon with my two cats."]  # reworded by the extractor
    assert sorted(p.name for p in settings.paths.archive_dir.rglob("*.md")) == ["2021-03-03.md", "2021-04-20.md"]

    survival = L.locomo_e2e.Survival(L.CATEGORIES)
    survival.add(conv, L.locomo_e2e.load_survival(settings.paths.home))
    s = survival.summary()
    assert (s["turns"], s["turns_with_facts"], s["turns_dropped"], s["facts"]) == (6, 4, 2, 5)
    assert s["by_category"]["single-hop"]["evidence_kept"] == 2
    assert s["by_category"]["temporal"]["evidence_kept"] == 0
    assert s["by_category"]["temporal"]["recall_ceiling"] == 0.0
    assert s["all"]["evidence"] == 5 and s["all"]["evidence_kept"] == 4
    assert s["all"]["recall_ceiling"] == 75.0  # (1 + 1 + 0 + 1) / 4 questions


def test_every_hit_maps_back_to_the_turn_that_said_it_before_and_after_the_dream(data, tmp_path, embedder):
    from suzent_cli.index.store import ReadStore
    from suzent_cli.recall import search

    (conv,) = L.load_conversations(data)
    settings, _, _ = L.build_home(conv, tmp_path / "home", embedder, capture="extractor")
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    prov = L.provenance_map(settings)
    # recall returns only rows relevant to the query (no padding), so ask for each logged fact by its own words
    hits = [h for texts in _logged(settings).values() for text in texts
            for h in search(store, embedder, text, mode="hybrid", limit=25)]
    turns = L.ranked_turns(hits, prov)
    assert set(turns) == set(KEPT)  # every logged fact is a hit, and only kept turns appear
    for h in hits:  # a log row shows exactly the turn whose words it holds
        (turn,) = L.hit_turns(h, prov)
        assert h.text.rstrip(".") in conv.said[turn][1]

    L.dream_home(settings, embedder, conv)
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    prov = L.provenance_map(settings)
    vault = [h for q in ("Lisbon cats Oslo", "marine biologist octopus cello")
             for h in search(store, embedder, q, mode="hybrid", limit=25) if h.source_type == "notebook"]
    assert vault, "the dream made no vault claims to check"
    from suzent_cli.vault.claims import row_claims

    for h in vault:
        for claim in row_claims(h.content):
            if claim.source:  # each cited claim maps to the turn whose words it holds
                (turn,) = L.hit_turns(_hit(f"- {claim.text} · source: {claim.source}", source_type="notebook"), prov)
                assert claim.text.rstrip(".") in conv.said[turn][1], (claim.text, turn)
        assert set(L.hit_turns(h, prov)) <= set(KEPT)


def test_hit_turns_on_hand_made_hits():
    prov = L.Provenance(lines={("2021-03-03.md", 5): "D1:1", ("2021-04-20.md", 6): "D2:1",
                               ("2021-04-20.md", 7): "D2:1"},
                        texts={"i live in lisbon with my two cats": ["D1:1"], "i work as a marine biologist": ["D2:1"]})
    assert L.hit_turns(_hit("I live in Lisbon.", session="D1:1"), prov) == ["D1:1"]
    claims = ("- Works as a marine biologist (confirmed 2x, last 2021-04-21) · source: 2021-04-20.md:6\n"
              "- Loves octopus · source: 2021-04-20.md:7\n- Lives in Lisbon · source: 2021-03-03.md:5\n"
              "- Unknown · source: 2020-01-01.md:1")
    assert L.hit_turns(_hit(claims, source_type="notebook"), prov) == ["D2:1", "D1:1"]  # each turn once
    # a vault row whose session was filled from its first citation still shows every cited turn
    assert L.hit_turns(_hit(claims, session="D2:1", source_type="notebook"), prov) == ["D2:1", "D1:1"]
    memory_md = "## Personal\n- [personal] I live in Lisbon with my two cats.\n- I work as a marine biologist"
    assert L.hit_turns(_hit(memory_md, source_type="facts"), prov) == ["D1:1", "D2:1"]
    assert L.hit_turns(_hit("- Something nobody said", source_type="facts"), prov) == []
    assert L.ranked_turns([_hit("a", session="D2:1"), _hit(claims, source_type="notebook")], prov) == [
        "D2:1", "D2:1", "D1:1"]


def test_main_reports_both_captures_before_and_after_the_dream(data, tmp_path, capsys):
    out_json = tmp_path / "result.json"
    args = [str(data), "--modes", "hybrid", "--capture", "fact,extractor", "--dream", "both", "--model", "hash:64",
            "--cache", str(tmp_path / "cache"), "--json", str(out_json)]
    assert L.main(args) == 0
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert [(r["capture"], r["dream"]) for r in result["runs"]] == [
        ("fact", False), ("fact", True), ("extractor", False), ("extractor", True)]
    assert result["survival"]["fact"]["turns_with_facts"] == 6
    assert result["survival"]["extractor"]["turns_with_facts"] == 4
    fact = result["runs"][0]["modes"]["hybrid"]
    assert fact["any"]["@25"] == 100.0  # six rows: every question's evidence is within 25 hits
    extractor = result["runs"][2]["modes"]["hybrid"]
    assert extractor["by_category"]["temporal"]["R@25"] == 0.0  # its evidence turn was dropped
    assert extractor["recall"]["@25"] == result["survival"]["extractor"]["all"]["recall_ceiling"]
    text = capsys.readouterr().out
    assert "| extractor | after dream | hybrid |" in text and "what capture kept (extractor)" in text
    cache = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert cache == ["synthetic-1-cwdefault", "synthetic-1-cwdefault-dream", "synthetic-1-cwdefault-extractor",
                     "synthetic-1-cwdefault-extractor-dream"]
    assert L.main(args) == 0  # reused from the cache: same scores
    again = json.loads(out_json.read_text(encoding="utf-8"))
    assert [r["modes"] for r in again["runs"]] != [] and [r["modes"]["hybrid"]["recall"] for r in again["runs"]] == [
        r["modes"]["hybrid"]["recall"] for r in result["runs"]]
    assert again["survival"] == result["survival"]


def test_bad_arguments_and_missing_data_exit_with_one_line(tmp_path, capsys):
    assert L.main([str(tmp_path / "absent.json")]) == 2
    assert "LoCoMo data not found" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "locomo"}', encoding="utf-8")
    assert L.main([str(bad)]) == 2
    with pytest.raises(SystemExit):
        L.main([str(bad), "--capture", "llm"])


def test_every_dev_turn_has_its_words_for_the_extractor():
    if not DEV.is_file():
        pytest.skip(f"LoCoMo dev split not at {DEV} (it is never copied into the repository)")
    convs = L.load_conversations(DEV)
    assert convs and all(set(c.said) >= {t[2] for t in c.turns} for c in convs)
