"""The light client of ``suzent serve``'s local API (suzent_cli.server.client) against a fake server on a Unix socket
(tests/fake_server.py): answers, errors as the same SuzentError class, no server, a server that closes mid-request
or does not answer in time, and what importing it costs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest
from fake_server import CLOSE, FakeServer, Raw

from conftest import REPO
from suzent_cli import errors
from suzent_cli.server import paths, protocol
from suzent_cli.server.client import RemoteBackend, ServerTimeout, ServerUnavailable, connect


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def serve(home, answer) -> FakeServer:
    return FakeServer(paths.socket_path(home), answer)


def test_every_backend_method_posts_its_op_with_its_arguments(home):
    with serve(home, lambda op, args: {"op": op}) as fake:
        backend = connect(home, timeout=5)
        assert isinstance(backend, RemoteBackend)
        assert backend.recall("tea", limit=3, mode="fts") == {"op": "recall"}
        backend.remember(facts=["[preference] Likes tea"], session="s1")
        backend.forget(text="tea")
        backend.status()
        backend.list_pages()
        backend.read_page("MEMORY.md")
        backend.briefing(cwd="/src")
        backend.hook_capture(payload_b64="e30=", timeout=3.0, extractor="offline")
        backend.hook_recall(payload_b64="e30=", mode="hybrid", limit=5)
        backend.hook_session_start(payload_b64="e30=")
    assert [op for op, _ in fake.calls] == list(protocol.OPS)  # every op of the protocol, none other
    assert fake.calls[0][1] == {"query": "tea", "limit": 3, "mode": "fts", "since": None, "until": None,
                                "category": None}
    assert fake.calls[1][1] == {"facts": ["[preference] Likes tea"], "turn": None, "session": "s1", "category": None}
    assert fake.calls[7][1] == {"payload_b64": "e30=", "timeout": 3.0, "extractor": "offline"}


def test_the_backend_has_every_protocol_method():
    wanted = {n for n in vars(protocol.Backend) if not n.startswith("_")}
    assert wanted == set(protocol.OPS)
    assert all(callable(getattr(RemoteBackend, n, None)) for n in wanted)


def test_an_error_answer_is_raised_as_the_same_suzent_error_class(home):
    def answer(op, args):
        if op == "recall":
            raise errors.InputInvalid("mode must be one of hybrid, vector, fts")
        raise errors.LockTimeout("the index lock is held")

    with serve(home, answer):
        backend = connect(home, timeout=5)
        with pytest.raises(errors.InputInvalid, match="mode must be one of") as caught:
            backend.recall("tea", mode="x")
        assert caught.value.exit_code == errors.BAD_INPUT
        with pytest.raises(errors.LockTimeout):
            backend.status()


def test_a_server_error_of_no_known_class_is_a_server_error(home):
    body = b'{"error": {"type": "InternalError", "message": "KeyError: x", "exit": 1}}'
    with serve(home, lambda op, args: Raw(500, body)):
        with pytest.raises(protocol.ServerError, match="KeyError: x"):
            connect(home, timeout=5).status()


def test_no_socket_means_no_server(home):
    assert connect(home) is None
    with pytest.raises(ServerUnavailable, match="no answer from the server"):
        RemoteBackend(home, timeout=1).status()


def test_a_stale_socket_nobody_listens_on_means_no_server(home):
    where = paths.socket_path(home)
    where.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(where))  # bound, never listening, then closed: the file a killed server leaves behind
    stale.close()
    assert where.exists()
    assert connect(home) is None


def test_a_server_that_closes_mid_request_is_unavailable(home):
    with serve(home, lambda op, args: CLOSE):
        backend = connect(home, timeout=5)
        assert backend is not None
        with pytest.raises(ServerUnavailable):
            backend.hook_recall(payload_b64="e30=")


@pytest.mark.parametrize("raw", [Raw(200, b"not json"), Raw(200, b"[1, 2]"), Raw(502, b"{}"),
                                 Raw(200, b'{"a": 1')])
def test_an_answer_that_is_not_the_apis_json_is_unavailable(home, raw):
    with serve(home, lambda op, args: raw):
        with pytest.raises(ServerUnavailable):
            connect(home, timeout=5).status()


def test_no_answer_in_time_is_a_timeout_not_unavailable(home):
    release = threading.Event()

    def answer(op, args):
        release.wait(30)
        return {}

    with serve(home, answer):
        backend = connect(home, timeout=0.2)
        try:
            with pytest.raises(ServerTimeout, match="did not answer status within 0.2 s") as caught:
                backend.status()
            assert not isinstance(caught.value, ServerUnavailable)  # a write that timed out is not redone elsewhere
        finally:
            release.set()


def test_unknown_op_is_refused_before_sending(home):
    with pytest.raises(ValueError, match="unknown operation"):
        RemoteBackend(home).call("drop_everything")


def test_the_client_imports_nothing_heavy():
    heavy = ("typer", "rich", "pydantic", "mcp", "starlette", "uvicorn", "lancedb", "pyarrow", "torch",
             "sentence_transformers", "anthropic", "numpy")
    code = ("import sys, suzent_cli.server.client\n"
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})\n"
            "own = sorted(m for m in sys.modules if m.startswith('suzent_cli.') and m not in "
            "('suzent_cli.errors', 'suzent_cli.server', 'suzent_cli.server.paths', 'suzent_cli.server.protocol', "
            "'suzent_cli.server.client', 'suzent_cli.hooks', 'suzent_cli.hooks.stdin'))\n"  # stdin: the payload cap
            "assert not bad and not own, (bad, own)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_socket_in_a_folder_others_can_write_is_no_server(home):
    # Another local user who can write in the socket's folder (a world-writable home, or a shared fallback folder
    # they made first) could put their own server there: the client would send them the user's prompts and print
    # their answer into the agent's context. The client takes the cold path instead.
    with serve(home, lambda op, args: {"op": op}) as fake:
        folder = fake.path.parent
        assert connect(home, timeout=5) is not None
        folder.chmod(0o777)
        try:
            assert connect(home, timeout=5) is None
            assert "writable by other users" in paths.untrusted_socket(fake.path)
        finally:
            folder.chmod(0o700)
        assert connect(home, timeout=5) is not None


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to give a file to another uid")
def test_a_socket_or_folder_of_another_user_is_no_server(home):
    with serve(home, lambda op, args: {"op": op}) as fake:
        os.chown(fake.path, 12345, -1)
        assert connect(home, timeout=5) is None
        assert "another user" in paths.untrusted_socket(fake.path)
        os.chown(fake.path, 0, -1)
        os.chown(fake.path.parent, 12345, -1)
        assert connect(home, timeout=5) is None
        os.chown(fake.path.parent, 0, -1)
        assert connect(home, timeout=5) is not None
