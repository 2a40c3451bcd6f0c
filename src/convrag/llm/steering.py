"""Steering a local model while it writes: a citation on every sentence, and its doubt read out.

Two things a 1.5B model does not do reliably when only asked in the prompt, and that decoding can
do for it at no extra call (see :class:`.base.GenerationParams`):

* **Cite every sentence.** Asked to end each sentence with ``[n]``, the model mostly writes the
  sentence and stops. Here, whenever the token it is about to choose would end a sentence (or the
  answer) that cites nothing yet, the citation opener `` [`` is chosen instead; the model then
  writes the number itself (which passage it draws on stays its decision) and closes the sentence.
* **Read the first choice.** The answer prompt's decline sentence begins with a word answers do
  not begin with, so the probability the model gives that word at its first step says how much
  it doubts the passages hold the answer: greedy decoding declines only above 0.5; a threshold
  chosen on the dev split declines below that too, and the probability is reported either way.

:class:`Steering` is a llama.cpp logits processor; :func:`ends_uncited_sentence` is the pure rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import GenerationParams

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_CITED = re.compile(r"\[\d")  # an opened citation counts: "[1" is about to be closed
_ENDS = (".", "!", "?")


def current_sentence(generated: str) -> str:
    """The sentence being written: what follows the last sentence end of ``generated``."""
    if generated and generated[-1].isspace() and generated.rstrip().endswith(_ENDS):
        return ""
    return _SENTENCE_BREAK.split(generated)[-1]


def ends_uncited_sentence(generated: str, piece: str, is_end: bool, min_words: int = 3) -> bool:
    """Whether choosing ``piece`` (or the end of the answer, ``is_end``) after ``generated`` would
    close a sentence of at least ``min_words`` words that cites no passage.

    A lone "." after a digit is let through: it may be a decimal point ("3.5"), and a sentence
    that ends in a number goes uncited rather than a number being broken."""
    sentence = current_sentence(generated)
    if is_end:
        if sentence.rstrip().endswith(_ENDS):
            return False  # already closed (and checked when it was)
    elif not piece.rstrip().endswith(_ENDS):
        return False
    elif piece.strip() == "." and generated[-1:].isdigit():
        return False
    if not is_end:
        sentence += piece.rstrip()[:-1]
    return len(sentence.split()) >= min_words and not _CITED.search(sentence)


class Steering:
    """The steers of ``params`` as a logits processor: ``(input_ids, logits) -> logits``, called
    once per generated token with the prompt and the tokens so far.

    ``decode``/``encode`` convert between token ids and text; ``ends`` are the ids that end the
    answer. :meth:`report` says what was done, for the completion and the trace."""

    def __init__(self, params: GenerationParams, decode: Callable[[Sequence[int]], str],
                 encode: Callable[[str], list[int]], ends: set[int]) -> None:
        self.params = params
        self.decode = decode
        self.ends = ends
        self.opener = encode(" [")[0]
        self.choice = encode(params.first_choice)[0] if params.first_choice else None
        self.exempt = " ".join(params.first_choice.split()[:3])  # the chosen sentence needs no citation
        self.start: int | None = None
        self.nudges = 0
        self.first_choice_p: float | None = None
        self.forced = False

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.start is None:
            self.start = len(input_ids)
            if self.choice is not None:
                self._first_step(logits)
        if self.params.cite_sentences:
            self._cite(input_ids, logits)
        return logits

    def _first_step(self, logits: np.ndarray) -> None:
        assert self.choice is not None
        shifted = logits.astype(np.float64) - float(np.max(logits))
        probabilities = np.exp(shifted)
        self.first_choice_p = float(probabilities[self.choice] / probabilities.sum())
        at = self.params.first_choice_at
        if at is not None and self.first_choice_p >= at and int(np.argmax(logits)) != self.choice:
            logits[self.choice] = float(np.max(logits)) + 1.0
            self.forced = True

    def _cite(self, input_ids: np.ndarray, logits: np.ndarray) -> None:
        assert self.start is not None
        best = int(np.argmax(logits))
        is_end = best in self.ends
        piece = "" if is_end else self.decode([best])
        if not is_end and not piece.rstrip().endswith(_ENDS):
            return  # most steps: the answer so far need not be decoded
        generated = self.decode([int(t) for t in input_ids[self.start:]])
        if self.exempt and generated.lstrip().startswith(self.exempt):
            return
        if generated.strip() and ends_uncited_sentence(generated, piece, is_end):
            logits[self.opener] = float(np.max(logits)) + 1.0
            self.nudges += 1

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.params.cite_sentences:
            out["citation_nudges"] = self.nudges
        if self.choice is not None:
            out["first_choice_p"] = None if self.first_choice_p is None else round(self.first_choice_p, 4)
            out["first_choice_forced"] = self.forced
        return out
