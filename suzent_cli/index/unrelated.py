"""What a query scores against text that has nothing to do with it: the yardstick of recall's minimum relevance.

A cosine means different things under different embedders: MiniLM gives a query and an unrelated sentence about
0.0 ± 0.06, larger models 0.2-0.4, the hash embedder 0 or a collision. So recall does not compare a row's cosine
with a fixed number. It embeds :data:`UNRELATED` (everyday sentences on no topic a memory is likely to hold) once
per embedder, and for each query measures the mean and spread of the query's cosines against them
(:func:`null_of`): the scores of unrelated text, for this query, under this model. A row's cosine is then read as
a number of those spreads above that mean (:meth:`Null.z`), which is on the same scale for every model, and
:func:`suzent_cli.recall.relevant` keeps a vector-only row only when it stands out as far as the best of that many
unrelated rows would not (:func:`expected_max`).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from suzent_cli.index.embed import Embedder

# Everyday sentences on subjects unrelated to one another. Third person and plain, so that they share the style
# of no particular query; nothing in them is a fact about the user. Changing them changes every threshold: measure
# (docs/ranking.md) before and after.
UNRELATED = (
    "The train to the coast leaves at seven in the morning.",
    "She painted the garden fence a pale shade of blue.",
    "The museum closes early on public holidays.",
    "Our neighbour's cat sleeps on the warm car bonnet.",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "He repaired the bicycle chain before the race.",
    "Heavy rain is expected across the north tomorrow.",
    "The library lends board games as well as books.",
    "They planted tomatoes and basil along the south wall.",
    "The concert was moved to the larger hall.",
    "A new bakery opened at the corner of the square.",
    "The children built a sandcastle near the pier.",
    "The invoice was paid two days after it arrived.",
    "The old bridge was closed for repairs last spring.",
    "She keeps her grandmother's letters in a wooden box.",
    "The hotel room looked out over the harbour.",
    "He learned to juggle with three oranges.",
    "The football match ended in a draw.",
    "The meeting room projector needs a new cable.",
    "Fresh snow covered the mountain pass overnight.",
    "The dentist appointment is on Thursday afternoon.",
    "The bus driver waved at the passengers.",
    "A flock of geese flew south over the lake.",
    "The shop sells second-hand vinyl records.",
    "The kettle whistled while the toast burned.",
    "The printer on the third floor is out of paper.",
    "The parcel was left with the neighbour.",
    "He wore a green scarf to the wedding.",
    "The festival draws crowds every August.",
    "The swimming pool reopens after the holidays.",
    "The farmer sold apples at the market.",
    "The lighthouse has guided ships for a century.",
    "The violin teacher gives lessons on Saturdays.",
    "The tram line was extended to the airport.",
    "The roof leaks whenever it rains hard.",
    "A fox crossed the road at dusk.",
    "The bakery's sourdough sells out by noon.",
    "The chess club meets in the church hall.",
    "The passport renewal took six weeks.",
    "The river flooded the lower fields in winter.",
    "The cafe plays old records on Sunday mornings.",
    "The gym installed new rowing machines.",
    "The ferry was cancelled because of the wind.",
    "Her brother collects stamps from old colonies.",
    "The bookshop has a reading corner for children.",
    "The electricity bill went up this quarter.",
    "The hikers reached the summit before lunch.",
    "The carpenter built shelves for the study.",
)
# The smallest spread used: a hash embedder can give a query exactly 0 against every unrelated sentence (no
# shared word), and a row sharing a word must then stand out, not divide by zero.
MIN_SPREAD = 1e-3


@dataclass(frozen=True)
class Null:
    """The cosines of one query against :data:`UNRELATED`: their ``mean`` and sample standard deviation
    ``spread`` (at least :data:`MIN_SPREAD`)."""

    mean: float
    spread: float

    def z(self, cosine: float) -> float:
        """How many spreads ``cosine`` lies above what unrelated text scores for this query."""
        return (cosine - self.mean) / self.spread


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # embedder -> UNRELATED embedded (n, dim)
_LOCK = threading.Lock()


def unrelated_vectors(embedder: Embedder) -> np.ndarray:
    """:data:`UNRELATED` embedded by ``embedder``, float32 ``(len(UNRELATED), dim)``: computed on the first call
    for that embedder object and kept while it lives (a warm server embeds them once). Raises what
    ``embedder.encode`` raises (:class:`EmbeddingFailed`, :class:`EmbedderUnavailable`)."""
    with _LOCK:
        vectors = _CACHE.get(embedder)
    if vectors is None:
        vectors = np.asarray(embedder.encode(list(UNRELATED)), dtype=np.float32)
        with _LOCK:
            _CACHE[embedder] = vectors
    return vectors


def null_of(embedder: Embedder, query_vector: np.ndarray) -> Null:
    """The :class:`Null` of a query whose embedding by ``embedder`` is ``query_vector`` (L2-normalized, ``dim``)."""
    cosines = unrelated_vectors(embedder) @ np.asarray(query_vector, dtype=np.float32)
    return Null(float(cosines.mean()), max(float(cosines.std(ddof=1)), MIN_SPREAD))


def expected_max(n: int) -> float:
    """The expected largest of ``n`` draws from a standard normal (Blom's approximation, ``Φ⁻¹((n − 0.375) /
    (n + 0.25))``): about 0 for one row, 0.85 for 3, 2.1 for 34, 3.1 for 600, 3.9 for 10 000. ``n`` < 1 counts as
    1."""
    n = max(int(n), 1)
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))
