"""Project scopes end to end (issue 26 section 1): what capture records, what the index keeps, and what recall may
return on every path. Real git repositories (an origin remote, a worktree), real daily logs, a real LanceDB table
(hash:64 embedder), the CLI in process (:func:`conftest.invoke`, its directory given as ``SUZENT_CWD`` the way the
relay gives a client's) and as a real process where the fast path is the point."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from claude_code_session import Transcript

from conftest import HASH_ENV, REPO, cli_env, invoke, settings_at
from suzent_cli.scope import PERSON, scope_of_tags, session_project

AUTO = {"SUZENT_SCOPE": None}  # the default setting (conftest makes every other test's captures the person's)
BILLING = "github.com/acme/billing"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def repo(path: Path, origin: str | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    if origin:
        git("remote", "add", "origin", origin, cwd=path)
    return path


def here(cwd: Path, **extra) -> dict:
    return HASH_ENV | AUTO | {"SUZENT_CWD": str(cwd)} | extra


def capture(home: Path, cwd: Path, *facts: str, extra: tuple[str, ...] = (), **env):
    args = [a for f in facts for a in ("--fact", f)]
    return invoke(home, "capture", *args, *extra, env_extra=here(cwd, **env))


def lines(home: Path) -> list[str]:
    archive = settings_at(home).paths.archive_dir
    return [ln for p in sorted(archive.glob("*.md")) for ln in p.read_text(encoding="utf-8").splitlines()
            if ln.startswith("- [")]


def recall_json(home: Path, cwd: Path, query: str, *extra: str) -> list[dict]:
    r = invoke(home, "recall", query, "--json", "--mode", "fts", *extra, env_extra=here(cwd))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hits"]


@pytest.fixture
def projects(tmp_path):
    """Two projects: billing (a clone of github.com/acme/billing, over ssh) and tax-client (a repository without
    a remote, under the person's ~/src as in the issue), and a plain folder."""
    billing = repo(tmp_path / "user-home" / "src" / "billing", "git@github.com:acme/billing.git")
    tax = repo(tmp_path / "user-home" / "src" / "tax-client")
    plain = tmp_path / "user-home" / "notes"
    plain.mkdir(parents=True)
    return billing, tax, plain


# --- capture ---------------------------------------------------------------------------------------------------

def test_capture_tags_a_project_fact_and_leaves_the_persons_untagged(home, projects):
    billing, _, _ = projects
    (billing / "services" / "api").mkdir(parents=True)  # a monorepo's subfolder: the repository's project
    r = capture(home, billing / "services" / "api",
                "[technical] Uses Postgres 16 on Hetzner", "[preference] Prefers tea", "[goal] Run a marathon")
    assert r.returncode == 0, r.stderr
    assert lines(home) == ["- [technical] Uses Postgres 16 on Hetzner `project:github.com/acme/billing`",
                           "- [preference] Prefers tea", "- [goal] Run a marathon"]


def test_global_project_and_the_setting_override_the_default(home, projects):
    billing, tax, plain = projects
    assert capture(home, billing, "[technical] Shared fact", extra=("--global",)).returncode == 0
    assert capture(home, plain, "[preference] Only here", extra=("--project", str(tax))).returncode == 0
    assert capture(home, plain, "[technical] By key", extra=("--project", "github.com/o/r")).returncode == 0
    assert capture(home, billing, "[preference] Scoped by setting", SUZENT_SCOPE="project").returncode == 0
    assert capture(home, billing, "[technical] Person's by setting", SUZENT_SCOPE="global").returncode == 0
    assert lines(home) == ["- [technical] Shared fact", f"- [preference] Only here `project:git:{tax}`",
                           "- [technical] By key `project:github.com/o/r`",
                           f"- [preference] Scoped by setting `project:{BILLING}`", "- [technical] Person's by setting"]


def test_a_known_projects_short_name_resolves_and_bad_names_are_one_line_errors(home, projects):
    billing, _, plain = projects
    assert capture(home, billing, "[technical] CI runs on Woodpecker").returncode == 0
    assert capture(home, plain, "[technical] Deploys on Fridays", extra=("--project", "billing")).returncode == 0
    assert lines(home)[-1] == f"- [technical] Deploys on Fridays `project:{BILLING}`"
    for extra, words in ((("--project", "nope"), "unknown project 'nope'"),
                         (("--project", "x", "--global"), "not both"), (("--project", " "), "needs a name")):
        r = capture(home, plain, "[technical] never written", extra=extra)
        assert r.returncode == 2 and r.stderr.startswith("Error: ") and words in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert "never written" not in "\n".join(lines(home))
    r = invoke(home, "project", "--list", "--json", env_extra=here(plain))
    assert json.loads(r.stdout) == {"projects": [{"key": BILLING, "name": "billing", "facts": 2}]}


def test_a_wrong_setting_is_a_warning_and_the_fact_is_captured_as_auto(home, projects):
    billing, _, _ = projects
    r = capture(home, billing, "[technical] Still written", SUZENT_SCOPE="sideways")
    assert r.returncode == 0 and "capture.scope must be one of auto, global, project" in r.stderr
    assert lines(home) == [f"- [technical] Still written `project:{BILLING}`"]


def test_the_fast_path_process_scopes_by_its_working_directory(home, projects):
    billing, _, _ = projects
    proc = subprocess.run([sys.executable, "-m", "suzent_cli", "capture", "--fact", "[technical] Fast path fact"],
                          capture_output=True, text=True, timeout=120, cwd=billing,
                          env=cli_env(home, **HASH_ENV, SUZENT_SCOPE=None, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr
    assert lines(home) == [f"- [technical] Fast path fact `project:{BILLING}`"]


def test_every_worktree_and_every_clone_of_a_repository_share_its_key(tmp_path):
    main = repo(tmp_path / "main")
    (main / "f").write_text("x")
    git("add", "f", cwd=main)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    assert session_project(tmp_path / "wt").key == session_project(main / ".").key == f"git:{main}"
    https = repo(tmp_path / "https", "https://user:tok@GitHub.com/acme/billing/")
    assert session_project(https).key == BILLING and "tok" not in session_project(https).why


def test_a_scratch_session_takes_the_project_its_transcript_started_in(home, projects, tmp_path):
    billing, _, _ = projects
    scratch = tmp_path / "scratch-agent"  # under the temp folder and no repository: a subagent's scratch dir
    scratch.mkdir()
    t = Transcript(tmp_path / "session.jsonl")
    t.turn("Our staging database is Postgres 16 on Hetzner.", "Noted.")
    t.path.write_text(t.path.read_text().replace("/work/proj", str(billing)))
    assert session_project(scratch, t.path).key == BILLING
    assert session_project(scratch, tmp_path / "missing.jsonl").key == f"dir:{scratch}"  # no transcript: itself
    assert session_project(billing, t.path).key == BILLING


def test_a_nul_byte_in_a_cwd_names_no_project_and_never_stops_the_recall_hook(home, projects, tmp_path):
    # a junk payload or transcript line: the recall hook was skipped whole ("ValueError: embedded null byte"), so
    # the prompt got not even the person's memories
    billing, _, _ = projects
    scratch = tmp_path / "scratch-nul"
    scratch.mkdir()
    transcript = tmp_path / "nul.jsonl"
    transcript.write_text(json.dumps({"cwd": "/x\0y"}) + "\n" + json.dumps({"cwd": str(billing)}) + "\n")
    assert session_project(f"{billing}\0x") is None
    assert session_project(scratch, transcript).key == BILLING  # the junk line is passed over
    assert capture(home, tmp_path, "[preference] Prefers tea over coffee").returncode == 0
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "Does the user prefer tea or coffee?",
                          "cwd": f"{billing}\0x", "session_id": "s-nul"})
    r = invoke(home, "recall", "--from", "claude-code", input=payload, env_extra=here(tmp_path))
    assert r.returncode == 0 and "skipped" not in r.stderr, r.stderr
    assert "Prefers tea over coffee" in r.stdout


def test_the_capture_hook_scopes_by_the_payloads_cwd(tmp_path, projects):
    from suzent_cli.hooks.capture import capture_payload
    from suzent_cli.hooks.transcript import Payload

    billing, _, _ = projects
    settings = settings_at(tmp_path / "home", env=HASH_ENV)
    t = Transcript(tmp_path / "session.jsonl")
    t.turn("Our CI runs on Woodpecker and we deploy to Hetzner.", "Noted.")
    t.turn("Thanks.", "Anytime.")
    out = capture_payload(settings, Payload("s1", str(t.path), "SessionEnd", str(billing)))
    assert out.facts >= 1
    tagged = [ln for ln in lines(tmp_path / "home") if "Woodpecker" in ln]
    assert tagged and all(ln.endswith(f"`project:{BILLING}`") for ln in tagged), tagged


# --- recall ------------------------------------------------------------------------------------------------------

@pytest.fixture
def two_projects(home, projects):
    """The issue's new-user case: billing holds Postgres 16 on Hetzner and Woodpecker CI; tax-client holds its own
    database; the person's facts are everyone's."""
    billing, tax, plain = projects
    assert capture(home, billing, "[technical] The database is Postgres 16 on Hetzner",
                   "[technical] CI runs on Woodpecker").returncode == 0
    assert capture(home, tax, "[technical] The database is SQLite in a single file").returncode == 0
    assert capture(home, plain, "[preference] Prefers small pull requests for CI changes").returncode == 0
    return billing, tax, plain


def _contents(hits: list[dict]) -> list[str]:
    return [h["content"] for h in hits]


def _isolated(home: Path, billing: Path, tax: Path) -> None:
    q = "Which database and CI should this project use?"
    in_tax = _contents(recall_json(home, tax, q))
    assert "The database is SQLite in a single file" in in_tax and \
        "Prefers small pull requests for CI changes" in in_tax
    assert not any("Postgres" in c or "Woodpecker" in c for c in in_tax), in_tax
    in_billing = recall_json(home, billing, q)
    assert "CI runs on Woodpecker" in _contents(in_billing) and not any("SQLite" in c for c in _contents(in_billing))
    assert {h["scope"] for h in in_billing} == {BILLING, PERSON}
    every = recall_json(home, tax, q, "--all-projects")
    assert {"CI runs on Woodpecker", "The database is SQLite in a single file"} <= set(_contents(every))
    other = recall_json(home, tax, q, "--project", "billing")
    assert "CI runs on Woodpecker" in _contents(other) and not any("SQLite" in c for c in _contents(other))


def test_recall_is_isolated_before_indexing_through_the_pending_lines(home, two_projects):
    billing, tax, _ = two_projects
    _isolated(home, billing, tax)


def test_recall_is_isolated_from_the_index_cold(home, two_projects):
    billing, tax, _ = two_projects
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    _isolated(home, billing, tax)
    r = invoke(home, "recall", "Woodpecker", "--mode", "fts", "--all-projects", env_extra=here(tax))
    assert "project github.com/acme/billing" in r.stdout  # a hit of another project says whose it is


def test_the_recall_hook_takes_the_project_from_the_payloads_cwd(home, two_projects):
    billing, tax, _ = two_projects
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    for cwd, present, absent in ((tax, "SQLite", "Postgres"), (billing, "Postgres", "SQLite")):
        payload = json.dumps({"session_id": "s", "transcript_path": "/nonexistent", "cwd": str(cwd),
                              "hook_event_name": "UserPromptSubmit",
                              "prompt": "Which database and CI should this project use?"})
        r = invoke(home, "recall", "--from", "claude-code", "--timeout", "60", input=payload,
                   env_extra=HASH_ENV | AUTO)
        context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        assert present in context and absent not in context and (cwd == billing or "Woodpecker" not in context)


def test_the_resident_path_masks_before_ranking_and_answers_as_lance_prefilters(home, two_projects):
    from suzent_cli.index.store import ReadStore
    from suzent_cli.recall import Filters, search

    billing, tax, _ = two_projects
    for i in range(30):  # other projects' rows that outrank in every run if they were not masked
        assert capture(home, billing, f"[technical] database CI database CI note {i}").returncode == 0
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    settings = settings_at(home, env=HASH_ENV)
    from suzent_cli.index.embed import load_embedder

    embedder = load_embedder("hash:64")
    lance = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    resident = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    assert resident.keep_resident(wait=True)
    scopes = ("", f"git:{tax}")
    for store in (lance, resident):
        for mode in ("hybrid", "fts", "vector"):
            hits = search(store, embedder, "which database and CI", mode=mode, limit=5, filters=Filters(scopes=scopes))
            assert hits and all(h.scope in scopes for h in hits), (mode, [h.content for h in hits])
    for column in ("content", "search_text"):
        a = [(r["id"], round(r["_score"], 4)) for r in lance.fts_search("database CI", 10, column=column,
                                                                        scopes=scopes)]
        b = [(r["id"], round(r["_score"], 4)) for r in resident.fts_search("database CI", 10, column=column,
                                                                           scopes=scopes)]
        assert a == b and a
    vector = embedder.encode(["database CI"])[0]
    a = [r["id"] for r in lance.vector_search(vector, 10, scopes=scopes)]
    b = [r["id"] for r in resident.vector_search(vector, 10, scopes=scopes)]
    assert a == b and a


def test_mcp_recall_and_remember_carry_the_project(tmp_path, projects):
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    billing, tax, _ = projects
    warm = Warm(settings_at(tmp_path / "home", env=HASH_ENV))
    try:
        backend = LocalBackend(warm)
        backend.remember(facts=["[technical] CI runs on Woodpecker", "[preference] Likes tea"], project=str(billing))
        backend.remember(facts=["[technical] CI runs on GitHub Actions"], project=str(tax))
        in_tax = [h["content"] for h in backend.recall("CI runs", mode="fts", project=str(tax))["hits"]]
        assert in_tax[0] == "CI runs on GitHub Actions" and not any("Woodpecker" in c for c in in_tax), in_tax
        every = backend.recall("CI runs", mode="fts")["hits"]  # no project given (an HTTP client): every project
        assert {h["scope"] for h in every if "CI" in h["content"]} == {BILLING, f"git:{tax}"}
        assert [h["content"] for h in backend.recall("CI runs", mode="fts", project="*")["hits"]] == \
            [h["content"] for h in every]
        assert backend.recall("Likes tea", mode="fts", project="")["hits"][0]["scope"] == PERSON
        from suzent_cli.errors import InputInvalid

        with pytest.raises(InputInvalid, match="unknown project"):
            backend.recall("CI", mode="fts", project="nope")
        with pytest.raises(InputInvalid, match="every project"):
            backend.remember(facts=["[technical] x"], project="*")
    finally:
        warm.close()


def test_the_mcp_tools_default_to_the_working_directorys_project(tmp_path, projects):
    import anyio

    from suzent_cli.server.mcp_surface import build_mcp

    billing, _, _ = projects
    calls = []

    class Spy:
        def recall(self, query, **kwargs):
            calls.append(("recall", kwargs))
            return {"hits": [], "note": None}

        def remember(self, **kwargs):
            calls.append(("remember", kwargs))
            return {"outcomes": [], "captured": 0, "hidden": 0, "indexed": False, "warnings": []}

    mcp = build_mcp(Spy(), project=BILLING)
    anyio.run(mcp.call_tool, "recall", {"query": "CI"})
    anyio.run(mcp.call_tool, "recall", {"query": "CI", "project": "*"})
    anyio.run(mcp.call_tool, "remember", {"facts": ["[technical] x"]})
    assert [c[1].get("project") for c in calls] == [BILLING, "*", BILLING]
    calls.clear()
    anyio.run(build_mcp(Spy()).call_tool, "recall", {"query": "CI"})  # an HTTP client: no project is sent
    assert "project" not in calls[0][1]


# --- the index: scope column, migration ---------------------------------------------------------------------------

def test_an_index_built_before_scopes_keeps_working_and_is_migrated_in_place(home, projects):
    from suzent_cli.index.store import SCOPE_COLUMN, ReadStore, _lancedb

    billing, tax, _ = projects
    assert capture(home, tax, "[preference] Prefers tea", "[fact] Paddles a kayak").returncode == 0
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    index_dir = settings_at(home).paths.index_dir
    table = _lancedb().connect(str(index_dir)).open_table("archival_memories")
    table.drop_columns([SCOPE_COLUMN])  # the table as every suzent before issue 26 built it
    ids_before = set(ReadStore.open_existing(index_dir).ids_by_source()["archive:" + sorted(
        settings_at(home).paths.archive_dir.glob("*.md"))[0].name])
    assert not ReadStore.open_existing(index_dir).has_scope()
    assert set(_contents(recall_json(home, billing, "kayak tea"))) == {"Paddles a kayak", "Prefers tea"}
    assert capture(home, billing, "[technical] Woodpecker runs the kayak CI").returncode == 0
    r = invoke(home, "index", "--json", env_extra=HASH_ENV)
    assert r.returncode == 0 and json.loads(r.stdout)["embeddings"] == 1  # the old rows are not embedded again
    store = ReadStore.open_existing(index_dir)
    assert store.has_scope() and ids_before <= {i for s in store.ids_by_source().values() for i in s}
    assert store.scope_counts() == {"": 2, BILLING: 1}
    assert "Woodpecker runs the kayak CI" not in _contents(recall_json(home, tax, "kayak"))


def test_a_rows_id_covers_its_scope_and_a_persons_row_keeps_its_old_id():
    from suzent_cli.index.sources import Document

    base = dict(source="archive:2026-06-01.md", locator=5, content="x", embed_text="x", search_text="x",
                metadata={}, importance=0.5, created_at=None)
    person, scoped = Document(**base), Document(**base, scope=BILLING)
    assert person.id != scoped.id and Document(**base, scope=PERSON).id == person.id
    assert scope_of_tags(("revision", f"project:{BILLING}")) == BILLING


def test_relay_sends_the_clients_directory(tmp_path, monkeypatch):
    from suzent_cli.cli import relay

    monkeypatch.chdir(tmp_path)
    assert relay.sent_env({})["SUZENT_CWD"] == str(tmp_path)
    assert relay.sent_env({"SUZENT_CWD": "/elsewhere"})["SUZENT_CWD"] == "/elsewhere"
    line = relay.parse(["recall", "q", "--project", "billing", "--all-projects"])
    assert line is not None and line.argv == ["recall", "q", "--project=billing", "--all-projects"]
    assert relay.parse(["capture", "--fact", "x", "--global"]).argv[-1] == "--global"


def test_base64_payloads_carry_the_cwd_to_the_servers_hook_recall(tmp_path, projects):
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    billing, tax, _ = projects
    warm = Warm(settings_at(tmp_path / "home", env=HASH_ENV))
    try:
        backend = LocalBackend(warm)
        backend.remember(facts=["[technical] The database is Postgres 16 on Hetzner"], project=str(billing))
        backend.remember(facts=["[technical] The database is SQLite in one file"], project=str(tax))
        payload = json.dumps({"session_id": "s", "transcript_path": "/x", "cwd": str(tax),
                              "hook_event_name": "UserPromptSubmit", "prompt": "Which database should this project use?"})
        out = backend.hook_recall(payload_b64=base64.b64encode(payload.encode()).decode(), mode="fts")
        assert "SQLite" in out["output"] and "Postgres" not in out["output"]
    finally:
        warm.close()


def test_newer_first_never_pairs_rows_of_two_projects():
    from types import SimpleNamespace

    from suzent_cli.vault.supersede import prefer_newer

    old = SimpleNamespace(text="The database is Postgres 14", date="2026-05-01", scope=BILLING)
    new_other = SimpleNamespace(text="The database is Postgres 16", date="2026-06-01", scope="git:/src/tax")
    new_same = SimpleNamespace(text="The database is Postgres 16", date="2026-06-01", scope=BILLING)
    assert prefer_newer([old, new_other]) == [old, new_other]  # another project's newer fact replaces nothing
    assert prefer_newer([old, new_same]) == [new_same, old]


def test_a_vault_pages_project_frontmatter_is_its_rows_scope(home, projects):
    from suzent_cli.index.store import ReadStore

    billing, tax, _ = projects
    settings = settings_at(home)
    page = settings.paths.vault_dir / "1_Projects" / "billing" / "Stack.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"---\ntitle: Stack\nproject: {BILLING}\n---\n# Stack\n\n## Claims\n\n"
                    "- The billing database is Postgres 16 on Hetzner\n", encoding="utf-8")
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    assert ReadStore.open_existing(settings.paths.index_dir).scope_counts().get(BILLING, 0) >= 1
    assert any("Postgres" in c for c in _contents(recall_json(home, billing, "billing database Postgres")))
    assert not any("Postgres" in c for c in _contents(recall_json(home, tax, "billing database Postgres")))


def test_the_walk_finds_the_repository_git_finds_without_running_git(tmp_path):
    from suzent_cli.scope import _discover, _git

    main = repo(tmp_path / "main")
    (main / "a" / "b").mkdir(parents=True)
    (main / "f").write_text("x")
    git("add", "f", cwd=main)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    git("init", "-q", "--bare", str(tmp_path / "bare.git"), cwd=tmp_path)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(main), "sub", cwd=main)
    plain = tmp_path / "plain"
    plain.mkdir()
    for where in (main, main / "a" / "b", tmp_path / "wt", main / ".git", tmp_path / "bare.git", main / "sub",
                  plain):
        told = _git(where, "rev-parse", "--path-format=absolute", "--git-common-dir")
        found = _discover(where)
        assert (str(found) if found else None) == (str(Path(told).resolve()) if told else None), where


def test_a_kept_store_follows_the_migration_and_keeps_its_resident_copy(home, projects):
    from suzent_cli.index.store import SCOPE_COLUMN, ReadStore, _lancedb
    from suzent_cli.recall import Filters, search

    billing, tax, _ = projects
    assert capture(home, tax, "[preference] Prefers tea", "[fact] Paddles a kayak").returncode == 0
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    index_dir = settings_at(home).paths.index_dir
    _lancedb().connect(str(index_dir)).open_table("archival_memories").drop_columns([SCOPE_COLUMN])
    store = ReadStore.open_existing(index_dir)  # a warm server's, opened on the table before scopes
    assert store.keep_resident(wait=True)
    assert capture(home, billing, "[technical] Kayak club CI runs on Woodpecker").returncode == 0
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0  # migrates, then adds the project's row
    assert store.refresh() and store.has_scope()
    store.settle_resident(60)
    assert store.keep_resident(wait=True)  # the copy follows the new version (old segments: the person's rows)
    for scopes, woodpecker in (((PERSON, f"git:{tax}"), False), ((PERSON, BILLING), True)):
        hits = {h.content for h in search(store, None, "kayak", mode="fts", limit=5, filters=Filters(scopes=scopes))}
        assert "Paddles a kayak" in hits and ("Kayak club CI runs on Woodpecker" in hits) == woodpecker, hits


def test_hostile_inputs_are_one_line_errors_or_harmless(home, projects, tmp_path):
    import os

    billing, _, plain = projects
    # a key holding a quote, a percent sign and a space: written encoded, filtered exactly, no SQL breaks
    odd = "dir:/srv/o'neil 100%"
    assert capture(home, plain, "[technical] Odd key fact", extra=("--project", odd)).returncode == 0
    assert lines(home)[-1] == "- [technical] Odd key fact `project:dir:/srv/o'neil%20100%25`"
    assert invoke(home, "index", env_extra=HASH_ENV).returncode == 0
    assert _contents(recall_json(home, plain, "Odd key fact", "--project", odd)) == ["Odd key fact"]
    assert recall_json(home, plain, "Odd key fact") == []
    r = invoke(home, "recall", "x", "--project", "a", "--all-projects", env_extra=here(plain))
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "not both" in r.stderr
    # a scratch session whose transcript is a FIFO is not blocked on it
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    assert session_project(scratch, fifo).key == f"dir:{scratch}"
    # a .git file pointing at a directory that is no repository: git decides (here: not a repository)
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / ".git").write_text("gitdir: /nonexistent/place\n")
    assert session_project(fake).key == f"dir:{fake}"


def test_a_project_scoped_preference_stays_out_of_memory_md(home, projects):
    _, _, plain = projects
    assert capture(home, plain, "[preference] Prefers squash merges in billing",
                   extra=("--project", BILLING)).returncode == 0
    assert capture(home, plain, "[preference] Drinks green tea").returncode == 0
    memory = (settings_at(home).paths.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "Drinks green tea" in memory and "squash merges" not in memory


def test_a_projects_recalled_hit_is_logged_with_its_scope_and_kept_from_memory_md(home, projects):
    from suzent_cli.promote import recall_snippets
    from suzent_cli.vault.state import recall_snippets as every

    billing, _, _ = projects
    assert capture(home, billing, "[technical] CI runs on Woodpecker", "[preference] Likes tea").returncode == 0
    recall_json(home, billing, "Woodpecker tea")
    state = settings_at(home).paths.state_dir
    assert set(every(state)) == {"CI runs on Woodpecker", "Likes tea"}
    assert recall_snippets(state) == ["Likes tea"]  # what promote reads for the person's MEMORY.md


def test_another_projects_busy_day_never_crowds_out_this_ones_pending_lines(home, projects, monkeypatch):
    from suzent_cli.index import pending

    billing, tax, _ = projects
    monkeypatch.setattr(pending, "MAX_ROWS", 5)
    assert capture(home, tax, "[technical] The tax database is SQLite").returncode == 0
    assert capture(home, billing, *[f"[technical] Billing note {i}" for i in range(10)]).returncode == 0
    assert _contents(recall_json(home, tax, "tax database SQLite")) == ["The tax database is SQLite"]
