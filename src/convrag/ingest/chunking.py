"""Token-window chunking in the MT-RAG style: 512-token passages overlapping by 100 tokens.

Windows are counted in the embedding model's tokenizer, so a passage fits what
the model reads. Passage ids are ``<doc_id>-<start>-<end>`` with character
offsets into the document, as MT-RAG's passage ids are.

A user's document is chunked by its structure as well (``structured=True``, the
default; :func:`structured_spans`, :func:`section_titles`): a window ends at a
sentence or line end and the next begins at one, and a passage that begins inside
a section its reader marked is titled by that section too. MT-RAG's windows
begin and end wherever the token count falls (", and less in quiet mode."), and a
passage that began mid-section had no words for what it was about but its own
(the fault codes' second half did not say "fault codes").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..text import folded
from ..types import Passage
from .documents import Document, Heading

DEFAULT_MAX_TOKENS = 512
DEFAULT_OVERLAP = 100
#: what joins a document's title and the sections a passage begins in, in the passage's title
SECTION_SEPARATOR = " \u203a "
#: the characters that end a sentence, and those that may close it after them (a quote, a bracket)
_SENTENCE_ENDS = frozenset(".!?\u2026\u3002\uff01\uff1f")
_CLOSERS = frozenset("\"')]\u201d\u2019\u00bb")
#: a line's number or letter before its text: "6.", "3.2.", "iv.", "b."
_NUMBERING_CHARS = 12
_NUMBERING = re.compile(r"\s*(?:\d{1,3}(?:\.\d{1,3})*|[a-zA-Z]|[ivxlcIVXLC]{1,5})\.")

#: a token wider than this many characters is a word the tokenizer could not split (WordPiece reads
#: a word of over 100 characters as one unknown token, however long it is)
UNSPLIT_WORD_CHARS = 100
#: such a word is counted as a token every this many characters, as WordPiece counts a shorter run it
#: can split (1.5 characters a token for random letters and digits, 2 for a DNA sequence). Counted
#: as one token, a 1 MB run (a sequence, an encoded blob) made one passage of 1 MB, which no answer
#: prompt can hold (the merge dropped it as 741,515 tokens), and the document's sentences on either
#: side of it went with it; at 4 characters a token, a window of it was still 1,137 of the language
#: model's tokens, more than the merge's whole budget of 1,000
UNSPLIT_TOKEN_CHARS = 2


def chunk_spans(offsets: list[tuple[int, int]], max_tokens: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of token windows of ``max_tokens`` starting every ``max_tokens - overlap`` tokens."""
    if max_tokens <= 0 or not 0 <= overlap < max_tokens:
        raise ValueError(f"need max_tokens > overlap >= 0, got {max_tokens} and {overlap}")
    spans: list[tuple[int, int]] = []
    step = max_tokens - overlap
    start = 0
    while start < len(offsets):
        end = min(start + max_tokens, len(offsets))
        spans.append((offsets[start][0], offsets[end - 1][1]))
        if end == len(offsets):
            break
        start += step
    return spans


def token_spans(offsets: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The character spans of a text's tokens, a word the tokenizer could not split counted as a
    token every :data:`UNSPLIT_TOKEN_CHARS` characters (see :data:`UNSPLIT_WORD_CHARS`)."""
    spans: list[tuple[int, int]] = []
    for a, b in offsets:
        a, b = int(a), int(b)
        if b - a > UNSPLIT_WORD_CHARS:
            spans += [(i, min(i + UNSPLIT_TOKEN_CHARS, b)) for i in range(a, b, UNSPLIT_TOKEN_CHARS)]
        elif b > a:
            spans.append((a, b))
    return spans


#: a document is tokenized this many characters at a time, cut before a space: in one call, a 23 MB
#: text took 3.5 GB of memory (the tokenizer's lists of ids, masks and offsets for 4 million tokens)
#: and 19 s; in pieces, 1.3 GB and 12 s. A word ends at a space in every tokenizer convrag's models
#: use (WordPiece; the space starts the next piece, as byte-level BPE and SentencePiece read it)
PIECE_CHARS = 1_000_000


def document_spans(text: str, tokenizer: Any, piece_chars: int = PIECE_CHARS) -> list[tuple[int, int]]:
    """The character spans of ``text``'s tokens (:func:`token_spans`), tokenized a piece at a time."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + piece_chars)
        if end < len(text):
            space = max(text.rfind(" ", start + 1, end), text.rfind("\n", start + 1, end))
            end = space if space > start else end  # a piece without a space is cut where it must be
        encoding = tokenizer(text[start:end], add_special_tokens=False, return_offsets_mapping=True,
                             return_attention_mask=False, return_token_type_ids=False, truncation=False, verbose=False)
        spans += [(a + start, b + start) for a, b in token_spans(encoding["offset_mapping"])]
        start = end
    return spans


def sentence_starts(text: str, offsets: Sequence[tuple[int, int]]) -> list[bool]:
    """Whether a passage may begin at each token (and, at index ``len(offsets)``, end after the last):
    at the first, and at a token after a line break or after a sentence's end ("... a day. Lead the
    drain"; "... (see section 8.) The"), not inside a sentence. A full stop followed by a small letter
    ("e.g. the", "approx. 30"), or one that numbers a line ("6. Domestic hot water", "b) ", "3.2. "), ends none."""
    can = [True] * (len(offsets) + 1)
    line = offsets[0][0] if offsets else 0  # where the line of the token before begins
    for i in range(1, len(offsets)):
        end, begin = offsets[i - 1][1], offsets[i][0]
        gap = text[end:begin]
        if "\n" in gap:
            line = begin
            continue
        last = end - 1
        while last > line and text[last] in _CLOSERS:
            last -= 1
        can[i] = bool(gap) and text[last] in _SENTENCE_ENDS and not text[begin].islower() \
            and not (last - line < _NUMBERING_CHARS and _NUMBERING.fullmatch(text, line, last + 1))
    return can


def structured_spans(
    text: str, offsets: Sequence[tuple[int, int]], max_tokens: int, overlap: int, headed: Iterable[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """Character spans of windows of at most ``max_tokens`` tokens, each ending at the last sentence
    or line end in its second half (where the window has one) and the next beginning at the first
    sentence or line start among the ``overlap`` tokens before that end; where a window's text has
    no such place (a table without line breaks, a run-on list), it is cut as :func:`chunk_spans`
    cuts it. Each window begins after the one before, so the spans cover the text in order.
    ``headed``: the spans of the headings' lines; no window ends inside one or right after it (a
    passage closing on the next section's heading, "... judge the result. 6. Domestic hot water")."""
    if max_tokens <= 0 or not 0 <= overlap < max_tokens:
        raise ValueError(f"need max_tokens > overlap >= 0, got {max_tokens} and {overlap}")
    can = sentence_starts(text, offsets)
    token_starts = [a for a, _ in offsets]
    section = [False] * (len(offsets) + 1)  # where a heading's line begins: a section's start
    for begin, end in headed:  # the tokens after the heading's first, to the first after its line
        section[bisect.bisect_left(token_starts, begin)] = True
        for i in range(bisect.bisect_right(token_starts, begin), bisect.bisect_left(token_starts, end) + 1):
            can[i] = False
    section = [s and c for s, c in zip(section, can, strict=True)]  # a heading right under another opens no section of its own
    n = len(offsets)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = min(start + max_tokens, n)
        if end < n:
            half = range(end, start + max_tokens // 2, -1)
            end = next((e for e in half if section[e]), None) or next((e for e in half if can[e]), end)
        spans.append((offsets[start][0], offsets[end - 1][1]))
        if end == n:
            break
        earliest = max(start + 1, end - overlap)
        ahead = range(earliest, end + 1)
        start = next((i for i in ahead if section[i]), None) or next((i for i in ahead if can[i]), earliest)
    return spans


#: the longest heading looked for over two lines
MAX_HEADING_CHARS = 200


def heading_offsets(text: str, headings: Iterable[Heading]) -> list[tuple[int, Heading]]:
    """Where each heading's line begins in ``text``: the first line reading as the heading after the
    one found before it, else the first two lines that do (a PDF's bookmark names a heading its
    narrow column wrapped: "3. Where to place the" "outdoor unit"; not found, the section before
    went on, and titled the passages of the next); a heading nothing reads as (its reader joined it
    otherwise) is skipped."""
    headings = list(headings)
    if not headings:  # plain text, and PDFs without bookmarks: no line to index
        return []
    lines: dict[str, list[int]] = {}
    read: list[tuple[str, int]] = []
    at = 0
    for line in text.split("\n"):
        said = line.strip()
        lines.setdefault(said, []).append(at)
        read.append((said, at))
        at += len(line) + 1
    pairs: dict[str, list[int]] | None = None  # two short lines read as one, indexed at the first heading no line reads as
    found: list[tuple[int, Heading]] = []
    after = 0
    for heading in headings:
        place = _next_place(lines.get(heading.text, []), after)
        if place is None:
            if pairs is None:
                pairs = _line_pairs(read)
            place = _next_place(pairs.get(heading.text, []), after)
        if place is not None:
            found.append((place, heading))
            after = place + 1
    return found


def _next_place(places: list[int], after: int) -> int | None:
    """The first of ``places`` (ascending) at or after ``after``."""
    i = bisect.bisect_left(places, after)
    return places[i] if i < len(places) else None


def _line_pairs(read: list[tuple[str, int]]) -> dict[str, list[int]]:
    """Each two consecutive short lines read as one, where the first begins (``read``: each line,
    stripped, with its offset)."""
    pairs: dict[str, list[int]] = {}
    for (before, where), (said, _) in zip(read, read[1:]):
        if before and said and len(before) + len(said) < MAX_HEADING_CHARS:
            pairs.setdefault(f"{before} {said}", []).append(where)
    return pairs


#: what sets a page's own name apart from its site's in an HTML title ("Hello, Cargo! - The Rust
#: Programming Language", "Pricing | Widgetly")
_TITLE_PARTS = re.compile(r"\s+[-|\u2013\u2014\u00b7:]\s+")


def title_names(title: str) -> frozenset[str]:
    """What a heading may say to repeat ``title`` (:func:`repeats_title`), case and spacing aside."""
    return frozenset({folded(title), *(folded(part) for part in _TITLE_PARTS.split(title))})


def repeats_title(heading: str, title: str) -> bool:
    """Whether ``heading`` says what ``title`` says: the same words, or one part of a title that
    names the site beside the page. A web page's heading is mostly its title without the site's
    name, and every passage of the Rust book was titled "Hello, Cargo! - The Rust Programming
    Language \u203a Hello, Cargo!", the page's name twice in each citation and prompt label."""
    return folded(heading) in title_names(title)


def section_titles(title: str, marks: Sequence[tuple[int, Heading]], spans: Sequence[tuple[int, int]]) -> list[str]:
    """The title of each passage: the document's ``title``, then the headings of the sections the
    passage begins in (``marks``, :func:`heading_offsets`), outermost first ("Owner's Manual \u203a
    9. Fault codes"). A heading the passage opens with is left to its text, as is one that repeats
    the document's title (:func:`repeats_title`)."""
    titles: list[str] = []
    names = title_names(title)  # once a document, not once a passage and heading
    open_: list[tuple[int, Heading]] = []  # the sections open where the last passage began
    k = 0
    for start, _ in spans:
        while k < len(marks) and marks[k][0] <= start:
            where, heading = marks[k]
            while open_ and open_[-1][1].level >= heading.level:
                open_.pop()
            open_.append((where, heading))
            k += 1
        path = [h.text for where, h in open_ if where < start and folded(h.text) not in names]
        titles.append(SECTION_SEPARATOR.join([title, *path]) if title else SECTION_SEPARATOR.join(path))
    return titles


def chunk_document(
    document: Document, tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP,
    structured: bool = True,
) -> list[Passage]:
    """Split a document into overlapping passages; a document without text gives none. ``structured``
    (the default) cuts at sentence and line ends and titles a passage by the sections it begins in;
    ``False`` cuts MT-RAG's plain token windows, titled by the document alone."""
    text = document.text
    if not text.strip():
        return []
    offsets = document_spans(text, tokenizer)
    if not structured:
        spans = chunk_spans(offsets, max_tokens, overlap)
        titles = [document.title] * len(spans)
    else:
        marks = heading_offsets(text, document.headings)
        headed = [(where, where + len(h.text)) for where, h in marks]
        # each file of an archive or a mail is cut on its own: no passage runs from one file into the next
        starts = [a for a, _ in offsets]
        cuts = [0, *(bisect.bisect_left(starts, where) for where, h in marks if h.part and where > 0), len(offsets)]
        spans = [span for first, last in zip(cuts, cuts[1:])
                 for span in structured_spans(text, offsets[first:last], max_tokens, overlap, headed)]
        titles = section_titles(document.title, marks, spans)
    return [
        Passage(doc_id=f"{document.doc_id}-{start}-{end}", text=text[start:end], title=title, url=document.url)
        for (start, end), title in zip(spans, titles, strict=True)
    ]


def chunk_documents(
    documents: Iterable[Document], tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS, overlap: int = DEFAULT_OVERLAP,
    structured: bool = True,
) -> Iterator[Passage]:
    for document in documents:
        yield from chunk_document(document, tokenizer, max_tokens, overlap, structured)
