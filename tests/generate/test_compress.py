"""Extractive compression: a passage's sentence vectors come from that passage alone and are kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from convrag.embeddings import Embedder
from convrag.generate.compress import compress
from tests.helpers import merged_results

STORAGE = ("The Lite plan of Object Storage is free up to 5 GB a month. Requests beyond the quota are refused. "
           "Upgrading to Standard keeps every bucket and its data.")
FERRY = "The harbour ferry runs every 20 minutes. A day pass costs 6 euros. Children under 12 travel free."
PARKS = "City parks open at dawn. Dogs must be kept on a lead near playgrounds."


@dataclass
class Counting:
    """The real embedder, with a count of the texts each call embeds."""

    inner: Embedder
    calls: list[int]

    name = property(lambda self: self.inner.name)
    model = property(lambda self: self.inner.model)

    def encode(self, texts: Any) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.encode(texts)


def test_a_passage_compresses_alike_whatever_comes_with_it_and_is_embedded_once(embedder: Embedder) -> None:
    """The sentences of all passages were embedded in one batch with the query, every turn: most of a
    turn's work before the model (0.4 s for five MT-RAG passages on two cores), done again for the
    passages the previous turn had shown, and a passage's scores moved (in their last bits) with the
    other passages of the batch."""
    counting = Counting(embedder, [])
    alone = compress("How much is a ferry day pass?", merged_results([FERRY]), counting, lambda s: len(s.split()))
    assert counting.calls == [3, 1]  # the passage's three sentences, then the query
    together = compress("How much is a ferry day pass?", merged_results([STORAGE, FERRY, PARKS]), counting, lambda s: len(s.split()))
    assert counting.calls[2:] == [3, 2, 1]  # the two passages not seen before, then the query: the ferry's vectors were kept
    assert together[1].text == alone[0].text and together[1].best == alone[0].best
    assert "6 euros" in together[1].text


def test_a_passage_without_sentence_ends_is_kept_in_pieces(embedder: Embedder) -> None:
    """A run-on passage (no sentence ends) is one "sentence", and a passage keeps its best one: a
    2,878-token passage went whole into the prompt, which took 35 s to read. Past 1,000 tokens it is
    scored in pieces of 60 words, and the piece that bears on the question is what the prompt shows."""
    filler = " ".join(["boats must register at the harbour office desk before mooring for the night"] * 120)
    run_on = f"{filler} the harbour fee for larger boats is 60 euros a night {filler}"
    [kept] = compress("What is the harbour fee for larger boats?", merged_results([run_on]), embedder, lambda s: len(s.split()))
    assert "60 euros" in kept.text and len(kept.text.split()) < 350  # the question's piece and a few more, within 300 tokens
    assert kept.total == -(-len(run_on.split()) // 60) and "…" in kept.text
    short = "The harbour ferry runs every 20 minutes and a day pass costs 6 euros"  # a sentence under the limit stays whole
    [whole] = compress("How much is a ferry day pass?", merged_results([short]), embedder, lambda s: len(s.split()))
    assert whole.text == short and whole.total == 1
