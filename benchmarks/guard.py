"""What the capture screen (suzent_cli/guard) catches and what it costs: planted instructions, secrets, time.

Usage::

    python benchmarks/guard.py [--verbose] [--sets dev|blind|both]

Three tables:

1. **Planted instructions** on ``benchmarks/data/planted_dev.jsonl`` (the set the rules were written with) and
   ``planted_blind.jsonl`` (written by someone who never read them; never tuned on), per shape (direct, indirect,
   in_turn):

   * *classifier* — :func:`suzent_cli.guard.planted_reason` on the item's whole text: precision and recall of
     "planted" (this is what tags a fact line given as is);
   * *turn capture* — the item captured as a turn through the real write path (``extract_and_write``, offline
     extractor, a temp home): a planted item is *blocked* when no captured fact holds its planted part (the
     ``planted_part``, else the whole text: a fact whose words are ≥ 60 % inside it); a preference is *kept* when
     a captured fact holds its ``keep`` words.

2. **Secrets** on ``secrets_dev.jsonl`` and ``secrets_blind.jsonl``: :func:`suzent_cli.guard.redact` on each
   item's text: secrets removed / all secrets, kept strings intact / all kept strings, items entirely right, items
   with no secret that were changed (false redactions), and what detect-secrets' detectors and suzent's own
   shapes each remove alone; by kind.

3. **Cost**: :func:`suzent_cli.guard.screen` on an ordinary fact and on one holding a key, per call, and the import
   of detect-secrets (a fresh interpreter, bytecode cached), which only a candidate token triggers.

Exits 0; the numbers are the result. ``--verbose`` lists every miss (do not read the blind misses while tuning).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suzent_cli.guard import planted, planted_reason, redact, screen  # noqa: E402

DATA = REPO / "benchmarks" / "data"
SHAPES = ("direct", "indirect", "in_turn")


def load(name: str) -> list[dict]:
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w]


def _inside(fact: str, part: str) -> bool:
    """At least 60 % of the fact's words are words of ``part``."""
    words, own = _words(fact), set(_words(part))
    return bool(words) and sum(w in own for w in words) / len(words) >= 0.6


def capture_turn(settings, text: str) -> list[str]:
    """The facts the real write path captures from ``text`` as a user turn (offline extractor), untagged ones only."""
    from suzent_cli.capture import extract_and_write

    result = extract_and_write(settings, json.dumps({"user": text}), extractor_name="offline")
    return [f.content for f in result.facts if not planted(f.content, f.tags)]


def planted_table(name: str, verbose: bool) -> list[str]:
    from suzent_cli.config import resolve_settings

    items = load(name)
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = resolve_settings(home=Path(tmp) / "home", now="2026-06-20T12:00", env={})
        for it in items:
            for shape in (it["shape"], "all"):
                r = rows[shape]
                flagged = bool(planted_reason(it["text"]))
                is_planted = it["label"] == "planted"
                r["tp"] += flagged and is_planted
                r["fp"] += flagged and not is_planted
                r["fn"] += (not flagged) and is_planted
                r["planted"] += is_planted
                r["preference"] += not is_planted
            facts = capture_turn(settings, it["text"])
            if is_planted:
                part = it.get("planted_part") or it["text"]
                leaked = [f for f in facts if _inside(f, part)]
                ok = not leaked
                for shape in (it["shape"], "all"):
                    rows[shape]["blocked"] += ok
            else:
                ok = any(it["keep"].lower() in f.lower() for f in facts)
                for shape in (it["shape"], "all"):
                    rows[shape]["kept"] += ok
            if verbose and (not ok or flagged != is_planted):
                misses.append(f"  {it['id']} {it['label']}/{it['shape']} classifier={'planted' if flagged else '-'} "
                              f"turn={'ok' if ok else 'MISS'}: {' '.join(it['text'].split())[:140]}  -> {facts}")
    out = [f"### {name} ({sum(i['label'] == 'planted' for i in items)} planted, "
           f"{sum(i['label'] == 'preference' for i in items)} preferences)", "",
           "| shape | items | classifier precision | classifier recall | turn: planted blocked | turn: preferences kept |",
           "|---|---:|---:|---:|---:|---:|"]
    for shape in (*SHAPES, "all"):
        r = rows[shape]
        p = r["tp"] / (r["tp"] + r["fp"]) if r["tp"] + r["fp"] else 1.0
        rec = r["tp"] / (r["tp"] + r["fn"]) if r["tp"] + r["fn"] else 1.0
        out.append(f"| {shape} | {r['planted'] + r['preference']} | {p:.3f} ({r['tp']}/{r['tp'] + r['fp']}) | "
                   f"{rec:.3f} ({r['tp']}/{r['planted']}) | {r['blocked']}/{r['planted']} | "
                   f"{r['kept']}/{r['preference']} |")
    return out + ([""] + misses if misses else [])


def secrets_table(name: str, verbose: bool) -> list[str]:
    items = load(name)
    total = removed = keeps = kept = right = clean_items = false_redactions = 0
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for it in items:
        out, _ = redact(it["text"])
        gone = [s for s in it["secrets"] if s not in out]
        intact = [k for k in it["keep"] if k in out]
        total += len(it["secrets"])
        removed += len(gone)
        keeps += len(it["keep"])
        kept += len(intact)
        ok = len(gone) == len(it["secrets"]) and len(intact) == len(it["keep"])
        right += ok
        if not it["secrets"]:
            clean_items += 1
            false_redactions += out != it["text"]
        for kind in it.get("kinds") or []:
            by_kind[kind][0] += 1
            by_kind[kind][1] += len(gone) == len(it["secrets"])
        if verbose and (not ok or (not it["secrets"] and out != it["text"])):
            misses.append(f"  {it['id']}: {' '.join(it['text'].split())[:120]}  ->  {' '.join(out.split())[:160]}")
    library, own = _sources(items)
    out = [f"### {name} ({len(items)} items, {total} secrets, {clean_items} items without one)", "",
           "| secrets removed | kept strings intact | items entirely right | items without a secret changed | "
           "removed by detect-secrets alone | by suzent's own shapes alone |",
           "|---:|---:|---:|---:|---:|---:|",
           f"| {removed}/{total} ({removed / max(total, 1):.3f}) | {kept}/{keeps} ({kept / max(keeps, 1):.3f}) | "
           f"{right}/{len(items)} | {false_redactions}/{clean_items} | {library}/{total} | {own}/{total} |", "",
           "by kind (items whose every secret was removed / items of that kind): "
           + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(by_kind.items()))]
    return out + ([""] + misses if misses else [])


def _sources(items: list[dict]) -> tuple[int, int]:
    """Secrets removed by detect-secrets' detectors alone (each value they report, replaced), and by suzent's own
    passes alone (:func:`redact` with the library's finds left out): what each half of :func:`redact` brings."""
    from unittest import mock

    from suzent_cli.guard import secrets as engine

    def library_only(text: str) -> str:
        for _kind, value in sorted(set(engine._library_finds(text)), key=lambda kv: -len(kv[1])):
            text = text.replace(value, "[redacted]")
        return text

    def own_only(text: str) -> str:
        with mock.patch.object(engine, "_library_finds", lambda _text: []):
            return redact(text)[0]

    def gone(fn) -> int:
        return sum(sum(s not in fn(it["text"]) for s in it["secrets"]) for it in items)

    return gone(library_only), gone(own_only)


def _per_call(fn, arg, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cost_table() -> list[str]:
    plain = "Prefers compact dashboards and dark mode in every editor `ui`"
    keyed = "Use key ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789 for the CI mirror"
    code = "import time; from suzent_cli.guard import secrets as s; t = time.perf_counter(); s._detectors(); " \
           "print(time.perf_counter() - t)"  # as a capture process loads them: once, against the requests stand-in
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env)  # bytecode cached first
    imports = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    env=env).stdout) for _ in range(5)]
    screen(keyed)  # the detectors built once
    return ["### cost", "", "| what | median |", "|---|---:|",
            f"| screen(), an ordinary fact line | {_per_call(screen, plain, 2000) * 1e6:.0f} µs |",
            f"| screen(), a fact holding a key (detectors loaded) | {_per_call(screen, keyed, 200) * 1e3:.2f} ms |",
            f"| loading detect-secrets' detectors, once per process, only on a candidate (a one-thread process) | "
            f"{statistics.median(imports) * 1e3:.0f} ms (min {min(imports) * 1e3:.0f}, max {max(imports) * 1e3:.0f}) |"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="list every miss")
    parser.add_argument("--sets", choices=("dev", "blind", "both"), default="both")
    args = parser.parse_args(argv)
    names = {"dev": ["dev"], "blind": ["blind"], "both": ["dev", "blind"]}[args.sets]
    lines = ["$ python " + " ".join(shlex.quote(a) for a in ["benchmarks/guard.py", *(argv or sys.argv[1:])]), "",
             "## Planted instructions", ""]
    for n in names:
        lines += planted_table(f"planted_{n}.jsonl", args.verbose) + [""]
    lines += ["## Secrets", ""]
    for n in names:
        lines += secrets_table(f"secrets_{n}.jsonl", args.verbose) + [""]
    lines += cost_table()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
