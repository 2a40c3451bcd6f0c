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
from .topk import top_k
from .windows import AGGREGATIONS, best_window_scores

EMBEDDINGS_FILE = "embeddings.npy"
WINDOWS_FILE = "windows.npy"
OWNERS_FILE = "window_owners.npy"
SHARD_SIZE = 2048
PROGRESS_CHUNK = 256


class DenseIndex:
    """A matrix of normalized passage embeddings, one row per passage position, and optionally the
    embeddings of further windows of long passages (``windows``, with ``owners``: the passage
    position of each window, ascending; see :mod:`convrag.index.windows`)."""

    def __init__(self, embeddings: np.ndarray, windows: np.ndarray | None = None, owners: np.ndarray | None = None) -> None:
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be a 2-d matrix, got shape {embeddings.shape}")
        if (windows is None) != (owners is None) or (windows is not None and len(windows) != len(owners)):  # type: ignore[arg-type]
            raise ValueError("window embeddings need one owner position each")
        self.embeddings = embeddings
        self.windows = windows
        self.owners = owners

    @classmethod
    def load(cls, folder: Path, mmap: bool = False) -> DenseIndex:
        mode = "r" if mmap else None
        embeddings = np.load(folder / EMBEDDINGS_FILE, mmap_mode=mode, allow_pickle=False)
        if (folder / WINDOWS_FILE).exists():
            return cls(embeddings, np.load(folder / WINDOWS_FILE, mmap_mode=mode, allow_pickle=False),
                       np.load(folder / OWNERS_FILE, allow_pickle=False))
        return cls(embeddings)

    def save(self, folder: Path) -> None:
        save_npy(folder / EMBEDDINGS_FILE, np.ascontiguousarray(self.embeddings, dtype=np.float32))
        if self.windows is not None and self.owners is not None:
            save_npy(folder / WINDOWS_FILE, np.ascontiguousarray(self.windows, dtype=np.float32))
            save_npy(folder / OWNERS_FILE, np.ascontiguousarray(self.owners, dtype=np.int64))

    @property
    def size(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def dimension(self) -> int:
        return int(self.embeddings.shape[1])

    def scores(self, query_vectors: np.ndarray, aggregate: str = "first") -> np.ndarray:
        """Passage scores for each query row. ``first``: the passage embedding (its first window);
        ``max``: the best of its windows (MaxP); ``mix``: the mean of the two."""
        sims = query_vectors @ self.embeddings.T
        if aggregate == "first" or self.windows is None or self.owners is None or not len(self.owners):
            return sims
        best = best_window_scores(sims, query_vectors @ self.windows.T, self.owners)
        if aggregate == "max":
            return best
        if aggregate == "mix":
            return (sims + best) / 2
        raise ValueError(f"unknown window aggregation {aggregate!r}; expected one of {', '.join(AGGREGATIONS)}")

    def search(self, query_vectors: np.ndarray, k: int, batch: int = 64, aggregate: str = "first") -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` positions and scores for each query row, best first (ties: lower position first)."""
        n_queries = query_vectors.shape[0]
        k = min(k, self.size)
        positions = np.zeros((n_queries, k), dtype=np.int64)
        scores = np.zeros((n_queries, k), dtype=np.float32)
        if k == 0:
            return positions, scores
        for start in range(0, n_queries, batch):
            sims = self.scores(query_vectors[start : start + batch], aggregate)
            for row in range(sims.shape[0]):
                best = top_k(sims[row], k)
                positions[start + row] = best
                scores[start + row] = sims[row][best]
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
            # progress in small steps, so that a build of a few thousand passages does not sit at 0
            vectors = embedder.encode(block, progress=progress, chunk=PROGRESS_CHUNK)
            save_npy(shard_path, vectors)
        elif progress is not None:
            progress(len(block))
        shards.append(vectors)
    if not shards:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.concatenate(shards, axis=0)
