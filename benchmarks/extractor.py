"""Precision and recall of the offline fact extractor on a hand-labelled set.

Usage::

    python benchmarks/extractor.py [PATH] [--verbose]

``PATH`` (default ``benchmarks/data/extraction_labelled.jsonl``) is a JSON-lines file; see
``benchmarks/data/README.md`` for its format. Each item's ``text`` is given to :class:`OfflineExtractor` as one
user message. Scoring is per fact:

* an item's expected facts are its ``expected`` list, or ``[text]`` when ``keep`` is true and ``expected`` is
  absent, or nothing when ``keep`` is false;
* an extracted fact is a true positive when it equals an expected fact not yet matched, after normalisation
  (case, curly quotes, runs of spaces, surrounding quotes and trailing punctuation are ignored); every other
  extracted fact is a false positive; every unmatched expected fact is a false negative;
* the *drop* side is scored on sentence-level items only (an item is "dropped" when nothing is extracted);
* category accuracy is over true positives that carry an expected category;
* ``not verbatim`` counts extracted facts that are not a substring of the input (first letter's case aside):
  it must be 0, the extractor never invents content.

The script always exits 0; the numbers are the result. ``--verbose`` lists every miss.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.capture.extract.offline import OfflineExtractor
from suzent_cli.capture.extract.turns import Message, Turn

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "extraction_labelled.jsonl"


@dataclass(frozen=True)
class Expected:
    """One fact an item should yield: its verbatim text and (optionally) its category."""

    text: str
    category: str | None


@dataclass(frozen=True)
class Item:
    """One labelled item: input ``text``, the facts it should yield, and whether it is sentence-level."""

    text: str
    expected: tuple[Expected, ...]
    sentence_level: bool
    note: str = ""


@dataclass
class Report:
    """Counts and misses of one benchmark run; the rates are properties."""

    items: int = 0
    sentence_items: int = 0
    turns: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    drop_tp: int = 0  # sentence items with nothing expected and nothing extracted
    drop_fp: int = 0  # sentence items with something expected but nothing extracted
    drop_fn: int = 0  # sentence items with nothing expected but something extracted
    category_right: int = 0
    category_total: int = 0
    not_verbatim: int = 0
    false_positives: list[tuple[str, str]] = field(default_factory=list)  # (input, extracted)
    false_negatives: list[tuple[str, str]] = field(default_factory=list)  # (input, expected)
    wrong_category: list[tuple[str, str, str]] = field(default_factory=list)  # (fact, expected, got)

    @property
    def precision(self) -> float:
        """Share of extracted facts that were expected (1.0 when nothing was extracted)."""
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        """Share of expected facts that were extracted (1.0 when nothing was expected)."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        return _f1(self.precision, self.recall)

    @property
    def drop_precision(self) -> float:
        """Of the sentence items that yielded nothing, the share that should have yielded nothing."""
        return _ratio(self.drop_tp, self.drop_tp + self.drop_fp)

    @property
    def drop_recall(self) -> float:
        """Of the sentence items that should yield nothing, the share that yielded nothing."""
        return _ratio(self.drop_tp, self.drop_tp + self.drop_fn)

    @property
    def drop_f1(self) -> float:
        """Harmonic mean of drop precision and drop recall."""
        return _f1(self.drop_precision, self.drop_recall)

    @property
    def category_accuracy(self) -> float:
        """Share of true positives whose category matches the label."""
        return _ratio(self.category_right, self.category_total)


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def normalise(text: str) -> str:
    """The form facts are compared in: lower case, straight quotes, single spaces, no end punctuation."""
    t = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    t = " ".join(t.lower().split())
    return t.strip(" \"'").rstrip(".!?;:, ").strip(" \"'")


def is_verbatim(fact: str, source: str) -> bool:
    """Whether ``fact`` occurs in ``source`` as is, the case of its first letter aside."""
    if not fact:
        return False
    if fact in source:
        return True
    first, rest = fact[0].lower(), fact[1:]
    return any(ch.lower() == first and source.startswith(rest, i + 1) for i, ch in enumerate(source))


def load_items(path: str | os.PathLike[str]) -> list[Item]:
    """Read a labelled JSON-lines file (blank lines and lines starting with ``#`` are skipped)."""
    items: list[Item] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        raw = json.loads(line)
        text = raw["text"]
        if "expected" in raw:
            expected = tuple(
                Expected(e, raw.get("category") if "keep" in raw else None) if isinstance(e, str)
                else Expected(e["text"], e.get("category"))
                for e in raw["expected"])
        elif raw.get("keep"):
            expected = (Expected(text, raw.get("category")),)
        elif "keep" in raw:
            expected = ()
        else:
            raise ValueError(f"{path}:{number}: an item needs 'keep' or 'expected'")
        items.append(Item(text=text, expected=expected, sentence_level="keep" in raw, note=raw.get("note", "")))
    return items


def run_benchmark(path: str | os.PathLike[str] = DEFAULT_PATH, extractor=None) -> Report:
    """Run ``extractor`` (default :class:`OfflineExtractor`) on every item of ``path`` and score it."""
    extractor = extractor or OfflineExtractor()
    report = Report()
    for item in load_items(path):
        report.items += 1
        if item.sentence_level:
            report.sentence_items += 1
        else:
            report.turns += 1
        facts = extractor.extract(Turn((Message("user", item.text),)), [])
        unmatched = list(item.expected)
        for fact in facts:
            if not is_verbatim(fact.content, item.text):
                report.not_verbatim += 1
            key = normalise(fact.content)
            hit = next((e for e in unmatched if normalise(e.text) == key), None)
            if hit is None:
                report.fp += 1
                report.false_positives.append((item.text, f"[{fact.category}] {fact.content}"))
                continue
            unmatched.remove(hit)
            report.tp += 1
            if hit.category:
                report.category_total += 1
                if hit.category == fact.category:
                    report.category_right += 1
                else:
                    report.wrong_category.append((fact.content, hit.category, fact.category))
        report.fn += len(unmatched)
        report.false_negatives.extend((item.text, e.text) for e in unmatched)
        if item.sentence_level:
            if not facts and not item.expected:
                report.drop_tp += 1
            elif not facts:
                report.drop_fp += 1
            elif not item.expected:
                report.drop_fn += 1
    return report


def format_report(report: Report, path: str | os.PathLike[str]) -> str:
    """The plain-text table of ``report``."""
    rows = [
        ("keep (facts)", report.precision, report.recall, report.f1,
         f"tp={report.tp} fp={report.fp} fn={report.fn}"),
        ("drop (sentences)", report.drop_precision, report.drop_recall, report.drop_f1,
         f"tp={report.drop_tp} fp={report.drop_fp} fn={report.drop_fn}"),
    ]
    lines = [
        f"set: {path}  ({report.items} items: {report.sentence_items} sentences, {report.turns} multi-sentence turns; "
        f"{report.tp + report.fn} expected facts)",
        "",
        f"{'':<18} {'precision':>9} {'recall':>7} {'F1':>6}   counts",
    ]
    lines += [f"{name:<18} {p:>9.3f} {r:>7.3f} {f:>6.3f}   {counts}" for name, p, r, f, counts in rows]
    lines += [
        f"{'category accuracy':<18} {report.category_accuracy:>9.3f}   "
        f"({report.category_right}/{report.category_total} true positives)",
        f"{'not verbatim':<18} {report.not_verbatim:>9d}   (extracted facts not found in the input; must be 0)",
    ]
    return "\n".join(lines)


def format_misses(report: Report) -> str:
    """Every false positive, false negative and wrong category of ``report``, one per line."""
    lines = [f"false positives ({len(report.false_positives)}):"]
    lines += [f"  + {got}    <- {text!r}" for text, got in report.false_positives]
    lines.append(f"false negatives ({len(report.false_negatives)}):")
    lines += [f"  - {want!r}" + (f"    <- {text!r}" if text != want else "") for text, want in report.false_negatives]
    lines.append(f"wrong category ({len(report.wrong_category)}):")
    lines += [f"  ~ {fact!r}: expected {want}, got {got}" for fact, want, got in report.wrong_category]
    return "\n".join(lines)


def _command_line() -> str:
    exe = sys.executable
    try:
        rel = os.path.relpath(exe)
        exe = rel if not rel.startswith("..") else exe
    except ValueError:
        pass
    return shlex.join([exe, *sys.argv])


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print the table (and misses with ``--verbose``); always returns 0."""
    parser = argparse.ArgumentParser(description="Precision/recall of the offline extractor on a labelled set.")
    parser.add_argument("path", nargs="?", default=str(DEFAULT_PATH), help="labelled JSON-lines file")
    parser.add_argument("--verbose", "-v", action="store_true", help="list the misclassified items")
    args = parser.parse_args(argv)
    shown = os.path.relpath(args.path) if not os.path.relpath(args.path).startswith("..") else args.path
    report = run_benchmark(args.path)
    print(f"$ {_command_line()}")
    print(format_report(report, shown))
    if args.verbose:
        print()
        print(format_misses(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
