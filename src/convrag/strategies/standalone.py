"""Stage 1 of progressive escalation: a cheap test of whether a question stands on its own.

A question depends on the conversation when it refers to something it does not name
(pronouns, "the previous", "what about", a quantifier standing for a noun it leaves out: "Can I
carry any over?", a comparison of things it does not name: "Which is better for a beginner?") or is
too short to carry its own topic. Pure string rules, no model call: on the benchmark this resolves a
share of follow-up turns at no cost, which is where the strategy's latency advantage comes from.
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
#: quantifiers that stand for a noun the conversation named ("Can I carry any over?" after a question
#: about annual leave) where no noun follows them: at the end, or before one of :data:`NOT_A_NOUN`.
#: Read as standalone, that question was searched and its passages compressed as asked, and the small
#: model answered it with the days of leave instead of the days carried over. Comparatives ("more",
#: "less", "enough") are left out: "more than", "secure enough for me" name no noun left out; so is
#: "of", as "some of the plans" names its noun ("any of them" is marked by its pronoun)
QUANTIFIERS = frozenset("any some both either neither none each all many much several another others".split())
NOT_A_NOUN = frozenset("over for in on at to from with left back up out off else here now today then yet instead too as".split())
MIN_WORDS = 5

#: adjectives whose comparative and superlative (:func:`degrees`) mark a comparison; "more"/"most"/
#: "less"/"least" mark one before any adjective
_COMPARED = ("cheap fast safe easy large big small high low new old strong quick simple great long short hard risky "
             "healthy early late good bad wide deep heavy light slow smart close rich poor young").split()
_IRREGULAR = {"good": ("better", "best"), "bad": ("worse", "worst")}
_DEGREE_WORDS = frozenset("more most less least".split())
#: what makes "which"/"what" the subject of a comparison: "which is ...", "what's ..." ("s"), "which would ..."
_AUXILIARIES = frozenset("is are was were s would should will can could".split())
#: words that name the things compared, so a comparison with one of them stands on its own
_OPTIONS = frozenset("or than between vs versus compared".split())


def degrees(adjective: str) -> tuple[str, ...]:
    """The comparative and superlative of ``adjective``: "cheaper", "cheapest"; "easier", "easiest"."""
    if adjective in _IRREGULAR:
        return _IRREGULAR[adjective]
    if adjective.endswith("y"):
        return adjective[:-1] + "ier", adjective[:-1] + "iest"
    if adjective.endswith("e"):
        return adjective + "r", adjective + "st"
    if adjective == "big":
        return "bigger", "biggest"
    return adjective + "er", adjective + "est"


COMPARATIVES = frozenset(form for adjective in _COMPARED for form in degrees(adjective))


class StandaloneVerdict(NamedTuple):
    """``standalone`` and the markers that decided it (empty when standalone)."""

    standalone: bool
    markers: tuple[str, ...]


def elliptical(tokens: list[str]) -> list[str]:
    """The quantifiers of ``tokens`` (a question's words) that stand without their noun
    (:data:`QUANTIFIERS`): "any" in "can i carry any over", not in "is there any fee" nor in "is it
    free at all"."""
    return [w for i, w in enumerate(tokens) if w in QUANTIFIERS and (i + 1 == len(tokens) or tokens[i + 1] in NOT_A_NOUN)
            and not (w == "all" and i > 0 and tokens[i - 1] == "at")]


def compared_without_options(tokens: list[str]) -> list[str]:
    """The comparatives of ``tokens`` that compare things the question does not name: "better" in
    "which is better for a beginner" after a conversation about index and active funds, "popular" in
    "which is the most popular". A noun after the comparative names what is compared ("which is the
    largest river in America"), and so do "or", "than", "between" ("which is cheaper, renting or
    buying")."""
    if _OPTIONS & set(tokens):
        return []
    found = []
    for i, word in enumerate(tokens[:-2]):
        if word not in ("which", "what") or tokens[i + 1] not in _AUXILIARIES:
            continue
        k = i + 2
        for optional in ("be", "the"):  # "which would be the easiest"
            if k < len(tokens) and tokens[k] == optional:
                k += 1
        if k < len(tokens) and tokens[k] in _DEGREE_WORDS:
            k += 1
        elif k >= len(tokens) or tokens[k] not in COMPARATIVES:
            continue
        if k < len(tokens) and (k + 1 == len(tokens) or tokens[k + 1] in NOT_A_NOUN):
            found.append(tokens[k])
    return found


def standalone_verdict(question: str, min_words: int = MIN_WORDS) -> StandaloneVerdict:
    tokens = words(question)
    markers = [f"pronoun:{w}" for w in dict.fromkeys(tokens) if w in PRONOUNS]
    lowered = " ".join(tokens)
    markers += [f"reference:{r}" for r in REFERENCES if re.search(rf"\b{re.escape(r)}\b", lowered)]
    markers += [f"ellipsis:{w}" for w in dict.fromkeys(elliptical(tokens))]
    markers += [f"comparison:{w}" for w in dict.fromkeys(compared_without_options(tokens))]
    if len(tokens) < min_words:
        markers.append(f"short:{len(tokens)}_words")
    return StandaloneVerdict(not markers, tuple(markers))
