"""The prompts, in one place so that they can be read, compared and tuned together.

Each prompt keeps its fixed part (instructions and few-shot examples) first and the
conversation last: the local backend then reuses the evaluated prefix between calls.
The examples are written for a 1.5B model, which copies a pattern far better than it
follows an abstract instruction; they show the failures we saw most (returning an earlier
question, answering instead of rewriting, leaving a follow-up without its topic) being avoided.

Every example is about a topic that appears in no MT-RAG conversation (hanseatic trade,
Grafana alerting, amateur radio licences, octopuses and tardigrades, chess, sourdough), and
declares its topics in :attr:`FewShot.topics`: ``tests/strategies/test_prompts.py`` fails when
one of them occurs in the benchmark's conversations, so no figure is flattered by an example
that already knows the answer's subject.
"""

from __future__ import annotations

from typing import NamedTuple

from ..llm.base import ChatMessage


class FewShot(NamedTuple):
    """One worked example: the conversation, the last question, the reply we want, and the named
    topics it is about (checked against the benchmark data by the test suite)."""

    context: str
    question: str
    answer: str
    topics: tuple[str, ...]


REWRITE_SYSTEM = (
    "You rewrite the user's LAST question so that a search engine can understand it without the conversation. "
    "Replace pronouns and vague references (it, they, this, that, those, the former, the second one) with the names "
    "they refer to in the conversation, and add the topic when the question leaves it out. Keep the user's own words "
    "and intent. Do not answer the question. Do not return an earlier question. If the last question is already "
    "clear on its own, repeat it unchanged. Reply with the rewritten question only, on one line."
)

REWRITE_EXAMPLES: tuple[FewShot, ...] = (
    FewShot(
        "User: What was the Hanseatic League?\n"
        "Assistant: A medieval alliance of merchant guilds and market towns around the Baltic Sea, led by the city of Lübeck.",
        "Why did it decline?",
        "Why did the Hanseatic League decline?",
        ("Hanseatic League", "Lübeck", "Baltic Sea"),
    ),
    FewShot(
        "User: How do I set up alerting in Grafana?\n"
        "Assistant: Open a dashboard panel, create an alert rule with a query and a condition, and pick a contact point.\n"
        "User: What kinds of contact points are there?\n"
        "Assistant: Email, chat integrations and generic webhooks.",
        "do webhooks need authentication?",
        "do Grafana alerting webhook contact points need authentication?",
        ("Grafana",),
    ),
    FewShot(
        "User: how do I keep a sourdough starter alive?\n"
        "Assistant: Feed it flour and water every day at room temperature, or once a week if you keep it in the fridge.",
        "What is the best way to learn chess as an adult?",
        "What is the best way to learn chess as an adult?",
        ("sourdough", "chess"),
    ),
    FewShot(
        "User: How do I get an amateur radio license?\n"
        "Assistant: You pass a written exam given by volunteer examiners, and the licensing office then issues a call sign.",
        "What does the exam cost?",
        "What does the amateur radio license exam cost?",
        ("amateur radio", "call sign"),
    ),
    FewShot(
        "User: How long do octopuses live?\n"
        "Assistant: Most species live one to two years; the giant Pacific octopus can live up to five.\n"
        "User: And tardigrades?\n"
        "Assistant: Usually a few months, but dried out they can survive for decades.",
        "which of the two can survive in space?",
        "Can octopuses or tardigrades survive in space?",
        ("octopus", "giant Pacific octopus", "tardigrade"),
    ),
)


def _rewrite_head(context: str) -> str:
    return f"Conversation:\n{context or '(no earlier turns)'}\n\nLast question: "


def _rewrite_user(context: str, question: str) -> str:
    return f"{_rewrite_head(context)}{question}\nRewritten question:"


def _rewrite_examples() -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": REWRITE_SYSTEM}]
    for example in REWRITE_EXAMPLES:
        messages.append({"role": "user", "content": _rewrite_user(example.context, example.question)})
        messages.append({"role": "assistant", "content": example.answer})
    return messages


def rewrite_messages(context: str, question: str) -> list[ChatMessage]:
    return [*_rewrite_examples(), {"role": "user", "content": _rewrite_user(context, question)}]


def rewrite_prompt_start(context: str) -> list[ChatMessage]:
    """:func:`rewrite_messages` up to the question: what is known before the user asks it."""
    return [*_rewrite_examples(), {"role": "user", "content": _rewrite_head(context)}]


#: The question comes first in the reply: asked for last, the 1.5B model left it out of 102 of 252
#: dev-half replies (its summary ran on, often to the token limit); asked for first, it is always there
#: and the summary is shorter (docs/benchmarks.md).
SUMMARY_SYSTEM = (
    "Restate the user's last question so that it can be understood without the conversation, then summarize the "
    "conversation history in 40-50 words, so that the question and the summary can be used without the conversation "
    "history to generate a meaningful response. Resolve every reference in the question; do not answer it. Reply in "
    "exactly two lines:\nQuestion: <the question>\nSummary: <40-50 words>"
)

SUMMARY_EXAMPLES: tuple[tuple[FewShot, str], ...] = (
    (
        FewShot(
            "User: What was the Hanseatic League?\n"
            "Assistant: A medieval alliance of merchant guilds and market towns around the Baltic Sea, led by Lübeck.\n"
            "User: What did they trade?\n"
            "Assistant: Mostly timber, furs, grain, fish and wax from the Baltic, and cloth from Flanders.",
            "Why did it decline?",
            "Why did the Hanseatic League decline?",
            ("Hanseatic League", "Lübeck", "Baltic Sea", "Flanders"),
        ),
        "The user is learning about the Hanseatic League, a medieval alliance of merchant guilds and market towns "
        "around the Baltic Sea led by Lübeck, which traded timber, furs, grain, fish and wax from the Baltic and cloth "
        "from Flanders, and now asks about its decline.",
    ),
    (
        FewShot(
            "User: How do I set up alerting in Grafana?\n"
            "Assistant: Open a dashboard panel, create an alert rule with a query and a condition, and pick a contact point.",
            "Can one rule notify two teams?",
            "Can one Grafana alert rule notify two teams?",
            ("Grafana",),
        ),
        "The user wants to set up alerting in Grafana. The assistant explained that an alert rule is created from a "
        "dashboard panel with a query and a condition and sends notifications to a contact point, and the user now "
        "asks how notifications reach more than one team.",
    ),
    (
        FewShot(
            "User: How long do octopuses live?\n"
            "Assistant: Most species live one to two years; the giant Pacific octopus can live up to five.",
            "why so short?",
            "Why do octopuses have such short lives?",
            ("octopus", "giant Pacific octopus"),
        ),
        "The user is asking about the lifespan of octopuses. Most octopus species live only one to two years, and the "
        "giant Pacific octopus, the longest-lived, reaches about five years; the user wants to know the reasons for "
        "such a short life.",
    ),
)


def _summary_head(context: str) -> str:
    return f"Conversation:\n{context or '(no earlier turns)'}\n\nLast question: "


def _summary_user(context: str, question: str) -> str:
    return f"{_summary_head(context)}{question}"


def _summary_examples() -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": SUMMARY_SYSTEM}]
    for example, summary in SUMMARY_EXAMPLES:
        messages.append({"role": "user", "content": _summary_user(example.context, example.question)})
        messages.append({"role": "assistant", "content": f"Question: {example.answer}\nSummary: {summary}"})
    return messages


def summary_messages(context: str, question: str) -> list[ChatMessage]:
    return [*_summary_examples(), {"role": "user", "content": _summary_user(context, question)}]


def summary_prompt_start(context: str) -> list[ChatMessage]:
    """:func:`summary_messages` up to the question: what is known before the user asks it."""
    return [*_summary_examples(), {"role": "user", "content": _summary_head(context)}]
