"""Read-your-writes: the daily-log fact lines that are not in the index yet (the *pending rows*), for recall.

A capture appends to a daily log and returns; the indexer makes the line a row later (``capture --index``, the
server's index worker, ``suzent index``, the chain). Until then recall would not find it: the MCP ``remember`` of a
fresh home, a fact the cold Stop hook captured, a ``capture --fact``. So every recall (:func:`suzent_cli.recall.recall`,
whatever path calls it) also considers the pending rows, found and scored here:

* **Which logs.** The logs whose current ``(mtime_ns, size)`` differ from what the indexer recorded in
  ``index_state.json`` (:mod:`suzent_cli.index.indexer`), or that it never recorded; also a log changed in the last
  :data:`RECENT_NS` (an append and an index pass in the same clock tick leave the same stat). When none is, this
  costs one directory listing, a ``stat`` per log and a ``stat`` of the state file (its parse is kept while its
  stat holds): no file is read.
* **Which lines.** Of the newest :data:`MAX_FILES` such logs, the documents the indexer would make
  (:func:`suzent_cli.index.sources.log_documents`, with the ONE tombstone/forgotten filter and the same context
  window, so the same row ids) whose id the table does not hold for that file (:meth:`ReadStore.positions`); the
  newest :data:`MAX_ROWS` of them. A tombstone file that cannot be read whole, or one missing tombstones the index
  applied (:func:`~suzent_cli.index.indexer.lost_tombstones`), yields no pending row: forgotten text never
  resurfaces. A line the indexer has meanwhile indexed is a table row, so it is not pending (and recall merges by
  row id, so it is never shown twice).
* **Scoring** (:func:`bm25_scores`, :func:`vector_scores`): as the index would score the same row, as far as that
  can be done without it. BM25 (k1 1.2, b 0.75, idf ``ln(1 + (N − n + 0.5) / (n + 0.5))``, lance's formula) over
  the same analysis as the index's (:func:`analyze`: lower case, ASCII folding, English stop words; the stemming is
  a lighter one than the index's Snowball stemmer: plurals, ``-ed``, ``-ing``), with ``N`` the table's rows plus
  the pending ones, ``n`` a term's pending documents plus the table's (one BM25 query per matched term and column,
  counted up to :data:`DF_CAP`), and the mean length of the pending documents as the average. The vector score is
  the cosine of the row's embedding (computed here, for the newest :data:`MAX_EMBEDDED` pending rows, kept per
  process for :data:`VECTOR_CACHE` rows) against the query's. Recall then fuses them with the table's rows (docs/ranking.md).

Nothing here writes; the indexer stays the only writer of the index.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.config import Settings, context_window_of
from suzent_cli.errors import SuzentError
from suzent_cli.files import read_text

MAX_FILES = 8  # the newest logs looked at for pending lines
MAX_ROWS = 200  # the newest pending lines kept (each embedded once per process when the recall has a vector run)
RECENT_NS = 5_000_000_000  # a log changed this recently is checked against the table whatever the state says
DF_CAP = 1000  # a term's document frequency in the table is counted up to this many rows
MAX_EMBEDDED = 32  # the newest pending lines given a vector score; older ones are found by their words alone
VECTOR_CACHE = 4 * MAX_ROWS
K1, B = 1.2, 0.75
ENABLED = True  # benchmarks/read_your_writes.py turns it off to measure what it costs

# The index's analyzer (lance FTS: simple tokenizer, lower case, ASCII folding, tantivy's English stop words).
_STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their then "
                  "there these they this to was will with".split())
_TOKEN = re.compile(r"[0-9a-z]+")
_MAX_TOKEN = 40
_VOWELS = "aeiouy"
_LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}\.md\Z")


@dataclass
class Pending:
    """The pending rows of one recall. ``rows``: row dicts shaped like the table's (``id, content, metadata`` (JSON
    text)``, importance, created_at, source, locator, source_date``) plus ``search_text`` and ``embed_text``, newest
    last; ``positions``: ``(id, source, locator)`` of every pending row and of the table's rows of the same logs (for
    recall's neighbour step); ``indexed_rows``: how many rows the table holds (``N`` of BM25)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    positions: list[tuple[str, str, int]] = field(default_factory=list)
    indexed_rows: int = 0
    scope_of: dict[str, str] = field(default_factory=dict)  # row id -> scope, for every row of ``positions``

    def __bool__(self) -> bool:
        return bool(self.rows)

    def scoped(self, scopes: tuple[str, ...] | frozenset | None) -> Pending:
        """These pending rows and positions restricted to rows of ``scopes`` (:mod:`suzent_cli.scope`; None: all),
        before any ranking: a recall in one project never scores another project's unindexed line."""
        if scopes is None:
            return self
        keep = set(scopes)
        rows = [r for r in self.rows if (r.get("scope") or "") in keep]
        positions = [p for p in self.positions if self.scope_of.get(p[0], "") in keep]
        return Pending(rows, positions if rows else [], self.indexed_rows,
                       {rid: s for rid, s in self.scope_of.items() if s in keep})


class NoTable:
    """The table of a home that has none yet, for a recall over pending rows only: every search finds nothing.
    Offers what :func:`suzent_cli.recall.search` reads of a :class:`~suzent_cli.index.store.ReadStore`."""

    def count(self, where: str | None = None) -> int:
        return 0

    def scope_where(self, scopes: Any) -> str | None:
        return None

    def fts_search(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []

    def vector_search(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []

    def neighbourhood(self, rows: list) -> list[dict[str, Any]]:
        return []

    def positions(self, sources: list[str]) -> list[dict[str, Any]]:
        return []

    def rows_at(self, row_ids: list[int]) -> list[dict[str, Any]]:
        return []

    def rows_by_id(self, ids: list[str]) -> list[dict[str, Any]]:
        return []

    def check(self, embedder_name: str, dim: int) -> None:
        return None


# --- which logs ---------------------------------------------------------------------------------------------------

_STATE_CACHE: dict[str, tuple[tuple[int, int], dict]] = {}
_STATE_LOCK = threading.Lock()


def _recorded(index_dir: Path) -> dict:
    """``{label:filename: {"mtime_ns", "size"}}`` from the index state (empty when there is none or it cannot be
    read: every log counts as pending then). The parse is kept while the file's stat is unchanged."""
    from suzent_cli.index.indexer import STATE_FILE

    path = index_dir / STATE_FILE
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    key = str(path)
    with _STATE_LOCK:
        hit = _STATE_CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        files = state.get("files") if isinstance(state, dict) else None
        files = files if isinstance(files, dict) else {}
    except (OSError, ValueError, RecursionError):
        files = {}
    with _STATE_LOCK:
        _STATE_CACHE.clear()  # one home per process in practice; tests use many
        _STATE_CACHE[key] = (stamp, files)
    return files


def pending_logs(settings: Settings) -> list[Path]:
    """The daily logs that may hold lines the index lacks (module doc), newest day first, at most
    :data:`MAX_FILES`. Costs a directory listing and a ``stat`` per log (plus the state file's); reads no log.
    [] when the pending search is off (:data:`ENABLED`) or there is no archive."""
    if not ENABLED:
        return []
    archive_dir = settings.paths.archive_dir
    recorded = _recorded(settings.paths.index_dir)
    now = time.time_ns()
    out: list[tuple[str, Path]] = []
    try:
        entries = list(os.scandir(archive_dir))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not _LOG_NAME.match(name):
            continue  # a name that looks like a day but is none (2026-02-30.md) is skipped by pending_rows
        try:
            st = entry.stat()
        except OSError:
            continue
        rec = recorded.get("archive:" + name)
        changed = not isinstance(rec, dict) or rec.get("mtime_ns") != st.st_mtime_ns or rec.get("size") != st.st_size
        if changed or now - st.st_mtime_ns < RECENT_NS:
            out.append((name, entry.path))
    out.sort(reverse=True)
    return [Path(p) for _, p in out[:MAX_FILES]]


def _filter(settings: Settings):
    """``(tombstones, forgotten, context window)`` as the indexer applies them, or None when the tombstone file
    cannot be trusted (unreadable, or missing tombstones the index applied): then nothing pending is shown."""
    from suzent_cli.index.indexer import lost_tombstones
    from suzent_cli.vault.forgotten import Forgotten
    from suzent_cli.vault.state import read_tombstones

    paths = settings.paths
    try:
        tombstones = read_tombstones(paths.state_dir)
        forgotten = Forgotten.from_state(paths.state_dir)
        window = context_window_of(settings)
    except (SuzentError, OSError):
        return None
    if lost_tombstones(paths.index_dir, tombstones):
        return None
    return tombstones, forgotten, window


def searches_logs(settings: Settings) -> bool:
    """Does recall find a line just appended to a daily log before it is indexed? True when the pending search is
    on (:data:`ENABLED`) and the tombstone file can be trusted (:func:`_filter`). Reads the tombstone file."""
    return ENABLED and _filter(settings) is not None


# --- which lines ----------------------------------------------------------------------------------------------------

def pending_rows(settings: Settings, store: Any | None, scopes: tuple[str, ...] | None = None) -> Pending:
    """The pending rows of ``settings``' home against ``store`` (an open :class:`ReadStore`, or None / a
    :class:`NoTable` when there is no table yet): see the module doc. ``scopes``: only lines of these scopes
    (:mod:`suzent_cli.scope`; None: all), chosen before the newest :data:`MAX_ROWS` are kept, so another project's
    busy day never crowds out this one's lines. Never raises: a log that cannot be read is skipped, and a tombstone
    file that cannot be trusted yields no row at all."""
    logs = pending_logs(settings)
    if not logs:
        return Pending()
    from suzent_cli.index.sources import log_documents, source_for_path

    paths = settings.paths
    applied = _filter(settings)
    if applied is None:
        return Pending()  # forgotten text must never resurface: without a whole tombstone set, nothing is shown
    tombstones, forgotten, window = applied
    docs = []
    for path in logs:
        source = source_for_path(paths, path)
        if source is None:
            continue
        try:
            docs += log_documents(source, read_text(path), tombstones, window, forgotten)
        except (OSError, ValueError):
            continue
    table = store if store is not None else NoTable()
    try:
        held = table.positions(sorted({d.source for d in docs})) if docs else []
        indexed_rows = table.count()
    except Exception:  # noqa: BLE001 - a table that cannot be read now: recall reports it; nothing pending shown
        return Pending()
    have = {r["id"] for r in held}
    new = [d for d in docs if d.id not in have and (scopes is None or d.scope in scopes)]
    new.sort(key=lambda d: (d.source_date or "", d.locator))
    new = new[-MAX_ROWS:]
    rows = [{"id": d.id, "content": d.content, "metadata": json.dumps(d.metadata, ensure_ascii=False),
             "importance": d.importance, "created_at": d.created_at, "source": d.source, "locator": d.locator,
             "source_date": d.source_date, "chat_id": None, "search_text": d.search_text, "embed_text": d.embed_text,
             "scope": d.scope} for d in new]
    positions = [(r["id"], r["source"], r["locator"]) for r in held if r.get("locator") is not None]
    positions += [(r["id"], r["source"], r["locator"]) for r in rows]
    scope_of = {r["id"]: r.get("scope") or "" for r in held} | {r["id"]: r["scope"] for r in rows}
    return Pending(rows, positions if rows else [], indexed_rows, scope_of)


# --- scoring --------------------------------------------------------------------------------------------------------

def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode("ascii")


def _has_vowel(word: str) -> bool:
    return any(c in _VOWELS for c in word)


def stem(word: str) -> str:
    """A light English stemmer: the inflectional steps of Snowball's (plurals, ``-ed``, ``-ing``, a final ``y``),
    so "prefers"/"preferred"/"preferring" → "prefer", "drinks" → "drink", "studies" → "studi". The index's
    Snowball stemmer also strips derivational suffixes (``-ness``, ``-ational``): those forms match there and not
    here."""
    w = word
    if len(w) <= 2:
        return w
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ied", "ies")):
        w = w[:-2] if len(w) > 4 else w[:-1]
    elif w.endswith("s") and not w.endswith(("us", "ss")) and _has_vowel(w[:-2]):
        w = w[:-1]
    for suffix in ("eedly", "eed"):
        if w.endswith(suffix):
            return w[: -len(suffix)] + "ee" if len(w) > len(suffix) + 2 else w
    for suffix in ("ingly", "edly", "ing", "ed"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                w += "e"
            elif len(w) > 2 and w[-1] == w[-2] and w[-1] in "bdfgmnprt":
                w = w[:-1]
            elif len(w) <= 3 and len(w) >= 2 and w[-1] not in _VOWELS and w[-2] in _VOWELS:
                w += "e"
            break
    if len(w) > 2 and w[-1] in "yY" and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    return w


def analyze(text: str) -> list[str]:
    """``text`` as the index's full-text analyzer sees it (module doc): lower-cased, ASCII-folded words of letters
    and digits, at most 40 characters, without English stop words, stemmed (:func:`stem`)."""
    return [stem(t) for t in _TOKEN.findall(_fold(text)) if len(t) <= _MAX_TOKEN and t not in _STOP]


def bm25_scores(pending: Pending, words: str, column: str, store: Any) -> dict[str, float]:
    """BM25 of each pending row matching ``words`` (the recall's BM25 query, :func:`suzent_cli.recall.fts_query`) in
    ``column`` (``content`` or ``search_text``), on the scale of the table's BM25 scores for the same query (module
    doc): ``{row id: score > 0}``. ``store``: the table, asked for the document frequency of each matched term
    (a :class:`NoTable` adds none)."""
    terms: dict[str, str] = {}
    for word in words.split():
        for token in analyze(word):
            terms.setdefault(token, word)
    if not terms or not pending.rows:
        return {}
    docs = [analyze(r.get(column) or "") for r in pending.rows]
    counts = [{t: d.count(t) for t in terms if t in d} for d in docs]
    matched = {t for c in counts for t in c}
    if not matched:
        return {}
    total = pending.indexed_rows + len(docs)
    avgdl = max(1.0, sum(len(d) for d in docs) / len(docs))
    idf: dict[str, float] = {}
    for t in matched:
        n = sum(1 for c in counts if t in c)
        try:
            n += len(store.fts_search(terms[t], DF_CAP, column=column))
        except Exception:  # noqa: BLE001 - no full-text index yet (or unreadable): the pending rows alone
            pass
        idf[t] = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
    out: dict[str, float] = {}
    for row, doc, c in zip(pending.rows, docs, counts, strict=True):
        if not c:
            continue
        norm = K1 * (1 - B + B * len(doc) / avgdl)
        out[row["id"]] = sum(idf[t] * tf * (K1 + 1) / (tf + norm) for t, tf in c.items())
    return out


_VECTORS: dict[tuple[str, str], Any] = {}
_VECTORS_LOCK = threading.Lock()


def vector_scores(pending: Pending, embedder: Any, query_vector: Any) -> dict[str, float]:
    """The cosine of each of the newest :data:`MAX_EMBEDDED` pending rows' embedding (its ``embed_text`` by
    ``embedder``, as the indexer would embed it; kept per process and embedder for :data:`VECTOR_CACHE` rows) with
    ``query_vector`` (L2-normalized): ``{row id: cosine}``. A process without the cache (a CLI recall) embeds them
    on every recall, so they are bounded; the older pending rows are found by BM25 only. Raises what
    ``embedder.encode`` raises."""
    import numpy as np

    rows = pending.rows[-MAX_EMBEDDED:]
    if not rows:
        return {}
    name = str(getattr(embedder, "name", ""))
    with _VECTORS_LOCK:
        missing = [r for r in rows if (name, r["id"]) not in _VECTORS]
    if missing:
        vectors = np.asarray(embedder.encode([r["embed_text"] for r in missing]), dtype=np.float32)
        with _VECTORS_LOCK:
            if len(_VECTORS) + len(missing) > VECTOR_CACHE:
                _VECTORS.clear()
            for row, vec in zip(missing, vectors, strict=True):
                _VECTORS[(name, row["id"])] = vec
    query = np.asarray(query_vector, dtype=np.float32)
    out = {}
    with _VECTORS_LOCK:
        for row in rows:
            vec = _VECTORS.get((name, row["id"]))
            if vec is not None:
                out[row["id"]] = float(vec @ query)
    for row in rows:  # dropped by a concurrent clear: embed again
        if row["id"] not in out:
            out[row["id"]] = float(np.asarray(embedder.encode([row["embed_text"]]), dtype=np.float32)[0] @ query)
    return out
