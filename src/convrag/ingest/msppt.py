"""The text of a PowerPoint 97-2003 deck (.ppt), the binary format before .pptx.

olefile opens the file's container; the rest is read as [MS-PPT] describes it. The ``PowerPoint
Document`` stream is a tree of records (an 8-byte header: version and instance, type, length; a
container's version is 0xF):

* the ``Current User`` stream points at the last edit (a ``UserEditAtom``), whose persist directory
  maps each object's id to its offset in the stream, and which names the document's own record.
  Earlier edits' directories fill in the ids the last one does not list (a fast save appends only
  what changed, and leaves old copies of slides in the stream, which are not read);
* the document's ``SlideListWithText`` lists the slides in their order (instance 0) and their
  notes (instance 2), each by its persist id, and in files PowerPoint wrote, the text of each
  slide's placeholders (title, body) after it;
* a slide's drawing holds its shapes; a shape's text is in its ``ClientTextbox``: a ``TextHeaderAtom``
  saying what kind of text it is (title, body, notes, other), then the characters (UTF-16, or
  8-bit), or a reference to the placeholder text in the slide list;
* a table is a group of shapes, one a cell, placed in the group by their anchors: cells that share
  a top are a row.

A slide reads as its shapes in the order the file draws them, a title a heading; the notes follow.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .msdoc import summary_title

_DOCUMENT, _SLIDE, _NOTES, _SLIDE_ATOM, _NOTES_ATOM = 0x03E8, 0x03EE, 0x03F0, 0x03EF, 0x03F1
_SLIDE_LIST, _SLIDE_PERSIST, _USER_EDIT, _PERSIST_DIRECTORY = 0x0FF0, 0x03F3, 0x0FF5, 0x1772
_TEXT_HEADER, _TEXT_CHARS, _TEXT_BYTES, _OUTLINE_TEXT_REF = 0x0F9F, 0x0FA0, 0x0FA8, 0x0F9E
_GROUP, _SHAPE, _CLIENT_TEXTBOX, _CHILD_ANCHOR = 0xF003, 0xF004, 0xF00D, 0xF00F
_TITLES = {0, 6}  # TextHeaderAtom's kinds: a title, a centred title
#: the most records a deck is walked to: a real deck of hundreds of slides has some tens of thousands
MAX_RECORDS = 2_000_000


class PowerPointFileError(ValueError):
    """A .ppt this reader cannot read, with the reason a user can act on."""


class _Record(NamedTuple):
    at: int  # where its header begins
    container: bool
    instance: int
    type: int
    body: int  # where its body begins
    end: int  # where it ends


@dataclass
class Slide:
    """One slide's lines (a table's row a line of its cells joined by " | "), its title, its notes."""

    lines: list[str] = field(default_factory=list)
    title: str = ""
    notes: list[str] = field(default_factory=list)


class _Stream:
    """The ``PowerPoint Document`` stream, read record by record, with a bound on the records read."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.read = 0

    def record(self, at: int) -> _Record:
        self.read += 1
        if self.read > MAX_RECORDS:
            raise PowerPointFileError(f"it holds more than {MAX_RECORDS:,} records, more than a deck is read to")
        try:
            head, kind, length = struct.unpack_from("<HHI", self.data, at)
        except struct.error:
            raise PowerPointFileError(f"a record at {at} is cut short") from None
        return _Record(at, head & 0xF == 0xF, head >> 4, kind, at + 8, min(at + 8 + length, len(self.data)))

    def children(self, parent: _Record) -> Iterator[_Record]:
        at = parent.body
        while at + 8 <= parent.end:
            child = self.record(at)
            yield child
            at = child.end

    def walk(self, parent: _Record) -> Iterator[_Record]:
        """Every record under ``parent``, in file order (a loop-free walk: each child lies after its parent's header)."""
        stack = [parent]
        while stack:
            record = stack.pop()
            if record is not parent:
                yield record
            if record.container:
                stack.extend(reversed(list(self.children(record))))

    def u32(self, at: int) -> int:
        try:
            return int(struct.unpack_from("<I", self.data, at)[0])
        except struct.error:
            raise PowerPointFileError(f"a record at {at} is cut short") from None

    def text(self, record: _Record) -> str:
        raw = self.data[record.body:record.end]
        # an 8-bit text atom holds each character's low byte, the high one being zero: Latin-1
        return raw.decode("utf-16-le", errors="replace") if record.type == _TEXT_CHARS else raw.decode("latin-1")


def _persist_directory(stream: _Stream, current_user: bytes) -> tuple[dict[int, int], int]:
    """Each persist id's offset, by the chain of edits from the last, and the document's persist id."""
    try:
        edit = struct.unpack_from("<I", current_user, 16)[0]  # offsetToCurrentEdit
    except struct.error:
        raise PowerPointFileError("its Current User stream is cut short") from None
    offsets: dict[int, int] = {}
    document_id = None
    seen: set[int] = set()
    while edit and edit not in seen:  # earlier edits fill in what later ones do not list
        seen.add(edit)
        record = stream.record(edit)
        if record.type != _USER_EDIT:
            raise PowerPointFileError("its last edit is not where the Current User stream says")
        try:
            last_edit, directory_at, doc = struct.unpack_from("<III", stream.data, record.body + 8)
        except struct.error:
            raise PowerPointFileError("its last edit is cut short") from None
        document_id = doc if document_id is None else document_id
        directory = stream.record(directory_at)
        at = directory.body
        while at + 4 <= directory.end:
            word = stream.u32(at)
            start, count = word & 0xFFFFF, word >> 20
            for k in range(count):
                offsets.setdefault(start + k, stream.u32(at + 4 + 4 * k))
            at += 4 + 4 * count
        edit = last_edit
    if document_id is None or document_id not in offsets:
        raise PowerPointFileError("its document record is not in its persist directory")
    return offsets, document_id


def _shape_texts(stream: _Stream, shape: _Record, placeholders: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A shape's texts with their kinds, from its own text box or from the slide list's placeholder texts."""
    found: list[tuple[int, str]] = []
    for box in stream.children(shape):
        if box.type != _CLIENT_TEXTBOX:
            continue
        kind = 4
        for atom in stream.children(box):
            if atom.type == _TEXT_HEADER:
                kind = stream.u32(atom.body)
            elif atom.type in (_TEXT_CHARS, _TEXT_BYTES):
                found.append((kind, stream.text(atom)))
            elif atom.type == _OUTLINE_TEXT_REF:
                index = stream.u32(atom.body)
                if 0 <= index < len(placeholders):
                    found.append(placeholders[index])
    return found


def _lines(text: str) -> list[str]:
    """A text atom's paragraphs (``\\r``) and line breaks (``\\x0b``) as lines; "*" alone is a slide
    number's or a date's field, no text."""
    lines = [" ".join(line.split()) for line in text.replace("\x0b", "\r").split("\r")]
    return [line for line in lines if line and line != "*"]


def _group_lines(stream: _Stream, group: _Record, placeholders: list[tuple[int, str]], slide: Slide) -> list[str]:
    """A group's shapes: a table's cells (shapes whose anchors share a top, in two columns or more) a
    row a line, joined by " | "; any other group's shapes a line each, in the order drawn."""
    cells: list[tuple[int, int, str]] = []
    lines: list[str] = []
    for shape in stream.children(group):
        if shape.type == _GROUP:
            lines += _group_lines(stream, shape, placeholders, slide)
            continue
        if shape.type != _SHAPE:
            continue
        texts = _shape_texts(stream, shape, placeholders)
        anchor = next((child for child in stream.children(shape) if child.type == _CHILD_ANCHOR), None)
        text = " ".join(line for _, body in texts for line in _lines(body))
        if anchor is not None and anchor.end - anchor.body >= 16:
            left, top = struct.unpack_from("<ii", stream.data, anchor.body)
            cells.append((top, left, text))
        else:
            lines += _kept(texts, slide)
    rows: dict[int, list[tuple[int, str]]] = {}
    for top, left, text in cells:
        rows.setdefault(top, []).append((left, text))
    if cells and max(len(row) for row in rows.values()) > 1:
        for top in sorted(rows):
            row = [text for _, text in sorted(rows[top])]
            if any(row):
                lines.append(" | ".join(cell for cell in row if cell))
    else:
        lines += [text for _, _, text in cells if text]
    return lines


def _kept(texts: list[tuple[int, str]], slide: Slide) -> list[str]:
    """A shape's lines; the first title among them names the slide."""
    lines: list[str] = []
    for kind, body in texts:
        found = _lines(body)
        if kind in _TITLES and found and not slide.title:
            slide.title = " ".join(found)
        lines += found
    return lines


def _drawing_lines(stream: _Stream, container: _Record, placeholders: list[tuple[int, str]], slide: Slide) -> list[str]:
    """The lines of a slide's or a notes page's drawing: its shapes, in the order drawn."""
    lines: list[str] = []
    for record in stream.walk(container):
        if record.type == _GROUP:  # the drawing's own group of shapes, whose members are read here
            for shape in stream.children(record):
                if shape.type == _GROUP:
                    lines += _group_lines(stream, shape, placeholders, slide)
                elif shape.type == _SHAPE:
                    lines += _kept(_shape_texts(stream, shape, placeholders), slide)
            break
    return lines


def _slide_lists(stream: _Stream, document: _Record) -> dict[int, list[tuple[int, int, list[tuple[int, str]]]]]:
    """The document's slide lists by instance (0 slides, 2 notes): each entry's persist id, its
    slide id and the placeholder texts that follow it."""
    lists: dict[int, list[tuple[int, int, list[tuple[int, str]]]]] = {}
    for part in stream.children(document):
        if part.type != _SLIDE_LIST:
            continue
        entries = lists.setdefault(part.instance, [])
        kind = 4
        for atom in stream.children(part):
            if atom.type == _SLIDE_PERSIST:
                entries.append((stream.u32(atom.body), stream.u32(atom.body + 12), []))
            elif atom.type == _TEXT_HEADER:
                kind = stream.u32(atom.body)
            elif atom.type in (_TEXT_CHARS, _TEXT_BYTES) and entries:
                entries[-1][2].append((kind, stream.text(atom)))
    return lists


def read_powerpoint97(path: Path) -> tuple[list[Slide], str]:
    """The slides of a .ppt in their order, each with its lines, title and notes, and the deck's
    title from its summary information. Raises :class:`PowerPointFileError` for a file it cannot read."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            if not ole.exists("PowerPoint Document") or not ole.exists("Current User"):
                raise PowerPointFileError("not a PowerPoint deck (no PowerPoint Document stream)")
            stream = _Stream(ole.openstream("PowerPoint Document").read())
            current_user = ole.openstream("Current User").read()
            title = summary_title(ole)
    except (PowerPointFileError, MemoryError):
        raise
    except Exception as exc:  # olefile's "not an OLE2 structured storage file", and what a damaged container raises
        raise PowerPointFileError(f"not a readable PowerPoint 97-2003 file ({exc or type(exc).__name__})") from None
    offsets, document_id = _persist_directory(stream, current_user)
    document = stream.record(offsets[document_id])
    if document.type != _DOCUMENT:
        raise PowerPointFileError("its document record is not a document")
    lists = _slide_lists(stream, document)
    slides: list[Slide] = []
    by_id: dict[int, Slide] = {}
    for persist, slide_id, placeholders in lists.get(0, []):
        if persist not in offsets or (record := stream.record(offsets[persist])).type != _SLIDE:
            continue
        slide = Slide()
        slide.lines = _drawing_lines(stream, record, placeholders, slide)
        slides.append(slide)
        by_id[slide_id] = slide
    for persist, _, placeholders in lists.get(2, []):
        if persist not in offsets or (record := stream.record(offsets[persist])).type != _NOTES:
            continue
        atom = next((child for child in stream.children(record) if child.type == _NOTES_ATOM), None)
        if atom is not None and (slide := by_id.get(stream.u32(atom.body))) is not None:
            slide.notes = _drawing_lines(stream, record, placeholders, Slide(title="notes"))
    return slides, title
