"""Promote keeps the facts the dream has not folded yet (issue 16, section 3): the vault only holds past days, so
MEMORY.md's generated zone carries today's facts (and any not yet consolidated) in a ``## Recent`` section after
the promoted claims, within the zone's size bound, never duplicating a fact that is already a current claim."""

from __future__ import annotations

import datetime as dt

import pytest

from conftest import HASH_ENV, invoke, log, settings_at
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import DreamConfig
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.promote import RECENT, promote
from suzent_cli.vault import bootstrap
from suzent_cli.vault.memory_md import MARKER, memory_path


def generated(settings) -> str:
    return memory_path(settings).read_text(encoding="utf-8").split(MARKER)[0]


def section(zone: str, title: str) -> list[str]:
    """The bullets of the ``## title`` section of ``zone`` (empty when there is none)."""
    lines = zone.split("\n")
    if f"## {title}" not in lines:
        return []
    out = []
    for line in lines[lines.index(f"## {title}") + 1:]:
        if not line.startswith("- "):
            break
        out.append(line[2:])
    return out


def capture(home, now: str, *facts: str, date: str | None = None):
    args = ["--now", now, "capture", *[a for f in facts for a in ("--fact", f)]] + (["--date", date] if date else [])
    r = invoke(home, *args)
    assert r.returncode == 0, r.stderr
    return r


def test_todays_facts_survive_a_dream_and_promote_as_a_new_user_runs_them(home):
    capture(home, "2026-06-14T09:00", "[preference] Prefers dark mode in every editor", "[personal] Lives in Lisbon",
            "[preference] Drinks oolong tea every morning")
    capture(home, "2026-06-15T10:00", "[personal] Adopted a cat named Miso",
            "[goal] Wants to run a marathon in October", "[preference] Drinks oolong tea every morning",
            "[general] Standup moved to 9:30")
    s = settings_at(home, "2026-06-15T10:05")
    before = generated(s)
    assert "Adopted a cat named Miso" in before  # the per-capture refresh showed today's facts

    r = invoke(home, "--now", "2026-06-15T10:05", "dream", "--force", "--engine", "offline")
    assert r.returncode == 0, r.stderr
    zone = generated(s)
    assert "Lives in Lisbon" in zone and "Prefers dark mode in every editor" in zone  # the vault's claims
    # today's facts were not folded (the dream never ingests today) and must not vanish
    assert section(zone, RECENT) == ["Wants to run a marathon in October", "Adopted a cat named Miso"]  # newest first
    assert zone.count("Drinks oolong tea every morning") == 1  # in the vault and in today's log: once
    assert "Standup" not in zone  # the zone's categories, as the refresh had them
    assert zone.index("Lives in Lisbon") < zone.index(f"## {RECENT}")  # the claims first, the newest after them

    r = invoke(home, "--now", "2026-06-15T10:06", "promote", "--engine", "offline")
    assert r.returncode == 0 and "unchanged" in r.stdout and "2 recent fact(s)" in r.stdout, r.stdout
    assert generated(s) == zone

    # a capture after the dream refreshes the Recent section; promote then agrees with it
    capture(home, "2026-06-15T14:00", "[preference] Switched to light mode in the evening",
            "[personal] Lives in Lisbon")
    zone = generated(s)
    assert section(zone, RECENT) == ["Switched to light mode in the evening", "Wants to run a marathon in October",
                                     "Adopted a cat named Miso"]
    assert zone.count("Lives in Lisbon") == 1
    r = invoke(home, "--now", "2026-06-15T14:01", "promote", "--engine", "offline")
    assert r.returncode == 0 and "unchanged" in r.stdout, r.stdout

    # the next day's dream folds 06-15: its facts move to the vault, the Recent section goes
    r = invoke(home, "--now", "2026-06-16T08:00", "dream", "--force", "--engine", "offline")
    assert r.returncode == 0, r.stderr
    zone = generated(settings_at(home, "2026-06-16T08:00"))
    assert "Adopted a cat named Miso" in zone and f"## {RECENT}" not in zone
    assert zone.count("Adopted a cat named Miso") == 1


def test_suzent_run_keeps_todays_facts(home):
    env = HASH_ENV
    capture(home, "2026-06-14T09:00", "[personal] Lives in Lisbon", "[preference] Prefers dark mode")
    capture(home, "2026-06-15T09:00", "[goal] Wants to learn Portuguese")
    r = invoke(home, "--now", "2026-06-15T12:00", "run", "--force", env_extra=env)
    assert r.returncode == 0, r.stdout + r.stderr
    zone = generated(settings_at(home, "2026-06-15T12:00"))
    assert "Lives in Lisbon" in zone and section(zone, RECENT) == ["Wants to learn Portuguese"]


def test_late_lines_and_pending_days_are_recent_until_folded(home):
    s = settings_at(home, "2026-06-12T08:00")
    log(s, "2026-06-10", "[personal] Lives in Lisbon")
    DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)  # watermark 2026-06-11 at most
    s = settings_at(home, "2026-06-14T08:00")
    # a backfill into a folded day (a late line), a day the dream has not reached, and today
    write_facts(s, [Fact("Has a sister named Rita", "personal")], day=dt.date(2026, 6, 10), time="20:00",
                refresh=False)
    log(s, "2026-06-13", "[preference] Likes green tea")
    log(s, "2026-06-14", "[goal] Wants a garden")
    result = promote(s, engine="offline")
    assert result.status == "written" and result.recent == 3
    assert section(generated(s), RECENT) == ["Wants a garden", "Likes green tea", "Has a sister named Rita"]


def test_a_fact_already_a_claim_is_not_repeated_and_forgotten_facts_stay_out(settings):
    from suzent_cli.vault.state import append_tombstones

    bootstrap(settings.paths.vault_dir)
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Claims\n\n- Lives in Lisbon (confirmed 2x, last 2026-06-09)\n",
                    encoding="utf-8")
    log(settings, settings.today, "[personal] lives in lisbon.", "[personal] Has a secret hobby",
        "[personal] Plays the cello")
    append_tombstones(settings.paths.state_dir, ["Has a secret hobby"], reason="forget", timeout=5)
    assert promote(settings, engine="offline").recent == 1
    zone = generated(settings)
    assert section(zone, "Profile") == ["Lives in Lisbon"] and section(zone, RECENT) == ["Plays the cello"]
    assert "secret" not in zone


def test_recent_facts_alone_are_written_when_no_claim_is_current(settings):
    bootstrap(settings.paths.vault_dir)
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Previously\n\n- Lived in Porto\n", encoding="utf-8")
    assert promote(settings, engine="offline").status == "nothing"
    log(settings, settings.today, "[personal] Lives in Lisbon")
    result = promote(settings, engine="offline")
    assert (result.status, result.claims, result.recent) == ("written", 0, 1)
    assert section(generated(settings), RECENT) == ["Lives in Lisbon"]


@pytest.mark.parametrize("max_lines,max_bytes", [(200, 16000), (30, 3000), (6, 400)])
def test_size_bound_is_shared_half_and_half_at_most(settings, max_lines, max_bytes):
    bootstrap(settings.paths.vault_dir)
    for p in range(20):
        page = settings.paths.vault_dir / "3_Personal" / f"Topic{p:02d}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"---\ntitle: Topic {p}\n---\n# Topic {p}\n\n## Claims\n\n"
                        + "".join(f"- Claim {p}-{i} with some words\n" for i in range(30)), encoding="utf-8")
    for i in range(80):
        log(settings, settings.today, f"[personal] Recent fact number {i}", time=f"{i // 60:02d}:{i % 60:02d}")
    result = promote(settings, engine="offline", max_lines=max_lines, max_bytes=max_bytes)
    assert result.status == "written"
    raw = memory_path(settings).read_bytes().split(MARKER.encode())[0]
    assert raw.count(b"\n") <= max_lines and len(raw) <= max_bytes and b"cut to the size bound" not in raw
    recent = section(raw.decode(), RECENT)
    assert len(recent) == result.recent <= 50
    assert recent == [f"Recent fact number {i}" for i in range(79, 79 - len(recent), -1)]  # the newest ones
    if max_lines >= 30:
        assert result.claims > 0 and recent  # neither crowds the other out
        body = raw.decode().split(f"## {RECENT}")
        assert body[1].count("\n") <= max_lines // 2
        if max_lines == 200:
            assert result.recent == 50  # the section's own limit, as the per-capture refresh has it
        else:
            assert any("facts not yet consolidated" in w for w in result.warnings)


def test_capture_refresh_keeps_any_body_promote_wrote_and_bounds_the_whole_zone(settings):
    from suzent_cli.vault.memory_md import write_generated

    bootstrap(settings.paths.vault_dir)
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Claims\n\n- Lives in Lisbon\n", encoding="utf-8")
    digest = "## Who\n- Ana, a designer in Lisbon\n\n## Health\n" + "".join(f"- Note {i}\n" for i in range(20))
    write_generated(settings, digest, writer="promote", max_lines=30, max_bytes=3000)  # e.g. the claude digest
    memory_path(settings).write_text(memory_path(settings).read_text() + "- my own line\n", encoding="utf-8")
    r = write_facts(settings, [Fact("Ana, a designer in Lisbon", "personal")] +
                    [Fact(f"Fresh fact {i}", "goal") for i in range(12)], time="10:00", refresh=False)
    from suzent_cli.promote import legacy_refresh

    out = legacy_refresh(settings, max_lines=30, max_bytes=3000)
    assert r.path is not None and out["status"] == "written"
    data = memory_path(settings).read_text(encoding="utf-8")
    zone, manual = data.split(MARKER)
    assert manual == "\n- my own line\n"  # the manual zone, byte for byte
    assert zone.count("\n") <= 30 and len(zone.encode()) <= 3000 and "cut to the size bound" not in zone
    assert zone.startswith("# Long-term Memory\n\n## Who\n- Ana, a designer in Lisbon\n\n## Health\n- Note 0\n")
    recent = section(zone, RECENT)
    assert recent and recent == [f"Fresh fact {i}" for i in range(11, 11 - len(recent), -1)]
    assert zone.count("Ana, a designer in Lisbon") == 1  # already a bullet of the digest
    assert "Note 19" not in zone  # the digest's last lines made room for the newest facts
    assert legacy_refresh(settings, max_lines=30, max_bytes=3000)["status"] == "unchanged"


def test_capture_refresh_never_touches_an_unmarked_manual_memory_md(settings):
    bootstrap(settings.paths.vault_dir)
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Claims\n\n- Lives in Lisbon\n", encoding="utf-8")
    memory_path(settings).parent.mkdir(parents=True, exist_ok=True)
    memory_path(settings).write_text("# Long-term Memory\n\nmy notes\n", encoding="utf-8")
    r = write_facts(settings, [Fact("Plays the cello", "personal")], time="10:00")
    assert r.refresh["status"] == "manual" and r.warnings == []
    assert memory_path(settings).read_text(encoding="utf-8") == "# Long-term Memory\n\nmy notes\n"


def test_the_claude_digest_is_followed_by_the_recent_section_within_the_bound(settings):
    import dataclasses

    from fake_anthropic import running, text_reply

    bootstrap(settings.paths.vault_dir)
    page = settings.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Claims\n\n- Lives in Lisbon\n", encoding="utf-8")
    log(settings, settings.today, "[personal] Lives in Lisbon", "[goal] Wants a garden")
    claude = dataclasses.replace(settings, anthropic_api_key="test-key", claude_model="claude-promote-test")
    reply = "## Identity\n- Lives in Lisbon\n" + "".join(f"- filler {i}\n" for i in range(500))
    with running([(200, text_reply(reply))]) as api:
        result = promote(dataclasses.replace(claude, anthropic_base_url=api.url), max_lines=40)
    assert (result.status, result.engine, result.recent) == ("written", "claude", 1)
    assert "Hard limit: 33 lines" in api.last["messages"][0]["content"]  # the bound minus the Recent section
    zone = memory_path(settings).read_bytes().split(MARKER.encode())[0].decode()
    assert zone.count("\n") <= 40 and zone.startswith("# Long-term Memory\n\n## Identity\n- Lives in Lisbon\n")
    assert section(zone, RECENT) == ["Wants a garden"] and "cut to the size bound" not in zone
