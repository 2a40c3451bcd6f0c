"""Writing a cited answer from the merged passages and the conversation.

Passages are numbered in prompt order; the model cites them as [n]. Citations are parsed
back to the merged results (collection, passage, title, url); numbers that match no passage
are dropped and recorded. When the passages do not hold the answer the model is told to say
so with a fixed sentence, which is how a declined answer is recognised. Passages the merge
marked as conflicting are flagged in the prompt and the model is asked to say that the
sources disagree. A model failure yields a recorded fallback answer, never an exception.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..llm.base import LLM, ChatMessage, Completion, GenerationParams, LLMError, stream
from ..merge.base import MergedResult
from ..strategies.context import Budget, render_pairs, turn_pairs
from ..types import Message

DECLINE = "I do not have specific information about that in the available sources."

SYSTEM = (
    "You answer the user's last question using ONLY the numbered passages. After each sentence, cite the passages "
    "that support it as [1], [2]. Be concise: at most 4 sentences. If the passages do not contain the answer, reply "
    f"exactly: \"{DECLINE}\" Do not use outside knowledge. If passages marked (conflicting) disagree, say that the "
    "sources disagree and cite each."
)

_CITATION = re.compile(r"\[(\d{1,3})\]")
_DECLINED = re.compile(
    r"(do not|don't|does not|doesn't) (have|contain|provide|include|mention) (any |specific |enough )?(information|details|answer)"
    r"|no (specific )?information|cannot (find|answer)|can't (find|answer)|not (mentioned|specified|provided) in the (passages|sources)",
    re.IGNORECASE,
)


class Citation(NamedTuple):
    """A cited passage: its number in the answer, and where it came from."""

    number: int
    collection: str
    passage_id: str
    document_id: str
    title: str
    url: str
    inferred: bool = False  # added by matching the answer's wording to the passage, not written by the model


@dataclass
class Answer:
    text: str
    citations: list[Citation]
    declined: bool
    trace: dict[str, Any] = field(default_factory=dict)


def passage_block(results: Sequence[MergedResult], max_words: int = 180) -> str:
    lines = []
    for i, r in enumerate(results, start=1):
        flag = " (conflicting)" if r.conflicts_with else ""
        words = r.hit.text.split()
        text = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
        lines.append(f"[{i}]{flag} ({r.hit.collection}; {r.hit.title or r.hit.document_id}) {text}")
    return "\n".join(lines)


def answer_messages(question: str, history: Sequence[Message], results: Sequence[MergedResult], history_budget: Budget,
                    count_tokens: Any) -> list[ChatMessage]:
    context, _ = render_pairs(turn_pairs(history), count_tokens, history_budget)
    user = (
        f"Passages:\n{passage_block(results) or '(none)'}\n\n"
        f"Conversation so far:\n{context or '(none)'}\n\n"
        f"Question: {question}\nAnswer with citations:"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_citations(text: str, results: Sequence[MergedResult]) -> tuple[list[Citation], list[int]]:
    """Citations in order of first mention, and the numbers that matched no passage."""
    cited: list[Citation] = []
    invalid: list[int] = []
    for n in dict.fromkeys(int(m) for m in _CITATION.findall(text)):
        if 1 <= n <= len(results):
            h = results[n - 1].hit
            cited.append(Citation(n, h.collection, h.passage_id, h.document_id, h.title, h.url))
        else:
            invalid.append(n)
    return cited, invalid


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def infer_citations(text: str, results: Sequence[MergedResult], min_overlap: float = 0.5) -> tuple[str, list[int]]:
    """Small models often answer from a passage without citing it. Each uncited sentence whose
    content words come mostly (>= ``min_overlap``) from one passage gets that passage's number.
    Returns the text with the added markers and the numbers added."""
    from ..strategies.checks import content_stems

    stems = [content_stems(r.hit.text) for r in results]
    out, added = [], []
    for sentence in _SENTENCE.split(text.strip()):
        words = content_stems(sentence)
        if _CITATION.search(sentence) or len(words) < 4:
            out.append(sentence)
            continue
        scores = [len(words & s) / len(words) for s in stems]
        best = max(range(len(scores)), key=scores.__getitem__) if scores else -1
        if best >= 0 and scores[best] >= min_overlap:
            n = best + 1
            added.append(n)
            stripped = sentence.rstrip()
            end = stripped[-1] if stripped and stripped[-1] in ".!?" else ""
            sentence = f"{stripped[: len(stripped) - len(end)]} [{n}]{end}"
        out.append(sentence)
    return " ".join(out), list(dict.fromkeys(added))


def is_decline(text: str) -> bool:
    return DECLINE.lower().rstrip(".") in text.lower() or bool(_DECLINED.search(text))


class AnswerGenerator:
    """Answers from merged passages with any backend of the LLM layer (the local model by default)."""

    def __init__(self, llm: LLM, params: GenerationParams = GenerationParams(max_tokens=200),
                 history_budget: Budget = Budget(tokens=400, answer_words=60)) -> None:
        self.llm = llm
        self.params = params
        self.history_budget = history_budget

    def answer(self, question: str, history: Sequence[Message], results: Sequence[MergedResult]) -> Answer:
        start = time.perf_counter()
        trace: dict[str, Any] = {"passages": len(results)}
        if not results:
            return _no_passages(trace, start)
        messages = answer_messages(question, history, results, self.history_budget, self.llm.count_tokens)
        try:
            completion = self.llm.complete(messages, self.params)
        except LLMError as exc:
            return _model_failed(exc, trace, start)
        return self._finish(completion, messages, results, trace, start)

    def stream(self, question: str, history: Sequence[Message], results: Sequence[MergedResult]) -> Iterator[str | Answer]:
        """:meth:`answer`, with the model's text in pieces as it is written before the :class:`Answer`.
        The final text may differ from the pieces: inferred citation markers are added, and an
        empty answer becomes the decline sentence."""
        start = time.perf_counter()
        trace: dict[str, Any] = {"passages": len(results)}
        if not results:
            yield DECLINE
            yield _no_passages(trace, start)
            return
        messages = answer_messages(question, history, results, self.history_budget, self.llm.count_tokens)
        completion: Completion | None = None
        try:
            for item in stream(self.llm, messages, self.params):
                if isinstance(item, Completion):
                    completion = item
                else:
                    yield item
        except LLMError as exc:
            failed = _model_failed(exc, trace, start)
            yield failed.text
            yield failed
            return
        assert completion is not None
        yield self._finish(completion, messages, results, trace, start)

    def _finish(self, completion: Completion, messages: list[ChatMessage], results: Sequence[MergedResult],
                trace: dict[str, Any], start: float) -> Answer:
        text = completion.text.strip()
        declined = is_decline(text)
        citations, invalid = parse_citations(text, results)
        if not citations and not declined and text:
            text, inferred = infer_citations(text, results)
            if inferred:
                trace["inferred_citations"] = inferred
                citations = [c._replace(inferred=True) for c in parse_citations(text, results)[0]]
        trace["llm_call"] = {
            "messages": messages, "answer": completion.text, "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens, "latency_s": completion.latency_s, "cached": completion.cached,
        }
        if invalid:
            trace["invalid_citations"] = invalid
        if not text:
            trace["fallback"] = "empty answer"
            text, declined = DECLINE, True
        elif not citations and not declined:
            trace["warning"] = "answer cites no passage"
        trace["latency_s"] = time.perf_counter() - start
        return Answer(text, citations, declined, trace)


def _no_passages(trace: dict[str, Any], start: float) -> Answer:
    trace["fallback"] = "no passages retrieved: declined without a model call"
    return Answer(DECLINE, [], True, {**trace, "latency_s": time.perf_counter() - start})


def _model_failed(exc: LLMError, trace: dict[str, Any], start: float) -> Answer:
    trace.update(fallback="llm_error", error=str(exc), latency_s=time.perf_counter() - start)
    return Answer(f"I could not generate an answer: the language model failed ({exc}).", [], False, trace)
