"""Social turns: a greeting, thanks, a goodbye or a bare acknowledgement, answered without a search.

"Thanks, that's helpful!" went through the whole pipeline: the progressive strategy sent it to the
model for a rewrite (it has a pronoun), which was rejected, the passages were searched with it, and
the answer's model call declined: 18.6 s on two cores to say "I do not have specific information
about that in the available sources." MT-RAG's human conversations hold such turns too (10 of 842
user turns are labelled CONVERSATIONAL: "Thank you!", "ok bye", "omg."), and their reference
answers are a social reply ("You are welcome. Is there anything else I can help you with?").

A turn is social only when every word of it is one of :data:`WORDS` and one of them is a word
that makes it so (:data:`KINDS`), and it asks nothing ("?"): "Thanks, and how much is the Team
plan?" and "Is that all?" are questions. A message of symbols and no words ("👍") is an
acknowledgement. A message of punctuation and no words ("???", "!!!", "🤔?") is unclear: searched,
"???" was rewritten as the conversation's previous question and, 17 s later, declined; it is asked
to be put in words. Pure string rules, no model call, as progressive's stage 1.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

from .text import words

#: the words that make a turn social, by kind; the first kind (in this order) a turn has wins:
#: "ok, thanks, bye" is a goodbye
KINDS: dict[str, frozenset[str]] = {
    "goodbye": frozenset("bye goodbye farewell".split()),
    "thanks": frozenset("thanks thank thx ty cheers appreciate appreciated grateful".split()),
    "greeting": frozenset("hi hello hey hiya howdy greetings morning afternoon evening".split()),
    "acknowledgement": frozenset("ok okay k alright great cool perfect awesome nice excellent wonderful helpful useful "
                                 "understood noted wow omg gotcha".split()),
}
#: the words a social turn may hold besides those: "thank you so much", "that's very helpful",
#: "see you later", "got it", "makes sense", "have a nice day", "good morning"
WORDS: frozenset[str] = frozenset().union(*KINDS.values()) | frozenset(
    "a all and day for good got have help i it lot makes much really right s see sense so take care that the "
    "this very was is you ya later soon talk again your yours information info answer oh ah well then can me please".split()
)


class Social(NamedTuple):
    """A social turn's kind (a key of :data:`KINDS`) and the reply it is given."""

    kind: str
    reply: str


#: the reply to each kind; neither cites nor declines, and the next question is searched as any other
REPLIES: dict[str, str] = {
    "goodbye": "Goodbye! Come back any time you have a question about the documents.",
    "thanks": "You're welcome! Is there anything else you would like to know?",
    "greeting": "Hello! Ask me a question about the documents, and I will answer from them with citations.",
    "acknowledgement": "Is there anything else you would like to know?",
    "unclear": "I'm not sure what you mean. Could you put your question in words?",
}


def social_turn(message: str) -> Social | None:
    """The kind of social turn ``message`` is, with its reply; None for anything that may ask for
    information (see the module docstring)."""
    tokens = words(message)
    if not tokens:
        if not message.strip():
            return None  # empty: the pipeline's own error
        # "👍", "🙏": a symbol and nothing that asks; "???", "!!!", "🤔?": nothing to search
        symbol = "?" not in message and any(unicodedata.category(ch) == "So" for ch in message)
        kind = "acknowledgement" if symbol else "unclear"
        return Social(kind, REPLIES[kind])
    if "?" in message:
        return None
    if any(t not in WORDS for t in tokens):
        return None
    kind = next((kind for kind, marks in KINDS.items() if marks & set(tokens)), None)
    if kind is None:  # "see you", "good day": every word allowed, none that makes it social alone
        kind = "goodbye" if "see" in tokens else None
    return Social(kind, REPLIES[kind]) if kind else None
