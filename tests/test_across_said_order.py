"""Two findings of a new user's trial (issue 27): within one dream, statements filed on different pages are taken
in the order they were said, each ending the claim current at its time on whichever page of the scope it sits
(F2); and MEMORY.md's generated zone never keeps a claim the vault retired, while the person's zone below the
marker is never touched (F1). Real files, real runners, the CLI in-process."""

from __future__ import annotations

import random

import pytest

from conftest import invoke, log, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import content_pages
from suzent_cli.vault.memory_md import MARKER, memory_path
from suzent_cli.vault.pages import read_page

NOW = "2026-11-20T12:00"  # after every day the tests log
PROFILE, TECH, GENERAL = "3_Personal/Profile.md", "2_Wiki/Concepts/Technical.md", "2_Wiki/Concepts/General.md"


def tick(s):
    result = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
    assert result.outcome == "ingested", result.error
    return result


def claims(s, rel, section="Claims"):
    """``(text, until)`` of the claims of ``section`` on page ``rel`` (until: ISO day or None)."""
    page = read_page(s.paths.vault_dir / rel)
    return [(c.text, c.until.isoformat() if c.until else None) for c in page.claims(section)]


def current_everywhere(s, word: str) -> list[str]:
    """Every current claim holding ``word``, on any content page of the vault."""
    vault = s.paths.vault_dir
    found = []
    for path in content_pages(vault):
        if path.relative_to(vault).as_posix().count("/") == 0:
            continue
        found += [c.text for c in read_page(path).claims("Claims") if word in c.text]
    return found


def three_moves(s, last_category: str) -> None:
    log(s, "2026-11-01", "[personal] I live in Berlin now.")
    log(s, "2026-11-02", "[technical] I live in Madrid now.")
    log(s, "2026-11-03", f"[{last_category}] I live in Oslo now.")


def test_the_chain_reads_in_said_order_when_the_last_two_share_a_page(home):
    s = settings_at(home, NOW)
    three_moves(s, "technical")
    tick(s)
    assert claims(s, PROFILE) == []
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]
    assert [t for t, _ in claims(s, TECH)] == ["I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]
    assert claims(s, TECH, "Previously") == [("I live in Madrid now.", "2026-11-03")]


def test_the_chain_reads_in_said_order_when_it_comes_back_to_the_first_page(home):
    s = settings_at(home, NOW)
    three_moves(s, "personal")
    tick(s)
    assert [t for t, _ in claims(s, PROFILE)] == ["I live in Oslo now."]
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]  # not 11-03
    assert claims(s, TECH) == []
    assert claims(s, TECH, "Previously") == [("I live in Madrid now.", "2026-11-03")]


def test_a_claim_on_a_page_the_batch_does_not_touch_ends_at_the_first_statement_after_it(home):
    s = settings_at(home, NOW)
    log(s, "2026-11-01", "[personal] I live in Berlin now.")
    tick(s)
    log(s, "2026-11-02", "[technical] I live in Madrid now.")
    log(s, "2026-11-03", "[technical] I live in Oslo now.")
    tick(s)  # Profile.md is routed nothing: Madrid, said first, ends Berlin there
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]
    assert current_everywhere(s, "live in") == [
        "I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]


@pytest.mark.parametrize("apart", [True, False], ids=["two-dreams", "one-dream"])
def test_a_move_ends_the_residence_on_another_page_as_on_its_own(home, apart):
    s = settings_at(home, NOW)
    log(s, "2026-11-01", "[personal] I live in Berlin.")
    if apart:
        tick(s)
    log(s, "2026-11-02", "[general] I moved to Porto.")
    tick(s)
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin.", "2026-11-02")]
    assert claims(s, PROFILE) == []
    assert [t for t, _ in claims(s, GENERAL)] == ["I moved to Porto."]


def test_a_change_on_another_page_leaves_unrelated_claims_current(home):
    s = settings_at(home, NOW)
    log(s, "2026-11-01", "[personal] I live in Berlin now.", "[personal] I have two sisters.")
    log(s, "2026-11-02", "[technical] I live in Madrid now.", "[technical] I use Neovim for Python.")
    tick(s)
    assert [t for t, _ in claims(s, PROFILE)] == ["I have two sisters."]
    assert [t for t, _ in claims(s, TECH)] == ["I live in Madrid now.", "I use Neovim for Python."]


CITIES = ["Berlin", "Madrid", "Oslo", "Porto", "Lisbon", "Vienna", "Prague", "Dublin"]
CATEGORIES = ["personal", "technical", "general", "preference"]


@pytest.mark.parametrize("seed", range(6))
def test_any_sequence_of_moves_over_any_pages_leaves_the_last_said_current(home, seed):
    """Property: random residence statements over random categories (one a day, a city never twice in a row),
    folded by one dream, leave exactly one current residence, the last said; every other is history once."""
    rng = random.Random(seed)
    said: list[str] = []
    for n in range(rng.randint(3, 9)):
        city = rng.choice([c for c in CITIES if not said or c != said[-1]])
        said.append(city)
        log(settings_at(home, NOW), f"2026-10-{n + 1:02d}", f"[{rng.choice(CATEGORIES)}] I live in {city} now.")
    s = settings_at(home, NOW)
    tick(s)
    current = current_everywhere(s, "I live in")
    assert len(current) == 1 and current[0].startswith(f"I live in {said[-1]} now"), (said, current)


# --- through the CLI --------------------------------------------------------------------------------------------------

def sz(home, now: str, *args: str, input: str | None = None):
    result = invoke(home, "--now", now, *args, input=input)
    assert result.returncode == 0, result.stderr
    return result


def zones(home) -> tuple[str, str]:
    """MEMORY.md's generated zone and the person's zone (what follows the marker line)."""
    s = settings_at(home, NOW)
    text = memory_path(s).read_text()
    generated, _, manual = text.partition(MARKER + "\n")
    return generated, manual


def test_cli_one_dream_over_three_days_leaves_one_residence(home):
    sz(home, "2026-11-01T08:00", "init")
    sz(home, "2026-11-01T10:00", "capture", "--fact", "[personal] I live in Berlin now.")
    sz(home, "2026-11-02T10:00", "capture", "--fact", "[technical] I live in Madrid now.")
    sz(home, "2026-11-03T10:00", "capture", "--fact", "[technical] I live in Oslo now.")
    sz(home, "2026-11-04T09:00", "dream", "--force")
    s = settings_at(home, NOW)
    assert current_everywhere(s, "live in") == [
        "I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]
    generated, _ = zones(home)
    assert "Berlin" not in generated


def test_cli_memory_md_drops_a_claim_retired_from_another_page(home):
    sz(home, "2026-11-01T08:00", "init")
    turn = '{"user":"I work at Kestrel Analytics as a data engineer. Can you review my DAG?"}'
    sz(home, "2026-11-01T10:00", "capture", "--turn-from", "-", "--extractor", "offline", input=turn)
    sz(home, "2026-11-02T09:00", "dream", "--force")
    generated, manual = zones(home)
    assert "Kestrel" in generated
    path = memory_path(settings_at(home, NOW))
    mine = manual + "\nMy own note: keep answers short. \u00e9\n"
    path.write_text(generated + MARKER + "\n" + mine)
    quit_turn = '{"user":"I quit Kestrel last week. Help me write a CV?"}'
    sz(home, "2026-11-02T10:00", "capture", "--turn-from", "-", "--extractor", "offline", input=quit_turn)
    out = sz(home, "2026-11-03T09:00", "dream", "--force").stdout
    assert "nothing to promote" not in out
    generated, manual = zones(home)
    assert "Kestrel" not in generated and manual == mine  # the person's zone byte for byte
    sz(home, "2026-11-03T09:30", "promote")
    assert "Kestrel" not in zones(home)[0] and zones(home)[1] == mine  # promote again: still empty, still theirs


def test_cli_memory_md_drops_a_residence_a_general_fact_replaced(home):
    sz(home, "2026-11-01T08:00", "init")
    sz(home, "2026-11-01T10:00", "capture", "--fact", "[personal] I live in Madrid now.")
    sz(home, "2026-11-02T09:00", "dream", "--force")
    assert "Madrid" in zones(home)[0]
    sz(home, "2026-11-02T10:00", "capture", "--fact", "[general] I live in Oslo now.")
    sz(home, "2026-11-03T09:00", "dream", "--force")
    generated, _ = zones(home)
    assert "Madrid" not in generated


def test_promote_without_memory_md_writes_nothing(home):
    sz(home, "2026-11-01T08:00", "init")
    s = settings_at(home, NOW)
    log(s, "2026-11-01", "[personal] I live in Madrid now.")
    log(s, "2026-11-02", "[general] I live in Oslo now.")
    tick(s)
    memory_path(s).unlink(missing_ok=True)
    out = sz(home, "2026-11-03T09:00", "promote").stdout
    assert "nothing to promote" in out and not memory_path(s).exists()


def test_another_persons_residence_on_another_page_is_not_the_users(home):
    s = settings_at(home, NOW)
    log(s, "2026-11-01", "[personal] My brother lives in Leeds.", "[personal] I live in Berlin now.")
    log(s, "2026-11-02", "[general] I live in Oslo now.")
    tick(s)
    assert [t for t, _ in claims(s, PROFILE)] == ["My brother lives in Leeds."]
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]


class _Crash(Exception):
    """A crash between two page writes of one dream (raised by the seam, not by suzent)."""


def test_a_crash_between_the_page_writes_leaves_one_residence_after_the_rerun(home, monkeypatch):
    """Technical.md (Madrid, then Oslo) is written, the run dies before Profile.md (Berlin): the rerun folds Berlin
    again, sees Oslo current on another page since a later day and makes Berlin history at once."""
    from suzent_cli.dream import rules

    s = settings_at(home, NOW)
    three_moves(s, "technical")
    real = rules.write_page

    def write(path, page, **kw):
        if path.name == "Profile.md":
            raise _Crash
        return real(path, page, **kw)

    with monkeypatch.context() as m:
        m.setattr(rules, "write_page", write)
        crashed = DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
    assert crashed.outcome != "ingested" and "_Crash" in str(crashed.error), crashed
    assert [t for t, _ in claims(s, TECH)] == ["I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]
    tick(s)
    assert current_everywhere(s, "live in") == [
        "I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]
    assert [t for t, _ in claims(s, PROFILE, "Previously")] == ["I live in Berlin now."]


def test_a_person_edit_of_a_routed_page_keeps_their_line_and_the_retirement(home, monkeypatch):
    """Profile.md (Berlin, folded this batch) is edited by a person while the dream writes it: it is folded again
    from their text and Madrid's retirement of Berlin, decided on another page, is replayed onto it."""
    from suzent_cli.dream import rules

    s = settings_at(home, NOW)
    log(s, "2026-10-30", "[personal] I have two sisters.")
    tick(s)
    three_moves(s, "technical")
    real, edited = rules.write_page, []

    def write(path, page, **kw):
        if path.name == "Profile.md" and not edited:
            text = path.read_text()
            path.write_text(text.replace("- I have two sisters.", "- I have two sisters.\n- My own line: a cat.", 1))
            edited.append(path)
        return real(path, page, **kw)

    monkeypatch.setattr(rules, "write_page", write)
    tick(s)
    assert edited
    text = (s.paths.vault_dir / PROFILE).read_text()
    assert "- My own line: a cat." in text
    assert claims(s, PROFILE, "Previously") == [("I live in Berlin now.", "2026-11-02")]
    assert current_everywhere(s, "live in") == [
        "I live in Oslo now (since 2026-11-03); previously: I live in Madrid now."]
