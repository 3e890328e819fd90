"""The warm state (suzent_cli.server.warm) and the in-process backend (suzent_cli.server.ops): every operation on
real files and a real LanceDB table in a temp home (hash:64 embedder, no model), the index worker's coalescing and
survival, and a CLI `suzent index` beside a warm store."""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

import pytest
from claude_code_session import DAY, Transcript, prompt
from claude_code_session import payload as hook_payload

from conftest import HASH_ENV, log, run_cli, settings_at
from suzent_cli.errors import InputInvalid
from suzent_cli.server.ops import LocalBackend, plain_content
from suzent_cli.server.protocol import OPS
from suzent_cli.server.warm import IndexWorker, Warm

PAGE = """---
title: Preferences
---
# Preferences

## Claims

- Drinks espresso every morning (confirmed 3x, last 2026-06-09) · source: 2026-06-01.md:5
- Prefers window seats on trains (confirmed 1x, last 2026-06-02) · source: 2026-06-02.md:5
"""


@pytest.fixture
def backend(tmp_path, monkeypatch):
    # remember waits for its reindex; a busy machine must not turn "indexed" False (the wait is not under test).
    monkeypatch.setattr("suzent_cli.server.ops.REMEMBER_INDEX_WAIT", 600.0)
    warm = Warm(settings_at(tmp_path / "home", env=HASH_ENV))
    yield LocalBackend(warm)
    warm.close()


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def indexed(backend: LocalBackend) -> None:
    assert backend.warm.index.reindex(None, wait=120), backend.warm.index.last_error


def files_of(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()
            and ".lance" not in p.parts[-2:] and not p.name.endswith(".lock")}


def test_every_protocol_op_is_implemented(backend):
    assert all(callable(getattr(backend, op)) for op in OPS)


def test_recall_without_an_index_is_empty_with_a_note_not_an_error(backend):
    result = backend.recall("what does the user drink")
    assert result["hits"] == [] and "no search index yet" in result["note"]
    assert not backend.warm.embedder_loaded  # nothing needed vectors


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"query": ""}, "empty"), ({"query": "tea", "mode": "semantic"}, "mode"), ({"query": "tea", "limit": 0}, "limit"),
    ({"query": "tea", "since": "2026-13-01"}, "since must be a date"), ({"query": "tea", "until": "June"}, "until"),
    ({"query": "tea", "since": "2026-06-10", "until": "2026-06-01"}, "after"), ({"query": "\x00\x07"}, "empty"),
    ({"query": "tea", "category": " "}, "category"),
])
def test_recall_bad_input_is_one_line_input_invalid(backend, kwargs, words):
    query = kwargs.pop("query")
    with pytest.raises(InputInvalid) as exc:
        backend.recall(query, **kwargs)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_recall_filters_apply_before_the_limit_and_content_has_no_markers(backend):
    s = backend.warm.settings()
    for day in ("2026-06-01", "2026-06-05", "2026-06-09"):
        log(s, day, f"[preference] Drinks tea on {day}", f"[technical] Tea kettle firmware notes {day}")
    page = s.paths.vault_dir / "3_Personal" / "Preferences.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(PAGE, encoding="utf-8")
    indexed(backend)

    got = backend.recall("tea", mode="fts", limit=2, since="2026-06-05", until="2026-06-09", category="Preference")
    assert sorted(h["date"] for h in got["hits"]) == ["2026-06-05", "2026-06-09"]
    assert all(h["category"] == "preference" and h["source_type"] == "log" for h in got["hits"])
    hit = got["hits"][0]
    assert hit["file"] == f"{hit['date']}.md" and isinstance(hit["line"], int) and hit["chunk"] is None
    assert hit["score"] == round(hit["score"], 4)
    lines = (s.paths.archive_dir / hit["file"]).read_text(encoding="utf-8").splitlines()
    assert lines[hit["line"] - 1] == f"- [preference] {hit['content']}"

    vault = backend.recall("espresso morning", mode="hybrid", limit=3)
    top = vault["hits"][0]
    assert top["source_type"] == "vault" and top["file"] == "3_Personal/Preferences.md"
    assert "Drinks espresso every morning" in top["content"]
    assert "confirmed" not in top["content"] and "source:" not in top["content"]
    assert top["confirmations"] == 3 and top["verified"] is False and top["chunk"] is not None
    assert top["date"] == "2026-06-09"  # the claims' latest confirmation
    recall_log = (s.paths.state_dir / "recall_log.jsonl").read_text(encoding="utf-8")
    assert "espresso morning" in recall_log  # logged as `suzent recall` logs

    none = backend.recall("tea", since="2027-01-01")
    assert none["hits"] == [] and "filters" in none["note"]


def test_plain_content_drops_every_lifecycle_marker():
    text = "## Claims\n\n- Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7"
    assert plain_content(text) == "## Claims\n\n- Lived in Madrid"


def test_remember_then_recall_round_trip_through_the_index_worker(backend):
    s = backend.warm.settings()
    log(s, "2026-06-19", "[personal] Lives in Porto")
    indexed(backend)
    result = backend.remember(facts=["[preference] Drinks oolong tea after lunch `tea`", "", "\x00",
                                     "[personal unclosed", "Plays the cello"], category="hobby", session="agent-7")
    outcomes = result["outcomes"]
    assert [o["outcome"] for o in outcomes] == ["captured", "rejected", "rejected", "rejected", "captured"]
    assert "empty" in outcomes[1]["reason"] and "empty" in outcomes[2]["reason"]  # nothing left once repaired
    assert "unclosed" in outcomes[3]["reason"]
    assert result["captured"] == 2 and result["indexed"] is True
    assert outcomes[4]["category"] == "hobby" and outcomes[0]["category"] == "preference"
    log_file = s.paths.archive_dir / outcomes[0]["file"]
    lines = log_file.read_text(encoding="utf-8").splitlines()
    assert lines[outcomes[0]["line"] - 1] == "- [preference] Drinks oolong tea after lunch `tea`"
    assert lines[outcomes[4]["line"] - 1] == "- [hobby] Plays the cello"
    assert any(ln.endswith("\u2014 agent-7") for ln in lines)

    hits = backend.recall("oolong", mode="fts")["hits"]
    assert hits and hits[0]["content"] == "Drinks oolong tea after lunch" and hits[0]["session"] == "agent-7"

    with pytest.raises(InputInvalid, match="no fact to remember"):
        backend.remember(facts=["", "\x00"])


def test_remember_repairs_half_an_emoji_and_controls_keeping_the_words(backend):
    """Trial finding F3: a lone surrogate (a Python caller, or a transport that let one through) becomes U+FFFD
    and control characters are dropped, in facts, the turn and the session: the words are written, the call says
    what it repaired. Names that must match as given are still refused (a project, a page name, a directory)."""
    got = backend.remember(facts=["Emoji half \ud83d here", "Rings a \x07bell"], session="s\udfff\x00")
    assert [o["text"] for o in got["outcomes"]] == ["Emoji half \ufffd here", "Rings a bell"]
    assert got["captured"] == 2 and any("U+FFFD" in w for w in got["warnings"])
    turn = backend.remember(turn="I work at Acme as a nurse. My cat is called T\x07om \ud83d.")
    assert turn["captured"] >= 1 and all("\x07" not in o["text"] for o in turn["outcomes"])
    text = "".join(p.read_text(encoding="utf-8") for p in backend.warm.settings().paths.archive_dir.glob("*.md"))
    assert "Emoji half \ufffd here" in text and "\u2014 s\ufffd\n" in text
    with pytest.raises(InputInvalid, match="control character"):
        backend.read_page(name="a\x07.md")
    with pytest.raises(InputInvalid, match="lone surrogate"):
        backend.remember(facts=["x"], project="p\ud800")
    with pytest.raises(InputInvalid, match="either facts"):
        backend.remember(facts=["a"], turn="b")
    with pytest.raises(InputInvalid):
        backend.remember(facts=["x" * 5000])


def test_remember_a_turn_goes_through_the_extractor_and_the_classifier(backend):
    result = backend.remember(turn="I live in Lisbon and I work as a nurse.")
    assert result["captured"] >= 1 and all(o["outcome"] == "captured" for o in result["outcomes"])
    assert result["outcomes"][0]["classification"] == "new"
    assert backend.recall("Lisbon nurse", mode="fts")["hits"]


def test_remember_a_turn_over_the_bound_reads_its_newest_part_like_the_cli(tmp_path):
    """capture.max_turn_chars bounds remember as it bounds capture and the hooks: a turn over it (and within the op's
    own 200,000-character limit) is not refused, its newest part is extracted and the warnings say how much was
    skipped."""
    warm = Warm(settings_at(tmp_path / "home", env={**HASH_ENV, "SUZENT_MAX_TURN_CHARS": "200"}))
    try:
        turn = "I live in Oslo. " + "The weather was grey and we talked about it for a while. " * 20 + \
            "I work as a nurse."
        result = LocalBackend(warm).remember(turn=turn)
    finally:
        warm.close()
    texts = [o["text"] for o in result["outcomes"]]
    assert any("nurse" in t for t in texts) and not any("Oslo" in t for t in texts)
    assert any("capture.max_turn_chars (200)" in w and "skipped" in w for w in result["warnings"])


def test_forget_dry_run_writes_nothing_and_apply_forgets(backend):
    s = backend.warm.settings()
    log(s, "2026-06-19", "[personal] Lives in Berlin", "[preference] Likes green tea")
    indexed(backend)
    backend.recall("Berlin", mode="fts")  # a recall-log entry the real forget purges
    before = files_of(s.paths.home)
    dry = backend.forget(text="Lives in Berlin")
    assert dry["applied"] is False and dry["tombstoned"] == 0
    assert dry["matches"] == [{"content": "Lives in Berlin", "source": "archive:2026-06-19.md",
                               "file": "2026-06-19.md", "line": 5, "chunk": None}]
    assert files_of(s.paths.home) == before

    close = backend.forget(text="Lives in Berlinn")
    assert close["matches"] == [] and close["closest"][0]["content"] == "Lives in Berlin"
    with pytest.raises(InputInvalid):
        backend.forget(text="a", id="b")
    with pytest.raises(InputInvalid):
        backend.forget()

    for coerced in ("yes", 1, "true", None):  # the local API's forget is as strict as MCP's: never coerced
        with pytest.raises(InputInvalid, match="apply: must be true or false"):
            backend.forget(text="Lives in Berlin", apply=coerced)
    assert backend.recall("Berlin", mode="fts")["hits"]
    done = backend.forget(text="Lives in Berlin", apply=True)
    assert done["applied"] is True and done["tombstoned"] == 1
    assert all("Berlin" not in h["content"] for h in backend.recall("Berlin", mode="fts")["hits"])
    assert backend.recall("green tea", mode="fts")["hits"]


def test_status_is_the_cli_status_object(backend):
    data = backend.status()
    assert {"today", "logs", "vault", "index", "locks", "warnings"} <= set(data)
    json.dumps(data)


def test_pages_are_listed_and_read_and_paths_out_of_the_vault_refused(backend, tmp_path):
    s = backend.warm.settings()
    vault = s.paths.vault_dir
    (vault / "3_Personal").mkdir(parents=True)
    (vault / "3_Personal" / "Preferences.md").write_text(PAGE, encoding="utf-8")
    (vault / ".state").mkdir(parents=True, exist_ok=True)
    (vault / ".state" / "secret.md").write_text("x", encoding="utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "w.md").write_text("x", encoding="utf-8")
    (vault / "2_Wiki").mkdir()
    (vault / "2_Wiki" / "data.txt").write_text("x", encoding="utf-8")
    (vault / "2_Wiki" / "Big.md").write_bytes(b"a" * 1_000_001)
    outside = tmp_path / "outside.md"
    outside.write_text("not yours", encoding="utf-8")
    os.symlink(outside, vault / "2_Wiki" / "Escape.md")
    s.paths.memory_dir.mkdir(parents=True, exist_ok=True)
    (s.paths.memory_dir / "MEMORY.md").write_text("# Long-term Memory\n\n- tea\n", encoding="utf-8")

    pages = {p["name"]: p for p in backend.list_pages()["pages"]}
    assert "3_Personal/Preferences.md" in pages and "MEMORY.md" in pages
    assert pages["3_Personal/Preferences.md"]["claims"] == 2 and pages["3_Personal/Preferences.md"]["title"] == "Preferences"
    assert not any(n.startswith(".") or "Escape" in n for n in pages)

    assert backend.read_page("3_Personal/Preferences.md")["content"] == PAGE
    assert "- tea" in backend.read_page("MEMORY.md")["content"]
    for bad, words in [("../outside.md", "'..'"), ("/etc/passwd", "vault-relative"), (".state/secret.md", "hidden"),
                       (".obsidian/w.md", "hidden"), ("2_Wiki/data.txt", ".md"), ("2_Wiki/Escape.md", "link"),
                       ("2_Wiki/Big.md", "too large"), ("3_Personal/None.md", "no page"),
                       ("3_Personal/../../x.md", "'..'"), ("C:\\x.md", "vault-relative"), ("", "empty")]:
        with pytest.raises(InputInvalid) as exc:
            backend.read_page(bad)
        assert words in str(exc.value), (bad, str(exc.value))


def test_hook_recall_and_session_start_through_the_backend(backend, tmp_path):
    s = backend.warm.settings()
    log(s, "2026-06-19", "[preference] Prefers green tea in the morning", "[technical] The acme billing api uses postgres")
    indexed(backend)
    out = backend.hook_recall(payload_b64=b64(prompt("what tea do I like in the morning?")), mode="fts")
    assert out["warning"] is None
    data = json.loads(out["output"])["hookSpecificOutput"]
    assert data["hookEventName"] == "UserPromptSubmit" and "green tea" in data["additionalContext"]

    start = {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(tmp_path / "acme-billing" / "api"),
             "hook_event_name": "SessionStart", "source": "startup"}
    routed = backend.hook_recall(payload_b64=b64(json.dumps(start)))
    direct = backend.hook_session_start(payload_b64=b64(json.dumps(start)))
    assert routed == direct and direct["warning"] is None
    ctx = json.loads(direct["output"])["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart" and "postgres" in ctx["additionalContext"]
    assert backend.briefing(cwd=str(tmp_path / "acme-billing" / "api"))["text"] == ctx["additionalContext"]

    bad = backend.hook_recall(payload_b64=b64(b"not json"))
    assert bad["output"] is None and "recall skipped" in bad["warning"]
    with pytest.raises(InputInvalid):
        backend.hook_recall(payload_b64="%%%")


def test_hook_capture_spools_captures_and_makes_the_turn_recallable(backend, tmp_path):
    s = backend.warm.settings()
    log(s, "2026-06-19", "[personal] Lives in Porto")
    indexed(backend)
    t = Transcript(tmp_path / "session.jsonl")
    t.turn("My locker code at the gym is 4417.", "Noted.")
    t.turn("Thanks.", "Anytime.")
    out = backend.hook_capture(payload_b64=b64(hook_payload(t.path, event="SessionEnd")), timeout=60)
    assert out["report"]["turns"] >= 1 and out["report"]["left"] == 0, out
    assert out["indexed"] is True
    hits = backend.recall("locker code gym", mode="fts")["hits"]
    assert hits and hits[0]["date"] == DAY and "4417" in hits[0]["content"]
    assert not list((s.paths.state_dir / "spool").glob("*.json"))


# --- the index worker -----------------------------------------------------------------------------------------

class Blocking:
    """A runner that records each pass's files and waits for ``release`` before the first one returns."""

    def __init__(self, fail_first: bool = False):
        self.calls: list[list[Path] | None] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail_first = fail_first

    def __call__(self, settings, files, embedder):
        self.calls.append(None if files is None else [Path(f).name for f in files])
        self.started.set()
        assert self.release.wait(60)
        if self.fail_first and len(self.calls) == 1:
            raise RuntimeError("disk on fire")
        return {"ok": len(self.calls)}


def test_index_worker_coalesces_requests_made_during_a_pass(settings):
    runner = Blocking()
    worker = IndexWorker(lambda: settings, runner=runner)
    try:
        assert worker.reindex([Path("a.md")]) is False  # not waiting: queued
        assert runner.started.wait(30)
        worker.reindex([Path("b.md")])
        worker.reindex([Path("c.md"), Path("b.md")])
        assert worker.reindex([Path("d.md")], wait=0.01) is False  # the first pass is still running
        assert worker.state()["running"] is not None and worker.state()["pending"] >= 3
        runner.release.set()
        assert worker.reindex([Path("e.md")], wait=60) is True
        assert runner.calls[0] == ["a.md"]
        assert sorted(sum(runner.calls[1:], [])) == ["b.md", "c.md", "d.md", "e.md"]
        assert len(runner.calls) <= 3  # b, c, d joined one pass (e may have joined it too)
        worker.reindex([Path("f.md")])
        assert worker.reindex(None, wait=60) is True and runner.calls[-1] is None  # everything absorbs files
    finally:
        runner.release.set()
        worker.close(30)
    assert not worker.alive and worker.reindex(wait=1) is False


def test_index_worker_survives_a_failing_pass_and_records_it(settings):
    runner = Blocking(fail_first=True)
    runner.release.set()
    worker = IndexWorker(lambda: settings, runner=runner)
    try:
        assert worker.reindex([Path("a.md")], wait=60) is False
        error = worker.state()["last_error"]
        assert "disk on fire" in error["message"] and error["time"]
        assert worker.alive and worker.reindex([Path("b.md")], wait=60) is True
        assert worker.call(lambda: 41 + 1, timeout=60) == 42
        with pytest.raises(ZeroDivisionError):
            worker.call(lambda: 1 / 0, timeout=60)
        assert worker.alive and worker.state()["passes"] == 2
    finally:
        worker.close(30)


def test_a_cli_index_beside_a_warm_store_is_seen_and_never_a_second_writer(tmp_path):
    home = tmp_path / "home"
    s = settings_at(home, env=HASH_ENV)
    log(s, "2026-06-18", *[f"[general] Old fact number {i}" for i in range(5)])
    warm = Warm(s)
    try:
        assert warm.index.reindex(None, wait=120)
        store = warm.store()
        assert store.count() == 5
        log(s, "2026-06-19", *[f"[general] New fact number {i}" for i in range(7)])
        log(s, "2026-06-20", "[general] Server fact")
        # the CLI and the warm worker index at the same time: the indexer's lock serializes them
        request = threading.Thread(target=warm.index.reindex, args=([s.paths.log_path(s.today)],),
                                   kwargs={"wait": 120})
        request.start()
        r = run_cli(home, "index", env_extra=HASH_ENV)
        request.join(180)
        assert r.returncode == 0, r.stderr
        assert warm.store().count() == 13  # the CLI's commit is seen without any pass of this process
        assert warm.index.reindex(None, wait=120), warm.index.last_error
        fresh = warm.store()
        assert fresh is store and fresh.count() == 13
        total, derived = fresh.verify()
        assert total == derived == 13
        assert len(fresh.ids_by_source()) == 3
    finally:
        warm.close()


def test_concurrent_agents_lose_and_duplicate_nothing(backend):
    s = backend.warm.settings()
    log(s, "2026-06-19", "[general] Seed fact about gardens")
    indexed(backend)
    errors: list[BaseException] = []

    def agent(n: int) -> None:
        try:
            for i in range(5):
                result = backend.remember(facts=[f"[general] Agent {n} remembers item {i}"], session=f"agent{n}")
                assert result["captured"] == 1
                backend.recall(f"agent {n} item", mode="hybrid", limit=3)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert errors == []
    written = [ln for ln in s.paths.log_path(s.today).read_text(encoding="utf-8").splitlines() if ln.startswith("- [")]
    assert sorted(written) == sorted(f"- [general] Agent {n} remembers item {i}" for n in range(4) for i in range(5))
    indexed(backend)
    total, derived = backend.warm.store().verify()
    assert total == derived == 21
    found = [h["content"] for h in backend.recall("agent remembers item", mode="fts", limit=50)["hits"]]
    assert sorted(found) == sorted(f"Agent {n} remembers item {i}" for n in range(4) for i in range(5))
    state = backend.warm.state()
    assert state["index_worker"]["last_error"] is None and state["store_version"] is not None


def test_a_pass_with_a_file_it_could_not_index_is_not_reported_as_indexed(settings):
    from suzent_cli.index.indexer import IndexReport

    def runner(settings, files, embedder):
        return IndexReport(errors=[("archive:2026-06-20.md", "embedding failed")])

    worker = IndexWorker(lambda: settings, runner=runner)
    try:
        assert worker.reindex([Path("2026-06-20.md")], wait=60) is False
        assert "2026-06-20.md: embedding failed" in worker.state()["last_error"]["message"]
        assert worker.state()["last_pass"]["report"]["errors"][0]["source"] == "archive:2026-06-20.md"
    finally:
        worker.close(30)


def test_a_pass_refused_by_a_busy_indexer_lock_runs_again_by_itself(settings):
    from suzent_cli.errors import LockTimeout

    calls: list = []
    done = threading.Event()

    def runner(settings, files, embedder):
        calls.append([Path(f).name for f in files])
        if len(calls) == 1:
            raise LockTimeout("could not lock .indexer.lock within 30s (another suzent process holds it)")
        done.set()
        return {"ok": True}

    worker = IndexWorker(lambda: settings, runner=runner)
    try:
        worker.reindex([Path("a.md")], wait=60)  # True or False: the retry may finish before this waiter wakes
        assert done.wait(60) and calls == [["a.md"], ["a.md"]]
        assert "could not lock" in worker.state()["last_error"]["message"]
        assert worker.reindex([Path("b.md")], wait=60) is True and calls[-1] == ["b.md"]
    finally:
        worker.close(30)


def test_http_remember_repairs_a_control_character_and_half_an_emoji(backend):
    """F3 through the HTTP local API on the real ops: the JSON body's ``\\u0007`` and ``\\ud83d`` cost only
    themselves; the turn is captured."""
    import asyncio

    import httpx2

    from suzent_cli.server.http import local_app
    from suzent_cli.server.stats import Stats

    body = json.dumps({"turn": "I work at Acme as a nurse. My cat is called T\u0007om.", "session": "h\u0000"})
    body = body.replace("nurse.", "nurse \\ud83d.")

    async def go():
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=local_app(backend, Stats())),
                                      base_url="http://test") as client:
            return await client.post("/v1/remember", content=body.encode())

    r = asyncio.run(go())
    assert r.status_code == 200, r.text
    said = [o["text"] for o in r.json()["outcomes"] if o["outcome"] == "captured"]
    assert said and any("Tom" in t for t in said)
