"""Acceptance checks for model-written queries, as small pure functions.

A small local model often answers the question instead of rewriting it, returns an earlier
question of the conversation, drops the user's own words or writes an essay. Each check
below names one of those failures; a rewrite that fails any check is rejected and the
strategy falls back, recording the check's name so that eval can count how often each fires.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ..text import content_stems, split_sentences, words

_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:rewritten|standalone|reformulated|final)?\s*(?:query|question|rewrite)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could should would will shall may might "
    "has have had tell list explain describe compare give show find".split()
)

#: words of a question that its rewrite replaces or rephrases, so not content it must keep: the
#: pronouns a rewrite resolves ("isn't he too old for it?" is "Is Mick Jagger too old to tour?"),
#: question words and auxiliaries with their contractions' pieces ("how about adults" is "What does
#: the club offer adults?"), a follow-up's fillers, and the frame of a correction or a request to
#: explain ("oh, I meant the ferry" is "What time does the ferry to Hydra leave?"; "what do you mean by
#: APR?" is "What is APR on a credit card?"), and a request for more ("can you tell me more about it?" is
#: "What else is known about the Hanseatic League?"; "go on", "elaborate", "in more detail")
_REPLACED = _QUESTION_WORDS | frozenset(
    "i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs "
    "this that these those one ones "
    "don doesn didn isn aren wasn weren can couldn shouldn wouldn won hasn haven hadn t s d ll re ve m "
    "about also else ok okay so then just please thanks oh mean meant "
    "more further go continue elaborate expand detail details".split()
)

#: "what do its fees look like?" asks what the fees are, and a rewrite says so ("What are the fees of an
#: index fund?"): the frame "look like" (or "sound like", "seem like", a question ending in "like") is
#: how the question is put, not what it asks about. Counted as content, it made the fees one word
#: kept of three and the rewrite was rejected
_LIKE_FRAME = re.compile(r"\b(?:looks?|looked|looking|sounds?|seems?)\s+like\b|\blike\s*[?.!]*\s*$", re.IGNORECASE)

#: the reasons a check can give, in the order they are tried
REASONS = ("empty", "multi_line", "overlong", "not_a_question", "lost_content", "repeats_earlier_question")


def clean_answer(text: str) -> str:
    """Strip what models wrap around a one-line answer: code fences, a label, quotes, spaces."""
    text = text.strip().strip("`").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [_LABEL.sub("", line).strip() for line in lines]
    text = "\n".join(line for line in lines if line)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return text.strip("“”\"").strip()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _asked(question: str) -> set[str]:
    """The stems of what a question asks about: its content words less those a rewrite replaces."""
    return content_stems(" ".join(w for w in words(_LIKE_FRAME.sub(" ", question)) if w not in _REPLACED))


#: a stem of the question counts as kept by a rewrite stem spelled nearly alike: the rewrite mends the
#: user's spelling ("Sollutions" rewritten "Solutions" was rejected as losing the only content word).
#: Stems this long, with the same first letter, at least this similar (difflib's ratio)
SPELLING_MIN_CHARS = 5
SPELLING_MIN_RATIO = 0.85


def _respelled(stem: str, got: set[str]) -> bool:
    return len(stem) >= SPELLING_MIN_CHARS and any(
        len(other) >= SPELLING_MIN_CHARS and other[0] == stem[0] and SequenceMatcher(None, stem, other).ratio() >= SPELLING_MIN_RATIO
        for other in got
    )


def _kept(asked: set[str], got: set[str]) -> float:
    if not asked:
        return 1.0
    return sum(stem in got or _respelled(stem, got) for stem in asked) / len(asked)


def _keeps_content(question: str, asked: set[str], got: set[str], min_kept: float) -> bool:
    """Whether a rewrite whose content stems are ``got`` keeps what ``question`` asks about (``asked``,
    its :func:`_asked` stems).

    It must keep ``min_kept`` of the question's content words, or of one of its sentences that asks
    (ends in "?") where the message has several: users wrap a question in remarks ("Ha, fair enough, I
    was only joking about the pies. What goes into the pastry?"), and a rewrite that keeps the question
    and drops the remarks ("What goes into the pastry of a Cornish pasty?") kept under half of the
    message's content words and was rejected, the whole message searched as written."""
    if not asked or _kept(asked, got) >= min_kept or _kept(content_stems(question), got) >= min_kept:
        return True
    sentences = split_sentences(question)
    return len(sentences) > 1 and any(
        _kept(asked_here, got) >= min_kept
        for sentence in sentences
        if sentence.endswith("?") and (asked_here := _asked(sentence))
    )


def looks_like_question(text: str) -> bool:
    first = words(text)[:1]
    return text.rstrip().endswith("?") or (bool(first) and first[0] in _QUESTION_WORDS)


def check_rewrite(
    question: str,
    rewrite: str,
    earlier_questions: Sequence[str] = (),
    min_kept: float = 0.5,
    max_words: int = 40,
) -> str | None:
    """The first check ``rewrite`` fails as a rewrite of ``question`` (a name from :data:`REASONS`), or None.

    ``min_kept`` is the share of the question's content words the rewrite must keep, counted
    without the words a rewrite replaces (:data:`_REPLACED`) or with them, whichever is higher: a
    long question's own "what can you tell me" kept in its rewrite is no content, but it is not
    asked of a rewrite either; in a message of several sentences, the share of one sentence that
    asks is enough (:func:`_keeps_content`);
    ``max_words`` the length above which a rewrite is an essay (3x the question's length
    is always allowed, since resolving references adds words).
    """
    if not rewrite.strip():
        return "empty"
    if "\n" in rewrite.strip():
        return "multi_line"
    n_words = len(words(rewrite))
    if n_words > max(max_words, 3 * len(words(question))):
        return "overlong"
    if question.rstrip().endswith("?") and not looks_like_question(rewrite):
        return "not_a_question"
    asked = _asked(question)
    got = content_stems(rewrite)
    if not _keeps_content(question, asked, got, min_kept):
        return "lost_content"
    for earlier in earlier_questions:
        # the rewrite is (nearly) an earlier question and keeps none of the words this question adds
        # to it; "And for members?" rewritten "And for members, how much is a visitor mooring?" after
        # "How much is a visitor mooring?" names the members, so it asks something new
        before = content_stems(earlier)
        added = asked - before
        if before and _jaccard(got, before) >= 0.8 and added and not added & got:
            return "repeats_earlier_question"
    return None


def tidy(text: str, question: str = "") -> str:
    """Capitalize, collapse spaces and end with the right mark (the mmr-cluster post-processing)."""
    text = " ".join(text.split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".?!":
        text += "?" if looks_like_question(text) or question.rstrip().endswith("?") else "."
    return text
