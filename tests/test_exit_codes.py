"""One table of exit codes for every command; `--json` on every command; plain text when piped; `NO_COLOR`.

The command list is read from the typer app, so a command added later is checked too: it must take `--json`,
have an `Example:` in its --help, and have an entry in JSON_ARGS (how to run it on the small home below). Commands
run in-process (conftest.invoke); `NO_COLOR` on a real terminal is in integration/test_terminal_colour.py.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re

import pytest
import typer.main

import suzent_cli
from conftest import HASH_ENV, REPO, invoke
from suzent_cli import errors
from suzent_cli.cli.app import app
from suzent_cli.errors import CODES, EXIT_CODES

ENV = HASH_ENV | {"SUZENT_NOW": "2026-06-10T12:00"}

# How to run each command on the small home (its arguments besides --json), and the exit codes it may return there.
JSON_ARGS: dict[str, tuple[tuple[str, ...], set[int]]] = {
    "init": ((), {0}),
    "paths": ((), {0}),
    "project": ((), {0}),
    "config show": ((), {0}),
    "config path": ((), {0}),
    "capture": (("--fact", "[preference] Drinks oolong tea every morning"), {0}),
    "index": ((), {0}),
    "recall": (("oolong tea",), {0}),
    "status": ((), {0}),
    "forget": (("Lives in Lisbon", "--dry-run"), {0}),
    "verify": ((), {0, 7}),
    "verify-fact": (("Drinks oolong tea every morning", "--by", "ana"), {0}),
    "promote": (("--engine", "offline"), {0}),
    "reconcile": ((), {0}),
    "retire-legacy": ((), {0}),
    "dry-run": (("--engine", "rules"), {0, 4}),
    "dream": (("--engine", "rules"), {0, 4}),
    "lint": (("--engine", "rules"), {0}),
    "run": (("--engine", "rules"), {0}),
    "loop": (("--engine", "rules", "--passes", "1"), {0}),
    "serve": (("--print-config",), {0}),
    "import": (("claude-md", "--dry-run"), {0}),
    "export": ((), {0}),
    "sync": (("--fold-conflicts",), {0}),
}


# Commands whose stdout is a protocol, not a report: no --json (their refusals still use the table's codes).
NO_JSON = {"mcp": "stdout carries only the MCP protocol (tests/integration/test_mcp_stdio.py checks its exits)"}


def walk(command, path=()):
    """``(path, command)`` for every leaf command of the click tree (``("config", "show")``), groups first."""
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if getattr(sub, "commands", None):
            yield (*path, name), sub
            yield from walk(sub, (*path, name))
        else:
            yield (*path, name), sub


ROOT = typer.main.get_command(app)
ALL = [" ".join(p) for p, _ in walk(ROOT)]
LEAVES = [" ".join(p) for p, c in walk(ROOT) if not getattr(c, "commands", None)]
COMMANDS = dict((" ".join(p), c) for p, c in walk(ROOT))


# --- the table ------------------------------------------------------------------------------------------------

def test_the_table_is_well_formed():
    codes = [c for c, _, _ in EXIT_CODES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    for code, name, meaning in EXIT_CODES:
        assert getattr(errors, name) == code and meaning and "|" not in meaning
    assert errors.name_of(4) == "IDLE"


def test_docs_table_is_the_module_table():
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [tuple(c.strip() for c in m.groups())
            for m in re.finditer(r"^\| `(\d+)` \|([^|]+)\|([^|]+)\|\s*$", section, re.M)]
    assert rows == [(str(code), name, meaning) for code, name, meaning in EXIT_CODES], \
        "docs/cli.md's Exit codes table differs from suzent_cli/errors.py"


def test_man_pages_carry_the_table():
    page = (REPO / "man" / "suzent.1").read_text(encoding="utf-8")
    status = page.split(".SH EXIT STATUS", 1)[1]
    for code, name, _ in EXIT_CODES:
        assert f".B {code}\n{name}:" in status


def _all_modules():
    for info in pkgutil.walk_packages(suzent_cli.__path__, "suzent_cli."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def test_every_error_class_exits_with_a_code_of_the_table():
    _all_modules()  # error classes defined anywhere in the package
    seen, todo = [], [errors.SuzentError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo += cls.__subclasses__()
    assert len(seen) > 10
    for cls in seen:
        assert cls.exit_code in CODES, f"{cls.__module__}.{cls.__name__}.exit_code = {cls.exit_code}"


def test_dream_outcomes_and_literal_exits_are_in_the_table():
    from suzent_cli.cli.dryrun import EXIT_LIVE_CHANGED
    from suzent_cli.dream.runner import EXIT_BUSY, EXIT_FAILED, EXIT_IDLE, EXIT_RAN, TickResult

    assert {EXIT_BUSY, EXIT_FAILED, EXIT_IDLE, EXIT_RAN, EXIT_LIVE_CHANGED} <= CODES
    for outcome in ("idle", "busy", "ingested", "unproductive", "skipped", "linted", "lint_failed"):
        assert TickResult(outcome).exit_code in CODES
    literal = re.compile(r"(?:typer\.Exit|sys\.exit|SystemExit)\((\d+)\)")
    for path in (REPO / "suzent_cli").rglob("*.py"):
        for m in literal.finditer(path.read_text(encoding="utf-8")):
            assert int(m.group(1)) in CODES, f"{path.relative_to(REPO)}: exit {m.group(1)} is not in the table"


# --- every command: --json, Example:, plain when piped --------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_every_command_help_has_an_example(name):
    r = invoke(REPO / "no-such-home", *name.split(), "--help")
    assert r.returncode == 0, r.stderr
    assert "Example:" in r.stdout, f"`suzent {name} --help` has no Example: line"
    assert "\x1b" not in r.stdout + r.stderr


@pytest.mark.parametrize("name", LEAVES)
def test_every_command_takes_json_and_is_exercised(name):
    if name in NO_JSON:
        pytest.skip(NO_JSON[name])
    opts = {o for p in COMMANDS[name].params for o in getattr(p, "opts", [])}
    assert "--json" in opts, f"`suzent {name}` has no --json"
    assert name in JSON_ARGS, f"add `suzent {name}`'s arguments to JSON_ARGS in {__file__}"


def build_small_home(home):
    """``home`` initialised, with two past daily logs (a dream is due with --force only) and an index."""
    steps = [("init",),
             ("capture", "--date", "2026-06-01", "--fact", "[personal] Lives in Lisbon", "--fact", "[preference] Likes tea"),
             ("capture", "--date", "2026-06-02", "--fact", "[personal] Works at ACME"),
             ("capture", "--fact", "[goal] Run a marathon `sport`"),
             ("index",)]
    for args in steps:
        r = invoke(home, *args, env_extra=ENV)
        assert r.returncode == 0, (args, r.stderr)
    return home


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    """An initialised home with two past daily logs (a dream is due with --force only) and an index."""
    return build_small_home(tmp_path_factory.mktemp("exit-codes") / "home")


def _run(home, name, *extra, env=None):
    """Run ``suzent NAME ARGS EXTRA`` piped; ``env`` on top of conftest's (which sets NO_COLOR=1)."""
    args, allowed = JSON_ARGS[name]
    proc = invoke(home, *name.split(), *args, *extra, env_extra=ENV | (env or {}))
    return proc, allowed


@pytest.mark.parametrize("name", [n for n in JSON_ARGS if n in LEAVES])
def test_json_is_one_document_and_the_exit_code_is_in_the_table(small_home, name):
    r, allowed = _run(small_home, name, "--json")
    assert r.returncode in CODES and r.returncode in allowed, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "\x1b" not in r.stderr
    data = json.loads(r.stdout)  # exactly one document: extra data would raise
    assert isinstance(data, dict) and data


@pytest.mark.parametrize("name", [n for n in JSON_ARGS if n in LEAVES])
def test_piped_output_has_no_ansi_escape(small_home, name):
    """Piped is plain even without NO_COLOR (the --json runs above have NO_COLOR=1 and are checked too)."""
    r, allowed = _run(small_home, name, env={"NO_COLOR": None})
    assert r.returncode in allowed, (r.returncode, r.stderr)
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr, name
    assert r.stdout.strip(), f"`suzent {name}` printed nothing"


@pytest.mark.parametrize("args, message", [
    (("recall", "tea", "--limit", "99999999999999999999"), "Error: --limit must be at most 1,000, got 99999999999999999999"),
    (("recall", "tea", "--limit", "1001"), "Error: --limit must be at most 1,000, got 1001"),
    (("recall", "\udcff\udcfe"), "Error: the query is not valid UTF-8 text"),  # bytes ff fe on the command line
    # a trial: forget went ahead and echoed '\udcff' in its message (no stored fact can hold such bytes)
    (("forget", "\udcff", "--dry-run"), "Error: the text is not valid UTF-8"),
    (("forget", "caf\udce9"), "Error: the text is not valid UTF-8"),
])
def test_recall_input_no_index_can_take_is_refused_as_input(tmp_path, args, message):
    """A limit past any index's integer range was reported as a broken index (with advice to rebuild it), and a
    query of undecodable bytes as a tokenizer's internal error: both are the caller's input, exit 2."""
    home = tmp_path / "home"
    assert invoke(home, "capture", "--fact", "[preference] Drinks green tea", env_extra=HASH_ENV).returncode == 0
    r = invoke(home, *args, env_extra=HASH_ENV)
    assert (r.returncode, r.stderr.strip()) == (2, message)
