"""A scripted stand-in LLM for control-flow tests of the strategies (never shipped, never a default).

Answers are queued per prompt kind (recognized from the system prompt); an exception in a
queue is raised instead of answered. Every request is recorded so tests can assert on it.
"""

from __future__ import annotations

from collections import deque

from convrag.generate.answer import SYSTEM as ANSWER_SYSTEM
from convrag.llm.base import ChatMessage, Completion, GenerationParams
from convrag.strategies.prompts import AMBIGUITY_SYSTEM, REWRITE_SYSTEM, SUMMARY_SYSTEM

KINDS = {REWRITE_SYSTEM: "rewrite", AMBIGUITY_SYSTEM: "check", SUMMARY_SYSTEM: "summary", ANSWER_SYSTEM: "answer"}


class ScriptedLLM:
    backend = "scripted"
    model = "scripted"

    def __init__(self, rewrite=(), check=(), summary=(), answer=(), reformulate=()) -> None:  # type: ignore[no-untyped-def]
        self.queues = {"rewrite": deque(rewrite), "check": deque(check), "summary": deque(summary), "answer": deque(answer),
                       "reformulate": deque(reformulate), "unknown": deque()}
        self.requests: list[tuple[str, list[ChatMessage]]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        system = messages[0]["content"]
        kind = KINDS.get(system) or ("reformulate" if system.startswith("You write search engine queries") else "unknown")
        self.requests.append((kind, messages))
        queue = self.queues[kind]
        if not queue:
            raise AssertionError(f"unexpected {kind} call")
        answer = queue.popleft()
        if isinstance(answer, BaseException):
            raise answer
        return Completion(answer, sum(len(m["content"].split()) for m in messages), len(answer.split()), 0.5, self.model)

    def kinds(self) -> list[str]:
        return [k for k, _ in self.requests]

    def last_user_prompt(self, kind: str) -> str:
        return [m for k, m in self.requests if k == kind][-1][-1]["content"]


class StreamingScriptedLLM(ScriptedLLM):
    """A :class:`ScriptedLLM` that also streams: each answer word by word, then the completion."""

    def stream(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()):  # type: ignore[no-untyped-def]
        completion = self.complete(messages, params)
        words = completion.text.split(" ")
        for i, word in enumerate(words):
            yield word if i == 0 else " " + word
        yield completion
