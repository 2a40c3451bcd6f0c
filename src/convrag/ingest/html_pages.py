"""Web pages as their text: what a browser shows, in its lines (blocks, preformatted text, a table's
row a line), without its menus, scripts and search boxes, read as a reader view reads a page that
marks its main content; its title, canonical address and headings kept. Pages a browser saved as
one file (.mhtml) too. pandoc's output and e-mail bodies are read through it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, CData, NavigableString, Tag

from ..errors import DataFormatError
from .charsets import decode_text
from .formats import Heading
from .tables import table_lines
from .titles import FILE_NAME, NO_TITLE

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


def _role(tag: Tag) -> str:
    """An element's ARIA role: the first of the roles its ``role`` attribute lists (``role="navigation
    menubar"`` lists a fallback after it), lower-cased; "" where it has none."""
    tokens = str(tag.get("role") or "").lower().split()
    return tokens[0] if tokens else ""


def _roles(*names: str) -> re.Pattern[str]:
    """A ``role`` attribute whose first role is one of ``names``, for a search of the tree."""
    return re.compile(r"^\s*(?:" + "|".join(names) + r")(?:\s|$)", re.IGNORECASE)


#: the roles a page's text is read without, and the one that marks its main content, as searches of the tree
_AROUND_TEXT_ROLES = _roles(*_ARIA_NOT_TEXT, *_ARIA_FRAME)
_MAIN_ROLE = _roles("main")
#: a table's cells: a row reads as one line, "Standard | 0.02 dollars per GB" (each cell on a line of
#: its own parted a plan from its price once the answer's compression kept some lines and not others)
_CELLS = frozenset({"td", "th"})


#: an HTML heading element and its level
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}


#: elements a page's layout nests (lists, blocks, tables) whose start and end tags :func:`tree_builder` counts
_NESTED = ("li", "ul", "ol", "dl", "div", "nav", "aside", "header", "footer", "section", "article", "main", "table", "tr", "td")
#: of those, the ones a page may leave open (HTML closes them itself), which say nothing of its depth
_END_OPTIONAL = frozenset({"li", "tr", "td"})
#: the deepest nesting of a page read by html5lib (:func:`tree_builder`)
BROWSER_DEPTH = 1000
_NESTED_TAG = re.compile(r"<(/?)(" + "|".join(_NESTED) + r")[\s>/]", re.IGNORECASE)


def tree_builder(html: str) -> str:
    """The parser a page is read with: Python's own (``html.parser``, fast) where each end tag of a nested
    element closes one the page opened; html5lib, which builds the tree a browser builds, where a page
    has more end tags of one than start tags. html.parser takes such a stray ``</li>`` to close the list
    item the whole list is in, and what came after left the ``<nav>`` it was in: a MkDocs Material site
    whose table-of-contents template closed each item twice (Starlette's docs) had its whole menu read
    at the head of every page ("Responses WebSockets Routing ... Become a sponsor!"); a browser ignores
    the stray tag, and so does html5lib. Not for a page nested deeper than :data:`BROWSER_DEPTH`: html5lib
    takes time that grows with the square of the depth (79 s for 25,000 nested divs and one stray end tag),
    and no page a person reads nests so deep."""
    tags = [(bool(end), name.lower()) for end, name in _NESTED_TAG.findall(html)]
    counts = Counter(tags)
    if not any(counts[True, name] > counts[False, name] for name in _NESTED):
        return "html.parser"
    depth = deepest = 0
    for end, name in tags:
        if name not in _END_OPTIONAL:
            depth += -1 if end else 1
            deepest = max(deepest, depth)
    return "html5lib" if deepest <= BROWSER_DEPTH else "html.parser"


def html_to_text(html: str) -> tuple[str, str, str, tuple[Heading, ...]]:
    """Visible text, title, canonical url and headings of an HTML page."""
    soup = BeautifulSoup(html, tree_builder(html))
    # what a page shows around its text, and what it draws or asks for rather than says: an inline
    # icon's <svg><title> became the title of a page without one, and a drop-down list of countries
    # ran into the sentence after it ("AfghanistanAlbaniaSubmitBoats pay 5 dollars")
    for tag in soup(["script", "style", "noscript", "template", "nav", "svg", "select", "button"]):
        tag.decompose()
    # what ARIA marks as the same (Sphinx's and Read the Docs' sidebars and search box are a
    # <div role="navigation">, not a <nav>: "Previous topic", "Quick search" on every page), and as a
    # page's header and footer; one walk more, for pages that mark roles
    roles = soup.find_all(attrs={"role": _AROUND_TEXT_ROLES}) if _ROLE_ATTRIBUTE.search(html) else []
    for tag in roles:
        if not tag.decomposed and _role(tag) in _ARIA_NOT_TEXT:
            tag.decompose()
    # the page's own header and footer (the site's banner and fine print) go; an article's or a
    # section's stay: they hold its heading ("<article><header><h1>Mooring fees</h1>"), which went
    # with them, and the page lost its title and its first line
    for tag in soup(["header", "footer"]) + [tag for tag in roles if not tag.decomposed and _role(tag) in _ARIA_FRAME]:
        if not tag.decomposed and tag.find_parent(_SECTIONS) is None and tag.find_parent(attrs={"role": _MAIN_ROLE}) is None:
            tag.decompose()
    if _PLACE_LINK.search(html):  # a walk of the tree, for pages that link to places on themselves
        _drop_mute_place_links(soup)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if NO_TITLE.fullmatch(title) or FILE_NAME.fullmatch(title):  # Dreamweaver's "Untitled Document", "index.html"
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


#: a link to a place on the page itself (``href="#..."``), as written in its source
_PLACE_LINK = re.compile(r"""href\s*=\s*["']?\s*#""", re.IGNORECASE)
#: a link's text that says something: a letter or a digit
_SAYS_SOMETHING = re.compile(r"\w")


def _drop_mute_place_links(soup: Any) -> None:
    """Each link to a place on the page whose text holds no letter or digit left out: a heading's
    permalink, which documentation generators put in every heading ("Readline#" in Node.js's API
    pages, "Installation¶" in Sphinx's and MkDocs', each of Sphinx's function signatures too), and a
    footnote's way back ("↩"). They are no part of what the page says, yet they went into every
    heading path a passage is labelled with and every heading line of the text."""
    for link in soup.find_all("a", href=True):
        if str(link["href"]).lstrip().startswith("#") and not _SAYS_SOMETHING.search(link.get_text()):
            link.decompose()


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
    marked = soup.find_all("main") + soup.find_all(attrs={"role": _MAIN_ROLE})
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
            if node.name == "code" and preformatted and _after_code(node):
                parts.append("\n" + _PRE_LINE)  # each of a <pre>'s code blocks begins a line
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


def _after_code(node: Tag) -> bool:
    """Whether a ``<code>`` follows another with nothing but white space between: a ``<pre>`` holding the
    same example twice, as Node.js's API pages do (its ES module and its CommonJS form; the page's
    script shows one), or a highlighter's lines each a ``<code>``. Run together, the first block's
    last line and the second's first were one line ("processLineByLine();const { createReadStream }")."""
    before = node.previous_sibling
    while isinstance(before, NavigableString) and not before.strip():
        before = before.previous_sibling
    return isinstance(before, Tag) and before.name == "code"


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
        if (_role(table) in ("presentation", "none") or id(table) in boxed
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
    """A table's text, a row to a line (:func:`table_lines`), each cell named by its column's
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
    return "\n".join(lines + [table_lines(rows, bool(headed) and headed[0])]) + "\n"


def _span(cell: Tag, name: str) -> int:
    """A cell's ``colspan`` or ``rowspan``, 1 where it is missing or no number, at most 1,000."""
    try:
        return min(max(int(str(cell.get(name, 1)).strip() or 1), 1), 1000)
    except ValueError:
        return 1


def saved_page(raw: str, path: Path) -> str:
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
