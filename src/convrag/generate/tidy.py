"""The model's answer text made fit to read, without changing what it says.

A 1.5B model's reply sometimes fails in ways a reader sees at once and that need no judgement to
repair. Each repair is a pure function; :class:`~convrag.generate.answer.AnswerGenerator` applies
them and records in the trace what each one removed (the model's own text stays in ``llm_call``):

* :func:`has_words`: a reply of citation markers alone ("[1] [2] [3] [4] [5]", once in 71 dev
  answers) says nothing; it is treated as an empty answer;
* :func:`whole_sentences`: a reply the token limit stopped mid-sentence (5 of 63 answered dev turns)
  ends at its last whole sentence;
* :func:`drop_repeats`: a repetition loop (the same sentence three times, once in 63) keeps the
  sentence's first saying.

Sentences are :func:`~convrag.generate.citations.split_answer`: the unit a reader sees a citation
marker attached to; a repair that drops one keeps the line breaks between the others.
"""

from __future__ import annotations

import re

from ..text import content_stems
from .citations import MIN_WORDS, Sentence, join_answer, split_answer, strip_citations

_WORD = re.compile(r"\w")
#: how a said sentence ends: its punctuation (closing quotes or brackets after it), or a citation marker
_SAID = re.compile(r"(?:[.!?\u2026][\"')\]\u201d\u2019]*|\[\d{1,3}\])\s*$")
#: words that join a sentence to the one before without adding to what it says
_CONNECTIVES = frozenset({"also", "addit", "again", "furthermor", "moreov", "still", "too", "likewis", "similar"})


def has_words(text: str) -> bool:
    """Whether ``text`` says anything once its citation markers are taken out."""
    return bool(_WORD.search(strip_citations(text)))


def whole_sentences(text: str) -> tuple[str, str]:
    """A reply the token limit stopped, ended at its last whole sentence, and the unfinished rest
    (empty when the reply ends with a said sentence): a list cut short ("Might need to add, 8. Beg
    on the streets, and 9. Burgl") goes whole, its numbers being no sentence ends. A reply without
    a whole sentence is kept, ended with an ellipsis: a cut sentence reads worse than none, but it
    is all there is."""
    sentences = split_answer(text)  # each but the last ends with its punctuation
    if _SAID.search(sentences[-1].text):
        return text, ""
    if len(sentences) == 1:
        return f"{text.rstrip()} \u2026", ""
    return join_answer(sentences[:-1]), sentences[-1].text


def drop_repeats(text: str) -> tuple[str, list[str]]:
    """``text`` without the sentences that add no content word (connectives such as "also" aside)
    to one earlier sentence of it, and the sentences dropped. Sentences with fewer than
    :data:`~convrag.generate.citations.MIN_WORDS` content words are left alone: too little to tell a
    repeat from a short answer ("Yes [1]."). Another figure or name is another content word, so two
    sentences about different plans both stay."""
    kept: list[Sentence] = []
    seen: list[set[str]] = []
    dropped: list[str] = []
    for sentence in split_answer(text):
        words = content_stems(strip_citations(sentence.text)) - _CONNECTIVES
        if len(words) >= MIN_WORDS and any(words <= earlier for earlier in seen):
            dropped.append(sentence.text)
            continue
        kept.append(sentence)
        seen.append(words)
    return (join_answer(kept), dropped) if dropped else (text, [])
