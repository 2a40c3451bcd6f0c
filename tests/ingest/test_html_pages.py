"""Web pages read as a browser shows them (convrag/ingest/html_pages.py)."""

import random
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, CData, NavigableString, Tag

from convrag.errors import DataFormatError
from convrag.ingest import html_pages
from convrag.ingest.documents import read_document


def test_html_keeps_title_url_and_drops_scripts(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Pricing</title><link rel='canonical' href='https://example.com/pricing'>"
        "<script>alert('x')</script><style>p{}</style></head>"
        "<body><nav>menu</nav><h1>Plans</h1><p>The Lite plan is free.</p></body></html>"
    )
    doc = read_document(page)
    assert doc.title == "Pricing" and doc.url == "https://example.com/pricing"
    assert "The Lite plan is free." in doc.text and "alert" not in doc.text and "menu" not in doc.text


def _old_visible_text(html: str) -> str:
    """The text as the old code took it: a line break appended to each block element in the tree (a
    space in a table's cell, whose row is a line of cells parted by " | "), with the source's white
    space one space outside preformatted elements, as a browser shows it."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for string in soup.find_all(string=True):
        if type(string) in (NavigableString, CData) and string.find_parent(list(html_pages._PREFORMATTED)) is None:
            string.replace_with(type(string)(re.sub(r"\s+", " ", string)))
    for row in soup.find_all("tr"):  # a row's cells on its line
        for cell in [c for c in row.contents if isinstance(c, Tag) and c.name in html_pages._CELLS][1:]:
            cell.insert_before(" | ")
    for block in soup.find_all(list(html_pages._BLOCK_TAGS)):
        block.append(" " if block.find_parent(list(html_pages._CELLS)) else "\n")
    return soup.get_text()


def _random_html(rng: random.Random, depth: int = 0) -> str:
    pieces = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.35 or depth > 5:
            pieces.append(rng.choice(["plan ", " costs\n 5", "  ", "free.", "a&amp;b", "x<y", "\t"]))
        elif kind < 0.45:
            pieces.append(rng.choice(["<!-- note -->", "<br>", "<hr/>", "<![CDATA[raw]]>", "<?pi x?>", "<!DOCTYPE html>"]))
        else:
            tag = rng.choice(["p", "div", "li", "td", "h2", "pre", "span", "a", "em", "code", "b", "table", "tr"])
            pieces.append(f"<{tag}>{_random_html(rng, depth + 1)}</{tag}>")
    return "".join(pieces)


def test_html_text_is_read_in_one_walk_with_the_same_lines() -> None:
    """Appending a line break to each block element walked the block's whole subtree, so nested
    blocks took quadratic time: 25 s for a 250 KB page of 25,000 nested divs. The walk that replaced
    it gives the same text as before on random pages (but for the line break now made where a block
    begins after text), and leaves the parsed tree as it was."""
    rng = random.Random(7)
    for _ in range(300):
        html = _random_html(rng)
        new = html_pages._visible_text(BeautifulSoup(html, "html.parser")).replace(html_pages._PRE_LINE, "")  # its marks of code lines aside
        old = _old_visible_text(html)
        assert "".join(new.split()) == "".join(old.split()), html  # the same strings in the same order
        assert new.count("\n") >= old.count("\n"), html
    deep = "<div>" * 3000 + "deep <em>text</em>" + "</div>" * 3000
    soup = BeautifulSoup(deep, "html.parser")
    before = str(soup)
    walks = 0
    original = Tag._last_descendant

    def counted(self: Tag, *args: object, **kwargs: object) -> object:
        nonlocal walks
        walks += 1
        return original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Tag, "_last_descendant", counted)
        assert html_pages._visible_text(soup).strip() == "deep text"
    assert walks == 0 and str(soup) == before  # no block's subtree walked to its end; nothing added to the tree


def test_code_and_preformatted_text_keep_their_indentation(tmp_path: Path) -> None:
    """A code block's lines lost their indentation and spaces ("def f():" / "return 1"), and a YAML file's
    nesting with them; a paragraph's white space is still one space, as a browser shows it."""
    (tmp_path / "setup.md").write_text("Set the port:\n\n```yaml\nserver:\n  port: 8080\n  hosts:\n    - north   # the gate\n```\n\n"
                                       "Then   run it.\n\n    def f():\n        return 1\n")
    assert read_document(tmp_path / "setup.md").text.split("\n") == [
        "Set the port:", "server:", "  port: 8080", "  hosts:", "    - north   # the gate", "Then run it.", "def f():", "    return 1"]
    (tmp_path / "page.html").write_text("<p>Run</p> <pre>\n  make   install</pre><p>then  <code>make  test</code>.</p>")
    assert read_document(tmp_path / "page.html").text.split("\n") == ["Run", "  make   install", "then make test."]


@pytest.mark.parametrize("title", ["Untitled Document", "index.html", "Document1"])
def test_a_page_title_that_names_nothing_gives_way_to_its_heading(tmp_path: Path, title: str) -> None:
    # Dreamweaver titles a new page "Untitled Document": every citation of such a site said so
    (tmp_path / "fees.html").write_text(f"<html><head><title>{title}</title></head><body><h1>Mooring fees</h1><p>x</p></body></html>")
    assert read_document(tmp_path / "fees.html").title == "Mooring fees"


def test_a_tables_row_is_a_line_of_its_cells_named_by_its_headings(tmp_path: Path) -> None:
    """Each cell was a line of its own, so a plan and its price were two "sentences" the answer's compression
    parted; then a row was "Lite | Free", which, kept alone, no longer said which was the plan and which the price."""
    (tmp_path / "plans.html").write_text("<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Lite</td><td>Free</td></tr>"
                                         "<tr><td><p>Standard</p><p>plan</p></td><td>0.02 dollars per GB</td></tr></table>")
    assert read_document(tmp_path / "plans.html").text == "Plan: Lite | Price: Free\nPlan: Standard plan | Price: 0.02 dollars per GB"
    # a Markdown (GFM) table too; read as a paragraph, its rows ran into one line once white space became a space
    (tmp_path / "plans.md").write_text("| Plan | Price |\n|---|---|\n| Lite | Free |\n| Standard plan | 0.02 dollars per GB |\n")
    assert read_document(tmp_path / "plans.md").text == "Plan: Lite | Price: Free\nPlan: Standard plan | Price: 0.02 dollars per GB"


@pytest.mark.parametrize(("table", "text"), [
    # a key and value table marks no row of headings (its keys are th cells down the first column): not named
    ("<table><tr><th>Name</th><td>Harbour office</td></tr><tr><th>Opens</th><td>8:00</td></tr></table>",
     "Name | Harbour office\nOpens | 8:00"),
    # a caption first; a cell spanning two rows is read in each, one spanning two columns once
    ("<table><caption>Fees 2025</caption><tr><th>Boat</th><th>Season</th><th>Price</th></tr><tr><td rowspan=2>Yacht</td>"
     "<td>Summer</td><td>40</td></tr><tr><td>Winter</td><td>30</td></tr><tr><td colspan=2>Any boat, one night</td><td>8</td></tr>"
     "</table>",
     "Fees 2025\nBoat: Yacht | Season: Summer | Price: 40\nBoat: Yacht | Season: Winter | Price: 30\n"
     "Boat: Any boat, one night | Price: 8"),
    # a title row across the table, above its headings, is read as its caption is
    ("<table><tr><th colspan=2>Moorings 2025</th></tr><tr><th>Boat</th><th>Price</th></tr><tr><td>Kayak</td><td>12</td></tr>"
     "</table>", "Moorings 2025\nBoat: Kayak | Price: 12"),
    # a table holding a table lays the page out: its cells are blocks, and the table inside is a table of its own
    ("<table><tr><td>Fees</td><td><table><tr><td>Lite</td><td>Free</td></tr></table></td></tr></table>", "Fees\nLite | Free"),
    # a footer's rows (totals), which HTML may write before the body, come last, where a browser shows them
    ("<table><thead><tr><th>Plan</th><th>Price</th></tr></thead><tfoot><tr><td>Total</td><td>45</td></tr></tfoot>"
     "<tbody><tr><td>Lite</td><td>10</td></tr><tr><td>Pro</td><td>35</td></tr></tbody></table>",
     "Plan: Lite | Price: 10\nPlan: Pro | Price: 35\nPlan: Total | Price: 45"),
    # a table that says it lays out (role="presentation"), and a box of one cell, are blocks
    ("<table role=presentation><tr><td><p>Boats pay 5 dollars.</p><p>Kayaks pay 2.</p></td><td>Open daily.</td></tr></table>",
     "Boats pay 5 dollars.\nKayaks pay 2.\nOpen daily."),
    ("<table><tr><td><p>Boats pay 5 dollars.</p><p>Kayaks pay 2.</p></td></tr></table>", "Boats pay 5 dollars.\nKayaks pay 2."),
])
def test_a_table_is_named_by_headings_only_where_its_markup_gives_them(tmp_path: Path, table: str, text: str) -> None:
    (tmp_path / "t.html").write_text(f"<html><body>{table}</body></html>")
    assert read_document(tmp_path / "t.html").text == text


def test_a_page_laid_out_by_a_table_reads_as_its_blocks(tmp_path: Path) -> None:
    """Older sites, HTML e-mails and intranet pages lay a page out in a table's cells. Read as a table,
    the whole page was one line, "Home Fees | Mooring fees Boats pay 5 dollars a night. Kayaks pay 2
    dollars. Plan | Price Lite | 10 Winter The harbour closes in January.": its headings no lines of
    their own (so no passage began at them) and its price table no longer named."""
    (tmp_path / "harbour.html").write_text(
        "<html><head><title>Harbour</title></head><body><table width='100%'><tr><td width=150><ul><li>Home</li><li>Fees</li>"
        "</ul></td><td><h1>Mooring fees</h1><p>Boats pay 5 dollars a night.</p><p>Kayaks pay 2 dollars.</p><table border=1>"
        "<tr><th>Plan</th><th>Price</th></tr><tr><td>Lite</td><td>10</td></tr></table><h2>Winter</h2>"
        "<p>The harbour closes in January.</p></td></tr></table></body></html>")
    document = read_document(tmp_path / "harbour.html")
    assert document.text.split("\n") == ["Home", "Fees", "Mooring fees", "Boats pay 5 dollars a night.", "Kayaks pay 2 dollars.",
                                         "Plan: Lite | Price: 10", "Winter", "The harbour closes in January."]
    assert [h.text for h in document.headings] == ["Mooring fees", "Winter"]


@pytest.mark.parametrize("html, title, text", [
    # every <header> and <footer> went, an article's heading with the site's banner: no title, no first line
    ("<body><header><a href='/'>Harbour Authority</a> Home About</header><main><article><header><h1>Mooring fees</h1></header>"
     "<p>Boats pay 5 dollars.</p><footer>Updated in March.</footer></article></main><footer>Copyright</footer></body>",
     "Mooring fees", "Mooring fees\nBoats pay 5 dollars.\nUpdated in March."),
    # an inline icon's <svg><title> was the title of a page without one; the options of a drop-down list and a
    # button's label ran into the next sentence ("AfghanistanAlbaniaSubmitBoats pay 5 dollars.")
    ("<html><body><svg><title>icon</title><text>Logo</text></svg><h1>Mooring fees</h1><p>Fees by country:</p><select>"
     "<option>Afghanistan</option><option>Albania</option></select><button>Submit</button><p>Boats pay 5 dollars.</p></body></html>",
     "Mooring fees", "Mooring fees\nFees by country:\nBoats pay 5 dollars."),
    # a disclosure's summary, a figure's caption and an aside ran into the text beside them
    ("<h1>Winter</h1><details><summary>Winter rules</summary>Boats leave by November.</details><figure><img src=m.png>"
     "<figcaption>Map of the berths</figcaption></figure>Kayaks stay.<aside>Ask the desk.</aside>Fees rise in May.",
     "Winter", "Winter\nWinter rules\nBoats leave by November.\nMap of the berths\nKayaks stay.\nAsk the desk.\nFees rise in May."),
    # Sphinx's and Read the Docs' menus, sidebar and search box are <div role="navigation">, their fine print a
    # <div role="contentinfo">: "Navigation index previous | ... Previous topic ... Quick search" on every page
    ("<html><head><title>Fees</title></head><body><div class='related' role='navigation'><h3>Navigation</h3><ul><li>"
     "<a href='genindex.html'>index</a></li></ul></div><div class='body' role='main'><section><h1>Fees</h1>"
     "<p>A mooring costs 40 dollars.</p></section><div role='contentinfo'>Updated in March.</div></div>"
     "<div class='sphinxsidebar' role='navigation'><h3>Previous topic</h3><p><a href='intro.html'>Introduction</a></p>"
     "<div role='search'><h3>Quick search</h3></div></div><div class='footer' role='contentinfo'>Copyright 2025.</div></body></html>",
     "Fees", "Fees\nA mooring costs 40 dollars.\nUpdated in March."),
    # a role attribute lists fallback roles after the first, in any case: "navigation menubar" is a menu still
    ("<html><body><div role='Navigation menubar'>Home Fees About</div><div role='search form'>Search the docs</div>"
     "<div role='main region'><h1>Fees</h1><p>A mooring costs 40 dollars.</p><table role='presentation none'><tr>"
     "<td>Boats pay on arrival.</td><td>Open daily.</td></tr></table></div><div role='note'>Ask at the desk.</div></body></html>",
     "Fees", "Fees\nA mooring costs 40 dollars.\nBoats pay on arrival.\nOpen daily."),
])
def test_a_page_is_read_without_its_banner_icons_and_form_controls(tmp_path: Path, html: str, title: str, text: str) -> None:
    (tmp_path / "fees.html").write_text(html)
    doc = read_document(tmp_path / "fees.html")
    assert (doc.title, doc.text) == (title, text)


def test_a_page_that_marks_its_main_content_is_read_as_it(tmp_path: Path) -> None:
    """A documentation site's page: a "Skip to main content" link, a sidebar's table of contents in an <aside>, a
    cookie notice and a "Was this page helpful?" box were read into every page's text around its own. The one
    element a page marks as its main content is read alone, as a browser's reader view reads it; a <main> around a
    heading alone, or two of them, leave the whole page read."""
    (tmp_path / "fees.html").write_text(
        "<html><head><title>Fees | Harbour Docs</title></head><body><div class='skip'><a href='#main'>Skip to main content</a></div>"
        "<div id='cookies'>We use cookies. Accept all</div><div class='wrapper'><aside><ul><li>Intro</li><li>Fees</li></ul></aside>"
        "<main id='main'><article><h1>Fees</h1><p>A mooring costs 40 dollars a night.</p><h2>Winter</h2>"
        "<p>Winter berths cost 310 dollars.</p></article></main><div class='feedback'>Was this page helpful? Yes No</div></div>"
        "</body></html>")
    document = read_document(tmp_path / "fees.html")
    assert document.text.split("\n") == ["Fees", "A mooring costs 40 dollars a night.", "Winter", "Winter berths cost 310 dollars."]
    assert (document.title, [h.text for h in document.headings]) == ("Fees | Harbour Docs", ["Fees", "Winter"])
    (tmp_path / "odd.html").write_text("<body><main><h1>Fees</h1></main><div><p>A mooring costs 40 dollars a night, paid at the "
                                       "office before noon; visitors pay the next morning.</p></div></body>")
    assert read_document(tmp_path / "odd.html").text.split("\n") == [
        "Fees", "A mooring costs 40 dollars a night, paid at the office before noon; visitors pay the next morning."]
    (tmp_path / "two.html").write_text("<body><p>Intro.</p><main><p>Boats pay 40.</p></main><main hidden><p>Old fees.</p></main></body>")
    assert read_document(tmp_path / "two.html").text.split("\n") == ["Intro.", "Boats pay 40.", "Old fees."]


def test_a_web_page_saved_whole_by_a_browser_reads_as_the_page() -> None:
    """A page Chrome or Edge saved as one file (.mhtml) was "not a type convrag reads"; read as text it would
    be its quoted-printable HTML, "15 =E2=82=AC" and all."""
    document = read_document(Path(__file__).parent / "made_by_chromium" / "winter-berths.mhtml")
    assert (document.title, document.url) == ("Winter berths \u2013 Greenbay Harbour", "https://harbour.example/winter-berths")
    assert document.text.split("\n") == [
        "Winter berths", "A winter berth costs 310 dollars for the season, paid at the harbour office.", "Dates",
        "Winter berths close on 1 November and open again on 15 March.", "Plan: Day | Price: 15 \u20ac"]


def test_a_saved_page_is_the_part_its_start_names_in_its_own_charset(tmp_path: Path) -> None:
    """Word's "Single File Web Page" (.mht) names its page's part by ``start`` and its charset in the part."""
    (tmp_path / "fees.mht").write_bytes(
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"; start="<page@fees>"\r\n\r\n'
        b'--b\r\nContent-Type: text/html; charset="us-ascii"\r\nContent-ID: <frame@fees>\r\n\r\n<p>An advert frame.</p>\r\n'
        b'--b\r\nContent-Type: text/html; charset="windows-1252"\r\nContent-Transfer-Encoding: quoted-printable\r\n'
        b'Content-ID: <page@fees>\r\n\r\n<html><head><title>Fees</title></head><body><p>Caf=E9 berths cost 40 =80.</p></body></html>\r\n--b--\r\n')
    assert read_document(tmp_path / "fees.mht").text == "Caf\u00e9 berths cost 40 \u20ac."
    (tmp_path / "bare.mhtml").write_bytes(b"MIME-Version: 1.0\r\nContent-Type: text/html\r\n\r\n<p>Boats pay 40.</p>\r\n")
    assert read_document(tmp_path / "bare.mhtml").text == "Boats pay 40."
    (tmp_path / "pictures.mhtml").write_bytes(b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"\r\n\r\n'
                                              b"--b\r\nContent-Type: image/png\r\n\r\nPNG\r\n--b--\r\n")
    with pytest.raises(DataFormatError, match="pictures.mhtml: not a readable saved web page: it holds no HTML page"):
        read_document(tmp_path / "pictures.mhtml")


def test_a_relative_canonical_address_is_made_whole_or_left_for_the_files(tmp_path: Path) -> None:
    """A page's canonical link written relative to it ("/guide/fees.html") became the document's address as
    written, which no citation could follow: made whole against the address a page was fetched from, and
    left for the file's own address where the page was read from a file."""
    page = tmp_path / "fees.html"
    page.write_text("<html><head><title>Fees</title><link rel='canonical' href='/guide/fees.html'></head><body>x</body></html>")
    assert read_document(page).url == page.resolve().as_uri()
    assert read_document(page, url="https://docs.example.org/guide/fees").url == "https://docs.example.org/guide/fees.html"
    page.write_text("<html><head><link rel='canonical' href='https://docs.example.org/fees'></head><body>x</body></html>")
    assert read_document(page).url == "https://docs.example.org/fees"


def test_heading_permalinks_and_footnote_returns_are_left_out(tmp_path: Path) -> None:
    # Node.js's API pages ("#"), Sphinx and MkDocs ("¶", in signatures too), a footnote's way back ("↩")
    page = tmp_path / "readline.html"
    page.write_text(
        "<html><head><title>Readline</title></head><body>"
        "<h2>Readline<span><a class='mark' href='#readline' id='readline'>#</a></span></h2>"
        "<h3>Example: Read file stream line-by-line<a class='headerlink' href='#example' title='Permalink'>¶</a></h3>"
        "<p>A common use is to read a file one line at a time.<sup><a href='#fn1'>1</a></sup></p>"
        "<dl><dt class='sig'>createInterface(options)<a class='headerlink' href=' #createInterface'>¶</a></dt>"
        "<dd>See <a href='#readline'>the module</a> and <a href='https://example.com/#'>#</a>.</dd></dl>"
        "<p id='fn1'>Or a stream. <a href='#fnref1'>↩</a></p></body></html>"
    )
    doc = read_document(page)
    assert [h.text for h in doc.headings] == ["Readline", "Example: Read file stream line-by-line"]
    assert doc.text.splitlines() == [
        "Readline", "Example: Read file stream line-by-line", "A common use is to read a file one line at a time.1",
        "createInterface(options)", "See the module and #.", "Or a stream.",
    ]


#: a docs site's menu whose template closes each item twice (Starlette's MkDocs Material override of the
#: table of contents did), then the page's text, both in the <main> as MkDocs Material lays a page out
STRAY_END_TAGS = (
    "<html><head><title>Requests</title></head><body><main class='md-main'><div class='md-sidebar'>"
    "<nav class='md-nav'><ul><li class='md-nav__item md-nav__item--active'><a href='./'>Requests</a>"
    "<nav class='md-nav md-nav--secondary'><ul>"
    "<li class='md-nav__item'></li><a href='#cookies'>Cookies</a></li>"
    "<li class='md-nav__item'></li><a href='#body'>Body</a></li>"
    "</ul></nav></li><li><a href='../responses/'>Responses</a></li><li><a href='../sponsors/'>Become a sponsor!</a></li>"
    "</ul></nav></div><article><h1>Requests</h1><p>Starlette includes a Request class.</p><h2>Cookies</h2>"
    "<p>Cookies are exposed as a dictionary.</p></article></main></body></html>"
)


def test_a_page_closing_what_it_never_opened_is_read_as_a_browser_builds_it(tmp_path: Path) -> None:
    assert html_pages.tree_builder(STRAY_END_TAGS) == "html5lib"
    page = tmp_path / "requests.html"
    page.write_text(STRAY_END_TAGS)
    doc = read_document(page)
    # html.parser took the stray </li> to close the item the menu's list is in: "Responses" and the
    # sponsor link then stood outside the <nav> and opened the page's text
    assert doc.text.splitlines() == ["Requests", "Starlette includes a Request class.", "Cookies",
                                     "Cookies are exposed as a dictionary."]
    assert [h.text for h in doc.headings] == ["Requests", "Cookies"]


def test_a_page_whose_end_tags_each_close_an_element_it_opened_keeps_the_fast_parser() -> None:
    well_formed = STRAY_END_TAGS.replace("<li class='md-nav__item'></li>", "<li class='md-nav__item'>")
    assert html_pages.tree_builder(well_formed) == "html.parser"
    # a list item or paragraph left open is no stray: HTML closes it itself
    assert html_pages.tree_builder("<ul><li>one<li>two</ul><p>open<DIV>a</DIV >") == "html.parser"
    assert html_pages.tree_builder("<div>a</div></DIV>") == "html5lib"
    # html5lib's time grows with the square of the depth: a page nested deeper keeps the fast parser
    deep = html_pages.BROWSER_DEPTH
    assert html_pages.tree_builder("<div>" * deep + "x" + "</div>" * (deep + 1)) == "html5lib"
    assert html_pages.tree_builder("<div>" * (deep + 1) + "x" + "</div>" * (deep + 2)) == "html.parser"


def test_an_html_template_is_named_so_not_read_as_a_page(tmp_path: Path) -> None:
    # MkDocs' theme override beside the pages, a web app's templates: a program fills them in
    for name, source in (("main.html", '{% extends "base.html" %}\n{% block announce %}New release!{% endblock %}'),
                         ("base.html", "\ufeff\n  {# the site's frame #}\n<html><body>{{ content }}</body></html>"),
                         ("post.html", "{{ page.title }}<p>{{ content }}</p>")):
        page = tmp_path / name
        page.write_text(source, encoding="utf-8")
        with pytest.raises(DataFormatError, match="an HTML template"):
            read_document(page)
    # a page about templates shows their tags in its text, after its own opening
    page = tmp_path / "guide.html"
    page.write_text("<title>Templates</title><p>Write <code>{% extends \"base.html\" %}</code> first.</p>")
    assert read_document(page).text == 'Write {% extends "base.html" %} first.'


def test_a_pres_code_blocks_each_begin_a_line() -> None:
    # Node.js's API pages: one example as an ES module and as CommonJS, two <code>s in one <pre>
    page = ("<pre><code class='language-js mjs'><span>import</span> * as readline from 'node:readline';</code>"
            "<code class='language-js cjs'><span>const</span> readline = require('node:readline');</code></pre>"
            "<pre><code>a = 1</code> <code>b = 2</code></pre><p>Inline <code>x</code><code>y</code> stays.</p>")
    assert html_pages.html_to_text(page)[0].splitlines() == [
        "import * as readline from 'node:readline';", "const readline = require('node:readline');", "a = 1", "b = 2",
        "Inline xy stays."]
