"""How long a question may be, checked in one place by the library and every command.

Commands check before they load anything slow (an index, the 1.1 GB model), so a pasted file is
refused in a second, not after the model loads. The service has its own, configurable limits.
"""

from __future__ import annotations

import re

from .characters import not_utf8_text
from .errors import ConvragError

MAX_QUESTION_CHARS = 20_000


def check_question(text: str, what: str = "question") -> str:
    """The text unchanged, or an error naming what is wrong with it (``what`` names it: question, query)."""
    if not text.strip():
        raise ConvragError(f"the {what} is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ConvragError(f"the {what} is {len(text):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    if (reason := not_utf8_text(text)) is not None:  # was a TypeError traceback from the tokenizer
        raise ConvragError(f"the {what} is {reason}; set the terminal, or the file piped in, to UTF-8")
    return text


#: a letter or digit, as :func:`convrag.text.words` finds them; not imported from there, since that module
#: loads the stemmer and the stop words, and these checks run before anything slow is loaded
_WORD = re.compile(r"\w")


def check_query(text: str) -> str:
    """A search query checked as a question is (:func:`check_question`), and refused when it holds no
    word to search: "???" found no term in BM25 and, embedded, drew passages that had nothing to do
    with it, printed with scores as if they answered it."""
    check_question(text, "query")
    if not _WORD.search(text):
        raise ConvragError("the query has no words to search (letters or digits)")
    return text
