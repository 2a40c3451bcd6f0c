from pathlib import Path

import numpy as np
import pytest

from convrag.embeddings import Embedder
from convrag.index.dense import DenseIndex, embed_resumable


def test_exact_search_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((500, 16)).astype(np.float32)
    queries = rng.standard_normal((7, 16)).astype(np.float32)
    positions, scores = DenseIndex(matrix).search(queries, 10, batch=3)
    expected = np.argsort(-(queries @ matrix.T), axis=1)[:, :10]
    assert np.array_equal(positions, expected)
    assert np.allclose(scores, np.take_along_axis(queries @ matrix.T, expected, axis=1))


def test_ties_are_ordered_by_position_and_k_is_capped() -> None:
    positions, _ = DenseIndex(np.ones((4, 2), dtype=np.float32)).search(np.ones((1, 2), dtype=np.float32), 10)
    assert positions.tolist() == [[0, 1, 2, 3]]


class _Interrupted(Exception):
    pass


def test_interrupted_embedding_resumes(tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(10)]
    fingerprint = {"corpus_sha256": "abc", "model": embedder.name}
    calls: list[int] = []
    real_encode = Embedder.encode

    def crashing(self: Embedder, block, progress=None, chunk=1024):  # type: ignore[no-untyped-def]
        if len(calls) == 2:
            raise _Interrupted()
        calls.append(len(block))
        return real_encode(self, block)

    monkeypatch.setattr(Embedder, "encode", crashing)
    with pytest.raises(_Interrupted):
        embed_resumable(texts, embedder, tmp_path / "staging", fingerprint, shard_size=4)
    assert calls == [4, 4]

    monkeypatch.setattr(Embedder, "encode", lambda self, block, progress=None, chunk=1024: (calls.append(len(block)), real_encode(self, block))[1])
    vectors = embed_resumable(texts, embedder, tmp_path / "staging", fingerprint, shard_size=4)
    assert calls == [4, 4, 2], "only the missing shard is embedded after the interruption"
    assert np.allclose(vectors, real_encode(embedder, texts), atol=1e-5)

    calls.clear()
    embed_resumable(texts, embedder, tmp_path / "staging", {**fingerprint, "corpus_sha256": "other"}, shard_size=4)
    assert calls == [4, 4, 2], "shards of another corpus are never reused"
