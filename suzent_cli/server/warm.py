"""The warm state of a long-lived suzent process (``suzent serve``, ``suzent mcp`` standalone): the settings with
today kept current, one shared embedder, one LanceDB read connection that follows every commit, and the index
worker — the process's one path to the indexer.

* **Settings.** :meth:`Warm.settings` moves ``today`` to the current UTC date on every call
  (:func:`suzent_cli.run.refresh_today`), so a server running past midnight writes to and decays by the right day.
* **Embedder.** :attr:`Warm.embedder` is made on first use, the one the index was built with
  (:func:`suzent_cli.index.api.index_embedder`: lazy, so the model loads at the first encode, never at start-up).
  Its ``encode`` is serialized by a lock: the model loads once even when a recall and an index pass ask together,
  and the model is never entered from two threads at once. ``suzent serve`` makes the process share its
  embedders (:func:`share_process_embedders`): the CLI commands relayed to it (:mod:`suzent_cli.cli.relayed`)
  then get this very instance from :func:`~suzent_cli.index.embed.load_embedder`, not a second model.
* **Store.** :meth:`Warm.store` returns one :class:`~suzent_cli.index.store.ReadStore` for many queries. Before each
  use it compares :func:`~suzent_cli.index.store.table_stamp` (two ``stat`` calls: 0.014 ms) with the stamp it last
  saw: a new commit — by this process's index worker or by a CLI beside it — adds a manifest to the table's
  ``_versions`` directory, and the store then moves to the latest version (:meth:`ReadStore.refresh`, LanceDB
  ``checkout_latest``: 1.0 ms); a table that was moved aside and rebuilt (another inode) is opened again (3.3 ms).
  File times are coarse, so a stamp younger than :data:`SETTLE_NS` is never trusted alone (the store refreshes
  on every use until it is older). Measured on this machine, 10k rows, hash:64, median of 50: an FTS query 7 ms.
  The store keeps the table's rows in memory (:meth:`ReadStore.keep_resident`: vectors for exact search, both
  text fields inverted for BM25 as lance scores it, the hits' columns, the neighbour positions), read and followed
  by a background thread; lance answers until it is ready, and always for a table over the copy's cap.
  The alternatives: ``read_consistency_interval=0`` re-checks the latest version inside every LanceDB call
  (~0.05 ms each, several per hybrid recall; it does not cover a table rebuilt under the same path), and
  reopening per query costs 3.3 ms.
* **Index worker.** :attr:`Warm.index` is an :class:`IndexWorker`: one daemon thread that runs every index pass
  of this process (:func:`suzent_cli.index.api.reindex_files` / :func:`~suzent_cli.index.api.run_index`, which
  take the indexer's file lock themselves, so a ``suzent index`` run beside the server waits for the pass or the
  pass waits for it: never two writers). Requests coalesce: a request made while a pass runs joins the next pass
  (files are unioned; "everything changed" absorbs any files). Other index work of the process (``forget``'s
  reindex and compaction) runs on the same thread through :meth:`IndexWorker.call`.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suzent_cli.config import Settings
from suzent_cli.errors import LockTimeout, describe
from suzent_cli.index.embed import QUERY_TEXTS

SETTLE_NS = 200_000_000  # a _versions mtime younger than this is not trusted alone (file times are coarse)
ENCODE_SLICE = 64  # texts an index batch encodes per hold of the model; waiting queries go between slices
Runner = Callable[[Settings, "list[Path] | None", Any], Any]


def _default_runner(settings: Settings, files: list[Path] | None, embedder) -> Any:
    """One indexer pass: exactly ``files`` (their mtime aside), or every changed source when None."""
    from suzent_cli.index.api import reindex_files, run_index

    if files is None:
        return run_index(settings, embedder=embedder)
    return reindex_files(settings, files, embedder=embedder)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class IndexWorker:
    """The process's one index thread (module doc).

    ``settings()`` is called at the start of each pass (today refreshed); ``embedder()`` gives the shared embedder
    (None: the indexer makes its own); ``runner(settings, files | None, embedder)`` runs one pass (default:
    :func:`suzent_cli.index.api.reindex_files` / :func:`~suzent_cli.index.api.run_index`) and returns its
    :class:`~suzent_cli.index.indexer.IndexReport`.

    A pass that raises records :attr:`last_error` (``{"time", "message"}``) and the thread goes on. When the
    indexer's lock was busy for ``lock_timeout`` (:class:`LockTimeout`: a CLI ``suzent index`` or the chain at
    work) its files are queued again, so the pass runs once the lock is free; after any other failure they are
    not (the next "everything changed" pass — ``suzent serve``'s chain, a ``suzent index`` — hashes every source
    and catches up: the index is derived data, nothing is lost).
    """

    def __init__(self, settings: Callable[[], Settings], embedder: Callable[[], Any] | None = None, *,
                 runner: Runner | None = None, name: str = "suzent-index") -> None:
        self._settings = settings
        self._embedder = embedder or (lambda: None)
        self._runner = runner or _default_runner
        self._cond = threading.Condition()
        self._files: set[Path] = set()
        self._everything = False
        self._calls: list[tuple[Callable[[], Any], dict]] = []
        self._requested = 0  # sequence number of the latest request
        self._done = 0  # every request up to this number was covered by a pass that has finished
        self._ok = 0  # ... by a pass that finished without raising
        self._closing = False
        self._running: dict | None = None
        self.passes = 0
        self.last_error: dict | None = None
        self.last_pass: dict | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    # --- asking ---------------------------------------------------------------------------------------------
    def reindex(self, files: list[Path] | None = None, *, wait: float | None = None) -> bool:
        """Queue a pass over ``files`` (None: every changed source; the indexer hashes before it re-embeds) and
        wait up to ``wait`` seconds (None or 0: do not wait). Returns True once a pass that started after this
        request finished without raising and without a file it could not index; False on time-out, after a
        failed pass (see :attr:`last_error`), when not waiting, or when the worker is closed."""
        with self._cond:
            if self._closing:
                return False
            if files is None:
                self._everything = True
            else:
                self._files.update(Path(f).absolute() for f in files)
            self._requested += 1
            mine = self._requested
            self._cond.notify_all()
            if not wait or wait <= 0:
                return False
            end = time.monotonic() + wait
            while self._done < mine and not self._closing:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return self._ok >= mine

    def call(self, fn: Callable[[], Any], *, timeout: float | None = None) -> Any:
        """Run ``fn()`` on the index thread, between passes, and return its result (or raise its exception): for
        other index work that must not run beside a pass of this process (``forget``'s reindex and compaction).
        Waits up to ``timeout`` seconds (None: until it is done). Raises :class:`TimeoutError` when it is not
        done in time (it still runs later), :class:`RuntimeError` when the worker is closed."""
        box: dict = {}
        with self._cond:
            if self._closing:
                raise RuntimeError("the index worker is closed")
            self._calls.append((fn, box))
            self._cond.notify_all()
            end = None if timeout is None else time.monotonic() + timeout
            while "done" not in box:
                if self._closing and not self._thread.is_alive():
                    raise RuntimeError("the index worker closed before the work ran")
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"index work not done within {timeout:g} s")
                self._cond.wait(left if left is not None else 1.0)
        if "error" in box:
            raise box["error"]
        return box.get("result")

    def close(self, timeout: float | None = None) -> None:
        """Stop the thread after the pass in progress (queued requests are dropped: their waiters get False).
        Waits up to ``timeout`` seconds for it (None: until it stops)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def state(self) -> dict[str, Any]:
        """JSON-ready: ``{"alive", "passes", "pending" (requests not yet covered by a finished pass), "running"
        ({"since", "files"} or None), "last_pass" ({"time", "seconds", "files", "ok", "report"} or None),
        "last_error" ({"time", "message"} or None)}``; ``files`` is a count, or None for "everything"."""
        with self._cond:
            return {"alive": self.alive, "passes": self.passes, "pending": self._requested - self._done,
                    "running": dict(self._running) if self._running else None,
                    "last_pass": dict(self.last_pass) if self.last_pass else None,
                    "last_error": dict(self.last_error) if self.last_error else None}

    # --- the thread -----------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closing and not self._calls and self._done >= self._requested:
                    self._cond.wait()
                if self._closing:
                    self._cond.notify_all()
                    return
                if self._calls:
                    fn, box = self._calls.pop(0)
                    job = None
                else:
                    fn, box = None, None
                    job = None if self._everything else sorted(self._files)
                    covers = self._requested
                    self._files, self._everything = set(), False
                    self._running = {"since": _now(), "files": None if job is None else len(job)}
            if fn is not None:
                self._call(fn, box)
                continue
            self._pass(job, covers)

    def _call(self, fn: Callable[[], Any], box: dict) -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, never kills the thread
            box["error"] = exc
        with self._cond:
            box["done"] = True
            self._cond.notify_all()

    def _pass(self, files: list[Path] | None, covers: int) -> None:
        started = time.monotonic()
        ok, report, error = False, None, None
        try:
            result = self._runner(self._settings(), files, self._embedder())
            report = result.as_dict() if hasattr(result, "as_dict") else result
            failed = list(getattr(result, "errors", None) or [])
            ok = not failed
            if failed:  # the pass ran, but these files were left for the next one
                source, message = failed[0]
                error = f"{len(failed)} file(s) failed to index, first {source}: {message}"
        except BaseException as exc:  # noqa: BLE001 - recorded as last_error; the thread must live on
            error = describe(exc)
            busy = isinstance(exc, LockTimeout)
        else:
            busy = False
        with self._cond:
            if busy and not self._closing:  # another indexer (a CLI, the chain) held the lock: try these again
                if files is None:
                    self._everything = True
                else:
                    self._files.update(files)
                self._requested += 1
            self.passes += 1
            self._running = None
            self._done = max(self._done, covers)
            if ok:
                self._ok = max(self._ok, covers)
            else:
                self.last_error = {"time": _now(), "message": error}
            self.last_pass = {"time": _now(), "seconds": round(time.monotonic() - started, 3),
                              "files": None if files is None else len(files), "ok": ok, "report": report}
            self._cond.notify_all()


class _SharedEmbedder:
    """The index's embedder behind a lock: the model loads once, and one thread at a time encodes.

    Queries go first: an encode of more than :data:`ENCODE_SLICE` texts (an index batch) is done slice by slice,
    and before each slice it lets every query (an encode of at most :data:`~suzent_cli.index.embed.QUERY_TEXTS` texts) that is waiting go
    first, so a hook's or a recall's query waits for one slice at most, never for a whole index batch (up to 4,096
    texts: tens of seconds of model time on two busy cores). The result is the same array as one call."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self._cond = threading.Condition()
        self._busy = False  # a caller is inside the model
        self._queries = 0  # queries waiting for the model
        self.name, self.dim = inner.name, inner.dim

    @property
    def loaded(self) -> bool:
        return bool(getattr(self._inner, "loaded", True))

    def encode(self, texts: list[str]):
        """``self._inner.encode(texts)``, one caller at a time, a long list in slices with queries let in between
        (class doc). A query (one or two texts) is encoded on one torch
        thread: a second thread saves ~5 ms on an idle machine but costs up to 230 ms when the two cores are busy
        with the hook processes the server answers (MiniLM, one query: 12 vs 17 ms at load 1.3, 275 vs 42 ms at
        load 3.4; benchmarks/recall_latency.py). Index batches keep every thread."""
        if len(texts) <= ENCODE_SLICE:
            return self._serial(self._inner.encode, texts)
        import numpy as np

        return np.concatenate([self._serial(self._inner.encode, texts[i:i + ENCODE_SLICE])
                               for i in range(0, len(texts), ENCODE_SLICE)])

    def encode_query(self, texts: list[str]):
        """Queries through the inner embedder's ``encode_query`` (a model's query prefix), like :meth:`encode`."""
        from suzent_cli.index.embed import encode_query

        return self._serial(lambda batch: encode_query(self._inner, batch), texts)

    def _serial(self, fn, texts: list[str]):
        query = len(texts) <= QUERY_TEXTS
        with self._cond:
            if query:
                self._queries += 1
            try:
                while self._busy or (not query and self._queries):
                    self._cond.wait()
            finally:
                if query:
                    self._queries -= 1
            self._busy = True
        try:
            return fn(texts)  # a query runs on one torch thread: the model embedder's own rule (embed.QUERY_TEXTS)
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


def share_process_embedders() -> None:
    """Make this process keep one embedder per model, each behind :class:`_SharedEmbedder`'s lock
    (:func:`suzent_cli.index.embed.share_embedders`): a :class:`Warm` and every command run in the process then use
    the same model instance. For a process that runs CLI commands beside its warm state (``suzent serve``)."""
    from suzent_cli.index.embed import share_embedders

    share_embedders(_SharedEmbedder)


class Warm:
    """Warm state for ``settings`` (module doc). ``embedder``: use this one instead of the index's (tests);
    ``runner``: the index worker's pass (tests). Call :meth:`close` when done."""

    def __init__(self, settings: Settings, *, embedder=None, runner: Runner | None = None) -> None:
        # A long-lived process shares two cores with short hook processes: torch's OpenMP workers otherwise spin
        # for a while after every encode and slow the next hook process down (recall hook p50 311 → 203 ms with
        # the bundled model, measured during issue 15). Read once, when torch loads, so it is set before any encode;
        # a person's own OMP_WAIT_POLICY wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._base = settings
        self._lock = threading.Lock()
        self._embedder = _SharedEmbedder(embedder) if embedder is not None else None
        self._fixed_embedder = embedder is not None
        self._store = None
        self._stamp = None
        self._preload: threading.Thread | None = None
        self._preloaded = threading.Event()  # set when a preload ended, loaded or not
        self.index = IndexWorker(self.settings, self.embedder_or_none, runner=runner)

    def settings(self) -> Settings:
        """The settings with ``today`` moved to the current UTC date (unless a clock override fixed it)."""
        from suzent_cli.run import refresh_today

        return refresh_today(self._base)

    @property
    def embedder(self):
        """The shared embedder the index was built with (made on first use; the model loads at the first encode).
        Raises :class:`~suzent_cli.errors.EmbedderUnavailable` when it cannot be made."""
        with self._lock:
            if self._embedder is None:
                from suzent_cli.index.api import index_embedder

                made = index_embedder(self._base)  # the process's one when it shares them (suzent serve)
                self._embedder = made if isinstance(made, _SharedEmbedder) else _SharedEmbedder(made)
            return self._embedder

    @property
    def embedder_loaded(self) -> bool:
        """True once a model is in memory (False before the first encode)."""
        return self._embedder is not None and self._embedder.loaded

    def embedder_or_none(self):
        """:attr:`embedder`, or None when it cannot be made (the indexer then makes its own and fails with the
        real message)."""
        try:
            return self.embedder
        except Exception:  # noqa: BLE001 - the indexer makes its own and fails with the real message
            return None

    def store(self):
        """The :class:`~suzent_cli.index.store.ReadStore`, at the latest committed version (module doc). Raises
        :class:`~suzent_cli.errors.IndexMissing` when there is no index yet, :class:`IndexUnreadable`,
        :class:`IndexIncompatible` (another tool's table)."""
        from suzent_cli.errors import IndexMissing
        from suzent_cli.index.store import ReadStore, table_stamp

        paths = self._base.paths
        stamp = table_stamp(paths.index_dir)
        with self._lock:
            if stamp is None:
                self._store, self._stamp = None, None
                raise IndexMissing(f"no search index at {paths.index_dir} yet: run `suzent index` first")
            settled = time.time_ns() - stamp[2] > SETTLE_NS  # a commit in the same clock tick keeps the mtime
            if self._store is not None and stamp == self._stamp and settled:
                return self._store
            if self._store is not None and self._stamp is not None and stamp[0] == self._stamp[0]:
                try:
                    self._store.refresh()
                    self._stamp = stamp
                    return self._store
                except Exception:  # noqa: BLE001 - reopened below, which raises the real error
                    self._store = None
            self._store = ReadStore.open_existing(paths.index_dir, home=paths.home)
            self._store.keep_resident()  # the rows in memory, read in the background (ReadStore.keep_resident)
            self._stamp = stamp
            recorded = self._store.recorded_embedder()
            current = self._embedder
            if current is not None and not self._fixed_embedder and recorded != (current.name, current.dim):
                self._embedder = None  # the index was rebuilt with another embedder: the next use makes that one
            return self._store

    def state(self) -> dict[str, Any]:
        """JSON-ready, for ``status``: ``{"embedder" (name or None: not made yet), "model_loaded", "store_version"
        (the table version the store reads, or None: not open), "index_worker"}`` (:meth:`IndexWorker.state`)."""
        embedder, store = self._embedder, self._store
        try:
            version = store.version if store is not None else None
        except Exception:  # noqa: BLE001 - a status line must not fail on a table being replaced
            version = None
        return {"embedder": embedder.name if embedder is not None else None, "model_loaded": self.embedder_loaded,
                "store_version": version, "index_worker": self.index.state()}

    def preload(self) -> bool:
        """Open the store and load the model now (one encode of a short text), so the first recall after a start is
        not the one that waits for the model. Returns True when the model is loaded; False when there is no index
        yet or it could not be loaded (the first real use then reports why). Runs in the caller's thread; see
        :meth:`start_preload` for the background one."""
        try:
            try:
                self.store()
            except Exception:  # noqa: BLE001 - no index yet: the model still loads (the first capture needs it)
                pass
            self.embedder.encode(["suzent warm-up"])
        except Exception:  # noqa: BLE001 - best effort; the first real use raises the real error
            return False
        finally:
            self._preloaded.set()
        return self.embedder_loaded

    def start_preload(self) -> None:
        """Load the model in a daemon thread (:meth:`preload`), once per process; later calls do nothing. Never
        joined: a stop during the load does not wait for it."""
        with self._lock:
            if self._preload is not None:
                return
            self._preload = threading.Thread(target=self.preload, name="suzent-preload", daemon=True)
        self._preload.start()

    def wait_preload(self, stop: threading.Event) -> None:
        """Block until a started preload has ended (loaded or failed) or ``stop`` is set; at once when none was
        started. The chain waits here so its first pass never competes with the model load for the two cores a
        starting server's first requests need."""
        while self._preload is not None and not self._preloaded.is_set() and not stop.is_set():
            self._preloaded.wait(0.2)

    def search_embedder(self, mode: str) -> tuple[Any, str | None]:
        """``(embedder, note)`` for a request's search in ``mode`` that must answer now (a hook, MCP): the warm
        embedder when the model is in memory (or ``mode`` is fts: None); while the model is still loading, None
        and a ``note`` saying the answer is full-text only (the caller searches in fts mode), and the preload is
        started if nobody started it. Once a preload has failed, the embedder itself (raising
        :class:`~suzent_cli.errors.EmbedderUnavailable` with the real reason, as before)."""
        if mode == "fts":
            return None, None
        embedder = self.embedder  # made, not loaded: the model loads at its first encode
        if embedder.loaded or mode != "hybrid" or self._preloaded.is_set():
            return embedder, None
        self.start_preload()
        return None, "full-text only: the model is still loading"

    def forget_store(self) -> None:
        """Drop the open store: the next :meth:`store` opens the table again (after a read failed on it)."""
        with self._lock:
            self._store, self._stamp = None, None

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop the index worker after its current pass (up to ``timeout`` seconds) and drop the store."""
        self.index.close(timeout)
        self.forget_store()
