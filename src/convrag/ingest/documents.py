"""Read plain text, Markdown, reStructuredText, HTML, CSV, PDF, Word (.docx, and .doc through :mod:`.msdoc`),
OpenDocument (.odt, .ods, .odp), RTF, PowerPoint (.pptx, and .ppt through :mod:`.msppt`), Excel (.xlsx, .xls),
EPUB, e-mail (.eml, .msg, .mbox), archives (.zip, .tar and its compressed kinds), scans and pictures (by
:mod:`.ocr`), and the formats of :data:`SUFFIXES` read through the modules beside this one, into
:class:`Document` values (title, text, url kept)."""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import datetime
import functools
import io
import os
import re
import tempfile
import threading
import time
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from bs4 import BeautifulSoup, CData, NavigableString, Tag
from markdown_it import MarkdownIt

from ..characters import readable_name, whole_characters
from ..errors import DataFormatError
from . import pandoc
from .hyphenation import BREAK, mend
from .numbered_headings import numbered_headings

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
    ".tbz2": "tar", ".tar.bz2": "tar", ".txz": "tar", ".tar.xz": "tar", ".7z": "7z", ".rar": "rar",
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
_PICTURE_KINDS = frozenset({"tiff", "picture"})
#: the kinds of file read through pandoc
_PANDOC_KINDS = frozenset(pandoc.READERS)


#: elements whose line breaks are the text's own (a browser keeps them)
_PREFORMATTED = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})
_SPACES = re.compile(r"\s+")

#: elements a browser shows as blocks of their own: a line ends before and after each (a disclosure's
#: <summary>, a figure's caption and an aside ran into the text beside them: "Winter rules Boats leave")
_BLOCK_TAGS = frozenset({
    "p", "div", "li", "br", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
    "section", "article", "table", "ul", "ol", "dl", "dd", "dt", "hr", "main", "header", "footer", "aside",
    "address", "figure", "figcaption", "caption", "details", "summary", "fieldset", "legend", "center", "menu",
    "hgroup",
})
#: the elements whose header and footer are part of the text: an article's, a section's, the main content's
_SECTIONS = ["article", "section", "main"]
#: ARIA roles of what a page shows around its text, as <nav> is: its menus and its search box; and
#: of its header and footer, which are part of an article's text as <header> and <footer> are
_ARIA_NOT_TEXT = ("navigation", "search")
_ARIA_FRAME = ("banner", "contentinfo")
_ROLE_ATTRIBUTE = re.compile(r"\brole\s*=", re.IGNORECASE)
#: a table's cells: a row reads as one line, "Standard | 0.02 dollars per GB" (each cell on a line of
#: its own parted a plan from its price once the answer's compression kept some lines and not others)
_CELLS = frozenset({"td", "th"})


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
    doc_id: str
    title: str
    text: str
    url: str = ""
    #: the marked headings, in reading order (none for plain text, PDF, RTF, CSV and Excel, whose
    #: readers know no heading for sure): what names the section a passage begins in
    #: (:func:`convrag.ingest.chunking.chunk_document`)
    headings: tuple[Heading, ...] = ()


#: an HTML heading element and its level
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}


def _html_to_text(html: str) -> tuple[str, str, str, tuple[Heading, ...]]:
    """Visible text, title, canonical url and headings of an HTML page."""
    soup = BeautifulSoup(html, "html.parser")
    # what a page shows around its text, and what it draws or asks for rather than says: an inline
    # icon's <svg><title> became the title of a page without one, and a drop-down list of countries
    # ran into the sentence after it ("AfghanistanAlbaniaSubmitBoats pay 5 dollars")
    for tag in soup(["script", "style", "noscript", "template", "nav", "svg", "select", "button"]):
        tag.decompose()
    # what ARIA marks as the same (Sphinx's and Read the Docs' sidebars and search box are a
    # <div role="navigation">, not a <nav>: "Previous topic", "Quick search" on every page), and as a
    # page's header and footer; one walk more, for pages that mark roles
    roles = soup.find_all(attrs={"role": [*_ARIA_NOT_TEXT, *_ARIA_FRAME]}) if _ROLE_ATTRIBUTE.search(html) else []
    for tag in roles:
        if not tag.decomposed and tag.get("role") in _ARIA_NOT_TEXT:
            tag.decompose()
    # the page's own header and footer (the site's banner and fine print) go; an article's or a
    # section's stay: they hold its heading ("<article><header><h1>Mooring fees</h1>"), which went
    # with them, and the page lost its title and its first line
    for tag in soup(["header", "footer"]) + [tag for tag in roles if not tag.decomposed and tag.get("role") in _ARIA_FRAME]:
        if not tag.decomposed and tag.find_parent(_SECTIONS) is None and tag.find_parent(attrs={"role": "main"}) is None:
            tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if _NO_TITLE.fullmatch(title) or _FILE_NAME.fullmatch(title):  # Dreamweaver's "Untitled Document", "index.html"
        title = ""  # the first heading names the page instead
    canonical = soup.find("link", rel="canonical")
    url = str(canonical.get("href", "")) if canonical else ""
    if soup.title:
        soup.title.decompose()
    if _TABLE_TAG.search(html):  # a walk of the whole tree, for pages that have a table
        _unbox_layout_tables(soup)
    root = _main_content(soup) if _MAIN_TAG.search(html) else soup
    lines = [_shown_line(line) for line in _visible_text(root).splitlines()]
    text = "\n".join(line for line in lines if line.strip())
    if not title:
        heading = root.find(["h1", "h2"])
        title = heading.get_text(" ", strip=True) if heading else ""
    # a heading's line as the text reads it: its strings run together, as inline elements do there
    headings = tuple(Heading(_HEADING_TAGS[h.name], " ".join(h.get_text().split())) for h in root.find_all(list(_HEADING_TAGS)))
    return text, title, url, tuple(h for h in headings if h.text)


#: a page that marks its main content: ``<main>`` or ``role="main"``
_MAIN_TAG = re.compile(r"<main\b|\brole\s*=\s*[\"']?main\b", re.IGNORECASE)
#: the least share of a page's text its marked main content must hold to be read alone
MAIN_SHARE = 0.25


def _main_content(soup: Any) -> Any:
    """The element a page marks as its main content (one ``<main>``, or one element of ``role="main"``,
    the outermost where they nest), read alone: what a documentation site or a blog shows around it
    that is no ``<nav>``, header or footer (a "Skip to main content" link, a sidebar's table of
    contents in an ``<aside>``, a cookie notice, "Was this page helpful?") is left out, as a
    browser's reader view leaves it. The whole page where it marks none, several, or one holding
    under :data:`MAIN_SHARE` of its text (a ``<main>`` around a heading alone)."""
    marked = soup.find_all("main") + soup.find_all(attrs={"role": "main"})
    outermost = [tag for tag in dict.fromkeys(marked) if not any(other in tag.parents for other in marked if other is not tag)]
    if len(outermost) != 1:
        return soup
    whole = len(soup.get_text(" ", strip=True))
    return outermost[0] if whole and len(outermost[0].get_text(" ", strip=True)) >= MAIN_SHARE * whole else soup


def _visible_text(root: Tag) -> str:
    """The text of ``root``'s strings (as ``get_text()`` takes them: no comments or declarations),
    with a line break where each block element begins and ends; inline elements (code, a, em) stay
    inside their sentence. One walk of the tree: appending the line breaks to the tree instead walked each block's
    whole subtree, so nested blocks took quadratic time (25 s for 25,000 nested divs, a 250 KB page).

    White space in the source is a space, as a browser shows it, but in preformatted text (``pre``,
    and so a Markdown code block): a paragraph written over several lines, as Markdown and HTML
    sources are, was kept as several lines, and the sentence splitter ended a sentence at each. Each
    line of preformatted text opens with :data:`_PRE_LINE`, so that its indentation is kept."""
    parts: list[str] = []
    end = object()  # where a block element ends
    end_pre = object()  # where a preformatted element ends
    between_cells = object()  # between two cells of a table's row
    end_cell = object()  # where a cell ends
    preformatted = 0  # how many preformatted elements the walk is in
    in_cell = 0  # how many table cells the walk is in: their blocks end with a space, the row with the line
    stack: list[object] = list(reversed(root.contents))
    while stack:
        node = stack.pop()
        if node is end:
            parts.append(" " if in_cell else "\n")
        elif node is end_cell:
            in_cell -= 1
        elif node is end_pre:
            preformatted -= 1
            parts.append(" " if in_cell else "\n")
        elif node is between_cells:
            parts.append(" | ")
        elif isinstance(node, Tag):
            if (node.name in _PREFORMATTED or node.name in _BLOCK_TAGS) and node.name != "br" and parts \
                    and not parts[-1].endswith(("\n", " ")):
                parts.append(" " if in_cell else "\n")  # a block begins a line: "Kayaks stay.<aside>" ran into the aside
            if node.name in _PREFORMATTED:
                preformatted += 1
                stack.append(end_pre)
                parts.append(_PRE_LINE)
            elif node.name in _BLOCK_TAGS:
                stack.append(end)
            elif node.name in _CELLS:
                in_cell += 1
                stack.append(end_cell)
            if node.name == "table" and not in_cell and not preformatted and _plain_table(node):
                parts.append(_html_table(node))  # a table of its own (none inside it): rows named by its headings
                stack.append(end)
                continue
            if node.name == "tr":  # a row is a line, its cells joined as a Word table's are
                first = next((child for child in node.contents if isinstance(child, Tag) and child.name in _CELLS), None)
                for child in reversed(node.contents):
                    stack.append(child)
                    if child is not first and isinstance(child, Tag) and child.name in _CELLS:
                        stack.append(between_cells)
                continue
            stack.extend(reversed(node.contents))
        elif type(node) in (NavigableString, CData):
            parts.append(str(node).replace("\n", "\n" + _PRE_LINE) if preformatted else _SPACES.sub(" ", str(node)))
    return "".join(parts)


#: opens each line of preformatted text in :func:`_visible_text`'s output (a private-use character)
_PRE_LINE = "\ue000"


def _shown_line(line: str) -> str:
    """A line of :func:`_visible_text` as it reads: a preformatted line (code, a YAML file) with its
    indentation and spaces, which had gone ("def f():" / "return 1"); another with its white space one space."""
    before, mark, code = line.partition(_PRE_LINE)
    if mark and not before.strip():
        return code.replace(_PRE_LINE, "").rstrip()
    return " ".join(line.replace(_PRE_LINE, "").split())


_TABLE_TAG = re.compile(r"<table", re.IGNORECASE)
#: the parts of a table that belong to it alone (a table inside one of its cells has its own)
_TABLE_PARTS = ["tr", "td", "th", "thead", "tbody", "tfoot", "caption"]


def _unbox_layout_tables(root: Tag) -> None:
    """Each table that lays a page out rather than holding data made plain blocks, as a browser shows
    its cells' paragraphs and headings: lines of their own. Pages laid out so (older sites, HTML
    e-mails, intranet pages) were read as one table: the whole page one line, its headings and
    paragraphs joined by spaces, and the data tables inside no longer named. A layout table says so
    (``role="presentation"``), holds another table, has a heading in a cell, or is one cell, a box.
    A data table inside one is then read as a table of its own, its rows named by its headings.
    Each element is looked at once, for the table it is nearest in: bs4's ``find`` walks a tag's
    whole subtree, and tables nest deep."""
    parts: dict[int, list[Tag]] = {}  # each table's own rows and cells
    boxed: set[int] = set()  # tables with a table or a heading inside them
    tables: list[Tag] = []
    for found in root.find_all(["table", *_TABLE_PARTS, *_HEADING_TAGS]):
        if found.name == "table":
            tables.append(found)
        if (table := found.find_parent("table")) is None:
            continue
        if found.name in _TABLE_PARTS:
            parts.setdefault(id(table), []).append(found)
        else:  # a table, or a heading, in one of its cells
            boxed.add(id(table))
    for table in tables:
        own = parts.get(id(table), [])
        if (table.get("role") in ("presentation", "none") or id(table) in boxed
                or sum(1 for part in own if part.name in _CELLS) == 1):
            for part in [table, *own]:
                part.name = "div"


def _plain_table(table: Tag) -> bool:
    """Whether a table is read by :func:`_html_table`: no table inside it, and all its text in its
    cells or its caption (text a page put straight into a <table> is read by the walk, as a browser
    shows it, outside the table)."""
    return table.find("table") is None and table.find("tr") is not None and all(
        isinstance(text.parent, Tag) and text.find_parent(["td", "th", "caption"]) is not None
        for text in table.find_all(string=True) if text.strip() and type(text) in (NavigableString, CData))


def _html_table(table: Tag) -> str:
    """A table's text, a row to a line (:func:`_table_lines`), each cell named by its column's
    heading where the first row is all ``th`` cells, as a CSV file's are: "Plan: Lite | Price: Free".
    A row read alone (as the answer's compression keeps it) then still says what each value is. A
    caption comes first, and so does a title row of one cell across the table above the headings; a
    cell spanning columns is read once, one spanning rows in each of them."""
    lines = [" ".join(caption.get_text(" ").split())] if (caption := table.find("caption")) else []
    rows: list[list[str]] = []
    headed: list[bool] = []  # whether each row is all th cells
    down: dict[int, tuple[str, int]] = {}  # a column's cell spanning rows: its text, and how many rows it has left
    # a footer's rows (totals) are read last, where a browser shows them, though HTML may write them first
    trs = table.find_all("tr")
    for tr in [*(tr for tr in trs if tr.parent.name != "tfoot"), *(tr for tr in trs if tr.parent.name == "tfoot")]:
        cells = tr.find_all(["td", "th"], recursive=False)
        headed.append(bool(cells) and all(cell.name == "th" for cell in cells))
        row: list[str] = []
        given = iter(cells)
        cell = next(given, None)
        while cell is not None or any(column >= len(row) for column in down):
            column = len(row)
            if column in down:
                text, left = down.pop(column)
                if left > 1:
                    down[column] = (text, left - 1)
                row.append(text)
            elif cell is None:
                row.append("")
            else:
                text = " ".join(cell.get_text(" ").split())
                if (rowspan := _span(cell, "rowspan")) > 1:
                    down[column] = (text, rowspan - 1)
                row += [text] + [""] * (_span(cell, "colspan") - 1)
                cell = next(given, None)
        rows.append(row)
    while len(rows) > 2 and sum(1 for cell in rows[0] if cell) == 1:  # a title row across the table, as a caption
        lines.append(next(cell for cell in rows.pop(0) if cell))
        headed.pop(0)
    return "\n".join(lines + [_table_lines(rows, bool(headed) and headed[0])]) + "\n"


def _span(cell: Tag, name: str) -> int:
    """A cell's ``colspan`` or ``rowspan``, 1 where it is missing or no number, at most 1,000."""
    try:
        return min(max(int(str(cell.get(name, 1)).strip() or 1), 1), 1000)
    except ValueError:
        return 1


#: letters a typesetter joined into one character, and characters that print nothing: "ﬁle" and
#: "oﬃce" (a PDF's ligatures) are no words "file" and "office" to BM25, the embedding model's
#: tokenizer or the citation checks, and a soft hyphen or a zero-width space splits a word in two
_TYPESET = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
                          "\ufb06": "st", "\xad": None, "\u200b": None, "\u2060": None, "\ufeff": None})

_TYPESET_FOUND = re.compile("[" + "".join(map(chr, _TYPESET)) + "]")


def typeset_letters(text: str) -> str:
    """``text`` with ligatures as their letters and invisible characters gone; a soft hyphen that
    ends a line (a hyphenation point) joins the line to the next."""
    return text.replace("\xad\n", "").translate(_TYPESET) if _TYPESET_FOUND.search(text) else text


#: a line a sentence goes on from ends in a letter, a digit, a comma, a semicolon, a colon, a closing
#: bracket or a percent sign, or in a word hyphenated at its end ("renew-" / "al", "self-" / "service":
#: joined, the hyphen then kept or not by :mod:`.hyphenation`). Lower-case letters,
#: commas and semicolons alone left LibreOffice's PDF of a manual broken at "a 25 A type C" /
#: "breaker.", "for 30" / "minutes." and "a legionella cycle:" / "the immersion heater" ...
_GOES_ON = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,;:)%")
#: ... and the next line goes on with a lower-case letter, a number that is no list item's ("up to"
#: / "10 metres", not "2. Pay at the desk") or a bracket that is no list item's ("(ASN.1, as", not "(b) ")
_GOES_ON_WITH = re.compile(r"(?:[a-z]|\d(?!\d*[.)](?:\s|$))|\((?!\w{1,3}\)))")
#: the shortest line a sentence is taken to wrap from: a wrapped line fills its column (a PDF's
#: column, a text file's 72 characters); a list of short lower-case items ("apples" / "pears") stays
WRAPPED_CHARS = 30


def unwrap_lines(text: str) -> str:
    """``text`` with the line breaks inside its sentences made spaces. A PDF's text is its visual
    lines, and the sentence splitter (pysbd) ends a sentence at every line break: the answer's
    compression, which keeps a passage's best sentences, then kept half-sentences ("costs 130
    dollars for adults and"), and the citation checks judged lines, not sentences. A heading, a
    list item or a sentence's end keeps its line. A word hyphenated over the line end is made whole
    again where it is one word, not a compound (:func:`.hyphenation.mend`). Linear in the text: a
    joined line is put together once, from its pieces."""
    pieces: list[str] = []  # the text so far: pieces, with "\n" between its lines
    before = ""  # the line before, as written
    for line in text.split("\n"):
        said = before.rstrip()
        # an indented line (code in a text file, a paragraph's first line) keeps its line break
        if pieces and len(said) >= WRAPPED_CHARS and not before[:1].isspace() and _GOES_ON_WITH.match(line):
            end = said[-2:]
            hyphenated = (end[-1:] == "-" and end[:1].islower() and end[:1].isascii()) or end[-1:] == BREAK
            if hyphenated or end[-1:] in _GOES_ON:
                pieces[-1] = pieces[-1].rstrip()
                if hyphenated:
                    pieces[-1] = pieces[-1][:-1] + BREAK
                pieces.append(line if hyphenated else f" {line}")
                before = line
                continue
        if pieces:
            pieces.append("\n")
        pieces.append(line)
        before = line
    return mend("".join(pieces))


#: what an authoring tool writes as the title of a document whose author gave none
_NO_TITLE = re.compile(r"untitled(?: document)?|(?:new )?document ?\d*|no title|title|slide ?\d+|"
                       r"(?:powerpoint )?presentation ?\d*|\(?anonymous\)?|none|unknown(?: title)?|-+", re.IGNORECASE)
#: the program that made a PDF, in front of the file's name ("Microsoft Word - minutes.docx")
_TOOL_PREFIX = re.compile(r"^microsoft (?:office )?(?:word|powerpoint|excel) - ", re.IGNORECASE)
_FILE_NAME = re.compile(r"[^\\/]+\.(?:docx?|docm|dotx?|rtf|odt|txt|pptx?|xlsx?|pdf|indd|tex|dvi|md|html?|pages)$", re.IGNORECASE)


def own_title(title: str) -> str:
    """A title from a file's metadata, or "" where the metadata holds what a tool wrote in place of
    one: "Microsoft Word - harbour_rules.docx" (Word's PDF printer) names the file it was made from,
    which becomes "harbour rules"; "Untitled", "Document1" or "Slide 1" name nothing, and the
    document is named by its own file name instead (:func:`read_document`). Citations show the title,
    so "[1] Microsoft Word - Document1" told a reader nothing."""
    title = _TOOL_PREFIX.sub("", " ".join(title.split()))
    name = _FILE_NAME.search(title)
    if name and (name.start() == 0 or title[name.start() - 1] in "\\/"):  # a file's name, or the end of its path
        title = " ".join(_name_as_title(Path(name.group().replace("\\", "/")).stem).split())
    return "" if _NO_TITLE.fullmatch(title) else title


def _name_as_title(stem: str) -> str:
    """A file's name without its suffix, as the title of a document that has none: "harbour rules"."""
    return stem.replace("_", " ").replace("-", " ")


#: the longest front matter read as such: a real one is a few lines, and PyYAML reads about 170 KB a
#: second here (a crafted 2.5 MB block took 15 s); a longer block is left as the document's text
MAX_FRONT_MATTER_CHARS = 65_536
#: a Markdown file's front matter: YAML between "---" lines (or "..." closing it), or TOML between "+++"
_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n(.*?)\r?\n(?:\1|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _front_matter(markdown: str) -> tuple[str, str]:
    """A Markdown file without its front matter (the metadata block static-site generators read:
    Jekyll, Hugo, MkDocs), and the title it gives. CommonMark reads such a block as a rule and a
    heading, so "title: Mooring fees date: 2024-01-01" was the document's title and its first line.
    A block that does not parse as a mapping is no front matter (a rule, then a heading) and stays."""
    found = _FRONT_MATTER.match(markdown)
    if not found or len(found[2]) > MAX_FRONT_MATTER_CHARS:
        return markdown, ""
    try:
        if found[1] == "+++":
            import tomllib

            data = tomllib.loads(found[2])
        else:
            import yaml

            data = yaml.safe_load(found[2])
    except Exception:  # noqa: BLE001 - whatever the parser raises, the block is the document's own text
        return markdown, ""
    if not isinstance(data, dict):
        return markdown, ""
    title = data.get("title")
    return markdown[found.end():], " ".join(str(title).split()) if isinstance(title, str | int | float) else ""


def _plain(inline: Any) -> str:
    """The text of a Markdown inline token as a reader sees it: "**Fees** for `boats`" titled a
    document with its asterisks and backticks, a link with its address."""
    parts = [child.content if child.type in ("text", "code_inline") else " " if child.type in ("softbreak", "hardbreak") else ""
             for child in inline.children or ()]
    return " ".join("".join(parts).split())


def _markdown_to_text(markdown: str, mdx: bool = False) -> tuple[str, str, tuple[Heading, ...]]:
    """Plain text and title of a Markdown document (an MDX page with ``mdx``, or where it imports a
    module as one does, :mod:`.mdx`): the title its front matter gives, else its first heading as
    the CommonMark parser reads it. The heading was found with a regular expression that backtracked
    in cubic time on a line of spaces and #s (a 12 KB line took 104 s), and took a "# comment" in a
    fenced code block for one. A docs site's admonitions (:func:`_admonitions`) read as a block
    headed by their title."""
    from . import mdx as mdx_pages

    markdown, title = _front_matter(markdown)
    parser = _admonitions(MarkdownIt("commonmark").enable("table"))  # GFM tables: a row is a line of its cells
    if mdx or mdx_pages.is_mdx(markdown):  # Docusaurus reads its .md pages as MDX
        markdown = mdx_pages.to_markdown(markdown)
        parser.disable("code")  # MDX has no indented code: a component's text is indented
    tokens = parser.parse(markdown)
    heading = next((_plain(tokens[i + 1]) for i, token in enumerate(tokens[:-1])
                    if token.type == "heading_open" and tokens[i + 1].type == "inline"), "")
    text, _, _, headings = _html_to_text(parser.renderer.render(tokens, parser.options, {}))
    return text, title or heading, headings


#: a ``:::`` admonition's opening: its kind, and its title in brackets (Docusaurus 3) or after a space
_ADMONITION = re.compile(r"\s*(?P<kind>[\w-]+)(?:\[(?P<bracketed>[^\]]*)\]|\s+(?P<spaced>.*))?\s*$")


def _admonitions(parser: MarkdownIt) -> MarkdownIt:
    """``parser`` reading docs sites' admonitions (boxed notes) as a block of their own, headed by
    their title, else by their kind ("Tip"): Docusaurus's and VitePress's ``:::tip Before you start``
    and MkDocs' ``!!! warning "Lost phone"`` with its text indented (mdit-py-plugins). Read as plain
    Markdown, ":::tip Before you start Ask the harbour office..." was one line with its markers, and
    MkDocs' indented text a code block."""
    from markdown_it.common.utils import escapeHtml
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.container import container_plugin

    def render(_: Any, tokens: list[Any], index: int, *__: Any) -> str:
        if tokens[index].nesting != 1:
            return "</div>\n"
        found = _ADMONITION.match(tokens[index].info)
        named = (found["bracketed"] or found["spaced"] or "").strip() if found else ""
        heading = named or (found["kind"].capitalize() if found else "")
        return "<div>" + (f"<p>{escapeHtml(heading)}</p>" if heading else "") + "\n"

    return parser.use(admon_plugin).use(container_plugin, name="admonition", validate=lambda params, _: bool(_ADMONITION.match(params)),
                                        render=render)


#: Sphinx's roles, which plain docutils does not know: read as Sphinx shows them (":func:`solenne.pair`"
#: as "solenne.pair", ":doc:`Guide </guide>`" as "Guide"), not as the markup
_SPHINX_ROLES = ("func", "meth", "class", "mod", "attr", "data", "obj", "exc", "ref", "doc", "term", "option", "envvar",
                 "program", "file", "command", "kbd", "guilabel", "menuselection", "abbr", "py:func", "py:class", "py:meth")


@functools.cache
def _register_sphinx_roles() -> None:
    """Teach docutils Sphinx's roles (:data:`_SPHINX_ROLES`), once per process: docutils keeps its
    roles in a registry of its own."""
    from docutils import nodes
    from docutils.parsers.rst import roles

    def shown(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> tuple[list[Any], list[Any]]:
        # what Sphinx shows: ":doc:`Guide </guide>`" its title, ":func:`~solenne.pair`" the last name
        title = re.sub(r"\s*<[^<>]*>\Z", "", text) or text
        if title.startswith("~"):
            title = title[1:].rsplit(".", 1)[-1]
        return [nodes.literal(rawtext, title.lstrip("!"))], []

    for role in _SPHINX_ROLES:
        roles.register_local_role(role, shown)


def _rst_to_text(source: str, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """Plain text, title and headings of a reStructuredText document (a Sphinx project's pages),
    rendered to HTML by docutils and read as an HTML page is. Sphinx's own directives
    (``.. autofunction::``), which docutils does not know, are left out without a message, and its
    roles read as their text; nothing outside the file is read (``.. include::``, ``.. raw::``), as
    the service reads uploads. A file docutils fails on is a :class:`DataFormatError`."""
    from docutils.core import publish_parts

    _register_sphinx_roles()
    settings = {"report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False, "_disable_config": True,
                "doctitle_xform": False, "initial_header_level": 1, "embed_stylesheet": False, "stylesheet_path": "",
                "warning_stream": False}
    try:
        parts = publish_parts(source, source_path=str(path), writer="html5", settings_overrides=settings)
    except MemoryError:
        raise
    except Exception as exc:  # docutils' own errors on markup it cannot parse at all
        raise DataFormatError(path, f"not a readable reStructuredText document ({exc or type(exc).__name__})") from None
    text, title, _, headings = _html_to_text(f"<html><body>{parts['html_body']}</body></html>")
    return text, title, headings


#: the longest a PDF's pages are read for, checked before each page. PDFium reads a page of a text
#: document in a few milliseconds, so this reads tens of thousands of pages; a crafted file can
#: repeat a slow page thousands of times, and must not keep an indexing job busy for hours
MAX_PDF_SECONDS = 120.0

#: the longest a PDF's scanned pages are read for by OCR (:mod:`.ocr`), about 1,500 pages on two
#: cores; past it the PDF is skipped with advice, rather than keep an indexing job busy for hours
MAX_OCR_SECONDS = 1800.0
#: a page with fewer printed characters than this in its text layer, and a picture, is a scanned page
#: (a scanner may stamp a page number or a Bates number as text on the picture of the page)
SCANNED_PAGE_CHARACTERS = 20
#: so is a page with fewer than this, where one picture covers at least :data:`SCANNED_PAGE_SHARE` of it: a
#: scanning app stamps "Scanned with CamScanner" on each page, a fax machine its header line
STAMPED_PAGE_CHARACTERS = 60
SCANNED_PAGE_SHARE = 0.5

_clock = time.monotonic
#: PDFium is not thread-safe: the service's indexer and a command in the same process read in turn
_PDFIUM = threading.Lock()


def _pdf_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text layer of a PDF (PDFium, through pypdfium2; scanned pages without one give no text),
    its title and its headings: the entries of its outline (the bookmarks pane), the first level a
    first-level heading. pypdf read justified text wrongly: it leaves out the word spacing (``Tw``)
    a justifying writer such as groff adds to each space, so it took the line's later words for
    farther apart than they are and cut words ("contr ol box", "befor e"). A word PDFium finds broken
    over a line end (it marks the hyphen U+FFFE) is made whole again, or keeps its hyphen where it is
    a compound ("self-service"), as in a text file (:func:`unwrap_lines`). A scanned page (a picture
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
                printed = _printed(pages[-1])
                if printed < STAMPED_PAGE_CHARACTERS and (share := _picture_share(page)) > 0 and (
                        printed < SCANNED_PAGE_CHARACTERS or share >= SCANNED_PAGE_SHARE):
                    scanned.append(index)
                answers.append(_form_lines(page, form) if form is not None else [])
                page.close()
            if scanned:
                has_text = any(map(_printed, pages)) or any(answers)
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
    text = _page_lines(pages)
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


def _printed(text: str) -> int:
    """How many characters of ``text`` print (all but white space), counted in C, not a character at
    a time (a crafted page holds 1.6 million)."""
    return len("".join(text.split()))


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
        raise _no_ocr(path, f"its {len(indexes)} page(s) are scanned pictures without a text layer")

    def render(index: int) -> Any:
        page = pdf[index]
        try:
            return page.render(scale=ocr.scale(*page.get_size()), grayscale=True).to_pil()
        finally:
            page.close()

    return _read_by_ocr(path, [functools.partial(render, index) for index in indexes])


def _no_ocr(path: Path, what: str) -> DataFormatError:
    """The error for scanned pictures that cannot be read: OCR off, or no Tesseract (how to install it)."""
    from . import ocr

    how = (f"OCR is off ({ocr.LANGUAGES_VARIABLE} is empty)" if not ocr.languages() else
           f"no OCR program is installed: {ocr.HOW_TO_INSTALL}")
    return DataFormatError(path, f"{what}, and {how}")


def _read_by_ocr(path: Path, pages: list[Any]) -> list[str]:
    """The text of scanned pages (``pages``: each a function that renders one to a picture), read by OCR
    in order within :data:`MAX_OCR_SECONDS`; Tesseract's failure is the file's :class:`DataFormatError`."""
    from . import ocr

    deadline = _clock() + MAX_OCR_SECONDS
    texts: list[str] = []
    try:
        for text in ocr.read_images(pages):
            if _clock() > deadline:
                raise DataFormatError(path, f"not read: its scanned pages took more than {MAX_OCR_SECONDS / 60:.0f} min to read "
                                            f"by OCR ({len(texts)} of {len(pages)} read); give it a text layer first "
                                            "(e.g. ocrmypdf) and index that")
            texts.append(text.replace("\f", "\n"))
            if (hear := ocr.page_progress.get()) is not None:
                hear(path.name, len(texts), len(pages))
    except ocr.OcrError as exc:
        raise DataFormatError(path, f"its scanned pages could not be read by OCR: {exc}") from None
    return texts


def _page_lines(pages: list[str]) -> str:
    """Pages of text as one text: without their page numbers and running lines, sentences wrapped
    over lines (and pages) joined, hyphenated words made whole (PDF pages and scanned ones alike)."""
    pages = [page.replace("\r\n", "\n").replace("\r", "\n") for page in pages]
    lines = [line for page in _without_running_lines([[" ".join(line.split()) for line in page.splitlines()] for page in pages])
             for line in page]
    return unwrap_lines(typeset_letters(whole_characters("\n".join(lines))))


def _tiff_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """A scanned document saved as TIFF (what scanners and fax programs save, a page per frame),
    read by OCR page by page (:mod:`.ocr`) as a scanned PDF is. A frame is brought to 300 dpi, as
    Tesseract reads best there: a grey 150 dpi scan enlarged went from 4 words wrong to 0, and a
    600 dpi one is read in a quarter of the pixels."""
    return _pictures_to_text(path, every_frame=True)


def _picture_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """A picture (PNG, JPEG, WebP, BMP, GIF, AVIF, and HEIC, the iPhone's photos, opened by pi-heif):
    a screenshot, a phone's photo of a notice or a receipt, a diagram saved as GIF, read by OCR. Its
    first frame only (an animated WebP's or GIF's others are the same picture moving), turned as the
    camera's EXIF orientation says (a phone stores a photo taken upright sideways, with that tag). Its resolution tag is not
    trusted (a phone's photo says 72 dpi whatever it shows), so small type is found by its height
    instead (:func:`.ocr.read_picture`); a picture of more pixels than :data:`.ocr.MAX_PIXELS` (a
    poster scanned whole) is made smaller to them. A photo without text gives none."""
    return _pictures_to_text(path, every_frame=False)


def _pictures_to_text(path: Path, every_frame: bool) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a picture file's frames (every one, or the first), read by OCR. Pillow opens it,
    and refuses a picture so large it would fill the memory (its decompression-bomb check). A HEIC
    photo is first decoded to a PNG by a child process (:mod:`.heif`: its decoder crashed on a
    damaged one)."""
    from PIL import Image, UnidentifiedImageError

    from . import heif, ocr

    with contextlib.ExitStack() as stack:
        source = path
        if path.suffix.lower() in (".heic", ".heif"):
            source = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="convrag-heif-"))) / "photo.png"
            heif.to_png(path, source)
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")  # Pillow's word on a damaged file's EXIF: the file is read, or fails, all the same
        try:
            image = stack.enter_context(Image.open(source))
        except UnidentifiedImageError:  # its message names the file's path, a temporary one inside a mail
            raise DataFormatError(path, f"not a readable {_FORMAT_NAMES[SUFFIXES[path.suffix.lower()]]}: Pillow knows no "
                                        "picture format that starts as it does (damaged, or another kind of file)") from None
        count = getattr(image, "n_frames", 1) if every_frame else 1
        if not ocr.available():
            raise _no_ocr(path, f"its {count} page(s) are scanned pictures" if every_frame else "it is a picture")

        def render(index: int) -> Any:
            image.seek(index)
            if not every_frame:  # a picture as it is (a phone's tag says 72 dpi whatever it shows), within the pixels OCR is given
                return _for_ocr(image)
            frame = image.convert("L")  # a scan's frame at 300 dpi, where its resolution tag says what it has
            dpi = float((image.info.get("dpi") or (0, 0))[0] or 0)
            return ocr.resized(frame, ocr.scale(frame.width, frame.height, dpi) if dpi > 0 else min(1.0, ocr.room(frame.width, frame.height)))

        texts = _read_by_ocr(path, [functools.partial(render, index) for index in range(count)])
    return _page_lines(texts), "", ()


def _for_ocr(picture: Any) -> Any:
    """A picture as OCR is given it: turned as its EXIF tag says, see-through parts on white, grey,
    and made smaller where it has more pixels than :data:`.ocr.MAX_PIXELS`."""
    from PIL import ImageOps

    from . import ocr

    frame = _on_white(ImageOps.exif_transpose(picture)).convert("L")
    return ocr.resized(frame, min(1.0, ocr.room(frame.width, frame.height)))


def _on_white(picture: Any) -> Any:
    """A picture with see-through parts (a PNG logo, a screenshot of a window's shadow) laid on white:
    turned grey as it is, the see-through black around black type read as one black block."""
    from PIL import Image

    if picture.mode not in ("RGBA", "LA", "PA") and "transparency" not in picture.info:
        return picture
    picture = picture.convert("RGBA")
    return Image.alpha_composite(Image.new("RGBA", picture.size, "white"), picture)


#: a line that only numbers its page: "12", "- 12 -", "Page 12", "page 12 of 40", "12 / 40"
_PAGE_NUMBER = re.compile(r"(?P<dash>[-\u2013\u2014] ?)?(?P<page>page )?(?P<n>\d{1,5})(?P<of> ?(?:of|/) ?\d{1,5})?(?(dash) ?[-\u2013\u2014])",
                          re.IGNORECASE)


def _page_number(line: str) -> tuple[int, bool] | None:
    """The number a line gives its page, and whether the line says so itself ("Page 12", "12 of 40",
    "- 12 -") rather than being a bare number, which could as well be a table's last figure."""
    m = _PAGE_NUMBER.fullmatch(line)
    return (int(m["n"]), any(m[g] for g in ("dash", "page", "of"))) if m else None


#: a running header or footer is on at least this many pages, and on at least half of them
RUNNING_PAGES = 3
_DIGITS = re.compile(r"\d+")


def _without_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages without what the layout repeats at their foot or top: page numbers, and a running
    header or footer ("Harbour Authority | Annual report 2024"). Read into the text, they went into
    the sentence that runs on to the next page ("boats must 12 register the next morning")."""
    pages = [[line for line in page if line] for page in pages]
    for _ in range(2):  # a footer may stand below the page number, or above it
        for where in (-1, 0):  # the foot, then the top
            pages = _without_page_numbers(pages, where)
            pages = _without_repeated_lines(pages, where)
    return pages


def _without_page_numbers(pages: list[list[str]], where: int) -> list[list[str]]:
    """Pages without the page number at ``where`` (-1 the foot, 0 the top). A bare number is taken
    for one only where the page before or after has the next or previous number there; "Page 12"
    and its like are taken anywhere."""
    found = [_page_number(page[where]) if page else None for page in pages]
    numbers = [f[0] if f else None for f in found]
    drop = [f is not None and (f[1] or (i > 0 and numbers[i - 1] == f[0] - 1)
                               or (i + 1 < len(numbers) and numbers[i + 1] == f[0] + 1)) for i, f in enumerate(found)]
    return [_without_end(page, where) if gone else page for page, gone in zip(pages, drop)]


def _without_repeated_lines(pages: list[list[str]], where: int) -> list[list[str]]:
    """Pages without a line that stands at ``where`` on many of them (:data:`RUNNING_PAGES`, and half
    of them at least), figures aside: "Annual report 2024 | 3" and "... | 4" are one footer."""
    keys = [_DIGITS.sub("#", page[where]).lower() if page else "" for page in pages]
    counts = Counter(keys)
    running = {key for key, n in counts.items() if key and n >= RUNNING_PAGES and 2 * n >= len(pages)}
    return [_without_end(page, where) if key in running else page for page, key in zip(pages, keys)]


def _without_end(page: list[str], where: int) -> list[str]:
    return page[:-1] if where == -1 else page[1:]


def _docx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
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

    _check_unpacked_size(path)
    try:
        document = _word_document(path)
        levels = {style.style_id: _word_level(style.name) for style in document.styles}
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
        pictures = _pictures_to_read(lines, _word_text_area(document), lambda rid: parts[rid].blob if rid in parts else None)
    except (PackageNotFoundError, BadZipFile):
        raise DataFormatError(path, "not a readable Word document (not a .docx package; an old Word 97-2003 file is read as .doc)") from None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged part: lxml's XMLSyntaxError, or python-docx's AttributeError on a wrong one
        raise DataFormatError(path, f"not a readable Word document ({exc or type(exc).__name__})") from None
    marked = tuple(Heading(level, line) for style, line in lines if line and (level := levels.get(style)) is not None)
    if pictures and ocr.available():  # scanned pages put into Word, alone or among its text
        read = iter(_read_by_ocr(path, [functools.partial(_opened_for_ocr, blob) for blob in pictures.values()]))
        lines = _with_pictures_read(lines, {place: next(read) for place in pictures})
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


#: the most pictures of a Word document read by OCR (a second or so each)
MAX_WORD_PICTURES = 500
#: the style :func:`_word_lines` (and :func:`_odf_lines`) gives the empty line that marks where a picture is
#: shown: "<mark><key> <area>", the key its relationship id (a Word document's) or its path (an OpenDocument's)
_PICTURE_MARK = "\x00picture "


def _pictures_to_read(lines: list[tuple[str, str]], page: float, blob: Callable[[str], bytes | None]) -> dict[int, bytes]:
    """The pictures of a Word or OpenDocument text to read by OCR, by their place in ``lines`` (the
    marks its reader leaves: ``"<mark><key> <area>"``, the area in the unit of ``page``, the page's
    text area), each once, at most :data:`MAX_WORD_PICTURES`; ``blob`` gives a picture's bytes by its
    key (None where the document does not hold it). Where the document has next to no text of its
    own (fewer printed characters than a scanned PDF page, :data:`SCANNED_PAGE_CHARACTERS`: a letter
    scanned and put into Word), every picture; it read as no text at all. Otherwise those covering
    at least :data:`SCANNED_PAGE_SHARE` of the page's text area, as a scanned page pasted among
    typed ones does (its text was lost); a logo, an icon or a screenshot beside the steps it shows
    stays unread, as a PDF's picture among text does."""
    every = _printed("".join(line for _, line in lines)) < SCANNED_PAGE_CHARACTERS
    found: dict[int, bytes] = {}
    seen: set[str] = set()
    for place, (style, _) in enumerate(lines):
        if not style.startswith(_PICTURE_MARK):
            continue
        key, area = style[len(_PICTURE_MARK):].rsplit(" ", 1)
        data = blob(key) if key not in seen and (every or float(area) >= SCANNED_PAGE_SHARE * page) else None
        if data is not None:
            seen.add(key)
            found[place] = data
            if len(found) >= MAX_WORD_PICTURES:
                break
    return found


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


def _with_pictures_read(lines: list[tuple[str, str]], read: dict[int, str]) -> list[tuple[str, str]]:
    """``lines`` with the text OCR read in the pictures at the places ``read`` names: pictures shown
    one after the other, with no text between (a letter's scanned pages), read as one scan is
    (:func:`_page_lines`: a sentence runs on to the next page, a page number and a running line go)."""
    out: list[tuple[str, str]] = []
    pages: list[str] = []

    def flush() -> None:  # the run of pages read so far, as one scan
        out.extend(("", page_line) for page_line in _page_lines(pages).split("\n"))
        pages.clear()

    for place, (style, line) in enumerate(lines):
        if place in read:
            pages.append(read[place])
        elif line and pages:
            flush()
        out.append((style, line))
    if pages:
        flush()
    return out


_WORD_HEADING = re.compile(r"heading ([1-9])", re.IGNORECASE)


def _word_level(style_name: str | None) -> int | None:
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
                    yield f"{_PICTURE_MARK}{blip.get(f'{_R}embed')} {area}", ""
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
                    pictures += [(style, line) for style, line in inside if style.startswith(_PICTURE_MARK)]
                    text = " ".join(line for _, line in inside if line)
                    if merge is not None and merge.get(f"{_W}val", "continue") == "continue":
                        text = above.get(column, "")
                    above[column] = text
                    cells.append(text)
                    column += int(span.get(f"{_W}val", "1")) if span is not None else 1
                rows.append(cells)
            for line in _table_lines(rows, marked).split("\n"):
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


#: a slide's placeholders that are page furniture, as a PDF's page numbers and running footers are
_SLIDE_FURNITURE = frozenset({"SLIDE_NUMBER", "FOOTER", "DATE"})


def _pptx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
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

    _check_unpacked_size(path, "a PowerPoint deck")
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
            shapes += _in_reading_order(s for s in slide.shapes if named is None or s.shape_id != named.shape_id)
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
    slides = _with_slide_pictures_read(path, slides, pictured)
    return typeset_letters("\n\n".join(s for s in slides if s)), typeset_letters(own_title(title) or heading), tuple(marked)


def _with_slide_pictures_read(path: Path, slides: list[str], pictured: list[tuple[int, bytes]]) -> list[str]:
    """``slides`` with the text OCR reads in the pictures some of them are (``pictured``: a slide's
    place and its picture's bytes) after what text each has; without OCR, such a slide keeps what it has."""
    from . import ocr

    if not pictured or not ocr.available():
        return slides
    slides = list(slides)
    texts = _read_by_ocr(path, [functools.partial(_opened_for_ocr, blob) for _, blob in pictured])
    for (index, _), text in zip(pictured, texts, strict=True):
        slides[index] = "\n".join(part for part in (slides[index], _page_lines([text])) if part)
    return slides


def _slide_picture(slide: Any, lines: list[str], width: int | None, height: int | None) -> bytes | None:
    """The picture a slide is, where it is one: next to no text of its own (fewer printed characters
    than a scanned PDF page has, :data:`SCANNED_PAGE_CHARACTERS`) and a picture covering at least
    :data:`SCANNED_PAGE_SHARE` of it. A deck converted from a PDF, or made of scanned pages, is a
    picture a slide, and read as no text at all."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if _printed("".join(lines)) >= SCANNED_PAGE_CHARACTERS or not width or not height:
        return None
    pictures = [shape for shape in slide.shapes if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    largest = max(pictures, key=lambda shape: (shape.width or 0) * (shape.height or 0), default=None)
    if largest is None or (largest.width or 0) * (largest.height or 0) < SCANNED_PAGE_SHARE * width * height:
        return None
    return bytes(largest.image.blob)


def _opened_for_ocr(blob: bytes) -> Any:
    """A picture's bytes opened and made ready for OCR (:func:`_for_ocr`); one Pillow cannot open (a
    Windows metafile, a damaged one) is a blank picture, read as nothing."""
    import io

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(blob)) as picture:
                return _for_ocr(picture)
    except Exception:  # what Pillow raises for a format it does not know or a damaged file
        return Image.new("L", (1, 1), 255)


def _in_reading_order(shapes: Any) -> list[Any]:
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
    """The lines of text one shape shows (:func:`_pptx_to_text`)."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.is_placeholder and shape.placeholder_format.type is not None \
            and shape.placeholder_format.type.name in _SLIDE_FURNITURE:
        return []
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        return [line for member in _in_reading_order(shape.shapes) for line in _shape_lines(member)]
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
        return _table_lines(rows, marked=shape.table.first_row).split("\n")
    if shape.has_text_frame:
        return [" ".join(p.text.split()) for p in shape.text_frame.paragraphs]
    return []


#: the most an Office package's parts (a Word document's, a PowerPoint deck's) may unpack to: a .docx
#: is a zip package, so a few hundred kilobytes can unpack to gigabytes, which python-docx reads whole (a 375 KB upload held 100 MB of
#: paragraphs and kept an indexing job busy for over ten minutes). A long real document's XML (its
#: text and styles) is a few megabytes; its pictures are stored compressed already, so they unpack
#: to about the file's size, and past :data:`MAX_DOCX_BYTES` only a package that unpacks to more
#: than :data:`MAX_DOCX_RATIO` times its size is refused
MAX_DOCX_XML_BYTES = 64 * 2**20
MAX_DOCX_BYTES = 512 * 2**20
MAX_DOCX_RATIO = 20


def _check_unpacked_size(path: Path, what: str = "a Word document") -> None:
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


#: byte-order marks, longest first (UTF-32's little-endian mark starts with UTF-16's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


#: charset-normalizer's own default for "too messy to be this encoding"
_MAX_MESS = 0.2

#: the share of a text's characters that may be control codes (other than the layout ones),
#: private-use code points or non-characters: a stray form feed or escape is text, a fifth is not
_MAX_JUNK = 0.05
#: a character outside layout codes, printable ASCII, the rest of the Basic Multilingual Plane
#: short of surrogates and private use, and the supplementary planes short of private use
_JUNK = re.compile("[^\t\n\r\f\v\x1b\x20-\x7e\xa0-\ud7ff\uf900-\ufffd\U00010000-\U000effff]")
#: scripts that one language's text mixes (Japanese: kanji and both kanas), counted as one
_EAST_ASIAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH", "FULLWIDTH", "IDEOGRAPHIC", "KATAKANA-HIRAGANA"})


def _junk_share(text: str) -> float:
    """The share of ``text`` that is control codes, private-use code points or non-characters (a
    regular expression: a character-by-character look-up took 0.4 s per megabyte)."""
    return len(_JUNK.findall(text)) / len(text) if text else 0.0


def _scripts(text: str) -> set[str]:
    """The scripts of ``text``'s letters beyond ASCII, by the first word of their Unicode names
    (LATIN, CYRILLIC, HANGUL; Chinese and Japanese as one)."""
    names = {unicodedata.name(c, "?").split()[0] for c in text if ord(c) > 127 and unicodedata.category(c).startswith("L")}
    return {"CJK" if n in _EAST_ASIAN else n for n in names}


def _not_text(text: str, path: Path, encoding: str, marked: bool) -> DataFormatError | None:
    """Why ``text``, decoded as ``encoding``, is binary data after all; None where it reads as text.
    Control codes (a binary file of bytes under 0x80 is valid UTF-8) tell at any length. UTF-16 read
    without a mark is held to one script beside Latin: a few bytes of binary data with a NUL among
    them decode to a handful of characters from several (Han, Hangul, Limbu) that no text mixes, or
    to a run of characters without a space or line break (UTF-16 text's NUL bytes are mostly the high
    bytes of those: an unmarked file of Chinese on one line with none of them is refused too)."""
    if (junk := _junk_share(text)) > _MAX_JUNK:
        return DataFormatError(path, f"not text: read as {encoding} it is {junk:.0%} control codes")
    if marked or not encoding.startswith(("utf_16", "utf_32", "utf-16", "utf-32")):
        return None
    if len((scripts := _scripts(text)) - {"LATIN"}) > 1:
        return DataFormatError(path, f"not text (binary data: it holds NUL bytes, and read as {encoding} it mixes "
                                     f"{', '.join(sorted(scripts))} letters)")
    if not any(c in " \t\n" for c in text):
        return DataFormatError(path, f"not text (binary data: it holds NUL bytes, and read as {encoding} it has no space "
                                     "or line break; text saved as UTF-16 without a byte-order mark has them, and "
                                     "that is where its NUL bytes come from)")
    return None


def decode_text(raw: bytes, path: Path, whole: bool = True) -> str:
    """The text of a file: UTF-8, or what its byte-order mark says; otherwise the encoding
    charset-normalizer finds, or Windows-1252 (the web's reading of unlabelled Western text) where
    that reads at least as cleanly by charset-normalizer's own measure. Bytes that
    are not text (NUL bytes without a mark, or no encoding that reads them) are refused with a
    :class:`DataFormatError`, so that a binary file given a .txt name is not indexed as gibberish.

    ``whole=False`` reads a file's first bytes only (an upload's check): a UTF-8, UTF-16 or UTF-32
    character that they cut at their end is left out, not taken for bytes that are not text."""
    def decode(encoding: str) -> str:
        return codecs.getincrementaldecoder(encoding)().decode(raw, final=whole)

    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                text = decode(encoding)
            except UnicodeDecodeError as exc:
                raise DataFormatError(path, f"not text: it starts with a {encoding} mark but does not decode ({exc.reason})") from None
            from charset_normalizer.md import mess_ratio

            # binary data that happens to start with a mark decodes, as UTF-16, to code points from
            # every script at once (CJK, Hangul, private use, controls); text in any one script does not
            if mess_ratio(text, 1.0) > _MAX_MESS:
                raise DataFormatError(path, f"not text: it starts with a {encoding} mark but reads as a jumble of scripts")
            return _checked(text, path, encoding, marked=True)
    if b"\x00" not in raw:  # valid UTF-8 may hold NUL bytes, but only UTF-16/32 text does
        try:
            return _checked(decode("utf-8"), path, "utf-8")
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes  # only for what is not UTF-8
    from charset_normalizer.md import mess_ratio

    best = from_bytes(raw).best()
    if b"\x00" in raw:
        if best is not None and best.encoding.startswith(("utf_16", "utf_32")):
            return _checked(str(best), path, best.encoding)
        raise DataFormatError(path, "not text (binary data: it holds NUL bytes)")
    if best is None:
        raise DataFormatError(path, "not text (binary data, or an encoding that could not be recognised)")
    try:
        western = raw.decode("cp1252")
    except UnicodeDecodeError:
        return _checked(str(best), path, best.encoding)
    # on short files the detector mistakes Latin-1 for Big5 and cp1252 for cp1250; its own mess
    # measure tells the two readings apart, and a tie goes to the Western one
    if mess_ratio(western, 1.0) <= mess_ratio(str(best), 1.0):
        return _checked(western, path, "cp1252")
    return _checked(str(best), path, best.encoding)


#: the charset an HTML page declares in its first bytes, as a browser's prescan finds it:
#: ``<meta charset="windows-1250">`` or ``<meta http-equiv="Content-Type" content="text/html; charset=...">``
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
#: the labels the web reads as Windows-1252 whatever they name (the WHATWG Encoding standard)
_WESTERN_LABELS = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii", "l1"})


def page_text(data: bytes, path: Path, charset: str = "") -> str:
    """A web page's text: UTF-8 or what its byte-order mark says where it is so, else the charset its
    server names (``charset``, from its Content-Type) or its ``<meta>`` declares in its first 1,024
    bytes (a browser's order), else :func:`decode_text`'s guess. A short page in a Central European
    code page read as Western text ("\u00a3odzie p\u00b3ac\u00b9"), though it named its charset; a UTF-8 page
    that names another (a server's old default, an editor's stale ``<meta>``) is UTF-8 all the same."""
    declared = _META_CHARSET.search(data[:1024])
    label = (charset or (declared.group(1).decode("ascii") if declared else "")).lower()
    if not label or data.startswith(tuple(bom for bom, _ in _BOMS)):
        return decode_text(data, path)
    try:
        data.decode("utf-8")
        return decode_text(data, path)
    except UnicodeDecodeError:
        pass
    try:
        return _checked(data.decode("cp1252" if label in _WESTERN_LABELS else label), path, label)
    except (LookupError, UnicodeDecodeError):  # a charset Python does not know, or one the bytes are not in
        return decode_text(data, path)


def _checked(text: str, path: Path, encoding: str, marked: bool = False) -> str:
    """``text`` where it reads as text (:func:`_not_text`); the reason raised where it does not."""
    reason = _not_text(text, path, encoding, marked)
    if reason is not None:
        raise reason
    return text


#: the separators a CSV file's cells may be parted by (a spreadsheet saved in a comma-decimal locale
#: writes ";")
_CSV_SEPARATORS = ",;\t|"


def _table_to_text(raw: str, path: Path) -> str:
    """A CSV (or tab-separated) table, a row to a line, each cell named by its column's heading:
    "Question: Can kayaks moor overnight? | Answer: Yes, for 12 dollars." A row read alone (as a
    passage, or a sentence the answer's compression keeps) then still says what each value is; an
    FAQ or a price list exported from a help desk or a spreadsheet is such a table. The first row is
    the headings where its cells are all filled, all different, and all short labels, not numbers
    (:func:`_headings`); else every row's cells are joined by " | ". A line the reader cannot parse
    is a :class:`DataFormatError` naming it."""
    import csv
    import io

    sample = raw[:65_536]
    try:
        dialect: Any = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.Sniffer().sniff(sample, _CSV_SEPARATORS)
    except csv.Error:  # one column, or too little to tell: commas
        dialect = csv.excel
    reader = csv.reader(io.StringIO(raw, newline=""), dialect)  # a quoted cell may hold line breaks
    try:
        rows = [[" ".join(cell.split()) for cell in row] for row in reader]
    except csv.Error as exc:  # a cell longer than the csv module reads (128 KB)
        raise DataFormatError(path, f"not a readable CSV table ({exc})", reader.line_num) from None
    return _table_lines(rows)


def _table_lines(rows: list[list[str]], marked: bool | None = None) -> str:
    """A table's rows as lines, each cell named by its column's heading where the first row holds
    headings (:func:`_table_to_text`). ``marked`` says whether the table's own markup makes its
    first row the headings (an HTML row of ``th`` cells, a Word row repeated atop each page): then
    it is taken so where its cells are filled and all different; None (a CSV file, a spreadsheet,
    which mark nothing) leaves it to :func:`_headings`. A table that marks nothing, as a Word key
    and value table ("Name | John Smith") does, is not named: its first row is data."""
    rows = [row for row in rows if any(row)]  # a spreadsheet's blank rows between its blocks
    heading = rows[0] if len(rows) > 1 and _headings(rows[0], marked) else None
    if heading is None:
        return "\n".join(" | ".join(cell for cell in row if cell) for row in rows)
    named = ([f"{name}: {cell}" for name, cell in zip(heading, row) if cell] + [cell for cell in row[len(heading):] if cell]
             for row in rows[1:])  # a row longer than the headings keeps its extra cells, unnamed
    return "\n".join(" | ".join(cells) for cells in named)


#: the most words a column's heading has: a label ("Date of last change"), not a question or an answer
_HEADING_WORDS = 5
_NUMBER = re.compile(r"[-+]?[\d.,]+%?")


def _headings(row: list[str], marked: bool | None = None) -> bool:
    """Whether a table's first row names its columns: every cell filled and all different, and
    where no markup says (``marked`` None, :func:`_table_lines`) none a number and each a label of
    at most :data:`_HEADING_WORDS` words. (:meth:`csv.Sniffer.has_header` judges by the columns'
    types, and took "Plan;Price" over "Standard;0,02" for a row of data.)"""
    if not all(row) or len(set(row)) != len(row):
        return False
    if marked is not None:
        return marked
    return not any(_NUMBER.fullmatch(cell) for cell in row) and all(len(cell.split()) <= _HEADING_WORDS for cell in row)


#: a sheet's name that names nothing: Excel's "Sheet1", LibreOffice's "Sheet 1"
_NO_SHEET_NAME = re.compile(r"(?:sheet|tabelle|feuil|hoja|foglio)\s*\d*", re.IGNORECASE)


def _xlsx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Excel workbook (openpyxl, streamed): each visible sheet a block of its own,
    parted by a blank line and opened by its name where the name says something ("Prices 2025", not
    "Sheet1"); its rows read as a CSV file's are (:func:`_table_lines`), a formula as the value Excel
    last computed for it. The title is the workbook's own, else the file's name. A package openpyxl
    fails on is a :class:`DataFormatError`, as a Word document's is."""
    from zipfile import BadZipFile

    import openpyxl

    _check_unpacked_size(path, "an Excel workbook")
    try:
        with warnings.catch_warnings():  # what openpyxl cannot keep of a file (its styles, data validation) is no matter to the text
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        try:
            sheets = []
            for sheet in book.worksheets:
                if sheet.sheet_state != "visible":
                    continue
                rows = [[_cell_text(value) for value in row] for row in sheet.iter_rows(values_only=True)]
                table = _table_lines(rows)
                if table:
                    sheets.append(_sheet_block(sheet.title, table))
            title = (book.properties.title or "").strip()
        finally:
            book.close()
    except (BadZipFile, KeyError) as exc:  # not a package, or one without a workbook part
        raise DataFormatError(path, "not a readable Excel workbook (not an .xlsx package; an old Excel 97-2003 file is read as .xls"
                                    f"{'' if isinstance(exc, BadZipFile) else f': {exc}'})") from None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged part: lxml's or openpyxl's own errors
        raise DataFormatError(path, f"not a readable Excel workbook ({exc or type(exc).__name__})") from None
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def _xls_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Excel 97-2003 workbook (.xls, xlrd), as an .xlsx's is (:func:`_xlsx_to_text`):
    each visible sheet's rows, named by its first row where that holds labels, a date as a date and
    a formula as the value Excel last computed. The title is the file's own, else its name. A file
    that cannot be read (not an .xls, damaged, locked by a password) is a :class:`DataFormatError`."""
    import io

    import olefile
    import xlrd

    from .msdoc import summary_title

    try:
        # the workbook stream is taken out of its container by olefile: xlrd's own reader follows a
        # damaged file's chain of sectors round a loop, appending to memory until the process is killed
        with olefile.OleFileIO(str(path)) as ole:
            stream = next((name for name in ("Workbook", "Book") if ole.exists(name)), None)
            if stream is None:
                raise DataFormatError(path, "not an Excel workbook (no Workbook stream)")
            workbook = ole.openstream(stream).read()
            title = summary_title(ole)
        book = xlrd.open_workbook(file_contents=workbook, on_demand=True, logfile=io.StringIO())
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:  # olefile's and xlrd's errors, and what a damaged stream raises
        raise DataFormatError(path, f"not a readable Excel 97-2003 workbook ({exc or type(exc).__name__})") from None
    try:
        sheets = []
        filled = 0
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            if sheet.visibility != 0:  # hidden, or "very hidden" (only a macro shows it)
                continue
            filled += sheet.nrows * sheet.ncols
            if filled > MAX_SHEET_CELLS:
                raise DataFormatError(path, f"not read: it holds more than {MAX_SHEET_CELLS:,} cells; save the sheets that "
                                            "matter as .csv")
            rows = [[_xls_cell(cell, book.datemode) for cell in sheet.row(r)] for r in range(sheet.nrows)]
            table = _table_lines(rows)
            if table:
                sheets.append(_sheet_block(sheet.name, table))
            book.unload_sheet(index)
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:
        raise DataFormatError(path, f"not a readable Excel 97-2003 workbook ({exc or type(exc).__name__})") from None
    finally:
        book.release_resources()
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def _xls_cell(cell: Any, datemode: int) -> str:
    """An .xls cell as :func:`_cell_text` reads an .xlsx's: a date is a number there, marked by its format."""
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return _cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
        except (ValueError, OverflowError):  # a date Excel cannot show either (before 1900, or negative)
            return _cell_text(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return _cell_text(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "")
    return _cell_text(cell.value if cell.ctype != xlrd.XL_CELL_EMPTY else None)


def _doc_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
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
            lines.append(_table_lines(block.rows, marked=block.header))
        elif line := typeset_letters(" ".join(block.text.split())):
            lines.append(line)
            if block.level is not None:
                headings.append(Heading(block.level, line))
    title = own_title(word.title) or next((h.text for h in headings if h.level == 0), "") or _first_heading(headings)
    return typeset_letters("\n".join(line for line in lines if line)), typeset_letters(title), tuple(h for h in headings if h.level)


#: the header fields an e-mail's text opens with: who wrote to whom, and when
_MAIL_FIELDS = ("From", "To", "Cc", "Date")
#: how deep files inside files are read (a mail attached to a mail, an archive in an archive): a
#: forwarded thread is a few deep, a crafted file thousands
MAX_NESTING = 3
_NESTING: contextvars.ContextVar[int] = contextvars.ContextVar("convrag_nesting", default=0)
#: the files that hold files
_CONTAINERS = {".eml": "a mail", ".msg": "a mail", ".mbox": "a mailbox",
               **{suffix: "an archive" for suffix, kind in SUFFIXES.items() if kind in ("zip", "tar", "7z", "rar")}}


class _Contained(NamedTuple):
    """A file inside a file (an e-mail's attachment, an archive's member) read as the file it is: its
    name, and its text and headings as :func:`read_document` reads them; ``reason`` instead says why
    it was not read."""

    name: str
    text: str = ""
    headings: tuple[Heading, ...] = ()
    reason: str = ""


#: what a contained file's own name may keep in the temporary file's: no separator, no control character
_CONTAINED_NAME = re.compile(r"[^\w .,()+-]")


def _read_contained(name: str, data: bytes) -> _Contained:
    """A file inside a file, read as the file it is when convrag reads its type: it is written to a
    private temporary file under its own suffix (the format follows the suffix, as for any file). A
    type convrag does not read, a damaged file, and a mail or an archive nested past
    :data:`MAX_NESTING` are named with the reason, not read, and do not stop the other files."""
    suffix = document_suffix(name)
    if suffix not in SUFFIXES:
        return _Contained(name, reason="not a type convrag reads")
    if not data:
        return _Contained(name, reason="empty")
    if suffix in _CONTAINERS and _NESTING.get() >= MAX_NESTING:
        return _Contained(name, reason=f"{_CONTAINERS[suffix]} nested more than {MAX_NESTING} deep")
    token = _NESTING.set(_NESTING.get() + 1)
    try:
        document = read_bytes(data, name)
    except DataFormatError as exc:
        return _Contained(name, reason=exc.reason)
    finally:
        _NESTING.reset(token)
    if not document.text.strip():  # a blank file, a photo without words: named with why, not as "name ()"
        return _Contained(name, reason=no_text_reason(Path(name)))
    return _Contained(name, document.text, document.headings)


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


def _sections(label: str, files: list[_Contained], lines: list[str], headings: list[Heading]) -> None:
    """Each file read, as a section headed "{label}: its name" (its own headings a level below),
    added to ``lines`` and ``headings``; then one line that names the others, each with its reason
    (counted by reason where there are many: an archive's hundred pictures)."""
    for file in files:
        if file.text:
            lines += [f"{label}: {file.name}", file.text]
            headings += [Heading(1, f"{label}: {file.name}", part=True), *(Heading(h.level + 1, h.text, h.part) for h in file.headings)]
    unread = [file for file in files if not file.text]
    if len(unread) > 10:
        counted = Counter(file.reason for file in unread)
        lines.append(f"{label}s not read: {len(unread)} (" + "; ".join(f"{n} {reason}" for reason, n in counted.most_common()) + ")")
    elif unread:
        lines.append(f"{label}s not read: " + ", ".join(f"{file.name} ({file.reason})" for file in unread))


def _attached_mail(part: Any) -> bytes:
    """The bytes of a mail attached to a mail (a message/rfc822 part). RFC 2046 has it sent plain, and
    the parser makes it a message part; some writers, aspose's .msg export among them, send it in
    base64, which the parser takes for a mail of no headers whose body is that base64."""
    import base64
    import quopri

    payload = part.get_payload()
    if not isinstance(payload, list):
        return part.get_payload(decode=True) or b""
    if not payload:
        return b""
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if encoding == "base64":
        return base64.b64decode(payload[0].get_payload())
    if encoding == "quoted-printable":
        return quopri.decodestring(payload[0].get_payload().encode("ascii", "replace"))
    return payload[0].as_bytes()


def _attachment_name(part: Any) -> str:
    """The name an attachment goes by: its file name (the last part of a path some mailers send), an
    attached mail's subject where its name says nothing (Outlook names it by its subject; a writer
    may call it "attachment.bin"), or its content type. An attached mail's name ends in .eml, the
    format it is read in."""
    name = (part.get_filename() or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if part.get_content_type() != "message/rfc822" or name.lower().endswith(".eml"):
        return name or part.get_content_type()
    if name.lower().endswith(".msg"):  # a MIME mail whatever its name says ("Fees.msg"): read as an .eml
        return f"{Path(name).stem}.eml"
    return _mail_name(_attached_mail(part), "forwarded message")


def _mail_name(data: bytes, untitled: str) -> str:
    """The name a mail inside a file (attached to a mail, or in a mailbox) goes by: its subject,
    ``untitled`` where it has none, as a .eml, the format it is read in."""
    import email.parser
    import email.policy

    head = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)
    return f"{' '.join(str(head['Subject'] or '').split()) or untitled}.eml"


def _read_attachment(part: Any, shown: set[str]) -> _Contained:
    """One attachment of an e-mail, read as the file it is (:func:`_read_contained`): a mail's facts
    are often in the PDF or the spreadsheet attached to it, not its body. ``shown``: the Content-IDs
    of the pictures the mail's HTML body shows in place, which are not read (:func:`_body_picture`)."""
    try:
        name = _attachment_name(part)
        if _body_picture(part, shown):
            return _Contained(name, reason="a picture shown in the mail's body (a logo, a banner), not read by OCR")
        data = _attached_mail(part) if part.get_content_type() == "message/rfc822" else part.get_payload(decode=True)
    except MemoryError:
        raise
    except Exception as exc:  # a base64 body cut short, a header no charset decodes
        return _Contained(part.get_filename() or part.get_content_type(), reason=f"it looks damaged ({type(exc).__name__})")
    return _read_contained(name, data or b"")


def _is_tnef(part: Any) -> bool:
    """Whether a mail's attachment is Outlook's winmail.dat (TNEF): by its type, or by its name where a
    relay sent it as bytes of no type."""
    return (part.get_content_type() in ("application/ms-tnef", "application/vnd.ms-tnef")
            or (part.get_filename() or "").strip().lower() in ("winmail.dat", "win.dat"))


#: TNEF's MAPI properties of an attachment: hidden from the list of attachments, and the content id a body shows it by
_PR_ATTACHMENT_HIDDEN, _PR_ATTACH_CONTENT_ID = 0x7FFE, 0x3712
#: a line of an RTF body made from HTML that only names the picture it showed ("cid:image003.jpg@01D2EE6A.85652C70")
_CID_LINE = re.compile(r"^cid:\S+$", re.MULTILINE)


def _tnef_parts(part: Any, path: Path, with_body: bool) -> tuple[str, list[_Contained]]:
    """The files Outlook packed into a winmail.dat (TNEF; tnefparse), each read as an attachment of
    the mail, and, ``with_body``, the body it packed (HTML, else Rich Text, else plain text): a mail
    Outlook sent in Rich Text has a plain body of its own beside it, which is read instead. A picture
    the body shows (hidden from the attachments' list, or named by a content id) is not read by OCR,
    as a MIME body's pictures are not (:func:`_body_picture`). A damaged one is named with its reason."""
    import tnefparse

    name = _attachment_name(part)
    try:
        tnef = tnefparse.TNEF(part.get_payload(decode=True) or b"")
        text = ""
        if with_body:
            if tnef.htmlbody:
                html = tnef.htmlbody
                text = _html_to_text(html.decode("utf-8", "replace") if isinstance(html, bytes) else html)[0]
            elif tnef.rtfbody:
                text = _CID_LINE.sub("", _rtf_text(tnef.rtfbody, path)[0]).strip()
            elif tnef.body:
                plain = tnef.body.decode("cp1252", "replace") if isinstance(tnef.body, bytes) else tnef.body
                text = unwrap_lines(plain.replace("\x00", "").replace("\r\n", "\n").strip())
        files = []
        for attachment in tnef.attachments:
            file = attachment.long_filename() or "attachment"
            properties = {attribute.name: attribute.data for attribute in attachment.mapi_attrs}
            if (SUFFIXES.get(document_suffix(file)) in _PICTURE_KINDS
                    and (properties.get(_PR_ATTACHMENT_HIDDEN) is True or properties.get(_PR_ATTACH_CONTENT_ID))):
                files.append(_Contained(file, reason="a picture shown in the mail's body (a logo, a banner), not read by OCR"))
            else:
                files.append(_read_contained(file, attachment.data or b""))
    except MemoryError:
        raise
    except Exception as exc:  # not TNEF's signature, a length past the end, an attribute tnefparse cannot decode
        return "", [_Contained(name, reason=f"it looks damaged ({type(exc).__name__})")]
    return text, files


#: a picture an HTML body shows from the mail's own parts: ``<img src="cid:banner@harbour">``
_CID = re.compile(r"""cid:([^\s"'<>)]+)""", re.IGNORECASE)


def _body_picture(part: Any, shown: set[str]) -> bool:
    """Whether a mail's part is a picture its HTML body shows in place (marked inline, or named by a
    Content-ID the body links to): a newsletter's logos and banners, a signature's icons, which OCR
    would read at a second or so each and for nothing. A picture attached as a file is read."""
    if part.get_content_maintype() != "image":
        return False
    cid = str(part["Content-ID"] or "").strip().strip("<>")
    return part.get_content_disposition() == "inline" or (bool(cid) and cid in shown)


#: the most files an archive is read to, and the most bytes its files of types convrag reads unpack to
MAX_ARCHIVE_FILES = 10_000
MAX_ARCHIVE_BYTES = 1 << 30
#: the most pictures of an archive read by OCR (a second or so each: a Notion export's hundreds of
#: screenshots would keep an upload minutes longer than its documents); the others are named
MAX_ARCHIVE_PICTURES = 200


def _member_name(info: Any) -> str:
    """An archive member's name. zipfile reads a name without the UTF-8 flag as code page 437, the
    format's first encoding; macOS's Archive Utility and many other tools write UTF-8 without the
    flag, so "Gebühren.md" came out as "Geb├╝hren.md". Such a name is read as UTF-8 where its
    bytes are UTF-8."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


class _Member(NamedTuple):
    """A file in an archive, as its format lists it: its path there (readable), the bytes it claims to
    unpack to, whether a password locks it, and how to read its bytes (which raises :class:`_Unread`
    with the reason where the format knows why it cannot)."""

    name: str
    size: int
    read: Callable[[], bytes]
    locked: bool = False


class _Unread(Exception):
    """An archive's file its format cannot give, with the reason to name it by: a method Python
    cannot unpack, a password, a feature libarchive lacks."""


_TOO_MANY_FILES = "not read: it holds more than {:,} files; unpack it and index the folder"


def _listed(path: Path, what: str, listing: Iterator[_Member]) -> tuple[list[_Member], str]:
    """The files an archive lists, and where its listing broke off (a download cut short), as "its
    last file listed (the error)"; "" where it did not. An archive broken before its first file is
    refused; one that lists more than :data:`MAX_ARCHIVE_FILES` files is refused as soon as it does
    (a tar or a 7z has no count of its files to read first)."""
    members: list[_Member] = []
    try:
        for member in listing:
            members.append(member)
            if len(members) > MAX_ARCHIVE_FILES:
                raise DataFormatError(path, _TOO_MANY_FILES.format(MAX_ARCHIVE_FILES))
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:  # tar's "unexpected end of data", a compressed stream's EOFError, libarchive's ArchiveError
        if not members:
            if "encrypted" in str(exc):  # libarchive's "The archive header is encrypted": 7-Zip's "Encrypt file names"
                raise DataFormatError(path, "not read: it is locked by a password, its file names too") from None
            raise DataFormatError(path, f"not a readable {what}: it looks damaged or cut short ({_error_text(exc)})") from None
        return members, f"{members[-1].name} ({_error_text(exc)})"
    return members, ""


def _error_text(exc: BaseException) -> str:
    """An error's message for a reason: its first line, without libarchive's "(errno=84, retcode=-30, archive_p=...)"."""
    text = str(exc).split("\n", 1)[0]
    return f"{type(exc).__name__}: {text.split(' (errno=', 1)[0]}" if text else type(exc).__name__


def _archive_to_text(path: Path, members: list[_Member], cut: str = "") -> tuple[str, str, tuple[Heading, ...]]:
    """The files of an archive (zip, tar, 7z, RAR), read as a folder's are but as one document: each
    file of a type convrag reads, in path order, a section headed "File: its path" (its own headings
    a level below), then the others named with their reasons (an archive's pictures). ``members``
    come in the archive's own order, and are read in it: a compressed tar, or a 7z's solid block, is
    one stream, which a read out of its order would unpack again from its start. Hidden files and
    macOS's ``__MACOSX`` copies are left out. An archive of more than :data:`MAX_ARCHIVE_FILES`
    files, or whose readable files claim more than :data:`MAX_ARCHIVE_BYTES` unpacked (a zip bomb
    claims terabytes), is refused before anything is unpacked. ``cut``: where the archive's listing
    broke off (:func:`_listed`), named at the text's end."""
    ends = f"the archive ends early, after {cut}: any files after it are not read" if cut else ""
    try:
        text, headings = _archive_files(path, members)
    except DataFormatError as exc:
        raise DataFormatError(path, f"{exc.reason}; {ends}" if ends else exc.reason) from None
    return text + (f"\n{ends[0].upper()}{ends[1:]}." if ends else ""), "", headings


def _archive_files(path: Path, members: list[_Member]) -> tuple[str, tuple[Heading, ...]]:
    """The text and headings of :func:`_archive_to_text`, without the cut."""
    members = [member for member in members
               if not any(part.startswith(".") or part == "__MACOSX" for part in member.name.split("/"))]
    if len(members) > MAX_ARCHIVE_FILES:
        raise DataFormatError(path, _TOO_MANY_FILES.format(MAX_ARCHIVE_FILES))
    if sum(member.size for member in members if document_suffix(member.name) in SUFFIXES) > MAX_ARCHIVE_BYTES:
        raise DataFormatError(path, f"not read: its documents unpack to more than {MAX_ARCHIVE_BYTES >> 20:,} MB; "
                                    "unpack it and index the folder")
    # which files are read is decided in path order (the first pictures by path are read), then they are read in the archive's
    files: dict[int, _Contained] = {}
    pictures = 0
    for index in sorted(range(len(members)), key=lambda index: members[index].name):
        name, kind = members[index].name, SUFFIXES.get(document_suffix(members[index].name))
        if kind in _PICTURE_KINDS:
            pictures += 1
        if kind is None:
            files[index] = _Contained(name, reason="not a type convrag reads")
        elif kind in _PICTURE_KINDS and pictures > MAX_ARCHIVE_PICTURES:
            files[index] = _Contained(name, reason=f"a picture past the first {MAX_ARCHIVE_PICTURES} of the archive, which OCR "
                                                   "reads at a second or so each; unpack it and index the folder")
        elif members[index].locked:
            files[index] = _Contained(name, reason="locked by a password")
    for index, member in enumerate(members):
        if index in files:
            continue
        try:
            data = member.read()
        except _Unread as exc:
            files[index] = _Contained(member.name, reason=str(exc))
            continue
        except MemoryError:
            raise
        except Exception as exc:  # a damaged member: a bad CRC, data zlib cannot unpack, a tar cut short in it
            files[index] = _Contained(member.name, reason=f"it looks damaged ({type(exc).__name__})")
            continue
        files[index] = _read_contained(member.name, data)
    ordered = [files[index] for index in sorted(files, key=lambda index: members[index].name)]
    if not ordered:
        raise DataFormatError(path, "no file in it could be read (it is empty)")
    if not any(file.text for file in ordered):
        named = ", ".join(f"{file.name} ({file.reason})" for file in ordered[:5])
        raise DataFormatError(path, f"no file in it could be read: {named}" + (f" and {len(ordered) - 5} more" if len(ordered) > 5 else ""))
    lines: list[str] = []
    headings: list[Heading] = []
    _sections("File", ordered, lines, headings)
    return "\n".join(lines), tuple(headings)


def _zip_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a zip archive (a Google Drive folder downloaded, a Notion or Confluence export, a
    manual's HTML pages), read by :func:`_archive_to_text`; zipfile unpacks no file past the size it
    claims."""
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(path, f"not a readable zip archive ({exc})") from None
    with archive:
        def reader(info: zipfile.ZipInfo) -> Callable[[], bytes]:
            def read() -> bytes:
                try:
                    return archive.read(info)
                except NotImplementedError:  # Deflate64 (Windows's for large files), PPMd, a method of zipfile's future
                    raise _Unread(f"packed with a method Python's zipfile cannot unpack ({info.compress_type}); "
                                  "unpack the archive and index the folder") from None
            return read

        return _archive_to_text(path, [_Member(readable_name(_member_name(info)), info.file_size, reader(info), bool(info.flag_bits & 0x1))
                                       for info in archive.infolist() if not info.is_dir()])


#: the most bytes a compressed archive without a table of its files (a compressed tar, a 7z's or a
#: RAR's solid block) is unpacked through to list them: a gzip bomb unpacks a thousandfold
MAX_STREAM_BYTES = 2 << 30
_UNPACKS_PAST = "not read: it unpacks to more than {:,} MB; unpack it and index the folder"


def _tar_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a tar archive, compressed (.tar.gz, .tgz, .tar.bz2, .tar.xz) or not: a folder
    packed on Linux or macOS, a project's documentation, a GitHub release's sources; read by
    :func:`_archive_to_text`. Only its regular files are read (not its links, which name another
    file of it or one of the machine that packed it). A compressed archive that unpacks to more than
    :data:`MAX_STREAM_BYTES` is refused when it passes that size. An archive cut short (a download
    stopped) is read as far as it goes, and the cut is named."""
    import tarfile

    try:
        archive = tarfile.open(path, "r:*")
    except MemoryError:
        raise
    except Exception as exc:  # tarfile.ReadError, a compressed stream cut before its first file (EOFError)
        raise DataFormatError(path, f"not a readable tar archive ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    with archive:
        compressed = not isinstance(archive.fileobj, io.BufferedReader)

        def reader(info: tarfile.TarInfo) -> Callable[[], bytes]:
            def read() -> bytes:
                file = archive.extractfile(info)
                return file.read() if file is not None else b""
            return read

        def listing() -> Iterator[_Member]:
            passed = 0
            for info in archive:
                passed += info.size
                if compressed and passed > MAX_STREAM_BYTES:
                    raise DataFormatError(path, _UNPACKS_PAST.format(MAX_STREAM_BYTES >> 20))
                if info.isfile():  # as a folder's path: without the "./" of ``tar -C folder -czf x.tgz .``
                    yield _Member(readable_name(info.name.removeprefix("./").lstrip("/")), info.size, reader(info))

        return _archive_to_text(path, *_listed(path, "tar archive", listing()))


#: how many times a 7z or RAR archive is opened again after a file of it failed (libarchive's reader
#: stops at the first error): a locked file among open ones, a damaged archive's every file
MAX_REOPENINGS = 10


def _libarchive_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a 7z or RAR archive (7-Zip's, WinRAR's: how many Windows users pack a folder),
    read by libarchive (the C library, through libarchive-c) and then by :func:`_archive_to_text`.
    libarchive reads a file's data only while it is the current one, so the archive is opened twice:
    once to list its files, once to read those chosen, in its order. A file locked by a password is
    named so (one whose names are locked too is refused whole); what libarchive does not read (RAR
    3's solid archives past the first file, a volume of several) is named with its message. An
    archive that unpacks past :data:`MAX_STREAM_BYTES` while listed is refused."""
    try:
        import libarchive
    except Exception:  # no libarchive.so: libarchive-c fails on its first function, an AttributeError, not an ImportError
        raise DataFormatError(path, "not read: 7z and RAR archives are read by libarchive, which is not installed (Debian and "
                                    "Ubuntu: apt-get install libarchive13, or libarchive13t64 since Debian 13 and Ubuntu 24.04)") from None
    what = _FORMAT_NAMES[SUFFIXES[document_suffix(path)]]

    def listing() -> Iterator[_Member]:
        passed = 0
        with libarchive.file_reader(str(path)) as archive:
            for ordinal, entry in enumerate(archive):
                passed += entry.size or 0
                if passed > MAX_STREAM_BYTES:
                    raise DataFormatError(path, _UNPACKS_PAST.format(MAX_STREAM_BYTES >> 20))
                if entry.isreg and not entry.islnk and not entry.issym:
                    yield _Member(readable_name(entry.pathname), entry.size or 0, functools.partial(read, ordinal))

    with contextlib.ExitStack() as opened:
        entries: Iterator[tuple[int, Any]] | None = None
        reopenings = 0

        def read(ordinal: int) -> bytes:
            """The bytes of the archive's ``ordinal``-th entry, the reader moved forward to it."""
            nonlocal entries, reopenings
            if entries is None:
                if reopenings > MAX_REOPENINGS:
                    raise _Unread(f"not read: the archive failed more than {MAX_REOPENINGS} times before it")
                reopenings += 1
                entries = enumerate(opened.enter_context(libarchive.file_reader(str(path))))
            try:
                for index, entry in entries:
                    if index == ordinal:
                        data = bytearray()
                        for block in entry.get_blocks():
                            data += block
                            if len(data) > MAX_ARCHIVE_BYTES:
                                raise _Unread("it unpacks to more than its archive claims")
                        return bytes(data)
            except Exception as exc:  # libarchive stops at its first error: the next file is read from the archive opened again
                entries = None
                if isinstance(exc, _Unread):
                    raise
                message = _error_text(exc)
                raise _Unread("locked by a password" if "encrypted" in message else f"not read by libarchive ({message})") from None
            raise _Unread("not found when the archive was read again")

        members, cut = _listed(path, what, listing())
        return _archive_to_text(path, members, cut)


def _eml_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an e-mail saved as a file (.eml, RFC 5322; what mail programs other than Outlook
    save and export threads as): its sender, recipients and date, then its body, plain text where it
    has one (lines its writer wrapped joined again), else its HTML read as a page is (an HTML mail is
    laid out in tables: :func:`_unbox_layout_tables`), then each attachment of a type convrag reads,
    a section headed by its name (its own headings a level below), then the names of those not read,
    each with its reason. The title is its subject. Headers in RFC 2047 encoding ("=?UTF-8?B?...?=")
    read as letters."""
    import email
    import email.policy

    try:
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    except MemoryError:
        raise
    except Exception as exc:
        raise DataFormatError(path, f"not a readable e-mail ({exc or type(exc).__name__})") from None
    return _mail_to_text(message, path)


#: the largest mailbox file read: Gmail's Takeout of all mail runs to gigabytes
MAX_MAILBOX_BYTES = 1 << 30
#: a line a mailbox quoted, as it quotes every line that starts "From " in a mail (">From 1 November.")
_FROM_QUOTED = re.compile(rb"^>(>*From )", re.MULTILINE)


def _mbox_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The mails of a mailbox file (.mbox: a Thunderbird folder, Gmail's Takeout, Apple Mail's export, a
    mailing list's archive), read as one document as an archive is: each mail, in the file's order, a
    section headed "Mail: its subject" and read as a mail saved as .eml is (:func:`_read_contained`:
    its attachments too), its lines that start "From " unquoted. A mailbox over
    :data:`MAX_MAILBOX_BYTES` is refused before it is read."""
    import mailbox

    size = path.stat().st_size
    if size > MAX_MAILBOX_BYTES:
        raise DataFormatError(path, f"not read: it is over {MAX_MAILBOX_BYTES >> 20:,} MB; export the folders or the "
                                    "months that matter as mailboxes of their own")
    with path.open("rb") as file:
        if not file.read(5).startswith(b"From "):
            raise DataFormatError(path, 'not a mailbox (.mbox): it does not start with a "From " line')
    box = mailbox.mbox(str(path), create=False)
    files: list[_Contained] = []
    try:
        for key in box.iterkeys():
            data = _FROM_QUOTED.sub(rb"\1", box.get_bytes(key))
            try:
                name = _mail_name(data, "no subject")
            except Exception:  # a header no charset decodes: the mail is read all the same
                name = "no subject.eml"
            files.append(_read_contained(name, data))
    finally:
        box.close()
    if not any(file.text for file in files):
        raise DataFormatError(path, "no mail in it could be read" + (" (it holds none)" if not files else ""))
    lines: list[str] = []
    headings: list[Heading] = []
    _sections("Mail", files, lines, headings)
    return "\n".join(lines), "", tuple(headings)


def _msg_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Outlook message saved as a file (.msg, [MS-OXMSG]: what dragging a mail out of
    Outlook makes), read as the .eml it stands for (:func:`_mail_to_text`): aspose-email-foss turns
    its properties (subject, sender, recipients, delivery time, plain and HTML bodies, attachments,
    messages attached to it) into that MIME message. A body Outlook kept only as compressed RTF (a mail
    written in Rich Text, or its HTML wrapped in RTF) is decompressed (compressed-rtf) and read as an RTF
    document is; it was left out, and such a message read as its headers alone."""
    import email
    import email.policy

    import olefile
    from aspose.email_foss.msg import MapiMessage

    if not olefile.isOleFile(str(path)):
        raise DataFormatError(path, "not an Outlook message (.msg): not an OLE compound file")
    with MapiMessage.from_file(path) as mapi:  # as bytes and parsed again: an attached mail is a message part only then
        if not mapi.body and not mapi.body_html and (body := _rtf_body(mapi, path)):
            mapi.set_property(_PR_BODY, _PT_UNICODE, body)
        message = email.message_from_bytes(mapi.to_email_bytes(), policy=email.policy.default)
    return _mail_to_text(message, path)


#: an Outlook message's properties ([MS-OXPROPS]): its plain body, its body as compressed RTF, and their types
_PR_BODY, _PT_UNICODE = 0x1000, 0x001F
_PR_RTF_COMPRESSED, _PT_BINARY = 0x1009, 0x0102


def _rtf_body(mapi: Any, path: Path) -> str:
    """The text of an Outlook message's compressed RTF body ("" where it has none), or a line that says
    why it could not be read: the mail's headers and attachments are read all the same."""
    import compressed_rtf

    packed = mapi.get_property_value(_PR_RTF_COMPRESSED, _PT_BINARY)
    if not isinstance(packed, bytes | bytearray) or not packed:
        return ""
    try:
        return _rtf_text(compressed_rtf.decompress(bytes(packed)), path)[0]
    except MemoryError:
        raise
    except Exception as exc:  # a damaged stream (compressed-rtf's own errors), RTF striprtf cannot read
        said = str(exc).rstrip("!.") or type(exc).__name__  # compressed-rtf raises a bare Exception with its reason
        return f"Body not read: its compressed RTF looks damaged ({said})"


def _mail_to_text(message: Any, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """An e-mail's text (:func:`_eml_to_text`), from the parsed message."""
    try:
        lines = [f"{name}: {' '.join(str(message[name]).split())}" for name in _MAIL_FIELDS if message[name]]
        body = message.get_body(preferencelist=("plain", "html"))
        html = message.get_body(preferencelist=("html",))
        content = body.get_content() if body is not None else ""
        # the pictures the HTML body shows in place (the body itself where it has no plain text)
        shown = set(_CID.findall(content if html is body else html.get_content())) if html is not None else set()
        headings: list[Heading] = []
        if body is not None:
            if body.get_content_subtype() == "html":
                text, _, _, found = _html_to_text(content)
                headings += found
            else:
                text = unwrap_lines(content.replace("\r\n", "\n").strip())
            lines.append(text)
        attachments: list[_Contained] = []
        for part in message.iter_attachments():
            if _is_tnef(part):  # Outlook's winmail.dat: the mail's attachments, and its body in Rich Text, packed in one
                packed_body, packed = _tnef_parts(part, path, with_body=body is None)
                lines.append(packed_body)
                attachments += packed
            else:
                attachments.append(_read_attachment(part, shown))
        subject = " ".join(str(message["Subject"] or "").split())
    except MemoryError:
        raise
    except Exception as exc:  # a part whose encoding or charset cannot be decoded
        raise DataFormatError(path, f"not a readable e-mail ({exc or type(exc).__name__})") from None
    if not any(message[name] for name in (*_MAIL_FIELDS, "Subject")):
        raise DataFormatError(path, "not an e-mail (no From, To, Date or Subject header)")
    _sections("Attachment", attachments, lines, headings)
    return (typeset_letters(whole_characters("\n".join(line for line in lines if line))), typeset_letters(subject),
            tuple(headings))


def _ppt_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
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


def _sheet_block(name: str, table: str) -> str:
    """A workbook's sheet as a block of text: its rows, opened by its name where the name says
    something ("Prices 2025", not "Sheet1"), for an Excel and an OpenDocument workbook alike."""
    name = name.strip()
    return f"{name}\n{table}" if name and not _NO_SHEET_NAME.fullmatch(name) else table


def _cell_text(value: Any) -> str:
    """A cell's value as a reader sees it: 12 for 12.0, a date without a midnight time, nothing for none."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def _made_name(name: str) -> bool:
    """Whether a file's name is one a program made, not a person: fewer than two words of three
    letters or more ("2403.12345", "scan0001", "doc 48213"; not "harbour rules")."""
    return len(re.findall(r"[^\W\d_]{3,}", name)) < 2


#: the longest first line taken as a PDF's title
_TITLE_LINE_CHARS, _TITLE_LINE_WORDS = 150, 20


def _title_line(text: str) -> str:
    """A document's first line where it reads as a title, else "": at most 20 words and 150
    characters, a letter in it, no sentence's end punctuation after it. A PDF without a title in its
    metadata, saved under a name a program made, was cited as "[1] 2403.12345"; its first line is
    the title a reader sees on its first page. So is a plain text's, set apart by a blank line:
    "notes.txt" was cited as "[1] notes"."""
    first = text.split("\n", 1)[0].strip()
    fits = len(first) <= _TITLE_LINE_CHARS and len(first.split()) <= _TITLE_LINE_WORDS
    return first if fits and re.search(r"[^\W\d_]", first) and not first.endswith((".", ",", ";", ":", "!", "?")) else ""


def _heads(raw: str) -> bool:
    """Whether a plain text's first line stands apart, a blank line after it, as a title does (a
    first line that runs on into the next is a paragraph's start)."""
    lines = raw.strip().splitlines()
    return len(lines) > 2 and not lines[1].strip()


def _xml(data: bytes) -> Any:
    """A package part's XML tree (lxml), with no entity expanded and nothing fetched: the parts of
    an uploaded book or document are anybody's."""
    from lxml import etree

    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


_OPF = "{http://www.idpf.org/2007/opf}"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_CONTAINER_ROOTFILE = "{urn:oasis:names:tc:opendocument:xmlns:container}rootfile"
#: the media types of an EPUB's reading-order items that are pages (its images and styles are not)
_EPUB_PAGES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})


def _epub_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an EPUB book (2 or 3): its pages in reading order (the package's spine, its
    "linear=no" asides left out), each read as an HTML page is, a blank line between them; the
    title is the book's own (``dc:title``), else its first top-level heading. A zip without the container and package files an EPUB
    must have is a :class:`DataFormatError` saying so."""
    import posixpath
    import zipfile
    from urllib.parse import unquote

    from lxml import etree

    _check_unpacked_size(path, "an EPUB book")
    try:
        with zipfile.ZipFile(path) as book:
            container = _xml(book.read("META-INF/container.xml"))
            rootfile = container.find(f".//{_CONTAINER_ROOTFILE}")
            if rootfile is None or not rootfile.get("full-path"):
                raise DataFormatError(path, "not a readable EPUB book: its container names no package file")
            package_path = rootfile.get("full-path")
            package = _xml(book.read(package_path))
            items = {item.get("id"): item for item in package.iter(f"{_OPF}item")}
            title = next((" ".join("".join(t.itertext()).split()) for t in package.iter(_DC_TITLE)), "")
            pages = []
            headings: list[Heading] = []
            for ref in package.iter(f"{_OPF}itemref"):
                item = items.get(ref.get("idref"))
                if item is None or ref.get("linear") == "no" or item.get("media-type") not in _EPUB_PAGES:
                    continue
                href = posixpath.normpath(posixpath.join(posixpath.dirname(package_path), unquote(item.get("href", ""))))
                text, _, _, marked = _html_to_text(decode_text(book.read(href), path))
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
    return typeset_letters("\n\n".join(pages)), typeset_letters(own_title(title) or _first_heading(headings)), tuple(headings)


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

    _check_unpacked_size(path, f"an OpenDocument {what}")
    try:
        with zipfile.ZipFile(path) as package:
            content = _xml(package.read("content.xml"))
            meta = _xml(package.read("meta.xml")) if "meta.xml" in package.namelist() else None
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
    title = next((" ".join("".join(t.itertext()).split()) for t in meta.iter(_DC_TITLE)), "") if meta is not None else ""
    return found, title


def _odt_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument text (.odt, LibreOffice's and Google Docs' export), read from its
    XML as a Word document is: a line per paragraph and heading, a table's row a line of its cells
    (named by the headings of its repeated header rows, as a Word table's are), a text frame's
    paragraphs after the paragraph it stands in, footnotes and endnotes at the end; deleted text
    under review, comments and the table of contents are left out. The title is the document's
    own (meta.xml), else its first heading."""
    from . import ocr

    body, title = _odf_package(path, "text", "text")
    notes: list[str] = []
    lines = [(line, "") if line.startswith(_PICTURE_MARK) else ("", line) for line in _odf_lines(body, notes, pictures=True) if line]
    marked = [Heading(_odf_level(h), " ".join("".join(_odf_pieces(h, [], [])).split())) for h in _odf_headings(body)]
    heading = marked[0].text if marked else ""
    areas = _odf_text_areas(path)
    page = areas.get("Standard", next((area for name, area in areas.items() if name), areas[""]))  # Writer's page style, else the first
    pictures = _pictures_to_read(lines + [("", note) for note in notes], page, functools.partial(_package_part, path))
    if pictures and ocr.available():  # scanned pages put into a Writer document, alone or among its text
        read = iter(_read_by_ocr(path, [functools.partial(_opened_for_ocr, blob) for blob in pictures.values()]))
        lines = _with_pictures_read(lines, {place: next(read) for place in pictures})
    text = "\n".join([line for _, line in lines if line] + notes)
    return typeset_letters(text), typeset_letters(own_title(title) or heading), tuple(h for h in marked if h.text)


def _package_part(path: Path, name: str) -> bytes | None:
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


def _odf_text_areas(path: Path) -> dict[str, float]:
    """The area (square hundredths of a millimetre) of the text on a page of an OpenDocument, by the
    name of the master page that lays it out (a Writer document's "Standard", a slide's master): its
    page less its margins (styles.xml). A master without a page size, and the key "", are Letter with
    1-inch margins, as for a Word document (:func:`_word_text_area`)."""
    import zipfile

    inch = 2540
    default = (8.5 * inch - 2 * inch) * (11 * inch - 2 * inch)
    try:
        with zipfile.ZipFile(path) as package:
            styles = _xml(package.read("styles.xml"))
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
#: the most filled cells a workbook is read to (an .ods, repeats counted, and an .xls): a few kilobytes of
#: an .ods's XML can claim a row of a thousand filled cells repeated a thousand times, and the workbook is
#: refused past this
MAX_SHEET_CELLS = 2_000_000


def _ods_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument spreadsheet (.ods, LibreOffice Calc's own format) as an Excel
    workbook's is read: each sheet a block, opened by its name where the name says something, its
    rows read as a CSV file's are (:func:`_table_lines`), a cell as the text it shows (a formula's
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
        table = _table_lines(rows)
        if table:
            sheets.append(_sheet_block(sheet.get(f"{_ODF_TABLE}name") or "", table))
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def _repeat(element: Any, what: str) -> int:
    """How many times a spreadsheet cell (``what`` "columns") or row ("rows") stands, at most
    :data:`_ODS_MAX_REPEAT` (1 where the count is missing or wrong)."""
    try:
        return min(max(1, int(element.get(f"{_ODF_TABLE}number-{what}-repeated", "1"))), _ODS_MAX_REPEAT)
    except ValueError:
        return 1


def _odp_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an OpenDocument presentation (.odp, LibreOffice Impress's own format) as a
    PowerPoint deck's is read: slide by slide, a blank line between two, each slide's title first,
    then its other shapes (frames, shapes with text, groups) in reading order, as a deck's are
    (:func:`_in_reading_order`), then its speaker notes. The title is the presentation's own, else
    its first slide's title."""
    body, title = _odf_package(path, "presentation", "presentation")
    areas = _odf_text_areas(path)
    slides: list[str] = []
    marked: list[Heading] = []
    pictured: list[tuple[int, bytes]] = []  # the slides that are a picture (a deck saved from a PDF, a scan), and it
    for page in body.iter(f"{_ODF_DRAW}page"):
        shapes = [child for child in page if child.tag in _ODP_SHAPES]
        titles = [shape for shape in shapes if shape.get(f"{_ODF_PRESENTATION}class") == "title"]
        others = [placed.element for placed in _in_reading_order(_placed(shape) for shape in shapes if shape not in titles)]
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
    slides = _with_slide_pictures_read(path, slides, pictured)
    return typeset_letters("\n\n".join(s for s in slides if s)), typeset_letters(own_title(title) or heading), tuple(marked)


def _odf_slide_picture(path: Path, shapes: list[Any], lines: list[str], area: float) -> bytes | None:
    """The picture an OpenDocument slide is, where it is one, as a PowerPoint slide's (:func:`_slide_picture`):
    next to no text of its own and a picture covering at least :data:`SCANNED_PAGE_SHARE` of the slide."""
    if _printed("".join(lines)) >= SCANNED_PAGE_CHARACTERS:
        return None
    pictures = [(_odf_length(shape, "width") * _odf_length(shape, "height"), image.get(f"{_XLINK}href") or "")
                for shape in shapes if (image := shape.find(f"{_ODF_DRAW}image")) is not None]
    largest, href = max(pictures, default=(0, ""))
    return _package_part(path, href) if href and largest >= SCANNED_PAGE_SHARE * area else None


#: what a slide draws that can hold text: a frame (a text box, a placeholder, a table), a shape, a group
_ODP_SHAPES = frozenset(f"{_ODF_DRAW}{name}" for name in ("frame", "custom-shape", "rect", "ellipse", "g"))
#: an OpenDocument length ("2.5cm", "10mm", "1in", "72pt") and its unit's size in hundredths of a millimetre
_ODF_LENGTH = re.compile(r"\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*(cm|mm|in|pt|pc|px)?\s*")
_ODF_UNITS = {"cm": 1000.0, "mm": 100.0, "in": 2540.0, "pt": 2540 / 72, "pc": 2540 / 6, "px": 2540 / 96, None: 1000.0}


class _Placed(NamedTuple):
    """A slide's shape where it is drawn, in hundredths of a millimetre, as python-pptx gives a deck's
    (so that :func:`_in_reading_order` orders both)."""
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
    each picture the text shows marked by a line of its own (:data:`_PICTURE_MARK`, its path in the
    package and its area in square hundredths of a millimetre) after the paragraph it stands in, or
    after the table in whose cell it is (:func:`_odt_to_text` reads the scanned pages among them)."""
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
                        shown += [line for line in inside if line.startswith(_PICTURE_MARK)]
                        cells.append(" ".join(line for line in inside if not line.startswith(_PICTURE_MARK)))
                rows.append(cells[:max((i + 1 for i, cell in enumerate(cells) if cell), default=0)])  # the repeated empty cells at its end
                marked = marked or (in_header and len(rows) == 1)
            yield _table_lines(rows, marked=marked)
            yield from shown
        else:  # a list, a list item, a section, an index's body: their paragraphs in order
            yield from _odf_lines(child, notes, pictures)


def _odf_frame_lines(frame: Any, notes: list[str], pictures: bool) -> Iterator[str]:
    """The lines of a frame (:func:`_odf_lines`): its text boxes' paragraphs, and, ``pictures``, the mark of the picture it shows."""
    for box in frame.iter(f"{_ODF_DRAW}text-box"):
        yield from _odf_lines(box, notes, pictures)
    image = frame.find(f"{_ODF_DRAW}image")
    if pictures and image is not None and image.get(f"{_XLINK}href"):
        yield f"{_PICTURE_MARK}{image.get(f'{_XLINK}href')} {_odf_length(frame, 'width') * _odf_length(frame, 'height')}"


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


_RTF_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
_RTF_TITLE = re.compile(r"\{\\title\s+([^{}]*)\}")
#: the control words that say where a paragraph, a table cell and a table row begin and end
_RTF_PARAGRAPH_WORDS = re.compile(r"(?<!\\)\\(pard|intbl|par|cell|row)(?![a-zA-Z])(?:-?\d+)? ?")
#: a heading paragraph's outline level (0 to 8; 9 is body text), as Word, LibreOffice and pandoc write it
_RTF_OUTLINE_LEVEL = re.compile(r"(?<!\\)\\outlinelevel([0-8])(?![0-9]) ?")
#: the letter put before a heading's text to find its line after striprtf: U+E000 plus its level
#: (0 a title, 1 a first-level heading: ``\\outlinelevel0``)
_RTF_HEADING_MARK = 0xE000
#: a paragraph style's number, in the stylesheet and where a paragraph takes it (not ``\\cs``, ``\\ts``)
_RTF_STYLE = re.compile(r"(?<!\\)\\s(\d+)(?![0-9])")
#: a control word, or a group, inside a stylesheet entry: what is left is the style's name
_RTF_STYLE_WORDS = re.compile(r"\\[a-zA-Z]+-?\d* ?|\\\*|\{[^{}]*\}")
#: a table row that repeats atop each page (Word's "Repeat as header row"): the row of the column headings
_RTF_HEADER_ROW = re.compile(r"(?<!\\)\\trhdr(?![a-zA-Z0-9]) ?")
#: the letter put into a header row's text to find it after striprtf
_RTF_HEADER_MARK = 0xE010


def _rtf_cell_paragraphs(source: str) -> str:
    """The RTF with each paragraph end inside a table cell taken out (the cell's last) or made a
    space (between two paragraphs of one cell). pandoc, and Word for a cell of several paragraphs,
    end a cell's paragraph with \\par before its \\cell, which striprtf reads as a line end: a
    row came out as "Property", "|Value", each cell a line. A paragraph is in a table from its
    \\intbl to the next \\pard."""
    words = list(_RTF_PARAGRAPH_WORDS.finditer(source))
    ends: list[str | None] = [None] * len(words)  # the next \\par, \\cell or \\row after each word
    following: str | None = None
    for i in range(len(words) - 1, -1, -1):
        ends[i] = following
        if words[i].group(1) in ("par", "cell", "row"):
            following = words[i].group(1)
    pieces: list[str] = []
    start, in_table = 0, False
    for word, end in zip(words, ends):
        name = word.group(1)
        if name == "pard":
            in_table = False
        elif name == "intbl":
            in_table = True
        elif name == "par" and in_table:
            pieces += [source[start:word.start()], "" if end == "cell" else " "]
            start = word.end()
    return "".join(pieces) + source[start:]


def _rtf_heading_styles(source: str) -> dict[str, int]:
    """The paragraph styles of an RTF's stylesheet that mark headings, by number, with their level:
    a style with an outline level (Word writes ``\\outlinelevel0`` there and on each paragraph), or
    named as Word names its heading styles ("heading 2", "Title"). LibreOffice writes only the name,
    and its paragraphs only the style's number (``\\s2``), so its headings were not read."""
    start = source.find("{\\stylesheet", 0, 65536)
    if start < 0:
        return {}
    depth, end = 0, start
    for end in range(start, min(len(source), start + 1_000_000)):  # the stylesheet group, braces balanced
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
    styles: dict[str, int] = {}
    for entry in re.finditer(r"\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", source[start + 1:end]):
        number = _RTF_STYLE.search(entry.group(1))
        if number is None:
            continue
        outline = _RTF_OUTLINE_LEVEL.search(entry.group(1))
        level = int(outline.group(1)) + 1 if outline else _word_level(_RTF_STYLE_WORDS.sub("", entry.group(1)).strip(" ;"))
        if level is not None:
            styles[number.group(1)] = level
    return styles


def _rtf_marked(source: str) -> str:
    """The RTF with a private letter put before the text of each heading paragraph (U+E000 plus its
    level: :func:`_rtf_heading_styles`, or an outline level on the paragraph) and into each header
    row (``\\trhdr``), each in a group of its own so that the document's \\uc setting is kept: both
    are known only in the markup, and striprtf keeps only the text."""
    def mark(letter: int) -> str:
        return f"{{\\uc1\\u{letter - 0x10000}?}}"

    styles = _rtf_heading_styles(source)
    source = _RTF_HEADER_ROW.sub(lambda m: f"\\trhdr {mark(_RTF_HEADER_MARK)}", source)
    if styles:
        source = _RTF_STYLE.sub(lambda m: m.group(0) + (f" {mark(_RTF_HEADING_MARK + styles[m.group(1)])}"
                                                        if m.group(1) in styles else ""), source)
    return _RTF_OUTLINE_LEVEL.sub(lambda m: f"\\outlinelevel{m.group(1)} {mark(_RTF_HEADING_MARK + int(m.group(1)) + 1)}", source)


def _rtf_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an RTF document (striprtf): a line per paragraph, a table's row a line of its
    cells joined by " | " as a Word table's are; pictures and footnotes are left out. Its letters
    are the code page's it declares (``\\ansicpg``, Windows-1252 by default) and its ``\\u``
    escapes; its title is its own (``{\\info{\\title ...}}``), else its first top-level heading.
    Its headings are the paragraphs with an outline level (``\\outlinelevel0`` is a first-level
    heading) or a heading style (:func:`_rtf_heading_styles`); a table's first row names the columns where it is a header row (``\\trhdr``), as a
    Word table's does."""
    return _rtf_text(path.read_bytes(), path)


def _rtf_text(raw: bytes, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """:func:`_rtf_to_text` of the RTF ``raw`` (a file's, or an Outlook message's body); ``path`` names it in errors."""
    from striprtf.striprtf import rtf_to_text

    if not raw.lstrip().startswith(b"{\\rtf"):
        raise DataFormatError(path, "not an RTF document (it does not start with {\\rtf)")
    page = _RTF_CODE_PAGE.search(raw[:4096])
    encoding = f"cp{page.group(1).decode()}" if page else "cp1252"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "cp1252"
    source = raw.decode("latin-1")  # RTF itself is 7-bit; its escapes carry the other letters

    def plain(rtf: str) -> str:  # a \\u escape holds a UTF-16 unit: a letter past the first 65,536 comes as a pair
        return whole_characters(rtf_to_text(rtf, encoding=encoding, errors="replace"))

    try:
        text = plain(_rtf_marked(_rtf_cell_paragraphs(source)))
    except (ValueError, OverflowError) as exc:  # a \\u escape's number too large for a character
        raise DataFormatError(path, f"not a readable RTF document ({exc})") from None
    marks = {chr(_RTF_HEADING_MARK + level): level for level in range(10)}
    header = chr(_RTF_HEADER_MARK)
    unmark = {ord(mark): None for mark in [*marks, header]}
    lines: list[str] = []
    rows: list[list[str]] = []
    headed = False
    headings: list[Heading] = []
    for line in text.splitlines() + [""]:  # a table's rows come as "Plan|Price|"
        level = next((marks[c] for c in line if c in marks), None)
        marked_row = header in line
        line = line.translate(unmark)
        if line.endswith("|"):
            if not rows:  # a table's first row, marked as repeated atop each page: its columns' headings
                headed = marked_row
            rows.append([" ".join(cell.split()) for cell in line[:-1].split("|")])
            continue
        if rows:
            lines.append(_table_lines(rows, marked=headed))
            rows, headed = [], False
        lines.append(" ".join(line.split()))
        if level is not None and lines[-1]:
            headings.append(Heading(level, lines[-1]))
    title = _RTF_TITLE.search(source[:65536])
    try:
        own = plain("{\\rtf1 " + title.group(1) + "}") if title else ""
    except (ValueError, OverflowError):
        own = ""
    return (typeset_letters("\n".join(line for line in lines if line)), typeset_letters(own_title(own) or _first_heading(headings)),
            tuple(headings))


#: what each format read from a file is called in its errors
_FORMAT_NAMES = {"pdf": "PDF", "docx": "Word document", "pptx": "PowerPoint deck", "xlsx": "Excel workbook", "epub": "EPUB book",
                 "odt": "OpenDocument text", "ods": "OpenDocument spreadsheet", "odp": "OpenDocument presentation",
                 "rtf": "RTF document", "doc": "Word 97-2003 document", "xls": "Excel 97-2003 workbook", "eml": "e-mail",
                 "msg": "Outlook message", "tiff": "TIFF scan", "picture": "picture", "zip": "zip archive", "tar": "tar archive", "7z": "7z archive", "rar": "RAR archive",
                 "ppt": "PowerPoint 97-2003 deck", "mbox": "mailbox"}
#: the formats read from a file by their own library rather than decoded as text
_PACKAGES = {"pdf": _pdf_to_text, "docx": _docx_to_text, "pptx": _pptx_to_text, "xlsx": _xlsx_to_text, "epub": _epub_to_text,
             "odt": _odt_to_text, "ods": _ods_to_text, "odp": _odp_to_text, "rtf": _rtf_to_text, "doc": _doc_to_text,
             "xls": _xls_to_text, "eml": _eml_to_text, "msg": _msg_to_text, "mbox": _mbox_to_text,
             "ppt": _ppt_to_text, "tiff": _tiff_to_text, "picture": _picture_to_text, "zip": _zip_to_text,
             "tar": _tar_to_text, "7z": _libarchive_to_text, "rar": _libarchive_to_text}


def read_document(path: Path, doc_id: str | None = None, url: str | None = None, name: str | None = None,
                  charset: str = "") -> Document:
    """Read one file; the format follows the suffix. ``url`` overrides the file's own address;
    ``name`` (e.g. an upload's original file name) gives the title of a document without one;
    ``charset`` is what a web server said an HTML page is written in (:func:`page_text`)."""
    path = Path(path)
    fallback = _name_as_title(readable_name(document_stem(name or path.name)))
    kind = SUFFIXES.get(document_suffix(path))
    if kind is None:
        raise DataFormatError(path, f"unsupported document type {path.suffix!r} (expected {', '.join(sorted(SUFFIXES))})")
    if kind in _PACKAGES:
        try:
            text, title, headings = _PACKAGES[kind](path)
        except (DataFormatError, MemoryError):
            raise
        except Exception as exc:  # what a damaged file raises from deep in zipfile, zlib, lxml or a format library
            raise DataFormatError(path, f"not a readable {_FORMAT_NAMES[kind]}: it looks damaged "
                                        f"({type(exc).__name__}: {str(exc)[:200]})") from None
        if not title and kind == "pdf":
            # the first bookmark, where the first line begins it, is the title the first page shows, whole where the
            # page wraps it ("... Heat Pump: Owner's" / "Manual"; "... Heat Pump:" / "Owner's Manual", ending as no title
            # does); LibreOffice writes no title into the PDF of a document without one
            first = text.split("\n", 1)[0].strip()
            whole = next((h.text for h in headings[:1] if len(first) > 3 and h.text.startswith(first)), "")
            if 0 < len(whole) <= _TITLE_LINE_CHARS:
                title = whole
            elif _made_name(fallback):  # "2403.12345": the PDF's first line names it better
                title = _title_line(text)
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
    if kind in ("html", "mhtml"):  # a web page, or one saved whole by a browser (:func:`_saved_page`)
        text, title, canonical, headings = _html_to_text(_saved_page(raw, path) if kind == "mhtml" else raw)
        url = canonical or url
    elif kind in ("markdown", "mdx"):
        text, title, headings = _markdown_to_text(raw, mdx=kind == "mdx")
    elif kind == "notebook":  # its Markdown cells, its code and what the code printed (:mod:`.notebooks`)
        from . import notebooks

        text, title, headings = _markdown_to_text(notebooks.to_markdown(raw, path))
    elif kind == "transcript":  # captions, a meeting's transcript: a paragraph a speaker's turn (:mod:`.transcripts`)
        from . import transcripts

        text, title = transcripts.to_text(raw, path), ""
    elif kind in _PANDOC_KINDS:  # LaTeX, Org, AsciiDoc, MediaWiki: pandoc's HTML of it (:mod:`.pandoc`)
        text, title, _, headings = _html_to_text(pandoc.to_html(raw, kind, path))
    elif kind == "rst":
        text, title, headings = _rst_to_text(raw, path)
    elif kind == "csv":
        text, title = _table_to_text(raw, path), ""
    else:
        text, title = unwrap_lines(typeset_letters(raw.strip())), ""
        if _made_name(fallback) and _heads(raw):  # "club.txt" opening "Greenbay Sailing Club membership"
            title = _title_line(text)
        headings = _numbered(text)
    if kind != "text":  # a page's "&shy;" is one only once parsed
        text, title = typeset_letters(text), typeset_letters(title)
    return Document(doc_id=doc_id, title=title or fallback, text=text, url=url, headings=_typeset(headings))


def _saved_page(raw: str, path: Path) -> str:
    """The HTML of a web page a browser saved as one file (.mhtml, .mht: Chrome's and Edge's "Save as
    single file", Word's "Single File Web Page"): a MIME message whose first HTML part, or the one its
    ``start`` parameter names, is the page; its pictures and style sheets are the other parts. Read
    as text, it was its quoted-printable HTML ("costs 3=\n10 dollars")."""
    import email
    import email.policy

    message = email.message_from_string(raw, policy=email.policy.default)
    start = str(message.get_param("start", "", header="content-type") or "").strip()
    pages = [part for part in message.walk() if part.get_content_type() == "text/html"]
    page = next((part for part in pages if start and str(part.get("Content-ID", "")).strip() == start), pages[0] if pages else None)
    if page is None:
        raise DataFormatError(path, "not a readable saved web page: it holds no HTML page")
    payload = page.get_payload(decode=True) or b""
    charset = page.get_content_charset()  # Chrome names none: the page's own <meta> does, and UTF-8 is tried first
    try:
        return payload.decode(charset) if charset else decode_text(payload, path)
    except (LookupError, UnicodeDecodeError) as exc:  # a charset Python does not know, bytes it does not hold
        raise DataFormatError(path, f"not a readable saved web page ({exc})") from None


#: the formats whose files mark no headings of their own (a PDF may, by its bookmarks): their numbered
#: section lines are taken for headings (:mod:`.numbered_headings`)
_UNMARKED = frozenset({"pdf", *_PICTURE_KINDS})


def _numbered(text: str) -> tuple[Heading, ...]:
    """The numbered section lines of a text that marks no headings ("1. Safety", "3.2 Filters"), as headings."""
    return tuple(Heading(h.level, h.text) for h in numbered_headings(text))


def _first_heading(headings: Iterable[Heading]) -> str:
    """The text of a document's first top-level heading: its title where its metadata gives none, as
    a Word document's first Heading 1 is. pandoc writes no title into an EPUB or an RTF made from a
    Markdown file without front matter, and the book was named "manual" by its file name."""
    return next((heading.text for heading in headings if heading.level == 1), "")


def _typeset(headings: tuple[Heading, ...]) -> tuple[Heading, ...]:
    """The headings with their letters as the text's (:func:`typeset_letters`), so that each reads as its line."""
    return tuple(h._replace(text=typeset_letters(h.text)) for h in headings)


def no_text_reason(path: Path) -> str:
    """Why a document that reads holds nothing to index. A PDF's scanned pages are read by OCR (an
    all-scanned PDF without OCR is refused with its own reason), so a PDF that gives no text has
    neither a text layer nor words OCR could read in its pictures (blank pages, drawings, photos);
    a picture file (a TIFF scan, a photo) that gives none holds no words OCR could read."""
    kind = SUFFIXES.get(document_suffix(path))
    if kind == "pdf":
        return "no text (no text layer, and no words OCR could read in its pictures)"
    return "no text (no words OCR could read in it)" if kind in _PICTURE_KINDS else "no text"


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
    return [p for p in _walk(Path(folder), None) if p.is_file() and document_suffix(p) in SUFFIXES]


def iter_documents(folder: Path, skipped: list[str] | None = None, unread: Counter[str] | None = None,
                   advance: Callable[[int], None] | None = None) -> Iterator[Document]:
    """Every supported file under ``folder``, in path order; ids are paths relative to the folder,
    without the suffix unless another document there has the same path but for its suffix.
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
    documents = [p for p in files if document_suffix(p) in SUFFIXES]
    # a report.pdf beside its report.docx: without their suffixes both were document "report", one
    # document to the citations, and where two passages began and ended alike the build failed on a
    # duplicate passage id; such files keep their suffix in their ids
    stems = Counter(p.relative_to(folder).with_name(document_stem(p)).as_posix() for p in documents)
    for path in documents:
        relative = path.relative_to(folder)
        shown = readable_name(relative.as_posix())
        stem = relative.with_name(document_stem(path)).as_posix()
        try:
            document = read_document(path, doc_id=readable_name(relative.as_posix() if stems[stem] > 1 else stem))
        except DataFormatError as exc:
            if skipped is None:
                raise
            skipped.append(f"{shown}: {exc.reason}")
            continue
        finally:
            if advance is not None:
                advance(1)
        if skipped is not None and not document.text.strip():
            skipped.append(f"{shown}: {no_text_reason(path)}")
            continue
        yield document
