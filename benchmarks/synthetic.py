"""Synthetic facts for the speed benchmarks: made-up, realistic-looking fact lines (no real data)."""

from __future__ import annotations

import random
from pathlib import Path

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


def app_table(index_dir: Path, rows: list[dict], dim: int) -> None:
    """Create ``index_dir``'s ``archival_memories`` table in the original suzent app's schema (naive timestamps, JSON
    metadata, no ``source`` column), one row per ``{id, content, metadata, created_at}`` of ``rows``, with random
    ``dim``-wide vectors. Shared by benchmarks/legacy_and_dryrun.py and tests/test_legacy.py."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    ts = pa.timestamp("us")
    vectors = np.random.default_rng(3).random((len(rows), dim), dtype=np.float32)
    data = pa.table({
        "id": pa.array([r["id"] for r in rows], pa.string()),
        "content": pa.array([r["content"] for r in rows], pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), dim),
        "user_id": pa.array(["default-user"] * len(rows), pa.string()),
        "chat_id": pa.array([None] * len(rows), pa.string()),
        "metadata": pa.array([r["metadata"] for r in rows], pa.string()),
        "importance": pa.array([0.5] * len(rows), pa.float32()),
        "created_at": pa.array([r["created_at"] for r in rows], ts),
        "updated_at": pa.array([r["created_at"] for r in rows], ts),
        "accessed_at": pa.array([None] * len(rows), ts),
        "access_count": pa.array([0] * len(rows), pa.int32()),
    })
    index_dir.mkdir(parents=True, exist_ok=True)
    lancedb.connect(str(index_dir)).create_table("archival_memories", data=data)
