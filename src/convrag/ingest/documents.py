"""Read any file convrag knows into a :class:`Document` (title, text, headings, address kept): the
format follows the suffix (:data:`SUFFIXES`), and each format is read by the module of its kind
beside this one (:mod:`.pdf`, :mod:`.word`, :mod:`.html_pages`, :mod:`.mail`, :mod:`.archives` ...).
Text formats are decoded here (:mod:`.charsets`); a folder is read file by file, one bad file
named and passed over rather than stopping the rest (:func:`iter_documents`)."""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..characters import readable_name
from ..errors import DataFormatError
from . import pandoc
from .archives import libarchive_to_text, tar_to_text, zip_to_text
from .charsets import decode_text, page_text
from .docs_builds import BuildFile, build_files
from .epub import epub_to_text
from .formats import FORMAT_NAMES, PICTURE_KINDS, SUFFIXES, Document, Heading, document_stem, document_suffix, no_text_reason
from .html_pages import html_to_text, saved_page
from .mail import eml_to_text, mbox_to_text, msg_to_text
from .markdown import markdown_to_text
from .numbered_headings import numbered_headings
from .opendocument import odp_to_text, ods_to_text, odt_to_text
from .pdf import pdf_to_text
from .pictures import picture_to_text, tiff_to_text
from .powerpoint import ppt_to_text, pptx_to_text
from .restructuredtext import rst_to_text
from .rtf import rtf_to_text
from .tables import table_to_text, xls_to_text, xlsx_to_text
from .titles import first_line_stands_apart, made_name, name_as_title, pdf_title, title_line
from .twins import Twin, sort_twins, twin_reason
from .typesetting import typeset_letters, unwrap_lines
from .word import doc_to_text, docx_to_text

__all__ = ["SUFFIXES", "Document", "Heading", "decode_text", "document_paths", "document_stem", "document_suffix",
           "iter_documents", "no_text_reason", "page_text", "read_bytes", "read_document", "unwrap_lines"]

#: the kinds of file read through pandoc
_PANDOC_KINDS = frozenset(pandoc.READERS)


#: what a contained file's own name may keep in the temporary file's: no separator, no control character
_CONTAINED_NAME = re.compile(r"[^\w .,()+-]")


def read_bytes(data: bytes, name: str, suffix: str = "", **given: Any) -> Document:
    """:func:`read_document` of bytes that are no file of their own (an archive's member, a mail's
    attachment, a page fetched from the web): written to a private temporary file under ``name``
    with ``suffix`` (else ``name``'s own), which OCR's progress and a library's message show. ``given``:
    :func:`read_document`'s ``doc_id``, ``url`` and ``charset``; its ``name`` is ``name``'s last part."""
    suffix = suffix or document_suffix(name)
    with tempfile.TemporaryDirectory(prefix="convrag-read-") as folder:
        stem = document_stem(name) if document_suffix(name) == suffix else Path(name).name
        file = Path(folder) / ((_CONTAINED_NAME.sub("_", stem)[:100] or "file") + suffix)
        file.write_bytes(data)
        return read_document(file, name=Path(name).name, **given)


#: the formats read from a file by their own library rather than decoded as text
_PACKAGES = {"pdf": pdf_to_text, "docx": docx_to_text, "pptx": pptx_to_text, "xlsx": xlsx_to_text, "epub": epub_to_text,
             "odt": odt_to_text, "ods": ods_to_text, "odp": odp_to_text, "rtf": rtf_to_text, "doc": doc_to_text,
             "xls": xls_to_text, "eml": eml_to_text, "msg": msg_to_text, "mbox": mbox_to_text,
             "ppt": ppt_to_text, "tiff": tiff_to_text, "picture": picture_to_text, "zip": zip_to_text,
             "tar": tar_to_text, "tar.zst": libarchive_to_text, "7z": libarchive_to_text, "rar": libarchive_to_text}


#: how an HTML template opens (``{% extends "base.html" %}``, ``{# a comment #}``, ``{{ content }}``), blank lines aside:
#: a docs theme's override (MkDocs' ``overrides/main.html``), a web app's ``templates/``. Read as a page,
#: its tags and the scraps between them ("{% block announce %} ... {% endblock %}") were a passage of their own.
_TEMPLATE_OPENING = re.compile(r"\A\ufeff?\s*\{[%#{]")


def read_document(path: Path, doc_id: str | None = None, url: str | None = None, name: str | None = None,
                  charset: str = "") -> Document:
    """Read one file; the format follows the suffix. ``url`` overrides the file's own address;
    ``name`` (e.g. an upload's original file name) gives the title of a document without one;
    ``charset`` is what a web server said an HTML page is written in (:func:`page_text`)."""
    path = Path(path)
    fallback = name_as_title(readable_name(document_stem(name or path.name)))
    kind = SUFFIXES.get(document_suffix(path))
    if kind is None:
        raise DataFormatError(path, f"unsupported document type {path.suffix!r} (expected {', '.join(sorted(SUFFIXES))})")
    if kind in _PACKAGES:
        try:
            text, title, headings = _PACKAGES[kind](path)
        except (DataFormatError, MemoryError):
            raise
        except Exception as exc:  # what a damaged file raises from deep in zipfile, zlib, lxml or a format library
            raise DataFormatError(path, f"not a readable {FORMAT_NAMES[kind]}: it looks damaged "
                                        f"({type(exc).__name__}: {str(exc)[:200]})") from None
        if not title and kind == "pdf":
            title = pdf_title(text, headings, fallback)
        doc_id = doc_id or readable_name(document_stem(path))
        if not headings and kind in _UNMARKED:
            headings = _numbered(text)
        return Document(doc_id=doc_id, title=title or fallback, text=text, url=url or path.resolve().as_uri(),
                        headings=_typeset(headings))
    data = path.read_bytes()
    raw = page_text(data, path, charset) if kind == "html" or charset else decode_text(data, path)
    doc_id = doc_id or readable_name(document_stem(path))
    url = url or path.resolve().as_uri()
    headings: tuple[Heading, ...] = ()
    if kind in ("html", "mhtml"):  # a web page, or one saved whole by a browser (:func:`saved_page`)
        if kind == "html" and _TEMPLATE_OPENING.match(raw):
            raise DataFormatError(path, "an HTML template (Jinja, Django or Liquid: it opens with a template tag), "
                                        "not a page: a program fills it in before a browser shows it")
        text, title, canonical, headings = html_to_text(saved_page(raw, path) if kind == "mhtml" else raw)
        url = _canonical(url, canonical)
    elif kind in ("markdown", "mdx"):
        text, title, headings = markdown_to_text(raw, mdx=kind == "mdx")
    elif kind == "notebook":  # its Markdown cells, its code and what the code printed (:mod:`.notebooks`)
        from . import notebooks

        text, title, headings = markdown_to_text(notebooks.to_markdown(raw, path))
    elif kind == "transcript":  # captions, a meeting's transcript: a paragraph a speaker's turn (:mod:`.transcripts`)
        from . import transcripts

        text, title = transcripts.to_text(raw, path), ""
    elif kind in _PANDOC_KINDS:  # LaTeX, Org, AsciiDoc, MediaWiki: pandoc's HTML of it (:mod:`.pandoc`)
        text, title, _, headings = html_to_text(pandoc.to_html(raw, kind, path))
    elif kind == "rst":
        text, title, headings = rst_to_text(raw, path)
    elif kind == "csv":
        text, title = table_to_text(raw, path), ""
    else:
        text, title = unwrap_lines(typeset_letters(raw.strip())), ""
        if made_name(fallback) and first_line_stands_apart(raw):  # "club.txt" opening "Greenbay Sailing Club membership"
            title = title_line(text)
        headings = _numbered(text)
    if kind != "text":  # a page's "&shy;" is one only once parsed
        text, title = typeset_letters(text), typeset_letters(title)
    return Document(doc_id=doc_id, title=title or fallback, text=text, url=url, headings=_typeset(headings))


def _canonical(url: str, canonical: str) -> str:
    """A page's address for citations: its own canonical one where it names one, made whole against
    the address it was fetched from where it is written relative to it ("/guide/install"); a
    relative one of a page read from a file, which no citation could follow, leaves the file's."""
    if not canonical:
        return url
    if urlsplit(canonical).scheme:
        return canonical
    return urljoin(url, canonical) if urlsplit(url).scheme in ("http", "https") else url


#: the formats whose files mark no headings of their own (a PDF may, by its bookmarks): their numbered
#: section lines are taken for headings (:mod:`.numbered_headings`)
_UNMARKED = frozenset({"pdf", *PICTURE_KINDS})


def _numbered(text: str) -> tuple[Heading, ...]:
    """The numbered section lines of a text that marks no headings ("1. Safety", "3.2 Filters"), as headings."""
    return tuple(Heading(h.level, h.text) for h in numbered_headings(text))


def _typeset(headings: tuple[Heading, ...]) -> tuple[Heading, ...]:
    """The headings with their letters as the text's (:func:`typeset_letters`), so that each reads as its line."""
    return tuple(h._replace(text=typeset_letters(h.text)) for h in headings)


def _walk(folder: Path, skipped: list[str] | None) -> list[Path]:
    """Every path under ``folder``, in path order, through links to folders too: ``rglob`` passed
    them over, so the documents of a linked folder were left out without a word. Each real folder is
    read once; a link to one read already (a link back up the tree would loop) is recorded in
    ``skipped``, when given."""
    seen = {folder.resolve()}
    entries: list[Path] = []
    for root, folders, files in os.walk(folder, followlinks=True):
        kept = []
        for name in sorted(folders):
            path = Path(root) / name
            real = path.resolve()
            if real in seen:
                if skipped is not None:
                    skipped.append(f"{readable_name(path.relative_to(folder).as_posix())}: a link to "
                                   f"{readable_name(str(real))}, a folder read already")
                continue
            seen.add(real)
            kept.append(name)
        folders[:] = kept
        entries += [Path(root) / name for name in (*kept, *files)]
    return sorted(entries)


def document_paths(folder: Path) -> list[Path]:
    """The files under ``folder`` that :func:`iter_documents` reads, in its order: what a progress bar
    counts before the reading begins (a folder of scans read by OCR takes minutes)."""
    files = [p for p in _walk(Path(folder), None) if p.is_file()]
    left_out = {file.path for file in build_files(files)}
    return [p for p in files if document_suffix(p) in SUFFIXES and p not in left_out]


def _one_of_each(stem: str, group: list[Document], skipped: list[str] | None, twins: list[Twin] | None) -> list[Document]:
    """The documents of one name but for their suffix, each held by another in words left out
    (:func:`sort_twins`) and recorded in ``twins``, else in ``skipped``, when given. One kept has the
    name alone for its id."""
    found = sort_twins(group)
    if twins is not None:
        twins += found.left_out
    elif skipped is not None:
        skipped += [f"{twin.left_out.doc_id}: {twin_reason(twin)}" for twin in found.left_out]
    return [replace(found.kept[0], doc_id=stem)] if len(found.kept) == 1 else found.kept


def iter_documents(folder: Path, skipped: list[str] | None = None, unread: Counter[str] | None = None,
                   advance: Callable[[int], None] | None = None, twins: list[Twin] | None = None,
                   built: list[BuildFile] | None = None) -> Iterator[Document]:
    """Every supported file under ``folder``, in path order; ids are paths relative to the folder,
    without the suffix unless another document there has the same path but for its suffix.
    Of such files, one whose words another holds is the same document in another format (a page's
    Markdown source beside its HTML) and is left out (:mod:`.twins`), recorded in ``twins`` when
    given (a folder of built docs leaves out one file a page: a report says so in one line), else in ``skipped``.
    The files a docs build writes beside its pages (Sphinx's copies of their sources, its index pages:
    :mod:`.docs_builds`) are left out too, and recorded in ``built`` when given.
    A file that cannot be read raises :class:`DataFormatError`, or, when ``skipped`` is given, is
    left out and recorded there ("path: reason"), so that one bad file does not stop a folder. A
    file that reads but holds no text (an empty file, a scanned PDF) is recorded there too, since it
    would add nothing to the collection and the user should hear why (the service's uploads say so),
    and so is a link to a document whose target is gone.
    ``unread``, when given, counts the files of other types by suffix, in the same walk of the
    folder: a user who put a .xlsx or .json there should hear that it was not indexed, not find it
    missing later. Hidden files and folders (.git, .DS_Store) are left out of that count.
    ``advance``, when given, is called with 1 after each file of :func:`document_paths`, read or not."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataFormatError(folder, "not a folder")
    entries = _walk(folder, skipped)
    files = [p for p in entries if p.is_file()]
    for link in (p for p in entries if document_suffix(p) in SUFFIXES and p.is_symlink() and not p.exists()):
        # a link whose target was moved or deleted: not a file, so it was passed over without a word
        relative = readable_name(link.relative_to(folder).as_posix())
        reason = f"a link to {readable_name(os.readlink(link))}, which does not exist"
        if skipped is None:
            raise DataFormatError(link, reason)
        skipped.append(f"{relative}: {reason}")
    if unread is not None:
        unread.update(readable_name(document_suffix(p)) or "(no suffix)" for p in files if document_suffix(p) not in SUFFIXES
                      and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    # what a docs build writes beside its pages: copies of their sources, index pages made from them
    generated = build_files(files)
    if built is not None:
        built += [file for file in generated if document_suffix(file.path) in SUFFIXES]
    left_out = {file.path for file in generated}
    documents = [p for p in files if document_suffix(p) in SUFFIXES and p not in left_out]
    # a report.pdf beside its report.docx: without their suffixes both were document "report", one
    # document to the citations, and where two passages began and ended alike the build failed on a
    # duplicate passage id; such files keep their suffix in their ids, unless one holds the others' words
    stems = Counter(p.relative_to(folder).with_name(document_stem(p)).as_posix() for p in documents)
    to_read = Counter(stems)  # how many of each name's files are left to read
    pending: dict[str, list[Document]] = {}  # the documents read of a name that others share
    for path in documents:
        relative = path.relative_to(folder)
        shown = readable_name(relative.as_posix())
        stem = relative.with_name(document_stem(path)).as_posix()
        to_read[stem] -= 1
        try:
            document: Document | None = read_document(path, doc_id=readable_name(relative.as_posix() if stems[stem] > 1 else stem))
        except DataFormatError as exc:
            if skipped is None:
                raise
            skipped.append(f"{shown}: {exc.reason}")
            document = None
        finally:
            if advance is not None:
                advance(1)
        if document is not None and skipped is not None and not document.text.strip():
            skipped.append(f"{shown}: {no_text_reason(path)}")
            document = None
        if stems[stem] == 1:
            if document is not None:
                yield document
            continue
        group = pending.setdefault(stem, [])
        group += [document] if document is not None else []
        if not to_read[stem]:  # each of the name's files read: one that another holds is left out
            yield from _one_of_each(readable_name(stem), pending.pop(stem), skipped, twins)
