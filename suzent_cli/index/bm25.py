"""BM25 in memory, as lance's full-text index scores it: the resident first stage of a kept store's text runs.

A warm server keeps its table's rows in memory (:meth:`suzent_cli.index.store.ReadStore.keep_resident`); this
module lets it answer recall's two BM25 runs (``content`` and ``search_text``) from memory as well, where lance's
full-text search costs ~3 ms fixed plus ~20 ms for a pool of 100 at 100k rows (BENCHMARKS.md, issue 25, item 5).

* **Tokens.** Exactly lance's: every word goes through lance's own analyzer (``lancedb.tokenize`` with the options
  the index records: simple tokenizer, tokens of 40 bytes or more dropped, lower case, the Snowball English stemmer,
  English stop words, ASCII folding, in that order). Those filters act on one token at a time, so a word's token
  does not depend on its neighbours: :class:`Analyzer` splits a text into words as lance's simple tokenizer does
  (runs of letters and digits) and asks lance once per distinct word (cached). A text with a non-ASCII character is
  given to lance whole (Unicode's letters, marks and digits split as lance splits them, whatever Python's ``\\w``
  says). ``store.py`` supplies the call (it is the only lancedb import).
* **Scores.** lance's BM25 (``lance-index`` ``scorer.rs``): ``idf = ln((N − n + 0.5) / (n + 0.5) + 1)``,
  ``(K1 + 1) · tf / (tf + K1 · (1 − B + B · len / avgdl))``, K1 1.2, B 0.75, summed over the query's tokens with
  repeats (a word given twice counts twice, as in lance); ``N`` counts the documents with at least one token,
  ``avgdl`` is their mean token count. The statistics are those of the rows the table version holds. lance's own
  come from its index: equal to these while the index covers every row and none was deleted since it was built
  (what a build or a compaction leaves); rows added since are scored by lance over the index's statistics plus
  theirs, and deleted rows stay counted until the next rebuild, so there the two differ by the share of such rows
  (a few percent of a score; ``tests/test_bm25_resident.py``).
* **Order.** Best score first, equal scores by row address (lance orders ties arbitrarily).

Memory: per text field, 6 bytes per distinct (word, row) pair and 4 per row, plus the vocabulary (100k synthetic
facts: ~30 MB for both fields).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

K1, B = 1.2, 0.75
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
WORD_CACHE = 500_000  # distinct words whose token is kept (past it the cache starts over)


class Analyzer:
    """A text's tokens as lance's full-text index makes them (module doc), as ids of a vocabulary shared by the
    segments of a resident copy. ``tokenize(text) -> list[str]`` is lance's analyzer for the index's options
    (``store.py``); ``digits_below``: a word of ASCII digits shorter than this many bytes is its own token (true of
    lance's analyzer unless custom stop words could name a number; None: ask lance). Thread-safe: the resident
    copy's reader adds words while queries read."""

    def __init__(self, tokenize: Callable[[str], list[str]], options: Any = None, digits_below: int | None = None):
        self._tokenize = tokenize
        self.options = options  # what ``tokenize`` was made from (an analyzer is reused for the same options)
        self._digits_below = digits_below
        self._words: dict[str, int] = {}  # word as written -> its token's id, -1 when lance drops it
        self.vocabulary: dict[str, int] = {}  # token -> id (append-only: ids stay valid in every segment)
        self._lock = threading.Lock()

    def _id(self, token: str) -> int:
        tid = self.vocabulary.get(token)
        if tid is None:
            with self._lock:
                tid = self.vocabulary.setdefault(token, len(self.vocabulary))
        return tid

    def _learn(self, word: str) -> None:
        if self._digits_below is not None and word.isdigit():
            tokens = [word] if len(word) < self._digits_below else []
        else:
            tokens = self._tokenize(word)
        if len(self._words) >= WORD_CACHE:
            self._words = {}
        self._words[word] = self._id(tokens[0]) if len(tokens) == 1 else -1

    def ids(self, text: str | None) -> list[int]:
        """The token ids of ``text`` in order, repeats kept, new tokens added to the vocabulary (None, "":
        none). A text with a non-ASCII character goes to lance whole; an ASCII one is split into words, each
        looked up (lance asked once per new word)."""
        if not text:
            return []
        if not text.isascii():
            return [self._id(token) for token in self._tokenize(text)]
        words = _ASCII_WORD.findall(text)
        found = list(map(self._words.get, words))
        if None in found:
            for word in {w for w, f in zip(words, found, strict=True) if f is None}:
                self._learn(word)
            found = [self._words.get(w) for w in words]
            if None in found:  # the cache started over meanwhile: this text's words one by one
                found = [self._words[w] if w in self._words else (self._learn(w), self._words[w])[1] for w in words]
        return [f for f in found if f >= 0]

    def query(self, text: str) -> list[int | None]:
        """The vocabulary ids of a query's tokens (lance's analyzer on the whole text), repeats kept; None for a
        token no segment holds. The vocabulary is not changed."""
        return [self.vocabulary.get(token) for token in self._tokenize(text)]


class Postings:
    """One text field of a set of rows (a resident segment's), inverted: for each token id its rows (indexes into
    the set, ascending) and the token's count in each (CSR: ``starts[t]:starts[t + 1]`` of ``rows``/``counts``);
    ``lengths``: each row's token count. Never changed once made."""

    def __init__(self, terms, rows, counts, lengths, ordered: bool = False):
        import numpy as np

        if not ordered:  # by token id, then row (``ordered``: already so)
            order = np.lexsort((rows, terms))
            terms, rows, counts = terms[order], rows[order], counts[order]
        self.rows = rows.astype(np.int32, copy=False)
        self.counts = counts.astype(np.uint16, copy=False)
        self.lengths = lengths.astype(np.int32, copy=False)
        size = int(terms[-1]) + 1 if len(terms) else 0
        self.starts = np.searchsorted(terms, np.arange(size + 1)).astype(np.int64)

    @classmethod
    def build(cls, texts: list[str | None], analyzer: Analyzer) -> Postings:
        """The postings of ``texts`` (one per row, in row order) through ``analyzer``."""
        builder = PostingsBuilder(analyzer)
        builder.add(texts)
        return builder.done()

    @classmethod
    def merged(cls, parts: list[tuple[Postings, Any]]) -> Postings:
        """One set from ``parts``: ``(postings, kept)`` with ``kept`` the indexes of the rows kept, in their new
        order (row ``kept[j]`` of a part becomes row ``j`` after the rows of the parts before it)."""
        import numpy as np

        terms, rows, counts, lengths = [], [], [], []
        offset = 0
        for postings, kept in parts:
            renumber = np.full(len(postings.lengths), -1, dtype=np.int64)
            renumber[kept] = np.arange(len(kept)) + offset
            term_of = np.repeat(np.arange(len(postings.starts) - 1), np.diff(postings.starts))
            new = renumber[postings.rows]
            keep = new >= 0
            terms.append(term_of[keep])
            rows.append(new[keep])
            counts.append(postings.counts[keep])
            lengths.append(postings.lengths[kept])
            offset += len(kept)
        return cls(np.concatenate(terms), np.concatenate(rows), np.concatenate(counts), np.concatenate(lengths))

    def of(self, tid: int):
        """``(rows, counts)`` of token id ``tid`` (empty arrays when no row holds it)."""
        if tid + 1 >= len(self.starts):
            return self.rows[:0], self.counts[:0]
        a, b = self.starts[tid], self.starts[tid + 1]
        return self.rows[a:b], self.counts[a:b]

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.counts.nbytes + self.lengths.nbytes + self.starts.nbytes)


class PostingsBuilder:
    """:class:`Postings` made from texts given a batch at a time (a scan's batches), rows numbered in the order
    given: the token ids are kept as int32 arrays, never as one Python list (100k rows: ~4M tokens a field)."""

    def __init__(self, analyzer: Analyzer):
        self._analyzer = analyzer
        self._chunks: list[Any] = []
        self._lengths: list[Any] = []

    def add(self, texts: list[str | None]) -> None:
        import numpy as np

        ids: list[int] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            row_ids = self._analyzer.ids(text)
            lengths[i] = len(row_ids)
            ids += row_ids
        self._chunks.append(np.asarray(ids, dtype=np.int32))
        self._lengths.append(lengths)

    def done(self) -> Postings:
        import numpy as np

        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)
        tids = np.concatenate(self._chunks) if self._chunks else np.zeros(0, dtype=np.int32)
        self._chunks, self._lengths = [], []
        # every token's (id, row), sorted by id (stable: rows stay ascending), then each run of one (id, row)
        # counted: 32-bit arrays, one sort (a few times the token count in bytes, briefly)
        order = np.argsort(tids, kind="stable")
        tids = tids[order]
        rows = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)[order]
        del order
        first = np.ones(len(tids), dtype=bool)
        first[1:] = (tids[1:] != tids[:-1]) | (rows[1:] != rows[:-1])
        at = np.flatnonzero(first)
        counts = np.diff(np.append(at, len(tids)))
        return Postings(tids[at], rows[at], np.minimum(counts, np.iinfo(np.uint16).max), lengths, ordered=True)


def idf(with_token: int, documents: int) -> float:
    """lance's inverse document frequency of a token held by ``with_token`` of ``documents`` documents."""
    import math

    return math.log((documents - with_token + 0.5) / (with_token + 0.5) + 1.0)


def search(parts: list[tuple[Postings, Any]], query_ids: list[int | None], limit: int,
           keep: list[Any] | None = None) -> list[tuple[float, int, int]]:
    """BM25 of every row of ``parts`` for a query of token ids (repeats kept; None: a token no row holds), best
    first: ``[(score, part, row)]``, at most ``limit``, only rows with a score; equal scores in part, then row
    order (the caller's parts and rows are in row-address order). ``parts``: ``(postings, live)``, ``live`` a
    boolean mask of the rows the table version holds (None: all). The statistics (``N``, ``avgdl``, each token's
    document count) are those of the live rows (module doc). ``keep``: per part, a boolean mask of the rows that
    may be returned (a recall's scope, :mod:`suzent_cli.scope`; None: every live row), applied before the ranking
    without changing the statistics, as lance's prefiltered full-text search scores."""
    import numpy as np

    wanted = [tid for tid in query_ids if tid is not None]
    if not wanted or limit <= 0:
        return []
    documents = 0
    tokens = 0
    held: dict[int, int] = {}
    for postings, live in parts:
        lengths = postings.lengths if live is None else postings.lengths[live]
        documents += int(np.count_nonzero(lengths))
        tokens += int(lengths.sum())
        for tid in set(wanted):
            rows, _ = postings.of(tid)
            held[tid] = held.get(tid, 0) + (len(rows) if live is None else int(np.count_nonzero(live[rows])))
    if not documents:
        return []
    avgdl = tokens / documents
    weights = {tid: idf(n, documents) for tid, n in held.items() if n}
    found: list[tuple[float, int, int]] = []
    for k, (postings, live) in enumerate(parts):
        scores = None
        for tid in wanted:
            weight = weights.get(tid)
            if weight is None:
                continue
            rows, counts = postings.of(tid)
            if not len(rows):
                continue
            if scores is None:
                scores = np.zeros(len(postings.lengths), dtype=np.float32)
            tf = counts.astype(np.float32)
            norm = np.float32(K1) * (np.float32(1 - B) + np.float32(B) * postings.lengths[rows].astype(np.float32)
                                     / np.float32(avgdl))
            scores[rows] += np.float32(weight) * (np.float32(K1 + 1) * tf / (tf + norm))
        if scores is None:
            continue
        if live is not None:
            scores[~live] = 0
        if keep is not None and keep[k] is not None:
            scores[~keep[k]] = 0
        hit = np.flatnonzero(scores > 0)
        if len(hit) > limit:  # the best `limit` and every row tied with the last of them
            values = scores[hit]
            hit = hit[values >= np.partition(values, len(hit) - limit)[len(hit) - limit]]
        best = hit[np.lexsort((hit, -scores[hit]))[:limit]]  # best first, equal scores by row
        found += [(float(scores[i]), k, int(i)) for i in best.tolist()]
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return found[:limit]
