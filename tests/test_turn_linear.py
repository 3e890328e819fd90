"""Regression: the extractor's pre-processing is linear in the turn's size (a 23 MB turn took ~40 s).

Two steps copied the rest of the text once per item: ``_trim_leading`` re-made the sentence for every leading
marker ("oh oh oh … I live in Lisbon."), ``_persona`` re-joined the run for every persona paragraph. These tests
check the result and the shape of the work (how much text is copied or how many messages are built), never a time.
"""

from __future__ import annotations

from suzent_cli.capture.extract import offline, turns
from suzent_cli.capture.extract.offline import OfflineExtractor
from suzent_cli.capture.extract.turns import Message, Turn


def test_trim_leading_reads_the_sentence_once(monkeypatch):
    seen: list[int] = []
    plain = offline._plain

    def counting(text: str) -> str:
        seen.append(len(text))
        return plain(text)

    monkeypatch.setattr(offline, "_plain", counting)
    sentence = "oh " * 5000 + "Update: Hey Sam, I live in Lisbon now."
    assert offline._trim_leading(sentence) == "I live in Lisbon now."
    assert seen == [len(sentence)]  # one pass: the 5,002 markers are matched in place, the text is copied once


def test_many_markers_still_give_the_fact():
    # Markers are trimmed before the sentence length is judged, as before the fix: the fact after them is kept.
    turn = Turn((Message("user", "ok so " * 2000 + "I live in Lisbon now."),))
    assert [f.content for f in OfflineExtractor().extract(turn, [])] == ["I live in Lisbon now."]


def test_persona_paragraphs_are_joined_once(monkeypatch):
    built: list[str] = []

    class Counting(Message):
        def __init__(self, role: str, text: str) -> None:
            built.append(role)
            super().__init__(role, text)

    monkeypatch.setattr(turns, "Message", Counting)
    pasted = "\n\n".join(["You are a helpful assistant."] * 3000 + ["I live in Lisbon.", "I have two cats."])
    parts = turns._persona(pasted)
    assert [(m.role, m.text.count("\n\n") + 1) for m in parts] == [("system", 3000), ("user", 2)]
    assert built == ["system", "user"]  # one message per run of paragraphs, not one per paragraph


# The two patterns as they were before their blank runs were made possessive ("*+"): the same matches, found
# without giving blanks back one at a time (MBs of leading whitespace cost ~0.2-0.3 s per MB before the cut).
_ROLE_LINE_BEFORE = (r"^[ \t>]*(?:#{1,6}[ \t]*)?[*_]{0,2}(?P<role>user|human|system|developer|assistant|ai|"
                     r"bot|model|chatgpt|claude)[*_]{0,2}[ \t]*:[*_]{0,2}[ \t]*")


def test_possessive_blank_runs_match_as_before():
    import random
    import re

    role_before = re.compile(_ROLE_LINE_BEFORE, re.I | re.M)
    persona_before = re.compile(turns._PERSONA.pattern.replace(r"^[\s\"'*_]*+", r"^[\s\"'*_]*", 1), re.I)
    assert persona_before.pattern != turns._PERSONA.pattern
    pieces = [" ", "\t", ">", "#", "##", "*", "**", "_", "user", "USER", "System", "assistant", ":", "\n", "\n\n",
              "You are", "you're", " a helpful assistant", " Nova,", '"', "'", "x", "act as", " an ", "AI", "."]
    rnd = random.Random(3)
    for _ in range(5000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 14)))
        assert ([(m.span(), m.group("role")) for m in role_before.finditer(text)]
                == [(m.span(), m.group("role")) for m in turns._ROLE_LINE.finditer(text)]), text
        before, now = persona_before.match(text), turns._PERSONA.match(text)
        assert (before and before.span()) == (now and now.span()), text


def test_blank_runs_before_persona_and_role_labels_still_read():
    blanks = " \t" * 50_000
    assert [m.role for m in turns.split_pasted(blanks + "You are a helpful assistant.")] == ["system"]
    pasted = f"USER:{blanks}I live in Lisbon.\nASSISTANT: Nice.\n{blanks}\nuser{blanks}x"
    assert [m.role for m in turns.split_pasted(pasted)] == ["user", "assistant"]
