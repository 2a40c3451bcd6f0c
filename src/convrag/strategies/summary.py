"""``summary``: SELF-multi-RAG style: a 40-50 word summary of the conversation plus the question
restated on its own; the retrieval query is "Summary: … Question: …" (or the question alone).

The model is asked for the question first and the summary second: a small model that writes the
summary first often runs on and never writes the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from ..history import Budget, clip_words, render_pairs, turn_pairs
from ..llm.base import LLM, ChatMessage, GenerationParams
from ..text import words
from ..types import Message, Task
from .base import Fallback, Rewrite, Trace, finish, record_context, start_trace
from .checks import check_rewrite, clean_answer
from .prompts import summary_messages, summary_prompt_start
from .rewriter import CheckSettings, call

SUMMARY_PARAMS = GenerationParams(temperature=0.0, max_tokens=160)
#: a summary longer than this is clipped to ``SUMMARY_CLIP`` words (the prompt asks for 40-50)
SUMMARY_MAX_WORDS = 70
SUMMARY_CLIP = 50

_LABELS = re.compile(r"(?im)^[\s*#>-]*(summary|question)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*")


class SummaryQuery(NamedTuple):
    """What a summary call gives retrieval: the restated question (the question as asked when the
    restatement failed its checks), the "Summary: … Question: …" query (None without a usable
    summary), and the model's standalone question ("" when it was rejected)."""

    question: str
    query: str | None
    standalone: str


class SummaryAnswer(NamedTuple):
    summary: str
    question: str


def parse_summary(text: str) -> SummaryAnswer:
    """Split "Question: … Summary: …" (either order) however the model laid it out (bold labels,
    one line, extra blank lines, a missing label). Missing parts come back empty."""
    text = text.replace("**", "")
    # Put each label at a line start so that both labels on one line split too.
    text = re.sub(r"(?i)\s+((?:question|summary)\s*[:：])", r"\n\1", text)
    parts: dict[str, str] = {}
    matches = list(_LABELS.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        label = match.group(1).lower()
        parts.setdefault(label, " ".join(text[match.end() : end].split()))
    if not matches:
        return SummaryAnswer("", "")
    return SummaryAnswer(parts.get("summary", ""), parts.get("question", ""))


class Summary:
    name = "summary"

    def __init__(
        self,
        llm: LLM,
        query_form: str = "summary_question",
        budget: Budget = Budget(tokens=1000, answer_words=100),
        checks: CheckSettings = CheckSettings(max_words=60),
    ) -> None:
        if query_form not in ("summary_question", "question"):
            raise ValueError("query_form is 'summary_question' or 'question'")
        self.llm = llm
        self.query_form = query_form
        self.budget = budget
        self.checks = checks

    def prompt_start(self, history: Sequence[Message]) -> list[ChatMessage] | None:
        """The start of the next turn's summary prompt (everything but the question), for the
        backend to read ahead (:meth:`convrag.pipeline.Pipeline.prefill`); None before any exchange,
        when the next turn makes no call."""
        pairs = turn_pairs(history)
        if not pairs:
            return None
        context, _ = render_pairs(pairs, self.llm.count_tokens, self.budget)
        return summary_prompt_start(context)

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        if not turn_pairs(task.history):
            return finish(trace, started, task.question, "first_turn")
        outcome = self.summarize(task, trace)
        if outcome is None:
            return finish(trace, started, task.question, "fallback_original")
        if self.query_form == "question" or outcome.query is None:
            stage = "question" if outcome.standalone else "fallback_original"
            return finish(trace, started, outcome.question, stage, standalone=outcome.standalone)
        return finish(trace, started, outcome.query, "summary_question", standalone=outcome.standalone)

    def summarize(self, task: Task, trace: Trace, stage: str = "summary") -> SummaryQuery | None:
        """One summary call for a follow-up, parsed and checked, every step recorded in ``trace``
        (also :class:`~convrag.strategies.progressive.Progressive`'s stage-2 call when it is set to
        summarize). None when the backend failed."""
        pairs = turn_pairs(task.history)
        context = record_context(trace, pairs, self.llm.count_tokens, self.budget)
        answer = call(self.llm, trace, "summarize", stage, summary_messages(context, task.question), SUMMARY_PARAMS)
        if answer is None:
            return None
        parsed = parse_summary(answer)
        trace.details["summary"] = parsed.summary
        trace.details["reformulated_question"] = parsed.question
        question = clean_answer(parsed.question)
        reason = check_rewrite(task.question, question, task.user_questions[:-1], self.checks.min_kept, self.checks.max_words)
        if reason:
            trace.fallbacks.append(Fallback(stage, f"question_{reason}", parsed.question or answer.strip()))
            question = task.question
        summary_text = parsed.summary
        if len(words(summary_text)) > SUMMARY_MAX_WORDS:
            trace.fallbacks.append(Fallback(stage, "summary_overlong_clipped", summary_text))
            summary_text = clip_words(summary_text, SUMMARY_CLIP)
            trace.details["summary"] = summary_text
        if len(words(summary_text)) < 10:
            trace.fallbacks.append(Fallback(stage, "summary_missing_or_malformed", parsed.summary or answer.strip()))
            return SummaryQuery(question, None, "" if reason else question)
        return SummaryQuery(question, f"Summary: {summary_text} Question: {question}", "" if reason else question)
