"""``suzent recall``: hybrid search over the index, every hit with provenance.

Modes: ``vector`` (cosine over the embeddings), ``fts`` (BM25 over ``search_text``) and ``hybrid`` (both, fused
with Reciprocal Rank Fusion: ``score = sum over modes of 1 / (RRF_K + rank)``, rank 1-based, ``RRF_K = 60``;
ties broken by importance). RRF needs no score calibration between BM25 and cosine, which is why it is used
instead of a weighted sum. Each returned hit is appended (best-effort) to ``notebook/.state/recall_log.jsonl``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .config import Settings
from .errors import IndexMissing, InputInvalid
from .index.embed import Embedder
from .index.store import Store, row_metadata
from .state import append_recall_log

MODES = ("hybrid", "vector", "fts")
RRF_K = 60
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Hit:
    """One recalled row. ``locator`` is the 1-based line of a daily-log fact or the chunk index of a page."""

    id: str
    content: str
    score: float
    source: str | None
    source_type: str
    source_file: str | None
    locator: int | None
    date: str | None
    session: str | None
    category: str | None
    tags: list[str]
    importance: float
    ranks: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def fts_query(text: str) -> str:
    """The BM25 query for ``text``: its words only, so no punctuation can be read as query syntax."""
    return " ".join(_WORD.findall(text))


def _hit(row: dict, score: float) -> Hit:
    meta = row_metadata(row)
    tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
    return Hit(
        id=row["id"], content=row["content"], score=score, source=row.get("source"),
        source_type=meta.get("source_type", "legacy" if row.get("source") is None else ""),
        source_file=meta.get("source_file"), locator=row.get("locator"),
        date=row.get("source_date") or meta.get("source_date"), session=meta.get("session_id"),
        category=meta.get("category"), tags=[str(t) for t in tags], importance=float(row.get("importance") or 0.0),
    )


def search(store: Store, embedder: Embedder | None, query: str, *, mode: str = "hybrid", limit: int = 10) -> list[Hit]:
    """Rank rows of ``store`` for ``query``. Returns at most ``limit`` hits, best first.

    Raises :class:`InputInvalid` for an empty query, an unknown mode or a non-positive limit.
    """
    if mode not in MODES:
        raise InputInvalid(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if limit < 1:
        raise InputInvalid("limit must be at least 1")
    if not query.strip():
        raise InputInvalid("empty query: nothing to recall")
    pool = max(50, limit * 5)
    runs: dict[str, list[dict]] = {}
    if mode in ("hybrid", "vector"):
        if embedder is None:
            raise InputInvalid(f"mode {mode} needs an embedder")
        runs["vector"] = store.vector_search(embedder.encode([query])[0], pool)
    if mode in ("hybrid", "fts"):
        words = fts_query(query)
        runs["fts"] = store.fts_search(words, pool) if words else []
    fused: dict[str, Hit] = {}
    for name, rows in runs.items():
        for rank, row in enumerate(rows, start=1):
            hit = fused.get(row["id"]) or _hit(row, 0.0)
            hit.score += 1.0 / (RRF_K + rank)
            hit.ranks[name] = rank
            fused[row["id"]] = hit
    ranked = sorted(fused.values(), key=lambda h: (-h.score, -h.importance, h.source or "", h.locator or 0))
    return ranked[:limit]


def recall(settings: Settings, embedder: Embedder | None, query: str, *, mode: str = "hybrid", limit: int = 10,
           log: bool = True) -> list[Hit]:
    """Open the index of ``settings`` and :func:`search` it; log returned hits to ``recall_log.jsonl``.

    Raises :class:`IndexMissing` when there is no index yet, :class:`IndexIncompatible` when it was built with another
    embedder. ``embedder`` may be None only for ``mode="fts"`` (the table's recorded embedder is then trusted).
    """
    store = _open_for_read(settings, embedder)
    hits = search(store, embedder, query, mode=mode, limit=limit)
    if log:
        append_recall_log(settings.paths.state_dir, query, [h.as_dict() for h in hits])
    return hits


def _open_for_read(settings: Settings, embedder: Embedder | None) -> Store:
    from .index import store as store_mod  # noqa: PLC0415

    if not store_mod.table_exists(settings.paths.index_dir):
        raise IndexMissing(f"no search index at {settings.paths.index_dir} yet: run `suzent index` first")
    if embedder is not None:
        return Store.open(settings.paths.index_dir, embedder.name, embedder.dim, create=False)
    db = store_mod._lancedb().connect(str(settings.paths.index_dir))
    s = Store(settings.paths.index_dir, db.open_table(store_mod.TABLE))
    name, dim = s.recorded_embedder()
    s.check(name or "", dim or 0)
    return s
