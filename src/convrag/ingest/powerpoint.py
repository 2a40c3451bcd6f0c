"""PowerPoint decks: .pptx (python-pptx, each slide's shapes in reading order, tables, notes; a
slide that is one picture read by OCR) and PowerPoint 97-2003's .ppt (:mod:`.msppt`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataFormatError
from .formats import Heading
from .packages import check_unpacked_size
from .pictures import SCANNED_PAGE_CHARACTERS, SCANNED_PAGE_SHARE, printed_characters, with_slide_pictures_read
from .tables import table_lines
from .titles import own_title
from .typesetting import typeset_letters


def _powerpoint_deck(path: Path) -> Any:
    """A PowerPoint package opened by python-pptx: a deck (.pptx), and a macro-enabled one, a slide
    show or a template (.pptm, .ppsx, .ppsm, .potx, .potm), which python-pptx reads as a deck's
    presentation though ``pptx.Presentation`` refuses the last three. Another main part is a ValueError."""
    from pptx.package import Package
    from pptx.parts.presentation import PresentationPart

    part = Package.open(str(path)).main_document_part
    if not isinstance(part, PresentationPart):
        raise ValueError(f"its main part ({part.content_type}) is no presentation")
    return part.presentation


#: a slide's placeholders that are page furniture, as a PDF's page numbers and running footers are
_SLIDE_FURNITURE = frozenset({"SLIDE_NUMBER", "FOOTER", "DATE"})


def pptx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a PowerPoint deck (python-pptx), slide by slide: each slide's title, then its
    other shapes from top to bottom and left to right (a shape's paragraphs a line each, a table's
    row a line of its cells joined by " | " and named by the first row where the table's "Header Row"
    option marks it so, a group's shapes in their own order), then its speaker
    notes, which often say what the slide only lists. A blank line parts two slides, so that no
    sentence runs from one into the next. The slide number, date and footer are left out. The title
    is the deck's own, else its first slide's title. A package python-pptx fails on is a
    :class:`DataFormatError`, as a Word document's is."""
    from zipfile import BadZipFile

    from pptx.exc import PackageNotFoundError

    check_unpacked_size(path, "a PowerPoint deck")
    try:
        deck = _powerpoint_deck(path)
        slides: list[str] = []
        heading = ""
        marked: list[Heading] = []  # each slide's title
        pictured: list[tuple[int, bytes]] = []  # the slides that are a picture (a deck saved from a PDF, a scan), and it
        for slide in deck.slides:
            named = slide.shapes.title  # first, wherever it was drawn: a "Draft" label above it came before it
            if named is not None:
                marked += [Heading(1, line) for line in _shape_lines(named)[:1]]
            if not heading and named is not None:
                heading = " ".join(named.text_frame.text.split())
            shapes = [named] if named is not None else []
            shapes += in_reading_order(s for s in slide.shapes if named is None or s.shape_id != named.shape_id)
            lines = [line for shape in shapes for line in _shape_lines(shape)]
            if (picture := _slide_picture(slide, lines, deck.slide_width, deck.slide_height)) is not None:
                pictured.append((len(slides), picture))
            if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                lines += [" ".join(p.text.split()) for p in slide.notes_slide.notes_text_frame.paragraphs]
            slides.append("\n".join(line for line in lines if line))
        title = (deck.core_properties.title or "").strip()
    except (PackageNotFoundError, BadZipFile):
        raise DataFormatError(path, "not a readable PowerPoint deck (not a .pptx package; an old PowerPoint 97-2003 file is read as .ppt)") from None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged part: lxml's XMLSyntaxError, or python-pptx's own error on a wrong one
        raise DataFormatError(path, f"not a readable PowerPoint deck ({exc or type(exc).__name__})") from None
    slides = with_slide_pictures_read(path, slides, pictured)
    return typeset_letters("\n\n".join(s for s in slides if s)), typeset_letters(own_title(title) or heading), tuple(marked)


def _slide_picture(slide: Any, lines: list[str], width: int | None, height: int | None) -> bytes | None:
    """The picture a slide is, where it is one: next to no text of its own (fewer printed characters
    than a scanned PDF page has, :data:`SCANNED_PAGE_CHARACTERS`) and a picture covering at least
    :data:`SCANNED_PAGE_SHARE` of it. A deck converted from a PDF, or made of scanned pages, is a
    picture a slide, and read as no text at all."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if printed_characters("".join(lines)) >= SCANNED_PAGE_CHARACTERS or not width or not height:
        return None
    pictures = [shape for shape in slide.shapes if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    largest = max(pictures, key=lambda shape: (shape.width or 0) * (shape.height or 0), default=None)
    if largest is None or (largest.width or 0) * (largest.height or 0) < SCANNED_PAGE_SHARE * width * height:
        return None
    return bytes(largest.image.blob)


def in_reading_order(shapes: Any) -> list[Any]:
    """A slide's (or a group's) shapes top to bottom, and shapes side by side a column at a time,
    the left one first: their order in the file is the order they were drawn in (a text box added
    last to the top of a slide came last), and a plain top-then-left order read a slide's table
    beside its text first because the table began a little higher (PowerPoint's "Content with
    Caption" layout, the one pandoc gives a slide with a table). Shapes whose heights overlap make
    a band; in a band, shapes whose widths overlap make a column."""
    def span(start: int | None, size: int | None) -> tuple[int, int]:
        return (start or 0), (start or 0) + (size or 0)

    bands: list[list[Any]] = []
    bottom = 0
    for shape in sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0)):
        top, end = span(shape.top, shape.height)
        if bands and top < bottom:
            bands[-1].append(shape)
        else:
            bands.append([shape])
        bottom = max(bottom, end) if len(bands[-1]) > 1 else end
    ordered: list[Any] = []
    for band in bands:
        columns: list[tuple[list[int], list[Any]]] = []  # ([left, right], shapes), left to right
        for shape in sorted(band, key=lambda shape: (shape.left or 0, shape.top or 0)):
            left, right = span(shape.left, shape.width)
            column = next((c for c in columns if left < c[0][1] and c[0][0] < right), None)
            if column is None:
                columns.append(([left, right], [shape]))
            else:
                column[0][1] = max(column[0][1], right)
                column[1].append(shape)
        for _, members in columns:
            ordered += sorted(members, key=lambda shape: (shape.top or 0, shape.left or 0))
    return ordered


def _shape_lines(shape: Any) -> list[str]:
    """The lines of text one shape shows (:func:`pptx_to_text`)."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.is_placeholder and shape.placeholder_format.type is not None \
            and shape.placeholder_format.type.name in _SLIDE_FURNITURE:
        return []
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        return [line for member in in_reading_order(shape.shapes) for line in _shape_lines(member)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows, above = [], {}  # a column's last cell text, for the cells merged into it from above
        for row in shape.table.rows:
            cells = []
            for column, cell in enumerate(row.cells):
                if cell._tc.get("vMerge"):  # merged down from the cell above: repeated, so a row keeps its label
                    cells.append(above.get(column, ""))
                elif not cell._tc.get("hMerge"):  # merged across from the cell before: that one holds the text
                    above[column] = " ".join(cell.text.split())
                    cells.append(above[column])
            rows.append(cells)
        # PowerPoint's "Header Row" table option (on for a new table, which then shows its first row
        # as the headings) marks the first row as the columns' names, as a Word row repeated atop each page does
        return table_lines(rows, marked=shape.table.first_row).split("\n")
    if shape.has_text_frame:
        return [" ".join(p.text.split()) for p in shape.text_frame.paragraphs]
    return []


def ppt_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a PowerPoint 97-2003 deck (.ppt; :mod:`.msppt`), as a .pptx's is: slide by slide,
    a blank line between two, each slide's title first, then its shapes in the order drawn (a
    table's row a line of its cells joined by " | "), then its notes. The slides' titles are its
    headings; its title is its own, else its first slide's title."""
    from .msppt import PowerPointFileError, read_powerpoint97

    try:
        slides, own = read_powerpoint97(path)
    except PowerPointFileError as exc:
        raise DataFormatError(path, str(exc)) from None
    blocks: list[str] = []
    for slide in slides:
        lines = [slide.title] if slide.title else []
        lines += [line for line in slide.lines if line != slide.title or not lines] + slide.notes
        blocks.append("\n".join(line for line in lines if line))
    headings = tuple(Heading(1, slide.title) for slide in slides if slide.title)
    title = own_title(own) or next((slide.title for slide in slides if slide.title), "")
    return typeset_letters("\n\n".join(block for block in blocks if block)), typeset_letters(title), headings
