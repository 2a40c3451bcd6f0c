"""Extractive compression: give the model only the sentences of the merged passages that bear on
the question, within a token budget.

On two CPU cores the answer prompt is read at about 70 tokens/s, so every passage sentence that
does not help costs time before the first word appears. Each passage is split into sentences
(pysbd); every sentence is scored by its cosine to the query (the strategy's standalone query, so
that a follow-up like "how much is it?" is scored with its topic); each passage keeps its best
sentence, then the best remaining sentences are added while the budget allows. Kept sentences stay
in passage order, with "…" where sentences were left out, and passages keep their numbers so that
citations still point to them. The best sentence score is also a relevance signal for declining.

A passage's sentence vectors are computed from that passage alone and kept (:func:`passage_vectors`):
embedding the sentences was most of a turn's work before the model (about 0.4 s for five passages on
two cores), and a conversation's turns, and its users, keep drawing on the same passages.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..embeddings import Embedder
from ..merge.base import MergedResult
from ..merge.budget import token_counter
from ..text import split_sentences, tidy_spacing


@dataclass(frozen=True)
class CompressionSettings:
    """``max_tokens`` for all passages' kept sentences together, chosen on the dev split: 300 reads
    about 50 tokens (0.2-0.4 s) less before the first answer token than 350 did, at the same overlap
    and support (docs/benchmarks.md, "How the defaults were chosen")."""

    max_tokens: int = 300
    min_sentence_chars: int = 12


@dataclass(frozen=True)
class CompressedPassage:
    """A passage as the answer prompt shows it: its kept sentences and their best score."""

    result: MergedResult
    text: str
    kept: int
    total: int
    best: float


def sentences(text: str, min_chars: int = 12) -> list[str]:
    """The passage's sentences (fragments shorter than ``min_chars`` are merged into the next)."""
    out: list[str] = []
    carry = ""
    for raw in split_sentences(text):
        piece = f"{carry} {raw}".strip()
        if len(piece) < min_chars:
            carry = piece
            continue
        out.append(piece)
        carry = ""
    if carry and out:
        out[-1] = f"{out[-1]} {carry}"
    elif carry:
        out.append(carry)
    return out


#: a "sentence" of more of the model's tokens than this (a passage without sentence ends: a table, a
#: list, text run together) is scored and shown in pieces of :data:`PIECE_WORDS` words. Kept whole as
#: its passage's best sentence, a run-on passage of 2,878 tokens made a prompt that took 35 s to read,
#: and a longer one would not fit the model's context. Above the longest MT-RAG passage (885 tokens),
#: so the benchmarks' prompts are as they were
LONGEST_SENTENCE_TOKENS = 1000
PIECE_WORDS = 60


def in_pieces(parts: Sequence[str], count_tokens: Callable[[str], int]) -> list[str]:
    """``parts`` with each one longer than :data:`LONGEST_SENTENCE_TOKENS` cut into pieces of
    :data:`PIECE_WORDS` words, so that the one that bears on the question can be kept alone."""
    out: list[str] = []
    for part in parts:
        if count_tokens(part) <= LONGEST_SENTENCE_TOKENS:
            out.append(part)
            continue
        words = part.split()
        out += [" ".join(words[i : i + PIECE_WORDS]) for i in range(0, len(words), PIECE_WORDS)]
    return out


#: passages whose sentence vectors are kept (a few MB: about 10 sentences x 384 floats each)
KEPT_PASSAGES = 4096
_kept: OrderedDict[tuple[str, int, tuple[str, ...]], np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()


def passage_vectors(embedder: Embedder, parts: Sequence[str]) -> np.ndarray:
    """The vectors of one passage's sentences, embedded as one batch of that passage's alone, so that
    they never depend on which other passages, or which query, a turn brought (the same passage is
    compressed the same way in every turn, thread and run), and kept for the next turn that shows
    it (the last :data:`KEPT_PASSAGES` passages)."""
    key = (embedder.name, id(embedder.model), tuple(parts))
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    vectors = embedder.encode(list(parts))
    with _kept_lock:
        _kept[key] = vectors
        while len(_kept) > KEPT_PASSAGES:
            _kept.popitem(last=False)
    return vectors


def _split(results: Sequence[MergedResult], count_tokens: Callable[[str], int], settings: CompressionSettings) -> list[list[str]]:
    """Each passage's sentences, as compression scores and keeps them."""
    return [in_pieces(sentences(r.hit.text, settings.min_sentence_chars) or [r.hit.text], count_tokens) for r in results]


def best_score(query: str, results: Sequence[MergedResult], embedder: Embedder,
               count_tokens: Callable[[str], int], settings: CompressionSettings = CompressionSettings()) -> float:
    """The best cosine of any sentence of ``results`` to ``query``, as :func:`compress` scores them
    (its sentence vectors are kept, so only the query is embedded)."""
    split = _split(results, token_counter(count_tokens), settings)
    asked = embedder.encode([query])[0]
    return max((float(np.max(passage_vectors(embedder, parts) @ asked)) for parts in split if parts), default=0.0)


def compress(
    query: str,
    results: Sequence[MergedResult],
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    settings: CompressionSettings = CompressionSettings(),
) -> list[CompressedPassage]:
    """Every passage with the sentences worth showing for ``query`` (see the module docstring)."""
    count_tokens = token_counter(count_tokens)  # memoized: each sentence is counted by in_pieces, then for its cost
    split = _split(results, count_tokens, settings)
    flat = [(p, i, s) for p, parts in enumerate(split) for i, s in enumerate(parts)]
    if not flat:
        return []
    vectors = [passage_vectors(embedder, parts) for parts in split]
    asked = embedder.encode([query])[0]
    # scored passage by passage: one product over all passages' sentences gave a passage's scores other
    # last bits beside other passages (BLAS splits a matrix of 8 rows otherwise than one of 3; on an
    # AVX-512 Xeon, not on the AVX2 EPYC), so its sentences could rank otherwise with other company
    scores = np.concatenate([block @ asked for block in vectors])
    cost = [count_tokens(s) for _, _, s in flat]
    keep: set[int] = set()
    used = 0
    order = np.argsort(-scores, kind="stable")
    best_of: dict[int, int] = {}
    for j in order:  # each passage's best sentence first, so that every passage keeps something
        best_of.setdefault(flat[j][0], int(j))
    for j in sorted(best_of.values(), key=lambda j: -scores[j]):
        keep.add(j)
        used += cost[j]
    for j in order:
        if int(j) not in keep and used + cost[j] <= settings.max_tokens:
            keep.add(int(j))
            used += cost[j]
    out: list[CompressedPassage] = []
    for p, r in enumerate(results):
        rows = [j for j, (q, _, _) in enumerate(flat) if q == p]
        pieces: list[str] = []
        previous = -2
        for j in rows:
            if j in keep:
                if previous != -2 and j != previous + 1:
                    pieces.append("…")
                pieces.append(flat[j][2])
                previous = j
        if rows and rows[-1] not in keep:
            pieces.append("…")
        if rows and rows[0] not in keep:
            pieces.insert(0, "…")
        best = float(max(scores[j] for j in rows)) if rows else 0.0
        # shown tidied (clapnq's Treebank spacing), scored and budgeted as stored
        out.append(CompressedPassage(r, tidy_spacing(" ".join(pieces)), sum(j in keep for j in rows), len(rows), best))
    return out
