"""``capture`` writes its entry heading at the settings' clock: ``--now``/``SUZENT_NOW`` fix the time of the
``## HH:MM — session`` heading as they fix the day (a regression: the heading once took the wall clock)."""

from __future__ import annotations

from conftest import invoke

LOG = ("sandbox", "shared", "memory", "archive")


def _log(home, day: str) -> str:
    return home.joinpath(*LOG, f"{day}.md").read_text(encoding="utf-8")


def test_suzent_now_sets_the_entry_heading(home):
    r = invoke(home, "capture", "--fact", "[personal] Lives in Lisbon", env_extra={"SUZENT_NOW": "2026-06-01T03:07"})
    assert r.returncode == 0, r.stderr
    assert "## 03:07 \u2014 cli\n" in _log(home, "2026-06-01")


def test_the_now_flag_sets_the_entry_heading_and_time_still_wins(home):
    r = invoke(home, "--now", "2026-06-02T23:59Z", "capture", "--fact", "[goal] Run a marathon", "--json")
    assert r.returncode == 0, r.stderr
    assert "## 23:59 \u2014 cli\n" in _log(home, "2026-06-02")
    r = invoke(home, "--now", "2026-06-02T23:59Z", "capture", "--fact", "[goal] Swim a mile", "--time", "08:15")
    assert r.returncode == 0, r.stderr
    assert "## 08:15 \u2014 cli\n" in _log(home, "2026-06-02")
