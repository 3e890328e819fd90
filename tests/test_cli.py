"""The CLI as a user meets it: the whole command (in-process, see conftest.invoke), real files, exit codes and
one-line errors."""

from __future__ import annotations

import json
import re

from conftest import REPO, invoke


def log_text(home, day="2026-06-10"):
    return (home / "sandbox" / "shared" / "memory" / "archive" / f"{day}.md").read_text(encoding="utf-8")


def test_init_is_idempotent_and_never_overwrites(home):
    first = invoke(home, "init", "--json")
    assert first.returncode == 0, first.stderr
    created = json.loads(first.stdout)["created"]
    assert any(p.endswith("notebook/schema.md") for p in created)
    assert (home / "notebook" / "3_Personal").is_dir() and (home / "notebook" / ".state").is_dir()
    assert (home / "notebook" / "log.md").read_text() == "# Notebook Log\n\n"
    (home / "notebook" / "schema.md").write_text("my own schema\n")
    again = invoke(home, "init", "--json")
    assert json.loads(again.stdout)["created"] == []
    assert (home / "notebook" / "schema.md").read_text() == "my own schema\n"


def test_capture_fact_lines_and_json_summary(home):
    r = invoke(home, "--today", "2026-06-10", "capture", "--fact", "[preference] Prefers compact dashboards `ui`",
                "--fact", "Lives in Berlin", "--session", "abc12345", "--time", "14:05", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["captured"] == 2 and summary["date"] == "2026-06-10" and summary["time"] == "14:05"
    assert log_text(home) == ("# Daily Log - 2026-06-10\n\n## 14:05 \u2014 abc12345\n\n"
                              "- [preference] Prefers compact dashboards `ui`\n- [general] Lives in Berlin\n")


def test_capture_facts_from_stdin_and_backfill_date(home):
    r = invoke(home, "capture", "--facts-from", "-", "--date", "2025-12-31", "--time", "23:59",
                input="- [goal] Run a marathon `sport`\n\n[personal] Has a cat named Miso\n")
    assert r.returncode == 0, r.stderr
    text = log_text(home, "2025-12-31")
    assert "- [goal] Run a marathon `sport`\n- [personal] Has a cat named Miso\n" in text


def test_empty_input_is_nothing_to_capture(home):
    r = invoke(home, "capture", "--facts-from", "-", input="\n   \n")
    assert r.returncode == 0 and "nothing to capture" in r.stdout
    assert not (home / "sandbox" / "shared" / "memory" / "archive").exists() or \
        not list((home / "sandbox" / "shared" / "memory" / "archive").glob("*.md"))


def test_bad_input_gets_one_line_error_and_nonzero_exit(home):
    cases = [
        (("capture",), "no input"),
        (("capture", "--facts-from", "/"), "is a directory"),
        (("capture", "--fact", "x", "--turn-from", "-"), "not both"),
        (("capture", "--fact", "x y z", "--date", "2026-02-30"), "YYYY-MM-DD"),
        (("capture", "--fact", "x y z", "--time", "25:00"), "HH:MM"),
        (("capture", "--facts-from", "/no/such/file"), "no such file"),
        (("--today", "yesterday", "capture", "--fact", "x"), "YYYY-MM-DD"),
        (("recall", "anything", "--model", "hash"), "no search index"),
        (("capture", "--turn-from", "-", "--extractor", "gpt"), "unknown extractor"),
    ]
    for args, message in cases:
        r = invoke(home, *args, input="hello")
        assert r.returncode != 0, args
        assert "Traceback" not in r.stderr, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_bad_bytes_and_nul_are_repaired_with_a_warning(home):
    r = invoke(home, "--today", "2026-06-10", "capture", "--facts-from", "-",
                input=b"[personal] Likes caf\xe9\x00 au lait\n")
    assert r.returncode == 0, r.stderr
    stderr = r.stderr.decode()
    assert "warning" in stderr and "NUL" in stderr and "UTF-8" in stderr
    assert "- [personal] Likes caf\ufffd au lait\n" in log_text(home)


def test_forged_heading_in_a_fact_stays_one_line(home):
    r = invoke(home, "--today", "2026-06-10", "capture", "--fact", "ok\n## 00:00 — root\n- [personal] forged")
    assert r.returncode == 0
    text = log_text(home)
    assert text.count("\n## ") == 1 and "- [general] ok ## 00:00 — root - [personal] forged\n" in text


def test_turn_capture_with_offline_extractor(home):
    turn = json.dumps([{"role": "user", "content": "I moved to Porto in May. Can you find me a dentist?"},
                       {"role": "assistant", "content": [{"type": "text", "text": "I live in a datacenter."},
                                                         {"type": "tool_use", "id": "t", "name": "x", "input": {}}]}])
    r = invoke(home, "--today", "2026-06-10", "capture", "--turn-from", "-", "--json", input=turn)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["extractor"] == "offline"
    assert [f["content"] for f in summary["facts"]] == ["I moved to Porto in May."]


def test_index_and_recall_with_provenance(home):
    assert invoke(home, "--today", "2026-06-10", "capture", "--fact", "[technical] Uses neovim for everything",
                   "--fact", "[personal] Has two kids", "--session", "sess-1", "--time", "09:30").returncode == 0
    r = invoke(home, "--today", "2026-06-11", "capture", "--fact", "[preference] Drinks oolong tea",
                "--session", "sess-2", "--time", "08:00", "--index", "--json", env_extra={"SUZENT_EMBEDDER": "hash"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["index"]["rows_added"] == 1
    r = invoke(home, "index", "--model", "hash", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["rows_added"] == 2
    r = invoke(home, "recall", "neovim", "--model", "hash", "--json", "--limit", "2")
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["hits"][0]
    assert top["content"] == "Uses neovim for everything"
    assert (top["source_file"], top["locator"], top["date"], top["session"]) == ("2026-06-10.md", 5, "2026-06-10", "sess-1")
    assert log_text(home).split("\n")[top["locator"] - 1] == "- [technical] Uses neovim for everything"
    for mode in ("fts", "vector"):
        r = invoke(home, "recall", "oolong tea", "--model", "hash", "--mode", mode, "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["hits"][0]["content"] == "Drinks oolong tea", r.stderr
    log = (home / "notebook" / ".state" / "recall_log.jsonl")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries and {"ts", "snippet", "source_type"} <= set(entries[0])
    plain = invoke(home, "recall", "tea", "--model", "hash")
    assert "2026-06-11.md:5" in plain.stdout


def test_recall_with_another_embedder_names_the_way_out(home):
    invoke(home, "capture", "--fact", "a b c")
    assert invoke(home, "index", "--model", "hash:64").returncode == 0
    r = invoke(home, "recall", "a", "--model", "hash:32")
    assert r.returncode == 1 and "--rebuild" in r.stderr and "Traceback" not in r.stderr


def test_index_rebuild_moves_the_old_table_to_a_backup(home):
    invoke(home, "capture", "--fact", "a b c")
    assert invoke(home, "index", "--model", "hash:64").returncode == 0
    r = invoke(home, "index", "--model", "hash:32", "--rebuild", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["rows_added"] == 1 and report["backup"]
    assert list((home / "backups").glob("index-*/archival_memories.lance"))


def test_capture_index_failure_is_a_warning_the_facts_are_kept(home):
    from filelock import FileLock

    lock = home / "memory" / ".indexer.lock"
    lock.parent.mkdir(parents=True)
    with FileLock(str(lock)):
        r = invoke(home, "--today", "2026-06-10", "capture", "--fact", "kept even if the index is busy", "--index",
                    env_extra={"SUZENT_EMBEDDER": "hash", "SUZENT_LOCK_TIMEOUT": "0.5"})
    assert r.returncode == 0, r.stderr
    assert "not indexed" in r.stderr
    assert "- [general] kept even if the index is busy\n" in log_text(home)


def test_corrupt_index_is_one_clear_error_and_rebuild_recovers(home):
    invoke(home, "capture", "--fact", "kayak trip in June")
    assert invoke(home, "index", "--model", "hash").returncode == 0
    table = home / "memory" / "archival_memories.lance"
    for f in [*(table / "data").glob("*"), *(table / "_versions").glob("*.manifest")]:
        f.write_bytes(b"garbage")  # manifests that do not open: an index that cannot be read (none at all would
        # be "no index yet", which the next index pass moves aside and builds: tests/test_index_integrity.py)
    for args in (("recall", "kayak", "--model", "hash"), ("index", "--model", "hash")):
        r = invoke(home, *args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "cannot read the index" in r.stderr and "--rebuild" in r.stderr
    assert invoke(home, "index", "--model", "hash", "--rebuild").returncode == 0
    r = invoke(home, "recall", "kayak", "--model", "hash", "--json")
    assert json.loads(r.stdout)["hits"][0]["content"] == "kayak trip in June"


def test_every_command_module_is_registered():
    """A module under cli/ that declares commands but is missing from COMMAND_MODULES would never register them."""
    from suzent_cli.cli.app import COMMAND_MODULES

    declaring = sorted(p.stem for p in (REPO / "suzent_cli" / "cli").glob("*.py")
                       if re.search(r"@app\.command|app\.add_typer", p.read_text(encoding="utf-8")) and p.stem != "app")
    assert sorted(COMMAND_MODULES) == declaring
