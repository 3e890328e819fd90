"""Synthetic facts for the speed benchmarks: made-up, realistic-looking fact lines (no real data)."""

from __future__ import annotations

import random

from suzent_cli.archive import Fact

SUBJECTS = ["The user", "Alex", "Their manager", "The team", "My sister", "The landlord", "Our client", "Dr. Weber"]
VERBS = ["prefers", "mentioned", "is planning", "decided on", "asked about", "booked", "dislikes", "recommended"]
OBJECTS = ["oat milk in coffee", "a trip to Lisbon in March", "the quarterly report due Friday",
           "weekly Spanish lessons", "a standing desk for the home office", "dark mode in every editor",
           "running 10k on Sunday mornings", "switching the CI to GitHub Actions", "the dentist appointment at 9am",
           "vegetarian dinners on weekdays", "a budget of 2,000 EUR for the laptop", "moving to Berlin next year"]
CATEGORIES = ["preference", "personal", "work", "health", "project", "travel", "finance"]
TAGS = ["food", "travel", "work", "health", "family", "tools", "money", "plans"]


def synthetic_fact(rng: random.Random, i: int, label: str = "note") -> Fact:
    """One fact ``"<Subject> <verb> <object> (<label> i)"`` with a random category and 0-2 tags."""
    text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} ({label} {i})"
    return Fact(text, rng.choice(CATEGORIES), tuple(rng.sample(TAGS, rng.randint(0, 2))))
