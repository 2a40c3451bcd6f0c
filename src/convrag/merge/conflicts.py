"""Conflicting information: passages from different collections about the same thing that
state different figures. Both are kept and marked, and the answer prompt asks the model to say
that the sources disagree rather than silently pick one.

Rule: same topic (word-set Jaccard of content words >= ``topic_overlap``) and each states
numbers (figures, years, amounts) the other does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..types import SourcedHit
from .diversity import jaccard

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?")
_STOP = frozenset("the a an of to in and or is are was were be for on with as by at from that this it its their".split())


def _numbers(text: str) -> frozenset[str]:
    return frozenset(n.replace(",", "") for n in _NUMBER.findall(text))


def _topic(text: str) -> frozenset[str]:
    # The opening of a passage says what it is about; 120 words keep this cheap.
    return frozenset(w for w in text.lower().split()[:120] if len(w) > 2 and w.isalpha() and w not in _STOP)


def find_conflicts(hits: Sequence[SourcedHit], topic_overlap: float = 0.3) -> list[tuple[int, int]]:
    """Index pairs (i < j) of hits from different collections that look contradictory."""
    numbers = [_numbers(h.text) for h in hits]
    topics = [_topic(h.title + " " + h.text) if numbers[i] else frozenset() for i, h in enumerate(hits)]
    pairs = []
    for i in range(len(hits)):
        for j in range(i + 1, len(hits)):
            if hits[i].collection == hits[j].collection or not numbers[i] or not numbers[j]:
                continue
            if jaccard(topics[i], topics[j]) >= topic_overlap and numbers[i] - numbers[j] and numbers[j] - numbers[i]:
                pairs.append((i, j))
    return pairs
