"""EPUB books: the pages of their spine in reading order, each through :mod:`.html_pages`, titled by
the package's Dublin Core title."""

from __future__ import annotations

from pathlib import Path

from ..errors import DataFormatError
from .charsets import decode_text
from .formats import Heading
from .html_pages import html_to_text
from .packages import DC_TITLE, check_unpacked_size, parse_xml
from .titles import first_heading, own_title
from .typesetting import typeset_letters

_OPF = "{http://www.idpf.org/2007/opf}"


_CONTAINER_ROOTFILE = "{urn:oasis:names:tc:opendocument:xmlns:container}rootfile"
#: the media types of an EPUB's reading-order items that are pages (its images and styles are not)
_EPUB_PAGES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})


def epub_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an EPUB book (2 or 3): its pages in reading order (the package's spine, its
    "linear=no" asides left out), each read as an HTML page is, a blank line between them; the
    title is the book's own (``dc:title``), else its first top-level heading. A zip without the container and package files an EPUB
    must have is a :class:`DataFormatError` saying so."""
    import posixpath
    import zipfile
    from urllib.parse import unquote

    from lxml import etree

    check_unpacked_size(path, "an EPUB book")
    try:
        with zipfile.ZipFile(path) as book:
            container = parse_xml(book.read("META-INF/container.xml"))
            rootfile = container.find(f".//{_CONTAINER_ROOTFILE}")
            if rootfile is None or not rootfile.get("full-path"):
                raise DataFormatError(path, "not a readable EPUB book: its container names no package file")
            package_path = rootfile.get("full-path")
            package = parse_xml(book.read(package_path))
            items = {item.get("id"): item for item in package.iter(f"{_OPF}item")}
            title = next((" ".join("".join(t.itertext()).split()) for t in package.iter(DC_TITLE)), "")
            pages = []
            headings: list[Heading] = []
            for ref in package.iter(f"{_OPF}itemref"):
                item = items.get(ref.get("idref"))
                if item is None or ref.get("linear") == "no" or item.get("media-type") not in _EPUB_PAGES:
                    continue
                href = posixpath.normpath(posixpath.join(posixpath.dirname(package_path), unquote(item.get("href", ""))))
                text, _, _, marked = html_to_text(decode_text(book.read(href), path))
                if text.strip():
                    pages.append(text.strip())
                    headings += marked
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(path, f"not a readable EPUB book ({exc})") from None
    except KeyError as exc:  # a part the container or the package names is not in the zip
        said = str(exc.args[0])
        raise DataFormatError(path, f"not a readable EPUB book: {said[:1].lower()}{said[1:]}") from None
    except etree.XMLSyntaxError as exc:
        raise DataFormatError(path, f"not a readable EPUB book: damaged XML ({exc})") from None
    return typeset_letters("\n\n".join(pages)), typeset_letters(own_title(title) or first_heading(headings)), tuple(headings)
