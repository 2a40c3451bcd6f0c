"""Words, stems and normalized forms: the text handling that strategies, answers and queries share.

Snowball (PyStemmer) stems and bm25s's English stop words, so that "content words" mean the
same thing here as in the BM25 index.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

_WORD = re.compile(r"\w+", re.UNICODE)
STOP = frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lowercased word tokens (letters and digits of any script)."""
    return _WORD.findall(text.lower())


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning (stop words, pronouns included, removed)."""
    kept = [w for w in words(text) if w not in STOP]
    return set(stemmer().stemWords(kept))


def normalize(text: str) -> str:
    """Case, punctuation and spacing removed (NFKC first): the form two texts are compared in."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(words(text))


def same_query(a: str, b: str) -> bool:
    """Equal up to case, punctuation and spacing: a rewrite that changed nothing (a no-op)."""
    return normalize(a) == normalize(b)


@lru_cache(maxsize=1)
def _segmenter():  # type: ignore[no-untyped-def]
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (pysbd, English rules), whitespace collapsed, empty ones dropped."""
    return [" ".join(raw.split()) for raw in _segmenter().segment(text) if raw.strip()]
