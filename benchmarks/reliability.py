"""The reliability corpus: bad input at every entry point, state file and tier, checked for three verdicts.

Each :class:`Case` copies a small template home (built once per run with real CLI calls and the model-free ``hash``
embedder, so the corpus runs fast and offline), breaks something in it (``setup``), runs real
``python -m suzent_cli`` subprocesses against it (``steps``) with a timeout, and checks:

* **traceback** — no ``Traceback`` in stdout/stderr and every exit status is one of :data:`errors.CODES`
  (a Python crash exits 1 *with* a traceback; a signal death exits negative); a hook (``--from claude-code``)
  always exits 0;
* **hang** — every step finished within its timeout (the process group is killed then);
* **lost/resurfaced** — daily logs byte-identical to before (a capture case may only append to them), the page a
  person wrote and MEMORY.md's manual zone unchanged, every ``gone`` text (the template's forgotten fact, a case's
  forgotten text, a file outside the vault) not recalled afterwards, and every ``kept`` text still recalled when the
  case's steps all exited 0 (an index reporting success while broken loses it); plus the case's own ``check`` (a
  person's file rewritten, an empty page created, a run wedged by one bad record), reported in the same column.

Each step's argv, exit code, stdout and stderr are kept beside the case's home (``--keep DIR``: ``DIR/cases/NAME/``).

Usage::

    python benchmarks/reliability.py [--only PATTERN] [--jobs N] [--keep]

Prints a table (case, entry point, exit codes, seconds, traceback?, hang?, lost/resurfaced?, verdict), the totals and
the command line; exits 1 if any case fails. Add a case by appending a ``Case(...)`` to :data:`CASES`.

The harness serves other corpora too (``benchmarks/attack.py``, issue 24's attacks: ``main(argv, cases, …)``): a
step may start with a given umask (``Step.umask``) or be run by a runner of its own (``Step.run``: a conversation
with ``suzent mcp`` or ``suzent serve``, a process whose peak memory is measured), which records what it saw in
``Ran.extra``; a case may name the ``item`` it tests, and :func:`summary` totals the verdicts per group.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from suzent_cli import errors  # noqa: E402

TODAY = "2026-06-10"
FORGOTTEN = "Rode bus 4242 to school"  # captured, indexed and forgotten in the template: must never come back
# (not a door code: since issue 24 a code said in prose is a secret, redacted at capture, so no exact text to forget)
PERSON_PAGE = "2_Wiki/Concepts/Garden notes.md"  # a page a person wrote: no command may change it
PERSON_PAGE_TEXT = "---\ntags: [garden]\n---\n# Garden notes\n\nTomatoes go in after the last frost.\n"
MANUAL_NOTE = b"- my own note, written by hand\n"
STEP_TIMEOUT = 90.0
MEMORY_LIMIT = 6 << 30  # bytes of address space per step: a YAML alias bomb fails the case, not the machine


@dataclass
class Home:
    """A case's home: the paths of every tier (the layout ``suzent init`` creates)."""

    root: Path

    @property
    def mem(self) -> Path:
        return self.root / "sandbox" / "shared" / "memory"

    @property
    def archive(self) -> Path:
        return self.mem / "archive"

    @property
    def vault(self) -> Path:
        return self.root / "notebook"

    @property
    def state(self) -> Path:
        return self.vault / ".state"

    @property
    def index(self) -> Path:
        return self.root / "memory"

    @property
    def memory_md(self) -> Path:
        return self.mem / "MEMORY.md"

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    def log(self, day: str = TODAY) -> Path:
        return self.archive / f"{day}.md"


@dataclass
class Step:
    """One CLI call: argv after ``python -m suzent_cli`` (str or bytes items), stdin bytes, extra env; ``umask``
    the process starts with (None: the harness's own); ``run``: a runner of its own instead of :func:`run_step`'s
    one process (``run(root, step) -> Ran``: a conversation with ``suzent mcp`` or ``suzent serve``, a process
    measured; its ``args`` then only label it)."""

    args: list
    stdin: bytes | None = None
    env: dict = field(default_factory=dict)
    timeout: float = STEP_TIMEOUT
    hook: bool = False  # an agent hook: must exit 0 whatever happens
    umask: int | None = None
    run: Callable[[Path, Step], Ran] | None = None


@dataclass
class Ran:
    step: Step
    rc: int | None
    out: str
    err: str
    seconds: float
    hung: bool
    extra: dict = field(default_factory=dict)  # what a runner of its own recorded (answers, peak memory, …)


@dataclass
class Case:
    """One bad input. ``setup`` breaks the fresh home; ``steps`` are the CLI calls (a list, or a function of the
    home); ``capture`` lets the steps append to daily logs; ``gone``/``kept`` are texts that must not / must still
    be recalled afterwards; ``check`` adds problems of its own (``[]`` when fine)."""

    name: str
    entry: str
    steps: list[Step] | Callable[[Home], list[Step]]
    setup: Callable[[Home], None] = lambda h: None
    capture: bool = False
    gone: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    check: Callable[[Home, list[Ran]], list[str]] = lambda h, r: []
    note: str = ""
    item: str = ""  # the promise it tests, for corpora grouped by one (benchmarks/attack.py: issue 24's items)


def S(*args, stdin: bytes | str | None = None, hook: bool = False, timeout: float = STEP_TIMEOUT, **env) -> Step:
    """A step: ``S("capture", "--fact", "x")``; keyword arguments are extra environment variables (None unsets
    one: ``SUZENT_EMBEDDER=None`` lets config.toml's embedder count, which the environment overrides)."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return Step(list(args), data, {k: None if v is None else str(v) for k, v in env.items()}, timeout,
                hook or "claude-code" in args)


# --- running ------------------------------------------------------------------------------------------------------

def base_env(home: Path) -> dict:
    """Every step's environment. Steps run from the repository's folder, so ``capture.scope`` is ``global`` (as in
    the test suite, tests/conftest.py): a fact would otherwise belong to suzent's own checkout as a project and be
    hidden from a hook whose payload names another ``cwd``; the corpus is about what gets in, not about scopes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(SUZENT_HOME=str(home), SUZENT_EMBEDDER="hash", SUZENT_TODAY=TODAY, NO_COLOR="1", COLUMNS="120",
               HOME=str(home.parent / "user-home"), PYTHONPATH=str(REPO), SUZENT_SERVE_AUTOSTART="0",
               SUZENT_SCOPE="global")
    return env


def _limited() -> list[str]:
    """``prlimit`` capping a step's address space (no preexec_fn: cases run in threads), or nothing without it."""
    tool = shutil.which("prlimit")
    return [tool, f"--as={MEMORY_LIMIT}"] if tool else []


def step_env(home: Path, step: Step) -> dict:
    """The environment of ``step`` run on ``home``: :func:`base_env` with the step's variables (None unsets one)."""
    env = base_env(home)
    env.update(step.env)
    return {k: v for k, v in env.items() if v is not None}  # S(..., VAR=None) unsets VAR


def popen(home: Path, step: Step, args: list | None = None, **kw) -> subprocess.Popen:
    """``python -m suzent_cli ARGS`` (default: the step's) for ``step`` on ``home``, in its own process group, with
    the step's environment, umask and the address-space cap; pipes for stdin, stdout and stderr unless ``kw``
    says otherwise. Raises OSError when it cannot start."""
    pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pipes.update(kw)
    return subprocess.Popen([*_limited(), sys.executable, "-m", "suzent_cli", *(step.args if args is None else args)],
                            cwd=REPO, env=step_env(home, step), start_new_session=True,
                            umask=-1 if step.umask is None else step.umask, **pipes)


def run_step(home: Path, step: Step) -> Ran:
    """Run one step in its own process group; kill the group at the timeout (then ``hung``). A step with a runner
    of its own (``step.run``) is run by it."""
    if step.run is not None:
        return step.run(home, step)
    t0 = time.monotonic()
    try:
        proc = popen(home, step)
    except OSError as exc:  # the case itself is broken (e.g. an argument over the kernel's 128 KiB limit)
        return Ran(step, 127, "", f"harness: could not start the step: {exc}", 0.0, False)
    try:
        out, err = proc.communicate(step.stdin or b"", timeout=step.timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        hung = True
    return Ran(step, None if hung else proc.returncode, out.decode("utf-8", "replace"),
               err.decode("utf-8", "replace"), time.monotonic() - t0, hung)


def recall_texts(home: Path, query: str) -> str:
    """The contents of every hit ``recall --json QUERY`` returns, as one string ("" when recall fails)."""
    r = run_step(home, S("recall", "--json", query))
    try:
        hits = json.loads(r.out).get("hits", []) if r.rc == 0 else []
    except (ValueError, AttributeError):
        return ""
    return "\n".join(str(h.get("content", "")) for h in hits if isinstance(h, dict))


# --- the template home --------------------------------------------------------------------------------------------

TEMPLATE_STEPS = [
    S("init"),
    S("capture", "--date", "2026-06-08", "--time", "09:00", "--session", "s1",
      "--fact", "[personal] Lives in Lyon", "--fact", "[preference] Prefers green tea"),
    S("capture", "--date", "2026-06-09", "--time", "10:00", "--session", "s2",
      "--fact", "[work] Works as a nurse in Porto", "--fact", "[preference] Likes hiking on weekends"),
    S("dream", "--force", "--engine", "rules"),
    S("capture", "--time", "08:00", "--fact", f"[personal] {FORGOTTEN}", "--fact", "[project] Building a kayak"),
    S("index"),
    S("forget", FORGOTTEN),
]


def build_template(root: Path) -> Home:
    """The home every case starts from: two dreamt days, today's log, an index, a forgotten fact, a person's page,
    a manual note in MEMORY.md. Raises RuntimeError when a step fails (the corpus cannot run then)."""
    home = Home(root)
    for step in TEMPLATE_STEPS:
        r = run_step(root, step)
        if r.rc != 0:
            raise RuntimeError(f"template step {step.args} failed ({r.rc}): {r.err.strip()[-400:]}")
    page = home.vault / PERSON_PAGE
    page.write_text(PERSON_PAGE_TEXT, encoding="utf-8")
    home.memory_md.write_bytes(home.memory_md.read_bytes() + MANUAL_NOTE)
    r = run_step(root, S("index"))
    if r.rc != 0:
        raise RuntimeError(f"template index failed: {r.err.strip()[-400:]}")
    return home


# --- verdicts -----------------------------------------------------------------------------------------------------

def snapshot(home: Home) -> dict:
    logs = {p.name: p.read_bytes() for p in sorted(home.archive.glob("*.md")) if p.is_file()} \
        if home.archive.is_dir() else {}
    page = home.vault / PERSON_PAGE
    return {"logs": logs, "page": page.read_bytes() if page.is_file() else None}


def manual_zone(data: bytes) -> bytes:
    marker = b"<!-- /memory:generated -->"
    i = data.find(marker)
    return data[i + len(marker):] if i >= 0 else data


def data_problems(case: Case, home: Home, before: dict, before_md: bytes | None, runs: list[Ran]) -> list[str]:
    problems: list[str] = []
    after = snapshot(home)
    for name, data in before["logs"].items():
        now = after["logs"].get(name)
        if now is None:
            problems.append(f"daily log {name} disappeared")
        elif now != data and not (case.capture and now.startswith(data)):
            problems.append(f"daily log {name} changed" + (" (not an append)" if case.capture else ""))
    if before["page"] is not None and after["page"] != before["page"]:
        problems.append(f"the person's page {PERSON_PAGE} changed")
    if before_md is not None and MANUAL_NOTE in before_md:
        now_md = home.memory_md.read_bytes() if home.memory_md.is_file() else b""
        if MANUAL_NOTE not in manual_zone(now_md):
            problems.append("MEMORY.md's manual note was lost")
    for text in (FORGOTTEN, *case.gone):
        if text.lower() in recall_texts(home.root, text).lower():
            problems.append(f"resurfaced: {text!r} is recalled")
    if all(r.rc == 0 for r in runs):
        for text in case.kept:
            if text.lower() not in recall_texts(home.root, text).lower():
                problems.append(f"lost: {text!r} no longer recalled after exit 0")
    problems += case.check(home, runs)
    return problems


@dataclass
class Verdict:
    case: Case
    rcs: list
    seconds: float
    traceback: list[str]
    hang: bool
    lost: list[str]

    @property
    def ok(self) -> bool:
        return not self.traceback and not self.hang and not self.lost


def crash_problems(runs: list[Ran]) -> list[str]:
    out = []
    for r in runs:
        label = " ".join(a if isinstance(a, str) else repr(a) for a in r.step.args)[:60]
        if "Traceback" in r.out or "Traceback" in r.err:
            last = [ln for ln in r.err.strip().splitlines() if ln.strip()][-1:] or ["?"]
            out.append(f"`{label}`: traceback ({last[0][:120]})")
        elif r.rc is not None and r.rc not in errors.CODES:
            out.append(f"`{label}`: exit {r.rc} is not a documented code")
        elif r.rc is not None and r.step.hook and r.rc != 0:
            out.append(f"`{label}`: a hook exited {r.rc}, not 0")
    return out


def run_case(case: Case, template: Path, workdir: Path) -> Verdict:
    root = workdir / re.sub(r"[^A-Za-z0-9_.-]", "_", case.name) / "home"
    root.parent.mkdir(parents=True)
    shutil.copytree(template, root, symlinks=True)
    home = Home(root)
    case.setup(home)
    before = snapshot(home)
    before_md = home.memory_md.read_bytes() if home.memory_md.is_file() else None
    steps = case.steps(home) if callable(case.steps) else case.steps
    runs = []
    for i, step in enumerate(steps):
        runs.append(run_step(root, step))
        (root.parent / f"step{i}.log").write_text(
            f"$ suzent {' '.join(map(repr, step.args))}\nexit {runs[-1].rc}\n--- stdout\n{runs[-1].out}\n"
            f"--- stderr\n{runs[-1].err}", encoding="utf-8")
        if runs[-1].hung:
            break
    seconds = sum(r.seconds for r in runs)
    hang = any(r.hung for r in runs)
    lost = [] if hang else data_problems(case, home, before, before_md, runs)
    return Verdict(case, [("hang" if r.hung else r.rc) for r in runs], seconds, crash_problems(runs), hang, lost)


# --- setups -------------------------------------------------------------------------------------------------------

def write(rel: str, data: bytes | str, base: str = "state") -> Callable[[Home], None]:
    """A setup writing ``data`` to ``rel`` under the home's ``state`` (default), ``vault``, ``archive``, ``mem``,
    ``index`` or ``root`` directory (parents created; a directory or file already there is replaced)."""
    def setup(h: Home) -> None:
        p = getattr(h, base) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return setup


def make_dir(rel: str, base: str = "state") -> Callable[[Home], None]:
    def setup(h: Home) -> None:
        p = getattr(h, base) / rel
        if p.is_file() or p.is_symlink():
            p.unlink()
        p.mkdir(parents=True, exist_ok=True)
        (p / "junk").write_bytes(b"\x00")
    return setup


def append(rel: str, data: bytes | str, base: str = "state") -> Callable[[Home], None]:
    def setup(h: Home) -> None:
        p = getattr(h, base) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "ab") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
    return setup


def both(*setups: Callable[[Home], None]) -> Callable[[Home], None]:
    def setup(h: Home) -> None:
        for s in setups:
            s(h)
    return setup


def config(text: str) -> Callable[[Home], None]:
    return write("config.toml", text, "root")


def alias_bomb(levels: int) -> str:
    """Frontmatter whose keys the indexer, the dream and lint read (tags, status, review, …) each expand to 9**levels
    items: cheap to load (aliases are shared references), huge once walked, copied or dumped."""
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    lines += [f"{key}: *a{levels}" for key in ("tags", "aliases", "status", "verified", "stale_after", "review",
                                               "updated", "folded_through")]
    return "---\n" + "\n".join(lines) + "\n---\n# Bomb\n\nSome text.\n"


def lance_files(h: Home, suffix: str) -> list[Path]:
    return sorted(p for p in h.index.rglob(f"*{suffix}") if p.is_file())


def truncate_fragment(h: Home) -> None:
    for p in lance_files(h, ".lance")[:1]:
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2])


def delete_fragment(h: Home) -> None:
    for p in lance_files(h, ".lance")[:1]:
        p.unlink()


def delete_table(h: Home) -> None:
    for p in sorted(h.index.glob("*.lance")):
        shutil.rmtree(p)


def table_without_manifest(h: Home) -> None:
    """What a first index pass that failed on a full disk leaves: the table folder, ``_versions/`` and
    ``_transactions/`` in it, no manifest."""
    delete_table(h)
    table = h.index / "archival_memories.lance"
    (table / "_versions").mkdir(parents=True)
    (table / "_transactions").mkdir()


def manifests_deleted(h: Home) -> None:
    """The table's data and transaction files without any manifest: no committed version left."""
    for p in sorted(h.index.glob("*.lance/_versions/*.manifest")):
        p.unlink()


def vault_symlink_out(h: Home) -> None:
    (h.vault / "2_Wiki" / "Concepts" / "Passwords.md").symlink_to("/etc/passwd")


def nonutf8_name(h: Home) -> None:
    d = os.fsencode(h.vault / "2_Wiki" / "Concepts")
    with open(d + b"/Caf\xe9 notes.md", "wb") as fh:
        fh.write(b"# Cafe\n\nThe cafe on the corner opens at seven.\n")


def case_colliding(h: Home) -> None:
    (h.vault / "3_Personal" / "PREFERENCES.md").write_text("# PREFERENCES\n\nMy own list.\n", encoding="utf-8")
    (h.vault / "2_Wiki" / "Concepts" / "tools.md").write_text("# tools\n\n- vim\n", encoding="utf-8")
    (h.vault / "2_Wiki" / "Concepts" / "Tools.md").write_text("# Tools\n\n- emacs\n", encoding="utf-8")


def transcript(h: Home, lines: list[bytes]) -> Path:
    p = h.root.parent / "transcript.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


def turn(role: str, text: str, ts: str = "2026-06-10T08:00:00Z", uid: str = "u1") -> bytes:
    return json.dumps({"type": role, "uuid": uid, "timestamp": ts, "sessionId": "cc1",
                       "message": {"role": role, "content": text}}).encode()


def hook_payload(path: Path, event: str = "Stop") -> bytes:
    return json.dumps({"session_id": "cc1", "transcript_path": str(path), "hook_event_name": event,
                       "cwd": "/tmp"}).encode()


def capture_cc(lines: Callable[[Home], list[bytes]]) -> Callable[[Home], list[Step]]:
    def steps(h: Home) -> list[Step]:
        return [S("capture", "--from", "claude-code", stdin=hook_payload(transcript(h, lines(h))))]
    return steps


def no_case_twin(rel: str) -> Callable[[Home, list[Ran]], list[str]]:
    """A check: no page beside the person's ``rel`` whose name differs from it only by case."""
    def check(h: Home, runs: list[Ran]) -> list[str]:
        mine = h.vault / rel
        return [f"the dream made {p.name} beside the person's {mine.name}" for p in mine.parent.iterdir()
                if p.name != mine.name and p.name.lower() == mine.name.lower()]
    return check


def settles(h: Home, runs: list[Ran]) -> list[str]:
    """A check: the last step (a dream or run again) is not failing: one bad record must not wedge every run."""
    return [] if runs and runs[-1].rc in (0, 4) else [f"wedged: the run after it still exits {runs[-1].rc}"]


def keep_bytes(rel: str, data: bytes, base: str = "vault") -> tuple[Callable[[Home], None],
                                                                       Callable[[Home, list[Ran]], list[str]]]:
    """A (setup, check) pair: write a person's file ``rel`` and require it unchanged afterwards."""
    def setup(h: Home) -> None:
        p = getattr(h, base) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    def check(h: Home, runs: list[Ran]) -> list[str]:
        p = getattr(h, base) / rel
        if not p.is_file():
            return [f"{rel} (a person's file) was deleted"]
        return [] if p.read_bytes() == data else [f"{rel} (a person's file) was rewritten"]
    return setup, check


LIST_FM = keep_bytes("2_Wiki/Concepts/Listy.md", b"---\n- one\n- two\n---\n# Listy\n\nA person's list page.\n")
NO_MARKER_MD = keep_bytes("MEMORY.md", b"# Long-term Memory\n\n- Prefers tea\n\n*Last updated: 2026-01-02*\n", "mem")
BINARY_MD = keep_bytes("MEMORY.md", b"\x00\xff\xfe garbage \x80\n<!-- /memory:generated\n", "mem")
BOMB = alias_bomb(9)
NEXT_DAY = {"SUZENT_TODAY": "2026-06-11", "SUZENT_NOW": "2026-06-11T09:00Z"}


def next_day(*args, **kw) -> Step:
    """A step run on the day after the template's today, so today's log (with the forgotten fact) is due."""
    step = S(*args, **kw)
    step.env.update(NEXT_DAY)
    return step


DREAM_AGAIN = next_day("dream", "--force", "--engine", "rules")


# --- the corpus ---------------------------------------------------------------------------------------------------

CASES: list[Case] = [
    # init and global options
    Case("init-twice", "init", [S("init"), S("init")]),
    Case("init-home-is-a-file", "init", lambda h: [S("init", SUZENT_HOME=_file(h, "a-file", "x"))]),
    Case("init-config-wrong-types", "init", [S("init", SUZENT_EMBEDDER=None)], config("[index]\nembedder = 5\n")),
    Case("global-bad-today", "status", [S("--today", "2026-02-30", "status", "--no-index")]),
    Case("global-bad-now", "dream", [S("--now", "yesterday-ish", "dream")]),
    # capture --fact / --facts-from / --date / --session / --time
    Case("capture-unclosed-bracket", "capture --fact", [S("capture", "--fact", "[personal Lives nowhere")],
         capture=True),
    Case("capture-facts-from-one-bad-line", "capture --facts-from",
         lambda h: [S("capture", "--facts-from", str(_file(h, "facts.txt", b"[personal] Has a cat\n"
                                                                          b"[personal Lives nowhere\n"
                                                                          b"[work] Uses Rust\n")))],
         capture=True),
    Case("capture-facts-from-binary", "capture --facts-from",
         lambda h: [S("capture", "--facts-from", str(_file(h, "bin.txt", b"\x00\x01\xff\xfe[personal] x\x00\n\x80\n")))],
         capture=True),
    Case("capture-facts-from-missing", "capture --facts-from", [S("capture", "--facts-from", "/nonexistent/f.txt")]),
    Case("capture-facts-from-directory", "capture --facts-from", [S("capture", "--facts-from", "/tmp")]),
    Case("capture-facts-from-stdin-huge-line", "capture --facts-from",
         [S("capture", "--facts-from", "-", stdin=b"[personal] " + b"a" * 3_000_000 + b"\n")], capture=True),
    Case("capture-line-separators", "capture --fact",
         [S("capture", "--fact", "[personal] Lives in Lisbon\u2028now\u2029really\u0085ok")], capture=True),
    Case("capture-empty-fact", "capture --fact", [S("capture", "--fact", "")], capture=True),
    Case("capture-control-bytes-fact", "capture --fact", [S("capture", "--fact", "[personal] \x1b[31mred\x07\x08")],
         capture=True),
    Case("capture-session-control-bytes", "capture --session",
         [S("capture", "--session", "s\x1b[2J\n# Heading\x07", "--fact", "[personal] Has a dog")], capture=True),
    Case("capture-session-invalid-utf8", "capture --session",
         [S("capture", b"--session", b"s\xff\xfe", "--fact", "[personal] Has a bike")], capture=True),
    Case("capture-date-invalid", "capture --date", [S("capture", "--date", "2026-13-45", "--fact", "[personal] x")],
         capture=True),
    Case("capture-date-far-future", "capture --date", [S("capture", "--date", "9999-12-31", "--fact", "[personal] y")],
         capture=True),
    Case("capture-date-backfill-consolidated", "capture --date",
         [S("capture", "--date", "2026-06-08", "--fact", "[personal] Has a garden"), DREAM_AGAIN],
         capture=True, kept=("Lives in Lyon",)),
    Case("capture-time-invalid", "capture --time", [S("capture", "--time", "25:99", "--fact", "[personal] z")],
         capture=True),
    Case("capture-today-log-is-directory", "capture --fact", [S("capture", "--fact", "[personal] Has a boat")],
         make_dir(f"{TODAY}.md", "archive"), capture=True),
    Case("capture-archive-is-a-file", "capture --fact", [S("capture", "--fact", "[personal] Has a van")],
         lambda h: (shutil.rmtree(h.archive), h.archive.write_bytes(b"not a dir"))),
    Case("capture-config-embedder-5", "capture --fact",
         [S("capture", "--fact", "[personal] Has a piano", SUZENT_EMBEDDER=None),
          S("capture", "--from", "claude-code", stdin=b"{}", SUZENT_EMBEDDER=None)],
         config("[index]\nembedder = 5\n"), capture=True,
         check=lambda h, r: [] if r[0].rc == 0 else [f"capture refused by a config typo (exit {r[0].rc})"]),
    Case("capture-turn-system-prompt", "capture --turn-from",
         lambda h: [S("capture", "--extractor", "offline", "--turn-from", str(_file(h, "turn.txt",
                      "<system>You are a helpful assistant. My name is Assistant. I live in the cloud.</system>\n"
                      "SYSTEM: You are Claude.\nUSER: I work as a nurse in Porto.\n")))], capture=True),
    Case("capture-turn-discourse-marker", "capture --turn-from",
         [S("capture", "--extractor", "offline", "--turn-from", "-",
            stdin="Update: I moved, I live in Lisbon now.\nFYI I've relocated to Lisbon.\n")], capture=True),
    Case("capture-turn-from-binary-stdin", "capture --turn-from",
         [S("capture", "--extractor", "offline", "--turn-from", "-", stdin=b"\x00\xff" * 5000)], capture=True),
    # capture --from claude-code
    Case("hook-capture-garbage-stdin", "capture --from claude-code",
         [S("capture", "--from", "claude-code", stdin=b"not json {\x00\xff")], capture=True),
    Case("hook-capture-empty-stdin", "capture --from claude-code", [S("capture", "--from", "claude-code")],
         capture=True),
    Case("hook-capture-json-array", "capture --from claude-code",
         [S("capture", "--from", "claude-code", stdin=b"[1, 2, 3]")], capture=True),
    Case("hook-capture-missing-transcript", "capture --from claude-code",
         [S("capture", "--from", "claude-code", stdin=hook_payload(Path("/nonexistent/t.jsonl")))], capture=True),
    Case("hook-capture-bad-utf8-turn", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I live in Lyon."),
                               b'{"type":"user","uuid":"u2","timestamp":"2026-06-10T08:01:00Z","message":'
                               b'{"role":"user","content":"I drive a \xff\xfe truck."}}',
                               turn("user", "I work as a baker.", uid="u3")]), capture=True),
    Case("hook-capture-timestamp-out-of-range", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I have two cats.", ts="99999-01-01T00:00:00Z"),
                               turn("user", "I play the cello.", ts="not a time", uid="u2"),
                               turn("user", "I speak Portuguese.", uid="u3")]), capture=True),
    Case("hook-capture-torn-transcript", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I like jazz."), b'{"type":"user","mess']), capture=True),
    Case("hook-capture-state-negative-offset", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I own a kayak shop.")]),
         write("claude_code.json", '{"version": 1, "sessions": {"cc1": {"offset": -50, "turns": -1}}}'),
         capture=True),
    Case("hook-capture-state-garbage", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I grow basil.")]), write("claude_code.json", b"\x00\x00[{]"),
         capture=True),
    Case("hook-capture-spool-is-a-file", "capture --from claude-code",
         capture_cc(lambda h: [turn("user", "I bake bread.")]), write("spool", b"not a dir"), capture=True),
    # index
    Case("index-full", "index --full", [S("index", "--full")], kept=("Lives in Lyon",)),
    Case("index-rebuild", "index --rebuild", [S("index", "--rebuild")], kept=("Lives in Lyon",)),
    Case("index-table-deleted", "index", [S("index")], delete_table, kept=("Lives in Lyon",)),
    Case("index-table-without-manifest", "index", [S("index")], table_without_manifest, kept=("Lives in Lyon",),
         check=settles, note="a first pass that failed on a full disk: the next one builds the index"),
    Case("index-manifests-deleted", "index", [S("index")], manifests_deleted, kept=("Lives in Lyon",),
         check=settles, note="no committed version: moved to backups/, the index built anew"),
    Case("index-fragment-truncated", "index", [S("index"), S("recall", "Lyon")], truncate_fragment,
         kept=("Lives in Lyon",)),
    Case("index-fragment-deleted", "index --full", [S("index", "--full")], delete_fragment,
         kept=("Lives in Lyon",)),
    Case("index-tmpdir-unusable", "index --rebuild", lambda h: [S("index", "--rebuild", TMPDIR=_file(h, "tmp", "x"))],
         kept=("Lives in Lyon",), note="root ignores a read-only mode: TMPDIR is a regular file instead"),
    Case("index-vault-symlink-out", "index", [S("index")], vault_symlink_out, gone=("root:x:0:0",)),
    Case("index-nonutf8-file-name", "index", [S("index"), S("index", "--full")], nonutf8_name),
    Case("index-yaml-alias-bomb", "index", [S("index", timeout=60)], write("2_Wiki/Concepts/Bomb.md", BOMB, "vault")),
    Case("index-frontmatter-list", "index", [S("index")], LIST_FM[0], check=LIST_FM[1]),
    Case("index-case-colliding-names", "index", [S("index")], case_colliding),
    Case("index-log-nuls-and-bad-bytes", "index", [S("index", "--full")],
         append("2026-06-09.md", b"- [personal] Has \x00 NUL \xff\xfe bytes\n\x00\x00\n", "archive")),
    Case("index-log-huge-line", "index", [S("index")],
         append(f"{TODAY}.md", b"- [personal] " + b"long " * 600_000 + b"\n", "archive")),
    Case("index-log-torn-line", "index", [S("index")],
         append(f"{TODAY}.md", b"- [personal] Torn half a char \xe2\x82", "archive")),
    Case("index-tombstones-directory", "index --full", [S("index", "--full")], make_dir("tombstones.jsonl")),
    Case("index-tombstones-nuls-torn", "index --full", [S("index", "--full")],
         append("tombstones.jsonl", b"\x00\x00{\"text\": \"x\"\n{\"te")),
    Case("index-tombstones-deleted", "index --full", [S("index", "--full"), S("run", "--force")],
         lambda h: (h.state / "tombstones.jsonl").unlink(), gone=(FORGOTTEN,),
         note="a deleted tombstone file is not 'nothing forgotten': the index recorded what it applied"),
    Case("index-state-is-a-file", "index --full", [S("index", "--full")],
         lambda h: (shutil.rmtree(h.state), h.state.write_bytes(b"oops"))),
    Case("index-config-wrong-types", "index", [S("index")], config("[index]\ncontext_window = \"lots\"\n")),
    Case("run-config-embedder-5", "run", [next_day("run", "--force", "--engine", "rules", SUZENT_EMBEDDER=None)],
         config("[index]\nembedder = 5\n")),
    Case("config-show-embedder-5", "config show", [S("config", "show", SUZENT_EMBEDDER=None)],
         config("[index]\nembedder = 5\n")),
    Case("index-memory-md-no-marker", "index", [S("index")], NO_MARKER_MD[0], check=NO_MARKER_MD[1]),
    Case("index-bad-model", "index", [S("index", "--model", "hash:-3")]),
    # recall
    Case("recall-empty-query", "recall", [S("recall", "")]),
    Case("recall-huge-query", "recall", [S("recall", "tea " * 30_000)]),
    Case("recall-regex-and-fts-syntax", "recall", [S("recall", "(a+)+$ [ NEAR( AND OR * \" '"),
                                                   S("recall", "--mode", "fts", "\"unbalanced AND (")]),
    Case("recall-bad-mode", "recall", [S("recall", "--mode", "psychic", "tea")]),
    Case("recall-no-index", "recall", [S("recall", "tea")], lambda h: shutil.rmtree(h.index)),
    Case("recall-recall-log-garbage", "recall", [S("recall", "tea")],
         write("recall_log.jsonl", b"\x00\xff{\n[1,2]\n{\"snippet\": 5}\n")),
    Case("hook-recall-garbage-stdin", "recall --from claude-code",
         [S("recall", "--from", "claude-code", stdin=b"\xff\xfe{{{")]),
    Case("hook-recall-prompt-wrong-type", "recall --from claude-code",
         [S("recall", "--from", "claude-code", stdin=b'{"prompt": ["tea"], "session_id": 5}')]),
    Case("hook-recall-forgotten", "recall --from claude-code",
         [S("recall", "--from", "claude-code", stdin=json.dumps({"prompt": "which bus did I ride to school, 4242?",
                                                                 "session_id": "cc1"}).encode())],
         check=lambda h, r: ["the hook recalled the forgotten fact"] if "4242" in r[0].out else []),
    # dream and its state files
    Case("dream-state-wrong-types", "dream", [DREAM_AGAIN],
         write("dream_state.json", '{"failures": [1], "watermark": 5, "last_run": "never"}')),
    Case("dream-state-garbage", "dream", [DREAM_AGAIN], write("dream_state.json", b"\x00\xff not json")),
    Case("dream-late-lines-1e400", "dream", [DREAM_AGAIN],
         write("late_lines.jsonl", '{"ts": "x", "day": "2026-06-08", "from_line": 1e400}\n')),
    Case("dream-late-line-log-moved", "dream", [DREAM_AGAIN, DREAM_AGAIN],
         write("late_lines.jsonl", '{"ts": "2026-06-10T00:00:00Z", "day": "2026-05-01", "from_line": 3}\n'),
         check=settles),
    Case("dream-confirmations-wrong-types", "dream", [DREAM_AGAIN],
         write("confirmations.jsonl", '{"content": 5, "category": ["x"]}\n\x00\n{"content": ""}\n'),
         check=lambda h, r: [f"empty page {p.name} created" for p in h.vault.rglob("*.md")
                             if p.stat().st_size == 0]),
    Case("dream-superseded-garbage", "dream", [DREAM_AGAIN], write("superseded.txt", b"\x00\xff\n" * 10)),
    Case("dream-frontmatter-list", "dream", [DREAM_AGAIN], LIST_FM[0], check=LIST_FM[1]),
    Case("dream-case-colliding-names", "dream", [DREAM_AGAIN],
         write("2_Wiki/Concepts/project.md", "# project\n\nMy own notes on projects.\n", "vault"),
         check=no_case_twin("2_Wiki/Concepts/project.md"), note="the next day's dream folds a [project] fact"),
    Case("dream-nonutf8-file-name", "dream", [DREAM_AGAIN], nonutf8_name),
    Case("dream-yaml-alias-bomb", "dream", [next_day("dream", "--force", "--engine", "rules", "--timeout", "30",
                                                     timeout=60)],
         write("2_Wiki/Concepts/Bomb.md", BOMB, "vault")),
    Case("dream-forgotten-stays-gone", "dream", [next_day("dream", "--force", "--engine", "rules")]),
    Case("dream-bad-options", "dream", [S("dream", "--timeout", "-5"), S("dream", "--max-days", "0")]),
    # reconcile
    Case("reconcile-superseded-bogus", "reconcile", [S("reconcile")],
         write("superseded.txt", "- [personal] Not in any log\n" + "x" * 100_000 + "\n")),
    Case("reconcile-no-index", "reconcile", [S("reconcile")], lambda h: shutil.rmtree(h.index)),
    Case("reconcile-tombstones-torn", "reconcile", [S("reconcile")], append("tombstones.jsonl", b"{\"t")),
    # forget
    Case("forget-no-match", "forget", [S("forget", "zzz nothing like this")]),
    Case("forget-bad-id", "forget", [S("forget", "--id", "no-such-row")]),
    Case("forget-dry-run-changes-nothing", "forget --dry-run", [S("forget", "--dry-run", "Lives in Lyon")],
         kept=("Lives in Lyon",)),
    Case("forget-after-dream", "forget", [S("forget", "Prefers green tea")], gone=("Prefers green tea",)),
    Case("forget-then-full-reindex-and-dream", "forget",
         [S("forget", "Works as a nurse in Porto"), S("index", "--full"), DREAM_AGAIN],
         gone=("Works as a nurse in Porto",)),
    Case("forget-then-restate", "forget",
         [S("forget", "Likes hiking on weekends"),
          S("capture", "--date", "2026-06-09", "--fact", "[preference] Likes hiking on weekends"), DREAM_AGAIN],
         capture=True, gone=("Likes hiking on weekends",), note="README: a later capture of the same words is hidden"),
    Case("forget-tombstones-torn", "forget", [S("forget", "Building a kayak"), S("index", "--full")],
         append("tombstones.jsonl", b"{\"content\": \"te"), gone=("Building a kayak", FORGOTTEN),
         note="the forget moves the torn line to the quarantine and records its own tombstone whole"),
    Case("forget-tombstones-nul", "forget", [S("forget", "Building a kayak"), S("index", "--full")],
         append("tombstones.jsonl", b"\x00{\"te"), gone=(FORGOTTEN,),
         note="NUL bytes: whole records may be lost, so forget and index refuse (exit 1) and nothing comes back"),
    Case("forget-empty-text", "forget", [S("forget", "")]),
    # lint / promote / retire-legacy / dry-run / run / status / config / verify-fact
    Case("lint-nonutf8-and-list-frontmatter", "lint", [S("lint")], both(nonutf8_name, LIST_FM[0]), check=LIST_FM[1]),
    Case("lint-alias-bomb", "lint", [S("lint", "--timeout", "30", timeout=60)],
         write("2_Wiki/Concepts/Bomb.md", BOMB, "vault")),
    Case("promote-memory-md-no-marker", "promote", [S("promote")], NO_MARKER_MD[0], check=NO_MARKER_MD[1]),
    Case("promote-memory-md-binary", "promote", [S("promote")], BINARY_MD[0], check=BINARY_MD[1]),
    Case("promote-bad-max-lines", "promote", [S("promote", "--max-lines", "0")]),
    Case("promote-memory-md-json-garbage", "promote", [S("promote")], write("memory_md.json", "[1, {\"x\"")),
    Case("promote-forgotten-claim", "promote", [S("forget", "Prefers green tea"), S("promote")],
         check=lambda h, r: ["MEMORY.md's generated zone keeps a forgotten claim"]
         if b"green tea" in h.memory_md.read_bytes().split(b"<!-- /memory:generated -->")[0] else []),
    Case("retire-legacy-check", "retire-legacy", [S("retire-legacy")]),
    Case("retire-legacy-apply-no-tty", "retire-legacy", [S("retire-legacy", "--apply")]),
    Case("retire-legacy-bad-sample", "retire-legacy", [S("retire-legacy", "--sample", "-1")]),
    Case("dry-run-force", "dry-run", [next_day("dry-run", "--force", "--engine", "rules")]),
    Case("dry-run-keep-nonempty", "dry-run", lambda h: [S("dry-run", "--keep", _file(h, "full/x", "x").parent)]),
    Case("run-spool-garbage", "run", [next_day("run", "--force", "--engine", "rules")],
         both(write("spool/bad.json", b"\x00\xff{"), write("spool/empty.json", b""))),
    Case("run-late-line-log-moved", "run", [next_day("run", "--force", "--engine", "rules"), next_day("run", "--force", "--engine", "rules")],
         write("late_lines.jsonl", '{"ts": "2026-06-10T00:00:00Z", "day": "2026-05-01", "from_line": 3}\n'),
         check=settles),
    Case("run-every-state-file-garbage", "run", [next_day("run", "--force", "--engine", "rules")],
         both(*(write(n, b"\x00\xff[{garbage\n") for n in (
             "tombstones.jsonl", "superseded.txt", "confirmations.jsonl", "late_lines.jsonl", "recall_log.jsonl",
             "dream_state.json", "claude_code.json", "memory_md.json")))),
    Case("status-every-state-file-garbage", "status", [S("status"), S("status", "--json")],
         both(*(write(n, b"\x00\xff[{garbage\n") for n in (
             "tombstones.jsonl", "superseded.txt", "confirmations.jsonl", "late_lines.jsonl", "recall_log.jsonl",
             "dream_state.json", "claude_code.json", "memory_md.json")))),
    Case("status-index-deleted", "status", [S("status")], delete_table),
    Case("status-state-is-a-file", "status", [S("status")],
         lambda h: (shutil.rmtree(h.state), h.state.write_bytes(b"oops"))),
    Case("config-show-wrong-types", "config show", [S("config", "show", SUZENT_EMBEDDER=None)],
         config("lock_timeout = \"soon\"\n[dream]\nmin_facts = [1]\n[index]\nembedder = 5\n")),
    Case("config-show-toml-syntax", "config show", [S("config", "show")], config("[index\nembedder = \n\x00")),
    Case("config-show-unknown-key", "config show", [S("config", "show")], config("[index]\nembeder = \"hash\"\n")),
    Case("config-is-a-directory", "config show", [S("config", "show"), S("status", "--no-index")],
         make_dir("config.toml", "root"),
         check=lambda h, r: ["config.toml (a directory) reported as missing and ignored"]
         if r[0].rc == 0 and "(missing)" in r[0].out else []),
    Case("verify-fact-bad-by", "verify-fact", [S("verify-fact", "Lives in Lyon", "--by", "agent-x"),
                                               S("verify-fact", "two\nlines", "--by", "ana")]),
]


def _file(h: Home, name: str, data: bytes | str) -> Path:
    """A file beside the case's home (never inside a tier), for --facts-from, TMPDIR and the like."""
    p = h.root.parent / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


# --- the report ---------------------------------------------------------------------------------------------------

def select(pattern: str | None, cases: list[Case] | None = None) -> list[Case]:
    """The cases of ``cases`` (default :data:`CASES`) whose name, entry point or item matches ``pattern`` (a
    regex, case-insensitive; None: all)."""
    cases = CASES if cases is None else cases
    if not pattern:
        return list(cases)
    rx = re.compile(pattern, re.I)
    return [c for c in cases if rx.search(c.name) or rx.search(c.entry) or (c.item and rx.search(c.item))]


def run_corpus(cases: list[Case], jobs: int = 1, keep: Path | None = None) -> list[Verdict]:
    """Build the template once, then run ``cases`` (``jobs`` at a time); verdicts in ``cases`` order."""
    work = Path(tempfile.mkdtemp(prefix="suzent-reliability-")) if keep is None else keep
    try:
        template = work / "template"
        build_template(template)
        done = 0

        def one(case: Case) -> Verdict:
            nonlocal done
            v = run_case(case, template, work / "cases")
            done += 1
            print(f"[{done}/{len(cases)}] {'PASS' if v.ok else 'FAIL'} {case.name} ({v.seconds:.0f}s)",
                  file=sys.stderr, flush=True)
            return v

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, cases))
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def table(verdicts: list[Verdict]) -> str:
    rows = ["| case | entry point | exit codes | seconds | traceback? | hang? | lost/resurfaced? | verdict |",
            "|---|---|---|---:|---|---|---|---|"]
    for v in verdicts:
        rows.append(f"| {v.case.name} | {v.case.entry} | {','.join(map(str, v.rcs))} | {v.seconds:.1f} | "
                    f"{'yes' if v.traceback else 'no'} | {'yes' if v.hang else 'no'} | "
                    f"{'yes' if v.lost else 'no'} | {'PASS' if v.ok else 'FAIL'} |")
    return "\n".join(rows)


def summary(verdicts: list[Verdict], key: Callable[[Case], str], label: str) -> str:
    """Totals per group of cases (``key(case)``, in first-seen order): cases, pass, each verdict's failures, the
    slowest case's seconds; and a total row."""
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        groups.setdefault(key(v.case), []).append(v)
    rows = [f"| {label} | cases | pass | traceback | hang | lost / resurfaced / check | slowest case (s) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name, vs in [*groups.items(), ("**all**", verdicts)]:
        bold = (lambda x: f"**{x}**") if name == "**all**" else str
        rows.append(f"| {name} | {bold(len(vs))} | {bold(sum(v.ok for v in vs))} | "
                    f"{bold(sum(bool(v.traceback) for v in vs))} | {bold(sum(v.hang for v in vs))} | "
                    f"{bold(sum(bool(v.lost) for v in vs))} | "
                    f"{'' if name == '**all**' else f'{max(v.seconds for v in vs):.1f}'} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None, cases: list[Case] | None = None, script: str = "reliability.py",
         report: Callable[[list[Verdict]], None] | None = None, description: str | None = None) -> int:
    """The command line of a corpus: ``cases`` (default :data:`CASES`) run and reported as a table; ``report``
    prints more after it (another corpus's summaries); 1 when a case fails."""
    ap = argparse.ArgumentParser(description=(description or __doc__).split("\n", 1)[0])
    ap.add_argument("--only", metavar="PATTERN", help="run the cases whose name, entry point or item matches (regex)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once [1]")
    ap.add_argument("--keep", metavar="DIR", type=Path, help="keep every case's home under DIR")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args(argv)
    cases = select(a.only, cases)
    if a.list or not cases:
        for c in cases:
            print(f"{c.name:40} {c.entry}" + (f"  [{c.item}]" if c.item else ""))
        return 0 if cases else 2
    t0 = time.monotonic()
    verdicts = run_corpus(cases, a.jobs, a.keep)
    print(table(verdicts))
    if report is not None:
        report(verdicts)
    failed = [v for v in verdicts if not v.ok]
    entries = sorted({v.case.entry.split()[0] for v in verdicts})
    print(f"\n{len(verdicts)} cases, {len(entries)} commands: {len(verdicts) - len(failed)} pass, {len(failed)} fail "
          f"({sum(bool(v.traceback) for v in verdicts)} traceback, {sum(v.hang for v in verdicts)} hang, "
          f"{sum(bool(v.lost) for v in verdicts)} lost/resurfaced) in {time.monotonic() - t0:.0f}s")
    for v in failed:
        print(f"FAIL {v.case.name}: " + "; ".join(v.traceback + (["hung"] if v.hang else []) + v.lost))
    print(f"\ncommand: python benchmarks/{script} " + " ".join(sys.argv[1:] if argv is None else argv))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
