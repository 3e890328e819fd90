"""Issue 5 end to end, through whole `suzent` commands (in-process) and a real LanceDB index (hash embedder): twelve
restatements become one claim confirmed 12x with no duplicate rows, and a knowledge update ranks the new value
first after the dream."""

from __future__ import annotations

import json

from conftest import HASH_ENV, invoke
from suzent_cli.vault.pages import read_page


def cli(home, *args, now: str, **kw):
    """``suzent ARGS`` at the instant ``now``; every step here has work to do, so each exits 0 (4, idle, would mean
    a capture, dream or recall found nothing)."""
    proc = invoke(home, *args, env_extra=HASH_ENV | {"SUZENT_NOW": now}, **kw)
    assert proc.returncode == 0, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc


def test_twelve_restatements_over_a_week_become_one_claim_confirmed_12x(home):
    turn = json.dumps({"user": "I prefer green tea over coffee in the morning.", "assistant": "Noted."})
    days = ["2026-06-01", "2026-06-01", "2026-06-02", "2026-06-02", "2026-06-03", "2026-06-03", "2026-06-04",
            "2026-06-05", "2026-06-05", "2026-06-06", "2026-06-07", "2026-06-07"]
    for i, day in enumerate(days):
        cli(home, "capture", "--turn-from", "-", "--date", day, "--time", f"{9 + i % 8:02d}:00", "--index",
            input=turn, now=f"{day}T20:00")
    logs = "".join(p.read_text() for p in sorted((home / "sandbox/shared/memory/archive").glob("*.md")))
    assert logs.count("green tea") == 1  # the first statement is logged; the other eleven are confirmations
    assert len((home / "notebook/.state/confirmations.jsonl").read_text().splitlines()) == 11
    cli(home, "dream", "--force", now="2026-06-08T03:00")
    (claim,) = read_page(home / "notebook/3_Personal/Preferences.md").claims()
    assert (claim.count, claim.last.isoformat()) == (12, "2026-06-07")
    assert (home / "notebook/.state/confirmations.jsonl").read_text() == ""
    hits = json.loads(cli(home, "recall", "green tea", "--json", now="2026-06-08T09:00").stdout)["hits"]
    texts = [h["content"] for h in hits]
    # one statement, one hit: the vault claim citing the original log row stands for both, and no duplicates
    assert sum("green tea" in t for t in texts) == 1 and hits[0]["confirmations"] == 12
    assert "(confirmed" not in texts[0] and "(confirmed 12x" in hits[0]["stored"]  # the lifecycle is in fields


def test_knowledge_update_ranks_the_new_value_first_after_the_dream(home):
    """"Lives in Berlin", months later "Moved to Lisbon": after the dream, the first hit about where the user lives
    is the current Lisbon claim; Berlin survives only as history, ranked below it."""
    cli(home, "capture", "--date", "2026-01-10", "--fact", "[personal] Lives in Berlin",
        "--fact", "[technical] Uses neovim for Python work", "--fact", "[goal] Wants to run a marathon in October",
        "--fact", "[preference] Prefers window seats on trains", now="2026-01-10T12:00")
    cli(home, "capture", "--date", "2026-01-11", "--fact", "[preference] Likes cycling",
        "--fact", "[context] Works on the billing service migration", "--fact", "[preference] Drinks flat whites",
        now="2026-01-11T12:00")
    cli(home, "index", now="2026-01-12T12:00")
    cli(home, "dream", "--force", now="2026-01-12T12:00")
    cli(home, "capture", "--date", "2026-05-02", "--fact", "[personal] Moved to Lisbon", now="2026-05-02T12:00")
    cli(home, "dream", "--force", now="2026-05-03T12:00")
    for mode in ("hybrid", "fts", "vector"):
        # The hash embedder is lexical ("live" is not "Lives", and "the user" scores as high against unrelated text):
        # alone, it needs the words of the facts to find them.
        query = "Berlin Lisbon" if mode == "vector" else "where does the user live"
        hits = json.loads(cli(home, "recall", query, "--json", "--mode", mode, "--limit", "20",
                              now="2026-05-03T13:00").stdout)["hits"]
        about = [h["content"] for h in hits if "Berlin" in h["content"] or "Lisbon" in h["content"]]
        first = next(h for h in hits if "Berlin" in h["content"] or "Lisbon" in h["content"])
        assert about and "Lisbon" in about[0] and first["until"] is None, (mode, about)  # the current value
        if mode != "vector":  # lexically, the current claim also answers for the old one
            assert about[0].startswith("Moved to Lisbon (since 2026-05-02); previously: Lives in Berlin"), about
        old = [h for h in hits if "Berlin" in h["content"] and "Lisbon" not in h["content"]]
        assert all(h["status"] == "superseded" and h["until"] for h in old), old  # the old value is history
    profile = read_page(home / "notebook/3_Personal/Profile.md")
    assert [c.text for c in profile.claims("Previously")] == ["Lives in Berlin"]
