"""The LLM step the rewriting strategies share: rewrite a question with some context. It records
its call in the trace and never raises on a model failure: a backend error, or an answer that
fails a check, becomes a recorded fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..llm.base import LLM, ChatMessage, Completion, GenerationParams, LLMError
from .base import Fallback, LLMCall, Trace
from .checks import check_rewrite, clean_answer
from .prompts import rewrite_messages

REWRITE_PARAMS = GenerationParams(temperature=0.0, max_tokens=64, stop=("\n",))


@dataclass(frozen=True)
class CheckSettings:
    """Thresholds of :func:`~convrag.strategies.checks.check_rewrite`."""

    min_kept: float = 0.5
    max_words: int = 40


def call(llm: LLM, trace: Trace, purpose: str, stage: str, messages: list[ChatMessage], params: GenerationParams) -> str | None:
    """Run one model call and record it; None (and a fallback) when the backend fails."""
    try:
        completion: Completion = llm.complete(messages, params)
    except LLMError as exc:
        trace.calls.append(LLMCall(purpose, stage, messages, "", 0, 0, 0.0, error=str(exc)))
        trace.fallbacks.append(Fallback(stage, "llm_error", str(exc)))
        return None
    trace.calls.append(
        LLMCall(
            purpose,
            stage,
            messages,
            completion.text,
            completion.prompt_tokens,
            completion.completion_tokens,
            completion.latency_s,
            completion.cached,
            sent_without=list(completion.sent_without),
        )
    )
    return completion.text


def accept(
    trace: Trace, stage: str, question: str, answer: str, earlier_questions: Sequence[str], checks: CheckSettings
) -> str | None:
    """The cleaned answer if it passes every check; otherwise None and a fallback naming the check."""
    candidate = clean_answer(answer)
    reason = check_rewrite(question, candidate, earlier_questions, checks.min_kept, checks.max_words)
    if reason:
        trace.fallbacks.append(Fallback(stage, reason, answer.strip()))
        return None
    return candidate


def rewrite(
    llm: LLM,
    trace: Trace,
    stage: str,
    question: str,
    context: str,
    earlier_questions: Sequence[str],
    checks: CheckSettings = CheckSettings(),
) -> str | None:
    """A standalone rewrite of ``question`` given ``context``, or None when it failed (recorded)."""
    answer = call(llm, trace, "rewrite", stage, rewrite_messages(context, question), REWRITE_PARAMS)
    if answer is None:
        return None
    return accept(trace, stage, question, answer, earlier_questions, checks)
