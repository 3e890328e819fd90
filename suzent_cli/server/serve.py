"""``suzent serve``: the one long-lived process of a home.

Life of the process (:func:`serve`):

1. ``<home>/server/`` is made 0700 and ``serve.lock`` taken without waiting, for the whole life: a second server
   on the same home stops with :class:`~suzent_cli.server.runtime.ServerRunning` (exit 3) naming the running pid.
2. MCP's TCP socket is bound on 127.0.0.1 (a taken port: exit 2). The warm state, the backend and both apps are
   made, and the backend prepared (:meth:`~suzent_cli.server.ops.LocalBackend.prepare`: the store opened, LanceDB
   and the request modules imported); only then is the local API's Unix socket bound (mode 0600; a leftover socket
   file from a killed server is unlinked first: holding the lock proves nobody serves it). So a hook that finds the
   socket is answered at once; one that comes earlier takes the cold path, as with no server.
3. ``serve.json`` is written (pid, started, version, mcp_url, socket, port, started_by, auto, chain,
   idle_exit_seconds) and the auto-start record notes a server that serves
   (:func:`~suzent_cli.server.autostart.note_listening`; after a minute of serving, no failed start); the chain,
   watcher and idle threads start, and a daemon thread loads the model
   (:meth:`~suzent_cli.server.warm.Warm.start_preload`; requests meanwhile answer full-text, and the chain's
   first pass waits for the load). Once the preload has ended the record notes the server ready
   (:func:`~suzent_cli.server.autostart.note_ready`), and a server without the chain but with the watcher (an
   auto-started one) queues one incremental index pass of what changed before its watcher started
   (:func:`settle_thread`).
4. Both ASGI apps (:mod:`suzent_cli.server.http`) run on one event loop as two ``uvicorn.Server`` instances whose
   own signal handling is switched off: this module's handler takes SIGTERM/SIGINT.
5. On the first signal both servers finish their requests (at most :data:`GRACE` seconds), the watcher stops, the
   chain finishes its current stage (never a write cut in half), ``warm.close()`` runs, the socket and
   ``serve.json`` are removed, the clean exit is recorded (:func:`~suzent_cli.server.autostart.note_exit`) and the
   lock released. Exit 0 for SIGTERM, 130 for SIGINT; a second signal exits at once with 128+signal (every write
   suzent makes is whole; the next start replaces the stale socket). The idle exit (``idle_exit``: no request on
   the local API or MCP for that long, :func:`idle_thread`) stops it as SIGTERM does, exit 0.

Crash (SIGKILL, power loss): the kernel releases the lock; the socket and ``serve.json`` stay behind and the next
start or ``suzent status`` sees the lock free and treats them as stale. The server writes memory only through the
library paths the CLI uses (archive appender, indexer under its lock), so CLI commands beside it stay safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suzent_cli import __version__, errors
from suzent_cli.config import Settings, check_value, setting
from suzent_cli.server import autostart, paths, runtime
from suzent_cli.server.stats import Stats, now_iso
from suzent_cli.signals import Signals

log = logging.getLogger("suzent.serve")

GRACE = 3.0  # seconds the listeners wait for open requests (an MCP event stream never ends by itself) at shutdown
WATCH_SLICE_MS = 2000  # the watcher looks for new tier folders (and the stop flag) at least this often
WAIT_SLICE = 0.2  # seconds between looks at the stop flag while waiting for a tier folder
IDLE_SLICE = 30.0  # seconds between the idle thread's looks at the clock (less for a short idle time)


@dataclasses.dataclass
class Options:
    """What ``suzent serve`` was asked to run: ``port`` (0 = any free), ``chain`` (the unattended chain on its
    interval), ``watch`` (reindex vault and log edits as they happen)."""

    port: int
    chain: bool = True
    watch: bool = True


def port_of(settings: Settings, flag: str | None) -> int:
    """The MCP port: ``--port`` when given, else ``serve.port``; checked 0..65535 (ConfigInvalid, exit 2)."""
    row = setting("serve.port")
    return int(check_value(row, flag if flag is not None else settings.serve_port,
                           "--port" if flag is not None else row.key))


def idle_exit_of(settings: Settings, flag: str | None, *, auto: bool) -> float | None:
    """Seconds without a request after which the server exits, None for never: ``--idle-exit MINUTES`` when given,
    else ``serve.idle_minutes`` for an auto-started server (``--auto``), else never; 0 minutes means never.
    Checked 0..525600 minutes (ConfigInvalid, exit 2)."""
    row = setting("serve.idle_minutes")
    if flag is None and not auto:
        return None
    minutes = check_value(row, flag if flag is not None else settings.serve_idle_minutes,
                          "--idle-exit" if flag is not None else row.key)
    return float(minutes) * 60 if minutes else None


def idle_thread(stats: Stats, seconds: float, stop: threading.Event, request: Callable[[], None],
                say: Callable[[str], None]) -> None:
    """Stop the server (``request()``, as SIGTERM does: requests finish) once ``stats.idle_seconds()`` reaches
    ``seconds`` (no request on the local API or MCP for that long); returns when ``stop`` is set."""
    slice_ = max(0.1, min(IDLE_SLICE, seconds / 4))
    while not stop.wait(slice_):
        if stats.idle_seconds() >= seconds:
            say(f"suzent serve: no request for {seconds / 60:g} min: stopping (idle exit)")
            request()
            return


def _acquire(home: Path):
    """``serve.lock`` of ``home``, held (a :class:`filelock.FileLock`); raises :class:`ServerRunning`."""
    from filelock import Timeout

    from suzent_cli.files import file_lock

    lock = file_lock(paths.lock_path(home), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        pid = runtime.running_pid(home)
        raise runtime.ServerRunning(f"a suzent serve is already running on {home}"
                                    + (f" (pid {pid})" if pid else "") + "; one server per home") from None
    return lock


class _Stopper(Signals):
    """SIGTERM/SIGINT for the server (:class:`suzent_cli.signals.Signals`): the first one asks every part to stop
    (the listeners, the watcher, the chain); a second one exits at once with 128+signal."""

    second_note = ""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop
        self.servers: list[Any] = []

    def request(self) -> None:
        """Stop everything (also called when a listener ends on its own)."""
        self.stop.set()
        for server in self.servers:
            server.should_exit = True

    def on_first(self) -> None:
        self.request()


def _uvicorn_server(app: Any, *, lifespan: str):
    """A ``uvicorn.Server`` for ``app`` that leaves signals alone (uvicorn 0.54 installs its own SIGINT/SIGTERM
    handlers in ``serve()`` through ``capture_signals`` and re-raises the signal after shutdown; ours decide),
    logs no access lines and waits at most :data:`GRACE` seconds for open requests at shutdown."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):
            yield

    config = uvicorn.Config(app, lifespan=lifespan, access_log=False, log_config=None, log_level="warning",
                            timeout_graceful_shutdown=GRACE, server_header=False)
    return Server(config)


async def _serve_both(stopper: _Stopper, listeners: list[tuple[Any, Any]]) -> None:
    """Run each ``(uvicorn server, socket)`` until ``stopper.stop`` is set (a signal, or the caller's event); when
    one listener ends (or fails to start), stop all."""
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in listeners]
    stopped = asyncio.create_task(_wait_event(stopper.stop))
    await asyncio.wait([*tasks, stopped], return_when=asyncio.FIRST_COMPLETED)
    stopper.request()
    stopped.cancel()
    for task in tasks:
        with contextlib.suppress(Exception):
            await task
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def _wait_event(event: threading.Event) -> None:
    while not event.is_set():
        await asyncio.sleep(WAIT_SLICE)


def chain_thread(warm: Any, config: Any, engine: str, stop: threading.Event, stats: Stats) -> None:
    """The unattended chain (what ``suzent loop`` does): :func:`suzent_cli.run.run_pass` with the warm embedder and
    settings with today refreshed, every ``config.interval_seconds`` (at once again when the dream is far behind),
    until ``stop`` is set. ``stop`` is asked between stages, so a stage is never cut in half. A failed pass (or
    one that raises) is recorded as the last error and the loop goes on: it never ends the server."""
    from suzent_cli.run import run_pass

    passes = 0
    if hasattr(warm, "wait_preload"):  # the first pass waits for the model load: a starting server's cores go to
        stats.set_chain(state="waiting for the model")  # its first requests and the load, not to a dream too
        warm.wait_preload(stop)
    while not stop.is_set():
        stats.set_chain(state="running", pass_started=now_iso())
        behind = False
        try:
            report = run_pass(warm.settings(), config, engine=engine, stop=stop.is_set, embedder=_embedder(warm))
            passes += 1
            behind = report.behind
            stats.set_chain(passes=passes, last_pass={"started": report.started, "exit_code": report.exit_code,
                                                      "seconds": round(report.seconds, 3),
                                                      "outcomes": {s.name: s.outcome for s in report.stages}})
            failed = next((s for s in report.stages if not s.ok), None)
            if failed is not None:
                stats.error("chain", f"{failed.name}: {failed.error or failed.outcome}")
                log.warning("chain pass %d: %s failed: %s", passes, failed.name, failed.error)
        except Exception as exc:
            log.exception("chain pass failed")
            stats.error("chain", exc)
        if stop.is_set():
            break
        if not behind:
            stats.set_chain(state="waiting", next_pass=_after(config.interval_seconds))
            stop.wait(config.interval_seconds)
    stats.set_chain(state="stopped")


def settle_thread(home: Path, warm: Any, stop: threading.Event, stats: Stats, *, catch_up: bool) -> None:
    """After the start-up: wait for the model preload to end (:meth:`~suzent_cli.server.warm.Warm.wait_preload`),
    record the server as started (:func:`~suzent_cli.server.autostart.note_ready`: killed from now on, it is
    restarted at once), then, with ``catch_up`` (the watcher on, the chain off: an auto-started server), wait until
    the watcher follows the tier folders and queue one incremental index pass of every changed source
    (``warm.index.reindex(None)``: the index worker's thread, under the indexer's lock, by mtime and content-derived
    row ids, so nothing unchanged is embedded). The watcher sees only what changes after it starts; this pass covers
    what changed before (the Stop hook that spawned the server wrote its turn on the cold path). It runs after the
    preload, so the first requests and the model load have the cores first; an index batch's encode is cut into
    slices (:class:`~suzent_cli.server.warm._SharedEmbedder`) so a request's query encode waits for one slice at
    most. Returns when done or when ``stop`` is set; never raises."""
    try:
        if hasattr(warm, "wait_preload"):
            warm.wait_preload(stop)
        if stop.is_set():
            return
        autostart.note_ready(home)
        if not catch_up:
            return
        while not stop.is_set() and (stats.snapshot().get("watcher") or {}).get("state") not in ("watching", "failed",
                                                                                                  "stopped"):
            stop.wait(WAIT_SLICE)
        if not stop.is_set():
            warm.index.reindex(None)
    except Exception as exc:  # recorded; the server goes on serving
        log.exception("settling after the start failed")
        stats.error("settle", exc)


def _embedder(warm: Any):
    """The warm embedder, or None when it cannot be made (the pass's index stage then reports why; the other
    stages need none)."""
    try:
        return warm.embedder
    except Exception:  # noqa: BLE001 - reported by the index stage, which makes its own and fails with the reason
        return None


def _after(seconds: float) -> str:
    import datetime as dt

    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def watch_filter(settings: Settings, roots: list[Path]) -> Callable[[Any, str], bool]:
    """The watcher's filter ``(change, path) -> keep``: ``.md`` files and newly added folders, none inside a hidden
    folder under a watched root (``.state``, ``.obsidian``, ``.trash``), none under the index folder, no hidden
    file (an atomic write's temp file). A new folder is kept because inotify watches it only once it has seen it:
    a page written into it at once can pass unseen, so a new folder asks for a whole pass."""
    index_dir = settings.paths.index_dir.absolute()
    resolved = [r.absolute() for r in roots]

    def keep(change: Any, path: str) -> bool:
        from watchfiles import Change

        p = Path(path)
        if p.name.startswith(".") or p == index_dir or index_dir in p.parents:
            return False
        if not p.name.endswith(".md") and not (change == Change.added and p.is_dir()):
            return False
        for root in resolved:
            if root in p.parents:
                return not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])
        return False

    return keep


def watch_roots(settings: Settings) -> list[Path]:
    """The tier folders the watcher follows that exist now: the daily-log archive and the vault."""
    return [p for p in (settings.paths.archive_dir, settings.paths.vault_dir) if p.is_dir()]


def changes_to_reindex(changes: set[tuple[Any, str]]) -> list[Path] | None:
    """What to reindex for a batch of watchfiles changes: None (every changed source, by mtime and size) when a
    file was deleted (the indexer drops a deleted file's rows in a whole pass) or a folder was added (see
    :func:`watch_filter`), else the sorted changed or added ``.md`` files."""
    from watchfiles import Change

    if any(change == Change.deleted or not path.endswith(".md") for change, path in changes):
        return None
    return sorted({Path(path) for _, path in changes})


def watcher_thread(settings: Settings, warm: Any, stop: threading.Event, stats: Stats) -> None:
    """Follow the archive and the vault with :func:`watchfiles.watch` until ``stop``: each batch of ``.md``
    changes (see :func:`watch_filter`) goes to ``warm.index.reindex`` without waiting (the index worker coalesces
    batches; the indexer compares content-derived row ids before embedding, so a touch without a change costs no
    model time). Waits for a tier folder that does not exist yet and starts over when one appears. A failure is
    recorded as the last error and stops only the watcher."""
    from watchfiles import watch

    try:
        while not stop.is_set():
            roots = watch_roots(settings)
            if not roots:
                stats.set_watcher(state="waiting", paths=[])
                stop.wait(WAIT_SLICE * 10)
                continue
            stats.set_watcher(state="watching", paths=[str(r) for r in roots])
            for changes in watch(*roots, watch_filter=watch_filter(settings, roots), stop_event=stop,
                                 rust_timeout=WATCH_SLICE_MS, yield_on_timeout=True, raise_interrupt=False):
                if changes:
                    stats.add_watch_event()
                    warm.index.reindex(changes_to_reindex(changes))
                if watch_roots(settings) != roots:  # a tier folder appeared or went: watch the new set
                    break
        stats.set_watcher(state="stopped")
    except Exception as exc:
        log.exception("watcher failed")
        stats.error("watcher", exc)
        stats.set_watcher(state="failed")


def serve(settings: Settings, *, port: int, chain: bool = True, watch: bool = True, warm: Any = None,
          backend: Any = None, mcp_server: Any = None, stop: threading.Event | None = None,
          announce: Callable[[str], None] | None = None, auto: bool = False, started_by: str = "suzent serve",
          idle_exit: float | None = None, cli: Callable[..., dict] | None = None) -> int:
    """Run the server of ``settings.paths.home`` until SIGTERM/SIGINT (module doc); returns the exit code: 0 after
    SIGTERM or ``stop``, 130 after SIGINT, 1 when a listener failed.

    ``port``: MCP's TCP port on 127.0.0.1 (0: any free one; the real one is in ``serve.json`` and the MCP URL).
    ``chain``: run :func:`chain_thread`; ``watch``: run :func:`watcher_thread`. ``warm``, ``backend``,
    ``mcp_server``: the warm state (:class:`~suzent_cli.server.warm.Warm`), the backend
    (:class:`~suzent_cli.server.ops.LocalBackend`) and the MCP server (``build_mcp(backend)``); each is made here
    when not given (tests pass their own); ``warm.close()`` runs at the end (once the lock was taken) whoever made
    it. ``stop``: an event that stops the server like SIGTERM when set (the signal handlers are installed only in
    the main thread; elsewhere ``stop`` is the way). ``announce(line)`` receives the start and stop lines
    (default: stderr). ``auto``: started by :mod:`suzent_cli.server.autostart` (``suzent serve --auto``): when
    ``port`` is taken, any free port is used instead of failing. ``started_by``: who started it (``serve.json``,
    ``suzent status``). ``idle_exit``: seconds without a request after which it stops as on SIGTERM (None: never).
    ``cli``: the runner of CLI command lines relayed over the local API
    (:func:`suzent_cli.cli.relayed.run`, which ``suzent serve`` hands in; None: not offered); with it, the process
    shares one embedder per model between the warm state and the commands it runs
    (:func:`~suzent_cli.server.warm.share_process_embedders`).

    Raises, before anything is served: :class:`~suzent_cli.server.runtime.ServerRunning` (exit 3),
    :class:`~suzent_cli.server.runtime.PortInUse` and :class:`~suzent_cli.errors.ConfigInvalid` (exit 2; a bad
    ``[dream]`` setting too, when ``chain``).
    """
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    home = settings.paths.home
    config = engine = None
    if chain:
        from suzent_cli.config import check_engine, dream_config

        config = dream_config(settings)
        engine = check_engine(settings, config)
    run_dir = runtime.prepare_run_dir(home)
    lock = _acquire(home)
    stop = stop if stop is not None else threading.Event()
    sock_path = paths.socket_path(home)
    made: list[Any] = []  # sockets to close if start-up fails
    threads: list[threading.Thread] = []
    unix_id = None
    listened, exit_code = False, None
    stopper = _Stopper(stop)
    try:
        stopper.__enter__()  # from here a signal stops the start-up cleanly too (the finally below runs)
        # A killed server's serve.json must not speak for this one while it starts (the model, mcp imports: seconds):
        # a second serve would name the dead pid, status and --print-config its dead port. The full one follows.
        runtime.write_info(home, {"pid": os.getpid(), "started": now_iso(), "version": __version__})
        token = runtime.ensure_token(home, warn=lambda m: say(f"warning: {m}"))
        try:
            tcp = runtime.bind_tcp(port)
        except runtime.PortInUse:
            if not auto or port == 0:
                raise
            say(f"suzent serve: port {port} is taken (another home's server?); using any free port")
            tcp = runtime.bind_tcp(0)
        made.append(tcp)
        real_port = tcp.getsockname()[1]
        stats = Stats(mcp_url=runtime.mcp_url(real_port), socket=str(sock_path))
        if cli is not None:
            from suzent_cli.server.warm import share_process_embedders

            share_process_embedders()  # relayed commands load no second model (suzent_cli.cli.relayed)
        if warm is None:
            from suzent_cli.server.warm import Warm

            warm = Warm(settings)
        if backend is None:
            from suzent_cli.server.ops import LocalBackend

            backend = LocalBackend(warm)
        if mcp_server is None:
            from suzent_cli.server.mcp_surface import build_mcp

            mcp_server = build_mcp(backend)
        from suzent_cli.server.cancel import WatchDisconnect
        from suzent_cli.server.http import local_app, mcp_http_app

        if hasattr(backend, "prepare"):  # the store open (lancedb, pyarrow), the request modules imported: BEFORE
            backend.prepare()  # the socket exists, so a hook that finds it is answered at once, never after them
        unix, unix_id = runtime.bind_unix(sock_path, run_dir)
        made.append(unix)
        # the local API's work for a request stops when its client has gone (a hook that gave up)
        listeners = [(_uvicorn_server(WatchDisconnect(local_app(backend, stats, cli)), lifespan="off"), unix),
                     (_uvicorn_server(mcp_http_app(mcp_server, token, stats, port=real_port), lifespan="on"),
                      tcp)]
        stopper.servers = [server for server, _ in listeners]
        runtime.write_info(home, {"pid": os.getpid(), "started": stats.started, "version": __version__,
                                  "mcp_url": stats.mcp_url, "socket": str(sock_path), "port": real_port,
                                  "started_by": started_by, "auto": auto, "chain": chain,
                                  "idle_exit_seconds": idle_exit})
        autostart.note_listening(home, started_by, auto=auto)
        listened = True
        if chain:
            threads.append(threading.Thread(target=chain_thread, args=(warm, config, engine, stop, stats),
                                            name="suzent-chain", daemon=True))
        if watch:
            threads.append(threading.Thread(target=watcher_thread, args=(settings, warm, stop, stats),
                                            name="suzent-watcher", daemon=True))
        threading.Thread(target=lambda: stop.wait(autostart.STABLE) or autostart.note_stable(home),
                         name="suzent-stable", daemon=True).start()  # served long enough: no failed start
        if idle_exit:
            threads.append(threading.Thread(target=idle_thread, args=(stats, idle_exit, stop, stopper.request, say),
                                            name="suzent-idle", daemon=True))
        if hasattr(warm, "start_preload"):  # the model loads in the background now, so the first hybrid recall
            # after a start does not wait for it (requests meanwhile answer full-text: Warm.search_embedder)
            warm.start_preload()
        threads.append(threading.Thread(target=settle_thread, args=(home, warm, stop, stats),
                                        kwargs={"catch_up": watch and not chain}, name="suzent-settle", daemon=True))
        for thread in threads:
            thread.start()
        say(f"suzent serve: pid {os.getpid()} on {home}; local API {sock_path}; MCP {stats.mcp_url} "
            f"(bearer token in {paths.token_path(home)}); chain {'on' if chain else 'off'}, "
            f"watcher {'on' if watch else 'off'}; started by {started_by}"
            + (f"; exits after {idle_exit / 60:g} min without a request" if idle_exit else ""))
        code = errors.OK
        try:
            asyncio.run(_serve_both(stopper, listeners))
        except SystemExit as exc:  # uvicorn exits 3 when an app's lifespan fails to start: not "busy"
            if stopper.signum is not None and exc.code == 128 + stopper.signum:
                raise
            say(f"suzent serve: a listener failed to start (exit {exc.code}); stopping")
            code = errors.FAILED
        except Exception as exc:
            log.exception("listener failed")
            say(f"suzent serve: a listener failed: {errors.describe(exc)}; stopping")
            code = errors.FAILED
        stopper.request()
        if chain:
            say("suzent serve: stopping (the chain finishes its current stage)…")
        for thread in threads:
            thread.join()
        if stopper.signum is not None:
            say(f"suzent serve: stopped ({signal.Signals(stopper.signum).name})")
            if code == errors.OK and stopper.signum == signal.SIGINT:
                code = errors.INTERRUPTED
        exit_code = code
        return code
    finally:
        stop.set()
        for sock in made:
            with contextlib.suppress(OSError):
                sock.close()
        if warm is not None:
            with contextlib.suppress(Exception):
                warm.close()
        if unix_id is not None:
            with contextlib.suppress(OSError):
                st = os.lstat(sock_path)
                if (st.st_dev, st.st_ino) == unix_id:  # ours, not a newer server's
                    os.unlink(sock_path)
        runtime.remove_quietly(paths.info_path(home))
        if listened and exit_code is not None:
            autostart.note_exit(home, exit_code)
        lock.release()
        stopper.__exit__(None, None, None)
