"""The dream: gate decisions, productive vs not, retry-then-skip across runs, and the rules engine's folding.
Real files, the CLI in-process (conftest.invoke); the rules engine (offline) throughout. Crash convergence (a
process killed mid-run) is in integration/test_dream_crash.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from conftest import invoke, log, settings_at
from suzent_cli.config import DreamConfig, dream_config
from suzent_cli.dream.engine import IngestResult
from suzent_cli.dream.gate import decide
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.errors import ConfigInvalid
from suzent_cli.vault import ledger
from suzent_cli.vault.dream_state import load_state
from suzent_cli.vault.pages import read_page
from suzent_cli.vault.state import append_tombstones, read_superseded

D = dt.date.fromisoformat
NOW = dt.datetime(2026, 6, 20, 12, 0, tzinfo=dt.UTC)


def H(hours: float) -> dt.datetime:
    return NOW - dt.timedelta(hours=hours)


# --- the gate, table-driven --------------------------------------------------------------------------------
GATE_CASES = [
    # name, pending days, facts, last attempt, last lint, last lint attempt, force, expected action, reason part
    ("far behind ignores volume and time", 15, 1, H(1), None, None, False, "ingest", "far behind"),
    ("not enough facts", 3, 19, None, None, None, False, "idle", "min_facts"),
    ("not enough time", 3, 50, H(23), None, None, False, "idle", "min_hours"),
    ("enough facts and time", 3, 20, H(24), None, None, False, "ingest", "new facts"),
    ("never attempted", 1, 20, None, None, None, False, "ingest", "new facts"),
    ("force bypasses volume and time", 1, 0, H(0.1), None, None, True, "ingest", "forced"),
    ("nothing pending, never linted", 0, 0, None, None, None, False, "lint", "never linted"),
    ("lint due after 9 days", 0, 0, None, D("2026-06-11"), H(200), False, "lint", "days old"),
    ("lint not due 2 days after", 0, 0, None, D("2026-06-18"), None, False, "idle", "under 7 days"),
    ("lint not due after a recent attempt", 0, 0, None, D("2026-05-01"), H(23), False, "idle", "24 h"),
    ("force with nothing pending lints only when due", 0, 0, None, D("2026-06-18"), None, True, "idle", "nothing pending"),
]


@pytest.mark.parametrize("case", GATE_CASES, ids=[c[0] for c in GATE_CASES])
def test_gate(case):
    _, n, facts, attempt, lint, lint_attempt, force, action, why = case
    pending = [D("2026-06-01") + dt.timedelta(days=i) for i in range(n)]
    decision = decide(config=DreamConfig(), pending=pending, pending_facts=facts, last_attempt=attempt,
                      last_lint=lint, last_lint_attempt=lint_attempt, now=NOW, force=force)
    assert decision.action == action
    assert why in decision.reason
    assert decision.batch == tuple(pending[:14])


def test_gate_lint_disabled():
    decision = decide(config=DreamConfig(lint_enabled=False), pending=[], pending_facts=0, last_attempt=None,
                      last_lint=None, last_lint_attempt=None, now=NOW)
    assert (decision.action, decision.reason) == ("idle", "nothing pending; lint is disabled")


# --- issue 27: facts that waited long enough are consolidated, however few ------------------------------------
WAIT_CASES = [
    # name, facts, waiting since (hours before NOW; None: unknown), last attempt, config, action, reason part
    ("few facts, not waited long", 3, 71.9, None, {}, "idle", "waited 71.9 h of max_wait_hours 72"),
    ("few facts waited long enough", 3, 72, None, {}, "ingest", "waited 72.0 h >= max_wait_hours 72"),
    ("one fact is enough", 1, 100, H(30), {}, "ingest", "max_wait_hours"),
    ("min_hours still spaces attempts", 3, 100, H(2), {}, "idle", "min_hours 24"),
    ("min_facts still triggers early", 20, 1, None, {}, "ingest", "20 new facts in 1 pending days"),
    ("no facts: nothing waits", 0, 500, None, {}, "idle", "0 new facts < min_facts 20"),
    ("wait unknown", 3, None, None, {}, "idle", "3 new facts < min_facts 20"),
    ("0 turns the rule off", 3, 500, None, {"max_wait_hours": 0}, "idle", "3 new facts < min_facts 20"),
    ("a shorter wait", 3, 13, None, {"max_wait_hours": 12}, "ingest", ">= max_wait_hours 12"),
]


@pytest.mark.parametrize("case", WAIT_CASES, ids=[c[0] for c in WAIT_CASES])
def test_gate_max_wait(case):
    _, facts, since, attempt, config, action, why = case
    decision = decide(config=DreamConfig(**config), pending=[D("2026-06-16")], pending_facts=facts,
                      last_attempt=attempt, last_lint=None, last_lint_attempt=None, now=NOW,
                      waiting_since=None if since is None else H(since))
    assert decision.action == action
    assert why in decision.reason, decision.reason
    if "of max_wait_hours" in why:
        assert decision.reason.endswith("(due 2026-06-20T12:06+00:00)")


def test_the_wait_starts_at_the_first_fact_lines_entry(tmp_path):
    from suzent_cli.dream.gate import first_fact_time, oldest_pending

    text = "# Daily Log - 2026-06-16\n\n## 07:10 — s1\n\n## 25:99 — bad\n\n## 08:30 — s2\n\n- [personal] A\n"
    assert first_fact_time(D("2026-06-16"), text) == dt.datetime(2026, 6, 16, 8, 30, tzinfo=dt.UTC)
    assert first_fact_time(D("2026-06-16"), "- [personal] A\n") == dt.datetime(2026, 6, 16, tzinfo=dt.UTC)
    assert first_fact_time(D("2026-06-16"), "# Daily Log - 2026-06-16\n\n## 07:10 — s1\n\n") is None
    (tmp_path / "2026-06-15.md").write_text("# Daily Log - 2026-06-15\n\n## 09:00 — s\n\n")  # no fact line
    (tmp_path / "2026-06-16.md").write_text(text)
    pending = [(D("2026-06-14"), tmp_path / "missing.md"), (D("2026-06-15"), tmp_path / "2026-06-15.md"),
               (D("2026-06-16"), tmp_path / "2026-06-16.md")]
    assert oldest_pending(pending, [], {}) == dt.datetime(2026, 6, 16, 8, 30, tzinfo=dt.UTC)
    # a late line waits from when it was recorded (not from its old day); a record without ts from its day's end
    records = [{"ts": "2026-06-16T05:00:00+00:00", "day": "2026-06-01", "from_line": 9}, None,
               {"ts": "", "day": "2026-06-02", "from_line": 3}, {"ts": "2026-01-01T00:00", "day": "2026-05-01"}]
    late = {D("2026-06-01"): 9}
    assert oldest_pending(pending, records, late) == dt.datetime(2026, 6, 16, 5, tzinfo=dt.UTC)
    late[D("2026-06-02")] = 3
    assert oldest_pending([], records, late) == dt.datetime(2026, 6, 3, tzinfo=dt.UTC)
    assert oldest_pending([], [], {}) is None


def test_a_light_user_is_consolidated_without_force(home):
    """The trial (issue 27): five sessions over five days, six facts, never min_facts 20. Each fact reaches the
    vault once it has waited max_wait_hours (72), by plain ticks: no --force."""
    sessions = [("2026-06-15", ["[personal] Lives in Lisbon", "[preference] Likes green tea"]),
                ("2026-06-16", ["[personal] Has a dog called Biscuit"]), ("2026-06-17", ["[personal] Works at ACME"]),
                ("2026-06-18", ["[preference] Prefers dark mode"]), ("2026-06-19", ["[goal] Learning Portuguese"])]
    for day, facts in sessions:
        log(settings_at(home, f"{day}T09:00"), day, *facts, time="09:00", session=f"s{day[-2:]}")

    def tick(now):
        return runner(settings_at(home, now)).tick()

    early = tick("2026-06-18T08:00")  # 4 facts of 06-15..17 pending; the oldest has waited 71 h
    assert early.outcome == "idle"
    assert early.decision.reason == ("4 new facts < min_facts 20; the oldest has waited 71.0 h of max_wait_hours 72 "
                                     "(due 2026-06-18T09:00+00:00)")
    first = tick("2026-06-18T09:00")
    assert first.outcome == "ingested" and first.facts == 4  # today's (06-18) fact is not pending
    assert first.decision.batch == (D("2026-06-15"), D("2026-06-16"), D("2026-06-17"))
    assert "waited 72.0 h >= max_wait_hours 72" in first.decision.reason
    assert tick("2026-06-20T12:00").outcome == "idle"  # 06-18's fact has waited 51 h; min_hours holds too
    second = tick("2026-06-21T09:00")
    assert second.outcome == "ingested" and second.decision.batch == (D("2026-06-18"), D("2026-06-19"))
    vault = settings_at(home).paths.vault_dir
    pages = "".join(p.read_text() for p in vault.rglob("*.md") if not p.name.startswith(("log", "index")))
    for _, facts in sessions:
        for fact in facts:
            assert fact.split("] ")[1] in pages
    assert ledger.watermark(ledger.read_ledger(vault)) == D("2026-06-19")


def test_a_late_line_waits_from_when_it_was_recorded(home):
    """A line appended to a consolidated day (capture --date, a sync) waits from its late_lines.jsonl record's ts,
    not from its day, which may be long past: it is folded once it has waited max_wait_hours."""
    s = settings_at(home, "2026-06-02T09:00")
    log(s, "2026-06-01", "[personal] Lives in Lisbon")
    assert runner(s).tick(force=True).outcome == "ingested"  # watermark 2026-06-01
    path = s.paths.archive_dir / "2026-06-01.md"
    first = len(path.read_text().split("\n"))  # the new entry starts on the last (empty) line's number
    log(s, "2026-06-01", "[personal] Works at ACME", time="20:00")
    (s.paths.state_dir / "late_lines.jsonl").write_text(
        json.dumps({"ts": "2026-06-10T08:00:00+00:00", "day": "2026-06-01", "from_line": first}) + "\n")
    early = runner(settings_at(home, "2026-06-13T07:00")).decision()
    assert (early.action, early.pending_facts) == ("idle", 1)
    assert "waited 71.0 h of max_wait_hours 72 (due 2026-06-13T08:00+00:00)" in early.reason
    result = runner(settings_at(home, "2026-06-13T08:00")).tick()
    assert result.outcome == "ingested" and "late lines in 1 consolidated days" in result.decision.reason
    assert "Works at ACME" in (s.paths.vault_dir / "3_Personal/Profile.md").read_text()


def test_todays_log_never_starts_a_wait(home):
    s = settings_at(home, "2026-06-20T23:59")
    log(s, "2026-06-20", "[personal] Lives in Lisbon", time="00:00")
    decision = runner(s, max_wait_hours=1).decision()
    assert (decision.action, decision.pending) != ("ingest", ()) and not decision.pending
    assert runner(s, max_wait_hours=1).tick().outcome in ("idle", "linted")
    assert not (s.paths.vault_dir / "3_Personal/Profile.md").exists()


def test_status_explains_the_wait(home):
    from suzent_cli.status import status

    s = settings_at(home, "2026-06-17T12:00")
    log(s, "2026-06-15", "[personal] Lives in Lisbon", time="10:30")
    tick = status(s, DreamConfig(), with_index=False)["next_tick"]
    assert tick["reason"] == ("1 new facts < min_facts 20; the oldest has waited 49.5 h of max_wait_hours 72 "
                              "(due 2026-06-18T10:30+00:00)")
    assert (tick["waiting_since"], tick["wait_due"]) == ("2026-06-15T10:30+00:00", "2026-06-18T10:30+00:00")
    out = invoke(home, "--now", "2026-06-18T10:30", "status").stdout
    assert "ingest: 1 new facts in 1 pending days; the oldest has waited 72.0 h >= max_wait_hours 72" in out


# --- helpers ---------------------------------------------------------------------------------------------
def runner(settings, **config):
    return DreamRunner(settings, DreamConfig(**config), engine="rules", follow_ups=[])


def days(start: str, n: int) -> list[str]:
    return [(D(start) + dt.timedelta(days=i)).isoformat() for i in range(n)]


# --- runs ------------------------------------------------------------------------------------------------
def test_today_is_never_ingested(home):
    s = settings_at(home)
    log(s, "2026-06-19", "[personal] Lives in Berlin")
    log(s, "2026-06-20", "[personal] Works at ACME")
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.batch == (D("2026-06-19"),)
    profile = (s.paths.vault_dir / "3_Personal/Profile.md").read_text()
    assert "Lives in Berlin" in profile and "ACME" not in profile
    assert ledger.watermark(ledger.read_ledger(s.paths.vault_dir)) == D("2026-06-19")
    assert runner(s).tick(force=True).outcome in ("idle", "linted")  # only today is left


def test_twelve_restatements_fold_into_one_claim(home):
    s = settings_at(home)
    for i, day in enumerate(days("2026-06-01", 12)):
        log(s, day, "[preference] Prefers green tea over coffee" + ("." if i % 2 else ""),
            "[personal] Lives in Berlin")
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.facts == 24
    page = read_page(s.paths.vault_dir / "3_Personal/Preferences.md")
    claims = page.claims()
    assert len(claims) == 1
    assert (claims[0].count, claims[0].last, claims[0].source) == (12, D("2026-06-12"), "2026-06-01.md:5")
    assert page.meta["type"] == "personal" and page.meta["status"] == "active"
    assert page.meta["stale_after"] == D("2026-06-12") + dt.timedelta(days=365)
    profile = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    assert profile.meta["stale_after"] == D("2026-06-12") + dt.timedelta(days=180)  # residence expires sooner
    # every repeat's log line is handed off, exactly as in the log (identical lines once)
    assert read_superseded(s.paths.state_dir) == ["- [preference] Prefers green tea over coffee.",
                                                  "- [personal] Lives in Berlin",
                                                  "- [preference] Prefers green tea over coffee"]


def test_near_identical_folds_but_new_number_does_not(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Has two cats named Miso and Tofu")
    log(s, "2026-06-02", "[personal] Has two cats named Miso and Tofu!", "[personal] Has 3 cats")
    log(s, "2026-06-03", "[personal] Has 4 cats")
    runner(s).tick(force=True)
    page = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    # the new number is not folded into the old claim as a confirmation: it is a new value of the same statement,
    # which replaces the old one (issue 16: a quantity has one current value)
    assert [(c.text, c.count) for c in page.claims()] == [("Has two cats named Miso and Tofu", 2),
                                                          ("Has 4 cats (since 2026-06-03); previously: Has 3 cats", 1)]
    assert [(c.text, c.until) for c in page.claims("Previously")] == [("Has 3 cats", D("2026-06-03"))]


def test_change_over_time_moves_the_old_claim_to_previously(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    log(s, "2026-06-05", "[personal] Moved to Lisbon")
    runner(s).tick(force=True)
    page = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    assert [c.text for c in page.claims()] == ["Moved to Lisbon (since 2026-06-05); previously: Lives in Berlin"]
    assert [(c.text, c.until) for c in page.claims("Previously")] == [("Lives in Berlin", D("2026-06-05"))]
    log(s, "2026-06-07", "[personal] Moved to Lisbon")  # a restatement confirms the current claim
    runner(s).tick(force=True)
    (claim,) = read_page(s.paths.vault_dir / "3_Personal/Profile.md").claims()
    assert (claim.count, claim.text.startswith("Moved to Lisbon (since")) == (2, True)


def test_person_written_page_keeps_its_keys_and_text(home):
    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Preferences.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: My likes\nmood: sunny\ncustom_list: [a, b]\n---\n# My likes\n\nWritten by me.\n\n"
                    "## Claims\n\n- Likes jazz\n\n## Notes\n\nKeep this.\n")
    log(s, "2026-06-01", "[preference] Likes jazz", "[preference] Likes hiking")
    assert runner(s).tick(force=True).outcome == "ingested"
    text = page.read_text()
    assert "Written by me." in text and "## Notes\n\nKeep this." in text
    parsed = read_page(page)
    assert parsed.meta["mood"] == "sunny" and parsed.meta["custom_list"] == ["a", "b"]
    assert parsed.meta["title"] == "My likes"
    assert [(c.text, c.count) for c in parsed.claims()] == [("Likes jazz", 2), ("Likes hiking", 1)]


def test_tombstoned_fact_is_not_folded_back(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin", "[personal] Has a secret diary")
    append_tombstones(s.paths.state_dir, ["Has a secret diary"], reason="forget", timeout=5)
    runner(s).tick(force=True)
    assert "secret diary" not in (s.paths.vault_dir / "3_Personal/Profile.md").read_text()


def test_backlog_drains_batch_by_batch(home):
    s = settings_at(home, now="2026-08-01T12:00")
    for day in days("2026-06-01", 40):
        log(s, day, f"[technical] Tried tool number {day}")
    r = runner(s)
    outcomes = [r.tick() for _ in range(3)]
    # far behind: no ceiling of one batch per run, no volume or time gate, until 14 days or fewer are left
    assert [o.outcome for o in outcomes] == ["ingested", "ingested", "idle"]
    assert [o.decision.batch[-1].isoformat() for o in outcomes] == ["2026-06-14", "2026-06-28", "2026-07-10"]
    assert outcomes[1].decision.behind and not outcomes[2].decision.behind
    # 12 facts < min_facts, but they have waited weeks (> max_wait_hours): only min_hours' spacing holds them now
    assert outcomes[2].summary == "last attempt 0.0 h ago < min_hours 24"
    assert r.tick(force=True).outcome == "ingested"
    assert r.tick().outcome == "linted"  # nothing pending any more: the lint phase is due
    text = ledger.read_ledger(s.paths.vault_dir)
    assert text.count("ingest | daily logs") == 3 and ledger.last_lint(text) == D("2026-08-01")


class _NoChange:
    name = "rules"

    def ingest(self, batch):
        return IngestResult(summary="looked, changed nothing", superseded=["- [x] y"])


class _Boom:
    name = "rules"

    def __init__(self, vault):
        self.vault = vault

    def ingest(self, batch):
        (self.vault / "0_Inbox" / "half.md").write_text("half-written work\n")
        raise RuntimeError("engine crashed")


def test_not_productive_keeps_the_watermark_and_counts_a_failure(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    r = DreamRunner(s, DreamConfig(), engine="rules", engine_factory=lambda n: _NoChange(), follow_ups=[])
    result = r.tick(force=True)
    assert (result.outcome, result.failures, result.exit_code) == ("unproductive", 1, 5)
    assert "changed no content page" in result.error
    assert ledger.watermark(ledger.read_ledger(s.paths.vault_dir)) is None
    assert read_superseded(s.paths.state_dir) == []  # hand-off only after a productive run
    # an engine that changes a page and then fails is not productive either (compat: failures[T]=1)
    r2 = DreamRunner(s, DreamConfig(), engine="rules", engine_factory=lambda n: _Boom(s.paths.vault_dir), follow_ups=[])
    result = r2.tick(force=True)
    assert (result.outcome, result.failures) == ("unproductive", 2) and "engine crashed" in result.error
    assert result.pages_changed == ["0_Inbox/half.md"]
    assert load_state(s.paths.state_dir).failures == {"2026-06-01": 2}


def test_retry_then_skip_across_processes(home):
    """A wedged batch (its only page has broken YAML, so the rules engine can change nothing) is retried
    max_retries times by separate runs (each a whole command), then skipped: the watermark moves and the next batch
    runs."""
    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: [unclosed\n---\nMine.\n")
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    env = {"SUZENT_NOW": "2026-06-20T12:00"}
    codes = []
    for _ in range(3):
        proc = invoke(home, "dream", "--force", "--engine", "rules", "--json", env_extra=env)
        codes.append(proc.returncode)
        assert json.loads(proc.stdout)["outcome"] == "unproductive", proc.stderr
    assert codes == [5, 5, 5]
    assert load_state(s.paths.state_dir).failures == {"2026-06-01": 3}
    proc = invoke(home, "dream", "--force", "--engine", "rules", "--json", env_extra=env)
    data = json.loads(proc.stdout)
    assert (proc.returncode, data["outcome"], data["watermark_after"]) == (0, "skipped", "2026-06-01")
    text = ledger.read_ledger(s.paths.vault_dir)
    assert "skipped daily logs 2026-06-01..2026-06-01 after 3 failed attempts  watermark=2026-06-01" in text
    assert page.read_text() == "---\ntitle: [unclosed\n---\nMine.\n"  # a person's page is never rewritten
    assert load_state(s.paths.state_dir).failures == {}


def test_busy_when_another_dream_holds_the_lock(home):
    from filelock import FileLock

    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    s.paths.state_dir.mkdir(parents=True)
    with FileLock(str(s.paths.state_dir / ".dream.lock")):
        proc = invoke(home, "dream", "--force", env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
        assert proc.returncode == 3 and "busy" in proc.stdout
        # capture never waits on the consolidation lock
        cap = invoke(home, "capture", "--fact", "[preference] Likes rain", env_extra={"SUZENT_LOCK_TIMEOUT": "1"})
        assert cap.returncode == 0, cap.stderr


def test_dream_config_validation(home):
    s = dataclasses.replace(settings_at(home), dream={"min_facts": 5, "engine": "rules"})
    assert dream_config(s, max_days="3").max_days == 3 and dream_config(s).min_facts == 5
    for bad, message in (({"min_factz": 1}, "unknown key dream.min_factz"), ({"max_days": 0}, "between"),
                         ({"lint_enabled": "yes"}, "true or false"), ({"engine": "gpt"}, "one of")):
        with pytest.raises(ConfigInvalid, match=message):
            dream_config(dataclasses.replace(s, dream=bad))
    with pytest.raises(ConfigInvalid, match="whole number"):
        dream_config(s, min_facts="1.5")


def test_cli_idle_json_and_status(home):
    s = settings_at(home)
    log(s, "2026-06-18", "[personal] Lives in Berlin")
    env = {"SUZENT_NOW": "2026-06-20T12:00"}
    proc = invoke(home, "dream", "--json", env_extra=env)
    data = json.loads(proc.stdout)
    assert proc.returncode == 4 and data["outcome"] == "idle" and data["decision"]["pending_facts"] == 1
    proc = invoke(home, "dream", "--min-facts", "1", env_extra=env)
    assert proc.returncode == 0 and "ingested 2026-06-18..2026-06-18 (offline)" in proc.stdout, proc.stderr
    proc = invoke(home, "status", "--json", "--no-index", env_extra=env)
    data = json.loads(proc.stdout)
    assert data["watermark"] == "2026-06-18" and data["pending"]["dates"] == []
    assert data["last_ingest"]["outcome"] == "ingested" and data["locks"]["dream"] == {"held": False}
    proc = invoke(home, "status", env_extra=env)
    assert proc.returncode == 0 and "watermark      2026-06-18" in proc.stdout and "index          not built" in proc.stdout
    for args, message in ((["dream", "--max-days", "zero"], "--max-days must be a whole number"),
                          (["dream", "--engine", "claude"], "needs ANTHROPIC_API_KEY"),
                          (["lint", "--engine", "gpt"], "--engine must be one of auto, offline, claude")):
        proc = invoke(home, *args, env_extra=env)
        assert proc.returncode == 2 and proc.stderr.startswith("Error: " ) and message in proc.stderr, proc.stderr
    proc = invoke(home, "dream", "--loop", env_extra=env)  # gone: `suzent loop` repeats the whole chain
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "`suzent loop" in proc.stderr, proc.stderr
    for gone in (["--interval", "5"], ["--ticks", "2"]):
        proc = invoke(home, "dream", *gone, env_extra=env)
        assert proc.returncode == 2 and "`suzent loop" in proc.stderr, proc.stderr
    (home / "config.toml").write_text("[dreams]\nmin_facts = 1\n")
    proc = invoke(home, "dream", env_extra=env)
    assert proc.returncode == 2 and "unknown key or table 'dreams'" in proc.stderr


def test_ticks_and_lint_cli(home):
    s = settings_at(home)
    for day in days("2026-06-01", 3):
        log(s, day, "[personal] Lives in Berlin", "[personal] Lives in Lisbon")
    env = {"SUZENT_NOW": "2026-06-20T12:00"}
    ticks = [invoke(home, "dream", "--force", "--json", env_extra=env) for _ in range(2)]
    outcomes = [json.loads(proc.stdout)["outcome"] for proc in ticks]
    assert outcomes == ["ingested", "linted"] and [p.returncode for p in ticks] == [0, 0], ticks[-1].stderr
    # two current claims about where the user lives (a person's edit) → the rules lint flags them
    profile = s.paths.vault_dir / "3_Personal/Profile.md"
    profile.write_text(profile.read_text().replace("## Claims\n", "## Claims\n\n- Lives in Madrid\n"))
    proc = invoke(home, "lint", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    assert "contradiction:" in proc.stdout and "lint: broken_links 0, orphans 0" in proc.stdout
    page = read_page(profile)
    assert page.meta["review"] == "needs-review" and "> [!warning] Conflicting claims:" in page.body
    entries = [ln for ln in ledger.read_ledger(s.paths.vault_dir).splitlines() if " lint" in ln]
    assert entries[-1] == "## [2026-06-20] lint  broken_links=0 orphans=0 missing_related=0 stale=0 contradictions=1"


def test_status_names_the_lock_holder(home):
    s = settings_at(home)
    from suzent_cli.dream import runner as runner_mod

    seen = {}

    class Peek:
        name = "rules"

        def ingest(self, batch):
            proc = invoke(home, "status", "--json", "--no-index", env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
            seen.update(json.loads(proc.stdout)["locks"]["dream"])
            (batch.vault_dir / "0_Inbox" / "x.md").write_text("x\n")
            return IngestResult()

    log(s, "2026-06-01", "[personal] Lives in Berlin")
    DreamRunner(s, DreamConfig(), engine="rules", engine_factory=lambda n: Peek(), follow_ups=[]).tick(force=True)
    import os
    assert seen == {"held": True, "pid": os.getpid(), "since": "2026-06-20T12:00:00+00:00"}
    assert not (s.paths.state_dir / runner_mod.HOLDER).exists()


def test_notes_a_person_wrote_inside_claims_survive(home):
    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Interaction.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Interaction\n\n## Claims\n\n> [!note] Written by me, keep it.\n\nA paragraph of mine.\n\n"
                    "- Prefers short answers\n  - nested note under it\n- Likes tables — my comment\n")
    log(s, "2026-06-01", "[interaction] Prefers short answers", "[interaction] Wants code first")
    assert runner(s).tick(force=True).outcome == "ingested"
    text = page.read_text()
    for kept in ("> [!note] Written by me, keep it.", "A paragraph of mine.", "  - nested note under it",
                 "- Likes tables — my comment"):
        assert kept in text
    assert "- Prefers short answers (confirmed 2x, last 2026-06-01)\n  - nested note under it" in text
    assert text.index("Likes tables") < text.index("Wants code first")  # new claims go after the existing ones


def test_a_negated_claim_replaces_the_affirmed_one(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Is allergic to peanuts `health`")
    log(s, "2026-06-03", "[personal] Is not allergic to peanuts `health allergy`")
    runner(s).tick(force=True)
    page = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    assert [c.text for c in page.claims()] == ["Is not allergic to peanuts (since 2026-06-03); previously: Is allergic to peanuts"]
    assert [(c.text, c.until) for c in page.claims("Previously")] == [("Is allergic to peanuts", D("2026-06-03"))]
    assert page.meta["tags"] == ["health", "allergy"]  # the facts' tags reach the page


def test_a_restatement_after_reconcile_still_confirms_the_claim(home):
    """Superseded tombstones hide log rows from the index, not from the dream: a later repeat is folded."""
    from suzent_cli.reconcile import reconcile

    s = settings_at(home)
    log(s, "2026-06-01", "[preference] Likes green tea")
    log(s, "2026-06-02", "[preference] Likes green tea")
    runner(s).tick(force=True)
    reconcile(s)  # tombstones "likes green tea" (no index yet: nothing to reindex)
    log(s, "2026-06-03", "[preference] Likes green tea")
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested", result.error
    (claim,) = read_page(s.paths.vault_dir / "3_Personal/Preferences.md").claims()
    assert (claim.count, claim.last) == (3, D("2026-06-03"))


def test_a_batch_of_only_forgotten_facts_advances_instead_of_wedging(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Has a secret diary")
    append_tombstones(s.paths.state_dir, ["Has a secret diary"], reason="forget", timeout=5)
    result = runner(s).tick(force=True)
    assert (result.outcome, result.watermark_after) == ("ingested", D("2026-06-01"))
    assert "ingest | daily logs (nothing to fold)  watermark=2026-06-01" in ledger.read_ledger(s.paths.vault_dir)
    assert not list((s.paths.vault_dir / "3_Personal").glob("*.md"))


def test_counters_of_batches_behind_the_watermark_are_dropped(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    r = DreamRunner(s, DreamConfig(), engine="rules", engine_factory=lambda n: _NoChange(), follow_ups=[])
    assert r.tick(force=True).failures == 1
    log(s, "2026-06-02", "[personal] Works at ACME")
    assert runner(s).tick(force=True).outcome == "ingested"
    assert load_state(s.paths.state_dir).failures == {}


def test_a_negation_is_never_folded_as_a_repeat(home):
    s = settings_at(home)
    long = "allergic to peanuts and tree nuts and must always carry an epinephrine auto-injector pen"
    log(s, "2026-06-01", f"[personal] Is {long}", "[preference] Likes long detailed weekly status reports by email")
    log(s, "2026-06-02", f"[personal] Is not {long}", "[preference] Dislikes long detailed weekly status reports by email")
    result = runner(s).tick(force=True)
    # nothing folded as a repeat; the replaced claims' own log lines are handed off (the page holds them as history)
    assert result.outcome == "ingested"
    assert read_superseded(s.paths.state_dir) == [f"- [personal] Is {long}",
                                                  "- [preference] Likes long detailed weekly status reports by email"]
    assert [c.text.split(" (since")[0] for c in read_page(s.paths.vault_dir / "3_Personal/Profile.md").claims()] == \
        [f"Is not {long}"]
    assert [c.text.split(" (since")[0] for c in read_page(s.paths.vault_dir / "3_Personal/Preferences.md").claims()] \
        == ["Dislikes long detailed weekly status reports by email"]


def test_lint_flags_likes_and_doesnt_like(home):
    from suzent_cli.dream.lint import rules_contradictions

    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Preferences.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Preferences\n\n## Claims\n\n- Likes coffee\n- Doesn't like coffee\n- Likes tea\n")
    findings = rules_contradictions(s.paths.vault_dir, D("2026-06-20"))
    assert findings.contradictions == ["statement: likes coffee: Likes coffee (3_Personal/Preferences.md) / "
                                       "Doesn't like coffee (3_Personal/Preferences.md)"]


def test_notes_under_the_last_claim_stay_with_it_and_previously_stays_tight(home):
    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Profile\n\n## Claims\n\n- Lives in Rome\n  - note: near the Pantheon\n")
    for day, city in (("2026-06-01", "Oslo"), ("2026-06-02", "Kyiv"), ("2026-06-03", "Lima")):
        log(s, day, f"[personal] Lives in {city}", "[personal] Has a bike")
        runner(s).tick(force=True)
    text = page.read_text()
    assert "- Lives in Rome (until 2026-06-01)\n  - note: near the Pantheon\n- Lives in Oslo" in text  # with its note
    assert "- Lives in Lima (since 2026-06-03); previously: Lives in Kyiv (confirmed 1x" in text.split("## Previously")[0]
    previously = text.split("## Previously\n\n")[1].split("\n\n")[0].splitlines()
    assert [ln.split(" (")[0] for ln in previously] == ["- Lives in Rome", "  - note: near the Pantheon",
                                                        "- Lives in Oslo", "- Lives in Kyiv"]


def test_a_backfill_behind_the_watermark_is_recorded_and_folded_by_the_next_dream(home):
    from suzent_cli.vault.state import read_late_lines

    s = settings_at(home)
    log(s, "2026-06-05", "[personal] Lives in Berlin")
    runner(s).tick(force=True)
    proc = invoke(home, "capture", "--date", "2026-06-01", "--fact", "[goal] Wants to learn Rust",
                   env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    assert proc.returncode == 0 and proc.stderr == ""
    records = read_late_lines(s.paths.state_dir)
    assert [(r["day"], r["from_line"]) for r in records] == [("2026-06-01", 1)]
    decision = runner(s).decision()
    assert decision.late == ((D("2026-06-01"), 1),) and decision.pending == () and decision.pending_facts == 1

    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.batch == () and result.facts == 1
    assert result.watermark_after == D("2026-06-05")  # the watermark stays: only late lines were folded
    assert "- Wants to learn Rust" in (s.paths.vault_dir / "3_Personal/Goals.md").read_text()
    text = ledger.read_ledger(s.paths.vault_dir)
    assert "ingest | daily logs (late lines of 2026-06-01)  watermark=2026-06-05" in text
    assert ledger.watermark(text) == D("2026-06-05")
    assert read_late_lines(s.paths.state_dir) == []
    again = runner(s).tick(force=True)
    assert again.outcome != "ingested"  # folded once, never again


def test_a_late_line_older_than_the_current_claim_becomes_history(home):
    s = settings_at(home)
    log(s, "2026-06-05", "[personal] Lives in Berlin")
    runner(s).tick(force=True)
    invoke(home, "capture", "--date", "2026-06-01", "--fact", "[personal] Lives in Rome",
            env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    runner(s).tick(force=True)
    text = (s.paths.vault_dir / "3_Personal/Profile.md").read_text()
    current, previously = text.split("## Previously")
    assert "- Lives in Berlin" in current and "Rome" not in current
    assert "- Lives in Rome (confirmed 1x, last 2026-06-01) (until 2026-06-05) · source: 2026-06-01.md:" in previously


def test_late_lines_with_pending_days_and_a_crash_are_folded_once(home, monkeypatch):
    from suzent_cli.dream import runner as runner_mod

    s = settings_at(home)
    log(s, "2026-06-05", "[preference] Likes green tea")
    runner(s).tick(force=True)
    invoke(home, "capture", "--date", "2026-06-02", "--fact", "[preference] Likes green tea",
            env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    log(s, "2026-06-07", "[preference] Likes jazz")
    calls = []
    real = runner_mod.truncate_late_lines

    def crash(*args, **kwargs):  # killed after the pages were written, before the records were dropped
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner_mod, "truncate_late_lines", crash)
    with pytest.raises(KeyboardInterrupt):
        runner(s).tick(force=True)
    page = s.paths.vault_dir / "3_Personal/Preferences.md"
    after_crash = page.read_text()
    assert "Likes green tea (confirmed 2x, last 2026-06-05)" in after_crash and "Likes jazz" in after_crash
    monkeypatch.setattr(runner_mod, "truncate_late_lines", real)
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.watermark_after == D("2026-06-07")
    assert page.read_text().count("confirmed 2x") == 1 and "confirmed 3x" not in page.read_text()
    assert "late lines of 2026-06-02" in ledger.read_ledger(s.paths.vault_dir)


def test_a_record_for_a_day_the_last_run_read_does_not_fold_it_twice():
    from suzent_cli.dream.gate import late_days

    records = [{"ts": "t1", "day": "2026-06-03", "from_line": 5}, {"ts": "t2", "day": "2026-06-03", "from_line": 9},
               {"ts": "t3", "day": "2026-06-09", "from_line": 1}, None, {"day": "bad"}]
    assert late_days(records, D("2026-06-05"), D("2026-06-20")) == {D("2026-06-03"): 5}
    assert late_days(records, D("2026-06-05"), D("2026-06-20"), {"2026-06-03": 10}) == {D("2026-06-03"): 11}
    assert late_days(records, None, D("2026-06-20")) == {}


# --- lifecycle: confirmations, revisit queue -------------------------------------------------------------------
def confirmation(day: str, content: str, category: str = "preference", ts: str | None = None, **extra) -> dict:
    return {"ts": ts or f"{day}T10:00:00+00:00", "day": day, "content": content, "category": category,
            "matched": content, "source": "archive:2026-06-01.md", "locator": 5, "score": 1.0, "session": "s"} | extra


def test_confirmations_fold_into_the_marker_and_the_sidecar_keeps_later_lines(home, monkeypatch):
    from suzent_cli.dream import rules
    from suzent_cli.vault.state import append_confirmations, read_confirmations

    s = settings_at(home)
    log(s, "2026-06-01", "[preference] Likes green tea")
    append_confirmations(s.paths.state_dir, [confirmation(f"2026-06-0{i}", "Likes green tea") for i in range(2, 7)]
                         + [confirmation("2026-06-07", "Reads before bed", ts="2026-06-07T09:00:00+00:00")], timeout=5)
    real = rules.RulesEngine.ingest

    def ingest_while_capturing(self, batch):  # a capture appends a confirmation while the engine runs
        append_confirmations(s.paths.state_dir, [confirmation("2026-06-19", "Likes green tea",
                                                              ts="2026-06-19T08:00:00+00:00")], timeout=5)
        return real(self, batch)

    monkeypatch.setattr(rules.RulesEngine, "ingest", ingest_while_capturing)
    result = runner(s).tick(force=True)
    assert (result.outcome, result.confirmations) == ("ingested", 6)
    page = read_page(s.paths.vault_dir / "3_Personal/Preferences.md")
    claims = {c.text: (c.count, c.last) for c in page.claims()}
    assert claims == {"Likes green tea": (6, D("2026-06-06")), "Reads before bed": (2, D("2026-06-07"))}
    assert page.meta["confirmed_through"] == "2026-06-07T09:00:00+00:00"
    assert [c["day"] for c in read_confirmations(s.paths.state_dir)] == ["2026-06-19"]  # only the shown lines went


def test_confirmations_are_not_folded_twice_after_a_crash(home):
    import time as _time

    from suzent_cli.dream.engine import IngestBatch
    from suzent_cli.dream.rules import RulesEngine

    s = settings_at(home)
    log(s, "2026-06-01", "[preference] Likes green tea")
    def batch():
        return IngestBatch(vault_dir=s.paths.vault_dir, run_date=D("2026-06-20"), start=None, end=D("2026-06-01"),
                           days=(D("2026-06-01"),), logs={}, facts=(), deadline=_time.monotonic() + 60,
                           confirmations=(confirmation("2026-06-02", "Likes green tea"),))
    runner(s).tick(force=True)
    RulesEngine().ingest(batch())
    RulesEngine().ingest(batch())  # the runner was killed before truncating the sidecar: replayed
    (claim,) = read_page(s.paths.vault_dir / "3_Personal/Preferences.md").claims()
    assert claim.count == 2


def test_revisit_queue_and_stale_after_backfill(home):
    from suzent_cli.dream.revisit import revisit_queue

    s = settings_at(home)
    v = s.paths.vault_dir
    (v / "3_Personal").mkdir(parents=True)
    (v / "2_Wiki").mkdir(parents=True)
    (v / "3_Personal/Old.md").write_text("---\nupdated: 2026-01-10\n---\n# Old\n\n## Claims\n\n- Lives in Rome\n")
    (v / "3_Personal/Expired.md").write_text("---\nstale_after: 2026-03-01\n---\n# E\n")
    (v / "3_Personal/Sooner.md").write_text("---\nstale_after: 2026-02-01\n---\n# S\n")
    (v / "2_Wiki/Undated.md").write_text("---\ntype: concept\n---\n# W\n")
    (v / "3_Personal/Fresh.md").write_text("---\nstale_after: 2027-01-01\n---\n# F\n")
    assert revisit_queue(v, D("2026-06-20")) == ("3_Personal/Sooner.md", "3_Personal/Expired.md", "3_Personal/Old.md")
    log(s, "2026-06-01", "[technical] Uses neovim")
    result = runner(s).tick(force=True)
    assert "3_Personal/Old.md" in result.pages_changed
    # Old.md: "Lives in Rome" is a residence claim (180 days) counted from `updated`
    assert read_page(v / "3_Personal/Old.md").meta["stale_after"] == D("2026-01-10") + dt.timedelta(days=180)
    assert (v / "3_Personal/Expired.md").read_text() == "---\nstale_after: 2026-03-01\n---\n# E\n"  # never deleted


def test_a_confirmation_before_a_change_is_folded_before_it(home):
    """Confirmed on day 2, negated on day 3: the negation is current and the confirmed claim is history — the
    confirmation must not bring the old claim back as current."""
    from suzent_cli.vault.state import append_confirmations

    s = settings_at(home)
    log(s, "2026-06-01", "[preference] I prefer dark roast coffee in the morning.")
    append_confirmations(s.paths.state_dir, [confirmation("2026-06-02", "I prefer dark roast coffee in the morning.")],
                         timeout=5)
    log(s, "2026-06-03", "[preference] I do not prefer dark roast coffee in the morning.")
    assert runner(s).tick(force=True).outcome == "ingested"
    page = read_page(s.paths.vault_dir / "3_Personal/Preferences.md")
    assert [c.text.split(" (since")[0] for c in page.claims()] == ["I do not prefer dark roast coffee in the morning"]
    assert [(c.text, c.count) for c in page.claims("Previously")] == \
        [("I prefer dark roast coffee in the morning.", 2)]


def test_first_person_facts_from_turns_are_subjects_too(home):
    s = settings_at(home)
    log(s, "2026-01-10", "[personal] I live in Berlin.", "[personal] I work at Acme.")
    log(s, "2026-06-15", "[personal] I just moved to Lisbon from Hamburg.")
    runner(s).tick(force=True)
    page = read_page(s.paths.vault_dir / "3_Personal/Profile.md")
    assert [c.text.split(" (since")[0] for c in page.claims()] == ["I work at Acme.", "I just moved to Lisbon from Hamburg"]
    assert [c.text for c in page.claims("Previously")] == ["I live in Berlin."]
    assert page.meta["stale_after"] == D("2026-01-10") + dt.timedelta(days=180)  # residence/employer: 180 days


def test_a_hand_written_personal_page_without_claims_gets_a_stale_after(home):
    s = settings_at(home)
    page = s.paths.vault_dir / "3_Personal/Routines.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Routines\n\n- Runs on Sundays\n")
    log(s, "2026-06-01", "[technical] Uses neovim")
    runner(s).tick(force=True)
    parsed = read_page(page)
    assert parsed.meta["stale_after"] == D("2026-06-20") + dt.timedelta(days=365)
    assert "- Runs on Sundays" in parsed.body
    assert "Routines" not in (s.paths.vault_dir / "index.md").read_text()  # not listed as the dream's page


def test_the_claude_prompt_and_status_name_late_lines(home):
    from suzent_cli.dream.claude_agent import ingest_message
    from suzent_cli.status import status

    s = settings_at(home)
    log(s, "2026-06-05", "[personal] Lives in Berlin")
    runner(s).tick(force=True)
    invoke(home, "capture", "--date", "2026-06-01", "--fact", "[personal] Lives in Rome",
            env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    data = status(s, DreamConfig(), with_index=False)
    assert data["pending"]["late"] == {"2026-06-01": 1} and data["pending"]["late_facts"] == 1
    r = runner(s)
    batch = r._batch(D("2026-06-05"), (), D("2026-06-05"), load_state(s.paths.state_dir))
    message = ingest_message(batch)
    assert 'Fold the late lines below' in message and '<log file="2026-06-01.md" late_from_line="1">' in message
    assert "- [personal] Lives in Rome" in message and "Lives in Berlin" not in message.split("<log")[1]


def test_entries_out_of_time_order_within_a_day_are_all_folded(home):
    s = settings_at(home)
    log(s, "2026-06-10", "[preference] Likes mangos", time="09:00")
    log(s, "2026-06-10", "[preference] Likes apples", time="07:00")  # appended later, said earlier
    log(s, "2026-06-11", "[preference] Likes pears", time="08:00")
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested"
    text = (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert all(f"- Likes {fruit}" in text for fruit in ("mangos", "apples", "pears"))
    assert "folded_through: 2026-06-11.md:" in text
    assert runner(s).tick(force=True).outcome != "ingested"  # nothing folded twice


def test_categories_that_differ_only_by_case_in_one_batch_fold_into_one_page(home):
    """Tools, tools and TOOLS in one batch: one page, spelled as the first fact routed to it spells it (none exists)."""
    s = settings_at(home)
    log(s, "2026-06-01", "[Tools] Uses Helix for editing", "[tools] Uses ripgrep to search")
    log(s, "2026-06-02", "[TOOLS] Uses fish as the shell", "[tools] Uses Helix for editing")
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested"
    concepts = s.paths.vault_dir / "2_Wiki" / "Concepts"
    assert sorted(p.name for p in concepts.iterdir()) == ["Tools.md"]
    page = read_page(concepts / "Tools.md")
    assert [(c.text, c.count) for c in page.claims()] == [("Uses Helix for editing", 2), ("Uses ripgrep to search", 1),
                                                          ("Uses fish as the shell", 1)]
    index = (s.paths.vault_dir / "index.md").read_text(encoding="utf-8")
    assert "[[2_Wiki/Concepts/Tools]]" in index and "TOOLS" not in index and "[[2_Wiki/Concepts/tools]]" not in index


def test_a_page_that_exists_keeps_its_spelling_for_every_case_twin_of_a_batch(home):
    s = settings_at(home)
    log(s, "2026-06-01", "[tools] Uses Helix for editing")
    runner(s).tick(force=True)
    concepts = s.paths.vault_dir / "2_Wiki" / "Concepts"
    assert sorted(p.name for p in concepts.iterdir()) == ["Tools.md"]  # safe_title capitalises the first letter
    (concepts / "Tools.md").rename(concepts / "TOOLS.md")  # a person renamed it
    log(s, "2026-06-02", "[Tools] Uses ripgrep to search", "[tools] Uses fish as the shell", "[TOOLS] Uses tmux")
    assert runner(s).tick(force=True).outcome == "ingested"
    assert sorted(p.name for p in concepts.iterdir()) == ["TOOLS.md"]
    assert [c.text for c in read_page(concepts / "TOOLS.md").claims()] == [
        "Uses Helix for editing", "Uses ripgrep to search", "Uses fish as the shell", "Uses tmux"]
