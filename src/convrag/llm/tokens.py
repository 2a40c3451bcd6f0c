"""Token counting for remote backends, whose tokenizers we do not have offline.

The all-MiniLM-L6-v2 WordPiece tokenizer (already installed for embeddings) is a real
subword tokenizer; its counts run close to those of BPE chat models for English text,
which is what a context budget needs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def approximate_counter() -> Callable[[str], int]:
    from ..embeddings import load_embedder

    tokenizer = load_embedder().tokenizer

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False, verbose=False))

    return count
