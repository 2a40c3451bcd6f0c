"""Exact dense search over L2-normalized float32 embeddings, and resumable corpus embedding.

Search is a batched matrix product against the whole matrix (exact inner
product, which equals cosine for normalized vectors). Embedding a corpus writes
fixed-size shards into a staging folder as it goes, so an interrupted build
picks up at the first missing shard instead of starting again.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..embeddings import Embedder
from .atomic import save_npy, write_json

EMBEDDINGS_FILE = "embeddings.npy"
SHARD_SIZE = 2048


class DenseIndex:
    """A matrix of normalized passage embeddings, one row per passage position."""

    def __init__(self, embeddings: np.ndarray) -> None:
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be a 2-d matrix, got shape {embeddings.shape}")
        self.embeddings = embeddings

    @classmethod
    def load(cls, folder: Path, mmap: bool = False) -> DenseIndex:
        return cls(np.load(folder / EMBEDDINGS_FILE, mmap_mode="r" if mmap else None, allow_pickle=False))

    def save(self, folder: Path) -> None:
        save_npy(folder / EMBEDDINGS_FILE, np.ascontiguousarray(self.embeddings, dtype=np.float32))

    @property
    def size(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def dimension(self) -> int:
        return int(self.embeddings.shape[1])

    def search(self, query_vectors: np.ndarray, k: int, batch: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` positions and scores for each query row, best first (ties: lower position first)."""
        n_queries = query_vectors.shape[0]
        k = min(k, self.size)
        positions = np.zeros((n_queries, k), dtype=np.int64)
        scores = np.zeros((n_queries, k), dtype=np.float32)
        if k == 0:
            return positions, scores
        for start in range(0, n_queries, batch):
            block = query_vectors[start : start + batch]
            sims = block @ self.embeddings.T
            if k < self.size:
                top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            else:
                top = np.broadcast_to(np.arange(self.size), (block.shape[0], self.size)).copy()
            top_scores = np.take_along_axis(sims, top, axis=1)
            for row in range(block.shape[0]):
                order = np.lexsort((top[row], -top_scores[row]))
                positions[start + row] = top[row][order]
                scores[start + row] = top_scores[row][order]
        return positions, scores


def embed_resumable(
    texts: Sequence[str],
    embedder: Embedder,
    staging: Path,
    fingerprint: dict[str, object],
    progress: Callable[[int], None] | None = None,
    shard_size: int = SHARD_SIZE,
) -> np.ndarray:
    """Embed ``texts`` shard by shard under ``staging``, reusing shards from an interrupted run.

    ``fingerprint`` (corpus hash, model, shard size) is stored with the shards; a
    staging folder left by a different corpus or model is discarded, never reused.
    """
    state_file = staging / "staging.json"
    fingerprint = {**fingerprint, "shard_size": shard_size, "count": len(texts)}
    if staging.exists():
        try:
            previous = json.loads(state_file.read_text())
        except (OSError, json.JSONDecodeError):
            previous = None
        if previous != fingerprint:
            shutil.rmtree(staging)
    staging.mkdir(parents=True, exist_ok=True)
    write_json(state_file, fingerprint)

    shards: list[np.ndarray] = []
    for number, start in enumerate(range(0, len(texts), shard_size)):
        block = texts[start : start + shard_size]
        shard_path = staging / f"shard-{number:05d}.npy"
        vectors = None
        if shard_path.exists():
            try:
                vectors = np.load(shard_path, allow_pickle=False)
            except (OSError, ValueError):
                vectors = None
            if vectors is not None and vectors.shape != (len(block), embedder.dimension):
                vectors = None
        if vectors is None:
            vectors = embedder.encode(block)
            save_npy(shard_path, vectors)
        shards.append(vectors)
        if progress is not None:
            progress(len(block))
    if not shards:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.concatenate(shards, axis=0)
