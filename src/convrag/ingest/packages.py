"""Zip packages (Word, PowerPoint, Excel, OpenDocument, EPUB): bounded before they are unpacked (a
crafted package unpacks to gigabytes of XML), and their XML parsed with no entity expanded and
nothing fetched, since an uploaded package is anybody's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataFormatError

#: the most an Office package's parts (a Word document's, a PowerPoint deck's) may unpack to: a .docx
#: is a zip package, so a few hundred kilobytes can unpack to gigabytes, which python-docx reads whole (a 375 KB upload held 100 MB of
#: paragraphs and kept an indexing job busy for over ten minutes). A long real document's XML (its
#: text and styles) is a few megabytes; its pictures are stored compressed already, so they unpack
#: to about the file's size, and past :data:`MAX_DOCX_BYTES` only a package that unpacks to more
#: than :data:`MAX_DOCX_RATIO` times its size is refused
MAX_DOCX_XML_BYTES = 64 * 2**20
MAX_DOCX_BYTES = 512 * 2**20
MAX_DOCX_RATIO = 20


def check_unpacked_size(path: Path, what: str = "a Word document") -> None:
    """Refuse an Office package (``what``: a Word document, a PowerPoint deck) that unpacks to more
    than it may (:data:`MAX_DOCX_XML_BYTES`), before anything is unpacked. The sizes are those the package declares, which :mod:`zipfile` holds
    each part to when it is read."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as package:
            parts = package.infolist()
    except (zipfile.BadZipFile, OSError):
        return  # python-docx says what is wrong with it
    xml = sum(p.file_size for p in parts if p.filename.lower().endswith((".xml", ".rels")))
    total = sum(p.file_size for p in parts)
    if xml > MAX_DOCX_XML_BYTES or (total > MAX_DOCX_BYTES and total > MAX_DOCX_RATIO * path.stat().st_size):
        raise DataFormatError(path, f"not read: it unpacks to {xml / 2**20:,.0f} MB of XML and {total / 2**20:,.0f} MB in all, "
                                    f"more than {what} is read to ({MAX_DOCX_XML_BYTES // 2**20} MB of XML; "
                                    f"{MAX_DOCX_BYTES // 2**20} MB in all where that is over {MAX_DOCX_RATIO} times "
                                    "the file's size); split it, or save its text as .txt")


def parse_xml(data: bytes) -> Any:
    """A package part's XML tree (lxml), with no entity expanded and nothing fetched: the parts of
    an uploaded book or document are anybody's."""
    from lxml import etree

    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"


def package_part(path: Path, name: str) -> bytes | None:
    """A part of a zip package by its path (an OpenDocument's picture, "Pictures/1000.png"), None where
    it holds none or the part is larger than a picture read by OCR may be."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as package:
            info = package.getinfo(name)
            return package.read(info) if info.file_size <= MAX_PICTURE_PART_BYTES else None
    except (KeyError, zipfile.BadZipFile, OSError, NotImplementedError):
        return None


#: the largest picture part of a document read by OCR (a page scanned at 600 dpi in colour is a few tens of MB)
MAX_PICTURE_PART_BYTES = 256 << 20
