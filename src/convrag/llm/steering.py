"""Steering a local model while it writes: a citation on every sentence, its doubt read out, and
(an option) the passages' wording kept.

Three things a 1.5B model does not do reliably when only asked in the prompt, and that decoding can
do for it at no extra call (see :class:`.base.GenerationParams`):

* **Cite every sentence.** Asked to end each sentence with ``[n]``, the model mostly writes the
  sentence and stops. Here, whenever the token it is about to choose would end a sentence (or the
  answer) that cites nothing yet, the citation opener `` [`` is chosen instead; the model then
  writes the number itself (which passage it draws on stays its decision) and closes the sentence.
  A token that writes closing marks with the full stop (a parenthesis, a quote or a backtick, then
  ".") gives way to the marks alone first (:func:`closing_marks`), so that the citation does not
  cut them off. Inside code (a Markdown span or block left open) nothing ends a sentence.
* **Read the first choice.** The answer prompt's decline sentence begins with a word answers do
  not begin with, so the probability the model gives that word at its first step says how much
  it doubts the passages hold the answer: greedy decoding declines only above 0.5; a threshold
  chosen on the dev split declines below that too, and the probability is reported either way.
* **Keep to the passages' wording.** A small model paraphrases, and a paraphrase loses the words a
  reader (and the word-overlap support test) finds in the cited passage. Where the answer's ending
  (two words or more) occurs in a passage shown to the model, the token that follows the longest
  such ending there gets a fixed bonus (:class:`CopyIndex`): a near tie goes to the passage's
  wording, a clear preference of the model does not change. Whether to quote at all, and from
  which passage a quote starts, stays the model's choice. Off by default: on the dev half it made
  answers more verbatim, not better (docs/benchmarks.md, "Keeping to the passages' wording").

:class:`Steering` is a llama.cpp logits processor; :func:`ends_uncited_sentence` and
:class:`CopyIndex` are the pure rules.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from .base import GenerationParams

log = logging.getLogger("convrag.llm")

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_CITED = re.compile(r"\[\d")  # an opened citation counts: "[1" is about to be closed
_ENDS = (".", "!", "?")
#: a word whose full stop does not end the sentence: an initial ("E. E. Cummings", "U.S"), a title or
#: a Latin abbreviation; steering a citation there wrote "by Dr [1]. Jonas Salk". Not "etc": it
#: mostly ends its sentence (dev answers), which then needs its citation
_ABBREVIATED = re.compile(r"(?:^|[\s(\"'])(?:(?:[A-Z]\.)*[A-Z]|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vs?|e\.g|i\.e)$")


def _closes_sentence(text: str) -> bool:
    """Whether ``text`` ends a sentence: in ".", "!" or "?", and not in the full stop of an initial
    or an abbreviation ("U.S.", "Dr.", "e.g.")."""
    return text.endswith(_ENDS) and not (text.endswith(".") and _ABBREVIATED.search(text[:-1]) is not None)


def current_sentence(generated: str) -> str:
    """The sentence being written: what follows the last sentence end of ``generated``. The full
    stop of an initial or an abbreviation is no end: "Born in the U.S. in 1950" is one sentence,
    whose citation is still owed when it closes."""
    start = 0
    for gap in _SENTENCE_BREAK.finditer(generated):
        if _closes_sentence(generated[: gap.start()]):
            start = gap.end()
    return generated[start:]


def ends_uncited_sentence(generated: str, piece: str, is_end: bool, min_words: int = 3) -> bool:
    """Whether choosing ``piece`` (or the end of the answer, ``is_end``) after ``generated`` would
    close a sentence of at least ``min_words`` words that cites no passage.

    A lone "." after a digit is let through: it may be a decimal point ("3.5"), and a sentence
    that ends in a number goes uncited rather than a number being broken. So is one after an initial
    or an abbreviation ("Dr", "e.g"): a sentence that ends in one goes uncited rather than a name or
    a phrase being split by a citation. So is an end inside code (:func:`in_code`)."""
    sentence = current_sentence(generated)
    if is_end:
        if sentence.rstrip().endswith(_ENDS):
            return False  # already closed (and checked when it was)
    elif not piece.rstrip().endswith(_ENDS):
        return False
    elif piece.strip() == "." and (generated[-1:].isdigit() or not _closes_sentence(generated + ".")):
        return False
    if in_code(generated + ("" if is_end else piece.rstrip()[:-1])):
        return False
    if not is_end:
        sentence += piece.rstrip()[:-1]
    return len(sentence.split()) >= min_words and not _CITED.search(sentence)


def in_code(text: str) -> bool:
    """Whether ``text`` ends inside code, as Markdown marks it: an inline span or a fenced block
    opened by backticks and not closed. A full stop or an ellipsis there ends no sentence: a
    command's synopsis, "`npm docs [<pkgname> [<pkgname> ...]]`", had its "..." steered into a
    citation opener again and again, and the answer ran on as "[ [ [ [" until its token limit; in
    "`os.path`" the opener would have split the name."""
    return text.count("`") % 2 == 1


def closing_marks(generated: str, piece: str) -> str:
    """What ``piece`` writes before its sentence end: a tokenizer has one token for "`." and for
    ")." (Qwen's), and the citation opener chosen in its place lost the mark ("use `cargo new
    <name> [1]." left a code span open, "(own property, etc [5]." a parenthesis). Empty for a bare
    end ("." or a full stop and a line break), for more end marks ("..." is an ellipsis, cited as
    before), and when ``generated`` ends in them already, so that a model that wants ")." again is
    not made to write ")" over and over."""
    closing = piece.rstrip()[:-1]
    marks = closing.strip()
    if not marks or not marks.strip(".!?") or generated.endswith(marks):
        return ""
    return closing


#: how far back the answer's ending is matched against the passages (tokens)
MAX_COPY_CONTEXT = 64


class CopyIndex:
    """Which tokens continue a text where it holds the answer's ending.

    Built from the token ids of the texts the model may copy from (the passages shown), and the
    ids of the tokens that begin a word (text that starts with a space before a letter, digit or
    sign). :meth:`match` finds the longest ending of the answer that some text holds and returns
    the tokens that follow it *there*, so that a quote goes on in the passage it came from: after
    "The Penobscot River is a", the continuation of "Penobscot River is a" in its own passage,
    not that of "River is a" in a passage about another river. An ending of fewer than
    ``min_words`` words continues nothing: one shared word ("about" and the space before a
    number) says nothing about which passage the answer follows, and would pull in that
    passage's number. Pure, and cheap: a scan of the places that hold the answer's last token."""

    def __init__(self, texts: Sequence[Sequence[int]], word_starts: Collection[int], min_words: int = 2) -> None:
        if min_words < 1:
            raise ValueError(f"a copied ending must hold at least 1 word, not {min_words}")
        self.min_words = min_words
        self._word_starts = frozenset(int(t) for t in word_starts)
        self._texts = [[int(t) for t in text] for text in texts]
        self._at: dict[int, list[tuple[int, int]]] = {}  # token -> (text, position) of each place with a next token
        for i, text in enumerate(self._texts):
            for p in range(len(text) - 1):
                self._at.setdefault(text[p], []).append((i, p))

    def match(self, generated: Sequence[int]) -> tuple[int, np.ndarray]:
        """The words in the longest ending of ``generated`` that a text holds (looking back at most
        :data:`MAX_COPY_CONTEXT` tokens), and the token ids that follow it there (none below ``min_words``)."""
        none = np.empty(0, dtype=np.intp)
        if not len(generated):
            return 0, none
        tail = [int(t) for t in generated[-MAX_COPY_CONTEXT:]]
        best, found = 0, set()
        for i, p in self._at.get(tail[-1], ()):
            text, k = self._texts[i], 1
            while k < len(tail) and k <= p and text[p - k] == tail[-1 - k]:
                k += 1
            if k > best:
                best, found = k, {text[p + 1]}
            elif k == best:
                found.add(text[p + 1])
        words = sum(t in self._word_starts for t in tail[len(tail) - best:]) if best else 0
        if words < self.min_words:
            return words, none
        return words, np.fromiter(sorted(found), dtype=np.intp)

    def continuations(self, generated: Sequence[int]) -> np.ndarray:
        """The token ids that continue the longest matched ending of ``generated`` (see :meth:`match`)."""
        return self.match(generated)[1]


def starts_word(piece: str) -> bool:
    """Whether a token's text begins a word: a space, then a letter, digit or sign."""
    return len(piece) >= 2 and piece[0].isspace() and not piece[1].isspace()


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
        self.encode = encode
        self.opener = encode(" [")[0]
        self.choice = encode(params.first_choice)[0] if params.first_choice else None
        self.exempt = " ".join(params.first_choice.split()[:3])  # the chosen sentence needs no citation
        self.start: int | None = None
        self.nudges = 0
        #: where the sentence last made to cite began, in the answer's text: a sentence is made to
        #: cite once. Where the model wrote no number after the opener and went to end the sentence
        #: again, steering it again and again ran the answer on as "[ [ [ [" to its token limit
        self._opened_in: int | None = None
        self.refused = 0  # sentence ends let through because the model wrote no number after its opener
        self.first_choice_p: float | None = None
        self.forced = False
        self.copy: CopyIndex | None = None
        if params.copies:
            texts = [encode(text) for text in params.copy_from if text]
            vocabulary = {t for text in texts for t in text}
            self.copy = CopyIndex(texts, {t for t in vocabulary if starts_word(decode([t]))}, params.copy_context)
        self.copy_steps = 0  # steps where some token was given the copy bonus
        self.copy_followed = 0  # ... and the token chosen was one of them
        self._boosted = np.empty(0, dtype=np.intp)
        #: why the steers stopped, if they did: the answer is then the model's own from that step on
        self.error: str | None = None

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.error is not None:
            return logits  # a steer that failed stays off for the rest of the answer
        try:
            if self.start is None:
                self.start = len(input_ids)
                if self.choice is not None:
                    self._first_step(logits)
            if self.copy is not None:
                self._copy(input_ids, logits)
            if self.params.cite_sentences:
                self._cite(input_ids, logits)
        except Exception as exc:  # noqa: BLE001 - llama.cpp calls this through ctypes, which would print and drop it
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("steering failed and is off for the rest of this answer: %s", self.error)
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

    def _copy(self, input_ids: np.ndarray, logits: np.ndarray) -> None:
        assert self.start is not None and self.copy is not None
        generated = input_ids[self.start:]
        if len(self._boosted) and len(generated) and int(generated[-1]) in self._boosted:
            self.copy_followed += 1  # the token chosen at the step before was one the bonus went to
        self._boosted = self.copy.continuations(generated)
        self._boosted = self._boosted[self._boosted < len(logits)]
        if len(self._boosted):
            logits[self._boosted] += self.params.copy_bias
            self.copy_steps += 1

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
            closing = closing_marks(generated, "" if is_end else piece)
            if closing:  # the token that closes them comes first; the full stop after it is steered then
                logits[self.encode(closing)[0]] = float(np.max(logits)) + 1.0
                return
            sentence = len(generated) - len(current_sentence(generated))
            if sentence == self._opened_in:
                self.refused += 1  # the model wrote no number after the opener: its sentence goes uncited
                return
            logits[self.opener] = float(np.max(logits)) + 1.0
            self._opened_in = sentence
            self.nudges += 1

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.params.cite_sentences:
            out["citation_nudges"] = self.nudges
            if self.refused:
                out["citation_refused"] = self.refused
        if self.choice is not None:
            out["first_choice_p"] = None if self.first_choice_p is None else round(self.first_choice_p, 4)
            out["first_choice_forced"] = self.forced
        if self.copy is not None:
            out["copy_steps"] = self.copy_steps
            out["copy_followed"] = self.copy_followed
        if self.error is not None:
            out["error"] = self.error
        return out
