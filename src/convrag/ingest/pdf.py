"""PDFs through PDFium (pypdfium2): the text layer page by page, its form fields' answers, its outline
as headings, running headers and page numbers dropped (:mod:`.pages`), scanned pages read by OCR
(:mod:`.pictures`); bounded in time, since a crafted file can repeat a slow page thousands of times."""

from __future__ import annotations

import functools
import re
import threading
import time
from pathlib import Path
from typing import Any

from ..characters import whole_characters
from ..errors import DataFormatError
from .formats import Heading
from .pages import page_lines
from .pictures import (
    SCANNED_PAGE_CHARACTERS,
    SCANNED_PAGE_SHARE,
    STAMPED_PAGE_CHARACTERS,
    no_ocr,
    printed_characters,
    read_by_ocr,
)
from .titles import own_title
from .typesetting import typeset_letters

#: the longest a PDF's pages are read for, checked before each page. PDFium reads a page of a text
#: document in a few milliseconds, so this reads tens of thousands of pages; a crafted file can
#: repeat a slow page thousands of times, and must not keep an indexing job busy for hours
MAX_PDF_SECONDS = 120.0


_clock = time.monotonic
#: PDFium is not thread-safe: the service's indexer and a command in the same process read in turn
_PDFIUM = threading.Lock()


def pdf_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text layer of a PDF (PDFium, through pypdfium2; scanned pages without one give no text),
    its title and its headings: the entries of its outline (the bookmarks pane), the first level a
    first-level heading. pypdf read justified text wrongly: it leaves out the word spacing (``Tw``)
    a justifying writer such as groff adds to each space, so it took the line's later words for
    farther apart than they are and cut words ("contr ol box", "befor e"). A word PDFium finds broken
    over a line end (it marks the hyphen U+FFFE) is made whole again, or keeps its hyphen where it is
    a compound ("self-service"), as in a text file (:func:`~.typesetting.unwrap_lines`). A scanned page (a picture
    and next to no text layer) is read by OCR (:func:`_scanned_pages`). A file PDFium cannot open or
    read is a :class:`DataFormatError`, so that one damaged file stops neither a folder's indexing
    nor the other files of an upload."""
    import pypdfium2 as pdfium

    deadline = _clock() + MAX_PDF_SECONDS
    pages: list[str] = []
    scanned: list[int] = []
    answers: list[list[str]] = []  # a filled form's, page by page
    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:  # not a PDF, damaged past repair, or locked by a password
            raise DataFormatError(path, f"not a readable PDF ({exc})") from None
        try:
            form = _pdf_form(pdf)
            for index in range(len(pdf)):
                if _clock() > deadline:
                    raise DataFormatError(path, f"not read: its pages took more than {MAX_PDF_SECONDS:.0f} s to read, the "
                                                "most a PDF is given (a text document of thousands of pages reads in less); "
                                                "save its text as .txt")
                page = pdf[index]
                text_page = page.get_textpage()
                pages.append(text_page.get_text_range(errors="replace"))
                text_page.close()
                printed = printed_characters(pages[-1])
                if printed < STAMPED_PAGE_CHARACTERS and (share := _picture_share(page)) > 0 and (
                        printed < SCANNED_PAGE_CHARACTERS or share >= SCANNED_PAGE_SHARE):
                    scanned.append(index)
                answers.append(_form_lines(page, form) if form is not None else [])
                page.close()
            if scanned:
                has_text = any(map(printed_characters, pages)) or any(answers)
                for index, text in zip(scanned, _scanned_pages(path, pdf, scanned, has_text), strict=True):
                    if text.strip():  # what OCR read, the stamp with it; a photo it read nothing in keeps its caption
                        pages[index] = text
            pages = ["\n".join([page, *lines]) for page, lines in zip(pages, answers, strict=True)]
            title = pdf.get_metadata_value("Title")
            outline = [Heading(item.level + 1, " ".join(item.get_title().split())) for item in pdf.get_toc(max_depth=9)]
        except (DataFormatError, MemoryError):
            raise
        except Exception as exc:  # PDFium's own error, or one of pypdfium2's reading what PDFium gave (a bookmark's title)
            raise DataFormatError(path, f"not a readable PDF ({exc or type(exc).__name__})") from None
        finally:
            pdf.close()
    text = page_lines(pages)
    headings = tuple(heading for heading in outline if heading.text)
    return text, typeset_letters(whole_characters(own_title(title))), headings


def _pdf_form(pdf: Any) -> Any:
    """The form environment of a PDF with a form (AcroForm), else None: set up before any page is
    loaded, as PDFium asks."""
    import pypdfium2.raw as pdfium_c

    if pdfium_c.FPDF_GetFormType(pdf.raw) == pdfium_c.FORMTYPE_NONE:
        return None
    pdf.init_forms()
    return pdf.formenv.raw if pdf.formenv is not None else None


#: the index of a field's part in an XFA-made name: "topmostSubform[0].Page1[0].f1_01[0]"
_FIELD_INDEX = re.compile(r"\[\d+\]")


def _form_lines(page: Any, form: Any) -> list[str]:
    """A filled PDF form's answers on one page, a line each ("Boat name: Sea Swallow"): PDFium's text
    layer holds the form's printed questions but not what was typed into its fields, so an application
    or a claim read as its blank form. A field is named by its tooltip where it has one, else by the
    last part of its name ("topmostSubform[0].Page1[0].f1_01[0]" says nothing); a ticked box or radio
    button by its name and "yes" (a radio group by its chosen value); empty fields, buttons and
    signatures are left out."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    def said(function: Any, annotation: Any) -> str:
        size = function(form, annotation, None, 0)
        if size <= 2:
            return ""
        buffer = ctypes.create_string_buffer(size)
        function(form, annotation, ctypes.cast(buffer, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size)
        return " ".join(buffer.raw[:size - 2].decode("utf-16-le", "replace").split())

    lines: list[str] = []
    seen: set[str] = set()
    for index in range(pdfium_c.FPDFPage_GetAnnotCount(page.raw)):
        annotation = pdfium_c.FPDFPage_GetAnnot(page.raw, index)
        try:
            if pdfium_c.FPDFAnnot_GetSubtype(annotation) != pdfium_c.FPDF_ANNOT_WIDGET:
                continue
            kind = pdfium_c.FPDFAnnot_GetFormFieldType(form, annotation)
            name = said(pdfium_c.FPDFAnnot_GetFormFieldName, annotation)
            label = said(pdfium_c.FPDFAnnot_GetFormFieldAlternateName, annotation) or _FIELD_INDEX.sub("", name).rsplit(".", 1)[-1]
            if kind in (pdfium_c.FPDF_FORMFIELD_TEXTFIELD, pdfium_c.FPDF_FORMFIELD_COMBOBOX, pdfium_c.FPDF_FORMFIELD_LISTBOX):
                value = said(pdfium_c.FPDFAnnot_GetFormFieldValue, annotation)
            elif kind == pdfium_c.FPDF_FORMFIELD_CHECKBOX and pdfium_c.FPDFAnnot_IsChecked(form, annotation):
                value = "yes"
            elif kind == pdfium_c.FPDF_FORMFIELD_RADIOBUTTON and pdfium_c.FPDFAnnot_IsChecked(form, annotation):
                value = said(pdfium_c.FPDFAnnot_GetFormFieldValue, annotation) or "yes"
            else:
                continue
            if value and value != "Off" and name not in seen:
                seen.add(name)
                lines.append(f"{label}: {value}" if label else value)
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annotation)
    return lines


#: the most drawing objects of a page looked through for a picture: a scan draws its page picture
#: among its first few; a crafted page of 150,000 text objects took a second to look through whole
PICTURE_SEARCH_OBJECTS = 2000


def _picture_share(page: Any) -> float:
    """The share of a PDF page the largest picture among its first :data:`PICTURE_SEARCH_OBJECTS`
    objects covers (0 without one), the picture drawn itself or inside a form (where some scanners
    put it; the form's bounds are taken). Read through PDFium's own calls: pypdfium2's object list
    wraps every object in Python first."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    def is_picture(thing: Any, depth: int) -> bool:  # an image, or a form (three deep at most) that draws one
        kind = pdfium_c.FPDFPageObj_GetType(thing)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            return True
        if kind != pdfium_c.FPDF_PAGEOBJ_FORM or depth >= 3:
            return False
        inside = min(pdfium_c.FPDFFormObj_CountObjects(thing), PICTURE_SEARCH_OBJECTS)
        return any(is_picture(pdfium_c.FPDFFormObj_GetObject(thing, i), depth + 1) for i in range(inside))

    width, height = page.get_size()
    largest = 0.0
    for index in range(min(pdfium_c.FPDFPage_CountObjects(page.raw), PICTURE_SEARCH_OBJECTS)):
        thing = pdfium_c.FPDFPage_GetObject(page.raw, index)
        if not is_picture(thing, 0):
            continue
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        if pdfium_c.FPDFPageObj_GetBounds(thing, left, bottom, right, top):
            covered = max(0.0, min(right.value, width) - max(left.value, 0.0)) * max(0.0, min(top.value, height) - max(bottom.value, 0.0))
            largest = max(largest, covered / max(width * height, 1.0))
        else:
            largest = max(largest, 1e-9)  # a picture whose bounds PDFium cannot say: a picture all the same
    return largest


def _scanned_pages(path: Path, pdf: Any, indexes: list[int], has_text: bool) -> list[str]:
    """The text of a PDF's scanned pages (``indexes``), read by OCR (:mod:`.ocr`) from the pages
    rendered at its resolution; a page's text layer (a stamped number) gives way to what is read.
    Without OCR, a PDF with text elsewhere keeps its scanned pages empty, and one that is all
    scanned pages is a :class:`DataFormatError` that says how to install it: it had been skipped as
    a file that "holds no text", which told the user nothing they could do."""
    from . import ocr

    if not ocr.available():
        if has_text:
            return [""] * len(indexes)
        raise no_ocr(path, f"its {len(indexes)} page(s) are scanned pictures without a text layer")

    def render(index: int) -> Any:
        page = pdf[index]
        try:
            return page.render(scale=ocr.scale(*page.get_size()), grayscale=True).to_pil()
        finally:
            page.close()

    return read_by_ocr(path, [functools.partial(render, index) for index in indexes])
