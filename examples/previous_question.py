"""A conversational strategy of your own, measured by convrag like the built-in ones.

``PreviousQuestion`` searches the question together with the user's previous question: a classic
zero-call baseline of conversational search (a follow-up such as "How much does it cost?" borrows
its topic from the question before it). No model is called, so it declares no ``llm``; a strategy
that wants the run's LLM declares ``def __init__(self, llm)`` and gets it.

    convrag eval --data ../shared/mtrag --split dev -r bm25,hybrid -q lastturn \\
        -s examples/previous_question.py:PreviousQuestion,progressive
    convrag rewrite "How much does it cost?" --history chat.json -s examples/previous_question.py:PreviousQuestion --trace
    convrag ask "How much does it cost?" -c handbook --history chat.json -s examples/previous_question.py:PreviousQuestion

Its results are filed under its ``name`` (``strategies/previous_question/`` in an eval folder), and
its trace is a :class:`convrag.strategies.Trace` like any other: what it read goes in ``context``,
the way it decided in ``stage``.
"""

from __future__ import annotations

from convrag.strategies.base import Rewrite, finish, start_trace
from convrag.types import Task


class PreviousQuestion:
    """The question, then the user's previous question (the first question of a conversation as asked)."""

    name = "previous_question"

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        earlier = [m.text for m in task.history if m.speaker == "user"]
        if not earlier:
            return finish(trace, started, task.question, "as_asked")
        trace.context.append({"turn": len(earlier), "user": earlier[-1]})
        return finish(trace, started, f"{task.question} {earlier[-1]}", "previous_question")
