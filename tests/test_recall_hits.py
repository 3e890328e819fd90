"""Issue 16 §3: a recall hit shows what it says and carries its lifecycle in fields. A vault hit reads as its claim
text (no "(confirmed Nx, last D)", "(until D)", "· source: F:L" markers), with its date (the claim's last
confirmation, or the page's ``updated``), session (of the daily-log line it cites), confirmations, verified, status,
until and cites filled; a daily-log hit keeps its capture date and session. The CLI (``--json``, the piped lines, the
terminal table) and the MCP shape (``hit_json``) read the same fields."""

from __future__ import annotations

import json
import re

import pytest

from conftest import HASH_ENV, invoke
from suzent_cli.recall import SHOWN_STEP, Hit, fill_provenance, order_scores
from suzent_cli.server.ops import hit_json
from suzent_cli.vault.claims import claims_last_date, plain_content

MARKERS = re.compile(r"\(confirmed \d+x|\(until \d|· source:|<!--")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cli(home, *args, now: str, **env):
    proc = invoke(home, *args, env_extra=HASH_ENV | {"SUZENT_NOW": now} | env)
    assert proc.returncode == 0, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.fixture
def dreamed(home):
    """A home where the offline dream made a vault page: "Drinks espresso" stated in session s-abc on 06-01 and
    again in s-def on 06-02 (one claim, confirmed 2x, citing 2026-06-01.md:5), then a fact captured after the dream
    (a daily-log row of its own, session s-new)."""
    cli(home, "capture", "--date", "2026-06-01", "--session", "s-abc", "--fact", "[preference] Drinks espresso in the "
        "morning", "--fact", "[technical] Uses neovim for Python work", now="2026-06-01T12:00")
    cli(home, "capture", "--date", "2026-06-02", "--session", "s-def", "--fact", "[preference] Drinks espresso in the "
        "morning", now="2026-06-02T12:00")
    cli(home, "dream", "--force", "--engine", "offline", now="2026-06-03T03:00")
    page = (home / "notebook/3_Personal/Preferences.md").read_text(encoding="utf-8")
    assert "- Drinks espresso in the morning (confirmed 2x, last 2026-06-02) · source: 2026-06-01.md:5" in page
    cli(home, "capture", "--date", "2026-06-04", "--session", "s-new", "--fact", "[preference] Drinks matcha in the "
        "afternoon", now="2026-06-04T12:00")
    cli(home, "index", now="2026-06-04T12:00")
    return home


def test_json_vault_hit_is_its_claim_text_with_the_lifecycle_in_fields(dreamed):
    hits = json.loads(cli(dreamed, "recall", "espresso morning", "--json", now="2026-06-05T09:00").stdout)["hits"]
    claim = next(h for h in hits if h["source_type"] == "notebook" and "espresso" in h["content"])
    assert claim["content"] == "Drinks espresso in the morning"
    assert claim["stored"] == ("- Drinks espresso in the morning (confirmed 2x, last 2026-06-02) · source: "
                               "2026-06-01.md:5")  # the row as indexed, for callers that need the markers
    assert claim["date"] == "2026-06-02"  # its last confirmation
    assert claim["session"] == "s-abc"  # the session of the line it cites
    assert (claim["confirmations"], claim["verified"], claim["status"], claim["until"], claim["cites"]) == (
        2, False, "active", None, ["2026-06-01.md:5"])
    assert (claim["source_file"], claim["locator"]) == ("3_Personal/Preferences.md", 0)  # existing keys stay
    assert not any(MARKERS.search(h["content"]) for h in hits)


def test_json_daily_log_hit_keeps_its_date_and_session(dreamed):
    hits = json.loads(cli(dreamed, "recall", "matcha afternoon", "--json", now="2026-06-05T09:00").stdout)["hits"]
    row = next(h for h in hits if "matcha" in h["content"])
    assert (row["source_type"], row["source_file"], row["locator"]) == ("archive_log", "2026-06-04.md", 5)
    assert (row["content"], row["date"], row["session"]) == ("Drinks matcha in the afternoon", "2026-06-04", "s-new")
    assert (row["confirmations"], row["verified"], row["status"], row["until"], row["cites"]) == (
        None, False, None, None, [])


def test_piped_lines_show_claim_text_date_session_and_lifecycle(dreamed):
    lines = cli(dreamed, "recall", "espresso morning", now="2026-06-05T09:00").stdout.splitlines()
    rows = [line.split("\t") for line in lines]
    claim = next(r for r in rows if r[2] == "3_Personal/Preferences.md#0")
    assert claim[3:] == ["2026-06-02", "s-abc", "Drinks espresso in the morning", "confirmed 2x · cites 2026-06-01.md:5"]
    lines = cli(dreamed, "recall", "matcha afternoon", now="2026-06-05T09:00").stdout.splitlines()
    log_row = next(line.split("\t") for line in lines if "matcha" in line)
    assert log_row[2:] == ["2026-06-04.md:5", "2026-06-04", "s-new", "Drinks matcha in the afternoon", ""]


def test_terminal_table_shows_claim_text_and_lifecycle_column(dreamed):
    table = ANSI.sub("", cli(dreamed, "recall", "espresso morning", now="2026-06-05T09:00", TTY_COMPATIBLE="1",
                             COLUMNS="200").stdout)
    row = next(line for line in table.splitlines() if "espresso" in line)
    cells = [c.strip() for c in re.split(r"[│┃]", row)[1:-1]]
    assert cells[2:] == ["Drinks espresso in the morning", "3_Personal/Preferences.md#0", "2026-06-02", "s-abc",
                         "confirmed 2x · cites 2026-06-01.md:5"]
    assert "lifecycle" in table and not MARKERS.search(table)


def _hit(content: str, source_type: str = "notebook", factors: dict | None = None, **kw) -> Hit:
    base = dict(id="r", content=content, score=1.0, source=f"{source_type}:P.md", source_type=source_type,
                source_file="P.md", locator=0, date=None, session=None, category=None, tags=[], importance=0.5,
                factors=factors or {})
    return Hit(**{**base, **kw})


def test_history_claim_reads_as_superseded_with_its_until_day():
    h = _hit("- Lives in Berlin (confirmed 3x, last 2026-01-10) (until 2026-05-02) · source: 2026-01-10.md:5",
             factors={"section": "Previously", "status": "active", "confirmations": 3})
    assert (h.text, h.status, h.until, h.confirmations, h.date, h.cites) == (
        "Lives in Berlin", "superseded", "2026-05-02", 3, "2026-01-10", ["2026-01-10.md:5"])


def test_verified_memory_line_drops_its_stamp_and_dates_from_it():
    h = _hit("- Uses neovim <!-- verified: human:ana@2026-06-10 -->", source_type="core_file",
             factors={"human": "human:ana@2026-06-10"})
    assert (h.text, h.verified, h.date, h.status, h.confirmations) == ("Uses neovim", True, "2026-06-10", None, None)


def test_plain_content_keeps_prose_and_structure_of_a_multi_line_row():
    text = "## Claims\n\n- Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7"
    assert plain_content(text) == "## Claims\n\n- Lived in Madrid"
    assert plain_content("Notes about tea.\n- Likes tea") == "Notes about tea.\n- Likes tea"
    assert claims_last_date("- a (confirmed 1x, last 2025-01-04)\n- b (confirmed 3x, last 2025-02-04)") == "2025-02-04"
    assert claims_last_date("prose only") is None


def test_fill_provenance_reads_the_page_date_and_survives_missing_files(tmp_path):
    vault, archive = tmp_path / "notebook", tmp_path / "archive"
    vault.mkdir()
    archive.mkdir()
    (vault / "P.md").write_text("---\ntitle: P\nupdated: 2026-03-04\n---\n\n# P\n\nSome prose.\n", encoding="utf-8")
    prose = _hit("Some prose.")
    orphan = _hit("- Likes tea (confirmed 1x, last 2026-02-01) · source: 2026-02-01.md:9", source_file="Q.md")
    fill_provenance([prose, orphan], archive, vault)
    assert (prose.date, prose.session) == ("2026-03-04", None)  # no claim: the page's updated day
    assert (orphan.date, orphan.session) == ("2026-02-01", None)  # the cited log is missing: session unknown


def test_mcp_hit_json_reads_the_same_fields_as_the_cli():
    h = _hit("- Likes tea (confirmed 2x, last 2026-02-03) · source: 2026-02-01.md:9", factors={"status": "draft"},
             session="s-1")
    j, d = hit_json(h), h.as_dict()
    assert j["content"] == d["content"] == "Likes tea"
    for key in ("date", "session", "confirmations", "verified", "status", "until", "cites"):
        assert j[key] == d[key], key
    assert (j["status"], j["confirmations"], j["cites"]) == ("draft", 2, ["2026-02-01.md:9"])


def test_explain_says_why_a_newer_row_ranks_above_a_better_scored_older_one(home):
    """prefer_newer moves the newer row above the older one; the shown score follows the shown order (issue 27: the
    trial read "1 0.7991 … 2 1.1967"), and --explain keeps the ranking score and says why the row moved."""
    cli(home, "init", now="2026-11-20")
    cli(home, "capture", "--fact", "I prefer dark mode in every editor", now="2026-11-20")
    cli(home, "capture", "--fact", "I now prefer light mode", now="2026-11-25")
    cli(home, "index", now="2026-11-28")
    out = json.loads(cli(home, "recall", "prefer dark mode in every editor", "--json", "--explain",
                         now="2026-11-28").stdout)
    first, second = out["hits"][:2]
    assert first["content"] == "I now prefer light mode" and first["ranked_score"] < second["score"]
    assert first["score"] == pytest.approx(second["score"] + SHOWN_STEP)  # shown just above the row it moved past
    assert first["placed_above"].startswith(second["id"] + ' "I prefer dark mode in every editor"')
    assert second["placed_above"] is None and second["ranked_score"] is None
    text = ANSI.sub("", cli(home, "recall", "prefer dark mode in every editor", "--explain", now="2026-11-28").stdout)
    assert 'placed above ' + second["id"] + ' "I prefer dark mode' in text
    assert f"final {first['ranked_score']:.4f} = " in text  # the ranking's own arithmetic, unchanged
    assert (f"shown {first['score']:.4f} (its ranking score {first['ranked_score']:.4f}, raised to just above the "
            "row below it") in text
    plain = json.loads(cli(home, "recall", "prefer dark mode in every editor", "--json", now="2026-11-28").stdout)
    assert "placed_above" not in plain["hits"][0] and "ranked_score" not in plain["hits"][0]  # explain fields only
    assert [h["score"] for h in plain["hits"]] == [h["score"] for h in out["hits"]]


def _shown_scores_fall(scores: list[float]) -> None:
    assert scores, "no hits"
    assert all(a >= b for a, b in zip(scores, scores[1:], strict=False)), scores


def test_every_output_shows_scores_in_the_order_it_shows_hits(home):
    """The trial's case (issue 27, item 5) through every path a person or an agent reads: the CLI's JSON, its
    piped lines and --explain (a relayed recall runs this same command in the server), and the server's resident
    recall, which the MCP tool and the HTTP API answer with."""
    from conftest import settings_at
    from suzent_cli.server.mcp_surface import recall_text
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    cli(home, "init", now="2026-11-20")
    cli(home, "capture", "--fact", "I prefer dark mode in every editor", "--fact", "I drink green tea at work",
        now="2026-11-20")
    cli(home, "capture", "--fact", "I now prefer light mode", now="2026-11-25")
    cli(home, "index", now="2026-11-28")
    query = "prefer dark mode in every editor"
    data = json.loads(cli(home, "recall", query, "--json", now="2026-11-28").stdout)
    assert data["hits"][0]["content"] == "I now prefer light mode"
    _shown_scores_fall([h["score"] for h in data["hits"]])
    for args in ((), ("--explain",)):
        lines = [line.split("\t") for line in cli(home, "recall", query, *args, now="2026-11-28").stdout.splitlines()
                 if not line.startswith(" ")]
        assert [float(cells[1]) for cells in lines] == [round(h["score"], 4) for h in data["hits"]]
        _shown_scores_fall([float(cells[1]) for cells in lines])
    warm = Warm(settings_at(home, "2026-11-28T12:00", env=HASH_ENV))
    try:
        served = LocalBackend(warm).recall(query)
    finally:
        warm.close()
    assert [(h["id"], h["score"]) for h in served["hits"]] == [(h["id"], round(h["score"], 4)) for h in data["hits"]]
    assert "1. > I now prefer light mode" in recall_text(served)


def _h(id_: str, score: float) -> Hit:
    return Hit(id=id_, content=id_, score=score, source=None, source_type="archive_log", source_file=None,
               locator=None, date=None, session=None, category=None, tags=[], importance=0.5)


@pytest.mark.parametrize("given,shown", [
    ([1.0, 0.9, 0.8], [1.0, 0.9, 0.8]),  # in order: untouched
    ([0.8, 1.2, 0.7], [1.2001, 1.2, 0.7]),  # moved to the top: just above the row it moved past
    ([1.5, 0.8, 1.2, 0.7], [1.5, 1.2001, 1.2, 0.7]),
    ([1.20005, 0.8, 1.2, 0.7], [1.20005, 1.2, 1.2, 0.7]),  # no room under the row above: a tie
    ([0.5, 0.6, 1.2, 0.7], [1.2002, 1.2001, 1.2, 0.7]),  # two moved rows: each above the next
    ([1.0, 1.0, 0.9], [1.0, 1.0, 0.9]),  # a tie is in order
])
def test_order_scores(given, shown):
    hits = [_h(str(i), s) for i, s in enumerate(given)]
    out = order_scores(hits)
    assert [h.id for h in out] == [str(i) for i in range(len(given))]  # rows never move
    assert [h.score for h in out] == pytest.approx(shown)
    assert [h.ranked_score for h in out] == [None if a == b else a for a, b in zip(given, shown, strict=True)]
