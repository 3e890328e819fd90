"""MEMORY.md's two writers: the legacy per-capture refresh and promote, and the hand-over between them."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest
from fake_anthropic import NO_RETRY_WAIT, SERVER_ERROR, running, text_reply

from conftest import invoke
from suzent_cli.archive import Fact, append_entry
from suzent_cli.capture import write_facts
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.dream.runner import FOLLOW_UPS, DreamRunner, StepResult, TickResult, promote_step
from suzent_cli.promote import legacy_refresh, promote
from suzent_cli.vault import bootstrap
from suzent_cli.vault.memory_md import MARKER, memory_path


def page(title: str, claims: list[str], previously: list[str] = (), status: str = "active") -> str:
    text = f"---\ntitle: {title}\nstatus: {status}\n---\n# {title}\n\n## Claims\n\n" + "".join(f"- {c}\n" for c in claims)
    if previously:
        text += "\n## Previously\n\n" + "".join(f"- {c}\n" for c in previously)
    return text


def put(settings, rel: str, text: str) -> Path:
    bootstrap(settings.paths.vault_dir)
    path = settings.paths.vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def recall(settings, *snippets: str) -> None:
    state = settings.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    with (state / "recall_log.jsonl").open("a", encoding="utf-8") as fh:
        for s in snippets:
            fh.write(json.dumps({"ts": "2026-06-09T10:00:00+00:00", "snippet": s, "source_type": "vault",
                                 "query": "q"}) + "\n")


def generated(settings) -> str:
    return memory_path(settings).read_text(encoding="utf-8").split(MARKER)[0]


# --- the hand-over ---------------------------------------------------------------------------------------------

def test_refresh_writes_until_the_first_personal_page_then_promote_owns_the_zone(settings):
    r = write_facts(settings, [Fact("Lives in Berlin", "personal"), Fact("Likes green tea", "preference"),
                               Fact("Standup at 9:30", "general")], time="10:00")
    assert r.refresh["status"] == "written" and r.warnings == []
    zone = generated(settings)
    assert "refresh" in zone and "## Personal\n- Lives in Berlin" in zone and "Standup" not in zone
    # a general fact never triggers the refresh
    assert write_facts(settings, [Fact("Bought milk")], time="10:01").refresh is None

    before = memory_path(settings).read_bytes()
    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin (confirmed 2x, last 2026-06-09)"]))
    r = write_facts(settings, [Fact("Wants to learn Rust", "goal")], time="10:02")
    # promote owns the zone now: a capture only refreshes its Recent section, the rest is kept as it was
    assert (r.refresh["status"], r.refresh["facts"]) == ("written", 1)
    kept = before.split(b"\n\n*Generated")[0]
    assert memory_path(settings).read_bytes().startswith(kept + b"\n\n## Recent (not yet consolidated)\n"
                                                          b"- Wants to learn Rust\n")

    result = promote(settings, engine="offline")
    assert (result.status, result.engine, result.claims, result.pages) == ("written", "offline", 1, 1)
    zone = generated(settings)
    assert "suzent promote" in zone and "## Profile\n- Lives in Berlin\n" in zone
    # no dream folded the logs yet: their other facts stay, after the claims (tests/test_promote_today.py)
    assert "## Recent (not yet consolidated)\n- Wants to learn Rust\n- Likes green tea\n" in zone
    assert "confirmed" not in zone  # no markers or provenance in MEMORY.md
    assert promote(settings, engine="offline").status == "unchanged"


def test_hand_over_through_a_real_rules_dream(home):
    s = resolve_settings(home=home, now="2026-06-20T12:00", env={})
    for day in ("2026-06-18", "2026-06-19"):
        r = write_facts(s, [Fact("Lives in Berlin", "personal"), Fact("Likes tea", "preference")],
                        day=dt.date.fromisoformat(day), time="09:00")
        assert r.refresh["status"] in ("written", "unchanged")
    refreshed = memory_path(s).read_bytes()
    assert b"Lives in Berlin" in refreshed
    tick = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
    assert tick.outcome == "ingested" and any(p.startswith("3_Personal/") for p in tick.pages_changed)
    r = write_facts(s, [Fact("Prefers dark mode", "preference")], time="10:00")
    assert r.refresh["status"] == "written" and r.refresh["facts"] == 1  # only the Recent section was rebuilt
    assert memory_path(s).read_bytes().startswith(refreshed.split(b"\n\n*Generated")[0] + b"\n\n## Recent")
    assert promote(s, engine="offline").status == "written"
    zone = generated(s)
    assert "Lives in Berlin" in zone and "Likes tea" in zone
    assert zone.count("Prefers dark mode") == 1  # today's fact, not folded yet, is kept (issue 16)


def test_refresh_failure_never_fails_the_capture(settings, monkeypatch):
    import suzent_cli.promote as mod

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(mod, "legacy_refresh", boom)
    r = write_facts(settings, [Fact("Lives in Berlin", "personal")], time="10:00")
    assert r.path is not None and r.path.is_file() and "Lives in Berlin" in r.path.read_text()
    assert r.refresh["status"] == "failed" and any("MEMORY.md was not refreshed" in w for w in r.warnings)


def test_refresh_is_newest_first_deduplicated_bounded_and_skips_forgotten(settings):
    for i in range(80):
        append_entry(settings.paths.archive_dir, dt.date(2026, 5, 1) + dt.timedelta(days=i % 30), f"{i % 24:02d}:00",
                     "s", [Fact(f"Fact number {i}", "personal"), Fact("Likes tea", "preference")], timeout=5)
    from suzent_cli.vault.state import append_tombstones

    append_tombstones(settings.paths.state_dir, ["Fact number 59"], reason="forget", timeout=5)
    out = legacy_refresh(settings)
    assert out["status"] == "written" and out["facts"] == 50
    zone = generated(settings)
    assert zone.count("Likes tea") == 1 and "Fact number 59\n" not in zone
    # day 2026-05-30 holds facts 29 and 59 (newest day first)
    assert zone.index("Fact number 29") < zone.index("Fact number 28")
    small = legacy_refresh(settings, max_lines=12, max_bytes=2000)
    assert small["status"] == "written"
    data = memory_path(settings).read_bytes().split(MARKER.encode())[0]
    assert data.count(b"\n") <= 12 and len(data) <= 2000 and b"cut to the size bound" not in data


# --- promote: ranking ------------------------------------------------------------------------------------------

def test_promote_orders_recalled_first_then_importance_and_excludes_history_and_deprecated(settings):
    put(settings, "3_Personal/Profile.md", page("Profile", [
        "Works at ACME (confirmed 9x, last 2026-06-01)",
        "Lives in Berlin (confirmed 1x, last 2026-06-09)",
        "Has a cat named Miso (confirmed 3x, last 2026-05-01)",
    ], previously=["Lived in Madrid (confirmed 4x, last 2025-01-01) (until 2026-06-01)"]))
    put(settings, "3_Personal/Preferences.md", page("Preferences", [
        "Prefers dark mode", "Likes green tea (confirmed 2x, last 2026-06-05)"]))
    put(settings, "3_Personal/Old.md", page("Old", ["Uses Windows (confirmed 20x, last 2026-06-01)"],
                                          status="deprecated"))
    put(settings, "3_Personal/Broken.md", "---\ntitle: [unclosed\n---\n## Claims\n\n- Broken claim\n")
    put(settings, "2_Wiki/Concepts/Rust.md", page("Rust", ["Rust has ownership (confirmed 9x, last 2026-06-01)"]))
    recall(settings, "- Lives in Berlin (confirmed 1x, last 2026-06-09)", "lives in berlin", "Prefers dark mode")

    result = promote(settings, engine="offline")
    assert result.status == "written" and result.claims == 5 and result.pages == 2
    assert any("Broken.md skipped" in w for w in result.warnings)
    zone = generated(settings)
    body = [ln for ln in zone.splitlines() if ln.startswith(("## ", "- "))]
    assert body == ["## Profile", "- Lives in Berlin", "- Works at ACME", "- Has a cat named Miso",
                    "## Preferences", "- Prefers dark mode", "- Likes green tea"]
    for absent in ("Madrid", "Windows", "Broken claim", "ownership", "source:"):
        assert absent not in zone


def test_promote_pages_ordered_by_their_best_claim(settings):
    put(settings, "3_Personal/A.md", page("Alpha", ["Plays chess (confirmed 2x, last 2026-06-01)"]))
    put(settings, "3_Personal/B.md", page("Beta", ["Speaks Portuguese"]))
    recall(settings, "speaks portuguese fluently? Speaks Portuguese")
    zone = generated(settings) if promote(settings, engine="offline").status == "written" else ""
    assert zone.index("## Beta") < zone.index("## Alpha")


def test_nothing_to_promote_without_a_personal_page(settings):
    put(settings, "2_Wiki/Concepts/Rust.md", page("Rust", ["Rust has ownership"]))
    result = promote(settings, engine="offline")
    assert result.status == "nothing" and result.write is None
    assert not memory_path(settings).exists()


@pytest.mark.parametrize("max_lines,max_bytes", [(200, 16000), (30, 3000), (6, 400)])
def test_size_bound_holds_for_a_huge_vault(settings, max_lines, max_bytes):
    def text(p, i):
        return f"Claim {p}-{i} " + "é long words " * (i % 7) + "end"

    for p in range(40):
        claims = [f"{text(p, i)} (confirmed {1 + i % 5}x, last 2026-06-0{1 + i % 9})" for i in range(60)]
        put(settings, f"3_Personal/Topic{p:02d}.md", page(f"Topic {p}", claims))
    recall(settings, *[text(p, 3) for p in range(0, 40, 3)])
    result = promote(settings, engine="offline", max_lines=max_lines, max_bytes=max_bytes)
    assert result.status == "written"
    zone = memory_path(settings).read_bytes().split(MARKER.encode())[0]
    assert zone.count(b"\n") <= max_lines and len(zone) <= max_bytes
    assert b"cut to the size bound" not in zone  # whole claims were chosen in code, nothing was cut mid-way
    assert f"- {text(0, 3)}\n".encode() in zone  # a recalled claim made it in first
    assert result.claims < 40 * 60 and f"{40 * 60 - result.claims} were left out" in result.warnings[-1]


# --- manual MEMORY.md ------------------------------------------------------------------------------------------

def test_unmarked_manual_memory_md_is_never_overwritten(settings):
    path = memory_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    manual = b"# My notes\r\n\r\n- I wrote this myself \xff\n"
    path.write_bytes(manual)
    r = write_facts(settings, [Fact("Lives in Berlin", "personal")], time="10:00")
    assert r.refresh["status"] == "manual" and path.read_bytes() == manual
    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin"]))
    result = promote(settings, engine="offline")
    assert result.status == "manual" and "untouched" in result.reason and path.read_bytes() == manual
    step = promote_step(settings, TickResult("ingested"))
    assert step.ok and step.name == "promote" and step.detail["status"] == "manual" and "manual" in step.detail["note"]


def test_manual_zone_below_the_marker_survives_promote(settings):
    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin"]))
    path = memory_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"old generated\n{MARKER}\n- my own line\n", encoding="utf-8")
    assert promote(settings, engine="offline").status == "written"
    text = path.read_text(encoding="utf-8")
    assert text.endswith(f"{MARKER}\n- my own line\n") and "Lives in Berlin" in text and "old generated" not in text


# --- claude engine ---------------------------------------------------------------------------------------------

def _claude(settings, url: str):
    return dataclasses.replace(settings, anthropic_api_key="test-key", anthropic_base_url=url,
                               claude_model="claude-promote-test")


def test_claude_engine_one_call_reply_is_the_body_bounded(settings):
    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin (confirmed 3x, last 2026-06-09)"]))
    recall(settings, *[f"snippet {i}" for i in range(40)])
    reply = "## Identity\n- Lives in Berlin\n" + "".join(f"- filler {i}\n" for i in range(500))
    with running([(200, text_reply(reply))]) as api:
        result = promote(_claude(settings, api.url), max_lines=40)
    assert (result.status, result.engine, result.warnings) == ("written", "claude", [])
    assert len(api.requests) == 1
    body = api.last
    assert body["model"] == "claude-promote-test" and "temperature" not in body
    prompt = body["messages"][0]["content"]
    assert "Lives in Berlin" in prompt and "- snippet 39" in prompt and "- snippet 9\n" not in prompt
    assert "Hard limit: 36 lines" in prompt
    zone = memory_path(settings).read_bytes().split(MARKER.encode())[0]
    assert zone.count(b"\n") <= 40 and b"## Identity\n- Lives in Berlin" in zone


def test_claude_engine_falls_back_to_offline_on_500(settings):
    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin"]))
    with running([(500, SERVER_ERROR, NO_RETRY_WAIT)]) as api:
        result = promote(_claude(settings, api.url), engine="auto")
    assert len(api.requests) >= 1
    assert (result.status, result.engine) == ("written", "offline")
    assert any("claude promote failed" in w and "500" in w for w in result.warnings)
    assert "## Profile\n- Lives in Berlin" in generated(settings)


def test_claude_engine_without_a_key_is_a_config_error(settings):
    from suzent_cli.errors import ConfigInvalid

    put(settings, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin"]))
    with pytest.raises(ConfigInvalid, match="ANTHROPIC_API_KEY"):
        promote(settings, engine="claude")


# --- the dream and the CLI -------------------------------------------------------------------------------------

def test_dream_runs_promote_after_reconcile(home):
    assert [name for name, _ in FOLLOW_UPS][:2] == ["reconcile", "promote"]
    s = resolve_settings(home=home, now="2026-06-20T12:00", env={})
    append_entry(s.paths.archive_dir, dt.date(2026, 6, 19), "09:00", "s", [Fact("Lives in Berlin", "personal")],
                 timeout=5)
    order: list[str] = []

    def fake_reconcile(settings, result, embedder=None):
        order.append("reconcile")
        return StepResult("reconcile", True)

    def spy_promote(settings, result, embedder=None):
        order.append("promote")
        return promote_step(settings, result, embedder)

    tick = DreamRunner(s, DreamConfig(), engine="rules",
                       follow_ups=[("reconcile", fake_reconcile), ("promote", spy_promote)]).tick(force=True)
    assert tick.outcome == "ingested" and order == ["reconcile", "promote"]
    step = tick.steps[1]
    assert (step.name, step.ok, step.detail["status"], step.detail["engine"]) == ("promote", True, "written", "offline")
    assert "Lives in Berlin" in generated(s)


def test_cli_promote_and_capture_json(home):
    proc = invoke(home, "capture", "--fact", "[personal] Lives in Berlin", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["refresh"]["status"] == "written"
    proc = invoke(home, "promote", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "nothing"

    s = resolve_settings(home=home, today="2026-06-10", env={})
    put(s, "3_Personal/Profile.md", page("Profile", ["Lives in Berlin", "Works at ACME"]))
    proc = invoke(home, "capture", "--fact", "[goal] Learn Rust", "--json")
    assert json.loads(proc.stdout)["refresh"]["status"] == "written"  # the Recent section only
    proc = invoke(home, "promote", "--engine", "offline", "--max-lines", "20", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["status"], data["engine"], data["claims"], data["pages"]) == ("written", "offline", 2, 1)
    assert data["lines"] <= 20
    proc = invoke(home, "promote", "--engine", "offline")
    assert proc.returncode == 0 and "unchanged" in proc.stdout
    proc = invoke(home, "promote", "--engine", "bogus")
    assert proc.returncode != 0 and "bogus" in proc.stderr
