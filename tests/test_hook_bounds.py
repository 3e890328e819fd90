"""Hooks bounded by construction (issue 24), in-process: stdin read up to its cap and no further, the transcript read
in chunks with a bound on a line's length (memory checked with tracemalloc, positions checked against a plain
splitter at every chunk size), reading stopped when told, reminders removed in linear time, and the server's capture
stopped when its client has gone. The processes (the watchdog, a pipe's writer seeing the cap) are
tests/integration/test_claude_code_process.py's."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import random
import re
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from claude_code_session import DAY, Transcript, facts, payload, spooled

from conftest import HASH_ENV, REPO, invoke, settings_at
from suzent_cli.hooks import transcript as transcript_mod
from suzent_cli.hooks.stdin import MAX_PAYLOAD_BYTES, PayloadTooLarge, read_stdin
from suzent_cli.hooks.transcript import MAX_LINE_BYTES, ReadStopped, read_transcript


def hook(home: Path, data: str, *args: str):
    return invoke(home, "capture", "--from", "claude-code", *args, input=data, env_extra={"SUZENT_TODAY": DAY})


# --- stdin ---------------------------------------------------------------------------------------------------

class CountingRaw(io.RawIOBase):
    """``size`` bytes of ``x``, counting how many were handed out."""

    def __init__(self, size: int):
        self.left, self.given = size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left, 1 << 16)
        buffer[:n] = b"x" * n
        self.left -= n
        self.given += n
        return n


def test_stdin_is_read_up_to_its_cap_and_no_further():
    raw = CountingRaw(5 * MAX_PAYLOAD_BYTES)
    with pytest.raises(PayloadTooLarge, match=f"over {MAX_PAYLOAD_BYTES:,} bytes"):
        read_stdin(60, io.BufferedReader(raw))
    assert raw.given <= MAX_PAYLOAD_BYTES + 1 + io.DEFAULT_BUFFER_SIZE  # the other 4 MB were never read
    assert read_stdin(60, io.BufferedReader(CountingRaw(MAX_PAYLOAD_BYTES))) == b"x" * MAX_PAYLOAD_BYTES


def test_the_server_refuses_what_the_hooks_never_read():
    from suzent_cli.server import protocol

    assert protocol.MAX_PAYLOAD_BYTES is MAX_PAYLOAD_BYTES  # one constant


# --- the transcript ------------------------------------------------------------------------------------------

def _long_line(path: Path, size: int, *, newline: bool = True) -> None:
    """Append a user message of ``size`` bytes (it would be a turn, were it read) in 1 MB writes."""
    head = json.dumps({"type": "user", "uuid": "huge", "message": {"role": "user", "content": "x"}})[:-3]
    with path.open("ab") as fh:
        fh.write(head.encode())
        left = size - len(head) - 3
        while left > 0:
            fh.write(b"x" * min(left, 1 << 20))
            left -= 1 << 20
        fh.write(b'"}}' + (b"\n" if newline else b""))


def test_a_line_over_the_bound_is_skipped_without_being_held(tmp_path):
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    _long_line(t.path, MAX_LINE_BYTES + (8 << 20))
    t.turn("Remember that I prefer green tea in the morning.")
    tracemalloc.start()
    try:
        read = read_transcript(t.path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak} bytes held reading a {MAX_LINE_BYTES >> 20}+ MB line"  # a chunk or two
    assert len(read.skipped) == 1 and not read.partial
    assert [e.text for e in (ln.entry for ln in read.lines) if e is not None and e.kind == "user"] == [
        "Remember that my code word is kiwi.", "Remember that I prefer green tea in the morning."]


def test_the_turns_around_a_skipped_line_are_captured_and_the_position_advances(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    _long_line(t.path, MAX_LINE_BYTES + 1)
    t.turn("Remember that I prefer green tea in the morning.")
    r = hook(home, payload(t.path))
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"skipped 1 line(s) of s.jsonl longer than {MAX_LINE_BYTES >> 20} MB" in r.stderr
    assert facts(home) == ["- [general] My code word is kiwi.", "- [preference] I prefer green tea in the morning."]
    t.turn("Remember that my locker code is 4417.")
    r = hook(home, payload(t.path))  # from the recorded position (past the long line): only the new turn
    assert (r.returncode, r.stderr) == (0, "")
    assert facts(home)[2:] == ["- [general] My locker code is 4417."] and spooled(home) == []


def test_an_unterminated_line_over_the_bound_is_partial_and_skipped(tmp_path):
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    _long_line(t.path, MAX_LINE_BYTES + 1, newline=False)
    read = read_transcript(t.path)
    assert read.partial and len(read.skipped) == 1 and len(read.lines) == 5  # the turn's five records


def _reference(data: bytes, max_line: int) -> tuple[list[tuple[int, str | None]], list[int], bool]:
    """What the reader must find, by a plain split of the whole file: (offset, uuid) per kept line, skipped
    offsets, partial."""
    kept, skipped, pos = [], [], 0
    for i, line in enumerate(data.split(b"\n")):
        last = i == data.count(b"\n")
        if line and not line.isspace():
            if len(line) > max_line:
                skipped.append(pos)
                if last:
                    return kept, skipped, True
            else:
                try:
                    record = json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    if last:
                        return kept, skipped, True
                    record = None
                kept.append((pos, record.get("uuid") if isinstance(record, dict) else None))
        pos += len(line) + 1
    return kept, skipped, False


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 64, 1 << 20])
def test_lines_and_offsets_are_exact_at_any_chunk_size(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(transcript_mod, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    pieces = []
    for i in range(60):
        kind = rng.choice(["json", "json", "long", "blank", "spaces", "garbage", "utf8"])
        pieces.append({"json": json.dumps({"uuid": f"u{i}"}), "long": json.dumps({"uuid": f"long{i}", "x": "y" * 50}),
                       "blank": "", "spaces": "  \t", "garbage": "{not json",
                       "utf8": json.dumps({"uuid": f"ü{i}"}, ensure_ascii=False)}[kind])
    tail = rng.choice(["", '{"uuid": "half', json.dumps({"uuid": "done"}), "z" * 90])
    data = ("\n".join(pieces) + "\n" + tail).encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    read = read_transcript(path, max_line=40)
    kept, skipped, partial = _reference(data, 40)
    assert [(ln.offset, ln.uuid) for ln in read.lines] == kept
    assert (read.skipped, read.partial) == (skipped, partial)
    start = kept[len(kept) // 2][0]  # from a recorded position: the same lines after it
    assert [(ln.offset, ln.uuid) for ln in read_transcript(path, start, max_line=40).lines] == \
        [k for k in kept if k[0] >= start]


def test_reading_stops_when_told_and_nothing_is_lost(tmp_path, home):
    from suzent_cli.hooks.capture import capture_payload
    from suzent_cli.hooks.transcript import decode_payload, payload_from_dict

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    with pytest.raises(ReadStopped):
        read_transcript(t.path, stop=lambda: True)
    settings = settings_at(home, "2026-06-01T12:00")
    p = payload_from_dict(decode_payload(payload(t.path).encode()))
    outcome = capture_payload(settings, p, stop=lambda: True)
    assert (outcome.finished, outcome.turns) == (False, 0) and facts(home) == []
    outcome = capture_payload(settings, p)
    assert (outcome.finished, outcome.turns) == (True, 1) and facts(home) == ["- [general] My code word is kiwi."]


def test_reminders_are_removed_as_the_old_pattern_did_in_linear_time():
    old = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
    o, c = "<system-reminder>", "</system-reminder>"
    rng = random.Random(7)
    for _ in range(500):
        text = "".join(rng.choice([o, c, "a", " ", "\n", "<", "system-reminder>"]) for _ in range(rng.randrange(12)))
        assert transcript_mod._without_reminders(text) == old.sub("", text), repr(text)
    # The old pattern rescans the rest of the text at each unclosed tag: hours for this 5 MB message, holding the
    # interpreter lock (no Python thread, the hooks' watchdog included, can run meanwhile). A hang guard only:
    code = ("from suzent_cli.hooks.transcript import _said\n"
            "assert _said('<system-reminder>' * 300_000 + 'I live in Lisbon') == "
            "('<system-reminder>' * 300_000 + 'I live in Lisbon')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


# --- the server: a request's capture stops when its client has gone -----------------------------------------

def _scope(op: str) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": f"/v1/{op}", "raw_path": f"/v1/{op}".encode(), "query_string": b"", "root_path": "",
            "headers": [(b"content-type", b"application/json")], "server": ("localhost", 80),
            "client": ("local", 0)}


def _serve_one(app, op: str, body: bytes, gone: threading.Event | None = None) -> dict:
    """One request through the ASGI ``app``: the body, then the client disconnects once ``gone`` is set (None:
    at once, as a hook that gave up) or after the answer. Returns the answer's JSON."""
    sent: list[dict] = []

    async def go() -> None:
        queue = [{"type": "http.request", "body": body, "more_body": False}]
        answered = asyncio.Event()

        async def receive() -> dict:
            if queue:
                return queue.pop(0)
            if gone is not None:
                while not gone.is_set() and not answered.is_set():
                    await asyncio.sleep(0.01)
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()

        await app(_scope(op), receive, send)

    asyncio.run(go())
    return json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


def test_an_operation_sees_its_client_go_while_it_runs():
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from suzent_cli.server.cancel import WatchDisconnect, client_gone

    started, gone = threading.Event(), threading.Event()

    def work() -> bool:  # the operation, in a worker thread as the local API runs it
        seen = client_gone()
        started.set()
        for _ in range(3000):  # a hang guard of 30 s, not a duration under test
            if seen():
                return True
            time.sleep(0.01)
        return False

    async def endpoint(request):
        await request.body()
        return JSONResponse({"saw_it_go": await run_in_threadpool(work)})

    app = WatchDisconnect(Starlette(routes=[Route("/v1/x", endpoint, methods=["POST"])]))
    threading.Thread(target=lambda: started.wait(30) and gone.set(), daemon=True).start()
    assert _serve_one(app, "x", b"{}", gone) == {"saw_it_go": True}
    assert client_gone()() is False  # outside a request nothing is ever gone


def test_the_servers_capture_stops_when_its_client_has_gone(tmp_path):
    from suzent_cli.server.cancel import WatchDisconnect
    from suzent_cli.server.http import local_app
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.stats import Stats
    from suzent_cli.server.warm import Warm

    home = tmp_path / "home"
    warm = Warm(settings_at(home, "2026-06-01T12:00", env=HASH_ENV))
    app = WatchDisconnect(local_app(LocalBackend(warm), Stats(mcp_url="", socket="")))
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("Remember that my code word is kiwi.")
    body = json.dumps({"payload_b64": base64.b64encode(payload(t.path).encode()).decode(), "timeout": 60}).encode()
    try:
        left = _serve_one(app, "hook_capture", body)  # the hook is gone as soon as it asked
        assert left["report"]["turns"] == 0 and left["report"]["left"] == 1 and left["report"]["failed"] == 0
        assert facts(home) == [] and len(spooled(home)) == 1  # kept for the next run, no attempt counted
        done = _serve_one(app, "hook_capture", body, threading.Event())  # the hook waits for the answer
        assert done["report"]["turns"] == 1 and done["report"]["left"] == 0
        assert facts(home) == ["- [general] My code word is kiwi."] and spooled(home) == []
    finally:
        warm.close()
