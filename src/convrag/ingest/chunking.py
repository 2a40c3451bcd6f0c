"""Token-window chunking in the MT-RAG style: 512-token passages overlapping by 100 tokens.

Windows are counted in the embedding model's tokenizer, so a passage fits what
the model reads. Passage ids are ``<doc_id>-<start>-<end>`` with character
offsets into the document, as MT-RAG's passage ids are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..types import Passage
from .documents import Document

DEFAULT_MAX_TOKENS = 512
DEFAULT_OVERLAP = 100


def chunk_spans(offsets: list[tuple[int, int]], max_tokens: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of token windows of ``max_tokens`` starting every ``max_tokens - overlap`` tokens."""
    if max_tokens <= 0 or not 0 <= overlap < max_tokens:
        raise ValueError(f"need max_tokens > overlap >= 0, got {max_tokens} and {overlap}")
    spans: list[tuple[int, int]] = []
    step = max_tokens - overlap
    start = 0
    while start < len(offsets):
        end = min(start + max_tokens, len(offsets))
        spans.append((offsets[start][0], offsets[end - 1][1]))
        if end == len(offsets):
            break
        start += step
    return spans


def chunk_document(
    document: Document, tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> list[Passage]:
    """Split a document into overlapping passages; a document without text gives none."""
    text = document.text
    if not text.strip():
        return []
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
    offsets = [(int(a), int(b)) for a, b in encoding["offset_mapping"] if b > a]
    return [
        Passage(doc_id=f"{document.doc_id}-{start}-{end}", text=text[start:end], title=document.title, url=document.url)
        for start, end in chunk_spans(offsets, max_tokens, overlap)
    ]


def chunk_documents(
    documents: Iterable[Document], tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> Iterator[Passage]:
    for document in documents:
        yield from chunk_document(document, tokenizer, max_tokens, overlap)
