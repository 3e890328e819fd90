"""Re-ranking the fused candidates: the fact itself against the query, by the bi-encoder.

The vector run compares the query with each row's *embedding text*: the fact with up to ``index.context_window``
preceding facts of its log (a reply is understood with what it replies to). That finds facts whose meaning lives
in their context, but it also ranks a short reaction ("Wow, that's great! What inspired you?") as high as the
statement it reacts to. BM25 has both views (``fts_content`` over the fact alone, ``fts`` over fact and context);
the vector side only the one. This stage adds the other as one more run, :data:`RUN`: the :data:`TOP` best
candidates after fusion, dates and neighbours have their own ``content`` embedded together with the query, and each
gains ``WEIGHT · s`` where ``s`` is its cosine similarity min-max normalized over those candidates (the best 1, the
worst 0). Rows below the top are left as they are, so the stage only reorders what the runs already found.

Cost: one query encode and one ``encode`` of ``TOP`` short texts per recall (the model is already loaded for the query vector).
No new model, nothing downloaded; without an embedder (``fts`` mode) the stage is skipped.
Measured on the LoCoMo dev split: see BENCHMARKS.md, "Issue 16: re-ranking and query-side work".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from suzent_cli.index.embed import Embedder, encode_query

RUN = "content_vector"  # its name among a hit's ``runs``
TOP = 15  # candidates re-scored per recall when the stage is on (setting recall.rerank; measured at 15)
WEIGHT = 0.2  # the share of the fact's own similarity, on the scale of the fused relevance (a run weighs 0.3-0.4)


def content_similarity(query: str, candidates: list[tuple[str, str]], embedder: Embedder,
                       query_vector: np.ndarray | None = None) -> dict[str, float]:
    """``{row id: 0..1}`` for ``candidates`` (``(row id, content)``, any order): the cosine similarity of the query
    and the content, min-max normalized over the candidates (the best 1, the worst 0; all equal: all 1). Empty
    input, empty result. ``query_vector``: the query already encoded by :func:`encode_query` (the vector run's),
    else it is encoded here. Raises what ``embedder.encode`` raises (:class:`EmbeddingFailed`)."""
    if not candidates:
        return {}
    if query_vector is None:
        query_vector = encode_query(embedder, [query])[0]  # a model's query prefix applies here too
    sims = embedder.encode([content for _, content in candidates]) @ query_vector
    lo, hi = float(np.min(sims)), float(np.max(sims))
    norm = (sims - lo) / (hi - lo) if hi > lo else np.ones_like(sims)
    return {rid: float(s) for (rid, _), s in zip(candidates, norm, strict=True)}


def content_run(query: str, scores: dict[str, float], rows: dict[str, dict], embedder: Embedder | None,
           fetch: Callable[[list[str]], Iterable[dict]], *, top: int,
           query_vector: np.ndarray | None = None) -> dict[str, float]:
    """The re-ranking run: :func:`content_similarity` of the ``top`` best rows of ``scores`` (row id -> relevance
    so far; ties by id). The caller adds ``WEIGHT`` times it to each row's relevance, as for any run.

    ``rows`` (row id -> row dict with ``content``) are the candidates the runs returned; a top row that only a
    neighbour's share brought in is read with ``fetch`` (ids -> the rows it can find) and added to ``rows``; one it
    cannot find keeps its score unchanged. ``query_vector``: see :func:`content_similarity`. Returns ``{row id: normalized similarity}``; empty without an embedder or candidates."""
    if embedder is None or not scores or top <= 0:
        return {}
    best = sorted(scores, key=lambda rid: (-scores[rid], rid))[:top]
    missing = [rid for rid in best if rid not in rows]
    if missing:
        for row in fetch(missing):
            rows[row["id"]] = row
    candidates = [(rid, str(rows[rid].get("content") or "")) for rid in best if rid in rows]
    return content_similarity(query, candidates, embedder, query_vector)
