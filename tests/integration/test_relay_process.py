"""The CLI through a running ``suzent serve`` (real processes, hash embedder): every relayable command line prints
what the cold one prints, byte for byte (stdout, stderr, exit code), with and without ``--json``, errors included;
a relayed write happens once; a server killed while a relayed write waits gives one clear error and no second
write; lines that are not relayable go cold; and the relaying client imports neither typer nor rich.

"Cold" is the same command line with ``SUZENT_NO_SERVER=1`` (the documented way to force it) beside the same server.
Each relayed run is checked to have gone through the server (its ``cli`` request count moves by one). Writes are
compared on twin homes (a copy made before the write, run cold with its own ``--home``): the outputs are equal once
the twin's path reads as the original's. Only live figures are masked: the server's uptime and request counts in
``status`` and an index pass's seconds."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from serve_process import DEADLINE, ready, start, stop

from conftest import HASH_ENV, REPO, cli_env, drain_pty, invoke, run_cli
from suzent_cli.cli.relayed import PROCESS_ENV
from suzent_cli.server import paths, runtime

SERVER_ENV: dict[str, str] = {}  # the server's environment (the fixture's)

NOW = {"SUZENT_NOW": "2026-06-20T12:00"}
ENV = HASH_ENV | NOW  # | {"HOME": the server's}, set by the server fixture (conftest gives each test its own HOME)
COLD = ENV | {"SUZENT_NO_SERVER": "1"}
FACTS = ("[preference] Prefers oat milk in coffee `drinks`", "[personal] Lives in Lisbon",
         "[goal] Wants to run a marathon in 2027", "[fact] Paddles a kayak on Sundays")

MOVED = (("2026-01-05", "I prefer dark mode in every editor"), ("2026-01-20", "I now prefer light mode"))


def pin_home() -> None:
    """Every process of this module (the server's, started now, and the clients') gets this test's ``HOME``: the
    server declines a client whose ``HOME`` differs from its own (suzent_cli.cli.relayed.PROCESS_ENV)."""
    ENV["HOME"] = COLD["HOME"] = os.environ["HOME"]


def cold(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    """``suzent ARGS`` the cold way (``SUZENT_NO_SERVER=1``) through the process entry point, run in this process
    (:func:`conftest.invoke`: what a process prints, tests/integration/test_invoke.py): the side compared with is
    the relayed one, which stays a real process; lancedb and pyarrow load once here instead of once a line."""
    from suzent_cli.cli.fasthook import main

    return invoke(home, *args, env_extra=COLD, entry=main, **kw)


def cli_requests(home: Path) -> int:
    state = runtime.server_state(home, timeout=60)
    return int(((state.get("requests") or {}).get("by_op") or {}).get("cli", 0))


# `suzent ARGS` as the console script runs it (suzent_cli.cli.fasthook.main), then a note in a side file of whether
# the CLI framework was imported: it was not if and only if the server ran the command.
PROBE = ("import os, sys\nfrom suzent_cli.cli.fasthook import main\ncode = main(sys.argv[1:])\n"
         "open(os.environ['RELAY_PROBE'], 'w').write(str('typer' in sys.modules))\nsys.exit(code)")


def relayed(home: Path, *args: str, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    """``suzent ARGS`` with the server up; fails unless the server ran it (it was asked once, and this process
    never imported typer: nothing ran here)."""
    assert all(cli_env(home, **ENV).get(k) == SERVER_ENV.get(k) for k in PROCESS_ENV)
    probe = home.parent / "relay-probe"
    before = cli_requests(home)
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=timeout,
                       env=cli_env(home, **ENV, RELAY_PROBE=str(probe)), cwd=REPO)
    assert cli_requests(home) == before + 1, f"the server was not asked: {args}"
    assert probe.read_text() == "False", f"run here, not by the server: {args}"
    return r


def same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess, mask=lambda text: text) -> None:
    assert (a.returncode, mask(a.stdout), mask(a.stderr)) == (b.returncode, mask(b.stdout), mask(b.stderr))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A home with a few facts, indexed, and its server (no chain, no watcher: nothing changes the home behind a
    comparison). Yields ``(home, proc)``."""
    home = tmp_path_factory.mktemp("relay") / "home"
    pin_home()
    assert cold(home, "init").returncode == 0
    r = cold(home, "capture", *[a for f in FACTS for a in ("--fact", f)])
    assert r.returncode == 0, r.stderr
    for day, fact in MOVED:  # the newer of two same-subject rows placed above the older (issue 27: shown scores)
        assert cold(home, "capture", "--date", day, "--fact", fact).returncode == 0
    assert cold(home, "index", timeout=DEADLINE).returncode == 0
    proc = start(home, "--no-chain", "--no-watch")  # its environment: cli_env(home, **HASH_ENV), this HOME
    SERVER_ENV.update(cli_env(home, **HASH_ENV))
    ready(home, proc)
    yield home, proc
    if proc.poll() is None:
        stop(proc)


def archive_of(home: Path) -> Path:
    from suzent_cli.config import resolve_settings

    return resolve_settings(home=home, env={}).paths.archive_dir


def twin(home: Path, tmp: Path) -> Path:
    """A copy of ``home`` (its server folder left out) to run the cold side of a write on."""
    copy = tmp / "twin"
    shutil.copytree(home, copy, ignore=shutil.ignore_patterns("server"), symlinks=True)
    return copy


READS = [
    ("recall", "oat milk"), ("recall", "oat milk", "--json"), ("recall", "oat milk", "--explain"),
    ("recall", "marathon", "--mode", "fts", "--limit", "2"), ("recall", "kayak", "--mode", "vector", "--json"),
    ("recall", "nothing of the sort xyzzy", "--mode", "fts"),
    ("recall", "prefer dark mode in every editor"), ("recall", "prefer dark mode in every editor", "--json", "--explain"),
    ("recall", ""), ("recall", "tea", "--limit", "0"), ("recall", "tea", "--mode", "semantic"),  # bad input
    ("recall", "tea", "--json", "--limit", "x"), ("recall",),  # click's own errors, the missing query
    ("paths",), ("paths", "--json"),
    ("forget", "Lives in Lisbon", "--dry-run"), ("forget", "Lives in Lisbon", "--dry-run", "--json"),
    ("forget", "lives somewhere else entirely", "--dry-run"), ("forget", "--id", "nope", "--dry-run"),
    ("forget", "--dry-run"),
    # a plain `capture --fact` line is answered by the capture fast path (no server needed, see below); with
    # --index it is the server's
    ("capture", "--fact", "x", "--date", "not-a-date", "--index"),
    ("capture", "--fact", "[pref] x", "--time", "25:99", "--index"),
    ("capture", "--fact", "x", "--bogus"),  # not relayable: an unknown option goes cold, checked below
]


@pytest.mark.parametrize("args", [a for a in READS if "--bogus" not in a], ids=" ".join)
def test_a_relayed_command_prints_what_the_cold_one_prints(server, args):
    home, _ = server
    same(relayed(home, *args), cold(home, *args))


def test_a_relayed_recall_shows_scores_in_its_order(server):
    """Issue 27: the newer row moved above the older one is shown with a score just above it, relayed as cold."""
    home, _ = server
    hits = json.loads(relayed(home, "recall", "prefer dark mode in every editor", "--json", "--explain").stdout)["hits"]
    assert hits[0]["content"] == "I now prefer light mode" and hits[0]["ranked_score"] < hits[1]["score"]
    assert all(a["score"] >= b["score"] for a, b in zip(hits, hits[1:], strict=False))


def _live(text: str) -> str:
    """The server's live figures masked: uptime, request counts, idle time."""
    text = re.sub(r"up \d+m \d+s", "up …", text)
    return re.sub(r"(?m)^requests .*$", "requests …", text)


def _live_json(text: str) -> str:
    data = json.loads(text)
    for key in ("uptime_s", "requests", "idle_s"):
        data["server"].pop(key, None)
    return json.dumps(data)


@pytest.mark.parametrize("args, mask", [(("status",), _live), (("status", "--no-index"), _live),
                                        (("status", "--json"), _live_json)], ids=["text", "no-index", "json"])
def test_status_relayed_is_status_cold(server, args, mask):
    home, _ = server
    a, b = relayed(home, *args), cold(home, *args)
    assert (a.returncode, a.stderr) == (b.returncode, b.stderr)
    assert mask(a.stdout) == mask(b.stdout)


def _seconds(text: str) -> str:
    text = re.sub(r"in \d+\.\d\ds", "in …s", text)
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": …', text)


@pytest.mark.parametrize("json_flag", [(), ("--json",)], ids=["text", "json"])
def test_a_relayed_capture_is_written_once_and_reads_as_the_cold_one(server, tmp_path, json_flag):
    home, _ = server
    copy = twin(home, tmp_path)
    fact = f"[preference] Likes green tea {len(json_flag)}"
    args = ("capture", "--fact", fact, "--fact", "[bad", "--session", "relay", "--index", *json_flag)
    up = relayed(home, *args)
    down = run_cli(copy, "--home", str(copy), *args, env_extra=COLD)
    same(up, down, mask=lambda text: _seconds(text.replace(str(copy), str(home))))
    assert up.returncode == 2  # the good line is captured, the bad one reported
    logs = sorted(archive_of(home).glob("*.md"))
    assert sum(p.read_text(encoding="utf-8").count(fact) for p in logs) == 1


def test_relayed_index_and_forget_read_as_the_cold_ones_and_change_the_same(server, tmp_path):
    home, _ = server
    fact = "[fact] Keeps bees on the roof"
    assert run_cli(home, "capture", "--fact", fact, env_extra=ENV).returncode == 0  # the capture fast path
    copy = twin(home, tmp_path)
    same_path = lambda text: _seconds(text.replace(str(copy), str(home)))  # noqa: E731
    for args in (("index", "--json"), ("index",), ("forget", "Keeps bees on the roof"),
                 ("forget", "Keeps bees on the roof", "--json"), ("recall", "bees", "--json")):
        same(relayed(home, *args), run_cli(copy, "--home", str(copy), *args, env_extra=COLD), mask=same_path)


def test_verify_and_its_repair_relayed_read_as_the_cold_ones_and_repair_in_the_server(server, tmp_path):
    """verify reads (run cold again after a failure), verify --repair is a write: its reindex runs in the server,
    the home's one index writer; both print what the cold run prints."""
    home, _ = server
    assert run_cli(home, "capture", "--fact", "[fact] Grows tomatoes on the balcony", env_extra=ENV).returncode == 0
    copy = twin(home, tmp_path)
    same_path = lambda text: _seconds(text.replace(str(copy), str(home)))  # noqa: E731
    codes = []
    for args in (("verify",), ("verify", "--json"), ("verify", "--repair", "--json")):
        up = relayed(home, *args)
        same(up, run_cli(copy, "--home", str(copy), *args, env_extra=COLD), mask=same_path)
        codes.append(up.returncode)
    assert codes == [7, 7, 0]  # the line captured since the last pass, then indexed by the repair
    after = relayed(home, "verify")
    assert after.returncode == 0 and after.stdout.startswith("ok ("), after.stdout


def test_capture_with_index_relayed(server, tmp_path):
    home, _ = server
    copy = twin(home, tmp_path)
    args = ("capture", "--fact", "[fact] Reads Pessoa on the tram", "--index", "--json")
    same(relayed(home, *args), run_cli(copy, "--home", str(copy), *args, env_extra=COLD),
         mask=lambda text: _seconds(text.replace(str(copy), str(home))))
    hits = json.loads(relayed(home, "recall", "Pessoa tram", "--json").stdout)["hits"]
    assert hits and hits[0]["content"] == "Reads Pessoa on the tram"


def test_the_project_flags_relayed_read_as_the_cold_ones(server, tmp_path):
    home, _ = server
    copy = twin(home, tmp_path)
    same_path = lambda text: _seconds(text.replace(str(copy), str(home)))  # noqa: E731
    args = ("capture", "--fact", "[technical] Deploys with Nomad", "--project", "github.com/acme/relay", "--index",
            "--json")
    same(relayed(home, *args), run_cli(copy, "--home", str(copy), *args, env_extra=COLD), mask=same_path)
    for args in (("recall", "Nomad", "--json"), ("recall", "Nomad", "--project", "github.com/acme/relay", "--json"),
                 ("recall", "Nomad", "--all-projects"), ("recall", "Nomad", "--project", "relay"),
                 ("recall", "Nomad", "--project", "nope"), ("recall", "Nomad", "--project", "x", "--all-projects"),
                 ("capture", "--fact", "y", "--project", "x", "--global", "--index")):
        same(relayed(home, *args), run_cli(copy, "--home", str(copy), *args, env_extra=COLD), mask=same_path)
    here = json.loads(relayed(home, "recall", "Nomad", "--json").stdout)["hits"]  # from the repository's directory
    there = json.loads(relayed(home, "recall", "Nomad", "--project", "relay", "--json").stdout)["hits"]
    assert not any("Nomad" in h["content"] for h in here)
    assert there and there[0]["content"] == "Deploys with Nomad" and there[0]["scope"] == "github.com/acme/relay"


@pytest.mark.parametrize("args, stdin", [
    (("capture", "--fact", "x", "--bogus"), None),
    (("capture", "--facts-from", "-", "--json"), "[fact] Came in on stdin\n"),
    (("recall", "oat milk", "--model", "hash:64"), None),
    (("recall", "--help"), None), (("--version",), None), (("config", "show"), None),
], ids=["unknown-option", "stdin", "model", "help", "version", "config"])
def test_lines_that_are_not_relayable_go_cold(server, args, stdin):
    home, _ = server
    before = cli_requests(home)
    r = run_cli(home, *args, input=stdin, env_extra=ENV)
    assert cli_requests(home) == before, f"relayed: {args}"
    if stdin:
        assert r.returncode == 0, r.stderr


def test_a_relative_home_is_the_clients(server, tmp_path):
    """--home is resolved against the client's working directory, never the server's."""
    home, _ = server
    rel = home.parent.name + "/" + home.name
    env = cli_env(home, **ENV)
    before = cli_requests(home)
    r = subprocess.run([sys.executable, "-m", "suzent_cli", "--home", rel, "paths", "--json"], capture_output=True,
                       text=True, env=env | {"PYTHONPATH": str(REPO)}, cwd=home.parent.parent, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    assert cli_requests(home) == before + 1
    assert json.loads(r.stdout)["home"] == str(home)


def test_the_relaying_client_imports_neither_typer_nor_rich(server):
    home, _ = server
    code = ("import sys\nfrom suzent_cli.cli.fasthook import main\ncode = main(['recall', 'oat milk', '--json'])\n"
            "sys.stdout.flush()\n"
            "print('LOADED', sorted(m for m in ('typer', 'rich', 'click', 'lancedb', 'torch', 'numpy') if m in sys.modules))\n"
            "sys.exit(code)")
    before = cli_requests(home)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(home, **ENV),
                       cwd=REPO, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    assert cli_requests(home) == before + 1
    assert json.loads(r.stdout.split("LOADED")[0])["hits"]
    assert r.stdout.rstrip().endswith("LOADED []")


def test_a_server_killed_while_a_relayed_write_waits_gives_one_error_and_no_second_write(tmp_path):
    """The relayed capture waits for the daily log's lock (held here); the server is SIGKILLed meanwhile. The
    client says so in one line, exit 1, and does not capture the fact itself: once the lock is free, the log holds
    no copy of it (the server died before its append)."""
    from suzent_cli.files import locked

    home = tmp_path / "home"
    env = HASH_ENV | NOW  # this test's HOME, as the server started here gets it
    assert run_cli(home, "init", env_extra=env | {"SUZENT_NO_SERVER": "1"}).returncode == 0
    assert run_cli(home, "capture", "--fact", "[fact] First fact", env_extra=env | {"SUZENT_NO_SERVER": "1"}).returncode == 0
    proc = start(home, "--no-chain", "--no-watch")
    ready(home, proc)
    archive = archive_of(home)
    fact = "[fact] Written at most once"
    try:
        with locked(archive / ".append.lock", timeout=5):
            client = subprocess.Popen([sys.executable, "-m", "suzent_cli", "capture", "--fact", fact, "--index"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env=cli_env(home, **env, SUZENT_LOCK_TIMEOUT="600"), cwd=REPO)
            deadline = time.monotonic() + DEADLINE
            while cli_requests(home) < 1:  # the request reached the server: it now waits for the lock
                assert client.poll() is None, client.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=DEADLINE)
            out, err = client.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert client.returncode == 1 and out == ""
    assert err.startswith("Error: the server stopped mid-request (") and err.count("\n") == 1, err
    assert "check with suzent status" in err
    text = "".join(p.read_text(encoding="utf-8") for p in archive.glob("*.md"))
    assert "Written at most once" not in text and "First fact" in text
    assert paths.socket_path(home).exists()  # left by the killed server: the next command finds nobody there
    after = run_cli(home, "capture", "--fact", fact, env_extra=env)  # the cold path
    assert after.returncode == 0, after.stderr
    text = "".join(p.read_text(encoding="utf-8") for p in archive.glob("*.md"))
    assert text.count("Written at most once") == 1


def test_a_stopped_server_is_not_waited_on_and_bad_bytes_still_capture(tmp_path):
    """Two trial findings with a real server. (1) Non-UTF-8 bytes in a variable (OLDPWD after a cd into a Latin-1
    folder) made a relayed `capture --index` fail with 'the server stopped mid-request' and capture nothing: now it
    runs cold and captures once. (2) A SIGSTOPped server still accepts connections; `suzent status` and every relayed
    command waited on it without end: now the liveness probe fails and both run cold (DEADLINE bounds the wait
    here; without the probe the relay's own timeout is hours)."""
    home = tmp_path / "home"
    env = HASH_ENV | NOW
    assert run_cli(home, "init", env_extra=env | {"SUZENT_NO_SERVER": "1"}).returncode == 0
    proc = start(home, "--no-chain", "--no-watch")
    ready(home, proc)
    archive = archive_of(home)
    try:
        bad = subprocess.run([sys.executable, "-m", "suzent_cli", "capture", "--fact", "[fact] Bytes abroad", "--index"],
                             capture_output=True, env=cli_env(home, **env, OLDPWD="/tmp/caf\udce9"), cwd=REPO,
                             timeout=DEADLINE)
        assert bad.returncode == 0 and b"stopped mid-request" not in bad.stderr, bad.stderr
        proc.send_signal(signal.SIGSTOP)
        try:
            for args in (("status", "--no-index"), ("capture", "--fact", "[fact] Captured while it slept", "--index")):
                done = subprocess.run([sys.executable, "-m", "suzent_cli", *args], capture_output=True, text=True,
                                      env=cli_env(home, **env), cwd=REPO, timeout=DEADLINE)
                assert done.returncode == 0, (args, done.stderr)
        finally:
            proc.send_signal(signal.SIGCONT)
    finally:
        stop(proc)
    text = "".join(p.read_text(encoding="utf-8") for p in archive.glob("*.md"))
    assert text.count("Bytes abroad") == 1 and text.count("Captured while it slept") == 1


def _on_a_terminal(home: Path, argv: list[str], env: dict) -> tuple[int, bytes]:
    """``python ARGV`` with stdout and stderr a pseudo-terminal of 50 columns × 31 lines (narrow: the recall table folds) (stdin not one), colour
    on (``TERM=xterm-256color``, no ``NO_COLOR``, no ``COLUMNS``): (exit code, the bytes the terminal received)."""
    import fcntl
    import os as _os
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 31, 50, 0, 0))
    env = {k: v for k, v in (env | {"TERM": "xterm-256color"}).items() if k not in ("NO_COLOR", "COLUMNS")}
    proc = subprocess.Popen([sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env,
                            cwd=REPO)
    _os.close(slave)
    output = drain_pty(master)
    return proc.wait(timeout=DEADLINE), output


@pytest.mark.parametrize("args", [("recall", "oat milk"), ("recall", "tea", "--limit", "0"), ("paths",),
                                  ("forget", "Lives in Lisbon", "--dry-run")], ids=" ".join)
def test_on_a_terminal_a_relayed_command_draws_what_the_cold_one_draws(server, args, tmp_path):
    """rich on the client's terminal: its size (from the terminal, not COLUMNS), colours, tables."""
    home, _ = server
    probe = tmp_path / "probe"
    before = cli_requests(home)
    up = _on_a_terminal(home, ["-c", PROBE, *args], cli_env(home, **ENV, RELAY_PROBE=str(probe)))
    assert cli_requests(home) == before + 1 and probe.read_text() == "False"
    down = _on_a_terminal(home, ["-m", "suzent_cli", *args], cli_env(home, **COLD))
    assert up == down
    if args[0] == "recall" and len(args) == 2:
        assert b"\x1b[" in up[1]  # drawn for a terminal: a table with bold headers
        lines = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", up[1].decode()).splitlines()
        assert max(len(line) for line in lines) == 50  # the terminal's width, folded to it (not 80, not COLUMNS)


def test_a_plain_capture_is_answered_here_with_the_server_up_and_reads_as_the_cold_one(server, tmp_path):
    """`capture --fact` without --index needs no server: the capture fast path (suzent_cli.cli.capture_run) appends
    it in the client's process, even with a server up, and prints what the cold path prints."""
    home, _ = server
    copy = twin(home, tmp_path)
    args = ("capture", "--fact", "[fact] Grows tomatoes on the balcony", "--session", "plain")
    before = cli_requests(home)
    here = run_cli(home, *args, env_extra=ENV)
    assert cli_requests(home) == before  # not relayed
    same(here, run_cli(copy, "--home", str(copy), *args, env_extra=COLD),
         mask=lambda text: text.replace(str(copy), str(home)))
