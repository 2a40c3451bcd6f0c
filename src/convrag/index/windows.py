"""Dense windows: let a short-context embedding model see the whole of a long passage.

all-MiniLM-L6-v2 reads 256 word pieces (254 after its two special tokens); MT-RAG passages run
to 512 tokens, so a single embedding ignores the second half of most of them. A passage longer
than one window also gets embeddings of further overlapping windows (each headed by the
passage title, which is where the topic is named), and a passage scores as its best window
(MaxP, Dai and Callan 2019). The first window is the passage's ordinary embedding, so the
windows are added to the existing matrix rather than replacing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..types import Passage

AGGREGATIONS = ("first", "max", "mix")


@dataclass(frozen=True)
class WindowSettings:
    """``size`` word pieces per window including the model's 2 special tokens; consecutive windows
    start ``stride`` content tokens apart (so they overlap by ``size - 2 - stride``)."""

    size: int = 256
    stride: int = 192

    def __post_init__(self) -> None:
        if self.size < 16 or not 0 < self.stride <= self.size - 2:
            raise ValueError(f"window size {self.size} and stride {self.stride}: need size >= 16 and 0 < stride <= size - 2")

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def extra_windows(passage: Passage, tokenizer: Any, settings: WindowSettings) -> list[str]:
    """The texts of the passage's windows after the first (empty when one window holds it all)."""
    text = passage.searchable_text
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
    offsets = encoded["offset_mapping"]
    content = settings.size - 2
    if len(offsets) <= content:
        return []
    head = f"{passage.title}\n" if passage.title else ""
    head_tokens = len(tokenizer(head, add_special_tokens=False)["input_ids"]) if head else 0
    span = max(8, content - head_tokens)  # later windows carry the title too
    out = []
    start = settings.stride
    while start < len(offsets):
        end = min(len(offsets), start + span)
        out.append(head + text[offsets[start][0] : offsets[end - 1][1]])
        if end == len(offsets):
            break
        start += settings.stride
    return out


def window_plan(passages: Sequence[Passage], tokenizer: Any, settings: WindowSettings) -> tuple[list[str], np.ndarray]:
    """Every extra window's text, and the position of the passage it belongs to (ascending)."""
    texts: list[str] = []
    owners: list[int] = []
    for position, passage in enumerate(passages):
        for window in extra_windows(passage, tokenizer, settings):
            texts.append(window)
            owners.append(position)
    return texts, np.asarray(owners, dtype=np.int64)


def best_window_scores(passage_scores: np.ndarray, window_scores: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Per passage, the best of its own score and its windows' scores (rows: queries; ``owners``
    ascending, as :func:`window_plan` makes them)."""
    scores = np.array(passage_scores, dtype=np.float32, copy=True)
    if not len(owners):
        return scores
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    groups = owners[starts]
    best = np.maximum.reduceat(window_scores, starts, axis=1)
    scores[:, groups] = np.maximum(scores[:, groups], best)
    return scores
