"""Extractive compression: give the model only the sentences of the merged passages that bear on
the question, within a token budget.

On two CPU cores the answer prompt is read at about 70 tokens/s, so every passage sentence that
does not help costs time before the first word appears. Each passage is split into sentences
(pysbd); every sentence is scored by its cosine to the query (the strategy's standalone query, so
that a follow-up like "how much is it?" is scored with its topic); each passage keeps its best
sentence, then the best remaining sentences are added while the budget allows. Kept sentences stay
in passage order, with "…" where sentences were left out, and passages keep their numbers so that
citations still point to them. The best sentence score is also a relevance signal for declining.

A sentence under a section heading is also read under it (:func:`under_headings`), and the better of
its two scores counts: in a staff handbook, "From the eighth day you need a fit note from a doctor."
says nothing of sick leave but for its heading, and alone it scored 0.40 to "Do I need a doctor's note
for sick leave?", under the decline gate's floor, so the turn was declined; read as "3. Sick leave:
From the eighth day ..." it scores 0.77. A heading only adds: a sentence that matches the question by
itself keeps its own score (read under headings only, on the dev half, a cloud answer's best sentence
fell from 0.50 to 0.42 under a heading about something else, and the turn was declined). By the same
rule a sentence that pysbd ran together with the heading line before it ("Refunds Refunds are
available ...") is also read without it (:func:`without_opening_headings`). The prompt shows the
sentence as written (with ``layout``, an option, a kept heading and a table's rows on lines
of their own).

A sentence that only announces what a text goes on to do ("First, let's take a look at the ownership
rules.", "In this chapter, we'll talk about ...") is not kept for the prompt (:func:`announces`): it
shares the question's words and says nothing, and the small model answered "What are its rules?" with
it instead of the rules after it. It still counts for the passage's relevance.

A passage's sentence vectors are computed from that passage alone and kept (:func:`passage_vectors`):
embedding the sentences was most of a turn's work before the model (about 0.4 s for five passages on
two cores), and a conversation's turns, and its users, keep drawing on the same passages.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..embeddings import Embedder
from ..merge.base import MergedResult
from ..merge.budget import token_counter
from ..text import STOP, split_sentences, tidy_spacing


@dataclass(frozen=True)
class CompressionSettings:
    """``max_tokens`` for all passages' kept sentences together, chosen on the dev split: 300 reads
    about 50 tokens (0.2-0.4 s) less before the first answer token than 350 did, at the same overlap
    and support (docs/benchmarks.md, "How the defaults were chosen")."""

    max_tokens: int = 300
    min_sentence_chars: int = 12
    #: also read each sentence under its section heading (:func:`under_headings`)
    headings: bool = True
    #: show a kept heading and a table's rows on lines of their own (:func:`_joined`); off, every kept
    #: sentence is joined by spaces. An option: it mended a handbook chat, but on MT-RAG it changed 8
    #: dev and 11 test answers for the worse on average (docs/benchmarks.md, "Headings and rows on
    #: lines of their own")
    layout: bool = False
    #: a sentence added to fill the budget (beyond each passage's best) must score at least this share
    #: of the turn's best sentence (0: any sentence fills)
    fill_share: float = 0.0


@dataclass(frozen=True)
class CompressedPassage:
    """A passage as the answer prompt shows it: its kept sentences and their best score, and the
    heading that score was read under ("" where the sentence scored better alone, or has none)."""

    result: MergedResult
    text: str
    kept: int
    total: int
    best: float
    heading: str = ""


#: a comment line of a code block ("# Save to a file of your choice", "// the user's id"), which says
#: what the line after it does
_COMMENT = re.compile(r"(?:#|//)\s+\S")


#: a sentence that announces what the text goes on to do, in English: "let's take a look at", "in this
#: chapter, we'll", "we'll discuss"; books and tutorials are full of them, MT-RAG's passages not (one
#: sentence in the contexts of the two halves' sampled turns)
_ANNOUNCING = re.compile(
    r"\blet['’]s (?:take a (?:closer |quick |brief )?look|look at|explore|see how|start|begin|dive|walk through|discuss|review|examine)\b"
    r"|\bin (?:this|the (?:next|following|previous)) (?:chapter|section|article|guide|tutorial|topic|lesson|page|post|video)\b"
    r"[^.]*\b(?:we|you)(?:['’]ll| will)\b"
    r"|\bwe['’]ll (?:discuss|cover|look at|explore|talk about|examine|learn about)\b",
    re.IGNORECASE,
)


def announces(sentence: str) -> bool:
    """Whether ``sentence`` announces what the text goes on to do, and says nothing itself."""
    return _ANNOUNCING.search(sentence) is not None


def sentences(text: str, min_chars: int = 12) -> list[str]:
    """The passage's sentences (fragments shorter than ``min_chars`` are merged into the next, and so is
    a code block's comment line: the comment "# Save to specific filename" scored 0.6 to "How do I
    save the browser's cookies to a file?", the command under it, "playwright-cli state-save
    my-auth-state.json", 0.3, so the prompt showed the comment alone and the model made a command up)."""
    out: list[str] = []
    carry = ""
    for raw in split_sentences(text):
        piece = f"{carry} {raw}".strip()
        if len(piece) < min_chars or _COMMENT.match(raw):
            carry = piece
            continue
        out.append(piece)
        carry = ""
    if carry and out:
        out[-1] = f"{out[-1]} {carry}"
    elif carry:
        out.append(carry)
    return out


#: a "sentence" of more of the model's tokens than this (a passage without sentence ends: a table, a
#: list, text run together) is scored and shown in pieces of :data:`PIECE_WORDS` words. Kept whole as
#: its passage's best sentence, a run-on passage of 2,878 tokens made a prompt that took 35 s to read,
#: and a longer one would not fit the model's context. Above the longest MT-RAG passage (885 tokens),
#: so the benchmarks' prompts are as they were
LONGEST_SENTENCE_TOKENS = 1000
PIECE_WORDS = 60


def in_pieces(parts: Sequence[str], count_tokens: Callable[[str], int]) -> list[str]:
    """``parts`` with each one longer than :data:`LONGEST_SENTENCE_TOKENS` cut into pieces of
    :data:`PIECE_WORDS` words, so that the one that bears on the question can be kept alone."""
    out: list[str] = []
    for part in parts:
        if count_tokens(part) <= LONGEST_SENTENCE_TOKENS:
            out.append(part)
            continue
        words = part.split()
        out += [" ".join(words[i : i + PIECE_WORDS]) for i in range(0, len(words), PIECE_WORDS)]
    return out


#: passages whose sentence vectors are kept (a few MB: about 10 sentences x 384 floats each)
KEPT_PASSAGES = 4096
_kept: OrderedDict[tuple[str, int, tuple[str, ...]], np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()


def passage_vectors(embedder: Embedder, parts: Sequence[str]) -> np.ndarray:
    """The vectors of one passage's sentences, embedded as one batch of that passage's alone, so that
    they never depend on which other passages, or which query, a turn brought (the same passage is
    compressed the same way in every turn, thread and run), and kept for the next turn that shows
    it (the last :data:`KEPT_PASSAGES` passages)."""
    key = (embedder.name, id(embedder.model), tuple(parts))
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    vectors = embedder.encode(list(parts))
    with _kept_lock:
        _kept[key] = vectors
        while len(_kept) > KEPT_PASSAGES:
            _kept.popitem(last=False)
    return vectors


#: a heading is a line of at most this many words and characters, that starts with a capital or a
#: number ("3. Sick leave", "Hotel rates"), ends without a sentence's punctuation or a stop word (a
#: line wrapped mid-sentence, "The committee met on", most often does) and holds no sign of a list, a
#: table row or code
HEADING_MAX_WORDS = 10
HEADING_MAX_CHARS = 80
_NOT_HEADING = re.compile(r"[{}=<>`$\\|;]")
#: ... and the next line that is not blank is prose of at least this many words, starting a sentence
#: (a title over a heading, or one item of a list, heads nothing)
PROSE_MIN_WORDS = 5


def _heading_like(line: str) -> bool:
    words = line.split()
    return (0 < len(line) <= HEADING_MAX_CHARS and len(words) <= HEADING_MAX_WORDS and (line[0].isupper() or line[0].isdigit())
            and line[-1] not in ".!?,;:" and not _NOT_HEADING.search(line) and any(ch.isalpha() for ch in line)
            and words[-1].lower() not in STOP)


def headings(text: str) -> list[tuple[int, str]]:
    """The lines of ``text`` that head a section, with their character offsets. A line counts only
    where a section can start: after a sentence's end or another short line. A PDF's line wrapped
    mid-sentence follows a full line that ends without a stop, so it heads nothing. Nor does a
    passage's first line: it is most often its document's title (every MT-RAG Wikipedia passage
    begins with its article's), which raises all the passage's sentences alike, so it tells none of
    them apart and only makes an on-topic question the passages cannot answer look answered (on the
    dev half, the gate's separation of unanswerable turns fell from an ROC AUC of 0.666 to 0.642 on
    Wikipedia with titles as headings)."""
    lines: list[tuple[int, str]] = []  # the lines that are not blank, with the offsets their text starts at
    start = 0
    for raw in text.split("\n"):
        if raw.strip():
            lines.append((start + len(raw) - len(raw.lstrip()), raw.strip()))
        start += len(raw) + 1
    found: list[tuple[int, str]] = []
    for (_, before), (at, line), (_, after) in zip(lines, lines[1:], lines[2:]):
        if (_heading_like(line) and len(after.split()) >= PROSE_MIN_WORDS and (after[0].isupper() or after[0].isdigit())
                and (before[-1] in ".!?:" or _heading_like(before))):
            found.append((at, line))
    return found


def _starts(text: str, parts: Sequence[str]) -> list[int | None]:
    """Where each of ``parts`` (``text``'s sentences, in order) starts in ``text``; None where one is
    not found as written (never expected)."""
    out: list[int | None] = []
    at = 0
    for part in parts:
        first = part.split()[:3]
        found = re.compile(r"\s+".join(map(re.escape, first))).search(text, at) if first else None
        if found is not None:
            at = found.start()
        out.append(None if found is None else at)
    return out


def heading_readings(text: str, parts: Sequence[str]) -> tuple[list[str], list[str]]:
    """``parts`` (``text``'s sentences, in order) as they are also scored: under the heading of their
    section (:func:`under_headings`), and without the heading they open with
    (:func:`without_opening_headings`). The passage's headings and where each sentence starts are
    found once for both: each turn reads its passages this way, for the compression and again for
    the decline gate."""
    heads = headings(text)
    if not heads:
        return list(parts), list(parts)
    starts = _starts(text, parts)
    under: list[str] = []
    for part, at in zip(parts, starts):
        over = [line for start, line in heads if at is not None and start < at]
        under.append(f"{over[-1]}: {part}" if over and not any(start == at for start, _ in heads) else part)
    bodies = [(part[len(heading) :].strip() if heading else "") or part for part, heading in zip(parts, _opened(heads, starts, parts))]
    return under, bodies


def under_headings(text: str, parts: Sequence[str]) -> list[str]:
    """``parts`` (``text``'s sentences, in order) as they are scored: each one after the heading of
    its section ("3. Sick leave: From the eighth day ..."); a heading, and a sentence before any, as
    they are."""
    return heading_readings(text, parts)[0]


def without_opening_headings(text: str, parts: Sequence[str]) -> list[str]:
    """``parts`` (``text``'s sentences, in order) each without the heading it opens with, where a
    sentence follows it: pysbd runs a heading line with no stop into the sentence after it
    ("Refunds Refunds are available within 30 days ..."), and so read, that sentence scored 0.435 to
    "Can I get a refund on the Starter and Team?", under the decline gate's floor, where alone it
    scores 0.461. A heading alone, and a sentence that opens with none, stay as they are."""
    return heading_readings(text, parts)[1]


def _opened(heads: Sequence[tuple[int, str]], starts: Sequence[int | None], parts: Sequence[str]) -> list[str]:
    """The heading each of ``parts`` opens with ("" for none), from the passage's headings and where each part starts."""
    by_start = dict(heads)
    opened = [by_start.get(at, "") if at is not None else "" for at in starts]
    return [heading if part.startswith(heading) else "" for part, heading in zip(parts, opened)]


def opening_headings(text: str, parts: Sequence[str]) -> list[str]:
    """The heading each of ``parts`` opens with ("" for none): a heading shown run into the sentence
    after it ("… 2. Annual leave Full-time staff get 25 days ...") misled the small model, which
    answered "How many days of annual leave do I get?" with a later sentence of the section; shown on
    its own line it answered "25 days"."""
    return _opened(headings(text), _starts(text, parts), parts)


#: a table's row as convrag's readers write it ("Item: Mileage | Limit: 45p a mile | Receipt needed: No")
_ROW = " | "


def _joined(pieces: Sequence[tuple[str, str]]) -> str:
    """A passage's kept sentences (and "…" marks), each heading (:func:`opening_headings`) and each
    table row on a line of its own, the rest joined by spaces. Run together, "... Receipt needed: Over
    £10 Item: Mileage | Limit: 45p a mile | Receipt needed: No" left the small model to guess which row
    a cell belongs to."""
    out = ""
    line_after = False  # the last piece ends its line: a heading alone, or a row
    for text, heading in pieces:
        rest = text[len(heading) :].strip() if heading else text
        body = f"{heading}\n{rest}" if heading and rest else text
        own_line = bool(heading) or _ROW in text
        out = f"{out}{chr(10) if own_line or line_after else ' '}{body}" if out else body
        line_after = (bool(heading) and not rest) or _ROW in rest
    return out


class Readings(NamedTuple):
    """A passage's sentences as the prompt shows them, and the other ways each is read for its score:
    under its section heading (:func:`under_headings`) and without the heading it opens with
    (:func:`without_opening_headings`); each the same list as ``shown`` where it changes nothing."""

    shown: list[str]
    headed: list[str]
    bodies: list[str]


def _split(results: Sequence[MergedResult], count_tokens: Callable[[str], int], settings: CompressionSettings) -> list[Readings]:
    """Each passage's sentences as compression shows them and as it reads them for their scores."""
    shown = [in_pieces(sentences(r.hit.text, settings.min_sentence_chars) or [r.hit.text], count_tokens) for r in results]
    if not settings.headings:
        return [Readings(parts, parts, parts) for parts in shown]
    return [Readings(parts, *heading_readings(r.hit.text, parts)) for r, parts in zip(results, shown)]


class Scores(NamedTuple):
    """A passage's sentences' cosines to the query: as shown, under their heading, and the best of
    those and of the sentence read without the heading it opens with (the score that counts)."""

    alone: np.ndarray
    headed: np.ndarray
    best: np.ndarray


def sentence_scores(embedder: Embedder, readings: Readings, asked: np.ndarray) -> Scores:
    """Each of a passage's sentences' cosines to the query vector ``asked``, read each way; a reading
    that changes no sentence is not embedded again."""
    alone = passage_vectors(embedder, readings.shown) @ asked
    headed = alone if readings.headed == readings.shown else passage_vectors(embedder, readings.headed) @ asked
    body = alone if readings.bodies == readings.shown else passage_vectors(embedder, readings.bodies) @ asked
    return Scores(alone, headed, np.maximum(np.maximum(alone, headed), body))


def best_score(query: str, results: Sequence[MergedResult], embedder: Embedder,
               count_tokens: Callable[[str], int], settings: CompressionSettings = CompressionSettings()) -> float:
    """The best score of any sentence of ``results`` for ``query``, as :func:`compress` scores them
    (its sentence vectors are kept, so only the query is embedded)."""
    split = _split(results, token_counter(count_tokens), settings)
    asked = embedder.encode([query])[0]
    return max((float(np.max(sentence_scores(embedder, readings, asked).best)) for readings in split if readings.shown), default=0.0)


def compress(
    query: str,
    results: Sequence[MergedResult],
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    settings: CompressionSettings = CompressionSettings(),
) -> list[CompressedPassage]:
    """Every passage with the sentences worth showing for ``query`` (see the module docstring)."""
    count_tokens = token_counter(count_tokens)  # memoized: each sentence is counted by in_pieces, then for its cost
    readings = _split(results, count_tokens, settings)
    split = [r.shown for r in readings]
    flat = [(p, i, s) for p, parts in enumerate(split) for i, s in enumerate(parts)]
    if not flat:
        return []
    for read in readings:  # the passages' sentences first (or found kept), then the query
        for parts in dict.fromkeys(map(tuple, read)):
            passage_vectors(embedder, list(parts))
    asked = embedder.encode([query])[0]
    # scored passage by passage: one product over all passages' sentences gave a passage's scores other
    # last bits beside other passages (BLAS splits a matrix of 8 rows otherwise than one of 3; on an
    # AVX-512 Xeon, not on the AVX2 EPYC), so its sentences could rank otherwise with other company
    blocks = [sentence_scores(embedder, read, asked) for read in readings]
    alone, headed, scores = (np.concatenate(list(column)) for column in zip(*blocks))
    cost = [count_tokens(s) for _, _, s in flat]
    keep: set[int] = set()
    used = 0
    announcing = [announces(s) for _, _, s in flat]  # last in line: kept only where its passage has nothing else
    order = np.argsort(-np.where(announcing, -np.inf, scores), kind="stable")
    best_of: dict[int, int] = {}
    for j in order:  # each passage's best sentence first, so that every passage keeps something
        best_of.setdefault(flat[j][0], int(j))
    for j in sorted(best_of.values(), key=lambda j: -scores[j]):
        keep.add(j)
        used += cost[j]
    floor = settings.fill_share * float(scores.max())
    for j in order:
        if int(j) not in keep and used + cost[j] <= settings.max_tokens and scores[j] >= floor and not announcing[j]:
            keep.add(int(j))
            used += cost[j]
    out: list[CompressedPassage] = []
    for p, r in enumerate(results):
        rows = [j for j, (q, _, _) in enumerate(flat) if q == p]
        opens = opening_headings(r.hit.text, split[p]) if settings.layout else [""] * len(split[p])
        pieces: list[tuple[str, str]] = []
        previous = -2
        for j in rows:
            if j in keep:
                if previous != -2 and j != previous + 1:
                    pieces.append(("…", ""))
                pieces.append((flat[j][2], opens[flat[j][1]]))
                previous = j
        if rows and rows[-1] not in keep:
            pieces.append(("…", ""))
        if rows and rows[0] not in keep:
            pieces.insert(0, ("…", ""))
        top = max(rows, key=lambda j: scores[j]) if rows else None
        best = float(scores[top]) if top is not None else 0.0
        heading = ""
        if top is not None and scores[top] == headed[top] > alone[top]:  # read under its heading: "<heading>: <sentence>"
            _, i, sentence = flat[top]
            heading = readings[p].headed[i][: -len(sentence) - 2]
        # shown tidied (clapnq's Treebank spacing), scored and budgeted as stored
        text = _joined(pieces) if settings.layout else " ".join(piece for piece, _ in pieces)
        out.append(CompressedPassage(r, tidy_spacing(text), sum(j in keep for j in rows), len(rows), best, heading))
    return out
