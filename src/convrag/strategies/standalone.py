"""Stage 1 of progressive escalation: a cheap test of whether a question stands on its own.

A question depends on the conversation when it refers to something it does not name
(pronouns, "the previous", "what about") or is too short to carry its own topic. Pure
string rules, no model call: on the benchmark this resolves a share of follow-up turns at
no cost, which is where the strategy's latency advantage comes from.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..text import words

PRONOUNS = frozenset(
    "he she it they them him her his hers its their theirs this that these those there one ones".split()
)
REFERENCES = (
    "the previous",
    "the former",
    "the latter",
    "as mentioned",
    "mentioned above",
    "what about",
    "how about",
    "and what",
    "the same",
    "the other",
    "the first",
    "the second",
    "the last one",
    "you said",
    "you mentioned",
    "above",
    "earlier",
    "else",
)
MIN_WORDS = 5


class StandaloneVerdict(NamedTuple):
    """``standalone`` and the markers that decided it (empty when standalone)."""

    standalone: bool
    markers: tuple[str, ...]


def standalone_verdict(question: str, min_words: int = MIN_WORDS) -> StandaloneVerdict:
    tokens = words(question)
    markers = [f"pronoun:{w}" for w in dict.fromkeys(tokens) if w in PRONOUNS]
    lowered = " ".join(tokens)
    markers += [f"reference:{r}" for r in REFERENCES if re.search(rf"\b{re.escape(r)}\b", lowered)]
    if len(tokens) < min_words:
        markers.append(f"short:{len(tokens)}_words")
    return StandaloneVerdict(not markers, tuple(markers))
