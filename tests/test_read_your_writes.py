"""Read-your-writes (issue 25, item 4): what was captured is recalled at once, before any index pass, on every path —
the CLI (`capture --fact` then `recall`), the Claude Code hooks cold (Stop hook capture, then the prompt's recall
hook, no `suzent index` between) and warm (a server's backend whose index worker never gets to the pass), MCP
remember then recall in-process — by recall's pending search (suzent_cli/index/pending.py). Also: a pending row ranks
as the same row does once indexed; forgotten text never resurfaces through it; a line the indexer has indexed
meanwhile is shown once; with nothing pending no log is read. Real files, real LanceDB, the hash embedder."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from claude_code_session import DAY, Transcript, payload, prompt

from conftest import HASH_ENV, invoke, log, settings_at
from suzent_cli.index import pending as pending_mod
from suzent_cli.index.api import index_embedder, run_index
from suzent_cli.index.indexer import IndexReport
from suzent_cli.index.pending import pending_logs, pending_rows
from suzent_cli.index.store import ReadStore, table_exists
from suzent_cli.recall import recall, search

OAT = "Prefers oat milk in coffee"
QUERY = "what milk does the user like"
OTHERS = ["Works at a fintech startup in Lisbon", "Drinks black coffee every morning", "Likes almond milk chocolate",
          "Has a tabby cat named Biscuit", "Runs 10k every Sunday", "Uses neovim for editing",
          "Prefers window seats on trains", "Allergic to peanuts", "Manager is Ana Costa", "Takes the metro to work",
          "Plays the cello on weekends", "Team size is 7 engineers", "Deploys with GitHub Actions",
          "Prefers dark mode in every app", "Learning Japanese", "Sister lives in Berlin", "Birthday is on 4 March",
          "Favourite food is ramen", "Reads science fiction novels", "Dislikes early meetings",
          "Uses tmux for terminal sessions", "Wants to run a marathon", "Owns a road bike", "Vegetarian since 2019",
          "Speaks Portuguese and English", "Works remotely on Fridays", "Prefers tea in the afternoon",
          "Uses a standing desk", "Drives an electric car", "Grew up in Porto", "Studied physics at university",
          "Listens to jazz while coding", "Prefers compact dashboards", "Keeps bees on the roof",
          "Favourite season is autumn", "Prefers Python over Go", "Daughter is 5 years old",
          "Climbs at the gym on Tuesdays", "Writes a weekly newsletter", "On-call rotation every fourth week",
          "Prefers morning workouts", "Collects vinyl records", "Hates spicy food", "Uses Firefox as the main browser",
          "Saving for a house", "Volunteers at the food bank", "Plays chess online",
          "Lactose intolerant but eats cheese", "Sleeps eight hours a night", "Prefers aisle seats on flights"]


@pytest.fixture
def s(tmp_path):
    return settings_at(tmp_path / "home", env=HASH_ENV)


def texts(hits) -> list[str]:
    return [h.text for h in hits]


def settle(settings) -> None:
    """Date every daily log back a minute, so the pending search's "changed just now" rule
    (:data:`~suzent_cli.index.pending.RECENT_NS`) does not apply to the logs an index pass then records."""
    past = os.stat(settings.paths.archive_dir).st_mtime - 60
    for p in settings.paths.archive_dir.glob("*.md"):
        os.utime(p, (past, past))


def home_of_fifty(settings):
    for i, fact in enumerate(OTHERS):
        log(settings, f"2026-06-{1 + i % 18:02d}", f"[preference] {fact}")
    settle(settings)
    run_index(settings, embedder=index_embedder(settings))


# --- every path ----------------------------------------------------------------------------------------------------


def test_cli_capture_fact_then_recall_finds_it_on_a_fresh_home_without_an_index(home):
    r = invoke(home, "capture", "--fact", f"[preference] {OAT}", env_extra=HASH_ENV)
    assert r.returncode == 0, r.stderr
    for mode in ("hybrid", "fts", "vector"):
        r = invoke(home, "recall", QUERY if mode != "vector" else OAT, "--mode", mode, "--json", env_extra=HASH_ENV)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)["hits"]
        assert hits and hits[0]["content"] == OAT and hits[0]["source_type"] == "archive_log", (mode, hits)
        assert hits[0]["locator"] and hits[0]["source_file"].endswith(".md")
    assert not table_exists(settings_at(home, env=HASH_ENV).paths.index_dir)  # found without any index pass


def test_cli_capture_fact_without_index_is_recalled_beside_an_index(home):
    s = settings_at(home, env=HASH_ENV)
    home_of_fifty(s)
    assert invoke(home, "capture", "--fact", f"[preference] {OAT}", env_extra=HASH_ENV).returncode == 0
    r = invoke(home, "recall", QUERY, "--json", "--limit", "5", env_extra=HASH_ENV)
    assert OAT in [h["content"] for h in json.loads(r.stdout)["hits"]], r.stdout


def test_cold_stop_hook_capture_is_recalled_by_the_next_prompt_without_an_index_run(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    r = invoke(home, "capture", "--from", "claude-code", input=payload(t.path),
               env_extra={"SUZENT_TODAY": DAY, **HASH_ENV})
    assert r.returncode == 0, r.stderr
    assert not table_exists(settings_at(home, env=HASH_ENV).paths.index_dir)
    for mode in ((), ("--mode", "hybrid")):
        r = invoke(home, "recall", "--from", "claude-code", "--timeout", "60", *mode,
                   input=prompt("what is my cat called again?"), env_extra=HASH_ENV)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "My cat is named Pixel." in context, (mode, context)


def never_indexes(settings, files, embedder):
    """An index worker's pass that never gets anywhere (a model still loading, a busy indexer lock)."""
    return IndexReport()


@pytest.fixture
def stalled(tmp_path, monkeypatch):
    """A warm backend (a server's, or `suzent mcp` standalone) whose index worker never indexes anything."""
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    monkeypatch.setattr("suzent_cli.server.ops.REMEMBER_INDEX_WAIT", 0.05)
    monkeypatch.setattr("suzent_cli.server.ops.CAPTURE_INDEX_WAIT", 0.05)
    warm = Warm(settings_at(tmp_path / "home", env=HASH_ENV), runner=lambda *a: __import__("time").sleep(3600))
    yield LocalBackend(warm)
    warm.index.close(0)


def test_mcp_remember_says_recallable_and_the_next_recall_finds_it_while_the_reindex_is_queued(stalled):
    kept = stalled.remember(facts=[f"[preference] {OAT}"])
    assert kept["captured"] == 1 and kept["indexed"] is True and kept["warnings"] == [], kept
    found = stalled.recall(QUERY)
    assert [h["content"] for h in found["hits"]][:1] == [OAT] and found["note"] is None, found
    assert found["hits"][0]["source_type"] == "log" and found["hits"][0]["line"] is not None
    from suzent_cli.server.mcp_surface import remember_text

    assert "recallable now" in remember_text(kept) and "not yet searchable" not in remember_text(kept)


def test_mcp_remember_without_a_trusted_tombstone_file_says_not_yet_searchable(stalled):
    state = stalled.warm.settings().paths.state_dir
    (state / "tombstones.jsonl").mkdir(parents=True)  # cannot be read: nothing pending may be shown
    kept = stalled.remember(facts=[f"[preference] {OAT}"])
    assert kept["indexed"] is False
    assert kept["warnings"][-1] == "captured; not yet searchable: the reindex is still queued", kept


def test_warm_stop_hook_capture_is_recalled_by_the_warm_prompt_hook_before_its_reindex(stalled, tmp_path):
    import base64

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    out = stalled.hook_capture(payload_b64=base64.b64encode(payload(t.path).encode()).decode(), timeout=60)
    assert out["indexed"] is False and out["report"] is not None, out
    for mode in ("fts", "hybrid"):
        answer = stalled.hook_recall(payload_b64=base64.b64encode(prompt("what is my cat called again?").encode())
                                     .decode(), mode=mode)
        assert answer["warning"] is None and "My cat is named Pixel." in answer["output"], (mode, answer)


# --- ranking ---------------------------------------------------------------------------------------------------------


def test_a_pending_fact_ranks_as_it_will_once_indexed(s):
    home_of_fifty(s)
    log(s, "2026-06-20", f"[preference] {OAT}", "[personal] Moved to Amsterdam last spring", time="10:00")
    emb = index_embedder(s)
    queries = (QUERY, "oat milk", "coffee", "how does the user take coffee", "Amsterdam", "when did the user move")
    before = {q: texts(recall(s, emb, q, limit=10, log=False)) for q in queries}
    assert OAT in before[QUERY][:5]
    run_index(s, embedder=emb)
    after = {q: texts(recall(s, emb, q, limit=10, log=False)) for q in queries}
    for q in queries:
        for fact in (OAT, "Moved to Amsterdam last spring"):
            assert (fact in before[q]) == (fact in after[q]), q
            if fact in before[q]:
                assert before[q].index(fact) == after[q].index(fact), (q, before[q], after[q])


def test_only_the_newest_pending_lines_are_searched(s, monkeypatch):
    monkeypatch.setattr(pending_mod, "MAX_ROWS", 3)
    log(s, "2026-06-19", "[context] Old pending zebra fact")
    log(s, "2026-06-20", *[f"[context] Newer pending fact {i}" for i in range(3)])
    rows = pending_rows(s, None).rows
    assert [r["content"] for r in rows] == [f"Newer pending fact {i}" for i in range(3)]


# --- forgotten text, duplicates, cost ---------------------------------------------------------------------------------


def test_a_forgotten_fact_captured_again_but_not_indexed_never_shows(home):
    s = settings_at(home, env=HASH_ENV)
    assert invoke(home, "capture", "--fact", "[personal] Lives at Rua Augusta 12", env_extra=HASH_ENV).returncode == 0
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    r = invoke(home, "forget", "Lives at Rua Augusta 12", env_extra=HASH_ENV)
    assert r.returncode == 0, r.stderr
    assert invoke(home, "capture", "--fact", "[personal] Lives at Rua Augusta 12", "--fact", "[personal] Banks with ING",
                  env_extra=HASH_ENV).returncode == 0
    hits = texts(recall(s, index_embedder(s), "Rua Augusta", log=False))
    assert "Lives at Rua Augusta 12" not in hits and "Banks with ING" in texts(recall(s, index_embedder(s), "ING",
                                                                                   log=False))
    assert all("Augusta" not in r["content"] for r in pending_rows(s, ReadStore.open_existing(s.paths.index_dir)).rows)


def test_a_fact_forgotten_before_any_index_never_shows(s):
    from suzent_cli.vault.state import append_tombstones

    log(s, "2026-06-20", "[personal] Lives at Rua Augusta 12", "[personal] Banks with ING")
    append_tombstones(s.paths.state_dir, ["Lives at Rua Augusta 12"], reason="forget", timeout=5)
    assert texts(recall(s, None, "Rua Augusta", mode="fts", log=False)) == []
    assert texts(recall(s, None, "bank ING", mode="fts", log=False)) == ["Banks with ING"]


def test_unreadable_tombstones_show_no_pending_line(s):
    log(s, "2026-06-20", "[personal] Lives at Rua Augusta 12")
    (s.paths.state_dir / "tombstones.jsonl").mkdir(parents=True)
    assert pending_rows(s, None).rows == []


def test_a_pending_line_indexed_meanwhile_is_shown_once(s):
    emb = index_embedder(s)
    home_of_fifty(s)
    log(s, "2026-06-20", f"[preference] {OAT}")
    first = recall(s, emb, QUERY, log=False)
    stale = pending_rows(s, ReadStore.open_existing(s.paths.index_dir))  # taken before the pass below
    assert [r["content"] for r in stale.rows] == [OAT]
    run_index(s, embedder=emb)
    store = ReadStore.open_existing(s.paths.index_dir)
    for hits in (search(store, emb, QUERY, pending=stale), recall(s, emb, QUERY, log=False)):
        assert texts(hits).count(OAT) == 1
        assert [h.id for h in hits if h.text == OAT] == [h.id for h in first if h.text == OAT]


def test_with_nothing_pending_no_log_is_read(s, monkeypatch):
    home_of_fifty(s)
    assert pending_logs(s) == []

    def no_read(*a, **k):
        raise AssertionError("a log was read with nothing pending")

    monkeypatch.setattr(pending_mod, "read_text", no_read)
    assert pending_rows(s, ReadStore.open_existing(s.paths.index_dir)).rows == []
    assert "Drinks black coffee every morning" in texts(recall(s, index_embedder(s), "coffee", log=False))


def test_a_log_changed_after_its_record_is_pending_again(s):
    home_of_fifty(s)
    log(s, "2026-06-01", "[preference] Prefers oat milk in coffee")
    assert [p.name for p in pending_logs(s)] == ["2026-06-01.md"]
    rows = pending_rows(s, ReadStore.open_existing(s.paths.index_dir)).rows
    assert [r["content"] for r in rows] == [OAT]  # the log's indexed lines are not pending


def test_the_pending_search_can_be_switched_off(s, monkeypatch):
    log(s, "2026-06-20", f"[preference] {OAT}")
    monkeypatch.setattr(pending_mod, "ENABLED", False)
    assert pending_logs(s) == [] and not pending_mod.searches_logs(dataclasses.replace(s))


def test_only_the_newest_pending_lines_are_embedded(s, monkeypatch):
    monkeypatch.setattr(pending_mod, "MAX_EMBEDDED", 1)
    log(s, "2026-06-20", "[context] Older pending line", "[context] Newest pending line")
    found = pending_rows(s, None)
    emb = index_embedder(s)
    scores = pending_mod.vector_scores(found, emb, emb.encode(["pending line"])[0])
    assert list(scores) == [found.rows[-1]["id"]] and found.rows[-1]["content"] == "Newest pending line"
    assert "Older pending line" in texts(recall(s, emb, "Older pending line", log=False))  # by its words
