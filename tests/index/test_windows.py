"""Dense windows: long passages also embedded window by window, scored by their best window."""

import numpy as np
import pytest

from convrag.index.collection import Collection
from convrag.index.dense import DenseIndex
from convrag.index.windows import WindowSettings, best_window_scores, extra_windows, window_plan
from convrag.retrieve.dense import DenseRetriever
from convrag.types import Passage

LONG = Passage("long-0-9", " ".join(["harbour fees are paid at the office"] * 60) + " and the lighthouse keeper lives on the rock.",
               "Harbour rules")
SHORT = Passage("short-0-5", "Fishing licenses cost 25 dollars a year.", "Fishing")


def test_only_long_passages_get_windows_each_headed_by_the_title(embedder) -> None:
    assert extra_windows(SHORT, embedder.tokenizer, WindowSettings()) == []
    windows = extra_windows(LONG, embedder.tokenizer, WindowSettings(size=128, stride=100))
    assert len(windows) >= 2 and all(w.startswith("Harbour rules\n") for w in windows)
    assert "lighthouse keeper" in windows[-1]
    assert all(len(embedder.tokenizer(w, add_special_tokens=False)["input_ids"]) <= 126 for w in windows)
    texts, owners = window_plan([SHORT, LONG], embedder.tokenizer, WindowSettings(size=128, stride=100))
    assert texts == windows and owners.tolist() == [1] * len(windows)


def test_best_window_scores_per_passage() -> None:
    passages = np.array([[0.1, 0.5, 0.2]], dtype=np.float32)
    windows = np.array([[0.9, 0.3, 0.4, 0.6]], dtype=np.float32)
    owners = np.array([0, 0, 2, 2])
    assert best_window_scores(passages, windows, owners)[0].tolist() == pytest.approx([0.9, 0.5, 0.6])
    with pytest.raises(ValueError):
        WindowSettings(size=8)


def test_a_fact_late_in_a_long_passage_is_found_with_windows(tmp_path, embedder) -> None:
    passages = [LONG, SHORT, Passage("other-0-5", "The keeper of the museum opens at nine.", "Museum")]
    plain = Collection.build(tmp_path / "plain", passages, embedder=embedder)
    windowed = Collection.build(tmp_path / "win", passages, embedder=embedder, windows=WindowSettings(size=128, stride=100))
    assert windowed.manifest.dense_windows["count"] == len(windowed.dense.owners) >= 2
    query = ["who lives on the rock by the lighthouse?"]
    first = DenseRetriever(plain, embedder).search(query, 3)[0]
    best = DenseRetriever(windowed, embedder, windows="max").search(query, 3)[0]
    assert best[0].doc_id == "long-0-9" and best[0].score > next(h.score for h in first if h.doc_id == "long-0-9")
    # the same settings again reuse everything; a rebuild with reuse embeds no window twice
    assert Collection.build(tmp_path / "win", passages, embedder=embedder, windows=WindowSettings(size=128, stride=100)).version_dir == windowed.version_dir
    again = Collection.build(tmp_path / "win2", passages + [Passage("new-0-3", "New text.")], embedder=embedder,
                             windows=WindowSettings(size=128, stride=100), reuse=windowed)
    assert np.allclose(again.dense.windows, windowed.dense.windows)


def test_dense_index_round_trips_its_windows(tmp_path) -> None:
    index = DenseIndex(np.eye(3, dtype=np.float32), np.ones((2, 3), dtype=np.float32) / np.sqrt(3), np.array([0, 2]))
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path)
    assert loaded.owners.tolist() == [0, 2] and loaded.windows.shape == (2, 3)
    with pytest.raises(ValueError):
        DenseIndex(np.eye(2, dtype=np.float32), np.ones((1, 2), dtype=np.float32), None)
