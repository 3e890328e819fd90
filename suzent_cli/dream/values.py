"""Is the value a change ends at the same kind of thing as a word of an older statement? The model half of the
same-subject test (:mod:`suzent_cli.vault.supersede` is the word half and stays model-free).

"I switched to coffee" shares no word with "I drink tea every morning", yet replaces it: *coffee* and *tea* are
the same kind of thing. :class:`ModelJudge` asks the configured embedder two questions, each read against what
unrelated text scores under the same model (the yardstick of :mod:`suzent_cli.index.unrelated`, so one threshold
holds for every model):

* **the statements**: the newer statement's cosine with the older one, as a z-score against
  :data:`~suzent_cli.index.unrelated.UNRELATED` sentences, must reach :data:`SENTENCE_Z` (about the same matter);
* **the value**: the new value's ("coffee") best cosine with a word of the older statement ("tea"; a two-word
  value with each two adjacent content words: "light mode" / "dark mode"),
  as a z-score against :data:`UNRELATED_WORDS`, must reach :data:`VALUE_Z` (the same kind of thing).

The score is the sum of the two z-scores. A model that cannot tell kinds of things apart (the hash embedder: a
word's vector is one hashed coordinate, so two words are identical or unrelated) fails the calibration
(:data:`CALIBRATION`: pairs of one kind, median z below :data:`CALIBRATION_Z`) and the judge answers None for everything:
no supersession, never a false one.

Vectors are cached per judge (one dream run, one lint pass) and encoded in batches; the model loads on the first
question (a run where no statement names a new value never loads it). Capture never imports this module.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from statistics import median

import numpy as np

from suzent_cli.errors import SuzentError
from suzent_cli.vault.supersede import Statement, value_words

# Everyday nouns of no particular kind, none a likely value of a fact about a user. Changing them changes the
# threshold: measure benchmarks/updates.py before and after.
UNRELATED_WORDS = tuple(
    "window umbrella violin harbour carpet pencil glacier thunder bicycle lantern orchard saddle chimney parrot "
    "ladder blanket compass marble tunnel meadow kettle anchor trumpet pillow volcano sandal ribbon magnet canyon "
    "feather tractor lemon castle spoon rocket cabbage wallet tornado piano helmet envelope brick puzzle cactus "
    "mirror fountain needle pyramid slipper walrus bucket candle crayon dolphin drum fence glove hammock iceberg "
    "jigsaw kite".split())
# Pairs of one kind, used only to check that the model tells kinds apart (none is a value the benchmark uses).
CALIBRATION = (("apple", "pear"), ("violin", "cello"), ("monday", "thursday"), ("oak", "pine"), ("red", "blue"),
               ("sparrow", "robin"), ("copper", "iron"), ("rice", "pasta"), ("sofa", "armchair"),
               ("rain", "snow"), ("tennis", "golf"))
VALUE_Z = 4.0  # the new value vs the older statement's closest word: spreads above unrelated words
# The calibration pairs' median z must reach this: above what the best of the unrelated words scores by chance
# (the expected maximum of 62 normal draws is 2.4); MiniLM gives 3.9, a hash embedder 0.
CALIBRATION_Z = 3.0
# Lint's lower bar for the value (``strict=False``): close enough for a person to look ("bus" / "car", z 3.9).
REVIEW_VALUE_Z = 3.0
SENTENCE_Z = 3.0  # the two statements: spreads above unrelated sentences
MIN_SPREAD = 1e-3


_SHARED: dict[str, object] = {}  # spec -> lazy embedder: a process (a server, a test run) loads each model once
_SHARED_LOCK = threading.Lock()
# embedder -> (unrelated words, unrelated sentences, calibration z): computed once per embedder object
_YARDSTICKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def shared_embedder(spec: str):
    """The process's one lazy embedder for ``spec`` (:func:`suzent_cli.index.embed.lazy_embedder`): the model
    loads at its first encode and stays loaded for every later judge. Raises :class:`EmbedderUnavailable` for an
    unknown spec or a missing model package."""
    from suzent_cli.index.embed import lazy_embedder

    with _SHARED_LOCK:
        if spec not in _SHARED:
            _SHARED[spec] = lazy_embedder(spec)
        return _SHARED[spec]


class ModelJudge:
    """A :class:`suzent_cli.vault.supersede.ValueJudge` on an embedder: ``embedder`` (an object with
    ``encode(list[str]) -> (n, dim)`` L2-normalized float32) or ``spec`` (an embedder name, loaded lazily through
    :func:`suzent_cli.index.embed.lazy_embedder` on the first question). An embedder that cannot load or encode
    turns the judge off (every answer None), :attr:`problem` says why and :attr:`unavailable` is True (the dream
    warns); nothing is raised."""

    def __init__(self, embedder=None, *, spec: str | None = None):
        self._embedder, self._spec = embedder, spec
        self._vectors: dict[str, np.ndarray] = {}
        self._null_words: np.ndarray | None = None
        self._null_sentences: np.ndarray | None = None
        self._able: bool | None = None
        self.problem: str | None = None
        self.unavailable = False  # the embedder failed to load or encode (``problem`` says why): not a choice

    # --- vectors ---------------------------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> None:
        """Encode the ``texts`` not cached yet, in one batch."""
        if self._embedder is None:
            self._embedder = shared_embedder(self._spec or "hash")
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not missing:
            return
        vectors = np.asarray(self._embedder.encode(missing), dtype=np.float32)
        self._vectors.update(zip(missing, vectors, strict=True))

    def _ready(self) -> bool:
        """Load the yardsticks once per embedder (kept while it lives: a second run of the same process encodes
        none of them again) and check the model tells kinds apart (module doc)."""
        if self._able is not None:
            return self._able
        try:
            self._encode([])  # the embedder, loaded (lazily) from the spec
            with _SHARED_LOCK:
                known = _YARDSTICKS.get(self._embedder)
            if known is None:
                from suzent_cli.index.unrelated import UNRELATED

                pairs = [w for pair in CALIBRATION for w in pair]
                self._encode([*UNRELATED_WORDS, *UNRELATED, *pairs])
                words = np.stack([self._vectors[w] for w in UNRELATED_WORDS])
                calibration = median(self._z(words, self._vectors[a], self._vectors[b]) for a, b in CALIBRATION)
                known = (words, np.stack([self._vectors[t] for t in UNRELATED]), calibration)
                with _SHARED_LOCK:
                    _YARDSTICKS[self._embedder] = known
            self._null_words, self._null_sentences, calibration = known
            self._able = calibration >= CALIBRATION_Z
            if not self._able:
                self.problem = f"the embedder does not tell kinds of things apart (calibration z {calibration:.1f})"
        except SuzentError as exc:  # the model is missing or fails: no model verdicts, the words still decide
            self._able, self.problem, self.unavailable = False, f"no embedder for values: {exc}", True
        return self._able

    @staticmethod
    def _z(null: np.ndarray, probe: np.ndarray, other: np.ndarray) -> float:
        """How many spreads ``probe``·``other`` lies above ``probe``'s cosines with the rows of ``null``."""
        cosines = null @ probe
        spread = max(float(cosines.std(ddof=1)), MIN_SPREAD)
        return (float(probe @ other) - float(cosines.mean())) / spread

    # --- the question ----------------------------------------------------------------------------------------
    def closeness(self, newer: Statement, value: str, olders: Sequence[Statement], *,
                  strict: bool = True) -> list[float | None]:
        """For each of ``olders``: the sum of the sentence z and the value z when both reach their thresholds
        (module doc; ``strict=False``: the value z need only reach :data:`REVIEW_VALUE_Z`), else None. All None
        when the judge is off."""
        if not olders or not self._ready():
            return [None] * len(olders)
        try:
            self._encode([newer.key, *(o.key for o in olders)])
            sentence = [self._z(self._null_sentences, self._vectors[newer.key], self._vectors[o.key]) for o in olders]
            near = [i for i, z in enumerate(sentence) if z >= SENTENCE_Z]
            words = {i: value_words(olders[i], len(value.split())) for i in near}
            self._encode([value, *(w for ws in words.values() for w in ws)])
        except SuzentError as exc:
            self._able, self.problem, self.unavailable = False, f"no embedder for values: {exc}", True
            return [None] * len(olders)
        out: list[float | None] = [None] * len(olders)
        probe = self._vectors[value]
        for i in near:
            best = max((self._z(self._null_words, probe, self._vectors[w]) for w in words[i]), default=0.0)
            if best >= (VALUE_Z if strict else REVIEW_VALUE_Z):
                out[i] = round(sentence[i] + best, 3)
        return out
