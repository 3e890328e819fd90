"""``suzent serve`` and ``suzent mcp``: one warm process per home that agents reach in milliseconds.

Modules (one job each):

* :mod:`.paths` — where the server's runtime files live in the home (socket, lock, token, info); stdlib only.
* :mod:`.protocol` — the operations every backend offers (:class:`~.protocol.Backend`), their argument and result
  shapes, and how an error crosses the socket; light (no heavy import).
* :mod:`.client` — the light client of the local API on the Unix socket (:class:`~.client.RemoteBackend`), used by
  the hooks, the CLI and ``suzent mcp`` when a server runs; imports nothing heavy.
* :mod:`.warm` — :class:`~.warm.Warm`: the warm state of a long-lived process: settings with today kept current,
  one shared embedder (loaded at the first encode), one LanceDB read store that follows every commit (this
  process's and a CLI's beside it), and :class:`~.warm.IndexWorker`, the one index thread that is the process's
  only path to the indexer (requests coalesce; the indexer's file lock serializes it with a CLI ``suzent index``).
* :mod:`.ops` — :class:`~.ops.LocalBackend`: the operations themselves, on warm state, through the library the CLI
  uses (recall, the capture write path, forget, status, the vault read-only, the Claude Code hooks and the
  SessionStart briefing of :mod:`suzent_cli.hooks.session_start`).
* :mod:`.mcp_surface` — the MCP tools and resources over any backend (official ``mcp`` SDK), and
  :class:`~.mcp_surface.FallbackBackend`: ``suzent mcp``'s relay to a running server that carries on in-process when
  the server goes away.
* :mod:`.http` — the ASGI apps: the local API (Unix socket, no token: the socket is mode 0600) and MCP over
  streamable HTTP on 127.0.0.1 (bearer token required).
* :mod:`.serve` — the process: one per home (a lock), both listeners, the watcher, the unattended chain on its
  interval, clean shutdown on SIGTERM/SIGINT.
* :mod:`.runtime` — the runtime files and sockets: the private run folder, the token, ``serve.json``, binding the
  0600 Unix socket and the 127.0.0.1 TCP socket, whether a server runs (``suzent status``), ``--print-config``.
* :mod:`.autostart` — the server starts itself: :func:`~.autostart.ensure` (called by the hooks' fast path,
  ``suzent mcp`` and relayed CLI commands when no server answers) forks ``suzent serve --auto`` detached, once per
  back-off, under its own decision lock; stdlib only.
* :mod:`.stats` — what a running server knows about itself (requests per op, last error, chain and watcher state):
  the ``server`` block of ``/v1/status`` and ``suzent status``.

The server is never a second writer: every write goes through the same library path the CLI uses (the archive's
appender, the indexer under its lock), so CLI commands keep working beside a running server.
"""
