#!/usr/bin/env python3
"""Knowledge updates offline: does the newer statement win, before and after the dream? (issue 16, section 2)

The scenario set is ``benchmarks/data/update_scenarios.json`` (written by hand for this benchmark). A scenario holds
older statements (``old``), the change (``new``, worded as people say it: "I switched to…", "was moved to…", "passed
away", "no longer…"), distractors that must stay current (near wording, "visited X" next to "lives in X", a new
unrelated fact about the same entity), a "what is true now" query and the ``expected`` strings of the current answer.

Each scenario runs in a fresh temporary home, through the real CLI (``python -m suzent_cli`` from this checkout,
one process per step, ``SUZENT_*``/``ANTHROPIC_*`` removed from the environment, ``SUZENT_EMBEDDER`` = ``--model``):

1. ``capture --fact`` of every statement on its own day (``--now``: day 1 is ``base_day``), then ``index``;
2. **before the dream**: ``recall QUERY --mode hybrid --json``; top-1 is right when the first hit's claim text
   (markers and a ``; previously: …`` tail dropped) contains an ``expected`` string and no old or distractor
   statement;
3. ``dream --force --engine offline --no-lint`` until it is idle (the rules engine), ``reconcile``, ``index``;
4. **after the dream**: the same query's top-1 again, and supersession read from the vault pages: a statement is
   *superseded* when its claim sits in ``## Previously`` or carries ``(until D)``, *current* when it is a claim of
   ``## Claims`` without one, *absent* otherwise. An old statement superseded no earlier than the next statement
   of its chain (the change, or a later old statement when the value changed twice, A → B → C) is a true positive;
   one still current (or absent) is a miss; a new statement or distractor superseded, or an old one superseded
   before that (a distractor replaced it), is a false positive;
4b. **the oracle ceiling** (issue 27): top-1 of the same hit lists, before and after the dream, once every hit
   holding an old statement of the scenario is taken out (a perfect supersession: whatever reads the change,
   the replaced statements would be gone). What the oracle still gets wrong is ranking, not reading: a
   distractor or an unrelated row above the current answer. Recall asks for 10 hits so 5 remain when old rows go;
5. **kept parts** (optional ``keep``: ``[{"query": ..., "expected": [...]}]``, issue 27): the part of a combined
   old statement that stays true ("data engineer living in Berlin", then a move: "what is the user's job" must
   still answer "data engineer"). After the dream each keep query's top-1 is right when it contains an
   ``expected`` string and no distractor statement (the combined old statement counts as right);
6. ``lint --engine offline --json``: of the (old, new) pairs both still current after the dream ("undecided"), how
   many its contradictions name (both texts in one contradiction line); and how many contradiction lines name a
   distractor.

Prints one row per kind of change and the totals (with the oracle columns and, when the set has ``keep``
queries, "kept parts top-1 n/N"); ``--json FILE`` writes every scenario's result.

``--scenarios benchmarks/data/update_scenarios_heldout.json`` runs the held-out set (14 scenarios, 12 kinds,
other wording and subjects, written before the update handling was tuned; report it separately, never tune on it).
``--scenarios benchmarks/data/update_scenarios_blind.json`` runs the blind set (49 scenarios, 16 kinds, written
without reading the update-handling code or the other sets; each carries ``cue``: ``clear``, ``unusual`` or
``none``, how the change is worded). It was read to find what fails after its first report, so it is no longer
blind: ``--scenarios benchmarks/data/update_scenarios_blind2.json`` is the second blind set (50 scenarios, 16
kinds, the same ``cue`` tags, 46 with a distractor said after the change), written the same way and never read
by the update code's authors; after its first report some of its statements were read too, so
``--scenarios benchmarks/data/update_scenarios_blind3.json`` (50 scenarios, 16 kinds, written the same way later the
same day) is the one whose statements nobody on the update code has read: only its totals are looked at. Report
only. ``update_scenarios_blind4.json`` (issue 27, with ``keep`` queries) is run the same way, totals only
(``--totals-only``).

``--totals-only`` prints only the totals row (no kind rows, no scenario ids or states, no progress lines): the
way to run a blind set whose statements nobody on the ranking or update code may read (blind3, blind4).

``--keep DIR`` keeps each scenario's home (``DIR/<id>``) to inspect after the run (``recall --explain``, the vault).

``--in-process`` runs each step as ``suzent_cli.cli.app.main(argv)`` inside ``--jobs`` worker processes instead of
one interpreter per step: the same commands on the same homes, several times faster on a loaded machine.

Usage: python benchmarks/updates.py [--scenarios FILE] [--model hash:64] [--only ID ...] [--jobs 2] [--json FILE]
                                    [--in-process] [--keep DIR] [--totals-only]
       (``--model all-MiniLM-L6-v2`` runs the bundled model)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suzent_cli.capture import parse_fact  # noqa: E402
from suzent_cli.errors import InputInvalid  # noqa: E402
from suzent_cli.vault import content_pages  # noqa: E402
from suzent_cli.vault.claims import claim_key  # noqa: E402
from suzent_cli.vault.pages import CLAIMS, PREVIOUSLY, parse_claim, read_page  # noqa: E402

SCENARIOS = ROOT / "benchmarks" / "data" / "update_scenarios.json"
ROLES = ("old", "new", "distractors")
MIN_SCENARIOS, MIN_KINDS = 30, 10  # the tuning set (the bar)
HELDOUT_MIN = (10, 6)  # any other file given with --scenarios (a held-out set: report only, never tune on it)
STEP_TIMEOUT = 300  # seconds one CLI step may take before the scenario is recorded as an error
MAX_DREAMS = 10  # dream ticks per scenario (a scenario spans a few weeks: one 14-day batch or two)


# --- the scenario file ------------------------------------------------------------------------------------------

def load(path: Path = SCENARIOS) -> tuple[dt.date, list[dict]]:
    """``(base_day, scenarios)`` from the scenario file (JSON: ``{"base_day": "YYYY-MM-DD", "scenarios": [...]}``).
    The tuning set must hold 30 scenarios over 10 kinds; any other file (a held-out set) 10 over 6.
    Raises ``ValueError`` when the file breaks a rule of :func:`problems`."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    base = dt.date.fromisoformat(doc["base_day"])
    scenarios = doc["scenarios"]
    minimum = (MIN_SCENARIOS, MIN_KINDS) if path.resolve() == SCENARIOS.resolve() else HELDOUT_MIN
    found = problems(scenarios, *minimum)
    if found:
        raise ValueError(f"{path}: " + "; ".join(found))
    return base, scenarios


def content_of(fact: str) -> str:
    """The statement text of a ``[category] text`` fact line (what capture logs and the dream folds)."""
    parsed = parse_fact(fact)
    if parsed is None:
        raise ValueError(f"not a fact line: {fact!r}")
    return parsed.content


def problems(scenarios: list[dict], min_scenarios: int = MIN_SCENARIOS, min_kinds: int = MIN_KINDS) -> list[str]:
    """Every rule of the set that ``scenarios`` breaks (empty when sound): at least ``min_scenarios`` scenarios
    over ``min_kinds`` kinds,
    unique ids; each has a query, expected strings, at least one old, new and distractor statement, each a
    ``[category] text`` fact on a day ≥ 1; every new statement is said after every old one; an expected string
    occurs in a new statement and in no old one; no old or distractor statement is contained in a new one (the
    top-1 rule would then reject a right answer). An optional ``keep`` is a list of ``{"query", "expected"}``,
    each with a non-empty query and expected strings that each occur in an old statement (a kept part of it)."""
    out: list[str] = []
    if len(scenarios) < min_scenarios:
        out.append(f"{len(scenarios)} scenarios, fewer than {min_scenarios}")
    kinds = {s.get("kind") for s in scenarios}
    if len(kinds) < min_kinds:
        out.append(f"{len(kinds)} kinds of change, fewer than {min_kinds}")
    ids = [s.get("id") for s in scenarios]
    if len(set(ids)) != len(ids):
        out.append("duplicate scenario ids")
    for s in scenarios:
        sid = s.get("id", "?")
        if not str(s.get("query") or "").strip() or not s.get("expected"):
            out.append(f"{sid}: no query or no expected answer")
            continue
        try:
            texts = {role: [claim_key(content_of(st["fact"])) for st in s.get(role) or []] for role in ROLES}
        except (KeyError, TypeError, ValueError, InputInvalid) as e:
            out.append(f"{sid}: bad statement ({e})")
            continue
        if not all(texts[role] for role in ROLES):
            out.append(f"{sid}: needs old, new and distractor statements")
            continue
        if any(int(st["day"]) < 1 for role in ROLES for st in s[role]):
            out.append(f"{sid}: a day before day 1")
        if min(int(st["day"]) for st in s["new"]) <= max(int(st["day"]) for st in s["old"]):
            out.append(f"{sid}: a new statement is not later than every old one")
        expected = [e.lower() for e in s["expected"]]
        if not any(e in t for e in expected for t in texts["new"]):
            out.append(f"{sid}: no expected string occurs in a new statement")
        if any(e in t for e in expected for t in texts["old"]):
            out.append(f"{sid}: an expected string occurs in an old statement")
        if any(o in n for o in texts["old"] + texts["distractors"] for n in texts["new"]):
            out.append(f"{sid}: an old or distractor statement is contained in a new one")
        out.extend(f"{sid}: {p}" for p in _keep_problems(s.get("keep"), texts["old"]))
    return out


def _keep_problems(keep: Any, olds: list[str]) -> list[str]:
    """What is wrong with a scenario's optional ``keep`` list (``olds``: its old statements, :func:`claim_key`):
    each item needs a query and expected strings, each of which occurs in an old statement."""
    if keep is None:
        return []
    if not isinstance(keep, list):
        return ["keep is not a list"]
    out = []
    for i, item in enumerate(keep):
        if not isinstance(item, dict) or not str(item.get("query") or "").strip() \
                or not isinstance(item.get("expected"), list) or not item["expected"]:
            out.append(f"keep {i}: no query or no expected answer")
            continue
        missing = [e for e in item["expected"] if not any(str(e).lower() in o for o in olds)]
        if missing:
            out.append(f"keep {i}: expected {missing[0]!r} occurs in no old statement")
    return out


# --- scoring (pure) ---------------------------------------------------------------------------------------------

def hit_text(content: str) -> str:
    """A recall hit's claim text, normalized (:func:`claim_key`): a claim bullet loses its markers and a
    ``(since D); previously: …`` tail; any other text is only normalized."""
    lines = [ln.strip() for ln in str(content).split("\n") if ln.strip()]
    out = []
    for line in lines:
        claim = parse_claim(line) if line[:2] in ("- ", "* ", "+ ") else None
        out.append(claim_key(claim.text if claim else line))
    return " ".join(out)


def top1_right(hits: list[dict], scenario: dict) -> bool:
    """True when the first hit answers with the current value: it contains an ``expected`` string and no old or
    distractor statement (normalized containment)."""
    if not hits:
        return False
    text = hit_text(hits[0].get("content", ""))
    stale = [claim_key(content_of(st["fact"])) for role in ("old", "distractors") for st in scenario[role]]
    return any(e.lower() in text for e in scenario["expected"]) and not any(s in text for s in stale)


def _has_old(hit: dict, scenario: dict) -> bool:
    text = hit_text(hit.get("content", ""))
    return any(claim_key(content_of(st["fact"])) in text for st in scenario["old"])


def without_old(hits: list[dict], scenario: dict) -> list[dict]:
    """``hits`` without every hit holding an old statement of ``scenario``: what a perfect supersession would
    leave with the same ranking (the oracle)."""
    return [h for h in hits if not _has_old(h, scenario)]


def oracle_top1(hits: list[dict], scenario: dict) -> bool:
    """:func:`top1_right` of :func:`without_old` ``hits``: the top-1 a perfect supersession would give with the
    same ranking (the oracle ceiling)."""
    return top1_right(without_old(hits, scenario), scenario)


def keep_right(hits: list[dict], expected: list[str], scenario: dict) -> bool:
    """True when the first hit holds a kept part of an old statement: an ``expected`` string and no distractor
    statement (the combined old statement itself is right: its kept part is still true)."""
    if not hits:
        return False
    text = hit_text(hits[0].get("content", ""))
    stale = [claim_key(content_of(st["fact"])) for st in scenario["distractors"]]
    return any(e.lower() in text for e in expected) and not any(s in text for s in stale)


def vault_claims(vault_dir: Path) -> list[tuple[str, Any, str]]:
    """Every claim of the vault as ``(section, Claim, page)``; section is ``Claims`` or ``Previously``."""
    out = []
    for path in content_pages(vault_dir):
        page = read_page(path)
        rel = path.relative_to(vault_dir).as_posix()
        for section in (CLAIMS, PREVIOUSLY):
            out.extend((section, claim, rel) for claim in page.claims(section))
    return out


def status(claims: list[tuple[str, Any, str]], fact: str) -> tuple[str, dt.date | None]:
    """``(state, until)`` of one statement in the vault: ``current`` (a ``## Claims`` claim without ``until``),
    else ``superseded`` (in ``## Previously`` or with ``(until D)``; ``until`` is D when written), else ``absent``."""
    key = claim_key(content_of(fact))
    found = [(section, claim) for section, claim, _ in claims if claim_key(claim.text) == key]
    if any(section == CLAIMS and claim.until is None for section, claim in found):
        return "current", None
    if found:
        untils = [claim.until for _, claim in found if claim.until is not None]
        return "superseded", max(untils) if untils else None
    return "absent", None


def score_vault(scenario: dict, base: dt.date, claims: list) -> dict:
    """Supersession counts of one scenario from the vault's claims: ``tp`` (old statements superseded no earlier
    than the next statement of the chain: a later ``old`` one when the value changed twice, A → B → C, else the
    change), ``fn`` (old statements not, or too early), ``fp`` (new or distractor statements superseded, plus old
    ones superseded before anything of the chain replaced them), ``absent`` (statements not in the vault at all),
    and each statement's state."""
    chain = sorted(int(st["day"]) for st in scenario["old"] + scenario["new"])
    tp = fn = fp = absent = 0
    states = {}
    for role in ROLES:
        for st in scenario[role]:
            state, until = status(claims, st["fact"])
            states[st["fact"]] = state + (f" until {until.isoformat()}" if until else "")
            absent += state == "absent"
            if role == "old":
                next_day = min(day for day in chain if day > int(st["day"]))
                replaced_from = base + dt.timedelta(days=next_day - 1)
                if state == "superseded" and (until is None or until >= replaced_from):
                    tp += 1
                else:
                    fn += 1
                    fp += state == "superseded"  # replaced by something said before the change
            elif state == "superseded":
                fp += 1
    return {"tp": tp, "fn": fn, "fp": fp, "absent": absent, "states": states}


def score_lint(scenario: dict, states: dict, contradictions: list[str]) -> dict:
    """``undecided`` (old, new) pairs both current after the dream, how many a contradiction line names
    (``flagged``), and how many contradiction lines name a distractor (``false_flags``)."""
    lines = [" ".join(str(c).lower().split()) for c in contradictions]
    current = {role: [claim_key(content_of(st["fact"])) for st in scenario[role]
                      if states.get(st["fact"]) == "current"] for role in ROLES}
    pairs = [(o, n) for o in current["old"] for n in current["new"]]
    flagged = sum(any(o in line and n in line for line in lines) for o, n in pairs)
    distractors = [claim_key(content_of(st["fact"])) for st in scenario["distractors"]]
    false_flags = sum(any(d in line for d in distractors) for line in lines)
    return {"undecided": len(pairs), "flagged": flagged, "false_flags": false_flags,
            "contradictions": len(contradictions)}


# --- running one scenario through the CLI ----------------------------------------------------------------------

def _env(model: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(NO_COLOR="1", COLUMNS="200", SUZENT_EMBEDDER=model, PYTHONPATH=str(ROOT), SUZENT_SERVE_AUTOSTART="0")
    return env


QUIET = False  # --totals-only: no per-scenario progress lines (their ids name a blind set's subjects)
IN_PROCESS = False  # --in-process: each step is suzent's ``main(argv)`` in a worker process, not a new interpreter


def _in_process(cmd: list[str], model: str) -> subprocess.CompletedProcess:
    """``suzent ARGS`` (``cmd`` without the interpreter) run by :func:`suzent_cli.cli.app.main` in this process,
    under the same environment a step process gets, stdout and stderr captured. The worker is single-threaded, so
    changing ``os.environ`` for the call is safe; it is restored afterwards."""
    from suzent_cli.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    env = _env(model)  # before the clear: it is made from this process's environment
    try:
        os.environ.clear()
        os.environ.update(env)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(cmd)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def _cli(home: Path, now: str, model: str, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    """One ``python -m suzent_cli`` process on ``home`` at ``now`` (or one in-process call with ``--in-process``);
    RuntimeError on an exit code not in ``ok``."""
    argv = ["--home", str(home), "--now", now, *args]
    if IN_PROCESS:
        proc = _in_process(argv, model)
    else:
        cmd = [sys.executable, "-m", "suzent_cli", *argv]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(model), timeout=STEP_TIMEOUT)
    if proc.returncode not in ok:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"`{' '.join(args[:2])}` exited {proc.returncode}: {tail[0]}")
    return proc


def _recall(home: Path, now: str, model: str, query: str) -> list[dict]:
    proc = _cli(home, now, model, "recall", query, "--mode", "hybrid", "--json", "--explain", "-n", "10")
    return json.loads(proc.stdout)["hits"]


def _top(hits: list[dict], n: int = 3) -> list[dict]:
    """The first ``n`` hits, each as its claim text, score and the ranking factors ``recall --explain`` gives
    (for reading the oracle's misses: ``--json`` keeps them)."""
    keys = ("score", "relevance", "importance", "neighbour", "asks", "subject_boost", "now_factor", "now", "runs")
    return [{"text": hit_text(h.get("content", ""))[:160], **{k: h.get(k) for k in keys if k in h}}
            for h in hits[:n]]


def _when(base: dt.date, day: int, clock: str) -> str:
    return f"{(base + dt.timedelta(days=day - 1)).isoformat()}T{clock}"


def run_scenario(scenario: dict, base: dt.date, model: str, workdir: Path) -> dict:
    """Run one scenario in a fresh home under ``workdir`` (steps 1-5 of the module doc). Returns its result:
    ``top1_before``/``top1_after`` (bool), the top hits' texts, the vault counts of :func:`score_vault`, the lint
    counts of :func:`score_lint`, ``seconds``; or ``error`` (one line) when a step failed."""
    t0 = time.perf_counter()
    home = workdir / scenario["id"]
    result: dict[str, Any] = {"id": scenario["id"], "kind": scenario["kind"]}
    try:
        by_day: dict[int, list[str]] = defaultdict(list)
        for role in ROLES:
            for st in scenario[role]:
                by_day[int(st["day"])].append(st["fact"])
        for day in sorted(by_day):
            facts = [a for fact in by_day[day] for a in ("--fact", fact)]
            _cli(home, _when(base, day, "09:00"), model, "capture", *facts)
        last = max(by_day)
        before = _when(base, last, "18:00")
        _cli(home, before, model, "index", "--json")
        hits = _recall(home, before, model, scenario["query"])
        result["top1_before"] = top1_right(hits, scenario)
        result["oracle_before"] = oracle_top1(hits, scenario)
        result["oracle_hit_before"] = next((hit_text(h["content"]) for h in without_old(hits, scenario)), None)
        result["hit_before"] = hit_text(hits[0]["content"]) if hits else None

        after = _when(base, last + 1, "09:00")
        for _ in range(MAX_DREAMS):
            proc = _cli(home, after, model, "dream", "--force", "--engine", "offline", "--no-lint", "--json",
                        ok=(0, 4))
            if json.loads(proc.stdout).get("outcome") != "ingested":
                break
        _cli(home, after, model, "reconcile", "--json")
        _cli(home, after, model, "index", "--json")
        hits = _recall(home, after, model, scenario["query"])
        result["top1_after"] = top1_right(hits, scenario)
        result["oracle_after"] = oracle_top1(hits, scenario)
        result["oracle_hit_after"] = next((hit_text(h["content"]) for h in without_old(hits, scenario)), None)
        result["hit_after"] = hit_text(hits[0]["content"]) if hits else None
        result["oracle_top_after"] = _top(without_old(hits, scenario))
        kept = [keep_right(_recall(home, after, model, k["query"]), k["expected"], scenario)
                for k in scenario.get("keep") or []]
        result["kept"], result["keep_n"] = sum(kept), len(kept)

        result.update(score_vault(scenario, base, vault_claims(home / "notebook")))
        lint = json.loads(_cli(home, after, model, "lint", "--engine", "offline", "--json").stdout)
        result.update(score_lint(scenario, result["states"], (lint.get("lint") or {}).get("contradictions") or []))
    except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        result["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if not QUIET:
        print(f"  {scenario['id']}: {result.get('error') or 'done'} ({result['seconds']} s)", file=sys.stderr,
              flush=True)
    return result


# --- the report -------------------------------------------------------------------------------------------------

def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "–"


def totals(results: list[dict]) -> dict:
    """Summed counts of ``results`` (errors count as wrong top-1 and as misses of every old statement)."""
    t = defaultdict(int)
    for r in results:
        t["n"] += 1
        t["errors"] += "error" in r
        t["before"] += bool(r.get("top1_before"))
        t["after"] += bool(r.get("top1_after"))
        t["oracle_before"] += bool(r.get("oracle_before"))
        t["oracle_after"] += bool(r.get("oracle_after"))
        for k in ("tp", "fn", "fp", "absent", "undecided", "flagged", "false_flags", "kept"):
            t[k] += int(r.get(k, 0))
    return dict(t)


def table(results: list[dict], scenarios: list[dict], totals_only: bool = False) -> str:
    """Markdown table: one row per kind of change, then the totals. The oracle columns are top-1 with every old
    statement taken out of the hit list (:func:`oracle_top1`); a "kept parts" column when any scenario has
    ``keep`` queries (an error counts its keep queries as wrong)."""
    olds = {s["id"]: len(s["old"]) for s in scenarios}
    keeps = {s["id"]: len(s.get("keep") or []) for s in scenarios}
    with_keep = any(keeps.values())
    head = ("| kind | n | top-1 before dream | oracle before | top-1 after dream | oracle after | "
            + ("kept parts top-1 | " if with_keep else "")
            + "old superseded (TP/old) | wrong supersessions (FP) | precision | recall | undecided pairs | "
            "lint flagged |")
    rows = [head, "|" + "---|" * (13 if with_keep else 12)]
    kinds = [] if totals_only else list(dict.fromkeys(r["kind"] for r in results))
    for kind in [*kinds, None]:
        rs = [r for r in results if kind is None or r["kind"] == kind]
        t = totals(rs)
        n_old = sum(olds[r["id"]] for r in rs)
        fn = t["fn"] + sum(olds[r["id"]] for r in rs if "error" in r)
        errors = f" ({t['errors']} errors)" if t["errors"] else ""
        name = f"**total{errors}**" if kind is None else kind
        kept = f"{t['kept']}/{sum(keeps[r['id']] for r in rs)} | " if with_keep else ""
        rows.append(f"| {name} | {t['n']} | {t['before']}/{t['n']} | {t['oracle_before']}/{t['n']} | "
                    f"{t['after']}/{t['n']} | {t['oracle_after']}/{t['n']} | {kept}{t['tp']}/{n_old} | "
                    f"{t['fp']} | {_ratio(t['tp'], t['tp'] + t['fp'])} | {_ratio(t['tp'], t['tp'] + fn)} | "
                    f"{t['undecided']} | {t['flagged']}/{t['undecided']} |")
    return "\n".join(rows)


def _go_in_process(quiet: bool = False) -> None:
    global IN_PROCESS, QUIET
    IN_PROCESS, QUIET = True, quiet
    os.chdir(ROOT)


def _keep_problem(keep: Path, scenarios: list[dict]) -> str | None:
    """Make ``keep`` (``--keep DIR``) and say why it cannot take these scenarios' homes, or None when it can. A home
    left by an earlier run is refused: the scenario's statements would be captured into it a second time and the
    run would score a home that is not the scenario's."""
    if keep.exists() and not keep.is_dir():
        return "not a directory"
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return e.strerror or str(e)
    used = sorted(s["id"] for s in scenarios if (keep / s["id"]).exists())
    if used:
        return (f"holds the home of {len(used)} of these scenarios from an earlier run ({', '.join(used[:3])}"
                f"{', …' if len(used) > 3 else ''}); remove them or give another DIR")
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=Path, default=SCENARIOS, help="scenario file (JSON)")
    ap.add_argument("--model", default="hash:64", help="embedder (hash:64 default; all-MiniLM-L6-v2 = bundled)")
    ap.add_argument("--only", action="append", default=[], metavar="ID", help="run only this scenario (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="scenarios run at once (each in its own home)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="write every scenario's result here")
    ap.add_argument("--keep", type=Path, metavar="DIR",
                    help="keep each scenario's home under DIR (made if missing) to inspect it, instead of a temporary "
                         "directory removed at the end")
    ap.add_argument("--in-process", action="store_true",
                    help="run each step as suzent's main() in a worker process (same results, no interpreter start "
                         "per step; the model and lancedb load once per worker)")
    ap.add_argument("--totals-only", action="store_true",
                    help="print only the totals row (a blind set: no scenario ids, statements or states)")
    args = ap.parse_args(argv)
    global QUIET
    QUIET = args.totals_only
    try:
        base, scenarios = load(args.scenarios)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.only:
        unknown = sorted(set(args.only) - {s["id"] for s in scenarios})
        if unknown:
            print(f"error: unknown scenario id(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        scenarios = [s for s in scenarios if s["id"] in args.only]
    if args.keep and (problem := _keep_problem(args.keep, scenarios)):
        print(f"error: --keep {args.keep}: {problem}", file=sys.stderr)
        return 2
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))
    t0 = time.perf_counter()
    with (contextlib.nullcontext(str(args.keep)) if args.keep
          else tempfile.TemporaryDirectory(prefix="suzent-updates-")) as tmp:
        if args.in_process:
            with ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_go_in_process,
                                     initargs=(args.totals_only,)) as pool:
                results = list(pool.map(run_scenario, scenarios, [base] * len(scenarios),
                                        [args.model] * len(scenarios), [Path(tmp)] * len(scenarios)))
        else:
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                results = list(pool.map(lambda s: run_scenario(s, base, args.model, Path(tmp)), scenarios))
    t = totals(results)
    print(f"\n{len(scenarios)} scenarios, {len({s['kind'] for s in scenarios})} kinds, embedder {args.model}, "
          f"engine offline (rules), {time.perf_counter() - t0:.0f} s\n")
    print(table(results, scenarios, totals_only=args.totals_only))
    lint_false = t["false_flags"]
    print(f"\nlint contradiction lines naming a distractor: {lint_false}; statements absent from the vault: "
          f"{t['absent']}")
    if args.totals_only:
        if args.json:
            args.json.write_text(json.dumps(t, indent=1) + "\n", encoding="utf-8")
        return 1 if t["errors"] else 0
    print("\nper scenario: top-1 before → after (✓ current answer first), old statement's state after the dream")
    for r in results:
        if "error" in r:
            print(f"- {r['id']}: ERROR {r['error']}")
            continue
        old = [r["states"][st["fact"]] for s in scenarios if s["id"] == r["id"] for st in s["old"]]
        mark = {True: "✓", False: "✗"}
        oracle = f" (oracle {mark[r['oracle_before']]} → {mark[r['oracle_after']]})"
        kept = f"; kept {r['kept']}/{r['keep_n']}" if r.get("keep_n") else ""
        print(f"- {r['id']} ({r['kind']}): {mark[r['top1_before']]} → {mark[r['top1_after']]}{oracle}{kept}; "
              f"old: {', '.join(old)}"
              f"{'; lint flagged' if r['flagged'] else ''}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if t["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
