#!/usr/bin/env python3
"""Turn size: the time to read one turn for extraction (offline extractor) against the turn's size, with and
without the ``capture.max_turn_chars`` bound.

What is timed, in process, per shape and size: parsing the input (``parse_turn``, which also splits pasted prompts
out of the user's words), the bound (``cut_turn``, when the code has it) and the offline extractor. No log is
written and no index is searched (the recall-set lookup reads only the turn's first 2,000 characters). Each cell
is the best of ``--runs`` runs, in seconds.

Shapes, all generated (deterministic, seed 1): ``prose`` — one plain-text message of paragraphs drawn from a small
pool of everyday sentences (first-person facts, questions, small talk; whole sentences, so the size is reached
within one paragraph); ``transcript`` — the same prose as a JSON
list of user/assistant messages of 200-3,000 characters; ``markers`` — one sentence made of "oh " repeated, then a
fact (each leading marker used to copy the rest of the sentence); ``persona`` — paragraphs "You are a helpful
assistant." then the user's own (each persona paragraph used to re-join the run); ``blanks`` — spaces, then a fact
(the persona pattern gave the spaces back one at a time, and the bound dropped the fact).

Columns: ``unbounded`` reads the whole turn; ``bounded`` reads it through the bound at its default (200,000
characters); ``facts`` is how many each keeps. Run it on another checkout to compare code (the
``bounded`` column is left out where ``suzent_cli.capture.extract.cut`` does not exist)::

    nice -n 5 .venv/bin/python benchmarks/turn_size.py
    PYTHONPATH=/path/to/other/checkout nice -n 5 .venv/bin/python benchmarks/turn_size.py

Usage: python benchmarks/turn_size.py [--mb 1 4 16] [--small-mb 0.25 1] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

if "suzent_cli" not in sys.modules and not any(Path(p, "suzent_cli").is_dir() for p in sys.path if p):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suzent_cli.capture.extract.offline import OfflineExtractor
from suzent_cli.capture.extract.turns import parse_turn

try:
    from suzent_cli.capture.extract.cut import cut_turn
    from suzent_cli.config import setting

    DEFAULT_BOUND: int | None = setting("capture.max_turn_chars").default
except ImportError:  # code from before the bound
    cut_turn, DEFAULT_BOUND = None, None

SENTENCES = (
    "I live in Lisbon with my partner and our two cats.", "What do you think about Rust for this?",
    "At work, we use Postgres and Redis for most services.", "The weather was lovely, we went to the beach.",
    "I prefer dark mode in every editor I use.", "Can you help me refactor this function?",
    "My sister is a nurse in Porto.", "It rained all afternoon and the trains were late again.",
    "Honestly, I have been learning Spanish for a year now.", "The report is due soon, so please be concise.",
    "We moved to a bigger flat last spring.", "Thanks, that makes sense!",
)


def prose(chars: int, rnd: random.Random) -> str:
    paragraphs, size = [], 0
    while size < chars:
        paragraph = " ".join(rnd.choice(SENTENCES) for _ in range(rnd.randint(3, 8)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)  # whole sentences: a cut one would be a new "fact" of its own


def transcript(chars: int, rnd: random.Random) -> str:
    messages, size, role = [], 0, "user"
    while size < chars:
        text = prose(rnd.randint(200, 3000), rnd)
        messages.append({"role": role, "content": text})
        size += len(text)
        role = "assistant" if role == "user" else "user"
    return json.dumps(messages)


def markers(chars: int, rnd: random.Random) -> str:
    return "oh " * (chars // 3) + "I live in Lisbon now."


def persona(chars: int, rnd: random.Random) -> str:
    return "You are a helpful assistant.\n\n" * (chars // 30) + "I live in Lisbon now."


def blanks(chars: int, rnd: random.Random) -> str:
    return " " * chars + "I live in Lisbon now."


SHAPES = {"prose": prose, "transcript": transcript, "markers": markers, "persona": persona, "blanks": blanks}


def read(text: str, bound: int | None) -> int:
    """Facts the offline extractor keeps from ``text``, read whole (``bound`` None) or through the bound."""
    extractor = OfflineExtractor()
    turn = parse_turn(text)
    if bound is not None:
        turn = cut_turn(turn, bound, getattr(extractor, "reads", ("user",))).turn
    return len(extractor.extract(turn, []))


def best(text: str, bound: int | None, runs: int) -> tuple[float, int]:
    times, facts = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        facts = read(text, bound)
        times.append(time.perf_counter() - start)
    return min(times), facts


def _positive(kind):
    """An argparse type: a ``kind`` (float, int) above 0, else a one-line usage error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
        return value
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=_positive(float), nargs="+", default=[1, 4, 16],
                        help="sizes of prose and transcript")
    parser.add_argument("--small-mb", type=_positive(float), nargs="+", default=[0.25, 1],
                        help="sizes of markers, persona and blanks (quadratic before the fix: keep them small)")
    parser.add_argument("--runs", type=_positive(int), default=1)
    args = parser.parse_args()
    import suzent_cli

    print(f"code: {Path(suzent_cli.__file__).resolve().parent}; bound: "
          f"{f'{DEFAULT_BOUND:,} characters' if DEFAULT_BOUND else 'none (code before the bound)'}")
    print("| shape | MB | characters | unbounded s | facts | bounded s | facts |")
    print("|---|---|---|---|---|---|---|")
    for name, make in SHAPES.items():
        for mb in (args.mb if name in ("prose", "transcript") else args.small_mb):
            text = make(int(mb * 1_000_000), random.Random(1))
            whole, facts = best(text, None, args.runs)
            cut = "— | —"
            if DEFAULT_BOUND:
                seconds, kept = best(text, DEFAULT_BOUND, args.runs)
                cut = f"{seconds:.3f} | {kept}"
            print(f"| {name} | {mb:g} | {len(text):,} | {whole:.3f} | {facts} | {cut} |", flush=True)


if __name__ == "__main__":
    main()
