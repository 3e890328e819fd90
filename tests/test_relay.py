"""The CLI's relay to a running server, in-process: which command lines it relays (suzent_cli.cli.relay.parse), what
it does when the server declines, fails or stops mid-request (a stand-in server, tests/fake_server.py, on the home's
socket), the server's runner (suzent_cli.cli.relayed.run) refusing what it cannot run as the client would, the
indexer's file lock between threads of one process, and the weight check a warm process does not repeat.

The real server process and the byte-for-byte comparisons are in tests/integration/test_relay_process.py."""

from __future__ import annotations

import base64
import io
import os
import sys
import threading
from pathlib import Path

import pytest
from fake_server import CLOSE, FakeServer

from suzent_cli.cli import relay, relayed
from suzent_cli.cli.relay import Line, parse
from suzent_cli.errors import EmbedderUnavailable, InputInvalid, LockTimeout
from suzent_cli.server import paths

# --- which command lines are relayed ----------------------------------------------------------------------------


@pytest.mark.parametrize("argv, command, sent, writes", [
    ("recall tea", "recall", "recall tea", False),
    ("recall tea --json --limit 3 --mode=fts", "recall", "recall tea --json --limit=3 --mode=fts", False),
    ("recall -n 2 --explain -- -tea", "recall", "recall -n=2 --explain -- -tea", False),
    ("--now 2026-06-01 status --json --no-index", "status", "--now=2026-06-01 status --json --no-index", False),
    ("paths", "paths", "paths", False),
    ("index --json --full", "index", "index --json --full", True),
    ("capture --fact x --fact=y --index --session s --date 2026-06-01 --time 09:00", "capture",
     "capture --fact=x --fact=y --index --session=s --date=2026-06-01 --time=09:00", True),
    ("forget Lives --dry-run", "forget", "forget Lives --dry-run", False),
    ("forget --id abc", "forget", "forget --id=abc", True),
    ("--home /h --vault-dir v recall tea", "recall", "--home=/h --vault-dir=v recall tea", False),
    ("recall --limit -1 tea", "recall", "recall --limit=-1 tea", False),  # a bad value: the server's run says so
    ("verify --json", "verify", "verify --json", False),
    ("verify --repair", "verify", "verify --repair", True),  # its reindex runs in the server: one index writer
])
def test_relayable_lines(argv, command, sent, writes):
    line = parse(argv.split())
    assert (line.command, line.argv, line.writes) == (command, sent.split(), writes)


def test_a_relative_home_is_sent_absolute_against_this_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = parse(["--home", "mem", "status"])
    assert line.argv == [f"--home={tmp_path / 'mem'}", "status"] and line.home == "mem"
    env = relay.sent_env({"SUZENT_HOME": "rel/home", "SUZENT_DATA_DIR": "", "OTHER": "x"})
    assert env == {"SUZENT_HOME": str(tmp_path / "rel" / "home"), "SUZENT_DATA_DIR": "", "OTHER": "x",
                   "SUZENT_CWD": str(tmp_path)}  # the client's directory: a recall's or capture's project


@pytest.mark.parametrize("argv", [
    "", "--version", "--help", "recall --help", "recall -h tea", "status --json=1",
    "capture", "capture --json",  # no --fact: nothing to relay (the cold run says what is missing)
    "capture --fact x --facts-from -", "capture --facts-from f.txt", "capture --turn-from -",  # stdin or a file
    "capture --fact x --extractor offline", "capture --from claude-code", "recall --from claude-code",  # the hooks
    "recall tea --model hash:64", "index --model hash:64",  # a model the server may not hold, or a path
    "recall tea more", "status extra",  # an extra argument
    "recall -n2 tea", "recall -n=2 tea",  # short forms click reads its own way
    "serve", "mcp", "init", "dream", "run", "loop", "config show", "verify-fact x", "lint", "promote",
    "verify --reseal 2026-06-01.md",  # a person's act: cold
    "--today 2026-06-01 status", "--home", "recall --limit",  # a missing value
    "status --home /h",  # a root option after the command
])
def test_anything_else_is_not_relayed(argv):
    assert parse(argv.split()) is None


@pytest.mark.parametrize("env, off", [({}, False), ({"SUZENT_NO_SERVER": "1"}, True), ({"SUZENT_NO_SERVER": "0"}, False),
                                      ({"SUZENT_NO_SERVER": ""}, False), ({"SUZENT_DEBUG": "1"}, True)])
def test_the_cold_path_can_be_forced(env, off):
    assert relay.disabled(env) is off


def test_the_relay_does_not_import_the_cli_framework():
    source = (Path(relay.__file__)).read_text(encoding="utf-8")
    assert "import typer" not in source and "from rich" not in source and "import rich" not in source


# --- against a stand-in server ----------------------------------------------------------------------------------


def _answer(stdout: bytes = b"", stderr: bytes = b"", code: int = 0) -> dict:
    return {"ran": True, "exit": code, "stdout_b64": base64.b64encode(stdout).decode(),
            "stderr_b64": base64.b64encode(stderr).decode()}


class _Captured:
    """This process's stdout/stderr as byte buffers for the relay's writes."""

    def __init__(self, monkeypatch):
        self.out, self.err = io.BytesIO(), io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(self.out, encoding="utf-8", write_through=True))
        monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(self.err, encoding="utf-8", write_through=True))


@pytest.fixture(autouse=True)
def _no_server_snapshot(monkeypatch):
    """The runner compares a client's process-wide variables with the server's snapshot, or with ``os.environ`` when
    this process never started a server. A server started in-process by an earlier test of the same session
    (tests/test_serve_http.py) leaves its snapshot behind, taken under that test's HOME: forget it, so these tests do
    not depend on which ran before them."""
    monkeypatch.setattr(relayed, "_started_env", None)


@pytest.fixture
def served(home, monkeypatch):
    """``served(answer)``: a stand-in server on ``home``'s socket answering ``answer(op, args)``."""
    monkeypatch.setenv("SUZENT_HOME", str(home))
    monkeypatch.delenv("SUZENT_NO_SERVER", raising=False)
    monkeypatch.delenv("SUZENT_DEBUG", raising=False)
    servers = []

    def start(answer):
        servers.append(FakeServer(paths.socket_path(home), answer).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def test_the_answer_is_written_byte_for_byte_and_its_exit_code_returned(served, monkeypatch):
    fake = served(lambda op, args: _answer(b"1\tline \xe2\x86\x92\n", b"warning: x\n", 2))
    got = _Captured(monkeypatch)
    assert relay.attempt(["recall", "tea", "--json"]) == 2
    assert (got.out.getvalue(), got.err.getvalue()) == (b"1\tline \xe2\x86\x92\n", b"warning: x\n")
    (op, args), = fake.calls
    assert op == "cli" and args["argv"] == ["recall", "tea", "--json"] and args["env"]["SUZENT_HOME"]
    assert set(args) == {"argv", "env", "stdout_tty", "stderr_tty", "terminal_size", "stdout_encoding",
                         "stderr_encoding", "version"}


def test_no_server_means_the_cold_path(home, monkeypatch):
    monkeypatch.setenv("SUZENT_HOME", str(home))
    assert relay.attempt(["status"]) is None


@pytest.mark.parametrize("argv", [["recall", "tea"], ["capture", "--fact", "x"]])
def test_a_declined_or_refused_request_runs_cold_even_for_a_write(served, argv):
    served(lambda op, args: {"ran": False, "why": "the client's HOME differs from the server's"})
    assert relay.attempt(argv) is None


@pytest.mark.parametrize("argv", [["recall", "tea"], ["capture", "--fact", "x"]])
def test_an_older_server_without_the_op_means_the_cold_path(served, argv):
    def answer(op, args):
        raise InputInvalid(f"unknown operation {op!r}")

    served(answer)
    assert relay.attempt(argv) is None


@pytest.mark.parametrize("argv", [["recall", "tea"], ["status"], ["paths"], ["forget", "x", "--dry-run"]])
def test_a_read_whose_server_stops_mid_request_runs_cold(served, argv, monkeypatch):
    served(lambda op, args: CLOSE)
    got = _Captured(monkeypatch)
    assert relay.attempt(argv) is None
    assert got.out.getvalue() == got.err.getvalue() == b""


@pytest.mark.parametrize("argv", [["capture", "--fact", "x"], ["index"], ["forget", "x"]])
def test_a_write_whose_server_stops_mid_request_is_not_redone(served, argv, monkeypatch):
    served(lambda op, args: CLOSE)
    got = _Captured(monkeypatch)
    assert relay.attempt(argv) == 1
    message = got.err.getvalue().decode()
    assert message.startswith("Error: the server stopped mid-request (") and message.count("\n") == 1
    assert f"`suzent {argv[0]}` may or may not have run: check with suzent status" in message
    assert got.out.getvalue() == b""


def test_a_write_without_an_answer_in_time_is_not_redone(served, monkeypatch):
    release = threading.Event()
    served(lambda op, args: release.wait(5) and _answer())
    monkeypatch.setattr(relay, "RELAY_TIMEOUT", 0.3)
    got = _Captured(monkeypatch)
    try:
        assert relay.attempt(["capture", "--fact", "x"]) == 1
    finally:
        release.set()
    assert b"did not answer cli within 0.3 s" in got.err.getvalue()


@pytest.mark.parametrize("argv", [["capture", "--fact", "x", "--index"], ["forget", "caf\udce9"], ["recall", "tea"]])
def test_bytes_that_are_not_utf8_in_the_environment_or_arguments_go_cold_and_nothing_is_sent(served, argv,
                                                                                             monkeypatch):
    """A trial found a relayed write failing with 'the server stopped mid-request' when any variable (OLDPWD after
    a cd into a Latin-1 folder) held bytes that are not UTF-8: the request's JSON could not be encoded, before
    anything was sent. Now such a line runs cold (which reads those bytes as it always has), writes included."""
    fake = served(lambda op, args: _answer())
    monkeypatch.setenv("OLDPWD", "/tmp/caf\udce9")  # what os.environ holds for the byte 0xE9 (surrogate escape)
    got = _Captured(monkeypatch)
    assert relay.attempt(argv) is None
    assert fake.calls == [] and got.err.getvalue() == b""


@pytest.mark.parametrize("argv", [["capture", "--fact", "x", "--index"], ["status"]])
def test_a_server_that_does_not_answer_the_liveness_probe_is_not_sent_the_command(home, monkeypatch, argv):
    """A stopped (SIGSTOP) or wedged server still accepts connections; the relay waited on it for hours
    (RELAY_TIMEOUT), so even `suzent status` hung. The probe (POST /v1/server) fails, the line runs cold."""
    monkeypatch.setenv("SUZENT_HOME", str(home))
    monkeypatch.delenv("SUZENT_NO_SERVER", raising=False)
    with FakeServer(paths.socket_path(home), lambda op, args: _answer(), probe=CLOSE) as fake:
        assert relay.attempt(argv) is None
    assert fake.probes == 1 and fake.calls == []


def test_a_server_mid_index_write_still_runs_a_relayed_command():
    """An index write in the server points TMPDIR at <index>/.tmp for lance while it runs (store.temp_dir): a
    trial saw every relayed command declined in that window ('the client's TMPDIR differs'), i.e. a cold recall
    right after each capture. The server compares with its own values from its start."""
    env = dict(os.environ)
    saved = relayed._started_env
    relayed.snapshot_process_env()
    try:
        os.environ["TMPDIR"] = "/elsewhere/.tmp"  # as store.temp_dir does during a write
        answer = relayed.run(["paths", "--json"], env)
    finally:
        if env.get("TMPDIR") is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = env["TMPDIR"]
        relayed._started_env = saved
    assert answer["ran"] is True and answer["exit"] == 0, answer


def test_a_garbled_answer_to_a_write_is_an_error_and_to_a_read_the_cold_path(served, monkeypatch):
    served(lambda op, args: {"ran": True, "exit": "x"})
    got = _Captured(monkeypatch)
    assert relay.attempt(["recall", "tea"]) is None
    assert relay.attempt(["capture", "--fact", "x"]) == 1
    assert got.err.getvalue().startswith(b"Error: the server stopped mid-request")


def test_ctrl_c_while_waiting_exits_130(served, monkeypatch):
    served(lambda op, args: _answer())

    def interrupted(self, op, args=None, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("suzent_cli.server.client.RemoteBackend.call", interrupted)
    got = _Captured(monkeypatch)
    assert relay.attempt(["capture", "--fact", "x"]) == 130
    assert got.err.getvalue() == b"Interrupted.\n"


def test_suzent_no_server_never_asks_the_server(served, monkeypatch):
    fake = served(lambda op, args: _answer())
    monkeypatch.setenv("SUZENT_NO_SERVER", "1")
    assert relay.attempt(["status"]) is None and fake.calls == []


# --- the server's runner ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", relayed.PROCESS_ENV)
def test_the_runner_declines_a_client_whose_process_wide_variables_differ(name):
    env = dict(os.environ)
    env[name] = (env.get(name) or "") + "-other"
    answer = relayed.run(["status"], env)
    assert answer == {"ran": False, "why": f"the client's {name} differs from the server's"}


def test_the_runner_declines_a_client_of_another_version():
    answer = relayed.run(["status"], dict(os.environ), version="0.0.0-other")
    assert answer["ran"] is False and answer["why"].startswith("the client runs suzent 0.0.0-other, the server ")


@pytest.mark.parametrize("kwargs", [{"argv": "status"}, {"argv": [1]}, {"env": {"A": 1}}, {"env": []},
                                    {"terminal_size": [80]}, {"terminal_size": ["80", 25]},
                                    {"stdout_encoding": "no-such-codec"}])
def test_the_runner_refuses_arguments_of_the_wrong_shape(kwargs):
    args = {"argv": ["status"], "env": dict(os.environ), **kwargs}
    with pytest.raises(InputInvalid):
        relayed.run(**args)


# --- one process, several threads: the indexer's lock -------------------------------------------------------------


def test_the_indexers_file_lock_excludes_another_thread_of_the_same_process(tmp_path):
    """A relayed `index` runs in a server thread beside the server's own index worker: two lock objects on one path
    in two threads of one process must exclude each other, as two processes do."""
    from suzent_cli.files import locked

    lock = tmp_path / ".indexer.lock"
    held, release, seen = threading.Event(), threading.Event(), {}

    def holder():
        with locked(lock, timeout=5):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    try:
        with pytest.raises(LockTimeout):
            with locked(lock, timeout=0.2):
                seen["entered"] = True
    finally:
        release.set()
        thread.join()
    with locked(lock, timeout=5):  # free again once the other thread let go
        seen["after"] = True
    assert seen == {"after": True}


# --- the warm process's embedders -------------------------------------------------------------------------------


def test_a_weight_file_found_whole_is_not_hashed_again_until_it_changes(tmp_path, monkeypatch):
    from suzent_cli.index import embed

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    old = os.stat(weights).st_mtime_ns - 10 * embed.SETTLE_NS
    os.utime(weights, ns=(old, old))
    good = embed.sha256_file(weights)
    hashed = []
    monkeypatch.setattr(embed, "sha256_file", lambda p: hashed.append(p) or embed.hashlib.sha256(p.read_bytes()).hexdigest())
    monkeypatch.setattr(embed, "_VERIFIED", {})
    monkeypatch.setattr(embed, "SETTLE_NS", 0)  # the ctime of a file just made is young: trust it at once here
    embed.check_weights(weights, good, "reinstall")
    embed.check_weights(weights, good, "reinstall")
    assert len(hashed) == 1
    weights.write_bytes(b"altered")  # a changed file has another size, mtime or ctime: hashed again, refused
    with pytest.raises(EmbedderUnavailable, match="have sha256"):
        embed.check_weights(weights, good, "reinstall")
    assert len(hashed) == 2


def test_a_weight_file_younger_than_the_settle_time_is_hashed_every_time(tmp_path, monkeypatch):
    from suzent_cli.index import embed

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    hashed = []
    monkeypatch.setattr(embed, "sha256_file", lambda p: hashed.append(p) or embed.hashlib.sha256(p.read_bytes()).hexdigest())
    monkeypatch.setattr(embed, "_VERIFIED", {})
    good = embed.hashlib.sha256(b"weights").hexdigest()
    embed.check_weights(weights, good, "reinstall")
    embed.check_weights(weights, good, "reinstall")
    assert len(hashed) == 2


def test_a_sharing_process_gives_every_caller_the_same_embedder_per_model(monkeypatch):
    from suzent_cli.index import embed
    from suzent_cli.server.warm import _SharedEmbedder

    monkeypatch.setattr(embed, "_SHARED", {})
    monkeypatch.setattr(embed, "_share_wrap", None)
    assert embed.load_embedder("hash:64") is not embed.load_embedder("hash:64")  # a one-command process: its own
    embed.share_embedders(_SharedEmbedder)
    first = embed.load_embedder("hash:64")
    assert isinstance(first, _SharedEmbedder) and first.name == "hash:64"
    assert embed.lazy_embedder("hash:64") is first and embed.load_embedder("hash:64") is first
    assert embed.load_embedder("hash") is not first and embed.model_key("hash") == "hash:256"
    with pytest.raises(EmbedderUnavailable):
        embed.load_embedder("hash:x")
    assert "hash:x" not in embed._SHARED


def test_the_line_class_shows_itself():
    assert repr(Line("status", ["status"], None, False)) == "Line('status', ['status'], home=None, writes=False)"


# --- no server: the commands that would have used one start it -----------------------------------------------------

@pytest.mark.parametrize("argv, why", [
    ("recall tea", "suzent recall"), ("index", "suzent index"), ("capture --fact x", "suzent capture"),
    ("forget Lives --dry-run", "suzent forget"), ("status", None), ("paths", None),
])
def test_without_a_server_the_command_runs_here_and_starts_one_unless_it_only_looks(tmp_path, monkeypatch, argv, why):
    calls = []
    monkeypatch.setattr("suzent_cli.server.autostart.ensure", lambda home, *, why, env=None: calls.append((home, why)))
    home = tmp_path / "home"
    home.mkdir()
    assert relay.attempt(["--home", str(home), *argv.split()]) is None  # no server: the cold path runs it
    assert calls == ([] if why is None else [(home.absolute(), why)])


def test_inside_a_relayed_command_every_line_goes_through_the_request_consoles(monkeypatch):
    """The capture fast path's plain printer decides from this process's terminal and environment; inside a relayed
    command those are the server's, so it leaves every line to the request's consoles (built from the client's)."""
    import io as _io

    from suzent_cli.cli import plain, render

    monkeypatch.setattr(sys, "stdout", _io.StringIO())
    monkeypatch.setattr(sys, "stderr", _io.StringIO())
    assert plain._plain_streams({"out", "err"})
    console = render.request_console(_io.StringIO(), stderr=False, environ={"FORCE_COLOR": "1"}, terminal_size=None)
    with render.request_consoles(console, console):
        assert not plain._plain_streams({"out", "err"})
    assert plain._plain_streams({"out", "err"})
