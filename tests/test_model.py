"""The bundled all-MiniLM-L6-v2: checksum enforced, unknown names refused. Loading and embedding with no network, in a
fresh process, is integration/test_model_offline.py."""

from __future__ import annotations

import pytest

from suzent_cli.errors import EmbedderUnavailable
from suzent_cli.index.embed import BUNDLED_SHA256, SentenceTransformerEmbedder, bundled_model_dir, sha256_file

pytestmark = pytest.mark.model

def test_bundled_weights_match_the_pinned_checksum():
    assert sha256_file(bundled_model_dir() / "model.safetensors") == BUNDLED_SHA256


def test_checksum_mismatch_refuses_to_load():
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        SentenceTransformerEmbedder(bundled_model_dir(), "x", expected_sha256="0" * 64)


def test_unknown_embedder_names_the_choices(tmp_path):
    from suzent_cli.index.embed import load_embedder

    with pytest.raises(EmbedderUnavailable, match="never downloaded"):
        load_embedder("sentence-transformers/all-mpnet-base-v2")
    with pytest.raises(EmbedderUnavailable, match="not a sentence-transformers model"):
        load_embedder(str(tmp_path))


def test_a_query_is_encoded_on_one_torch_thread_wherever_it_runs():
    """The thread count changes the float sums (MiniLM, one query: 7e-8 apart on 2 threads against 1). The server
    encoded queries on one thread and a cold process on all, so a relayed `recall --json` printed other last digits
    than the cold one (a trial finding). The rule now lives in the model embedder: at most QUERY_TEXTS texts, one
    thread, whoever asks; a larger batch keeps every thread; the count is restored either way."""
    import numpy as np
    import torch

    from suzent_cli.index.embed import QUERY_TEXTS, SentenceTransformerEmbedder

    seen = []

    class Model:
        def encode(self, texts, **kw):
            seen.append((len(texts), torch.get_num_threads()))
            return np.ones((len(texts), 4), dtype=np.float32) / 2

    emb = object.__new__(SentenceTransformerEmbedder)
    emb._model, emb.dim, emb.name, emb.query_prefix, emb.passage_prefix = Model(), 4, "fake", "", ""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        emb.encode_query(["where does the user live"])
        emb.encode(["a"] * QUERY_TEXTS)
        emb.encode(["a"] * (QUERY_TEXTS + 1))
        assert seen == [(1, 1), (QUERY_TEXTS, 1), (QUERY_TEXTS + 1, 2)]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
