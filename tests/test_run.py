"""`suzent run` / `suzent loop` (the whole chain: spool → index → dream → reconcile → promote → lint) and the
one-screen `suzent status`. The CLI in-process against a real home (the signal tests run a real process, in
tests/integration/test_run_process.py); SUZENT_EMBEDDER=hash:64 so no model loads,
SUZENT_NOW so the gate's clock is fixed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import signal
import time
from pathlib import Path

import pytest
from filelock import FileLock

from conftest import HASH_ENV, CountingEmbedder, invoke, log
from conftest import settings_at as shared_settings_at
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.run import STAGES, refresh_today, run_pass
from suzent_cli.vault import ledger

ENV = HASH_ENV | {"SUZENT_NOW": "2026-06-20T12:00"}


def settings_at(home: Path, now: str = "2026-06-20T12:00"):
    """conftest's settings_at with the hash embedder (no model) as the environment."""
    return shared_settings_at(home, now, env=HASH_ENV)


def fill(home: Path, days: int = 12) -> None:
    """``days`` past days with 2 facts each (24 ≥ min_facts 20: the gate ingests without --force); repeats
    make superseded lines for reconcile."""
    s = settings_at(home)
    for i in range(days):
        day = (dt.date(2026, 6, 1) + dt.timedelta(days=i)).isoformat()
        log(s, day, "[preference] Prefers green tea over coffee", f"[personal] Walked {i + 1} km on day {i + 1}")


def run_json(home: Path, *args: str, **extra) -> tuple[int, dict]:
    proc = invoke(home, "run", "--json", *args, env_extra={**ENV, **extra})
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def outcomes(report: dict) -> dict[str, str]:
    return {s["name"]: s["outcome"] for s in report["stages"]}


# --- run ---------------------------------------------------------------------------------------------------
def test_run_the_whole_chain_then_idle_and_status_matches(home):
    fill(home)
    t0 = time.monotonic()
    code, first = run_json(home)
    first_wall = time.monotonic() - t0
    assert code == 0 and first["exit_code"] == 0, first
    assert [s["name"] for s in first["stages"]] == list(STAGES)
    for stage in first["stages"]:
        assert set(stage) == {"name", "outcome", "ok", "seconds", "detail", "error"} and stage["ok"], stage
    got = outcomes(first)
    assert got["spool"] == "skipped"
    assert (got["index"], got["dream"], got["reconcile"], got["promote"], got["lint"]) == \
        ("built", "ingested", "reconciled", "written", "skipped")
    stages = {s["name"]: s for s in first["stages"]}
    assert stages["index"]["detail"]["rows_added"] == 24
    assert stages["dream"]["detail"]["batch"][0] == "2026-06-01" and stages["dream"]["detail"]["steps"] == []
    rec = stages["reconcile"]["detail"]  # the repeated tea line: retired once, its 12 rows leave the index
    assert rec["lines_retired"] == 1 and rec["rows_removed"] >= 12
    assert "ingest comes first" in stages["lint"]["detail"]["summary"]
    s = settings_at(home)
    assert ledger.watermark(ledger.read_ledger(s.paths.vault_dir)) == dt.date(2026, 6, 12)
    assert (s.paths.memory_dir / "MEMORY.md").is_file()

    t0 = time.monotonic()
    code, second = run_json(home)
    second_wall = time.monotonic() - t0
    got = outcomes(second)
    assert code == 0 and (got["index"], got["dream"], got["reconcile"], got["promote"]) == \
        ("unchanged", "idle", "skipped", "skipped")
    assert got["lint"] == "linted"  # never linted: the gate's choice, reported on its own row
    assert "the gate chose lint" in second["stages"][2]["detail"]["summary"]

    proc = invoke(home, "run", env_extra=ENV)  # piped: plain aligned text, no table borders
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.match(r"stage\s+outcome\s+seconds\s+detail", lines[0]) and not re.search("[┃│━]", proc.stdout)
    assert [ln.split()[0] for ln in lines[1:7]] == list(STAGES) and lines[-1].startswith("exit 0 in ")
    assert all(ln.split()[1] in ("idle", "skipped", "unchanged", "not", "linted") for ln in lines[1:7]), proc.stdout
    print(f"\nsuzent run wall time: first pass {first_wall:.2f}s (in-pass {first['seconds']:.2f}s), "
          f"second {second_wall:.2f}s (in-pass {second['seconds']:.2f}s)")

    # status matches what is on disk
    proc = invoke(home, "status", "--json", env_extra=ENV)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["logs"] == {"count": 12, "first": "2026-06-01", "last": "2026-06-12", "facts": 24, "today_facts": 0}
    pages = [p for p in s.paths.vault_dir.rglob("*.md")
             if p.parent != s.paths.vault_dir and ".state" not in p.parts]
    claims = 0
    for page in pages:
        section = page.read_text().split("\n## Claims\n", 1)
        if len(section) == 2:
            claims += sum(1 for ln in section[1].split("\n## ", 1)[0].splitlines() if ln.startswith("- "))
    assert data["vault"]["pages"] == len(pages) and data["vault"]["claims"] == claims and claims >= 13
    assert data["vault"]["needs_review"] == 0 and data["vault"]["stale"] == 0
    from suzent_cli.index.store import ReadStore

    rows = ReadStore.open_existing(s.paths.index_dir).count()
    idx = data["index"]
    assert idx["built"] and idx["rows"] == rows and idx["embedder"] == "hash:64" and idx["dim"] == 64
    assert set(idx["by_source"]) <= {"archive", "notebook", "facts", "persona", "user", "legacy"}
    assert idx["by_source"]["notebook"] > 0 and idx["by_source"]["archive"] == 12  # 24 − the 12 copies of the retired line
    assert data["memory_md"]["exists"] and data["memory_md"]["has_marker"] and data["memory_md"]["generated_lines"] > 3
    q = data["queues"]
    assert (q["late_lines"], q["superseded"], q["confirmations"], q["tombstones"]) == (0, 0, 0, 1)
    assert data["vault"]["tombstones"] == 1 and data["vault"]["superseded_pending"] == 0  # the old keys stay
    assert all(not lock["held"] for lock in data["locks"].values()) and "memory_md" in data["locks"]
    assert q["spool"]["available"] is True and (q["spool"]["pending"], q["spool"]["failed"]) == (0, 0)
    assert data["watermark"] == "2026-06-12" and data["last_lint_result"]["outcome"] == "linted"

    proc = invoke(home, "status", env_extra=ENV)  # piped: plain "label  value" lines, one per fact
    assert proc.returncode == 0 and not re.search("[┃│━]", proc.stdout)
    for expected in ("watermark      2026-06-12", "daily logs     12 (2026-06-01 .. 2026-06-12), 24 fact lines, 0 today",
                     f"index          {rows} rows (", "current claims", "MEMORY.md      generated zone"):
        assert expected in proc.stdout, proc.stdout


def test_a_failing_stage_is_reported_and_the_rest_still_runs(home):
    fill(home)
    blocker = home / "not-a-dir"
    blocker.write_text("an index dir that is a file\n")
    code, report = run_json(home, SUZENT_INDEX_DIR=str(blocker))
    got = outcomes(report)
    assert code == 1 and report["exit_code"] == 1
    index = report["stages"][1]
    assert (index["outcome"], index["ok"]) == ("failed", False) and index["error"] and "\n" not in index["error"]
    assert (got["dream"], got["reconcile"], got["promote"]) == ("ingested", "reconciled", "written")
    assert all(s["ok"] for s in report["stages"] if s["name"] != "index")


def test_busy_lock_exits_3_and_bad_config_exits_2(home):
    fill(home, 2)
    s = settings_at(home)
    s.paths.state_dir.mkdir(parents=True)
    with FileLock(str(s.paths.state_dir / ".dream.lock")):
        code, report = run_json(home, "--force")
    got = outcomes(report)
    assert code == 3 and report["exit_code"] == 3 and got["dream"] == "busy" and got["index"] == "built"
    assert got["reconcile"] == got["promote"] == got["lint"] == "skipped"
    proc = invoke(home, "run", "--engine", "gpt", env_extra=ENV)
    assert proc.returncode == 2 and proc.stderr.startswith("Error: ") and "--engine" in proc.stderr
    (home / "config.toml").write_text('[dream]\nengine = "claude"\n')
    proc = invoke(home, "run", env_extra=ENV)
    assert proc.returncode == 2 and "ANTHROPIC_API_KEY" in proc.stderr and not proc.stdout


# --- run_pass in-process: stop between stages, the spool stage against stand-in modules -------------------
def test_stop_between_stages_never_starts_the_next_one(home):
    fill(home)
    s = settings_at(home)
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2  # stop once spool and index ran

    report = run_pass(s, DreamConfig(engine="rules"), stop=stop, embedder=CountingEmbedder())
    assert [r.outcome for r in report.stages][2:] == ["stopped"] * 4 and report.stopped and report.exit_code == 0
    assert report.stages[1].outcome == "built"
    assert ledger.watermark(ledger.read_ledger(s.paths.vault_dir)) is None  # the dream never started


class _FakeSpool:
    def __init__(self, waiting: int, result: dict):
        self.waiting, self.result, self.deadlines = waiting, result, []

    def pending(self, settings) -> int:
        return self.waiting

    def drain(self, settings, *, deadline=None) -> dict:
        self.deadlines.append(deadline)
        return self.result


def _use_spool(monkeypatch, fake) -> None:
    """Make the real :mod:`suzent_cli.hooks.spool` answer ``pending``/``drain`` through ``fake``."""
    from suzent_cli.hooks import spool

    monkeypatch.setattr(spool, "pending", fake.pending)
    monkeypatch.setattr(spool, "drain", fake.drain)


class _BrokenSpool(_FakeSpool):
    def drain(self, settings, *, deadline=None) -> dict:
        raise RuntimeError("spool folder vanished mid-drain")


def test_spool_stage_drains_with_a_deadline_and_reports_failures(home, monkeypatch):
    """Against the agreed API (pending(settings) -> int, drain(settings, *, deadline) -> dict), with stand-ins for
    what the functions return."""
    s = settings_at(home)
    config = DreamConfig(engine="rules")
    ok = _FakeSpool(2, {"drained": 2, "left": 0, "failed": 0, "errors": [], "turns": 3, "facts": 4})
    _use_spool(monkeypatch, ok)
    before = time.monotonic()
    report = run_pass(s, config, embedder=CountingEmbedder(), spool_seconds=30)
    spool = report.stages[0]
    assert (spool.outcome, spool.ok, spool.detail["drained"], spool.detail["facts"]) == ("drained", True, 2, 4)
    assert before + 30 <= ok.deadlines[0] <= time.monotonic() + 30  # a time.monotonic() instant
    bad = _FakeSpool(1, {"drained": 0, "left": 1, "failed": 1, "errors": ["x.json: transcript missing"],
                         "turns": 0, "facts": 0})
    _use_spool(monkeypatch, bad)
    report = run_pass(s, config, embedder=CountingEmbedder())
    assert (report.stages[0].outcome, report.stages[0].ok, report.exit_code) == ("failed", False, 1)
    assert "transcript missing" in report.stages[0].error and report.stages[1].ok  # the chain went on
    idle = _FakeSpool(0, {})
    _use_spool(monkeypatch, idle)
    assert run_pass(s, config, embedder=CountingEmbedder()).stages[0].outcome == "skipped" and idle.deadlines == []
    _use_spool(monkeypatch, _BrokenSpool(1, {}))  # an exception inside the drain: a failed stage, never "ok"
    report = run_pass(s, config, embedder=CountingEmbedder())
    assert (report.stages[0].outcome, report.stages[0].ok, report.exit_code) == ("failed", False, 1)
    assert "RuntimeError: spool folder vanished mid-drain" in report.stages[0].error and report.stages[1].ok


def test_the_real_spool_module_has_the_agreed_api():
    import inspect

    from suzent_cli.hooks import spool

    assert list(inspect.signature(spool.pending).parameters) == ["settings"]
    params = inspect.signature(spool.drain).parameters
    assert "deadline" in params and params["deadline"].kind is inspect.Parameter.KEYWORD_ONLY


def test_refresh_today_moves_only_an_unpinned_clock(home):
    free = dataclasses.replace(resolve_settings(home=home, env={}), today=dt.date(2000, 1, 1))
    assert refresh_today(free).today == dt.datetime.now(dt.UTC).date()
    pinned = settings_at(home)
    assert refresh_today(pinned) is pinned


# --- loop --------------------------------------------------------------------------------------------------
def test_a_second_signal_exits_at_once():
    from suzent_cli.signals import Signals

    with Signals() as signals:
        signals._handle(signal.SIGTERM, None)
        assert signals() and signals.name == "SIGTERM"
        with pytest.raises(SystemExit) as exc:
            signals._handle(signal.SIGINT, None)
        assert exc.value.code == 130


def test_loop_passes(home):
    fill(home, 3)
    proc = invoke(home, "loop", "--interval", "1", "--passes", "2", "--json", "--force", env_extra=ENV)
    passes = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert [p["pass"] for p in passes] == [1, 2]
    assert outcomes(passes[0])["dream"] == "ingested" and outcomes(passes[1])["dream"] == "idle"
    proc = invoke(home, "loop", "--passes", "0", env_extra=ENV)
    assert proc.returncode == 2 and "--passes must be a whole number" in proc.stderr


# --- status --------------------------------------------------------------------------------------------------
def test_a_busy_indexer_makes_the_pass_busy_not_failed(home):
    from filelock import FileLock

    from suzent_cli.config import resolve_settings

    s = resolve_settings(home=home, env={})
    s.paths.index_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(s.paths.index_dir / ".indexer.lock")):
        proc = invoke(home, "run", "--json", env_extra={**ENV, "SUZENT_LOCK_TIMEOUT": "0.3"})
    data = json.loads(proc.stdout)
    index = next(st for st in data["stages"] if st["name"] == "index")
    assert (index["outcome"], index["ok"]) == ("busy", True) and proc.returncode == 3 == data["exit_code"]


def test_status_reports_a_lock_it_cannot_probe_instead_of_failing(tmp_path, monkeypatch):
    from filelock import FileLock

    from suzent_cli import status as status_mod

    lock = tmp_path / ".x.lock"
    lock.write_text("")

    def refuse(self, *a, **k):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(FileLock, "acquire", refuse)
    assert status_mod.lock_state(lock) == {"held": None, "unknown": "cannot probe (Read-only file system)"}
