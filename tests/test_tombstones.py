"""An unreadable tombstone file never brings forgotten text back, and a forget that matches nothing shows the
closest rows (issue 13, section 1). See suzent_cli/vault/state/tombstones.py's module doc for the decision per damage case."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conftest import HASH_ENV, CountingEmbedder, invoke, log
from suzent_cli.archive import Fact
from suzent_cli.config import resolve_settings
from suzent_cli.errors import SuzentError
from suzent_cli.index.api import run_index
from suzent_cli.index.indexer import Indexer
from suzent_cli.index.store import ReadStore
from suzent_cli.vault.state import TOMBSTONES, append_tombstones, read_forgotten, read_tombstones

EMB = HASH_ENV | {"SUZENT_NOW": "2026-06-20T12:00"}
SECRET = "Has a secret diary"


def make_settings(home: Path):
    return dataclasses.replace(resolve_settings(home=home, now="2026-06-20T12:00", env={}), embedder="hash:64")


def contents(settings) -> list[str]:
    return sorted(r["content"] for r in ReadStore.open_existing(settings.paths.index_dir).rows())


def version(settings) -> int:
    return ReadStore.open_existing(settings.paths.index_dir).version


@pytest.fixture
def forgotten(home):
    """A home whose index once held SECRET, forgotten (tombstone + reindex) along with an older tombstone."""
    s = make_settings(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin", f"[personal] {SECRET}", "[preference] Likes tea")
    run_index(s, embedder=CountingEmbedder())
    append_tombstones(s.paths.state_dir, ["Likes tea"], reason="superseded", timeout=5)
    append_tombstones(s.paths.state_dir, [SECRET], reason="forget", timeout=5)
    run_index(s, embedder=CountingEmbedder())
    assert contents(s) == ["Lives in Berlin"]
    return s


def _directory(path: Path, monkeypatch) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("{}\n")


def _nul_filled(path: Path, monkeypatch) -> None:  # a crash on a filesystem that zero-fills unwritten blocks
    path.write_bytes(b"\0" * path.stat().st_size)


def _nul_inside(path: Path, monkeypatch) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-20] + b"\0\0" + data[-18:])


def _not_utf8(path: Path, monkeypatch) -> None:
    path.write_bytes(path.read_bytes().replace(b"secret", b"s\xffcret"))


def _torn_last_line(path: Path, monkeypatch) -> None:  # a later truncation cut the last record
    path.write_bytes(path.read_bytes()[:-12])


def _state_is_a_file(path: Path, monkeypatch) -> None:
    shutil.rmtree(path.parent)
    path.parent.write_text("not a directory\n")


def _dangling_link(path: Path, monkeypatch) -> None:
    path.unlink()
    path.symlink_to(path.parent / "gone.jsonl")


def _unreadable(path: Path, monkeypatch) -> None:  # fault injection: chmod 000 does not stop root
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == TOMBSTONES:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)


DAMAGE = {"directory": _directory, "nul-filled": _nul_filled, "nul-inside": _nul_inside, "not-utf8": _not_utf8,
          "torn-last-line": _torn_last_line, "state-is-a-file": _state_is_a_file, "dangling-link": _dangling_link,
          "unreadable": _unreadable}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_an_unreadable_tombstone_file_stops_every_index_pass_before_the_table(forgotten, case, monkeypatch):
    s = forgotten
    before = version(s)
    DAMAGE[case](s.paths.state_dir / TOMBSTONES, monkeypatch)
    for full in (False, True):
        with pytest.raises(SuzentError, match="refusing to go on") as err:
            Indexer(s, CountingEmbedder()).run(full=full)
        assert "tombstones.jsonl" in str(err.value) or ".state" in str(err.value)
        assert "\n" not in str(err.value)
    assert contents(s) == ["Lives in Berlin"] and version(s) == before  # LanceDB untouched
    for reader in (read_tombstones, read_forgotten):
        with pytest.raises(SuzentError, match="refusing to go on"):
            reader(s.paths.state_dir)


def test_the_dream_refuses_on_an_unreadable_tombstone_file_without_counting_a_failure(forgotten):
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner
    from suzent_cli.vault.dream_state import load_state

    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_bytes(b"\0" * path.stat().st_size)
    with pytest.raises(SuzentError, match="refusing to go on"):
        DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)
    assert not load_state(s.paths.state_dir).failures  # not a failed attempt: nothing counts toward a skip
    assert not list(s.paths.vault_dir.rglob("*.md")) or SECRET.lower() not in "".join(
        p.read_text().lower() for p in s.paths.vault_dir.rglob("*.md"))


def test_a_lint_refused_for_an_unreadable_tombstone_file_records_no_attempt(forgotten):
    """A refusal is not an attempt: recording last_lint_attempt would hold lint back 24 h (fresh-user trial)."""
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner
    from suzent_cli.vault.dream_state import load_state

    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_bytes(b"\0" * path.stat().st_size)
    with pytest.raises(SuzentError, match="refusing to go on"):
        DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).lint_now()
    state = load_state(s.paths.state_dir)
    assert state.last_lint_attempt is None and state.last_attempt is None


def test_capture_and_recall_keep_working_with_an_unreadable_tombstone_file(forgotten):
    from suzent_cli.capture import write_facts
    from suzent_cli.recall import recall

    s = forgotten
    (s.paths.state_dir / TOMBSTONES).unlink()
    (s.paths.state_dir / TOMBSTONES).mkdir()
    write_facts(s, [Fact(content="Owns a bicycle", category="personal")])
    assert "Owns a bicycle" in (s.paths.archive_dir / "2026-06-20.md").read_text()
    hits = recall(s, CountingEmbedder(), "secret diary in Berlin", limit=5)  # Berlin: a relevant row to return
    assert hits and all(SECRET not in h.content for h in hits)


def quarantined(s) -> list[str]:
    """The tombstone lines kept in the one quarantine of state files (``.state/quarantine/tombstones.jsonl``)."""
    lines = (s.paths.state_dir / "quarantine" / TOMBSTONES).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert all(r["file"] == TOMBSTONES and r["reason"] and r["ts"] for r in records), records
    assert not (s.paths.state_dir / (TOMBSTONES + ".bad")).exists()  # no second mechanism
    return [r["record"] for r in records]


def test_bad_whole_lines_are_quarantined_with_one_warning_and_the_rest_is_read(forgotten, capsys):
    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    good = path.read_text()
    odd = ['{"content": "Wants to learn Rust", "reason": 7}', '{"content": "Owns a cat", "reason": "forget"} }x']
    path.write_text('\ufeffnot json\n[1, 2]\n{"content": 5, "reason": "forget"}\n\n' + good + "\n".join(odd))
    expected = {"likes tea", "has a secret diary", "wants to learn rust", "owns a cat"}
    assert read_tombstones(s.paths.state_dir) == expected
    warning = capsys.readouterr().err
    assert warning.count("warning:") == 1 and warning.count("\n") == 1 and "quarantine/tombstones.jsonl" in warning
    assert "3 line(s)" in warning and "2 line(s)" in warning
    assert quarantined(s) == ['not json', '[1, 2]', '{"content": 5, "reason": "forget"}', *odd]
    # a reason of the wrong type counts as forget (the stricter): hidden from the vault as well as the index
    assert {"wants to learn rust", "owns a cat"} <= read_forgotten(s.paths.state_dir)
    assert read_tombstones(s.paths.state_dir) == expected
    assert capsys.readouterr().err == ""  # one warning, not one per read
    Indexer(s, CountingEmbedder()).run(full=True)
    assert contents(s) == ["Lives in Berlin"]


def test_a_forget_moves_a_torn_last_line_aside_and_records_its_tombstone_whole(forgotten, capsys):
    """The repair the refusal names: re-running the interrupted forget."""
    from suzent_cli.forget import forget, plan_forget

    s = forgotten
    log(s, "2026-06-02", "[personal] Owns a red bicycle")
    run_index(s, embedder=CountingEmbedder())
    path = s.paths.state_dir / TOMBSTONES
    with open(path, "a") as fh:  # the interrupted forget: its record torn, its reindex never ran
        fh.write('{"content": "owns a red bi')
    with pytest.raises(SuzentError, match="last line is incomplete"):
        run_index(s, embedder=CountingEmbedder())
    forget(s, plan_forget(s, "Owns a red bicycle"), embedder=CountingEmbedder())
    assert "owns a red bi" in capsys.readouterr().err
    assert quarantined(s) == ['{"content": "owns a red bi']
    assert read_forgotten(s.paths.state_dir) == {"has a secret diary", "owns a red bicycle"}
    assert contents(s) == ["Lives in Berlin"]


def test_a_superseded_write_does_not_repair_a_torn_last_line(forgotten):
    """Only a person's forget repairs it: reconcile after a dream must not quietly drop what may be a tombstone."""
    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(SuzentError, match="last line is incomplete"):
        append_tombstones(s.paths.state_dir, ["Lives in Berlin"], reason="superseded", timeout=5)
    assert not (s.paths.state_dir / "quarantine" / TOMBSTONES).exists()


def test_index_refuses_in_one_line_with_exit_1_on_a_damaged_tombstone_file(forgotten):
    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_bytes(b"\0" * path.stat().st_size)
    proc = invoke(s.paths.home, "index", "--full", env_extra=EMB)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(path) in proc.stderr and "NUL" in proc.stderr
    assert contents(s) == ["Lives in Berlin"]


# --- forget TEXT that matches nothing exactly -----------------------------------------------------------------
def test_forget_without_an_exact_match_lists_the_closest_rows_with_their_index_ids(forgotten):
    from suzent_cli.forget import NoExactMatch, plan_forget

    s = forgotten
    log(s, "2026-06-02", "[personal] Lives in Berlin", "[personal] Works as a nurse in Porto")
    (s.paths.vault_dir / "3_Personal").mkdir(parents=True, exist_ok=True)
    (s.paths.vault_dir / "3_Personal" / "Home.md").write_text("# Home\n\n## Claims\n\nLives in Berlin since 2020.\n")
    run_index(s, embedder=CountingEmbedder())
    with pytest.raises(NoExactMatch) as err:
        plan_forget(s, "lives in berln")
    exc = err.value
    assert exc.exit_code == 1 and "nothing recorded" in str(exc) and "--id" in str(exc)
    best = exc.closest[0]
    assert (best.content, best.source, best.where, best.copies) == ("Lives in Berlin", "archive:2026-06-01.md",
                                                                    "line 5", 2)
    assert [c.score for c in exc.closest] == sorted((c.score for c in exc.closest), reverse=True)
    assert len(exc.closest) <= 5 and all(c.score >= 60 for c in exc.closest)
    assert all(SECRET not in c.content for c in exc.closest)  # a forgotten row is no candidate
    ids = {r["id"]: r["content"] for r in ReadStore.open_existing(s.paths.index_dir).rows()}
    assert all(ids.get(c.id) == c.content for c in exc.closest)  # pickable with --id
    assert exc.to_json()["closest"][0]["id"] == best.id

    with pytest.raises(NoExactMatch) as err:
        plan_forget(s, "xyzzy quux")
    assert err.value.closest == [] and "exactly or nearly" in str(err.value)


def test_forget_cli_no_match_prints_the_closest_and_exits_1(forgotten):
    s = forgotten
    proc = invoke(s.paths.home, "forget", "Lives in Berln", env_extra=EMB)
    assert proc.returncode == 1, proc.stderr
    assert "archive:2026-06-01.md line 5" in proc.stdout and "Lives in Berlin" in proc.stdout and " id " in proc.stdout
    assert proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1 and "closest row" in proc.stderr
    proc = invoke(s.paths.home, "forget", "Lives in Berln", "--json", env_extra=EMB)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["matched"] is False and data["closest"][0]["content"] == "Lives in Berlin"
    assert set(data["closest"][0]) >= {"content", "id", "source", "path", "where", "score"}
    proc = invoke(s.paths.home, "forget", "xyzzy quux", env_extra=EMB)
    assert (proc.returncode, proc.stdout, proc.stderr.count("\n")) == (1, "", 1) and "nearly" in proc.stderr


def test_status_shows_an_unreadable_tombstone_file_instead_of_failing(forgotten):
    from suzent_cli.config import DreamConfig
    from suzent_cli.status import status

    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_bytes(path.read_bytes() + b"\0")
    data = status(s, DreamConfig(), with_index=False)
    assert data["queues"]["tombstones"] is None
    assert any("NUL" in w and "refusing to go on" in w for w in data["warnings"])


# --- a deleted or older tombstone file (issue 13): the index remembers what it applied ---------------------------
def test_a_deleted_tombstone_file_stops_every_index_pass_before_the_table(forgotten):
    s = forgotten
    before = version(s)
    (s.paths.state_dir / TOMBSTONES).unlink()  # an accidental rm, or a vault restored without .state/
    for full in (False, True):
        with pytest.raises(SuzentError, match="2 tombstone") as err:
            Indexer(s, CountingEmbedder()).run(full=full)
        message = str(err.value)
        assert err.value.exit_code == 1 and "\n" not in message
        assert "tombstones.jsonl" in message and "forgotten text would come back" in message
        assert "backup" in message and "suzent index --rebuild" in message
    assert contents(s) == ["Lives in Berlin"] and version(s) == before  # LanceDB untouched, nothing came back


def test_a_tombstone_file_restored_from_an_older_copy_is_refused(forgotten):
    s = forgotten
    path = s.paths.state_dir / TOMBSTONES
    path.write_text(path.read_text().splitlines(keepends=True)[0])  # the copy from before SECRET was forgotten
    before = version(s)
    with pytest.raises(SuzentError, match="applied 1 tombstone"):
        Indexer(s, CountingEmbedder()).run(full=True)
    assert contents(s) == ["Lives in Berlin"] and version(s) == before


def test_adding_tombstones_keeps_indexing_and_the_record_grows(forgotten):
    s = forgotten
    append_tombstones(s.paths.state_dir, ["Lives in Berlin"], reason="forget", timeout=5)
    Indexer(s, CountingEmbedder()).run()
    assert contents(s) == []
    state = json.loads((s.paths.index_dir / "index_state.json").read_text())
    assert len(state["applied_tombstones"]) == 3 and all(len(h) == 16 for h in state["applied_tombstones"])
    assert SECRET not in json.dumps(state)  # hashes, not the forgotten text


def test_a_state_without_the_record_is_not_checked_and_gets_one(forgotten):
    s = forgotten
    state_path = s.paths.index_dir / "index_state.json"
    state = json.loads(state_path.read_text())
    del state["applied_tombstones"]  # written by an older suzent
    state_path.write_text(json.dumps(state))
    (s.paths.state_dir / TOMBSTONES).unlink()
    Indexer(s, CountingEmbedder()).run()
    assert json.loads(state_path.read_text())["applied_tombstones"] == []


def test_rebuild_accepts_the_loss_and_starts_over(forgotten):
    s = forgotten
    (s.paths.state_dir / TOMBSTONES).unlink()
    proc = invoke(s.paths.home, "index", env_extra=EMB)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1
    assert "--rebuild" in proc.stderr and "Traceback" not in proc.stderr
    assert contents(s) == ["Lives in Berlin"]
    proc = invoke(s.paths.home, "index", "--rebuild", env_extra=EMB)
    assert proc.returncode == 0, proc.stderr
    assert contents(s) == sorted(["Lives in Berlin", SECRET, "Likes tea"])  # the loss, accepted explicitly
    Indexer(s, CountingEmbedder()).run()  # and the fresh state no longer refuses


def test_status_warns_about_tombstones_the_index_applied_but_the_file_lost(forgotten):
    from suzent_cli.config import DreamConfig
    from suzent_cli.status import status

    s = forgotten
    assert not any("no longer holds" in w for w in status(s, DreamConfig(), with_index=False)["warnings"])
    (s.paths.state_dir / TOMBSTONES).unlink()
    data = status(s, DreamConfig(), with_index=False)
    assert data["queues"]["tombstones"] == 0
    assert any("applied 2 tombstone(s)" in w and "--rebuild" in w for w in data["warnings"])
