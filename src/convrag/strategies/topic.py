"""What a conversation is about, without a model call: specific terms, and whether a question names them.

A follow-up such as "What are the fees?" has no pronoun, yet it cannot be searched on its own:
it carries no topic. Two zero-call tools address that:

* :func:`specific_terms` finds the words of a text that carry a topic: content words that are
  rare in everyday English (``wordfreq``'s Zipf scale: "the" is about 7.7, "mortgage" 4.4,
  "annotators" 1.3), acronyms and numbers. A question with none of them leans on the
  conversation for its subject.
* :func:`conversation_terms` ranks the history's specific terms by how recent, how repeated
  and how specific they are, user questions counting more than answers. Appending the top
  few to a question that lacks them is the zero-call topic expansion.
* :func:`shared_terms` finds the specific terms a follow-up repeats from the conversation: such a
  question is anchored to what was said and needs no rewrite to be searched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN

from ..history import topical
from ..text import stemmer, zipf
from ..types import Message

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9'&.+-]*[A-Za-z0-9+]|[A-Za-z]|\d[\d,.]*")
# Words that are rare on the Zipf scale but carry no topic in a question.
_FILLER = frozenset(
    "please thanks thank okay ok yes no hi hello sorry also really actually anyway basically specifically exactly "
    "else more most much many some any every each other another such like way ways thing things stuff kind kinds "
    "type types example examples info information detail details question questions answer answers mean meant "
    "tell know want need get give make use used using".split()
)
_STOP = frozenset(STOPWORDS_EN) | frozenset(
    "i me my mine we us our you your yours he him his she her it its they them their this that these those there "
    "what which who whom whose when where why how can could would should will shall may might must do does did done "
    "am is are was were be been being have has had having not nor than then so if or and but about above after again "
    "against all am an as at because before below between both by during few for from further here in into just "
    "only own same too very of off on once out over under until up down while with within without".split()
)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _is_acronym(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def is_specific(token: str, max_zipf: float) -> bool:
    """Whether ``token`` can name a topic: an acronym (IAM, SEC), a number with 2+ digits, or a
    content word at most ``max_zipf`` on the Zipf scale."""
    if _is_acronym(token):
        return True
    if token[0].isdigit():
        return sum(c.isdigit() for c in token) >= 2
    word = token.lower().strip("'.")
    if len(word) < 3 or word in _STOP or word in _FILLER:
        return False
    return zipf(word) <= max_zipf


def specific_terms(text: str, max_zipf: float = 4.6) -> list[str]:
    """The topic-bearing tokens of ``text`` in order, lowercased (acronyms kept as written), deduplicated."""
    out: list[str] = []
    for token in tokens(text):
        if is_specific(token, max_zipf):
            key = token if _is_acronym(token) else token.lower()
            if key not in out:
                out.append(key)
    return out


def _stem(word: str) -> str:
    return stemmer().stemWord(word.lower())


@dataclass(frozen=True)
class TopicSettings:
    """How :func:`conversation_terms` weighs the history (tuned on the dev split)."""

    max_zipf: float = 4.6
    decay: float = 0.6  # weight of an exchange relative to the one after it
    agent_weight: float = 0.5  # an answer's words count this much relative to the user's
    max_terms: int = 2


def conversation_terms(
    history: Sequence[Message], question: str = "", settings: TopicSettings = TopicSettings()
) -> list[tuple[str, float]]:
    """The history's specific terms that ``question`` does not already contain, best first, with
    their weights: sum over occurrences of recency x speaker x specificity (6 - Zipf)."""
    asked = {_stem(t) for t in tokens(question)}
    history = topical(history)  # a "Thanks!" exchange names no topic, and is no exchange back
    # recency by exchange: the last user message and the answer after it are 0 exchanges back
    n_users = sum(m.speaker == "user" for m in history)
    seen = 0
    exchange_of = []
    for message in history:
        seen += message.speaker == "user"
        exchange_of.append(max(0, n_users - max(seen, 1)))
    scores: dict[str, float] = {}
    surface: dict[str, str] = {}
    for i, message in enumerate(history):
        speaker = 1.0 if message.speaker == "user" else settings.agent_weight
        recency = settings.decay ** exchange_of[i]
        for term in dict.fromkeys(specific_terms(message.text, settings.max_zipf)):
            stem = _stem(term)
            if stem in asked:
                continue
            weight = 6.0 - min(zipf(term), 6.0) if not _is_acronym(term) else 3.0
            scores[stem] = scores.get(stem, 0.0) + speaker * recency * weight
            surface.setdefault(stem, term)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[: settings.max_terms]
    return [(surface[stem], round(score, 4)) for stem, score in ranked]


def names_topic(question: str, max_zipf: float = 4.6) -> bool:
    """Whether ``question`` carries a topic of its own (at least one specific term)."""
    return bool(specific_terms(question, max_zipf))


def shared_terms(question: str, history: Sequence[Message], max_zipf: float = 4.6) -> list[str]:
    """The specific terms of ``question`` that the conversation used too (compared by stem): a
    follow-up that repeats one ("And the Pro plan's fees?") already names what it is about."""
    said = {_stem(term) for message in topical(history) for term in specific_terms(message.text, max_zipf)}
    return [term for term in specific_terms(question, max_zipf) if _stem(term) in said]


def expand(query: str, terms: Iterable[str]) -> str:
    """``query`` followed by the topic terms it lacks (the zero-call topic expansion)."""
    extra = [t for t in terms if t.lower() not in query.lower()]
    return f"{query} {' '.join(extra)}".strip() if extra else query
