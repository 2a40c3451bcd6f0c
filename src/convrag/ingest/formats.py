"""What convrag reads: the file types it knows by suffix (:data:`SUFFIXES`, a compressed tar's two
suffixes among them), what each format is called in errors, and the :class:`Document` and
:class:`Heading` every reader makes of a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

#: the files convrag reads, by suffix: the kind each is read as (one reader module for each kind but plain text)
SUFFIXES = {
    # text and markup
    ".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown", ".mdx": "mdx", ".rst": "rst", ".html": "html",
    ".htm": "html", ".mhtml": "mhtml", ".mht": "mhtml", ".csv": "csv", ".tsv": "csv", ".ipynb": "notebook", ".tex": "latex",
    ".latex": "latex", ".org": "org", ".adoc": "asciidoc", ".asciidoc": "asciidoc", ".mediawiki": "mediawiki", ".vtt": "transcript",
    ".srt": "transcript",
    # office documents: a macro-enabled package, a template or a slide show is read as its document
    ".pdf": "pdf", ".docx": "docx", ".docm": "docx", ".dotx": "docx", ".dotm": "docx", ".pptx": "pptx", ".pptm": "pptx",
    ".ppsx": "pptx", ".ppsm": "pptx", ".potx": "pptx", ".potm": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".xltx": "xlsx",
    ".xltm": "xlsx", ".epub": "epub", ".odt": "odt", ".ods": "ods", ".odp": "odp", ".rtf": "rtf", ".doc": "doc", ".xls": "xls",
    ".ppt": "ppt",
    # mail and archives; a compressed tar is known by its two suffixes (:func:`document_suffix`)
    ".eml": "eml", ".msg": "msg", ".mbox": "mbox", ".zip": "zip", ".tar": "tar", ".tgz": "tar", ".tar.gz": "tar", ".tbz": "tar",
    ".tbz2": "tar", ".tar.bz2": "tar", ".txz": "tar", ".tar.xz": "tar", ".tar.zst": "tar.zst", ".tzst": "tar.zst",
    ".7z": "7z", ".rar": "rar",
    # scans and pictures, read by OCR
    ".tif": "tiff", ".tiff": "tiff", ".png": "picture", ".jpg": "picture", ".jpeg": "picture", ".webp": "picture", ".bmp": "picture",
    ".gif": "picture", ".avif": "picture", ".heic": "picture", ".heif": "picture",
}
#: the suffixes of two parts: ".gz" alone would claim every gzip file (a BEIR corpus.jsonl.gz in a folder), which is no document
_TWO_PART_SUFFIXES = tuple(suffix for suffix in SUFFIXES if suffix.count(".") == 2)


def document_suffix(path: str | os.PathLike[str]) -> str:
    """The suffix a file's type is known by, lower-cased: its last (".pdf"), or a compressed tar's
    two (".tar.gz")."""
    name = Path(path).name.lower()
    return next((suffix for suffix in _TWO_PART_SUFFIXES if name.endswith(suffix) and len(name) > len(suffix)), Path(name).suffix)


def document_stem(path: str | os.PathLike[str]) -> str:
    """A file's name without :func:`document_suffix` ("manual" of "manual.tar.gz", as of "manual.pdf")."""
    name = Path(path).name
    return name[:len(name) - len(document_suffix(name))]


#: the kinds of file that are pictures, read by OCR alone
PICTURE_KINDS = frozenset({"tiff", "picture"})


class Heading(NamedTuple):
    """A heading the document's own markup marks (an HTML ``h2``, a Markdown ``##``, a Word "Heading 2"
    paragraph, an OpenDocument ``text:h``), as the line it reads as in the document's text. ``level``
    is 1 for the top headings; a title paragraph is 0. ``part``: the heading begins another file (an
    archive's member, a mail's attachment), and no passage runs across it: a passage that ran from
    one file into the next was cited by the first file's name for the second's words."""

    level: int
    text: str
    part: bool = False


@dataclass(frozen=True)
class Document:
    """A file read: its id in its collection (its path in the folder, without the suffix), the title a
    citation shows, its text, and the address a citation links to (the file's, or the page's it came from)."""

    doc_id: str
    title: str
    text: str
    url: str = ""
    #: the marked headings, in reading order (none for plain text, PDF, RTF, CSV and Excel, whose
    #: readers know no heading for sure): what names the section a passage begins in
    #: (:func:`convrag.ingest.chunking.chunk_document`)
    headings: tuple[Heading, ...] = ()


#: what each format read from a file is called in its errors
FORMAT_NAMES = {"pdf": "PDF", "docx": "Word document", "pptx": "PowerPoint deck", "xlsx": "Excel workbook", "epub": "EPUB book",
                "odt": "OpenDocument text", "ods": "OpenDocument spreadsheet", "odp": "OpenDocument presentation",
                "rtf": "RTF document", "doc": "Word 97-2003 document", "xls": "Excel 97-2003 workbook", "eml": "e-mail",
                "msg": "Outlook message", "tiff": "TIFF scan", "picture": "picture", "zip": "zip archive", "tar": "tar archive",
                "tar.zst": "zstd tar archive", "7z": "7z archive", "rar": "RAR archive",
                "ppt": "PowerPoint 97-2003 deck", "mbox": "mailbox"}


def no_text_reason(path: Path) -> str:
    """Why a document that reads holds nothing to index. A PDF's scanned pages are read by OCR (an
    all-scanned PDF without OCR is refused with its own reason), so a PDF that gives no text has
    neither a text layer nor words OCR could read in its pictures (blank pages, drawings, photos);
    a picture file (a TIFF scan, a photo) that gives none holds no words OCR could read."""
    kind = SUFFIXES.get(document_suffix(path))
    if kind == "pdf":
        return "no text (no text layer, and no words OCR could read in its pictures)"
    return "no text (no words OCR could read in it)" if kind in PICTURE_KINDS else "no text"
