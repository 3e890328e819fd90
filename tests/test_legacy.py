"""``suzent retire-legacy`` against generated LanceDB tables: the original app's schema (3000 rows over four months;
3072-dimensional vectors) and suzent's own (source-NULL rows next to indexed ones). The CLI in-process."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env, invoke, load_script
from suzent_cli import legacy
from suzent_cli.archive import Fact, append_entry
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
from suzent_cli.errors import IndexIncompatible, LegacyUnexported
from suzent_cli.index.api import run_index
from suzent_cli.index.indexer import delete_legacy_rows
from suzent_cli.index.store import ReadStore
from suzent_cli.init import init_home
from suzent_cli.vault.state import append_tombstones

TODAY = "2026-06-10"
START = dt.datetime(2026, 1, 1)
SPAN = 120 * 86400  # seconds: 2026-01-01 .. 2026-04-30


# ---- generating tables ------------------------------------------------------------------------------------------
def _synthetic():
    return load_script("benchmarks/synthetic.py", "synthetic_bench")


app_table = _synthetic().app_table  # the original app's table, built as the retire-legacy benchmark builds it


def generated_rows(n: int, seed: int = 7) -> list[dict]:
    """``n`` rows at random instants over four months; every 10th is markdown-derived (has a source_file)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        created = START + dt.timedelta(seconds=rng.randrange(SPAN))
        meta = {"source_type": "agent", "category": rng.choice(["personal", "preference", "technical", "goal"]),
                "tags": [f"topic{i % 7}", "imported"]}
        if i % 10 == 0:  # derived from a page that exists (write_markdown): not legacy
            meta = {"source_type": "notebook", "source_file": "3_Personal/Profile.md", "category": "notebook",
                    "tags": []}
        rows.append({"id": f"{i:04d}-" + hashlib.md5(str(i).encode()).hexdigest()[:12],
                     "content": f"Legacy fact {i}: mentioned item {rng.randrange(10**6)} in passing",
                     "metadata": json.dumps(meta), "created_at": created})
    return rows


# Legacy rows given special contents (indices not divisible by 10), and what the check must make of them.
SPECIAL = {
    1: ("Prefers  Green tea", "recorded"),           # a daily-log fact "prefers green tea" (case and spacing aside)
    2: ("Has a cat named Miso", "recorded"),          # a daily-log fact
    3: ("Lives in Porto", "recorded"),                # a vault claim with suzent's markers
    4: ("Cycling to work", "recorded"),               # a vault heading
    5: ("Works at ACME", "recorded"),                 # "Currently works at ACME (since …); previously: …"
    6: ("Likes tea", "unrecorded"),                   # only "Likes tea and coffee" exists: no substring match
    7: ("Lives in Port", "unrecorded"),               # prefix of a recorded claim: still not recorded
    8: ("", "empty"),
    9: ("   \n ", "empty"),
    11: (None, "empty"),
    12: ("Has a dog named Rex", "unrecorded"),        # twice in the table: exported once
    13: ("Has a dog named Rex", "unrecorded"),
    14: ("Plays chess\non Sundays", "unrecorded"),    # a newline: folded to one line by the export
    15: ("Uses `vim`", "unrecorded"),                 # ends in a backtick span: must not be read back as tags
}
N = 3000
N_LEGACY = N - N // 10


def big_rows() -> list[dict]:
    rows = generated_rows(N)
    for i, (content, _) in SPECIAL.items():
        rows[i]["content"] = content
    rows[16]["metadata"] = "not json"   # unparsable metadata: legacy
    rows[17]["metadata"] = None         # no metadata: legacy
    return rows


def write_markdown(home: Path) -> None:
    """The markdown that already records five of the legacy rows (and near misses of two others)."""
    s = resolve_settings(home=home, today=TODAY, env={})
    append_entry(s.paths.archive_dir, dt.date(2026, 5, 2), "09:00", "sess0001",
                 [Fact("prefers green tea", "preference"), Fact("Has a cat named Miso", "personal", ("pets",)),
                  Fact("Likes tea and coffee", "preference")], timeout=5)
    personal = s.paths.vault_dir / "3_Personal"
    personal.mkdir(parents=True, exist_ok=True)
    (personal / "Profile.md").write_text(
        "---\ntype: personal\n---\n# Profile\n\n## Claims\n\n"
        "- Lives in Porto (confirmed 2x, last 2026-02-01) · source: 2026-02-01.md:5\n"
        "- Currently works at ACME (since 2026-03-01); previously: Works at Initech\n\n## Cycling to work\n\nDaily.\n")


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Path:
    """A home holding the 3000-row app table and the markdown above (copied per test)."""
    home = tmp_path_factory.mktemp("big") / "home"
    app_table(home / "memory", big_rows(), dim=8)
    write_markdown(home)
    return home


def copy_home(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def cli(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return invoke(home, "--today", TODAY, *args, **kw)


def table_rows(home: Path) -> dict[str, str | None]:
    import lancedb

    table = lancedb.connect(str(home / "memory")).open_table("archival_memories")
    data = table.search().select(["id", "content"]).limit(None).to_arrow().to_pydict()
    return dict(zip(data["id"], data["content"], strict=False))


def logs_digest(home: Path) -> dict[str, str]:
    archive = home / "sandbox" / "shared" / "memory" / "archive"
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(archive.glob("*.md"))}


def settings_for(home: Path):
    return resolve_settings(home=home, today=TODAY, env={})


def restore(home: Path, command: str) -> None:
    env = cli_env(home)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(command, shell=True, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# ---- the original app's table: check, export, apply, restore ------------------------------------------------
def test_check_counts_are_exact_and_read_only(big_table, tmp_path):
    home = copy_home(big_table, tmp_path / "home")
    before = table_rows(home)
    r = cli(home, "retire-legacy", "--json", "--sample", "3")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    expected = {status: sum(1 for _, s in SPECIAL.values() if s == status) for status in ("recorded", "empty")}
    assert (data["schema"], data["dim"], data["legacy_rows"]) == ("app", 8, N_LEGACY)
    assert (data["recorded"], data["empty"], data["forgotten"]) == (expected["recorded"], expected["empty"], 0)
    assert data["unrecorded"] == N_LEGACY - expected["recorded"] - expected["empty"]
    assert len(data["sample"]) == 3 and {"id", "created_at", "content"} <= set(data["sample"][0])
    assert table_rows(home) == before
    plain = cli(home, "retire-legacy")
    assert plain.returncode == 0 and f"{N_LEGACY} legacy row(s) in the app index" in plain.stdout
    assert "--export" in plain.stdout


def test_export_is_idempotent_and_apply_refuses_until_it_ran(big_table, tmp_path):
    home = copy_home(big_table, tmp_path / "home")
    before = table_rows(home)

    refused = cli(home, "retire-legacy", "--apply", "--yes")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "recorded nowhere" in refused.stderr
    assert f"{N_LEGACY - 8} of {N_LEGACY} legacy row(s)" in refused.stderr and "--export" in refused.stderr
    assert table_rows(home) == before and not (home / "backups").exists()

    first = cli(home, "retire-legacy", "--export", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    unrecorded = N_LEGACY - 5 - 3
    assert report["exported"] == unrecorded - 1 and report["duplicates"] == 1  # "Has a dog named Rex" once
    assert report["already_recorded"] == 5 and report["not_needed"] == 3 and report["skipped"] == []
    assert report["days"][0] >= "2026-01-01" and report["days"][-1] <= "2026-04-30" and len(report["days"]) > 100
    digest = logs_digest(home)

    again = cli(home, "retire-legacy", "--export", "--json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert (second["exported"], second["already_exported"], second["days"]) == (0, unrecorded - 1, [])
    assert logs_digest(home) == digest  # not one byte more

    log = (home / "sandbox/shared/memory/archive" / f"{report['days'][0]}.md").read_text()
    assert "## " in log and "\u2014 legacy\n" in log and " `" in log and "legacy legacy:" in log
    archive = home / "sandbox/shared/memory/archive"
    text = "".join(p.read_text() for p in archive.glob("*.md"))
    assert "] Plays chess on Sundays `" in text and "] Uses `vim` `" in text

    checked = legacy.check(settings_for(home)).to_json()
    assert (checked["unrecorded"], checked["recorded"], checked["exported"]) == (0, N_LEGACY - 3, unrecorded - 1)

    piped = cli(home, "retire-legacy", "--apply", input="y\n")  # stdin is not a terminal: no silent yes
    assert piped.returncode == 2 and "--yes" in piped.stderr and table_rows(home) == before

    applied = cli(home, "retire-legacy", "--apply", "--yes", "--json")
    assert applied.returncode == 0, applied.stderr
    result = json.loads(applied.stdout)
    assert result["deleted"] == N_LEGACY
    after = table_rows(home)
    assert set(after) == {rid for rid in before if int(rid[:4]) % 10 == 0} and len(after) == N // 10
    backup = Path(result["backup"])
    assert backup.parent == home / "backups" and (backup / "archival_memories.lance").is_dir()
    assert "rm -rf" in result["restore"] and "index --full" not in result["restore"]

    nothing = legacy.apply(settings_for(home))
    assert (nothing.legacy_rows, nothing.deleted, nothing.backup) == (0, 0, None)
    assert len(list((home / "backups").iterdir())) == 1  # nothing legacy: no backup

    restore(home, result["restore"])
    assert table_rows(home) == before


def test_exported_facts_are_consolidated_by_a_dream(tmp_path):
    home = tmp_path / "home"
    rows = generated_rows(60, seed=11)
    app_table(home / "memory", rows, dim=8)
    init_home(settings_for(home))
    with (home / "notebook" / "log.md").open("a") as fh:  # every row's day is already consolidated
        fh.write("\n## [2026-05-31] ingest | daily logs  watermark=2026-05-31\n")
    # no markdown at all: the rows naming 3_Personal/Profile.md name a page that does not exist, so all are legacy
    assert legacy.export(settings_for(home)).exported == 60
    r = invoke(home, "dream", "--force", "--engine", "rules", "--json", env_extra={"SUZENT_NOW": f"{TODAY}T12:00"})
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["outcome"] == "ingested"
    steps = {step["name"]: step for step in result["steps"]}  # the app's table: reconcile waits, not fails
    assert steps["reconcile"]["ok"] and "not suzent's" in steps["reconcile"]["detail"]["skipped"]
    pages = "".join(p.read_text() for p in (home / "notebook").rglob("*.md") if p.parent.name != "notebook")
    missing = [row["content"] for row in rows if row["content"] not in pages]
    assert not missing, missing[:3]
    # the dream wrote 3_Personal/Profile.md, so the 6 rows derived from it are the indexer's again, not legacy
    assert legacy.apply(settings_for(home)).deleted == 54


# ---- 3072-dimensional vectors --------------------------------------------------------------------------------
def test_app_table_with_3072_dimensional_vectors(tmp_path):
    home = tmp_path / "home"
    rows = generated_rows(300, seed=5)
    app_table(home / "memory", rows, dim=3072)
    data = json.loads(cli(home, "retire-legacy", "--json").stdout)
    assert (data["schema"], data["dim"], data["legacy_rows"], data["unrecorded"]) == ("app", 3072, 300, 300)
    assert legacy.export(settings_for(home)).exported == 300  # no page exists: the Profile.md rows are legacy
    applied = cli(home, "retire-legacy", "--apply", "--yes", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["deleted"] == 300 and len(table_rows(home)) == 0


# ---- suzent's own schema -------------------------------------------------------------------------------------
def test_own_schema_keeps_legacy_rows_through_full_index_and_apply_deletes_exactly_them(tmp_path):
    import lancedb
    import pyarrow as pa

    home = tmp_path / "home"
    s = settings_for(home)
    write_facts(s, [Fact("Lives in Berlin", "personal"), Fact("Likes tea", "preference")], day=dt.date(2026, 6, 1))
    run_index(s, model="hash:64")
    table = lancedb.connect(str(home / "memory")).open_table("archival_memories")
    indexed = table_rows(home)
    created = dt.datetime(2026, 3, 5, 8, 30, tzinfo=dt.UTC)
    legacy_rows = [{"id": f"old-{i}", "content": text, "vector": [0.1] * 64, "user_id": "default-user",
                    "metadata": json.dumps({"category": "personal"}), "importance": 0.9, "created_at": created,
                    "updated_at": created, "access_count": 0, "source": None}
                   for i, text in enumerate(["Was born in Graz", "Has two sisters", "Likes tea"])]
    table.add(pa.Table.from_pylist(legacy_rows, schema=table.schema))

    full = cli(home, "index", "--full", "--model", "hash:64", "--json")
    assert full.returncode == 0, full.stderr
    assert json.loads(full.stdout)["legacy_rows"] == 3 and len(table_rows(home)) == len(indexed) + 3

    data = legacy.check(s).to_json()
    assert (data["schema"], data["dim"], data["legacy_rows"], data["recorded"], data["unrecorded"]) == \
        ("suzent", 64, 3, 1, 2)  # "Likes tea" is already a log fact
    refused = cli(home, "retire-legacy", "--apply", "--yes")
    assert refused.returncode == 1 and "old-0" in refused.stderr and "old-2" not in refused.stderr
    export = legacy.export(s)
    assert (export.exported, export.days) == (2, ["2026-03-05"])
    applied = cli(home, "retire-legacy", "--apply", "--yes", "--json")
    assert applied.returncode == 0, applied.stderr
    result = json.loads(applied.stdout)
    assert result["deleted"] == 3 and table_rows(home) == indexed
    assert result["restore"].endswith(" index --full") and f"--home {home}" in result["restore"]
    run_index(s, model="hash:64")  # the exported facts come back as log rows
    contents = set(table_rows(home).values())
    assert {"Was born in Graz", "Has two sisters"} <= contents
    restore(home, result["restore"])
    assert {f"old-{i}" for i in range(3)} <= set(table_rows(home))


# ---- library details -----------------------------------------------------------------------------------------
def test_undated_future_and_forgotten_rows(tmp_path):
    home = tmp_path / "home"
    rows = [
        {"id": "a", "content": "No date at all", "metadata": "{}", "created_at": None},
        {"id": "b", "content": "Dated by metadata", "metadata": json.dumps({"source_date": "2026-02-03"}),
         "created_at": None},
        {"id": "c", "content": "From the future", "metadata": "{}", "created_at": dt.datetime(2027, 1, 1)},
        {"id": "d", "content": "Forget me", "metadata": "{}", "created_at": dt.datetime(2026, 2, 1)},
    ]
    app_table(home / "memory", rows, dim=4)
    s = settings_for(home)
    append_tombstones(s.paths.state_dir, ["forget me"], reason="forget", timeout=5)
    plan = legacy.check(s)
    assert {r.id: r.status for r in plan.rows} == {"a": "unrecorded", "b": "unrecorded", "c": "unrecorded",
                                                   "d": "forgotten"}
    report = legacy.export(s)
    assert report.exported == 1 and report.days == ["2026-02-03"] and report.not_needed == 1
    assert {(x["id"], x["reason"].split(",")[0]) for x in report.skipped} == {("a", "no created_at"),
                                                                             ("c", "dated 2027-01-01")}
    with pytest.raises(LegacyUnexported, match="2 of 4 legacy row") as exc:
        legacy.apply(s)
    assert "2 cannot be exported" in str(exc.value) and "suzent capture --date" in str(exc.value)
    assert "--export" not in str(exc.value)  # exporting again cannot help these two
    refused = cli(home, "retire-legacy", "--apply", "--yes", "--json")
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert json.loads(refused.stdout)["refused"] is True and {r["id"] for r in json.loads(refused.stdout)["rows"]} == {"a", "c"}
    stray = cli(home, "retire-legacy", "--yes")
    assert stray.returncode == 2 and "--yes only applies to --apply" in stray.stderr
    for day, text in (("2026-01-15", "No date at all"), ("2026-06-09", "from the FUTURE")):
        assert cli(home, "capture", "--date", day, "--fact", text).returncode == 0
    report = legacy.apply(s)
    assert report.deleted == 4 and table_rows(home) == {}


def test_delete_touches_only_rows_still_legacy_with_the_checked_content(tmp_path):
    home = tmp_path / "home"
    rows = generated_rows(20)
    app_table(home / "memory", rows, dim=4)
    markdown_row, legacy_row, changed_row = rows[0], rows[1], rows[2]
    deleted = delete_legacy_rows(home / "memory", {markdown_row["id"]: markdown_row["content"],
                                                   legacy_row["id"]: legacy_row["content"],
                                                   changed_row["id"]: "another text"}, timeout=5)
    assert deleted == 1 and set(table_rows(home)) == {r["id"] for r in rows} - {legacy_row["id"]}


def test_another_tools_table_is_refused_naming_the_migration(tmp_path):
    app_table(tmp_path / "memory", generated_rows(3), dim=4)
    with pytest.raises(IndexIncompatible) as exc:
        ReadStore.open(tmp_path / "memory", "hash:4", 4)
    message = str(exc.value)
    assert "retire-legacy" in message and "--export" in message and "--apply" in message
    assert "--rebuild" in message and "\n" not in message


def test_keys_compare_by_equality_of_the_first_90_characters():
    assert legacy.key("Likes  TEA") == legacy.key("likes tea") != legacy.key("likes tea and coffee")
    long = "x" * 100
    assert legacy.key(long) == legacy.key(long + " and more") and len(legacy.key(long)) == 90
    assert legacy.key("Plays chess\non Sundays") == legacy.key("Plays chess on Sundays")
    assert legacy.key(None) == legacy.key("  ") == ""


def test_a_long_row_matching_only_on_its_first_90_characters_is_exported_not_deleted(tmp_path):
    home = tmp_path / "home"
    init_home(resolve_settings(home=home, today=TODAY, env={}))
    s = settings_for(home)
    head = "Keeps a long reading list of books about distributed systems, databases and the history of computing"
    write_facts(s, [Fact(head + " and reads one a month", "preference")], day=dt.date(2026, 5, 2), time="09:00",
                refresh=False)
    app_table(s.paths.index_dir, [
        {"id": "r1", "content": head + " and reads one a week", "metadata": "{}", "created_at": dt.datetime(2026, 2, 1, 8)},
        {"id": "r2", "content": head + " and reads one a month", "metadata": "{}", "created_at": dt.datetime(2026, 2, 2, 8)},
    ], dim=8)
    plan = legacy.check(s)
    assert {r.id: r.status for r in plan.rows} == {"r1": "prefix_only", "r2": "recorded"}
    data = plan.to_json()
    assert (data["recorded"], data["prefix_only"], data["unrecorded"]) == (2, 1, 0)
    with pytest.raises(LegacyUnexported, match="r1"):
        legacy.apply(s, plan=plan)
    report = legacy.export(s)
    assert report.exported == 1 and report.already_recorded == 1
    assert {r.id: r.status for r in legacy.check(s).rows} == {"r1": "recorded", "r2": "recorded"}


def test_rebuild_over_an_app_index_keeps_the_apps_memory_blocks_table(tmp_path):
    import lancedb
    import pyarrow as pa

    home = tmp_path / "home"
    s = resolve_settings(home=home, today=TODAY, env={})
    write_facts(s, [Fact("Lives in Porto", "personal")], day=dt.date(2026, 6, 1), time="09:00", refresh=False)
    app_table(s.paths.index_dir, generated_rows(20), dim=8)
    naive = pa.timestamp("us")  # the app's memory_blocks: timestamps without a time zone
    blocks = pa.table({"label": ["persona"], "content": ["You are helpful"], "chat_id": [None], "user_id": ["u"],
                       "created_at": pa.array([dt.datetime(2026, 1, 1)], naive),
                       "updated_at": pa.array([dt.datetime(2026, 1, 1)], naive)})
    lancedb.connect(str(s.paths.index_dir)).create_table("memory_blocks", data=blocks)
    r = cli(home, "index", "--rebuild", env_extra={"SUZENT_EMBEDDER": "hash:16"})
    assert r.returncode == 0, r.stderr
    db = lancedb.connect(str(s.paths.index_dir))
    assert db.open_table("memory_blocks").to_arrow().column("content").to_pylist() == ["You are helpful"]
    assert "Lives in Porto" in db.open_table("archival_memories").to_arrow().column("content").to_pylist()


def test_an_app_row_naming_a_file_that_is_gone_is_legacy(tmp_path):
    home = tmp_path / "home"
    s = resolve_settings(home=home, today=TODAY, env={})
    write_facts(s, [Fact("Lives in Porto", "personal")], day=dt.date(2026, 6, 1), time="09:00", refresh=False)
    at = dt.datetime(2026, 2, 1, 8)
    app_table(s.paths.index_dir, [
        {"id": "kept", "content": "Lives in Porto", "created_at": at,
         "metadata": json.dumps({"source_type": "archive_log", "source_file": "2026-06-01.md"})},
        {"id": "gone", "content": "Has a boat", "created_at": at,
         "metadata": json.dumps({"source_type": "archive_log", "source_file": "2026-01-02.md"})},
        {"id": "outside", "content": "Has a van", "created_at": at,
         "metadata": json.dumps({"source_type": "notebook", "source_file": "/abs/old/Page.md"})},
    ], dim=8)
    plan = legacy.check(s)
    assert sorted(r.id for r in plan.rows) == ["gone", "outside"]
    legacy.export(s)
    report = legacy.apply(s)
    assert report.deleted == 2 and set(table_rows(home)) == {"kept"}
    assert "--home" in report.restore or report.schema == "app"


def test_index_after_apply_on_an_app_table_says_a_rebuild_is_now_safe(tmp_path):
    home = tmp_path / "home"
    s = resolve_settings(home=home, today=TODAY, env={})
    write_facts(s, [Fact("Lives in Porto", "personal")], day=dt.date(2026, 6, 1), time="09:00", refresh=False)
    app_table(s.paths.index_dir, [
        {"id": "kept", "content": "Lives in Porto", "created_at": dt.datetime(2026, 6, 1, 9),
         "metadata": json.dumps({"source_type": "archive_log", "source_file": "2026-06-01.md"})},
        {"id": "old", "content": "Has a boat", "created_at": dt.datetime(2026, 2, 1, 8), "metadata": "{}"},
    ], dim=8)
    before = cli(home, "index", env_extra={"SUZENT_EMBEDDER": "hash:16"})
    assert before.returncode == 1 and "retire-legacy" in before.stderr
    legacy.export(s)
    assert legacy.apply(s).deleted == 1
    after = cli(home, "index", env_extra={"SUZENT_EMBEDDER": "hash:16"})
    assert after.returncode == 1 and "no legacy rows" in after.stderr and "--rebuild" in after.stderr
    assert "retire-legacy" not in after.stderr


def test_export_keeps_a_multi_word_tag_as_one_tag_and_drops_control_bytes(tmp_path):
    home = tmp_path / "home"
    s = resolve_settings(home=home, today=TODAY, env={})
    app_table(s.paths.index_dir, [{"id": "t1", "content": "Has a\x00weird\x07 byte", "created_at": dt.datetime(2026, 2, 1, 8),
                                   "metadata": json.dumps({"category": "context", "tags": ["two words", "x"]})}], dim=4)
    assert legacy.export(s).exported == 1
    text = (s.paths.archive_dir / "2026-02-01.md").read_text()
    assert "- [context] Has aweird byte `two-words x legacy legacy:t1`" in text
    assert legacy.check(s).to_json()["unrecorded"] == 0
