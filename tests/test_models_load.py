"""The registry's models really load (offline, weights checked) and a query prefix really reaches the model: one
load of the bundled MiniLM for the module."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from suzent_cli.index import embed
from suzent_cli.index.embed import BUNDLED, SentenceTransformerEmbedder, encode_query, load_embedder

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("all-MiniLM-L6-v2")


def test_every_registered_model_passes_its_checksums_and_declares_its_dimension(minilm):
    for model in BUNDLED.values():
        model_dir = model.verify()
        assert embed._model_dim(model_dir) == model.dim
    assert (minilm.name, minilm.dim) == ("all-MiniLM-L6-v2", 384)
    assert minilm.query_prefix == minilm.passage_prefix == ""


def test_minilm_queries_and_passages_are_embedded_alike(minilm):
    text = ["which editor does the user use"]
    assert np.allclose(encode_query(minilm, text), minilm.encode(text), atol=1e-6)


def test_a_query_prefix_reaches_the_model(minilm):
    model = dataclasses.replace(BUNDLED["all-MiniLM-L6-v2"], query_prefix="query: ", passage_prefix="passage: ")
    prefixed = SentenceTransformerEmbedder(model.verify(), "prefixed", query_prefix=model.query_prefix,
                                           passage_prefix=model.passage_prefix)
    q, p = encode_query(prefixed, ["green tea"]), prefixed.encode(["green tea"])
    assert np.allclose(q, minilm.encode(["query: green tea"]), atol=1e-5)
    assert np.allclose(p, minilm.encode(["passage: green tea"]), atol=1e-5)
    assert not np.allclose(q, p, atol=1e-3)


def test_a_bundled_model_is_loaded_once_per_process_and_still_checked_at_every_call(monkeypatch):
    """The dream's same-subject judge, the indexer and reconcile of one run share one loaded model (issue 16: the
    dream loaded MiniLM twice); each load_embedder call still verifies the weights first."""
    first = load_embedder("all-MiniLM-L6-v2")
    checked = []
    model = embed.bundled_model("all-MiniLM-L6-v2")
    monkeypatch.setattr(type(model), "verify", lambda self: checked.append(self.name) or self.model_dir())
    assert load_embedder("all-MiniLM-L6-v2") is first
    assert load_embedder("sentence-transformers/all-MiniLM-L6-v2") is first  # an alias names the same model
    assert checked == ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2"]
