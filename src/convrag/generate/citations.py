"""Citations in an answer: the [n] markers, the passages they name, and whether a passage holds
the sentence that cites it.

One word-overlap test decides support everywhere: the answer generator uses it to add a citation
to an uncited sentence copied from a passage (:func:`infer_citations`) and to move a number to the
passage that holds the sentence (:func:`repoint_citations`); the answer evaluation
(:mod:`convrag.eval.answers`) judges citations with it. Because the same test places inferred and
re-pointed numbers, the evaluation also reports support over the model's own numbers alone.

A sentence is what :func:`answer_sentences` returns: the unit a reader sees a marker attached to.
It ends at end punctuation and a space where the passages' segmentation (pysbd,
:func:`convrag.text.sentence_pieces`) ends one too, so that an abbreviation does not end it:
splitting at every full stop before a space had turned an inferred citation into "by Dr [1]. Jonas
Salk" and made "E." a sentence of an answer about E. E. Cummings. Markers that open a sentence ("It is free. [1] It
...") belong to the sentence before, where the reader sees them. Each sentence keeps the white space
that followed it (:class:`Sentence`), so that an answer a repair puts together again
(:func:`join_answer`) keeps its paragraphs and the lines of its lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ..merge.base import MergedResult
from ..text import content_stems, sentence_pieces

#: share of a sentence's content words its passage must hold to support it
SUPPORT = 0.5
#: sentences with fewer content words than this are left alone: too little to match on
MIN_WORDS = 4

_CITATION = re.compile(r"\[(\d{1,3})\]")
#: code, as Markdown marks it (a fenced block, or an inline span as the web chat renders one): an
#: index in it ("`sys.argv[1]`") is no citation, and re-pointing one rewrote the code
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`]+`", re.DOTALL)
_LEADING_MARKERS = re.compile(r"^(?:\[\d{1,3}\]\s*)+")
#: numbers cited together in one bracket ("[1, 2]", "[1; 3]", "[2-4]"), as larger models (an OpenAI or
#: Anthropic backend) write them: not [n] markers, they stayed in the answer as text, citing nothing
_GROUPED = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})+|\d{1,3}\s*[-\u2013]\s*\d{1,3})\]")
#: the longest range made markers: "[1-400]" is no citation
MAX_RANGE = 10
#: end punctuation, any closing quotes or bracket, then the space that may end a sentence (group 1)
_BREAK = re.compile(r"[.!?][\"'\u201d\u2019)]*(\s+)")


class Citation(NamedTuple):
    """A cited passage: its number in the answer, and where it came from."""

    number: int
    collection: str
    passage_id: str
    document_id: str
    title: str
    url: str
    inferred: bool = False  # added by matching the answer's wording to the passage, not written by the model


class Sentence(NamedTuple):
    """A sentence of an answer and the white space that followed it: a space, or the line break of
    a list or a paragraph, which the answer keeps when it is put together again."""

    text: str
    gap: str = ""


def split_answer(text: str) -> list[Sentence]:
    """The answer's sentences, markers kept with the sentence they end, each with the white space
    after it (``[Sentence("")]`` for a blank text).

    A sentence ends where end punctuation is followed by a space *and* pysbd ends one there. The
    first rule alone split abbreviations; pysbd alone also splits at a line break or a list item,
    and the repairs that put the sentences together again would then change a Markdown list."""
    text = text.strip()
    starts, at = set(), 0
    for piece in sentence_pieces(text):
        starts.add(at)
        at += len(piece)
    agreed = at == len(text)  # else pysbd changed the text somewhere: the punctuation rule alone
    parts: list[tuple[str, str]] = []
    begin = 0
    for end in _BREAK.finditer(text):
        space, after = end.span(1)
        if not agreed or any(space <= start <= after for start in starts):
            parts.append((text[begin:space], text[space:after]))
            begin = after
    parts.append((text[begin:], ""))
    sentences: list[Sentence] = []
    for part, gap in parts:
        markers = _LEADING_MARKERS.match(part)
        if markers and sentences:
            before = sentences[-1]
            # the markers join the sentence before; of the breaks around them the one with more
            # line breaks stays ("It is free.\n\n[1] It ..." keeps its paragraph)
            rest = markers.group()
            spaces = rest[len(rest.rstrip()):]
            kept = max((before.gap, spaces), key=lambda g: g.count("\n"))
            sentences[-1] = Sentence(f"{before.text} {rest.strip()}", kept)
            part = part[markers.end():]
        if part:
            sentences.append(Sentence(part, gap))
    return sentences or [Sentence("")]


def answer_sentences(text: str) -> list[str]:
    """The answer's sentences as :func:`split_answer` finds them, without the space between."""
    return [s.text for s in split_answer(text)]


def join_answer(sentences: Iterable[Sentence]) -> str:
    """Sentences put together again, each followed by its own white space (the last by none)."""
    return "".join(s.text + s.gap for s in sentences).rstrip()


def _markers(text: str) -> list[re.Match[str]]:
    """The [n] citation markers of ``text``, those inside code left out."""
    found = list(_CITATION.finditer(text))
    if not found or "`" not in text:
        return found
    code = [m.span() for m in _CODE.finditer(text)]
    return [m for m in found if not any(start <= m.start() < end for start, end in code)]


def _replace_markers(text: str, by: str) -> str:
    out, at = [], 0
    for m in _markers(text):
        out += [text[at:m.start()], by]
        at = m.end()
    return "".join(out) + text[at:]


def _keep_markers(text: str, numbers: set[int]) -> str:
    """``text`` without its markers of other numbers than ``numbers`` (and the space before each)."""
    out, at = [], 0
    for m in _markers(text):
        if int(m.group(1)) not in numbers:
            out.append(text[at:m.start()].rstrip(" "))
            at = m.end()
    return "".join(out) + text[at:]


def written_numbers(text: str) -> list[int]:
    """The numbers of the [n] markers in ``text``, in order, repeats kept."""
    return [int(m.group(1)) for m in _markers(text)]


def separate_markers(text: str) -> tuple[str, list[str]]:
    """``text`` with numbers cited together made a marker each ("[1, 2]" -> "[1][2]", "[2-4]" ->
    "[2][3][4]"), outside code, and the groups so made. A range longer than :data:`MAX_RANGE`, or
    one that counts down, is left as it is."""
    if "[" not in text:
        return text, []
    code = [m.span() for m in _CODE.finditer(text)] if "`" in text else []
    out, at, groups = [], 0, []
    for m in _GROUPED.finditer(text):
        if any(start <= m.start() < end for start, end in code):
            continue
        inside = m.group(1)
        if "," in inside or ";" in inside:
            numbers = [int(n) for n in re.split(r"\s*[,;]\s*", inside)]
        else:
            first, last = (int(n) for n in re.split(r"\s*[-\u2013]\s*", inside))
            if not first <= last < first + MAX_RANGE:
                continue
            numbers = list(range(first, last + 1))
        out += [text[at:m.start()], "".join(f"[{n}]" for n in numbers)]
        at = m.end()
        groups.append(m.group())
    return "".join(out) + text[at:], groups


def has_citation(text: str) -> bool:
    return bool(_markers(text))


def strip_citations(text: str) -> str:
    return _replace_markers(text, "")


def support(words: set[str], passage: set[str]) -> float:
    """Share of a sentence's content stems found in a passage's (1.0 for a sentence without any)."""
    return len(words & passage) / len(words) if words else 1.0


def supported(sentence: str, passage: str, share: float = SUPPORT) -> bool:
    """Whether at least ``share`` of the sentence's content words (markers aside) occur in the passage.
    A sentence without content words ("[1]", "It is [2].") is supported by nothing: a citation there
    claims nothing a passage could hold, and counting it as supported would only flatter the figure."""
    words = content_stems(strip_citations(sentence))
    return bool(words) and support(words, content_stems(passage)) >= share


def parse_citations(text: str, results: Sequence[MergedResult]) -> tuple[list[Citation], list[int]]:
    """Citations in order of first mention, and the numbers that matched no passage."""
    cited: list[Citation] = []
    invalid: list[int] = []
    for n in dict.fromkeys(written_numbers(text)):
        if 1 <= n <= len(results):
            h = results[n - 1].hit
            cited.append(Citation(n, h.collection, h.passage_id, h.document_id, h.title, h.url))
        else:
            invalid.append(n)
    return cited, invalid


def infer_citations(text: str, results: Sequence[MergedResult], min_overlap: float = SUPPORT) -> tuple[str, list[int]]:
    """Small models often answer from a passage without citing it. Each uncited sentence whose
    content words come mostly (>= ``min_overlap``) from one passage gets that passage's number.
    Returns the text with the added markers and the numbers added."""
    stems = [content_stems(r.hit.text) for r in results]
    out: list[Sentence] = []
    added: list[int] = []
    for said in split_answer(text):
        sentence = said.text
        words = content_stems(sentence)
        if has_citation(sentence) or len(words) < MIN_WORDS:
            out.append(said)
            continue
        scores = [support(words, s) for s in stems]
        best = max(range(len(scores)), key=scores.__getitem__) if scores else -1
        if best >= 0 and scores[best] >= min_overlap:
            n = best + 1
            added.append(n)
            stripped = sentence.rstrip()
            if stripped.endswith("```"):  # a closing fence is a line of its own: the marker goes under it
                said = said._replace(text=f"{stripped}\n[{n}]")
            else:
                end = stripped[-1] if stripped and stripped[-1] in ".!?" else ""
                said = said._replace(text=f"{stripped[: len(stripped) - len(end)]} [{n}]{end}")
        out.append(said)
    return join_answer(out), list(dict.fromkeys(added))


def repoint_citations(text: str, results: Sequence[MergedResult], min_overlap: float = SUPPORT) -> tuple[str, list[dict[str, Any]]]:
    """A small model made to cite picks a number, not always the right one (on the dev split, 40 %
    of its citations pointed to a passage that does not hold most of the sentence's words). A
    sentence none of whose cited passages holds at least ``min_overlap`` of its content words, while
    another passage does, is re-pointed to the passage that holds most; a sentence no passage
    supports keeps the model's number. A number that names no passage ("[7]" of five) is a wrong
    number too: re-pointed where a passage holds the sentence, else taken out, as a reader could
    follow it nowhere. Returns the text and the re-pointings made."""
    stems = [content_stems(r.hit.text) for r in results]
    out: list[Sentence] = []
    moved: list[dict[str, Any]] = []
    for i, said in enumerate(split_answer(text)):
        sentence = said.text
        numbers = written_numbers(sentence)
        written = [n for n in numbers if 1 <= n <= len(results)]
        words = content_stems(strip_citations(sentence))
        best = None
        if numbers and len(words) >= MIN_WORDS and not any(support(words, stems[n - 1]) >= min_overlap for n in written):
            scores = [support(words, passage) for passage in stems]
            top = max(range(len(scores)), key=scores.__getitem__) if scores else -1
            best = top + 1 if top >= 0 and scores[top] >= min_overlap else None
        elif numbers and words and not written:
            # a short sentence whose only numbers name no passage ("Every six months [8]." after "8.
            # Care and maintenance"): too few words to choose among passages by, unless one passage
            # alone holds them; then it is that passage's, and was taken out as uncited before
            holders = [n for n, passage in enumerate(stems, start=1) if support(words, passage) >= min_overlap]
            best = holders[0] if len(holders) == 1 else None
        if best is not None:
            moved.append({"sentence": i, "written": list(dict.fromkeys(numbers)), "to": best})
            replaced = _replace_markers(sentence, "\x00")
            replaced = re.sub(r"(\s*\x00)+", f" [{best}]", replaced, count=1).replace("\x00", "")
            sentence = re.sub(r"\s+\[", " [", replaced)
        elif len(written) < len(numbers):  # the numbers that name no passage go, the others stay
            sentence = _keep_markers(sentence, set(written))
        out.append(said._replace(text=sentence))
    return join_answer(out), moved
