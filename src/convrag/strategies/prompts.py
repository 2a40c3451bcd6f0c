"""The prompts, in one place so that they can be read, compared and tuned together.

Each prompt keeps its fixed part (instructions and few-shot examples) first and the
conversation last: the local backend then reuses the evaluated prefix between calls.
The examples are written for a 1.5B model, which copies a pattern far better than it
follows an abstract instruction; they show the two failures we saw most (returning an
earlier question, answering instead of rewriting) being avoided.
"""

from __future__ import annotations

from ..llm.base import ChatMessage

REWRITE_SYSTEM = (
    "You rewrite the user's LAST question so that a search engine can understand it without the conversation. "
    "Replace pronouns and vague references (it, they, this, that, those, the former, the second one) with the names "
    "they refer to in the conversation. Keep the user's own words and intent. Do not answer the question. "
    "Do not return an earlier question. If the last question is already clear on its own, repeat it unchanged. "
    "Reply with the rewritten question only, on one line."
)

_REWRITE_EXAMPLES: list[tuple[str, str, str]] = [
    (
        "User: Tell me about the Arizona Cardinals.\n"
        "Assistant: The Arizona Cardinals are an NFL team based in Glendale, Arizona, founded in 1898 in Chicago.",
        "Do they play outside the US?",
        "Do the Arizona Cardinals play games outside the US?",
    ),
    (
        "User: How do I create a Kubernetes cluster in IBM Cloud?\n"
        "Assistant: Open the Kubernetes Service page in the console, choose a plan and a location, and click Create.\n"
        "User: What plans are there?\n"
        "Assistant: There is a free plan with one worker node and a standard plan for production workloads.",
        "how much does the standard one cost?",
        "how much does the standard plan of a Kubernetes cluster in IBM Cloud cost?",
    ),
    (
        "User: what is an index fund\n"
        "Assistant: An index fund is a mutual fund or ETF that tracks a market index such as the S&P 500.",
        "What are the tax benefits of a Roth IRA?",
        "What are the tax benefits of a Roth IRA?",
    ),
    (
        "User: When did the Roman Empire fall?\n"
        "Assistant: The Western Roman Empire fell in 476 AD; the Eastern part lasted until 1453.\n"
        "User: Who were the Ottomans?\n"
        "Assistant: The Ottomans were a Turkish dynasty whose empire conquered Constantinople in 1453.",
        "Did they conquer Egypt?",
        "Did the Ottomans conquer Egypt?",
    ),
]


def _rewrite_user(context: str, question: str) -> str:
    return f"Conversation:\n{context or '(no earlier turns)'}\n\nLast question: {question}\nRewritten question:"


def rewrite_messages(context: str, question: str) -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": REWRITE_SYSTEM}]
    for ex_context, ex_question, ex_answer in _REWRITE_EXAMPLES:
        messages.append({"role": "user", "content": _rewrite_user(ex_context, ex_question)})
        messages.append({"role": "assistant", "content": ex_answer})
    messages.append({"role": "user", "content": _rewrite_user(context, question)})
    return messages


AMBIGUITY_SYSTEM = (
    "You judge search queries. A query is CLEAR when every person, product, place or topic it is about is named in it, "
    "so a search engine needs no earlier conversation. It is UNCLEAR when it depends on something unnamed "
    "(it, they, this, that one, the previous). Reply with one word: CLEAR or UNCLEAR."
)

_AMBIGUITY_EXAMPLES = [
    ("Do the Arizona Cardinals play games outside the US?", "CLEAR"),
    ("How much does it cost per month?", "UNCLEAR"),
    ("What are the tax benefits of a Roth IRA?", "CLEAR"),
    ("Did they win the second one?", "UNCLEAR"),
]


def ambiguity_messages(query: str) -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": AMBIGUITY_SYSTEM}]
    for example, verdict in _AMBIGUITY_EXAMPLES:
        messages.append({"role": "user", "content": f"Query: {example}"})
        messages.append({"role": "assistant", "content": verdict})
    messages.append({"role": "user", "content": f"Query: {query}"})
    return messages


SUMMARY_SYSTEM = (
    "Summarize the conversation history in 40-50 words and ask a question so that the summary and the question can be "
    "used without the conversation history to generate a meaningful response. The question restates the user's last "
    "question with every reference resolved; do not answer it. Reply in exactly two lines:\n"
    "Summary: <40-50 words>\nQuestion: <the question>"
)

_SUMMARY_EXAMPLES: list[tuple[str, str, str, str]] = [
    (
        "User: Tell me about the Arizona Cardinals.\n"
        "Assistant: The Arizona Cardinals are an NFL team based in Glendale, Arizona, founded in 1898 in Chicago.\n"
        "User: Do they play outside the US?\n"
        "Assistant: Yes, they played in London in 2017 against the Los Angeles Rams.",
        "Are they and the Chicago Cardinals the same team?",
        "The user is asking about the Arizona Cardinals, an NFL team based in Glendale, Arizona that was founded in "
        "Chicago in 1898, and about the international games they have played, including a 2017 game in London "
        "against the Los Angeles Rams.",
        "Are the Arizona Cardinals and the Chicago Cardinals the same team?",
    ),
    (
        "User: How do I create a Kubernetes cluster in IBM Cloud?\n"
        "Assistant: Open the Kubernetes Service page in the console, choose a plan and a location, and click Create.",
        "Can I change its location later?",
        "The user wants to create a Kubernetes cluster in IBM Cloud. The assistant explained that the cluster is created "
        "from the Kubernetes Service page of the console by choosing a plan and a location and clicking Create, and the "
        "user now asks about the location setting.",
        "Can I change the location of a Kubernetes cluster in IBM Cloud after creating it?",
    ),
    (
        "User: what is an index fund\n"
        "Assistant: An index fund is a mutual fund or ETF that tracks a market index such as the S&P 500, with low fees.",
        "are they safer than stocks?",
        "The user is learning about index funds, which are mutual funds or exchange-traded funds that track a market "
        "index such as the S&P 500 and charge low fees, and wants to know how their risk compares with buying "
        "individual stocks.",
        "Are index funds safer than investing in individual stocks?",
    ),
]


def _summary_user(context: str, question: str) -> str:
    return f"Conversation:\n{context or '(no earlier turns)'}\n\nLast question: {question}"


def summary_messages(context: str, question: str) -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": SUMMARY_SYSTEM}]
    for ex_context, ex_question, ex_summary, ex_rewrite in _SUMMARY_EXAMPLES:
        messages.append({"role": "user", "content": _summary_user(ex_context, ex_question)})
        messages.append({"role": "assistant", "content": f"Summary: {ex_summary}\nQuestion: {ex_rewrite}"})
    messages.append({"role": "user", "content": _summary_user(context, question)})
    return messages
