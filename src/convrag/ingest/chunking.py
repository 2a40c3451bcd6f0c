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

#: a token wider than this many characters is a word the tokenizer could not split (WordPiece reads
#: a word of over 100 characters as one unknown token, however long it is)
UNSPLIT_WORD_CHARS = 100
#: such a word is counted as a token every this many characters, as WordPiece counts a shorter run it
#: can split (1.5 characters a token for random letters and digits, 2 for a DNA sequence). Counted
#: as one token, a 1 MB run (a sequence, an encoded blob) made one passage of 1 MB, which no answer
#: prompt can hold (the merge dropped it as 741,515 tokens), and the document's sentences on either
#: side of it went with it; at 4 characters a token, a window of it was still 1,137 of the language
#: model's tokens, more than the merge's whole budget of 1,000
UNSPLIT_TOKEN_CHARS = 2


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


def token_spans(offsets: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The character spans of a text's tokens, a word the tokenizer could not split counted as a
    token every :data:`UNSPLIT_TOKEN_CHARS` characters (see :data:`UNSPLIT_WORD_CHARS`)."""
    spans: list[tuple[int, int]] = []
    for a, b in offsets:
        a, b = int(a), int(b)
        if b - a > UNSPLIT_WORD_CHARS:
            spans += [(i, min(i + UNSPLIT_TOKEN_CHARS, b)) for i in range(a, b, UNSPLIT_TOKEN_CHARS)]
        elif b > a:
            spans.append((a, b))
    return spans


#: a document is tokenized this many characters at a time, cut before a space: in one call, a 23 MB
#: text took 3.5 GB of memory (the tokenizer's lists of ids, masks and offsets for 4 million tokens)
#: and 19 s; in pieces, 1.3 GB and 12 s. A word ends at a space in every tokenizer convrag's models
#: use (WordPiece; the space starts the next piece, as byte-level BPE and SentencePiece read it)
PIECE_CHARS = 1_000_000


def document_spans(text: str, tokenizer: Any, piece_chars: int = PIECE_CHARS) -> list[tuple[int, int]]:
    """The character spans of ``text``'s tokens (:func:`token_spans`), tokenized a piece at a time."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + piece_chars)
        if end < len(text):
            space = max(text.rfind(" ", start + 1, end), text.rfind("\n", start + 1, end))
            end = space if space > start else end  # a piece without a space is cut where it must be
        encoding = tokenizer(text[start:end], add_special_tokens=False, return_offsets_mapping=True,
                             return_attention_mask=False, return_token_type_ids=False, truncation=False, verbose=False)
        spans += [(a + start, b + start) for a, b in token_spans(encoding["offset_mapping"])]
        start = end
    return spans


def chunk_document(
    document: Document, tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> list[Passage]:
    """Split a document into overlapping passages; a document without text gives none."""
    text = document.text
    if not text.strip():
        return []
    offsets = document_spans(text, tokenizer)
    return [
        Passage(doc_id=f"{document.doc_id}-{start}-{end}", text=text[start:end], title=document.title, url=document.url)
        for start, end in chunk_spans(offsets, max_tokens, overlap)
    ]


def chunk_documents(
    documents: Iterable[Document], tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> Iterator[Passage]:
    for document in documents:
        yield from chunk_document(document, tokenizer, max_tokens, overlap)
