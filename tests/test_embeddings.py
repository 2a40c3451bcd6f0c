"""Loading embedding models: bundled ones offline, others from the local cache before the hub."""

from __future__ import annotations

from typing import Any

import pytest
import sentence_transformers

import convrag.embeddings
from convrag.embeddings import load_embedder
from convrag.errors import ConfigError


def _recording(monkeypatch: pytest.MonkeyPatch, loads: bool = False) -> list[bool]:
    """Record, for each model sentence-transformers is asked for, whether it may use the network;
    with ``loads`` a model from the local cache loads (a stand-in: no such model is cached here)."""
    asked: list[bool] = []
    real = sentence_transformers.SentenceTransformer

    def recording(*args: Any, **kwargs: Any) -> Any:
        asked.append(not kwargs.get("local_files_only", False))
        if loads and kwargs.get("local_files_only"):
            return real(convrag.embeddings.resolve_model_path("all-MiniLM-L6-v2")[0], device="cpu")
        return real(*args, **kwargs)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", recording)
    return asked


def test_a_model_nowhere_on_this_machine_is_refused_without_waiting_on_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped or never-downloaded name went to the hub, which sentence-transformers retries for
    76 s here (no network) before it fails: a service said so at its first upload, a minute late."""
    asked = _recording(monkeypatch)
    monkeypatch.setattr(convrag.embeddings, "hub_unreachable", lambda timeout_s=5.0: "Name or service not known")
    with pytest.raises(ConfigError) as error:
        load_embedder("all-MiniLM-L6-v3")
    assert asked == [False]  # the local cache only
    assert str(error.value) == (
        "cannot load embedding model 'all-MiniLM-L6-v3': it is not one that ships with convrag (all-MiniLM-L6-v2, "
        "all-mpnet-base-v2), not a model folder, and not in the Hugging Face cache; the hub cannot be reached to "
        "download it (Name or service not known)")


def test_a_model_in_the_hugging_face_cache_loads_without_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _recording(monkeypatch, loads=True)

    def unasked(timeout_s: float = 5.0) -> str:
        raise AssertionError("the hub was asked for a model the cache has")

    monkeypatch.setattr(convrag.embeddings, "hub_unreachable", unasked)
    embedder = load_embedder("someone/cached-model")
    assert asked == [False] and embedder.name == "someone/cached-model" and embedder.dimension == 384
    convrag.embeddings._CACHE.clear()


def test_a_missing_folder_is_named_as_one(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A path that is not there was passed to the hub as a model name, and the error spoke of repo ids."""
    for missing in (str(tmp_path / "models" / "mine"), "./models/mine", "~/no-such-models/mine"):
        with pytest.raises(ConfigError) as error:
            load_embedder(missing)
        assert str(error.value) == f"cannot load embedding model {missing!r}: no such folder"
