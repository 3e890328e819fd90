"""The one table of exit codes, shared by every ``suzent`` command.

Every exit status a command returns is one of these. :mod:`suzent_cli.errors` gives each error class one of them,
the dream runner maps a tick's outcome to one, and ``scripts/gen_docs.py`` writes the table into every man page;
README.md's "Exit codes" table is checked against :data:`EXIT_CODES` by ``tests/test_exit_codes.py``.
"""

from __future__ import annotations

OK = 0
FAILED = 1
BAD_INPUT = 2
BUSY = 3
IDLE = 4
RUN_FAILED = 5
LIVE_DATA_CHANGED = 6
INTERRUPTED = 130
TERMINATED = 143

# (code, name, meaning): the documented table, in order.
EXIT_CODES: tuple[tuple[int, str, str], ...] = (
    (OK, "OK", "success, including \"nothing to capture\" and a dream/lint run that ingested, skipped a wedged batch "
               "or linted"),
    (FAILED, "FAILED", "an operation failed (e.g. an index error, a dry-run clone that could not be built, "
                       "retire-legacy --apply refused, forget TEXT matched no whole fact: the closest rows are "
                       "listed); nothing already stored was lost"),
    (BAD_INPUT, "BAD_INPUT", "bad input or configuration: one line `Error: …` on stderr, never a traceback "
                             "(SUZENT_DEBUG=1 shows it)"),
    (BUSY, "BUSY", "a lock could not be taken in time, or another dream holds the consolidation lock; "
                   "nothing was written"),
    (IDLE, "IDLE", "dream, lint, dry-run: nothing due (the gate stayed idle)"),
    (RUN_FAILED, "RUN_FAILED", "dream, lint, dry-run: the run failed (not productive) and was counted for a retry"),
    (LIVE_DATA_CHANGED, "LIVE_DATA_CHANGED", "dry-run: the live data changed while the dry run worked on its clone "
                                             "(a concurrent writer?)"),
    (INTERRUPTED, "INTERRUPTED", "interrupted (Ctrl-C; for loop: stopped by SIGINT, or a second SIGINT)"),
    (TERMINATED, "TERMINATED", "loop: a second SIGTERM while finishing the current stage (the first one stops "
                               "cleanly with 0)"),
)

CODES: frozenset[int] = frozenset(code for code, _, _ in EXIT_CODES)


def name_of(code: int) -> str:
    """The table's name for ``code`` (``"IDLE"`` for 4); raises ``KeyError`` for a code not in the table."""
    return {c: n for c, n, _ in EXIT_CODES}[code]
