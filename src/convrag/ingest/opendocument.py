"""OpenDocument (LibreOffice's .odt text, .ods spreadsheet and .odp presentation), read as their Word,
Excel and PowerPoint counterparts are: headings, tables a line a row, frames and notes, pictures
standing for text read by OCR."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import DataFormatError
from .formats import Heading
from .packages import DC_TITLE, check_unpacked_size, package_part, parse_xml
from .pictures import (
    PICTURE_MARK,
    SCANNED_PAGE_CHARACTERS,
    SCANNED_PAGE_SHARE,
    opened_for_ocr,
    pictures_to_read,
    printed_characters,
    read_by_ocr,
    with_pictures_read,
    with_slide_pictures_read,
)
from .powerpoint import in_reading_order
from .tables import MAX_SHEET_CELLS, sheet_block, table_lines
from .titles import own_title
from .typesetting import typeset_letters

_ODF_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_ODF_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_ODF_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_ODF_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_ODF_FO = "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"
_XLINK = "{http://www.w3.org/1999/xlink}"
_ODF_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_ODF_PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"
#: what an OpenDocument text holds that is no part of its reading: deleted text kept for review,
#: comments, a table of contents (the headings again), a note's number in the line
_ODF_SKIPPED = frozenset({f"{_ODF_TEXT}tracked-changes", f"{_ODF_OFFICE}annotation", f"{_ODF_TEXT}table-of-content",
                          f"{_ODF_TEXT}note-citation", f"{_ODF_TEXT}sequence-decls"})


def _odf_package(path: Path, what: str, body: str) -> tuple[Any, str]:
    """An OpenDocument package's body (``office:text``, ``office:spreadsheet`` or ``office:presentation``)
    and its own title (meta.xml); a package that is none, or not of this kind, is a :class:`DataFormatError`."""
    import zipfile

    from lxml import etree

    check_unpacked_size(path, f"an OpenDocument {what}")
    try:
        with zipfile.ZipFile(path) as package:
            content = parse_xml(package.read("content.xml"))
            meta = parse_xml(package.read("meta.xml")) if "meta.xml" in package.namelist() else None
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(path, f"not a readable OpenDocument {what} ({exc})") from None
    except KeyError:
        raise DataFormatError(path, f"not a readable OpenDocument {what}: it has no content.xml (an old StarOffice or "
                                    f"Microsoft Office file must be saved in OpenDocument format)") from None
    except etree.XMLSyntaxError as exc:
        raise DataFormatError(path, f"not a readable OpenDocument {what}: damaged XML ({exc})") from None
    found = content.find(f"{_ODF_OFFICE}body/{_ODF_OFFICE}{body}")
    if found is None:
        raise DataFormatError(path, f"not a readable OpenDocument {what}: it holds no {body} body (another kind of "
                                    "document under this suffix?)")
    title = next((" ".join("".join(t.itertext()).split()) for t in meta.iter(DC_TITLE)), "") if meta is not None else ""
    return found, title


def odt_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument text (.odt, LibreOffice's and Google Docs' export), read from its
    XML as a Word document is: a line per paragraph and heading, a table's row a line of its cells
    (named by the headings of its repeated header rows, as a Word table's are), a text frame's
    paragraphs after the paragraph it stands in, footnotes and endnotes at the end; deleted text
    under review, comments and the table of contents are left out. The title is the document's
    own (meta.xml), else its first heading."""
    from . import ocr

    body, title = _odf_package(path, "text", "text")
    notes: list[str] = []
    lines = [(line, "") if line.startswith(PICTURE_MARK) else ("", line) for line in _odf_lines(body, notes, pictures=True) if line]
    marked = [Heading(_odf_level(h), " ".join("".join(_odf_pieces(h, [], [])).split())) for h in _odf_headings(body)]
    heading = marked[0].text if marked else ""
    areas = _odf_text_areas(path)
    page = areas.get("Standard", next((area for name, area in areas.items() if name), areas[""]))  # Writer's page style, else the first
    pictures = pictures_to_read(lines + [("", note) for note in notes], page, functools.partial(package_part, path))
    if pictures and ocr.available():  # scanned pages put into a Writer document, alone or among its text
        read = iter(read_by_ocr(path, [functools.partial(opened_for_ocr, blob) for blob in pictures.values()]))
        lines = with_pictures_read(lines, {place: next(read) for place in pictures})
    text = "\n".join([line for _, line in lines if line] + notes)
    return typeset_letters(text), typeset_letters(own_title(title) or heading), tuple(h for h in marked if h.text)


def _odf_text_areas(path: Path) -> dict[str, float]:
    """The area (square hundredths of a millimetre) of the text on a page of an OpenDocument, by the
    name of the master page that lays it out (a Writer document's "Standard", a slide's master): its
    page less its margins (styles.xml). A master without a page size, and the key "", are Letter with
    1-inch margins, as for a Word document (:func:`.word._word_text_area`)."""
    import zipfile

    inch = 2540
    default = (8.5 * inch - 2 * inch) * (11 * inch - 2 * inch)
    try:
        with zipfile.ZipFile(path) as package:
            styles = parse_xml(package.read("styles.xml"))
    except Exception:  # no styles.xml, damaged XML: the default page
        return {"": default}
    areas: dict[str, float] = {}
    for layout in styles.iter(f"{_ODF_STYLE}page-layout"):
        properties = layout.find(f"{_ODF_STYLE}page-layout-properties")
        if properties is None or not properties.get(f"{_ODF_FO}page-width"):
            continue

        def length(name: str, fallback: float, properties: Any = properties) -> float:
            found = _ODF_LENGTH.fullmatch(properties.get(f"{_ODF_FO}{name}") or "")
            return float(found.group(1)) * _ODF_UNITS[found.group(2)] if found else fallback

        width = length("page-width", 8.5 * inch) - length("margin-left", 0) - length("margin-right", 0)
        height = length("page-height", 11 * inch) - length("margin-top", 0) - length("margin-bottom", 0)
        areas[layout.get(f"{_ODF_STYLE}name", "")] = max(width, inch) * max(height, inch)
    pages = {master.get(f"{_ODF_STYLE}name", ""): areas.get(master.get(f"{_ODF_STYLE}page-layout-name", ""), default)
             for master in styles.iter(f"{_ODF_STYLE}master-page")}
    return {"": default, **pages}


#: the most times a repeated spreadsheet row or cell that holds something is read: a sheet's unused
#: rows and columns are one element repeated up to a million times, and a filled one is rarely repeated
_ODS_MAX_REPEAT = 1000


def ods_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument spreadsheet (.ods, LibreOffice Calc's own format) as an Excel
    workbook's is read: each sheet a block, opened by its name where the name says something, its
    rows read as a CSV file's are (:func:`table_lines`), a cell as the text it shows (a formula's
    last computed value). A cell or a row repeated holds one element for many; empty ones are read
    once, so a sheet's million unused rows cost nothing. Sheets hidden by their style are left out."""
    body, title = _odf_package(path, "spreadsheet", "spreadsheet")
    hidden = {style.get(f"{_ODF_STYLE}name") for style in body.getparent().getparent().iter(f"{_ODF_STYLE}style")
              if any(props.get(f"{_ODF_TABLE}display") == "false" for props in style.iter(f"{_ODF_STYLE}table-properties"))}
    sheets: list[str] = []
    filled = 0
    for sheet in body.iter(f"{_ODF_TABLE}table"):
        if sheet.get(f"{_ODF_TABLE}style-name") in hidden or sheet.getparent().tag != body.tag:
            continue
        rows: list[list[str]] = []
        for row, _ in _odf_rows(sheet):
            cells: list[str] = []
            for cell in row:
                if cell.tag not in (f"{_ODF_TABLE}table-cell", f"{_ODF_TABLE}covered-table-cell"):
                    continue
                text = " ".join(_odf_lines(cell, []))
                cells += [text] * _repeat(cell, "columns")  # empty ones too, up to the cap: they keep the columns apart
            cells = cells[:max((i + 1 for i, cell in enumerate(cells) if cell), default=0)]
            times = _repeat(row, "rows") if cells else 1
            filled += len(cells) * times
            if filled > MAX_SHEET_CELLS:
                raise DataFormatError(path, f"not read: it holds more than {MAX_SHEET_CELLS:,} filled cells, repeats counted; save "
                                            "the sheets that matter as .csv")
            rows += [cells] * times
        table = table_lines(rows)
        if table:
            sheets.append(sheet_block(sheet.get(f"{_ODF_TABLE}name") or "", table))
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def _repeat(element: Any, what: str) -> int:
    """How many times a spreadsheet cell (``what`` "columns") or row ("rows") stands, at most
    :data:`_ODS_MAX_REPEAT` (1 where the count is missing or wrong)."""
    try:
        return min(max(1, int(element.get(f"{_ODF_TABLE}number-{what}-repeated", "1"))), _ODS_MAX_REPEAT)
    except ValueError:
        return 1


def odp_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument presentation (.odp, LibreOffice Impress's own format) as a
    PowerPoint deck's is read: slide by slide, a blank line between two, each slide's title first,
    then its other shapes (frames, shapes with text, groups) in reading order, as a deck's are
    (:func:`in_reading_order`), then its speaker notes. The title is the presentation's own, else
    its first slide's title."""
    body, title = _odf_package(path, "presentation", "presentation")
    areas = _odf_text_areas(path)
    slides: list[str] = []
    marked: list[Heading] = []
    pictured: list[tuple[int, bytes]] = []  # the slides that are a picture (a deck saved from a PDF, a scan), and it
    for page in body.iter(f"{_ODF_DRAW}page"):
        shapes = [child for child in page if child.tag in _ODP_SHAPES]
        titles = [shape for shape in shapes if shape.get(f"{_ODF_PRESENTATION}class") == "title"]
        others = [placed.element for placed in in_reading_order(_placed(shape) for shape in shapes if shape not in titles)]
        notes = [child for child in page if child.tag == f"{_ODF_PRESENTATION}notes"]
        lines: list[str] = []
        for part in [*titles, *others]:
            lines += [line for line in _odf_lines(part, []) if line]
        area = areas.get(page.get(f"{_ODF_DRAW}master-page-name") or "", areas[""])
        if (picture := _odf_slide_picture(path, shapes, lines, area)) is not None:
            pictured.append((len(slides), picture))
        for part in notes:
            lines += [line for line in _odf_lines(part, []) if line]
        marked += [Heading(1, line) for frame in titles[:1] for line in _odf_lines(frame, []) if line][:1]
        slides.append("\n".join(lines))
    heading = marked[0].text if marked else ""
    slides = with_slide_pictures_read(path, slides, pictured)
    return typeset_letters("\n\n".join(s for s in slides if s)), typeset_letters(own_title(title) or heading), tuple(marked)


def _odf_slide_picture(path: Path, shapes: list[Any], lines: list[str], area: float) -> bytes | None:
    """The picture an OpenDocument slide is, where it is one, as a PowerPoint slide's (:func:`.powerpoint._slide_picture`):
    next to no text of its own and a picture covering at least :data:`SCANNED_PAGE_SHARE` of the slide."""
    if printed_characters("".join(lines)) >= SCANNED_PAGE_CHARACTERS:
        return None
    pictures = [(_odf_length(shape, "width") * _odf_length(shape, "height"), image.get(f"{_XLINK}href") or "")
                for shape in shapes if (image := shape.find(f"{_ODF_DRAW}image")) is not None]
    largest, href = max(pictures, default=(0, ""))
    return package_part(path, href) if href and largest >= SCANNED_PAGE_SHARE * area else None


#: what a slide draws that can hold text: a frame (a text box, a placeholder, a table), a shape, a group
_ODP_SHAPES = frozenset(f"{_ODF_DRAW}{name}" for name in ("frame", "custom-shape", "rect", "ellipse", "g"))
#: an OpenDocument length ("2.5cm", "10mm", "1in", "72pt") and its unit's size in hundredths of a millimetre
_ODF_LENGTH = re.compile(r"\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*(cm|mm|in|pt|pc|px)?\s*")
_ODF_UNITS = {"cm": 1000.0, "mm": 100.0, "in": 2540.0, "pt": 2540 / 72, "pc": 2540 / 6, "px": 2540 / 96, None: 1000.0}


class _Placed(NamedTuple):
    """A slide's shape where it is drawn, in hundredths of a millimetre, as python-pptx gives a deck's
    (so that :func:`in_reading_order` orders both)."""
    top: int
    left: int
    height: int
    width: int
    element: Any


def _odf_length(element: Any, name: str) -> int:
    """A drawn element's ``svg:`` place or size (``name``: "x", "y", "width", "height") in hundredths of a millimetre, 0 where it has none."""
    found = _ODF_LENGTH.fullmatch(element.get(f"{_SVG}{name}") or "")
    return round(float(found.group(1)) * _ODF_UNITS[found.group(2)]) if found else 0


def _placed(shape: Any) -> _Placed:
    """A shape with its place; a group, which has none of its own, is where its first placed member is."""
    where = shape
    if shape.tag == f"{_ODF_DRAW}g":
        where = next((child for child in shape.iter() if child.get(f"{_SVG}y") is not None), shape)
    return _Placed(_odf_length(where, "y"), _odf_length(where, "x"), _odf_length(where, "height"), _odf_length(where, "width"), shape)


def _odf_headings(parent: Any) -> Iterator[Any]:
    """The ``text:h`` elements of the text as :func:`_odf_lines` reads it (not those of deleted text
    under review or of the table of contents, which it leaves out)."""
    for child in parent:
        if child.tag in _ODF_SKIPPED:
            continue
        if child.tag == f"{_ODF_TEXT}h":
            yield child
        else:
            yield from _odf_headings(child)


def _odf_level(heading: Any) -> int:
    """A ``text:h``'s outline level (1 when it names none or a wrong one)."""
    try:
        return max(1, int(heading.get(f"{_ODF_TEXT}outline-level", "1")))
    except ValueError:
        return 1


def _odf_lines(parent: Any, notes: list[str], pictures: bool = False) -> Iterator[str]:
    """A line for each paragraph and heading under ``parent`` (a body, a section, a list, a cell,
    a frame's text box), in reading order; a table's row is one line of its cells. ``pictures``:
    each picture the text shows marked by a line of its own (:data:`PICTURE_MARK`, its path in the
    package and its area in square hundredths of a millimetre) after the paragraph it stands in, or
    after the table in whose cell it is (:func:`odt_to_text` reads the scanned pages among them)."""
    for child in parent:
        if child.tag in _ODF_SKIPPED:
            continue
        if child.tag in (f"{_ODF_TEXT}p", f"{_ODF_TEXT}h"):
            frames: list[Any] = []
            yield " ".join("".join(_odf_pieces(child, notes, frames)).split())
            for frame in frames:
                yield from _odf_frame_lines(frame, notes, pictures)
        elif child.tag == f"{_ODF_DRAW}frame":  # anchored to the page, not to a paragraph (a scan placed on page 1)
            yield from _odf_frame_lines(child, notes, pictures)
        elif child.tag == f"{_ODF_TABLE}table":
            # a first row marked as the headings: header rows repeated atop each page (Writer), or a table
            # whose template sets its first row apart (Impress's "Header row", as PowerPoint's firstRow)
            rows, marked = [], child.get(f"{_ODF_TABLE}use-first-row-styles") == "true"
            shown: list[str] = []  # the marks of the pictures in its cells, after the table
            for row, in_header in _odf_rows(child):
                cells = []
                for cell in row:
                    if cell.tag == f"{_ODF_TABLE}table-cell":
                        inside = list(_odf_lines(cell, notes, pictures))
                        shown += [line for line in inside if line.startswith(PICTURE_MARK)]
                        cells.append(" ".join(line for line in inside if not line.startswith(PICTURE_MARK)))
                rows.append(cells[:max((i + 1 for i, cell in enumerate(cells) if cell), default=0)])  # the repeated empty cells at its end
                marked = marked or (in_header and len(rows) == 1)
            yield table_lines(rows, marked=marked)
            yield from shown
        else:  # a list, a list item, a section, an index's body: their paragraphs in order
            yield from _odf_lines(child, notes, pictures)


def _odf_frame_lines(frame: Any, notes: list[str], pictures: bool) -> Iterator[str]:
    """The lines of a frame (:func:`_odf_lines`): its text boxes' paragraphs, and, ``pictures``, the mark of the picture it shows."""
    for box in frame.iter(f"{_ODF_DRAW}text-box"):
        yield from _odf_lines(box, notes, pictures)
    image = frame.find(f"{_ODF_DRAW}image")
    if pictures and image is not None and image.get(f"{_XLINK}href"):
        yield f"{PICTURE_MARK}{image.get(f'{_XLINK}href')} {_odf_length(frame, 'width') * _odf_length(frame, 'height')}"


def _odf_rows(table: Any, in_header: bool = False) -> Iterator[tuple[Any, bool]]:
    """A table's own rows (not those of a table in one of its cells), each with whether it is one
    of the header rows repeated atop each page."""
    for child in table:
        if child.tag == f"{_ODF_TABLE}table-row":
            yield child, in_header
        elif child.tag in (f"{_ODF_TABLE}table-header-rows", f"{_ODF_TABLE}table-rows", f"{_ODF_TABLE}table-row-group"):
            yield from _odf_rows(child, in_header or child.tag == f"{_ODF_TABLE}table-header-rows")


def _odf_pieces(element: Any, notes: list[str], frames: list[Any]) -> list[str]:
    """The text of a paragraph as a reader sees it: its spans and links; spaces (``text:s``, however
    many its count says: the line's spaces are made one), tabs and line breaks as a space; a note's
    body goes to ``notes``, a frame's text box to ``frames`` (read after the paragraph)."""
    pieces = [element.text or ""]
    for child in element:
        if child.tag in (f"{_ODF_TEXT}s", f"{_ODF_TEXT}tab", f"{_ODF_TEXT}line-break"):
            pieces.append(" ")
        elif child.tag == f"{_ODF_TEXT}note":
            body = child.find(f"{_ODF_TEXT}note-body")
            if body is not None:
                notes.append(" ".join(_odf_lines(body, notes)))
        elif child.tag == f"{_ODF_DRAW}frame":
            frames.append(child)
        elif child.tag not in _ODF_SKIPPED:
            pieces.extend(_odf_pieces(child, notes, frames))
        pieces.append(child.tail or "")
    return pieces
