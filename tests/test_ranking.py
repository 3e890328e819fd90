"""Ranking on lifecycle signals: importance factors (pure), per-section chunks, and recall combining relevance with
importance over a real LanceDB index (hash embedder)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from conftest import invoke
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.index.api import run_index
from suzent_cli.index.chunking import chunk_sections
from suzent_cli.index.rank import PageSignals, chunk_importance, effective_importance, final_score, page_signals
from suzent_cli.index.sources import Source, page_documents
from suzent_cli.index.store import ReadStore
from suzent_cli.init import init_home
from suzent_cli.recall import recall, search

TODAY = dt.date(2026, 6, 10)


def claim(n: int) -> str:
    return f"- Likes tea (confirmed {n}x, last 2026-06-01) · source: 2026-06-01.md:5"


# --- importance factors, table-driven --------------------------------------------------------------------------
@pytest.mark.parametrize("meta, section, chunk, expected", [
    ({}, "Claims", claim(1), 0.5),                                    # one statement earns nothing
    ({}, "Claims", claim(2), 0.58),                                   # + 0.08 · log2 2
    ({}, "Claims", claim(3), 0.5 + 0.08 * 1.5849625),                 # + 0.08 · log2 3
    ({}, "Claims", claim(12), 0.75),                                  # capped at + 0.25
    ({}, "Claims", claim(100), 0.75),
    ({}, "Claims", "- Likes tea", 0.5),                               # a claim a person wrote, no marker
    ({}, "Claims", f"{claim(2)}\n{claim(12)}\n{claim(1)}", 0.75),     # the chunk's highest count
    ({}, "Claims", "Notes (confirmed 12x, last 2026-06-01)", 0.5),    # a marker outside a bullet is no claim
    ({"status": "active"}, "Claims", claim(2), 0.58),
    ({"status": "stable"}, "Claims", claim(1), 0.5),
    ({"status": "draft"}, "Claims", claim(1), 0.45),
    ({"status": "Draft"}, "Claims", claim(2), 0.53),
    ({"status": "deprecated"}, "Claims", claim(12), 0.1),            # deprecated wins over everything
    ({}, "Previously", claim(1), 0.1),                                # history: × 0.2
    ({}, "previously", claim(2), 0.116),
    ({}, "History", claim(1), 0.1),
    ({"verified": "human:alice@2026-06-01"}, "Claims", claim(1), 0.9),           # a floor ...
    ({"verified": "human:alice@2026-06-01", "status": "draft"}, "Claims", claim(100), 0.9),  # ... not a bonus
    ({"verified": "human:alice@2026-06-01"}, "Previously", claim(1), 0.18),      # verified history is history
    ({"verified": "human:alice@2026-06-01", "status": "deprecated"}, "Claims", claim(1), 0.1),
    ({"verified": ["agent:dream@2026-06-01", "human:bo"]}, "Claims", claim(1), 0.9),
    ({"verified": "agent:x@2026-06-01"}, "Claims", claim(1), 0.5),    # only a human: actor qualifies
    ({"verified": "human:@2026-06-01"}, "Claims", claim(1), 0.5),     # no name
    ({"verified": "human:alice@2026-13-01"}, "Claims", claim(1), 0.5),  # impossible date
    ({"verified": "alice"}, "Claims", claim(1), 0.5),
])
def test_chunk_importance_factors(meta, section, chunk, expected):
    value, factors = chunk_importance(page_signals(meta), section, chunk)
    assert value == pytest.approx(expected, abs=1e-6)
    assert factors["stamped"] == value and factors["section"] == section
    json.dumps(factors)  # stored in the row metadata


@pytest.mark.parametrize("meta, today, expected", [
    ({"stale_after": dt.date(2026, 6, 1)}, TODAY, 0.3),               # past: × 0.6
    ({"stale_after": "2026-06-01"}, TODAY, 0.3),
    ({"stale_after": dt.date(2026, 6, 10)}, TODAY, 0.5),              # not yet passed on the day itself
    ({"stale_after": dt.date(2027, 1, 1)}, TODAY, 0.5),               # future
    ({"stale_after": dt.date(2026, 6, 1)}, None, 0.5),                # no today: no decay
    ({"stale_after": "soon"}, TODAY, 0.5),                            # unreadable: absent
    ({"stale_after": dt.date(2026, 6, 1), "verified": "human:alice@2026-06-01"}, TODAY, 0.9),  # human: no decay
    ({"stale_after": dt.date(2026, 6, 1), "verified": "agent:x"}, TODAY, 0.3),
    ({"stale_after": dt.date(2026, 6, 1), "status": "deprecated"}, TODAY, 0.1),
])
def test_stale_decay_is_applied_at_recall_time(meta, today, expected):
    stored, factors = chunk_importance(page_signals(meta), "Claims", claim(1))
    value, _factor = effective_importance(stored, json.loads(json.dumps(factors)), today)
    assert value == pytest.approx(expected)


def test_page_signals_read_yaml_values_and_never_raise():
    assert page_signals({"status": " Deprecated ", "stale_after": dt.datetime(2026, 1, 2, 3, 4)}) == \
        PageSignals("deprecated", dt.date(2026, 1, 2), None)
    assert page_signals(None) == page_signals(["x"]) == page_signals({"status": 3, "verified": 7}) == PageSignals()


def test_final_score_is_relevance_for_a_neutral_row():
    assert final_score(0.7312, 0.5) == 0.7312  # exactly: raw-log ranking cannot change
    assert final_score(0.6, 0.75) > final_score(0.6, 0.5) > final_score(0.6, 0.25) > final_score(0.6, 0.1)
    assert final_score(1.0, 0.9) - final_score(1.0, 0.5) == pytest.approx(0.2)  # the largest lift: 20 % of relevance


# --- per-section chunks ----------------------------------------------------------------------------------------
PAGE = """---
title: Where the user lives
status: active
stale_after: 2027-01-01
---

# Home

## Claims

- Moved to Lisbon (confirmed 3x, last 2026-06-01) · source: 2026-06-01.md:3

## Previously

- Lives in Berlin (confirmed 5x, last 2025-12-01) (until 2026-05-01) · source: 2025-03-01.md:2

## Related

- [[People]]
"""


def test_claims_and_previously_never_share_a_chunk_and_headings_stay_with_their_section():
    short = "# Home\n\n## Claims\n- a\n\n## Previously\n- b\n\n```\n## not a heading\n```\n\n## Empty\n\n### sub\n- c"
    assert chunk_sections(short) == [  # claims sections: one row per claim, the prose between them by paragraph
        ("Claims", "- a"),
        ("Previously", "- b"),
        ("Previously", "```\n## not a heading\n```"),
        ("Empty", "# Home\n\n## Empty\n\n### sub\n- c"),
    ]
    long = "## Notes\n\n" + "word " * 300 + "\n\n" + "more " * 300
    [(_, first), (_, second)] = chunk_sections(long)
    assert first.startswith("## Notes\n\nword") and second.startswith("more")
    claims = "## Claims\n\n> [!note] mine\n\n- Likes tea (confirmed 2x, last 2026-06-01)\n  - at breakfast\n- Has a cat\n"
    assert chunk_sections(claims) == [("Claims", "- Likes tea (confirmed 2x, last 2026-06-01)\n  - at breakfast"),
                                      ("Claims", "- Has a cat"), ("Claims", "> [!note] mine")]
    assert chunk_sections("intro\n\n## Gone\n") == [("", "intro")]
    page = "# Profile\n\nHome and work.\n\n## Claims\n\n- a\n\n## Related\n\n- [[3_Personal/Goals]]\n"
    assert chunk_sections(page) == [("Claims", "- a")]
    assert chunk_sections("## Related\n\n- [[x]]\n- see how it went\n")[0][0] == "Related"  # prose is content


def test_page_documents_record_section_and_importance_factors(tmp_path):
    source = Source("notebook", "3_Personal/Home.md", tmp_path / "Home.md")
    docs = page_documents(source, PAGE, frozenset(), 0.0)
    # a ## Related section of links only is navigation: no row
    assert [(d.locator, d.metadata["section"]) for d in docs] == [(0, "Claims"), (1, "Previously")]
    claims, previously = docs
    assert claims.importance == pytest.approx(0.5 + 0.08 * 1.5849625, abs=1e-6)
    assert previously.importance == pytest.approx((0.5 + 0.08 * 2.3219281) * 0.2, abs=1e-6)
    assert claims.metadata["importance_factors"]["stale_after"] == "2027-01-01"
    assert claims.search_text.startswith("Where the user lives\n")
    core = page_documents(Source("facts", "MEMORY.md", tmp_path / "MEMORY.md"), PAGE, frozenset(), 0.0)
    assert all(d.importance == 0.5 and "section" not in d.metadata for d in core)
    assert len(core) == 1  # core files keep paragraph chunking (one 1,200-char chunk here)


# --- recall over a real index ----------------------------------------------------------------------------------
@pytest.fixture
def home_hash(settings):
    s = dataclasses.replace(settings, embedder="hash:64")
    init_home(s)
    return s


def _store(s, embedder):
    run_index(s, embedder=embedder)
    return ReadStore.open(s.paths.index_dir, embedder.name, embedder.dim)


def _write_page(s, rel, text):
    path = s.paths.vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _ranked(hit) -> float:
    return hit.score if hit.ranked_score is None else hit.ranked_score


def test_current_confirmed_claim_outranks_its_history_and_raw_logs_stay_neutral(home_hash, embedder):
    s = home_hash
    write_facts(s, [Fact("Lives in Berlin"), Fact("Works at a bakery")], day=dt.date(2025, 3, 1), time="10:00",
                session="old")
    write_facts(s, [Fact("Moved to Lisbon"), Fact("Bought a bike")], day=dt.date(2026, 6, 1), time="10:00",
                session="new")
    _write_page(s, "3_Personal/Home.md", PAGE)
    run_index(s, embedder=embedder)
    hits = recall(s, embedder, "where does the user live", limit=20)
    by_section = {h.factors.get("section"): h for h in hits if h.source_type == "notebook"}
    claims, previously = by_section["Claims"], by_section["Previously"]
    assert hits.index(claims) < hits.index(previously)
    assert claims.importance > 0.5 > previously.importance
    # the ranking score (a row placed above an older same-subject one is shown just above it: recall.order_scores)
    assert _ranked(claims) == pytest.approx(claims.relevance * (1 + 0.5 * (claims.importance - 0.5)))  # a share
    assert _ranked(previously) == pytest.approx(previously.relevance + 0.5 * (previously.importance - 0.5))
    for h in hits:
        if h.source_type == "archive_log":
            assert h.importance == 0.5 and _ranked(h) == h.relevance and h.factors.get("stamped") is None
    # BM25 alone favours the history chunk ("Lives" matches "live"): importance is what puts the claim first.
    hits = recall(s, embedder, "where does the user live", mode="fts", limit=20, log=False)
    by_section = {h.factors.get("section"): h for h in hits if h.source_type == "notebook"}
    claims, previously = by_section["Claims"], by_section["Previously"]
    assert claims.relevance < previously.relevance and hits.index(claims) < hits.index(previously)


def test_equally_relevant_pages_are_ordered_by_lifecycle(home_hash, embedder):
    s = home_hash
    body = "title: Kayak\n---\n\n## Claims\n\n- Owns a red kayak\n"
    _write_page(s, "3_Personal/A.md", "---\nstatus: deprecated\n" + body)
    _write_page(s, "3_Personal/B.md", "---\nstatus: active\n" + body)
    _write_page(s, "3_Personal/C.md", "---\nverified: human:alice@2026-06-01\n" + body)
    _write_page(s, "3_Personal/D.md", "---\nverified: agent:dream@2026-06-01\n" + body)
    _write_page(s, "3_Personal/E.md", "---\nstatus: draft\n" + body)
    hits = search(_store(s, embedder), embedder, "red kayak", limit=5, today=TODAY)
    assert len({round(h.relevance, 9) for h in hits}) == 1  # same text, same relevance
    assert [h.source_file for h in hits] == ["3_Personal/C.md", "3_Personal/B.md", "3_Personal/D.md",
                                             "3_Personal/E.md", "3_Personal/A.md"]


def test_stale_after_decays_at_recall_with_the_settings_today(home_hash, embedder):
    s = home_hash
    _write_page(s, "3_Personal/Job.md", "---\nstale_after: 2026-06-05\n---\n\n## Claims\n\n- Works as a nurse\n")
    run_index(s, embedder=embedder)
    before = recall(dataclasses.replace(s, today=dt.date(2026, 6, 1)), embedder, "nurse", mode="fts", log=False)
    after = recall(s, embedder, "nurse", mode="fts", log=False)
    assert before[0].importance == 0.5 and before[0].factors["stale_factor"] == 1.0
    assert after[0].importance == pytest.approx(0.3) and after[0].factors["stale_factor"] == 0.6
    assert after[0].id == before[0].id  # the row did not change: the decay is recall's


def test_an_edited_status_takes_effect_on_the_next_index(home_hash, embedder):
    s = home_hash
    page = _write_page(s, "3_Personal/Pet.md", "---\nstatus: active\n---\n\n## Claims\n\n- Has a cat named Miso\n")
    run_index(s, embedder=embedder)
    assert recall(s, embedder, "cat Miso", mode="fts", log=False)[0].importance == 0.5
    page.write_text(page.read_text().replace("status: active", "status: deprecated"))
    report = run_index(s, embedder=embedder)
    assert (report.rows_added, report.rows_removed) == (1, 1)
    [hit] = recall(s, embedder, "cat Miso", mode="fts", log=False)
    assert hit.importance == pytest.approx(0.1) and hit.factors["status"] == "deprecated"


def test_recall_explain_prints_every_factor(home):
    env = {"SUZENT_EMBEDDER": "hash:64"}
    assert invoke(home, "init", env_extra=env).returncode == 0
    (home / "notebook" / "3_Personal").mkdir(parents=True, exist_ok=True)
    (home / "notebook" / "3_Personal" / "Home.md").write_text(PAGE.replace("stale_after: 2027-01-01",
                                                                           "stale_after: 2026-01-01"))
    assert invoke(home, "--today", "2026-06-10", "capture", "--fact", "[personal] Lives in Berlin",
                   env_extra=env).returncode == 0
    assert invoke(home, "index", env_extra=env).returncode == 0
    r = invoke(home, "--today", "2026-06-10", "recall", "where does the user live", "--explain", env_extra=env)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for needle in ("relevance", "fts_content", "vector", "date boost", "neighbour share", "importance",
                   "base 0.5", "confirmations 3x", "status active", "section 'Claims'", "section 'Previously' ×0.2",
                   "stale decay ×0.6 (stale_after 2026-01-01)", "human none", "final",
                   "raw capture / core file: neutral"):
        assert needle in text, (needle, text)
    r = invoke(home, "recall", "where does the user live", "--explain", "--json", env_extra=env)
    hits = json.loads(r.stdout)["hits"]
    assert {"relevance", "runs", "date_boost", "neighbour", "factors", "importance", "score"} <= set(hits[0])
    page_hit = next(h for h in hits if h["source_type"] == "notebook")
    assert {"confirmations", "status", "section", "stale_factor", "human_floor", "stamped"} <= set(page_hit["factors"])
    plain = json.loads(invoke(home, "recall", "where does the user live", "--json", env_extra=env).stdout)["hits"]
    assert "factors" not in plain[0] and "importance" in plain[0]


def test_one_bad_frontmatter_value_does_not_drop_the_page_lifecycle():
    from suzent_cli.index.sources import parse_frontmatter

    body, meta = parse_frontmatter("---\nstatus: deprecated\nstale_after: 2026-13-45\n---\n# P\n\n- Likes tea\n")
    assert meta == {"status": "deprecated", "stale_after": "2026-13-45"} and body == "# P\n\n- Likes tea\n"
    assert chunk_importance(page_signals(meta), "Claims", "- Likes tea")[0] == 0.1
