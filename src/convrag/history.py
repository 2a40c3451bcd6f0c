"""Conversation history as prompts see it: turn pairs, and their rendering within a token budget.

Prompt tokens are the cost on a CPU, so every strategy (and the answer prompt) renders the context it selected
through :func:`render_context`, which clips long agent answers and drops the oldest turns
until the rendering fits ``budget`` tokens, and says how many it dropped (the trace keeps it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .social import social_turn
from .types import Message


@dataclass(frozen=True)
class TurnPair:
    """One exchange: the user's message and the agent's answer. ``turn`` is 1-based."""

    turn: int
    user: str
    agent: str

    @property
    def text(self) -> str:
        """The seed's rendering for embedding a whole exchange."""
        return f"User: {self.user} Assistant: {self.agent}".strip()


def turn_pairs(history: Sequence[Message]) -> list[TurnPair]:
    """Group alternating messages into exchanges; an agent message with no user message before it
    (a history that starts with the agent) becomes a pair with an empty user side. An exchange
    whose user message is social ("Thanks!", "ok": :func:`convrag.social.social_turn`) is left out,
    its turn number kept by the others: it holds nothing a rewrite or an answer can use, and as the
    last exchange it stood in for the one before it, which is all the progressive strategy's rewrite
    reads ("Can I carry any over?" after "Thanks!" was declined)."""
    return [pair for pair in _all_pairs(history) if social_turn(pair.user) is None]


def topical(history: Sequence[Message]) -> list[Message]:
    """``history`` without its social exchanges (a social user message and the agent's reply to it),
    as :func:`turn_pairs` leaves them out: for the topic terms a follow-up is expanded with, where a
    "Thanks!" exchange counted as one more exchange back, weakening the topic's terms."""
    out: list[Message] = []
    skipping = False
    for message in history:
        if message.speaker == "user":
            skipping = social_turn(message.text) is not None
        if not skipping:
            out.append(message)
    return out


def _all_pairs(history: Sequence[Message]) -> list[TurnPair]:
    pairs: list[TurnPair] = []
    user: str | None = None
    for message in history:
        if message.speaker == "user":
            if user is not None:
                pairs.append(TurnPair(len(pairs) + 1, user, ""))
            user = message.text
        else:
            pairs.append(TurnPair(len(pairs) + 1, user or "", message.text))
            user = None
    if user is not None:
        pairs.append(TurnPair(len(pairs) + 1, user, ""))
    return pairs


def clip_words(text: str, max_words: int) -> str:
    """The first ``max_words`` words of ``text`` (an ellipsis marks the cut)."""
    parts = text.split()
    if len(parts) <= max_words:
        return " ".join(parts)
    return " ".join(parts[:max_words]) + " …"


@dataclass(frozen=True)
class Budget:
    """How much context a prompt may carry: ``tokens`` in all, ``answer_words`` per agent answer
    (0: the user's side only, for a prompt that needs the topic of the conversation, not its answers).

    ``step``: over budget, the oldest exchanges are dropped this many at a time, counted from the
    start of the conversation. With 1, once the budget is full, the window slides by an exchange
    every turn, so a prompt shares no more than its instructions with the one before, and a backend
    that reuses the evaluated prefix (llama.cpp) reads the whole history again. With 2 or more the start
    stays put for several turns, and each turn adds only its newest exchange to what was read,
    at the price of sometimes carrying fewer exchanges than the budget would hold."""

    tokens: int = 600
    answer_words: int = 80
    step: int = 1

    def __post_init__(self) -> None:
        if self.step < 1:
            raise ValueError(f"Budget.step must be at least 1, got {self.step}")


def pair_lines(pair: TurnPair, answer_words: int) -> list[str]:
    lines = []
    if pair.user:
        lines.append(f"User: {' '.join(pair.user.split())}")
    if pair.agent and answer_words > 0:
        lines.append(f"Assistant: {clip_words(pair.agent, answer_words)}")
    return lines


def render_context(
    blocks: Sequence[list[str]], count_tokens: Callable[[str], int], budget: Budget
) -> tuple[str, int]:
    """Join ``blocks`` (each a list of lines, oldest first), dropping whole blocks from the oldest
    end, ``budget.step`` at a time, until the text fits ``budget.tokens``; returns the text and the
    number of blocks dropped. A single block that alone exceeds the budget is cut word by word from its end."""
    blocks = list(blocks)
    dropped = _too_much(blocks, count_tokens, budget)
    kept = blocks[dropped:]
    text = _joined(kept)
    while len(kept) > 1 and count_tokens(text) > budget.tokens:
        n = min(budget.step, len(kept) - 1)
        del kept[:n]
        dropped += n
        text = _joined(kept)
    if kept and count_tokens(text) > budget.tokens:
        parts = text.split(" ")
        while len(parts) > 1 and count_tokens(" ".join(parts)) > budget.tokens:
            parts = parts[: max(1, int(len(parts) * 0.8))]
        text = " ".join(parts) + " …"
    return text, dropped


def _joined(blocks: Sequence[list[str]]) -> str:
    return "\n".join(line for block in blocks for line in block)


#: histories of up to this many blocks are scanned from their start
_SCANNED_WHOLE = 16


def _too_much(blocks: Sequence[list[str]], count_tokens: Callable[[str], int], budget: Budget) -> int:
    """A number of oldest blocks to drop (one of the numbers :func:`render_context` drops in turn)
    that still leaves more than ``budget.tokens``, so that its scan can start there instead of at
    the conversation's start, with the same result: the scan counted the whole remaining text
    once per dropped block, which made a long chat slower every turn (a 2,000-exchange history
    took 70 s to render, 5,000 took 10 minutes). Each block is counted once here; a block adds at
    least its own count less one (a line break the tokenizer may merge) to the joined text, so a
    start whose blocks add more than the budget by that bound leaves too much. The start is
    checked by counting its text; where the bound did not hold, the scan starts at 0 as before."""
    if len(blocks) <= _SCANNED_WHOLE:
        return 0
    least = [count_tokens(_joined([block])) - 1 for block in blocks]
    after = 0  # what the blocks from ``start`` on add at least
    start = 0
    for i in range(len(blocks) - 1, 0, -1):
        after += least[i]
        if after > budget.tokens and i % budget.step == 0:
            start = i
            break
    if start and count_tokens(_joined(blocks[start:])) > budget.tokens:
        return start
    return 0


def render_pairs(pairs: Sequence[TurnPair], count_tokens: Callable[[str], int], budget: Budget) -> tuple[str, int]:
    """Exchanges rendered as "User: …/Assistant: …" lines within ``budget`` (see :func:`render_context`)."""
    return render_context([pair_lines(p, budget.answer_words) for p in pairs], count_tokens, budget)
