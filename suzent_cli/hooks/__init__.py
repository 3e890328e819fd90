"""Agent hooks: suzent as a memory for coding agents that call a command at lifecycle points.

* :mod:`.claude_code` — the Claude Code hooks: ``capture --from claude-code`` captures the turns a session has not
  captured before, ``recall --from claude-code`` answers a ``UserPromptSubmit`` with the relevant memories as
  ``additionalContext``. The commands' stdin, stdout, warnings and hard exit are :mod:`suzent_cli.cli.hooks`; this
  package returns data and never prints or exits. Their parts:

  * :mod:`.transcript` — Claude Code's hook payloads and JSONL transcripts, read into entries and cut into turns;
  * :mod:`.capture` — each session's captured position (``<vault>/.state/claude_code.json``) and the capture of
    its new complete turns;
  * :mod:`.recall` — the recall hook: the prompt's memories as ``additionalContext``.
* :mod:`.stdin` — the one rule for reading a hook's stdin (all of it within a time bound); stdlib only, so the
  fast path that answers a hook through a running server (:mod:`suzent_cli.cli.fasthook`) uses it too.
* :mod:`.spool` — payloads waiting to be captured (``<vault>/.state/spool/``, or ``<home>/spool/`` when that
  cannot be written or the config is broken): written before any capture work, removed only once their turns are
  captured, drained by the next hook call or ``suzent run``.

Importing this package (or any of its modules) loads nothing heavy: no torch, lancedb or anthropic until a capture
or recall actually runs.
"""
