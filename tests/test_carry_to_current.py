"""Issue 16 §2/§3: after a dream, the current claim answers what the claim it replaced answered
(:func:`suzent_cli.recall.carry_to_current`; with the bundled model through the CLI:
tests/integration/test_carry_model.py). "which AI chat subscription does the user pay for" matches the old
"Pays for ChatGPT Plus" best; its replacement must not rank below another subscription the user pays for."""

from __future__ import annotations

import pytest

from suzent_cli.recall import Hit, carry_to_current


def _hit(rid: str, content: str, relevance: float, *, score: float | None = None, page: str = "3_Personal/P.md",
         section: str = "Claims") -> Hit:
    return Hit(id=rid, content=content, score=relevance if score is None else score, source=f"notebook:{page}",
               source_type="notebook", source_file=page, locator=0, date=None, session=None, category=None, tags=[],
               importance=0.5, relevance=relevance, factors={"section": section, "status": "active"})


OLD = "- Pays for ChatGPT Plus (confirmed 1x, last 2026-03-03) (until 2026-03-17) · source: 2026-03-03.md:5"
NEW = ("- Cancelled ChatGPT Plus and subscribed to Claude Pro instead (since 2026-03-17); previously: Pays for "
       "ChatGPT Plus (confirmed 1x, last 2026-03-17) · source: 2026-03-17.md:5")


def test_the_current_claim_scores_the_relevance_of_the_claim_it_replaced():
    # issue 27: the better of the two relevances plus half the other (the question found the subject twice)
    old = _hit("old", OLD, 1.02, score=0.82, section="Previously")
    new = _hit("new", NEW, 0.98)
    other = _hit("other", "- Pays for iCloud+ 200 GB · source: 2026-03-18.md:5", 1.01)
    carry_to_current([other, new, old])
    assert new.score == pytest.approx(1.02 + 0.5 * 0.98) and new.carries.startswith("old ")
    assert (old.score, other.score) == (0.82, 1.01)  # the superseded row keeps its demotion; others untouched


def test_nothing_is_carried_across_pages_or_to_an_unrelated_claim_and_nothing_is_lowered():
    old = _hit("old", OLD, 1.02, section="Previously")
    elsewhere = _hit("elsewhere", NEW, 0.5, page="4_Technical/Stack.md")
    unrelated = _hit("unrelated", "- Drinks tea (since 2026-03-01); previously: Pays for ChatGPT Plus Pro", 0.5)
    better = _hit("better", NEW, 1.5)
    carry_to_current([old, elsewhere, unrelated, better])
    assert (elsewhere.score, elsewhere.carries) == (0.5, None)
    assert (unrelated.score, unrelated.carries) == (0.5, None)  # its tail names another claim, not this one
    assert better.score == pytest.approx(1.5 + 0.5 * 1.02) and better.carries  # raised, never lowered


def test_a_chain_carries_from_every_value_it_replaced():
    first = _hit("first", "- Runs Django 3.2 (until 2026-03-09) · source: 2026-03-02.md:5", 1.1, score=0.9,
                 section="Previously")
    current = _hit("current", "- Runs Django 5.1 (since 2026-03-16); previously: Runs Django 4.2 (since 2026-03-09); "
                              "previously: Runs Django 3.2 · source: 2026-03-16.md:5", 0.7)
    carry_to_current([current, first])
    assert current.score == pytest.approx(1.1 + 0.5 * 0.7) and current.carries.startswith("first ")


def test_a_captured_fact_that_says_previously_lifts_nothing():
    # A user (or a pasted text) can write "…; previously: X" into a fact; the dream folds it into the page as a
    # claim. Only the dream's own chain — "(since D)" right before X, D the day X stopped holding — carries.
    old = _hit("old", OLD, 1.02, score=0.82, section="Previously")
    plain = _hit("plain", "- Owns a red bicycle; previously: Pays for ChatGPT Plus (confirmed 1x, last 2026-03-18) "
                          "· source: 2026-03-18.md:6", 0.2)
    other_day = _hit("other_day", "- Owns a blue kayak (since 2026-01-01); previously: Pays for ChatGPT Plus "
                                  "· source: 2026-03-18.md:7", 0.2)
    carry_to_current([old, plain, other_day])
    assert (plain.score, plain.carries) == (0.2, None)
    assert (other_day.score, other_day.carries) == (0.2, None)
