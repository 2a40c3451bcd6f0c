"""Words, stems and normalized forms: the text handling that strategies, answers and queries share.

Snowball (PyStemmer) stems and bm25s's English stop words, so that "content words" mean the
same thing here as in the BM25 index.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

_WORD = re.compile(r"\w+", re.UNICODE)
STOP = frozenset(STOPWORDS_EN)


#: one stemmer and one sentence segmenter per thread: neither is safe to share (a pysbd Segmenter
#: keeps the text it is splitting on itself, so concurrent turns of the service split each other's
#: passages; PyStemmer documents its stemmers as not thread-safe)
_local = threading.local()


def stemmer() -> Stemmer.Stemmer:
    """This thread's English Snowball stemmer."""
    if (found := getattr(_local, "stemmer", None)) is None:
        found = _local.stemmer = Stemmer.Stemmer("english")
    return found


@lru_cache(maxsize=1)
def _zipf():  # type: ignore[no-untyped-def]
    from wordfreq import zipf_frequency  # its English list loads on first use (about a second)

    return zipf_frequency


@lru_cache(maxsize=50_000)
def zipf(word: str) -> float:
    """Frequency of ``word`` in everyday English on the Zipf scale (0 = unseen, 7+ = "the")."""
    return float(_zipf()(word.lower(), "en"))


def words(text: str) -> list[str]:
    """Lowercased word tokens (letters and digits of any script)."""
    return _WORD.findall(text.lower())


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning (stop words, pronouns included, removed)."""
    kept = [w for w in words(text) if w not in STOP]
    return set(stemmer().stemWords(kept))


#: signs that a text was split into Penn-Treebank tokens (MT-RAG's clapnq passages: "the franchise 's
#: 98th season , the 30th in Arizona ."): a word, a space, then a comma or full stop before a space
_TOKENIZED = re.compile(r"\w [,.](?=\s)")
_BEFORE_CLOSING = re.compile(r"(?<=\S) +(?=[,.;:!?%)\]](?:\s|$))")
_AFTER_OPENING = re.compile(r"([(\[]) +(?=\S)")
#: "n't" is left apart: joined, "would n't" becomes the word "wouldn", which the passage as stored
#: (and so the citation support test) does not hold
_CLITIC = re.compile(r"(?<=\w) +(?=(?:'s|'re|'m|'ve|'ll|'d)\b)", re.IGNORECASE)
_PTB_QUOTES = re.compile(r"``\s*(.*?)\s*''")
#: a single quotation mark standing alone between words: a plural possessive ("the fans ' vote") or
#: one end of a quoted phrase ("seen as ' good ' ,")
_LONE_MARK = " ' "
#: words ending in "s" after which a lone mark opens a quote rather than marking a possessive
_NOT_POSSESSORS = frozenset("as is was has does its his hers this thus us says towards".split())
_MAX_QUOTED_WORDS = 4


def _is_possessor(text_before: str) -> bool:
    word = text_before.rsplit(None, 1)[-1] if text_before.strip() else ""
    return word.endswith("s") and "'" not in word and word.lower() not in _NOT_POSSESSORS


def _join_single_marks(text: str) -> str:
    """Lone single marks joined to their word, read left to right: after a plural noun a possessive
    ("fans' vote"); else, when another lone mark follows within four words, a quoted phrase ("'good'");
    else left as it is. Deciding mark by mark keeps "the fans ' vote was seen as ' good '" from being
    read as the quote "vote was seen as"."""
    pieces = text.split(_LONE_MARK)
    out, i = [pieces[0]], 1
    while i < len(pieces):
        if _is_possessor(out[-1]):
            out[-1] += "' " + pieces[i]
        elif i + 1 < len(pieces) and 0 < len(pieces[i].split()) <= _MAX_QUOTED_WORDS:
            out[-1] += " '" + pieces[i] + "' " + pieces[i + 1]
            i += 1
        else:
            out[-1] += _LONE_MARK + pieces[i]
        i += 1
    return out[0]


def tidy_spacing(text: str) -> str:
    """Treebank-tokenized text put back the way it is written ("Stadium ." -> "Stadium.", "( UTC )" ->
    "(UTC)", "franchise 's" -> "franchise's", "fans ' votes" -> "fans' votes", "``war''" quotes -> "war",
    "' good '" -> "'good'"), so that a passage shown to the model does not teach it to write that way. Text with fewer than two signs of tokenization is returned
    as it is: a general detokenizer also rewrites ordinary text (".gov", JSON, leading newlines)."""
    if len(_TOKENIZED.findall(text)) < 2:
        return text
    text = _PTB_QUOTES.sub(r'"\1"', text)
    text = _CLITIC.sub("", text)
    text = _join_single_marks(text)
    text = _AFTER_OPENING.sub(r"\1", text)
    return _BEFORE_CLOSING.sub("", text)


def normalize(text: str) -> str:
    """Case, punctuation and spacing removed (NFKC first): the form two texts are compared in."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(words(text))


def folded(text: str) -> str:
    """Case and runs of white space aside, punctuation kept: how a heading or a description is
    matched against a title ("What Is Ownership?" heads the page "What is Ownership?")."""
    return " ".join(text.split()).casefold()


def some_of(names: Sequence[str], shown: int = 3) -> str:
    """The first ``shown`` of ``names`` and how many more: "a.md, b.md, c.md and 61 more", as a report
    names what it left out in one line."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def same_query(a: str, b: str) -> bool:
    """Equal up to case, punctuation and spacing: a rewrite that changed nothing (a no-op)."""
    return normalize(a) == normalize(b)


def _segmenter(spans: bool = False):  # type: ignore[no-untyped-def]
    """This thread's pysbd segmenter (see ``_local``); ``spans``: the one that gives each sentence's
    place in the text."""
    attribute = "span_segmenter" if spans else "segmenter"
    if (found := getattr(_local, attribute, None)) is None:
        import pysbd

        found = pysbd.Segmenter(language="en", clean=False, char_span=spans)
        setattr(_local, attribute, found)
    return found


#: a piece pysbd gives that is longer than this and holds a double quote is cut again with its quotes
#: read as spaces (:func:`sentence_pieces`)
LONG_QUOTED_CHARS = 300
_DOUBLE_QUOTES = re.compile("[\"\u201c\u201d]")


def sentence_pieces(text: str) -> list[str]:
    """pysbd's sentences of ``text`` (English rules: "Dr. Salk", "e.g.", "E. E. Cummings" and a full
    stop inside quotes are handled), as written: joined, they give ``text`` back (but for spaces pysbd
    drops at its very start).

    pysbd takes no full stop inside double quotes for a sentence end. That is right for a quoted
    remark ('He said "Stop." and left.') and wrong for a paragraph wrapped whole in quotes: a quarter
    of MT-RAG's fiqa passages are (``"Is this amount adequate? Yes. You can ..."``), and 87 % of those
    came out as one or two "sentences", so the compression showed the model the whole passage for
    its one best sentence. A piece of more than :data:`LONG_QUOTED_CHARS` characters that holds a
    double quote is therefore cut again with its quotes read as spaces."""
    out: list[str] = []
    for piece in _segmenter().segment(text):
        if len(piece) > LONG_QUOTED_CHARS and _DOUBLE_QUOTES.search(piece):
            out += _cut_across_quotes(piece)
        else:
            out.append(piece)
    return out


def _cut_across_quotes(piece: str) -> list[str]:
    """``piece`` cut where pysbd ends a sentence once its double quotes are spaces (the same length,
    so the cuts fall at the same places in ``piece``), as written: joined, they give ``piece``."""
    masked = _DOUBLE_QUOTES.sub(" ", piece)
    cuts = [0, *(span.start for span in _segmenter(spans=True).segment(masked)[1:]), len(piece)]
    return [piece[a:b] for a, b in zip(cuts, cuts[1:]) if piece[a:b]]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (:func:`sentence_pieces`), whitespace collapsed, empty ones dropped."""
    return [" ".join(raw.split()) for raw in sentence_pieces(text) if raw.strip()]
