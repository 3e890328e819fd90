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
