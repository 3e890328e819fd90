"""A starting server answers at once (issue 25, item 3): while the model loads, hybrid requests from hooks and MCP
get full-text hits instead of waiting for the load, and the chain's first pass waits for the load to end. The
model here is a hash embedder behind a gate the test opens, so "still loading" is a state the test holds, not a
race against the clock."""

from __future__ import annotations

import base64
import json
import threading

import pytest
from claude_code_session import prompt

from conftest import HASH_ENV, log, settings_at
from suzent_cli.index.api import run_index
from suzent_cli.index.embed import HashEmbedder
from suzent_cli.server import serve as serve_mod
from suzent_cli.server.ops import LocalBackend
from suzent_cli.server.stats import Stats
from suzent_cli.server.warm import Warm


class GatedModel:
    """The index's hash:64 embedder that is "not loaded" until ``gate`` opens: its first encode blocks there, as a
    real model's first encode blocks on the weights."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.name, self.dim = self.inner.name, self.inner.dim
        self.gate = threading.Event()
        self.entered = threading.Event()
        self._loaded = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def encode(self, texts):
        self.entered.set()
        assert self.gate.wait(120), "the test never opened the gate"
        self._loaded = True
        return self.inner.encode(texts)


@pytest.fixture
def starting(tmp_path):
    """``(backend, model)``: a home with two facts indexed (hash:64) and a warm state whose model is loading."""
    settings = settings_at(tmp_path / "home", env=HASH_ENV)
    log(settings, "2026-06-19", "[preference] Prefers oat milk in coffee", "[personal] Lives in Porto")
    run_index(settings)
    model = GatedModel()
    warm = Warm(settings, embedder=model)
    warm.start_preload()
    assert model.entered.wait(120)  # the preload is inside the model's first encode: loading
    yield LocalBackend(warm), model
    model.gate.set()
    warm.close()


def test_recall_while_the_model_loads_answers_full_text_at_once_and_says_so(starting):
    backend, model = starting
    result = backend.recall("oat milk coffee")  # hybrid asked
    assert not model.loaded  # answered while the load is still blocked
    assert result["mode"] == "fts" and "model is still loading" in result["note"]
    assert result["hits"][0]["content"] == "Prefers oat milk in coffee"

    model.gate.set()
    backend.warm.wait_preload(threading.Event())
    after = backend.recall("oat milk coffee")
    assert after["mode"] == "hybrid" and after["note"] is None and after["hits"]


def test_explicit_vector_recall_still_waits_for_the_model(starting):
    backend, model = starting
    box = {}
    worker = threading.Thread(target=lambda: box.update(r=backend.recall("oat milk coffee", mode="vector")))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and not box  # vectors cannot be had without the model: it waits
    model.gate.set()
    worker.join(120)
    assert box["r"]["mode"] == "vector" and box["r"]["hits"]


def test_the_recall_hook_answers_while_the_model_loads(starting):
    backend, model = starting
    raw = prompt("How does the user take coffee, with which milk?").encode()
    answer = backend.hook_recall(payload_b64=base64.b64encode(raw).decode(), mode="hybrid", limit=5)
    assert not model.loaded and answer["warning"] is None
    context = json.loads(answer["output"])["hookSpecificOutput"]["additionalContext"]
    assert "oat milk" in context


def test_the_briefing_answers_while_the_model_loads(starting):
    backend, model = starting
    text = backend.briefing(cwd="/work/coffee-milk")["text"]  # returns: it did not wait for the gate
    assert not model.loaded and (text is None or isinstance(text, str))


def test_the_chain_first_pass_waits_for_the_model_load(monkeypatch, tmp_path):
    calls = []
    stop = threading.Event()

    class Report:
        started, exit_code, seconds, behind, stages = "now", 0, 0.0, False, []

    def run_pass(*args, **kwargs):
        calls.append(args)
        stop.set()
        return Report()

    monkeypatch.setattr("suzent_cli.run.run_pass", run_pass)
    loaded = threading.Event()
    waiting = threading.Event()

    class Warmish:
        embedder = None

        def settings(self):
            return settings_at(tmp_path / "home", env=HASH_ENV)

        def wait_preload(self, stop_event):
            waiting.set()
            while not loaded.is_set() and not stop_event.is_set():
                loaded.wait(0.05)

    stats = Stats()
    chain = threading.Thread(target=serve_mod.chain_thread, args=(Warmish(), _Config(), "rules", stop, stats))
    chain.start()
    assert waiting.wait(60)
    assert calls == [] and stats.snapshot()["chain"]["state"] == "waiting for the model"
    loaded.set()
    chain.join(60)
    assert not chain.is_alive() and len(calls) == 1


class _Config:
    interval_seconds = 3600


# --- the socket appears once the store is open (issue 25 loose ends, item 1) -------------------------------------

def test_the_socket_appears_only_once_the_store_is_open(monkeypatch, tmp_path):
    """serve() prepares the backend (the store opened, its FTS indexes read, the request modules imported) before
    it binds the local socket: a hook that finds the socket never waits on LanceDB. Checked at the bind itself."""
    from suzent_cli.server import runtime
    from suzent_cli.server.mcp_surface import build_mcp

    settings = settings_at(tmp_path / "home", env=HASH_ENV)
    log(settings, "2026-06-19", "[preference] Prefers oat milk in coffee")
    run_index(settings)
    model = GatedModel()  # the model "loads" only when the test says so: the store must not wait for it
    warm = Warm(settings, embedder=model)
    backend = LocalBackend(warm)
    seen: dict = {}
    bind = runtime.bind_unix

    def watched_bind(path, run_dir):
        seen["store open"] = warm._store is not None
        seen["model loaded"] = model.loaded
        return bind(path, run_dir)

    monkeypatch.setattr(runtime, "bind_unix", watched_bind)
    stop = threading.Event()
    stop.set()  # stop as soon as it serves
    try:
        serve_mod.serve(settings, port=0, chain=False, watch=False, warm=warm, backend=backend,
                        mcp_server=build_mcp(backend), stop=stop, announce=lambda line: None)
    finally:
        model.gate.set()
    assert seen == {"store open": True, "model loaded": False}


def test_prepare_writes_nothing_and_never_raises_without_an_index(tmp_path):
    settings = settings_at(tmp_path / "home", env=HASH_ENV)
    warm = Warm(settings, embedder=HashEmbedder(64))
    try:
        LocalBackend(warm).prepare()  # no index yet: nothing to open, no error
        assert not settings.paths.index_dir.exists() and not settings.paths.state_dir.exists()
    finally:
        warm.close()


# --- an index batch never holds the model against a query (item 5: the catch-up pass must not starve requests) -----

def test_a_query_goes_before_the_rest_of_an_index_batch():
    import numpy as np

    from suzent_cli.server.warm import ENCODE_SLICE, _SharedEmbedder

    go = threading.Semaphore(0)
    calls: list[int] = []

    class Inner:
        name, dim = "gated", 4

        def encode(self, texts):
            calls.append(len(texts))
            if len(texts) > 2:  # a slice of the index batch: held until the test lets it finish
                assert go.acquire(timeout=120), "the test never let the slice finish"
            return np.array([[float(len(t)), 0.0, 0.0, 1.0] for t in texts], dtype=np.float32)

    shared = _SharedEmbedder(Inner())
    texts = [f"text {i}" * (1 + i % 3) for i in range(3 * ENCODE_SLICE)]
    box: dict = {}
    batch = threading.Thread(target=lambda: box.update(batch=shared.encode(texts)))
    batch.start()
    _until(lambda: calls == [ENCODE_SLICE], "the batch's first slice")
    query = threading.Thread(target=lambda: box.update(query=shared.encode(["oat milk"])))
    query.start()
    _until(lambda: shared._queries == 1, "the query waiting for the model")
    go.release()  # the first slice ends: the query goes next, before the batch's second slice
    query.join(120)
    assert not query.is_alive() and calls[:2] == [ENCODE_SLICE, 1]  # (the second slice may have begun since)
    go.release()
    go.release()
    batch.join(120)
    assert calls == [ENCODE_SLICE, 1, ENCODE_SLICE, ENCODE_SLICE]
    assert np.array_equal(box["batch"], np.array([[float(len(t)), 0.0, 0.0, 1.0] for t in texts], dtype=np.float32))


def _until(check, what: str, deadline: float = 120.0):
    import time

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.01)
    pytest.fail(f"{what}: not within {deadline:g} s")


def test_a_server_without_the_chain_catches_up_on_what_changed_before_its_watcher(monkeypatch, tmp_path):
    """settle_thread: after the preload, the record says the server is ready; with catch_up (watcher on, chain off)
    one pass of every changed source is queued, once the watcher follows the folders; without it, none."""
    noted: list[str] = []
    monkeypatch.setattr(serve_mod.autostart, "note_ready", lambda home: noted.append(str(home)))

    class Index:
        def __init__(self):
            self.requests: list = []

        def reindex(self, files=None, *, wait=None):
            self.requests.append(files)
            return False

    class Warmish:
        def __init__(self):
            self.index = Index()
            self.loaded = threading.Event()

        def wait_preload(self, stop_event):
            while not self.loaded.is_set() and not stop_event.is_set():
                self.loaded.wait(0.05)

    for catch_up in (True, False):
        warm, stats, stop = Warmish(), Stats(), threading.Event()
        settle = threading.Thread(target=serve_mod.settle_thread, args=(tmp_path, warm, stop, stats),
                                  kwargs={"catch_up": catch_up})
        settle.start()
        assert warm.index.requests == [] and noted == []  # the model first
        warm.loaded.set()
        if catch_up:
            _until(lambda: noted, "the ready note")
            assert warm.index.requests == []  # the watcher does not follow the folders yet
            stats.set_watcher(state="watching")
        settle.join(120)
        assert not settle.is_alive()
        assert warm.index.requests == ([None] if catch_up else [])
        assert noted == [str(tmp_path)]
        noted.clear()
