"""Word documents: .docx (python-docx, read in reading order with tables, text boxes, headings from
the styles, and pictures standing for text read by OCR) and Word 97-2003's .doc (:mod:`.msdoc`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DataFormatError
from .formats import Heading
from .packages import check_unpacked_size
from .pictures import PICTURE_MARK, opened_for_ocr, pictures_to_read, read_by_ocr, with_pictures_read
from .tables import table_lines
from .titles import first_heading, own_title
from .typesetting import typeset_letters


def docx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a Word document in reading order, one line per paragraph (a table row's cells
    joined by " | "), then its footnotes and endnotes, and its title: the document's own, else its
    first Title or Heading 1 paragraph. Headers, footers and comments are left out, as a page's
    navigation is. The package is opened by python-docx; its XML is read here (:func:`_word_lines`),
    as python-docx's paragraphs hold only plain runs and links: a tracked insertion's text ("costs
    [40] dollars"), a content control's (a template's cover page, a form's fields) and a text box's
    were lost. A package python-docx fails on in any way is a :class:`DataFormatError`, as for a
    PDF: half of the packages made by changing a few bytes of a good one's XML (as a save cut short
    leaves it) raised lxml's or python-docx's own errors."""
    from zipfile import BadZipFile

    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.exceptions import PackageNotFoundError
    from lxml import etree

    from . import ocr

    check_unpacked_size(path)
    try:
        document = _word_document(path)
        levels = {style.style_id: word_level(style.name) for style in document.styles}
        headings = {style for style, level in levels.items() if level is not None and level <= 1}
        header_styles = _header_row_styles(document)
        lines = list(_word_lines(document.element.body, header_styles))
        for rel in document.part.rels.values():  # the notes, after the text they are called from
            if not rel.is_external and rel.reltype in (RELATIONSHIP_TYPE.FOOTNOTES, RELATIONSHIP_TYPE.ENDNOTES):
                notes = etree.fromstring(rel.target_part.blob)
                for note in notes:
                    if note.get(f"{_W}type") in (None, "normal"):  # not the separator lines Word keeps there
                        lines += _word_lines(note, header_styles)
        heading = next((line for style, line in lines if line and style in headings), "")
        title = (document.core_properties.title or "").strip()
        parts = document.part.related_parts
        pictures = pictures_to_read(lines, _word_text_area(document), lambda rid: parts[rid].blob if rid in parts else None)
    except (PackageNotFoundError, BadZipFile):
        raise DataFormatError(path, "not a readable Word document (not a .docx package; an old Word 97-2003 file is read as .doc)") from None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged part: lxml's XMLSyntaxError, or python-docx's AttributeError on a wrong one
        raise DataFormatError(path, f"not a readable Word document ({exc or type(exc).__name__})") from None
    marked = tuple(Heading(level, line) for style, line in lines if line and (level := levels.get(style)) is not None)
    if pictures and ocr.available():  # scanned pages put into Word, alone or among its text
        read = iter(read_by_ocr(path, [functools.partial(opened_for_ocr, blob) for blob in pictures.values()]))
        lines = with_pictures_read(lines, {place: next(read) for place in pictures})
    text = "\n".join(line for _, line in lines if line)
    return typeset_letters(text), typeset_letters(own_title(title) or heading), marked


#: the main part of Word's other packages: macro-enabled (.docm), a template (.dotx, .dotm)
_WORD_MAIN_TYPES = ("application/vnd.ms-word.document.macroEnabled.main+xml",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
                    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml")


def _word_document(path: Path) -> Any:
    """A Word package opened by python-docx: a document (.docx), and a macro-enabled one or a template
    (.docm, .dotx, .dotm), which ``docx.Document`` refuses by its main part's content type though
    the part is a document's all the same; they are registered as one in python-docx's part
    registry. Another main part is a ValueError."""
    from docx.opc.part import PartFactory
    from docx.package import Package
    from docx.parts.document import DocumentPart

    for content_type in _WORD_MAIN_TYPES:
        PartFactory.part_type_for.setdefault(content_type, DocumentPart)
    part = Package.open(str(path)).main_document_part
    if not isinstance(part, DocumentPart):
        raise ValueError(f"its main part ({part.content_type}) is no document")
    return part.document


def _word_text_area(document: Any) -> int:
    """The area (square EMU) of the text on a page of the document's last section: the page less its
    margins; Letter with 1-inch margins where the file says nothing (a document may have no section
    properties at all)."""
    inch = 914400
    sections = document.sections
    section = sections[-1] if len(sections) else None
    sizes = [getattr(section, name, None) for name in ("page_width", "left_margin", "right_margin",
                                                         "page_height", "top_margin", "bottom_margin")]
    width, left, right, height, top, bottom = (size if isinstance(size, int) else default for size, default
                                               in zip(sizes, (8.5 * inch, inch, inch, 11 * inch, inch, inch)))
    return max(int(width - left - right), inch) * max(int(height - top - bottom), inch)


_WORD_HEADING = re.compile(r"heading ([1-9])", re.IGNORECASE)


def word_level(style_name: str | None) -> int | None:
    """The level of a Word paragraph style that marks a heading ("Heading 2": 2, "Title": 0), else None.
    Word writes the built-in names in English whatever the language it shows them in."""
    if not style_name:
        return None
    if style_name.lower() == "title":
        return 0
    found = _WORD_HEADING.fullmatch(style_name.strip())
    return int(found[1]) if found else None


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: DrawingML's (a picture's ``a:blip``) and the package relationships' (its ``r:embed``) namespaces
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
#: a drawing's place in a Word document (its ``wp:extent``, the size it is shown at)
_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
#: a drawing's copy for older readers (VML, beside its DrawingML choice): the same text box again
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
#: what a paragraph holds that is no text of it: its and its runs' properties (a tab stop is a
#: ``w:tab`` there), and a moved passage's old place (its text is at the new one)
_NOT_TEXT = frozenset({f"{_W}pPr", f"{_W}rPr", f"{_W}moveFrom", _MC_FALLBACK})
#: characters a run writes as elements
_RUN_CHARACTERS = {f"{_W}tab": " ", f"{_W}br": " ", f"{_W}cr": " ", f"{_W}noBreakHyphen": "-"}


def _emu(value: str | None) -> int:
    """A size in EMU as the file writes it; 0 where it is missing or no number."""
    try:
        return max(int(value or 0), 0)
    except ValueError:
        return 0


def _header_row_styles(document: Any) -> frozenset[str]:
    """The ids of the table styles that format a table's first row apart (a ``firstRow`` part, their
    own or one they are based on): Word's table designs ("Grid Table 4", "Light Grid") show it as the
    headings. "Table Grid", Word's plain default, does not."""
    styles = {style.get(f"{_W}styleId"): style for style in document.styles.element.findall(f"{_W}style")
              if style.get(f"{_W}type") == "table"}
    found = set()
    for origin, style in styles.items():
        style_id, seen = origin, set()
        while style is not None and style_id not in seen:  # its own parts, then those of the styles it is based on
            seen.add(style_id)
            if any(part.get(f"{_W}type") == "firstRow" for part in style.findall(f"{_W}tblStylePr")):
                found.add(origin)
                break
            based = style.find(f"{_W}basedOn")
            style_id = based.get(f"{_W}val", "") if based is not None else ""
            style = styles.get(style_id)
    return frozenset(found)


def _styled_header_row(table: Any, header_styles: frozenset[str]) -> bool:
    """Whether a table's style sets its first row apart and its "Header Row" option is on (``tblLook``:
    ``firstRow``, or bit 0x0020 of the older hexadecimal ``val``)."""
    style = table.find(f"{_W}tblPr/{_W}tblStyle")
    if style is None or style.get(f"{_W}val") not in header_styles:
        return False
    look = table.find(f"{_W}tblPr/{_W}tblLook")
    if look is None:
        return False
    if (first := look.get(f"{_W}firstRow")) is not None:
        return first in ("1", "true", "on")
    try:
        return bool(int(look.get(f"{_W}val", "0"), 16) & 0x0020)
    except ValueError:
        return False


def _word_lines(parent: Any, header_styles: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """``(style id, line)`` for each paragraph under a body (or a table cell, a content control, a
    note), in reading order; a table's row is one line of its cells (a cell merged down the rows
    repeats in each, as python-docx read it, so a row keeps its label); a text box's paragraphs
    follow the paragraph they are anchored in. ``header_styles``: the table styles that set their first
    row apart (:func:`_header_row_styles`)."""
    for child in parent:
        if child.tag == f"{_W}p":
            pieces: list[str] = []
            boxes: list[Any] = []
            _paragraph_pieces(child, pieces, boxes)
            style = child.find(f"{_W}pPr/{_W}pStyle")
            yield (style.get(f"{_W}val", "") if style is not None else ""), " ".join("".join(pieces).split())
            for box in boxes:
                yield from _word_lines(box, header_styles)
            for drawing in child.iter(f"{_W}drawing"):  # an empty line that marks where a picture is, and its size
                blip, extent = drawing.find(f".//{_A}blip"), drawing.find(f".//{_WP}extent")
                if blip is not None and blip.get(f"{_R}embed") and extent is not None:
                    area = _emu(extent.get("cx")) * _emu(extent.get("cy"))
                    yield f"{PICTURE_MARK}{blip.get(f'{_R}embed')} {area}", ""
        elif child.tag == f"{_W}tbl":
            above: dict[int, str] = {}  # a column's last cell text, for the cells merged into it
            rows: list[list[str]] = []
            # whether the first row is marked as the table's heading: repeated atop each page, or set apart
            # by the table's style with its "Header Row" option on (Word's table designs show it so)
            marked = _styled_header_row(child, header_styles)
            pictures: list[tuple[str, str]] = []  # the marks of the pictures in its cells, after the table
            for row in _wrapped_children(child, f"{_W}tr"):
                if not rows:
                    header = row.find(f"{_W}trPr/{_W}tblHeader")
                    marked = marked or (header is not None and header.get(f"{_W}val", "true") not in ("0", "false", "off"))
                cells, column = [], 0
                for cell in _wrapped_children(row, f"{_W}tc"):
                    merge = cell.find(f"{_W}tcPr/{_W}vMerge")
                    span = cell.find(f"{_W}tcPr/{_W}gridSpan")
                    inside = list(_word_lines(cell, header_styles))
                    pictures += [(style, line) for style, line in inside if style.startswith(PICTURE_MARK)]
                    text = " ".join(line for _, line in inside if line)
                    if merge is not None and merge.get(f"{_W}val", "continue") == "continue":
                        text = above.get(column, "")
                    above[column] = text
                    cells.append(text)
                    column += int(span.get(f"{_W}val", "1")) if span is not None else 1
                rows.append(cells)
            for line in table_lines(rows, marked).split("\n"):
                yield "", line
            yield from pictures
        elif child.tag in _WRAPPERS:
            yield from _word_lines(child, header_styles)  # a content control, or a tracked change of whole paragraphs


#: elements that wrap a document's paragraphs, a table's rows or a row's cells without being one
_WRAPPERS = frozenset({f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml", f"{_W}ins", f"{_W}moveTo"})


def _wrapped_children(element: Any, tag: str) -> Iterator[Any]:
    """``element``'s children named ``tag``, and those inside a content control or a tracked
    insertion around them (a repeating section's rows are a content control's)."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag in _WRAPPERS:
            yield from _wrapped_children(child, tag)


def _paragraph_pieces(element: Any, pieces: list[str], boxes: list[Any]) -> None:
    """The text of a paragraph's runs, in order, into ``pieces``, through links, fields, tracked
    insertions and content controls (a deletion's text is ``w:delText``, so it is left out); text
    boxes into ``boxes``."""
    for child in element:
        tag = child.tag
        if tag == f"{_W}t":
            pieces.append(child.text or "")
        elif tag in _RUN_CHARACTERS:
            pieces.append(_RUN_CHARACTERS[tag])
        elif tag == f"{_W}txbxContent":
            boxes.append(child)
        elif tag not in _NOT_TEXT and isinstance(tag, str):  # a comment or processing instruction has no name
            _paragraph_pieces(child, pieces, boxes)


def doc_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a Word 97-2003 document (.doc; :mod:`.msdoc`), as a .docx's is: a paragraph to a
    line, a table's row to a line of its cells joined by " | " and named by its first row where that
    is marked as the header row (where the file's properties cannot be read, where it holds labels),
    then its footnotes and endnotes. Its headings are the paragraphs styled "heading 1" to "heading
    9"; its title is its own, else its "Title" paragraph or its first top-level heading."""
    from .msdoc import Table, WordFileError, read_word97

    try:
        word = read_word97(path)
    except WordFileError as exc:
        raise DataFormatError(path, str(exc)) from None
    lines: list[str] = []
    headings: list[Heading] = []
    for block in word.blocks:
        if isinstance(block, Table):
            lines.append(table_lines(block.rows, marked=block.header))
        elif line := typeset_letters(" ".join(block.text.split())):
            lines.append(line)
            if block.level is not None:
                headings.append(Heading(block.level, line))
    title = own_title(word.title) or next((h.text for h in headings if h.level == 0), "") or first_heading(headings)
    return typeset_letters("\n".join(line for line in lines if line)), typeset_letters(title), tuple(h for h in headings if h.level)
