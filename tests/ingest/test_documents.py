import codecs
import logging
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, CData, NavigableString, Tag

from convrag.errors import DataFormatError
from convrag.ingest import archives, documents, html_pages, mail, markdown, packages, pdf
from convrag.ingest.documents import Heading, iter_documents, read_document
from tests.pdfs import make_pdf


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


def test_markdown_title_and_plain_text(tmp_path: Path) -> None:
    md = tmp_path / "guide.md"
    md.write_text("# Getting started\n\nInstall with `pip`.\n\n* one\n* two\n")
    doc = read_document(md)
    assert doc.title == "Getting started"
    assert "Install with pip." in doc.text and "#" not in doc.text
    assert doc.url.startswith("file://")
    # the title is the heading as a reader sees it: it kept its asterisks, backticks and link address
    md.write_text("# **Fees** for `boats` and [moorings](https://example.com/moor)\n\nText.\n")
    assert read_document(md).title == "Fees for boats and moorings"


def test_markdown_title_is_the_first_heading_the_parser_reads(tmp_path: Path) -> None:
    """The title came from a regular expression: a "# comment" in a fenced code block was taken for
    the heading, and a line of spaces and #s made it backtrack in cubic time (this one took 13 s)."""
    md = tmp_path / "setup.md"
    md.write_text("```bash\n# install it first\npip install convrag\n```\n\nSome text.\n\n## Configuring it ##\n")
    assert read_document(md).title == "Configuring it"
    md.write_text("Setting up\n==========\n\nSome text.\n")  # a setext heading is a heading too
    assert read_document(md).title == "Setting up"
    md.write_text("# a" + " " * 2000 + "#" * 2000 + " " * 2000 + "x\n\nSome text.\n")
    assert read_document(md).title.split() == ["a", "#" * 2000, "x"]  # no closing sequence: the #s are text


def test_text_and_folder_ids(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes_2024.txt").write_text("plain words")
    (tmp_path / "a.md").write_text("no heading here")
    (tmp_path / "skip.bin").write_bytes(b"\x00\x01")
    docs = list(iter_documents(tmp_path))
    assert [d.doc_id for d in docs] == ["a", "sub/notes_2024"]
    assert docs[1].title == "notes 2024" and docs[1].text == "plain words"


def test_unsupported_type(tmp_path: Path) -> None:
    (tmp_path / "x.key").write_bytes(b"PK\x03\x04")  # a Keynote deck
    with pytest.raises(DataFormatError, match="unsupported document type '.key'"):
        read_document(tmp_path / "x.key")


@pytest.mark.parametrize("metadata, title", [
    ("Microsoft Word - harbour_rules.docx", "harbour rules"),  # Word's PDF printer names the file it printed
    ("C:\\Users\\ann\\Desktop\\berth-fees 2024.doc", "berth fees 2024"),
    ("Microsoft Word - Document1", "scan 0042"), ("Untitled", "scan 0042"), ("Slide 1", "scan 0042"),  # the file's own name
    ("Rules of the east harbour", "Rules of the east harbour"), ("Document management policy", "Document management policy"),
])
def test_a_title_a_tool_wrote_gives_way_to_a_name(tmp_path: Path, metadata: str, title: str) -> None:
    # citations showed "[1] Microsoft Word - Document1"
    (tmp_path / "scan_0042.pdf").write_bytes(make_pdf(["Boats pay 5 dollars a night."], title=metadata))
    assert read_document(tmp_path / "scan_0042.pdf").title == title


WRAPPED = ["Renewal by mail costs 130 dollars for adults", "(and teenagers) and must be paid by check within the", "30 days. Children under 16 cannot renew by",
           "mail, and apply in person.", "Fees", "Processing takes 6 weeks."]
#: as a PDF of justified text breaks it, a word hyphenated at the line's end
HYPHENATED = [*WRAPPED[:2], "30 days. Children under 16 can-", "not renew by mail, and apply in person.", *WRAPPED[4:]]


def test_a_line_broken_after_a_capital_a_digit_or_a_colon_is_joined() -> None:
    """LibreOffice's PDF of a manual broke its sentences after a capital ("a 25 A type C" / "breaker."),
    a number ("for 30" / "minutes.") and a colon (a legionella cycle:" / "the immersion heater"), and
    only lines ending in a lower-case letter, a comma or a semicolon were joined. A short line, or
    one whose next begins as a new sentence or a list item does, keeps its break."""
    from convrag.ingest.documents import unwrap_lines

    text = ("The outdoor unit runs on a 230 V supply protected by a 25 A type C\nbreaker. Keep the tank at 65 degrees for 30\n"
            "minutes once a week, as the control box runs a legionella cycle:\nthe immersion heater does it.\n"
            "Fault codes shown on the display of the control box E21\nE35 means the sensor failed.\nNotes:\nall fees are due.\n"
            "Replace both batteries of the wall thermostat within 2\n3. Mount it on an inside wall.")
    assert unwrap_lines(text).split("\n") == [
        "The outdoor unit runs on a 230 V supply protected by a 25 A type C breaker. Keep the tank at 65 degrees for 30 "
        "minutes once a week, as the control box runs a legionella cycle: the immersion heater does it.",
        "Fault codes shown on the display of the control box E21", "E35 means the sensor failed.", "Notes:", "all fees are due.",
        "Replace both batteries of the wall thermostat within 2", "3. Mount it on an inside wall."]


@pytest.mark.parametrize("name, content, second", [
    ("fees.pdf", make_pdf(WRAPPED), "cannot renew"), ("hyphenated.pdf", make_pdf(HYPHENATED), "cannot renew"),  # a PDF's visual lines
    ("fees.txt", "\n".join(WRAPPED).encode(), "cannot renew"),  # a text file wrapped by its writer
    ("hyphenated.txt", "\n".join(HYPHENATED).encode(), "cannot renew"),  # the word made whole (ingest/hyphenation.py)
    ("fees.md", ("\n".join(WRAPPED[:4]) + "\n\n# Fees\n\nProcessing takes\n6 weeks.\n\n```\nimport fees\nimport os\n```\n").encode(),
     "cannot renew"),
    ("fees.html", ("<p>" + "\n".join(WRAPPED[:4]) + "</p><h2>Fees</h2><p>Processing takes\n6 weeks.</p><pre>import fees\nimport os</pre>").encode(),
     "cannot renew"),
])
def test_a_sentence_written_over_several_lines_is_one_line(tmp_path: Path, name: str, content: bytes, second: str) -> None:
    # the sentence splitter ends a sentence at every line break: the answer's compression kept half-sentences
    from convrag.text import split_sentences

    (tmp_path / name).write_bytes(content)
    text = read_document(tmp_path / name).text
    assert split_sentences(text)[:3] == ["Renewal by mail costs 130 dollars for adults (and teenagers) and must be paid by check within "
                                         "the 30 days.",
                                         f"Children under 16 {second} by mail, and apply in person.", "Fees"]
    assert "Processing takes 6 weeks." in text
    if name.endswith(".txt"):  # short lines are no wrapped sentence: a list keeps its lines
        listed = ("Bring:\napples\npears, if ripe\nplums\nand when you are asked to do the following, then\n2. sign the form\n"
                  "and when you are asked to do the following, then\n(b) sign the form\n"
                  "    pip install the-harbour-tools --upgrade\n    harbour-tools register --boat\n"  # code keeps its lines
                  "and when you are asked to do the following, then\n    indented, a new paragraph")
        (tmp_path / "list.txt").write_text(listed)
        assert read_document(tmp_path / "list.txt").text == listed
    if name.endswith((".md", ".html")):
        assert "import fees\nimport os" in text  # code keeps its lines


def test_ligatures_are_letters_and_invisible_characters_go(tmp_path: Path) -> None:
    # a PDF's "\ufb01le" (one character) was no word "file" to BM25, the tokenizer or the citation checks
    (tmp_path / "fees.pdf").write_bytes(make_pdf(["The renewal Ale goes to the Harbour ofAce."], to_unicode={"41": "FB01"}))
    assert read_document(tmp_path / "fees.pdf").text == "The renewal file goes to the Harbour office."
    (tmp_path / "fees.txt").write_text("The o\ufb03ce keeps the \ufb02ow of re\xad\nnewals and each zero\u200b-width mark.")
    assert read_document(tmp_path / "fees.txt").text == "The office keeps the flow of renewals and each zero-width mark."


def _pages(path: Path, pages: list[list[str]]) -> Path:
    """A PDF of ``pages``, each made by :func:`make_pdf`."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for lines in pages:
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    writer.write(str(path))
    return path


def test_page_numbers_stay_out_of_the_sentence_that_runs_over_the_page(tmp_path: Path) -> None:
    # "boats that arrive after six must 1 register": the foot's number went into the sentence
    pdf = _pages(tmp_path / "rules.pdf", [["Visiting boats that arrive after the office closes must", "1"],
                                           ["register the next morning before nine.", "Fees are paid on the east pier and", "2"],
                                           ["Page 3 of 3", "in cash only.", "Total per night", "120"]])
    assert read_document(pdf).text == ("Visiting boats that arrive after the office closes must register the next morning before nine.\n"
                                       "Fees are paid on the east pier and in cash only.\nTotal per night\n120")
    # a bare number with no page numbered beside it may be a figure: it stays
    alone = _pages(tmp_path / "total.pdf", [["Mooring fees collected in the season", "120"]])
    assert read_document(alone).text == "Mooring fees collected in the season 120"


def test_running_headers_and_footers_stay_out_of_the_text(tmp_path: Path) -> None:
    body = [["Visiting boats that arrive after the office closes must"], ["register the next morning before nine."],
            ["Fees are paid on the east pier and"], ["in cash only."]]
    pages = [["Harbour Authority", *lines, f"Annual report 2024 | {i}"] for i, lines in enumerate(body, start=1)]
    text = read_document(_pages(tmp_path / "report.pdf", pages)).text
    assert text == ("Visiting boats that arrive after the office closes must register the next morning before nine.\n"
                    "Fees are paid on the east pier and in cash only.")
    # two pages are too few to tell a running line from the document's own
    assert read_document(_pages(tmp_path / "two.pdf", pages[:2])).text.startswith("Harbour Authority\n")


@pytest.mark.parametrize("markdown, title, text", [
    # CommonMark reads front matter as a rule and a heading: "title: Mooring fees date: 2024-01-01" was the title
    ("---\ntitle: Mooring fees\ndate: 2024-01-01\ntags: [boats]\n---\n\n# Fees\n\nBoats pay 5 dollars.\n", "Mooring fees",
     "Fees\nBoats pay 5 dollars."),
    ('+++\ntitle = "Winter storage"\n+++\nBoats pay 40 dollars a month.\n', "Winter storage", "Boats pay 40 dollars a month."),
    ("---\nauthor: Ann\n---\n# Fees\nBoats pay.\n", "Fees", "Fees\nBoats pay."),  # no title there: the first heading
    ("---\nBoats pay 5 dollars.\n---\nLarger boats pay 10.\n", "Boats pay 5 dollars.",  # no mapping: a rule and a heading
     "Boats pay 5 dollars.\nLarger boats pay 10."),
])
def test_markdown_front_matter_gives_the_title_and_is_no_text(tmp_path: Path, markdown: str, title: str, text: str) -> None:
    (tmp_path / "fees.md").write_text(markdown)
    doc = read_document(tmp_path / "fees.md")
    assert (doc.title, doc.text) == (title, text)


_MDX_PAGE = """---
title: Installing the gate app
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const meta = {
  season: 2025,
};

# Installing the gate app

{/* written for the 2025 season,
    checked by the office */}

The gate app opens the marina gate from your phone.

<Tabs groupId="phone">
  <TabItem value="android" label="Android" default>
    Install it from Google Play, then enter your berth code.
  </TabItem>
  <TabItem value="ios" label={'iPhone'}>

    Install it from the App Store.

  </TabItem>
</Tabs>

<DocCardList />

```js
import gate from "gate";
export const open = () => gate.open("north");
```
"""


@pytest.mark.parametrize("name", ["gate.mdx", "gate.md"])  # Docusaurus reads its .md pages as MDX
def test_an_mdx_page_reads_as_its_built_page_shows_it(tmp_path: Path, name: str) -> None:
    """An MDX page (Docusaurus, Nextra) was "not a type convrag reads"; a Docusaurus .md page read
    its imports as its first sentence and its two tabs as one line: "Install it from Google Play,
    then enter your berth code. Install it from the App Store." """
    (tmp_path / name).write_text(_MDX_PAGE)
    document = read_document(tmp_path / name)
    assert document.title == "Installing the gate app"
    assert document.text.split("\n") == [
        "Installing the gate app", "The gate app opens the marina gate from your phone.",
        "Android", "Install it from Google Play, then enter your berth code.", "iPhone", "Install it from the App Store.",
        'import gate from "gate";', 'export const open = () => gate.open("north");']


def test_a_markdown_page_without_imports_keeps_its_indented_code(tmp_path: Path) -> None:
    """Only a page that imports as MDX does is read as MDX, where indented lines are no code."""
    (tmp_path / "plain.md").write_text("Run this:\n\n    make install\n    make test\n\nimport the list of berths from the office.\n")
    assert read_document(tmp_path / "plain.md").text == "Run this:\nmake install\nmake test\nimport the list of berths from the office."
    (tmp_path / "page.md").write_text("import Tabs from '@theme/Tabs';\n\nRun this:\n\n    make install\n    make test\n")
    assert read_document(tmp_path / "page.md").text == "Run this:\nmake install make test"  # MDX's indented text, as it shows it


@pytest.mark.parametrize("markdown", [
    ":::tip Before you start\nAsk the office for your berth code.\n:::\n\nThen open the app.",  # Docusaurus, VitePress
    ":::tip[Before you start]\nAsk the office for your berth code.\n:::\n\nThen open the app.",  # Docusaurus 3
    '!!! tip "Before you start"\n    Ask the office for your berth code.\n\nThen open the app.',  # MkDocs (Material)
    '???+ tip "Before you start"\n    Ask the office for your berth code.\n\nThen open the app.',  # MkDocs, folded
])
def test_a_docs_sites_admonition_is_a_block_headed_by_its_title(tmp_path: Path, markdown: str) -> None:
    """":::tip Before you start Ask the office for your berth code. :::" was one line, markers and all;
    MkDocs' indented text was a code block."""
    (tmp_path / "gate.md").write_text(markdown)
    assert read_document(tmp_path / "gate.md").text.split("\n") == [
        "Before you start", "Ask the office for your berth code.", "Then open the app."]
    (tmp_path / "note.md").write_text(":::warning\nThe gate closes at 22:00.\n:::\n")
    assert read_document(tmp_path / "note.md").text.split("\n") == ["Warning", "The gate closes at 22:00."]


def test_a_block_too_long_for_front_matter_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    # PyYAML reads about 170 KB a second: a crafted 2.5 MB block kept a reader busy for 15 s
    import yaml

    monkeypatch.setattr(yaml, "safe_load", lambda _: pytest.fail("a block over the limit was parsed"))
    block = "title: Fees\n" + "k: v\n" * (markdown.MAX_FRONT_MATTER_CHARS // 5)
    assert markdown._front_matter(f"---\n{block}---\nBody.") == (f"---\n{block}---\nBody.", "")


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


def test_word_documents_keep_paragraphs_tables_and_title(tmp_path: Path) -> None:
    """A .docx, the commonest office document, was not read at all ("not read ... .docx (1)")."""
    import docx

    word = docx.Document()
    word.add_heading("Harbour rules", 1)
    word.add_paragraph("Boats may   moor in the east harbour from April to October.")
    table = word.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Permit", (0, 1): "Price", (1, 0): "Mooring", (1, 1): "120 euros"}.items():
        table.cell(row, col).text = text
    word.add_paragraph("Kayaks need no permit.")
    word.save(tmp_path / "harbour.docx")
    doc = read_document(tmp_path / "harbour.docx")
    assert doc.title == "Harbour rules" and doc.doc_id == "harbour"
    # in reading order, the table between the paragraphs it stands between, a row to a line
    assert doc.text == ("Harbour rules\nBoats may moor in the east harbour from April to October.\nPermit | Price\n"
                        "Mooring | 120 euros\nKayaks need no permit.")
    word.core_properties.title = "Rules of the east harbour"  # the document's own title comes first
    word.save(tmp_path / "titled.docx")
    assert read_document(tmp_path / "titled.docx").title == "Rules of the east harbour"
    word.core_properties.title = "Document1"  # a template's, not the author's: the first heading is the title
    word.save(tmp_path / "templated.docx")
    assert read_document(tmp_path / "templated.docx").title == "Harbour rules"
    untitled = docx.Document()
    untitled.add_paragraph("Just a line.")
    untitled.save(tmp_path / "berth_list.docx")
    assert read_document(tmp_path / "berth_list.docx").title == "berth list"


@pytest.mark.parametrize(("suffix", "what"), [
    (".docx", r"Word document \(not a .docx package; an old Word 97-2003 file is read as .doc\)"),
    (".pptx", r"PowerPoint deck \(not a .pptx package; an old PowerPoint 97-2003 file is read as .ppt\)"),
    (".xlsx", r"Excel workbook \(not an .xlsx package; an old Excel 97-2003 file is read as .xls\)"),
])
@pytest.mark.parametrize("content", [b"\xd0\xcf\x11\xe0 an older binary file renamed", b"PK\x03\x04 a package cut short"],
                         ids=["renamed", "cut-short"])
def test_an_office_file_that_is_no_package_is_refused_naming_the_format_to_save_it_in(tmp_path: Path, suffix: str, what: str,
                                                                                     content: bytes) -> None:
    (tmp_path / f"file{suffix}").write_bytes(content)
    with pytest.raises(DataFormatError, match=f"file\\{suffix}: not a readable {what}"):
        read_document(tmp_path / f"file{suffix}")


@pytest.mark.parametrize(("name", "table", "text"), [
    # an FAQ exported from a help desk: each row a line, each cell named by its column; a quoted answer over two lines
    ("faq.csv", 'Question,Answer,Updated\r\nCan kayaks moor overnight?,"Yes, for 12 dollars\r\na night.",2025-01-02\r\n'
     "Is there Wi-Fi?,,2025-03-04\r\n",
     "Question: Can kayaks moor overnight? | Answer: Yes, for 12 dollars a night. | Updated: 2025-01-02\n"
     "Question: Is there Wi-Fi? | Updated: 2025-03-04"),
    # a spreadsheet saved where a comma is the decimal mark: ";" parts the cells
    ("prices.csv", 'Plan;Price\nLite;0\nStandard;"0,02"\n', "Plan: Lite | Price: 0\nPlan: Standard | Price: 0,02"),
    ("berths.tsv", "Berth\tBoat\n1\tKayak\n", "Berth: 1 | Boat: Kayak"),
    # no headings: numbers, or a first row of long sentences, are data
    ("numbers.csv", "1,2,3\n4,5,6\n", "1 | 2 | 3\n4 | 5 | 6"),
    ("plain-faq.csv", "Can kayaks moor overnight?,Yes they can for twelve dollars a night.\nWhere is fuel?,At the pier.\n",
     "Can kayaks moor overnight? | Yes they can for twelve dollars a night.\nWhere is fuel? | At the pier."),
])
def test_csv_tables_are_read_a_row_to_a_line_each_cell_named_by_its_heading(tmp_path: Path, name: str, table: str, text: str) -> None:
    """A .csv (an FAQ or a price list exported from a help desk or a spreadsheet) was skipped as unread."""
    (tmp_path / name).write_text(table, newline="")
    doc = read_document(tmp_path / name)
    assert (doc.text, doc.title) == (text, Path(name).stem.replace("-", " "))


def test_a_csv_cell_too_long_to_parse_is_an_error_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / "long.csv").write_text("Question,Answer\nWhy?," + "x" * 200_000 + "\n")
    with pytest.raises(DataFormatError, match=r"long\.csv:2: not a readable CSV table \(field larger than field limit"):
        read_document(tmp_path / "long.csv")


def test_excel_workbooks_are_read_sheet_by_sheet_as_csv_tables_are(tmp_path: Path) -> None:
    """A .xlsx (a price list kept in a spreadsheet) was skipped as unread."""
    import datetime

    import openpyxl

    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices 2025"
    for row in (["Plan", "Price", "From"], ["Lite", 0, datetime.datetime(2025, 1, 1)], [], ["Standard", 12.0, None]):
        prices.append(row)
    berths = book.create_sheet("Sheet2")  # a name that names nothing is no line of the text
    for row in (["Berth", "Boat"], [1, "Kayak"]):
        berths.append(row)
    book.create_sheet("Notes").sheet_state = "hidden"
    book["Notes"].append(["not shown to readers"])
    book.save(tmp_path / "harbour_prices.xlsx")
    doc = read_document(tmp_path / "harbour_prices.xlsx")
    assert (doc.title, doc.text) == ("harbour prices", "Prices 2025\nPlan: Lite | Price: 0 | From: 2025-01-01\n"
                                                      "Plan: Standard | Price: 12\n\nBerth: 1 | Boat: Kayak")
    book.properties.title = "Harbour price list"
    book.save(tmp_path / "titled.xlsx")
    assert read_document(tmp_path / "titled.xlsx").title == "Harbour price list"


def _deck(path: Path, title: str = "") -> Path:
    """A two-slide PowerPoint deck made with python-pptx, as PowerPoint lays one out."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.title = title
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text = "Harbour fees 2025"
    cover.placeholders[1].text = "Moorings and ramps"
    layout = deck.slide_layouts[1]
    slide = deck.slides.add_slide(layout)
    slide.shapes.title.text = "Moorings"
    body = slide.placeholders[1].text_frame
    body.text = "Kayaks pay 12 dollars a night"
    body.add_paragraph().text = "Yachts  pay 40 dollars a night"
    table = slide.shapes.add_table(4, 3, Inches(1), Inches(5), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Plan", (0, 1): "Spring", (0, 2): "Summer", (1, 0): "Season pass", (1, 1): "300",
                             (1, 2): "300", (2, 0): "Day pass", (2, 1): "12", (2, 2): "15", (3, 1): "10", (3, 2): "10"}.items():
        table.cell(row, col).text = text
    table.cell(2, 0).merge(table.cell(3, 0))  # "Day pass" merged down two rows
    slide.shapes.add_textbox(Inches(7), Inches(0.1), Inches(2), Inches(0.5)).text_frame.text = "Draft"  # above the title
    slide.shapes.add_group_shape().shapes.add_textbox(Inches(1), Inches(6.5), Inches(2), Inches(0.4)).text_frame.text = "Ramps open at 6"
    slide.notes_slide.notes_text_frame.text = "Fees rise by 5 percent in spring."
    for placeholder in layout.placeholders:  # the slide number, date and footer, as "Insert > Header & Footer" adds them
        if placeholder.placeholder_format.type.name in ("SLIDE_NUMBER", "FOOTER", "DATE"):
            slide.shapes.clone_placeholder(placeholder)
            slide.shapes[-1].text_frame.text = "Harbour office 2"
    deck.save(path)
    return path


def test_powerpoint_decks_are_read_slide_by_slide_with_tables_groups_and_notes(tmp_path: Path) -> None:
    """A .pptx, with .docx the commonest office document in a team's folder, was skipped ("not read ... .pptx (1)")."""
    doc = read_document(_deck(tmp_path / "fees.pptx", title="PowerPoint Presentation"))
    # the title: PowerPoint's default names nothing, so the first slide's title; a blank line parts the slides;
    # each slide's title first, its shapes top to bottom, a table's row a line, then its notes; no footer
    assert (doc.title, doc.doc_id) == ("Harbour fees 2025", "fees")
    assert doc.text == ("Harbour fees 2025\nMoorings and ramps\n\nMoorings\nDraft\nKayaks pay 12 dollars a night\n"
                        "Yachts pay 40 dollars a night\nPlan: Season pass | Spring: 300 | Summer: 300\nPlan: Day pass | Spring: 12 | "
                        "Summer: 15\nPlan: Day pass | Spring: 10 | Summer: 10\nRamps open at 6\n"
                        "Fees rise by 5 percent in spring.")
    assert read_document(_deck(tmp_path / "own.pptx", title="Harbour fee schedule")).title == "Harbour fee schedule"


def test_a_slides_table_is_named_by_its_header_row_only_where_it_has_one(tmp_path: Path) -> None:
    """A table's rows were read as bare cells ("Day pass | 12 | 15"): a row read alone, as a passage or
    a sentence the answer's compression keeps, did not say which figure was the summer's. PowerPoint's
    "Header Row" option (on for a new table) marks the first row as the columns' names; a table with it
    off (a key and value table) keeps its first row as data."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    for top, header, rows in ((0, True, [["Plan", "Summer"], ["Day pass", "15"]]), (3, False, [["Owner", "Ann Lee"], ["Berth", "B12"]])):
        table = slide.shapes.add_table(2, 2, Inches(1), Inches(1 + top), Inches(4), Inches(1)).table
        table.first_row = header
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.cell(r, c).text = text
    deck.save(str(tmp_path / "fees.pptx"))
    assert read_document(tmp_path / "fees.pptx").text.split("\n") == ["Plan: Day pass | Summer: 15", "Owner | Ann Lee", "Berth | B12"]


def test_a_slides_columns_are_read_one_at_a_time(tmp_path: Path) -> None:
    """A slide with its text on the left and a table beside it that begins a little higher (PowerPoint's
    "Content with Caption" layout; pandoc lays a slide with a table out so) was read the table first,
    and a text in two columns row by row, its sentences interleaved."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # a title only
    slide.shapes.title.text = "Fees"
    slide.shapes.add_textbox(Inches(0.5), Inches(2.0), Inches(3), Inches(1)).text_frame.text = "Moorings are paid at the office."
    slide.shapes.add_textbox(Inches(0.5), Inches(3.1), Inches(3), Inches(1)).text_frame.text = "Cash is not taken."
    table = slide.shapes.add_table(2, 2, Inches(4), Inches(1.8), Inches(5), Inches(3)).table
    for (row, col), text in {(0, 0): "Boat", (0, 1): "Fee", (1, 0): "Kayak", (1, 1): "12 dollars"}.items():
        table.cell(row, col).text = text
    slide.shapes.add_textbox(Inches(0.5), Inches(6), Inches(9), Inches(0.5)).text_frame.text = "Prices from 1 May."  # below both
    deck.save(tmp_path / "columns.pptx")
    assert read_document(tmp_path / "columns.pptx").text.split("\n") == [
        "Fees", "Moorings are paid at the office.", "Cash is not taken.", "Boat: Kayak | Fee: 12 dollars", "Prices from 1 May."]


W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
#: a paragraph whose text box Word writes twice: as DrawingML, and again as VML for older readers
TEXT_BOX = (f'<w:p {W_NS} xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:v="urn:schemas-microsoft-com:vml">'
            '<w:r><w:t>See the box.</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx '
            'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><w:txbxContent><w:p><w:r>'
            '<w:t>Fuel is sold at the pier.</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback>'
            '<w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>Fuel is sold at the pier.</w:t></w:r></w:p>'
            '</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>')
FOOTNOTES = (f'<w:footnotes {W_NS}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
             '<w:footnote w:id="1"><w:p><w:r><w:t>Prices include tax.</w:t></w:r></w:p></w:footnote></w:footnotes>')


def _with_footnotes(path: Path) -> None:
    """``path`` (a python-docx document, which cannot write notes) given a footnotes part, as Word writes one."""
    import zipfile

    parts = {}
    with zipfile.ZipFile(path) as package:
        for name in package.namelist():
            parts[name] = package.read(name)
    parts["word/footnotes.xml"] = FOOTNOTES.encode()
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(b"</Types>", (
        b'<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        b'wordprocessingml.footnotes+xml"/></Types>'))
    parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(b"</Relationships>", (
        b'<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" '
        b'Target="footnotes.xml"/></Relationships>'))
    with zipfile.ZipFile(path, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data)


def test_word_text_in_tracked_changes_content_controls_text_boxes_merged_cells_and_notes_is_read(tmp_path: Path) -> None:
    """python-docx's paragraphs hold plain runs and links only: a document under review read "Moorings
    cost dollars." (its tracked insertion "40" gone), a template's content controls and a text box
    were not read at all, and its footnotes neither."""
    import docx
    from lxml import etree

    word = docx.Document()
    body = word.element.body
    for xml in (
        f'<w:p {W_NS}><w:r><w:t xml:space="preserve">Moorings cost </w:t></w:r><w:del w:id="1" w:author="a"><w:r>'
        '<w:delText>30</w:delText></w:r></w:del><w:ins w:id="2" w:author="a"><w:r><w:t>40</w:t></w:r></w:ins><w:r>'
        '<w:t xml:space="preserve"> dollars</w:t></w:r><w:r><w:tab/><w:t>a night.</w:t></w:r></w:p>',
        f'<w:p {W_NS}><w:r><w:t xml:space="preserve">Ramp fee: </w:t></w:r><w:sdt><w:sdtContent><w:r><w:t>12 dollars</w:t>'
        '</w:r></w:sdtContent></w:sdt></w:p>',
        f'<w:sdt {W_NS}><w:sdtPr/><w:sdtContent><w:p><w:r><w:t>Harbour office, 2025</w:t></w:r></w:p></w:sdtContent></w:sdt>',
        TEXT_BOX,
    ):
        body.insert(len(body) - 1, etree.fromstring(xml))  # before the section properties, which end a body
    table = word.add_table(rows=3, cols=3)
    for (row, col), text in {(0, 0): "Boat", (0, 1): "Spring", (0, 2): "Summer", (1, 0): "Yacht", (1, 1): "40",
                             (1, 2): "45", (2, 1): "40", (2, 2): "40"}.items():
        table.cell(row, col).text = text
    table.cell(1, 0).merge(table.cell(2, 0))  # "Yacht" merged down two rows
    repeating = etree.fromstring(f'<w:sdt {W_NS}><w:sdtContent><w:tr><w:tc><w:p><w:r><w:t>Kayak</w:t></w:r></w:p></w:tc>'
                                 '<w:tc><w:p><w:r><w:t>12</w:t></w:r></w:p></w:tc></w:tr></w:sdtContent></w:sdt>')
    table._tbl.append(repeating)  # a repeating section's row: the rows of a content control
    word.save(tmp_path / "fees.docx")
    _with_footnotes(tmp_path / "fees.docx")
    assert read_document(tmp_path / "fees.docx").text == (
        "Moorings cost 40 dollars a night.\nRamp fee: 12 dollars\nHarbour office, 2025\nSee the box.\n"
        "Fuel is sold at the pier.\nBoat | Spring | Summer\nYacht | 40 | 45\nYacht | 40 | 40\nKayak | 12\nPrices include tax.")


def test_a_word_table_whose_first_row_is_marked_as_its_heading_names_each_cell(tmp_path: Path) -> None:
    """A row repeated atop each page ("Repeat as header row") names its columns, as an HTML row of th cells does."""
    import docx
    from docx.oxml import OxmlElement

    word = docx.Document()
    table = word.add_table(rows=3, cols=2)
    for (row, col), text in {(0, 0): "Permit", (0, 1): "Price", (1, 0): "Mooring", (1, 1): "120 euros", (2, 0): "Kayak",
                             (2, 1): "12 euros"}.items():
        table.cell(row, col).text = text
    word.save(tmp_path / "unmarked.docx")
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    word.save(tmp_path / "marked.docx")
    assert read_document(tmp_path / "unmarked.docx").text == "Permit | Price\nMooring | 120 euros\nKayak | 12 euros"
    assert read_document(tmp_path / "marked.docx").text == "Permit: Mooring | Price: 120 euros\nPermit: Kayak | Price: 12 euros"


def test_a_word_document_s_heading_is_found_by_its_style_far_down(tmp_path: Path) -> None:
    """The first Title or Heading 1 paragraph titles an untitled document wherever it stands. (Each
    paragraph's style was once looked up by python-docx's search of every style: 90 of the 100 seconds
    a 56,000-paragraph document took to read; paragraphs are now read from the XML, their style by its id.)"""
    import docx

    word = docx.Document()
    for i in range(300):
        word.add_paragraph(f"Berth {i} is free on Mondays.")
    word.add_heading("Harbour rules", 1)  # the first Heading 1, well down the document
    word.add_heading("Winter rules", 1)
    word.save(tmp_path / "berths.docx")
    doc = read_document(tmp_path / "berths.docx")
    assert doc.title == "Harbour rules" and doc.text.count("\n") == 301


@pytest.mark.parametrize("part, damage", [
    ("word/document.xml", lambda xml: xml[: len(xml) // 2]),  # cut short: lxml's XMLSyntaxError
    ("[Content_Types].xml", lambda xml: xml.replace(b"core-properties+xml", b"core-propertie+xml")),  # AttributeError
], ids=["xml-cut-short", "wrong-content-type"])
def test_a_damaged_word_package_is_skipped_with_its_reason(tmp_path: Path, part: str, damage: Callable[[bytes], bytes]) -> None:
    """Damaged parts raised lxml's and python-docx's own errors, which escaped as tracebacks: one
    such file ended `convrag index` of a folder and failed every file of an upload with it."""
    import zipfile

    import docx

    word = docx.Document()
    word.add_paragraph("Boats may moor in the east harbour.")
    word.save(tmp_path / "good.docx")
    with zipfile.ZipFile(tmp_path / "good.docx") as good, zipfile.ZipFile(tmp_path / "bad.docx", "w") as bad:
        for name in good.namelist():
            bad.writestr(name, damage(good.read(name)) if name == part else good.read(name))
    with pytest.raises(DataFormatError, match="bad.docx: not a readable Word document"):
        read_document(tmp_path / "bad.docx")
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped=skipped)] == ["good"]
    assert len(skipped) == 1 and skipped[0].startswith("bad.docx: not a readable Word document")


def test_a_word_package_that_unpacks_to_too_much_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A .docx is a zip package: a 375 KB upload held 100 MB of paragraphs, which python-docx read
    whole while the indexing job stayed busy for over ten minutes."""
    import zipfile

    import docx

    word = docx.Document()
    word.add_paragraph("Moorings cost forty dollars a night. " * 2000)
    word.save(tmp_path / "big.docx")
    with zipfile.ZipFile(tmp_path / "big.docx") as package:
        xml = sum(p.file_size for p in package.infolist() if p.filename.endswith((".xml", ".rels")))
    assert (tmp_path / "big.docx").stat().st_size < xml  # it unpacks to more than it is
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", xml - 1)
    with pytest.raises(DataFormatError, match=r"big\.docx: not read: it unpacks to .* MB of XML and .* more than a Word document is read to"):
        read_document(tmp_path / "big.docx")
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", xml)
    assert read_document(tmp_path / "big.docx").text.startswith("Moorings cost forty dollars a night.")
    with zipfile.ZipFile(tmp_path / "big.docx") as package:
        ratio = sum(p.file_size for p in package.infolist()) / (tmp_path / "big.docx").stat().st_size
    monkeypatch.setattr(packages, "MAX_DOCX_BYTES", xml - 1)  # all the parts together: past the size, the ratio decides
    monkeypatch.setattr(packages, "MAX_DOCX_RATIO", ratio + 1)  # pictures, stored compressed, unpack to about their size
    assert read_document(tmp_path / "big.docx").text
    monkeypatch.setattr(packages, "MAX_DOCX_RATIO", ratio - 1)
    with pytest.raises(DataFormatError, match="not read: it unpacks to"):
        read_document(tmp_path / "big.docx")


@pytest.mark.parametrize("part, damage", [
    ("ppt/slides/slide2.xml", lambda xml: xml[: len(xml) // 2]),  # cut short: lxml's XMLSyntaxError
    ("[Content_Types].xml", lambda xml: xml.replace(b"slide+xml", b"slid+xml")),  # python-pptx's AttributeError
], ids=["xml-cut-short", "wrong-content-type"])
def test_a_damaged_or_too_large_powerpoint_deck_is_refused_with_its_reason(tmp_path: Path, part: str, damage: Callable[[bytes], bytes],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    _deck(tmp_path / "good.pptx")
    with zipfile.ZipFile(tmp_path / "good.pptx") as good, zipfile.ZipFile(tmp_path / "bad.pptx", "w") as bad:
        for name in good.namelist():
            bad.writestr(name, damage(good.read(name)) if name == part else good.read(name))
    with pytest.raises(DataFormatError, match=r"bad\.pptx: not a readable PowerPoint deck \(.+\)"):
        read_document(tmp_path / "bad.pptx")
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", 1000)  # a deck is an Office package as a Word document is
    with pytest.raises(DataFormatError, match=r"good\.pptx: not read: it unpacks to .* more than a PowerPoint deck is read to"):
        read_document(tmp_path / "good.pptx")


def test_pdf_text_layer_and_title(tmp_path: Path) -> None:
    (tmp_path / "fees.pdf").write_bytes(make_pdf(["Passport renewal costs 130 dollars.", "Apply by mail."], title="Passport fees"))
    doc = read_document(tmp_path / "fees.pdf", url="https://example.org/fees")
    assert doc.title == "Passport fees" and doc.url == "https://example.org/fees"
    assert "Passport renewal costs 130 dollars." in doc.text and "Apply by mail." in doc.text


@pytest.mark.parametrize(("name", "lines", "title"), [
    # a name a program made: the first line, which a reader sees as the title, names it
    ("2403.12345.pdf", ["Mooring Fees in Small Harbours", "A. Author, B. Author", "Boats pay by the night."], "Mooring Fees in Small Harbours"),
    ("scan0001.pdf", ["Harbour Rules 2025", "Boats pay by the night."], "Harbour Rules 2025"),
    # a first line that is a sentence is no title: the name stays
    ("doc_48213.pdf", ["Boats pay by the night.", "Kayaks pay less."], "doc 48213"),
    # a name a person gave stays the title
    ("harbour_rules.pdf", ["Harbour Rules 2025", "Boats pay by the night."], "harbour rules"),
])
def test_a_pdf_without_a_title_saved_under_a_made_name_is_titled_by_its_first_line(tmp_path: Path, name: str, lines: list[str],
                                                                                    title: str) -> None:
    (tmp_path / name).write_bytes(make_pdf(lines))
    assert read_document(tmp_path / name).title == title


def test_a_pdf_title_wrapped_over_two_lines_is_titled_by_its_bookmark(tmp_path: Path) -> None:
    """LibreOffice's PDF of a manual (no title in its metadata) was titled by its first line, half
    its title: "Solenne HX-9 Air-to-Water Heat Pump: Owners". Its first bookmark says it whole; a
    bookmark the first line does not begin is not taken."""
    lines = ["Solenne HX-9 Air-to-Water Heat Pump: Owners", "Manual", "Keep it near the control box."]
    (tmp_path / "manual.pdf").write_bytes(make_pdf(lines, outline=["Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"]))
    assert read_document(tmp_path / "manual.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"
    (tmp_path / "slides.pdf").write_bytes(make_pdf(["Solenne HX-9 Air-to-Water Heat Pump:", "Owners Manual", "Keep it near."],
                                                   outline=["Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"]))
    assert read_document(tmp_path / "slides.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"
    (tmp_path / "guide.pdf").write_bytes(make_pdf(lines, outline=["1. Safety"]))
    assert read_document(tmp_path / "guide.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners"


@pytest.mark.parametrize(("name", "text", "title"), [
    # a first line set apart as a title names a file whose name says little
    ("club.txt", "Greenbay Sailing Club membership\n\nFull membership costs 300 dollars a year.\n", "Greenbay Sailing Club membership"),
    ("0042.txt", "  Harbour Rules 2025\n\n\nBoats pay by the night.\nKayaks pay less.\n", "Harbour Rules 2025"),
    # a first line that runs on into the next line is a paragraph's start, not a title
    ("notes.txt", "Moorings are booked at the office\nwhich opens at 7am.\n\nKayaks pay less.\n", "notes"),
    ("notes.txt", "Boats pay by the night.\n\nKayaks pay less.\n", "notes"),  # a sentence is no title
    ("notes.txt", "Harbour Rules\n\n", "notes"),  # a title over nothing: the text is the one line
    # a name a person gave stays the title
    ("harbour_rules.txt", "Harbour Rules 2025\n\nBoats pay by the night.\n", "harbour rules"),
])
def test_a_plain_text_under_a_name_that_says_little_is_titled_by_its_first_line(tmp_path: Path, name: str, text: str,
                                                                                 title: str) -> None:
    (tmp_path / name).write_text(text)
    assert read_document(tmp_path / name).title == title


_CONTAINER = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
              '<rootfiles><rootfile full-path="{opf}" media-type="application/oebps-package+xml"/></rootfiles></container>')


def make_epub(path: Path, pages: dict[str, str], spine: list[str], title: str = "", opf: str = "OEBPS/content.opf",
              named: str | None = None) -> Path:
    """An EPUB 3 book: ``pages`` (file name under the package's folder -> body HTML), read in the
    order of ``spine`` (an entry "name:no" is a non-linear aside); the container names the package
    file ``named`` when given (a damaged book), else ``opf``."""
    import zipfile

    folder = opf.rsplit("/", 1)[0] + "/" if "/" in opf else ""
    manifest = "".join(f'<item id="p{i}" href="{name}" media-type="application/xhtml+xml"/>' for i, name in enumerate(pages))
    manifest += '<item id="css" href="style.css" media-type="text/css"/>'
    ids = {name: f"p{i}" for i, name in enumerate(pages)}
    aside = ' linear="no"'
    refs = "".join(f'<itemref idref="{ids[entry.split(":")[0]]}"{aside if entry.endswith(":no") else ""}/>' for entry in spine)
    meta = f"<dc:title>{title}</dc:title>" if title else ""
    package = (f'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata '
               f'xmlns:dc="http://purl.org/dc/elements/1.1/">{meta}</metadata><manifest>{manifest}</manifest><spine>{refs}</spine></package>')
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", _CONTAINER.format(opf=named or opf))
        book.writestr(opf, package)
        book.writestr(folder + "style.css", "p { margin: 0 }")
        for name, body in pages.items():
            book.writestr(folder + name, f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>{body}</body></html>')
    return path


def test_an_epub_book_is_read_page_by_page_in_reading_order(tmp_path: Path) -> None:
    """An EPUB was "not read ... of other types"; the service refused it as not text."""
    pages = {"ch2.xhtml": "<h1>Fees</h1><p>Moorings cost 40 dollars a night.</p>",
             "ch1.xhtml": "<h1>Arriving</h1><p>Call the harbour office on channel 12.</p>",
             "notes.xhtml": "<p>A footnote read apart.</p>",
             "blank.xhtml": "<p> </p>"}
    book = make_epub(tmp_path / "harbour.epub", pages, ["ch1.xhtml", "blank.xhtml", "ch2.xhtml", "notes.xhtml:no"], title="The Harbour Book")
    doc = read_document(book)
    assert doc.title == "The Harbour Book"
    assert doc.text == "Arriving\nCall the harbour office on channel 12.\n\nFees\nMoorings cost 40 dollars a night."
    # a package file at the zip's root, and a book without a title: its file name names it
    root = make_epub(tmp_path / "guide_book.epub", {"a b.xhtml": "<p>Kayaks pay less.</p>"}, ["a b.xhtml"], opf="content.opf")
    assert (read_document(root).title, read_document(root).text) == ("guide book", "Kayaks pay less.")
    # LibreOffice's EPUB export (libepubgen) writes "Unknown Title" for a document without one: that names nothing
    placeholder = make_epub(tmp_path / "rules.epub", {"a.xhtml": "<h1>Harbour rules</h1><p>Kayaks pay less.</p>"}, ["a.xhtml"],
                            title="Unknown Title")
    assert read_document(placeholder).title == "Harbour rules"


def test_a_damaged_epub_says_what_is_wrong(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "nocontainer.epub", "w") as book:
        book.writestr("mimetype", "application/epub+zip")
    with pytest.raises(DataFormatError, match="not a readable EPUB book: there is no item named 'META-INF/container.xml'"):
        read_document(tmp_path / "nocontainer.epub")
    missing = make_epub(tmp_path / "missing.epub", {"a.xhtml": "<p>Text.</p>"}, ["a.xhtml"], named="OEBPS/gone.opf")
    with pytest.raises(DataFormatError, match="no item named 'OEBPS/gone.opf'"):
        read_document(missing)
    (tmp_path / "text.epub").write_text("not a zip at all")
    with pytest.raises(DataFormatError, match="not a readable EPUB book"):
        read_document(tmp_path / "text.epub")


_ODT_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
           'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/"')


def make_odt(path: Path, body: str, title: str = "") -> Path:
    """An OpenDocument text whose body is ``body`` (ODF XML, the namespaces above)."""
    import zipfile

    with zipfile.ZipFile(path, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {_ODT_NS}><office:body><office:text>'
                                        f'{body}</office:text></office:body></office:document-content>')
        if title:
            package.writestr("meta.xml", f'<?xml version="1.0"?><office:document-meta {_ODT_NS}><office:meta><dc:title>{title}'
                                         '</dc:title></office:meta></office:document-meta>')
    return path


def test_an_opendocument_spreadsheet_is_read_as_an_excel_workbook_is(tmp_path: Path) -> None:
    """An .ods (LibreOffice Calc's own format) was "not read ... of other types". A cell or a row
    repeated is one element: a sheet's unused columns and rows are one each, repeated a million
    times, and read once; a filled cell repeated is read as many times; a hidden sheet is left out."""
    import zipfile

    ns = _ODT_NS + ' xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'

    def cells(*texts: str, repeat: int = 1) -> str:
        repeated = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
        return "".join(f"<table:table-cell{repeated}>" + (f"<text:p>{t}</text:p>" if t else "") + "</table:table-cell>"
                       for t in texts)

    rows = (f"<table:table-row>{cells('Plan', 'Price', 'Storage')}{cells('', repeat=16381)}</table:table-row>"
            f"<table:table-row>{cells('Lite')}{cells('Free', repeat=2)}{cells('', repeat=16381)}</table:table-row>"
            f'<table:table-row table:number-rows-repeated="1048570">{cells("", repeat=16384)}</table:table-row>')
    body = (f'<table:table table:name="Prices 2025">{rows}</table:table>'
            f'<table:table table:name="Sheet2"><table:table-row>{cells("Plan", "Note")}</table:table-row>'
            f'<table:table-row>{cells("Pro", "Best value")}</table:table-row></table:table>'
            f'<table:table table:name="Old" table:style-name="ta2"><table:table-row>{cells("Gone")}</table:table-row></table:table>')
    with zipfile.ZipFile(tmp_path / "prices.ods", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:automatic-styles>'
                                        '<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/>'
                                        '</style:style></office:automatic-styles><office:body><office:spreadsheet>'
                                        f'{body}</office:spreadsheet></office:body></office:document-content>')
    document = read_document(tmp_path / "prices.ods")
    assert document.text == ("Prices 2025\nPlan: Lite | Price: Free | Storage: Free\n\n"  # "Sheet2" names nothing
                             "Plan: Pro | Note: Best value")
    assert document.title == "prices"
    # a row of a thousand filled cells repeated a thousand times, in a few kilobytes: refused, not read to gigabytes
    bomb = (f'<table:table table:name="A"><table:table-row table:number-rows-repeated="1000">'
            f'{cells("x" * 100, repeat=1000) * 3}</table:table-row></table:table>')
    with zipfile.ZipFile(tmp_path / "bomb.ods", "w") as package:
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:spreadsheet>'
                                        f'{bomb}</office:spreadsheet></office:body></office:document-content>')
    with pytest.raises(DataFormatError, match=r"bomb.ods: not read: it holds more than 2,000,000 filled cells"):
        read_document(tmp_path / "bomb.ods")
    with zipfile.ZipFile(tmp_path / "prices.ods") as package, zipfile.ZipFile(tmp_path / "text.ods", "w") as text:
        text.writestr("content.xml", package.read("content.xml").replace(b"office:spreadsheet", b"office:text"))
    with pytest.raises(DataFormatError, match="text.ods: not a readable OpenDocument spreadsheet: it holds no spreadsheet body"):
        read_document(tmp_path / "text.ods")


def test_an_opendocument_presentations_shapes_are_read_in_reading_order(tmp_path: Path) -> None:
    """Frames were read in the order the file keeps them (the order they were drawn in), and a
    shape's own text (a labelled box) and a group's were not read at all. They are read as a
    deck's shapes are: top to bottom, side by side a column at a time; the notes come last."""
    import zipfile

    ns = (_ODT_NS + ' xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
          ' xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"')

    def frame(text: str, x: str, y: str, width: str = "8cm", height: str = "2cm", cls: str = "") -> str:
        kind = f' presentation:class="{cls}"' if cls else ""
        return (f'<draw:frame svg:x="{x}" svg:y="{y}" svg:width="{width}" svg:height="{height}"{kind}>'
                f"<draw:text-box><text:p>{text}</text:p></draw:text-box></draw:frame>")

    page = ('<draw:page draw:name="page1">'
            + frame("Prices from 1 May.", "1cm", "15cm", width="20cm", height="1cm")  # drawn first, at the foot
            + frame("Moorings are paid at the office.", "1cm", "4cm")
            + '<draw:custom-shape svg:x="1cm" svg:y="6.5cm" svg:width="8cm" svg:height="2cm"><text:p>Cash is not taken.</text:p>'
              '</draw:custom-shape>'
            + f'<draw:g>{frame("Kayaks pay 12 dollars.", "100mm", "1.5in", height="6cm")}</draw:g>'  # beside them, a little higher
            + frame("Fees", "1cm", "1cm", width="20cm", cls="title")
            + '<presentation:notes><draw:frame><draw:text-box><text:p>Say the prices twice.</text:p></draw:text-box></draw:frame>'
              "</presentation:notes></draw:page>")
    with zipfile.ZipFile(tmp_path / "fees.odp", "w") as package:
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:presentation>'
                                        f"{page}</office:presentation></office:body></office:document-content>")
    document = read_document(tmp_path / "fees.odp")
    assert document.text.split("\n") == ["Fees", "Moorings are paid at the office.", "Cash is not taken.", "Kayaks pay 12 dollars.",
                                         "Prices from 1 May.", "Say the prices twice."]
    assert (document.title, [h.text for h in document.headings]) == ("Fees", ["Fees"])


def test_an_opendocument_presentation_reads_as_the_powerpoint_deck_it_was_saved_from() -> None:
    """An .odp (LibreOffice Impress's own format) was "not read ... of other types". LibreOffice's
    .odp of pandoc's PowerPoint deck reads as the deck: the same lines, title and slide titles."""
    deck = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.pptx")
    odp = read_document(_MADE / "made_by_libreoffice" / "heatpump-manual.odp")
    # but for its table's column names: the deck's table has PowerPoint's "Header Row" on, which LibreOffice
    # 7.4 did not carry into the .odp (no table:use-first-row-styles), so there its first row is data
    unnamed = re.sub(r"Property: (.*) \| Value: ", r"\1 | ", deck.text).replace("Heating capacity", "Property | Value\nHeating capacity", 1)
    assert unnamed != deck.text and "Property: COP at A7/W35 | Value: 4.9" in deck.text
    assert (odp.text, odp.title, odp.headings) == (unnamed, deck.title, deck.headings)
    assert odp.text.startswith("Solenne HX-9 Air-to-Water Heat Pump: Owner\u2019s Manual\nThis manual covers")
    assert odp.text.count("\n\n") == 1 and "Heating capacity at A7/W35 | 9.1 kW" in odp.text  # two slides; the table's rows


def test_an_opendocument_text_is_read_as_a_word_document_is(tmp_path: Path) -> None:
    """An .odt (LibreOffice's, Google Docs' export) was "not read ... of other types"."""
    body = (
        '<text:tracked-changes><text:changed-region><text:deletion><text:p>thirty</text:p></text:deletion></text:changed-region></text:tracked-changes>'
        '<text:table-of-content><text:index-body><text:p>Fees ..... 1</text:p></text:index-body></text:table-of-content>'
        '<text:h text:outline-level="1">Fees</text:h>'
        '<text:p>Moorings cost <text:span>40</text:span> dollars<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
        '<text:note-body><text:p>Boats under 12 metres.</text:p></text:note-body></text:note> a<text:s text:c="3"/>night.'
        '<office:annotation><text:p>Check this price.</text:p></office:annotation><text:line-break/>Pay at the office.</text:p>'
        '<text:list><text:list-item><text:p>Kayaks pay 5 dollars.</text:p></text:list-item></text:list>'
        '<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Plan</text:p></table:table-cell>'
        '<table:table-cell><text:p>Price</text:p></table:table-cell></table:table-row></table:table-header-rows>'
        '<table:table-row><table:table-cell><text:p>Lite</text:p></table:table-cell><table:table-cell><text:p>Free</text:p></table:table-cell>'
        '<table:table-cell table:number-columns-repeated="3"/></table:table-row></table:table>'
        '<table:table><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell>'
        '<table:table-cell><text:p>Harbour office</text:p></table:table-cell></table:table-row></table:table>'
        '<table:table table:use-first-row-styles="true"><table:table-row><table:table-cell><text:p>Boat</text:p></table:table-cell>'
        '</table:table-row><table:table-row><table:table-cell><text:p>Kayak</text:p></table:table-cell></table:table-row></table:table>'
        '<text:p>See the map.<draw:frame><draw:text-box><text:p>Open 7am to 7pm.</text:p></draw:text-box></draw:frame></text:p>'
    )
    doc = read_document(make_odt(tmp_path / "fees.odt", body, title="Harbour fees"))
    assert doc.title == "Harbour fees"
    assert doc.text.split("\n") == [
        "Fees", "Moorings cost 40 dollars a night. Pay at the office.", "Kayaks pay 5 dollars.",
        "Plan: Lite | Price: Free", "Name | Harbour office",  # a table that marks no header rows is not named
        "Boat: Kayak",  # one whose template sets its first row apart (Impress's "Header row") is
        "See the map.", "Open 7am to 7pm.", "Boats under 12 metres.",
    ]
    # without a title of its own (or with the one an authoring tool wrote), its first heading names it
    assert read_document(make_odt(tmp_path / "untitled.odt", '<text:h>Kayak rules</text:h><text:p>Text.</text:p>')).title == "Kayak rules"
    assert read_document(make_odt(tmp_path / "u.odt", '<text:h>Kayak rules</text:h><text:p>Text.</text:p>', title="Untitled")).title == "Kayak rules"


def test_a_damaged_opendocument_text_says_what_is_wrong(tmp_path: Path) -> None:
    import zipfile

    # a count of spaces that is no number, or a billion, is a space (it was int() of it, and a string that long)
    odd = make_odt(tmp_path / "odd.odt", '<text:p>Moorings<text:s text:c="many"/>cost<text:s text:c="1000000000"/>40 dollars.</text:p>')
    assert read_document(odd).text == "Moorings cost 40 dollars."

    with zipfile.ZipFile(tmp_path / "empty.odt", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    with pytest.raises(DataFormatError, match="not a readable OpenDocument text: it has no content.xml"):
        read_document(tmp_path / "empty.odt")
    with zipfile.ZipFile(tmp_path / "sheet.odt", "w") as package:  # a spreadsheet renamed
        package.writestr("content.xml", f'<office:document-content {_ODT_NS}><office:body><office:spreadsheet/></office:body></office:document-content>')
    with pytest.raises(DataFormatError, match="holds no text body"):
        read_document(tmp_path / "sheet.odt")
    with zipfile.ZipFile(tmp_path / "cut.odt", "w") as package:
        package.writestr("content.xml", f'<office:document-content {_ODT_NS}><office:body><office:text><text:p>Moor')
    with pytest.raises(DataFormatError, match="damaged XML"):
        read_document(tmp_path / "cut.odt")


def test_an_rtf_document_is_read_with_its_letters_tables_and_title(tmp_path: Path) -> None:
    """An .rtf (WordPad's, an older editor's) was "not read ... of other types"."""
    rtf = (r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times;}}{\info{\title Harbour fees}}"
           r"{\pard\b Fees\b0\par}{\pard Moorings cost 40 dollars a night at the Caf\'e9 pontoon (\u8364?5 for kayaks).\par}"
           r"\trowd\cellx2000\cellx4000 Lite\cell Free\cell\row\trowd\cellx2000\cellx4000 Pro\cell 10 dollars\cell\row"
           r"{\pard Pay at the office.{\footnote\pard Cash only.}\par}{\pict\pngblip 89504e47}}")
    (tmp_path / "fees.rtf").write_text(rtf)
    doc = read_document(tmp_path / "fees.rtf")
    assert doc.title == "Harbour fees"
    assert doc.text.split("\n") == ["Fees", "Moorings cost 40 dollars a night at the Café pontoon (€5 for kayaks).",
                                    "Lite | Free", "Pro | 10 dollars", "Pay at the office."]
    # a code page of its own: Windows-1251's Cyrillic
    (tmp_path / "ru.rtf").write_text(r"{\rtf1\ansi\ansicpg1251{\pard \'cf\'f0\'e8\'f1\'f2\'e0\'ed\'e8\par}}")
    assert read_document(tmp_path / "ru.rtf").text == "Пристани" and read_document(tmp_path / "ru.rtf").title == "ru"
    # a letter past the first 65,536 is one (a surrogate pair in RTF); a \u number too large is a damaged file
    (tmp_path / "emoji.rtf").write_text(r"{\rtf1{\pard Boats welcome \u-10179?\u-8704? and \u55296? alone.\par}}")
    assert read_document(tmp_path / "emoji.rtf").text == "Boats welcome \U0001f600 and \ufffd alone."
    (tmp_path / "huge.rtf").write_text(r"{\rtf1{\pard Boats \u99999999999? welcome.\par}}")
    with pytest.raises(DataFormatError, match="not a readable RTF document"):
        read_document(tmp_path / "huge.rtf")
    (tmp_path / "fake.rtf").write_text("Moorings cost 40 dollars.")
    with pytest.raises(DataFormatError, match=r"not an RTF document \(it does not start with \{\\rtf\)"):
        read_document(tmp_path / "fake.rtf")


def test_rtf_tables_keep_a_row_on_one_line_and_headings_their_level(tmp_path: Path) -> None:
    r"""pandoc (and Word, for a cell of several paragraphs) ends a cell's paragraph with \par before
    its \cell: each cell came out on a line of its own ("Property", "|Value"). And an RTF's headings
    (``\outlinelevel``) were not read, so its passages were not cut at its sections; nor was a
    header row, which names the columns (a row "Kayak | Slip 4" says less to the model)."""
    rtf = (r"{\rtf1\ansi\uc0{\stylesheet{\s1\outlinelevel0 heading 1;}}"
           r"{\pard\s1\outlinelevel0\b Harbour fees\par}{\pard Moorings are paid at the office.\par}"
           r"{\pard \outlinelevel1 \b Kayaks\par}{\pard Text before the table.\par}"
           r"{\trowd\cellx2000\cellx4000\trkeep\intbl{{\pard\intbl Plan\par}\cell}{{\pard\intbl Price\par}\cell}\intbl\row}"
           r"{\trowd\cellx2000\cellx4000\trkeep\intbl{{\pard\intbl Lite\par}\cell}"
           r"{{\pard\intbl 5 dollars\par}{\pard\intbl a night\par}\cell}\intbl\row}"
           r"{\pard Body \u8364 5 after.\par}"  # \uc0: nothing to skip after a \u letter, the mark's group leaves it so
           r"\pard Before a table with its row's settings at the end\par\pard\intbl Pro\cell 9 dollars\cell\row"
           r"\pard Berths:\par{\trowd\trhdr\cellx2000\cellx4000\intbl{{\pard\intbl Boat\par}\cell}{{\pard\intbl Berth\par}\cell}\intbl\row}"
           r"{\trowd\cellx2000\cellx4000\intbl{{\pard\intbl Kayak\par}\cell}{{\pard\intbl Slip 4\par}\cell}\intbl\row}"
           r"\pard\outlinelevel9 Body text by its outline level\par}")
    (tmp_path / "fees.rtf").write_text(rtf)
    doc = read_document(tmp_path / "fees.rtf")
    assert doc.text.split("\n") == ["Harbour fees", "Moorings are paid at the office.", "Kayaks", "Text before the table.",
                                    "Plan | Price", "Lite | 5 dollars a night", "Body €5 after.",
                                    "Before a table with its row's settings at the end", "Pro | 9 dollars",
                                    "Berths:", "Boat: Kayak | Berth: Slip 4",  # a header row (\trhdr) names the columns
                                    "Body text by its outline level"]
    assert [(h.level, h.text) for h in doc.headings] == [(1, "Harbour fees"), (2, "Kayaks")]
    assert doc.title == "Harbour fees"  # no {\info{\title}}: the first top-level heading names it


def test_a_restructuredtext_page_of_a_sphinx_project_is_read(tmp_path: Path) -> None:
    """A .rst (a Sphinx project's pages) was "not read ... of other types". Sphinx's directives,
    which docutils does not know, are left out; its roles read as their text; and nothing outside
    the file is read: an upload's ``.. include:: /etc/passwd`` or ``.. raw::`` is no text of it."""
    (tmp_path / "secret.txt").write_text("The harbour safe code is 4711.")
    page = f"""
==================
Solenne HX-9 guide
==================

Pairing
=======

.. autofunction:: solenne.pair

Hold MODE and DOWN for five seconds, then call :func:`solenne.pair` (see :ref:`safety`, :doc:`the guide </guide>`
and :meth:`~solenne.Pump.reset`).

.. note::
   Pair within two minutes.

.. include:: {tmp_path / "secret.txt"}

.. raw:: html

   <p>Raw text.</p>

Fees
----

========  =========
Plan      Price
========  =========
Lite      Free
Pro       9 dollars
========  =========
"""
    (tmp_path / "guide.rst").write_text(page)
    document = read_document(tmp_path / "guide.rst")
    assert document.title == "Solenne HX-9 guide"
    assert [(h.level, h.text) for h in document.headings] == [(1, "Solenne HX-9 guide"), (2, "Pairing"), (3, "Fees")]
    assert document.text.split("\n") == ["Solenne HX-9 guide", "Pairing",
                                         "Hold MODE and DOWN for five seconds, then call solenne.pair (see safety, the guide and "
                                         "reset).",
                                         "Note", "Pair within two minutes.", "Fees", "Plan: Lite | Price: Free", "Plan: Pro | Price: 9 dollars"]


#: the readers' test documents made by real writers, from the manual in tools/data
_MADE = Path(__file__).parent
_MANUAL = Path(__file__).parents[2] / "tools" / "data" / "heatpump-manual.md"


@pytest.mark.parametrize("made", ["made_by_pandoc/heatpump-manual.docx", "made_by_pandoc/heatpump-manual.odt",
                                  "made_by_pandoc/heatpump-manual.rst",
                                  "made_by_pandoc/heatpump-manual.epub", "made_by_pandoc/heatpump-manual.rtf",
                                  "made_by_libreoffice/heatpump-manual.rtf", "made_by_libreoffice/heatpump-manual.pdf"])
def test_a_document_made_by_another_tool_reads_as_the_markdown_it_was_made_from(made: str) -> None:
    """Every other reader test builds its file by hand; these files are what pandoc and LibreOffice
    wrote. Pandoc's RTF table came out a cell per line and its headings not at all, nor did
    LibreOffice's (it marks them by style only); the EPUB and the RTFs (no title in their metadata)
    were titled by their file name, "heatpump manual"; the PDF, read by pypdf, had no headings."""
    def plain(text: str) -> str:  # the writers' typographic apostrophe
        return text.replace("\u2019", "'")

    source = read_document(_MANUAL)
    document = read_document(_MADE / made)
    assert plain(document.title) == source.title == "Solenne HX-9 Air-to-Water Heat Pump: Owner's Manual"
    assert [(h.level, plain(h.text)) for h in document.headings] == [(h.level, h.text) for h in source.headings]
    assert len(source.headings) == 13
    if made.endswith(".pdf"):  # a page's lines; the table's cells in a row, parted by spaces, its header row on each page
        words = re.sub(r"Property Value\s", "", plain(document.text)).split()
        assert words == [w for w in source.text.split() if w not in ("|", "Property:", "Value:")]
        return
    lines = [plain(line) for line in document.text.split("\n") if line]
    # a table's row is one line; Markdown's rows name each cell by its column, which an RTF may not mark
    assert [line for line in lines if " | " not in line] == [line for line in source.text.split("\n") if " | " not in line]
    rows = [line for line in lines if " | " in line]
    assert len(rows) in (10, 11) and any(line.endswith("Heating capacity at A7/W35 | Value: 9.1 kW")
                                         or line == "Heating capacity at A7/W35 | 9.1 kW" for line in rows)


def test_a_folder_names_the_files_that_hold_no_text(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.md").write_text("  \n\n")
    (tmp_path / "scan.pdf").write_bytes(make_pdf([""], title="A scanned form"))  # a page with no text layer, and no picture
    skipped: list[str] = []
    counted: list[int] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped, advance=counted.append)] == ["good"]
    assert skipped == ["blank.md: no text", "empty.txt: no text",
                       "scan.pdf: no text (no text layer, and no words OCR could read in its pictures)"]
    # a progress bar counts the files before they are read, and each one read or skipped
    assert [p.name for p in documents.document_paths(tmp_path)] == ["blank.md", "empty.txt", "good.md", "scan.pdf"]
    assert counted == [1, 1, 1, 1]


def test_a_link_to_a_document_that_is_gone_is_named(tmp_path: Path) -> None:
    """A link whose target was moved or deleted is not a file, and was passed over without a word."""
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "moved.pdf").symlink_to(tmp_path / "archive" / "moved.pdf")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)  # a link to a folder above is not walked into, and named
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped)] == ["good"]
    assert skipped == [f"sub/loop: a link to {tmp_path.resolve()}, a folder read already",
                       f"sub/moved.pdf: a link to {tmp_path / 'archive' / 'moved.pdf'}, which does not exist"]
    with pytest.raises(DataFormatError, match="moved.pdf: a link to .*, which does not exist"):
        list(iter_documents(tmp_path))


def test_files_of_other_types_are_counted_by_suffix_and_hidden_ones_left_out(tmp_path: Path) -> None:
    """A .key or .json in the folder used to be passed over without a word."""
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "form.KEY").write_bytes(b"PK\x03\x04")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text("{}")
    (tmp_path / "sub" / "b.json").write_text("{}")
    (tmp_path / "Makefile").write_text("all:")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]")
    (tmp_path / ".DS_Store").write_bytes(b"\0")
    unread: Counter[str] = Counter()
    assert [d.doc_id for d in iter_documents(tmp_path, unread=unread)] == ["good"]
    assert unread == {".key": 1, ".json": 2, "(no suffix)": 1}


def test_broken_pdf_is_a_clear_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    with caplog.at_level(logging.WARNING), pytest.raises(DataFormatError, match="not a readable PDF"):
        read_document(tmp_path / "x.pdf")
    assert not caplog.records  # the one error names the file; nothing is printed beside it


def test_justified_pdf_text_keeps_its_words_whole(tmp_path: Path) -> None:
    """A justifying writer (groff) widens each space by word spacing (``Tw``) and places a line's
    later words with a move. pypdf measured the words before the move without that spacing, took
    the gap for one between words and cut them: "Keep it near the contr ol box." The font is Courier,
    7.2 points a letter at 12 points, so the move below is exact: 22 letters, and 4 spaces 3 points wider."""
    line = "3 Tw 72 720 Td (Keep it near the contr) Tj 170.4 0 Td (ol box.) Tj"
    (tmp_path / "justified.pdf").write_bytes(make_pdf([], operators=line, font="Courier"))
    assert read_document(tmp_path / "justified.pdf").text == "Keep it near the control box."


def test_a_pdfs_bookmarks_are_its_headings(tmp_path: Path) -> None:
    """A PDF carried no headings into chunking: its passages were cut wherever the count fell and
    titled by the document alone. Its outline (the bookmarks pane) names its sections."""
    lines = ["Fees", "Boats pay 5 dollars a night.", "Kayaks", "Kayaks pay 2 dollars."]
    (tmp_path / "fees.pdf").write_bytes(make_pdf(lines, title="Harbour fees", outline=["Fees", "Kayaks", " "]))
    document = read_document(tmp_path / "fees.pdf")
    assert [(h.level, h.text) for h in document.headings] == [(1, "Fees"), (1, "Kayaks")]  # a blank entry names nothing
    assert document.title == "Harbour fees"


def test_a_pdf_that_cannot_be_opened_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """Damaged files raised far beyond the PDF library's own errors (found by mutating a good one);
    those escaped as tracebacks, ended `convrag index` of a folder and failed every file of an upload."""
    pdf = make_pdf(["Passport renewal costs 130 dollars."])
    (tmp_path / "a.pdf").write_bytes(re.sub(rb"trailer\n<< /Size \d+ ", b"trailer", pdf))  # no trailer dictionary
    (tmp_path / "b.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    with pytest.raises(DataFormatError, match="a.pdf: not a readable PDF"):
        read_document(tmp_path / "a.pdf")
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped=skipped)] == ["b"]
    assert len(skipped) == 1 and skipped[0].startswith("a.pdf: not")
    # a cross-reference table that claims 65,535 entries (pypdf refused it) is repaired and read
    (tmp_path / "a.pdf").write_bytes(re.sub(rb"xref\n0 \d+", b"xref\n0 65535", pdf))
    assert read_document(tmp_path / "a.pdf").text == "Passport renewal costs 130 dollars."
    # a PDF locked by a password says so; one only its owner's password restricts (printing, copying) is read
    import io

    from pypdf import PdfWriter

    for user, name in (("secret", "locked.pdf"), ("", "restricted.pdf")):
        writer = PdfWriter(clone_from=io.BytesIO(pdf))
        writer.encrypt(user, "owner")
        writer.write(str(tmp_path / name))
    with pytest.raises(DataFormatError, match="locked.pdf: not a readable PDF .*password"):
        read_document(tmp_path / "locked.pdf")
    assert read_document(tmp_path / "restricted.pdf").text == "Passport renewal costs 130 dollars."


def test_a_pdf_that_takes_too_long_to_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crafted PDF of a few kilobytes can repeat a slow page thousands of times; reading stops at a
    time budget, looked at before each page. The clock is a counter, one tick per look, so the test
    does not depend on this machine's speed."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(pdf, "_clock", lambda: float(next(ticks)))
    words = "moorings kayaks yachts ramps fuel water power showers keys boats laundry parking wifi bins dogs guests tours nets sails oars".split()
    path = _pages(tmp_path / "slow.pdf", [[f"The {word} of the fees.", "Paid at the office."] for word in words])
    monkeypatch.setattr(pdf, "MAX_PDF_SECONDS", 1_000.0)
    assert read_document(path).text.count("of the fees") == 20  # the budget is far from spent
    monkeypatch.setattr(pdf, "MAX_PDF_SECONDS", 5.0)  # spent after five pages
    with pytest.raises(DataFormatError, match=r"slow.pdf: not read: its pages took more than 5 s to read"):
        read_document(path)


@pytest.mark.parametrize("encoding, text", [
    ("utf-8-sig", "Café au lait, naïve résumé."),
    ("utf-16", "Café au lait, naïve résumé."),  # with a byte-order mark, as Windows editors save it
    ("utf-16", "这是一个测试文档，里面有中文文本。"),  # one script, however far from Latin
    ("utf-16", 'Price: €5.00 😀 {"plan": "Lite"}\n\tDone.'),
    ("cp1252", "Café – naïve “quoted” text about the Lite plan and its storage."),
    ("latin-1", "Grüße aus Köln: the Lite plan is free."),
    ("shift_jis", "日本語のテキストです。これはテストの文書です。"),
    ("gbk", "这是一个测试文档，里面有中文文本。"),
    ("cp1251", "Привет, это тестовый документ на русском языке."),
])
def test_text_in_other_encodings_is_read_as_written(tmp_path: Path, encoding: str, text: str) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert read_document(path).text == text


def test_binary_files_are_refused_and_a_folder_skips_them(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("The Lite plan is free.")
    (tmp_path / "image.txt").write_bytes(bytes(range(256)) * 20)  # NUL bytes: binary
    (tmp_path / "noise.md").write_bytes(bytes((i * 97 + 13) % 256 for i in range(1, 4000) if (i * 97 + 13) % 256))
    # a UTF-16 mark, then bytes that decode (no lone surrogates) to code points of many scripts
    (tmp_path / "marked.txt").write_bytes(codecs.BOM_UTF16_LE + bytes((i * 37 + 11) % 256 or 1 for i in range(60)))
    assert (tmp_path / "marked.txt").read_bytes()[2:].decode("utf-16-le")  # it does decode: only the check refuses it
    for name in ("image.txt", "noise.md", "marked.txt"):
        with pytest.raises(DataFormatError, match="not text"):
            read_document(tmp_path / name)
    with pytest.raises(DataFormatError, match="image.txt: not text"):
        list(iter_documents(tmp_path))
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped)] == ["good"]
    assert skipped == ["image.txt: not text (binary data: it holds NUL bytes)",
                       "marked.txt: not text: it starts with a utf-16 mark but reads as a jumble of scripts",
                       "noise.md: not text (binary data, or an encoding that could not be recognised)"]


@pytest.mark.parametrize("data, reason", [
    (b"H#\xc1\x00\x9e\xcc@\xfc", "mixes CJK, HANGUL letters"),  # eight bytes of binary data: read as UTF-16, 䠣섀黌䃼
    (b"\x14\xfeQ\x00\x82\xff\xee}", "no space or line break"),  # ︔Qﾂ緮: one script, but no text runs on like that
    (bytes(range(1, 128)) * 4, "control codes"),  # bytes under 0x80 are valid UTF-8
    (bytes((i * 37) % 31 + 1 for i in range(64)), "control codes"),
])
def test_short_and_seven_bit_binary_files_are_not_read_as_text(tmp_path: Path, data: bytes, reason: str) -> None:
    """A binary file of a few bytes with a NUL among them was read as UTF-16 (four characters of Han
    and Hangul indexed as a document), and one of bytes under 0x80 as UTF-8 control codes."""
    path = tmp_path / "blob.txt"
    path.write_bytes(data)
    with pytest.raises(DataFormatError, match=f"not text.*{reason}"):
        read_document(path)


@pytest.mark.parametrize(("meta", "encoding"), [
    ('<meta charset="iso-8859-2">', "iso-8859-2"),
    ('<meta http-equiv="Content-Type" content="text/html; charset=windows-1250">', "cp1250"),
    ("<META CHARSET=ISO-8859-1>", "cp1252"),  # the web's reading of Latin-1: Windows-1252
    ('<meta charset="iso-8859-1">', "utf-8"),  # UTF-8 whatever the page declares: an editor saved it again
    ('<meta charset="x-unknown">', "utf-8"),
])
def test_an_html_page_is_read_in_the_charset_it_declares(tmp_path: Path, meta: str, encoding: str) -> None:
    """A short page in a Central European code page read as Western text ("\u00a3odzie p\u00b3ac\u00b9 40 z\u00b3."),
    though its <meta> named its charset, as a browser reads it."""
    text = "\u0141odzie p\u0142ac\u0105 40 z\u0142, kajaki 2 z\u0142." if encoding != "cp1252" else "Caf\u00e9: 40 \u20ac."
    (tmp_path / "fees.html").write_bytes(f"<html><head>{meta}</head><body><p>{text}</p></body></html>".encode(encoding))
    assert read_document(tmp_path / "fees.html").text == text


@pytest.mark.parametrize("text", [
    "Passport renewal costs 130 dollars.\nApply by mail.",
    "Привет, это документ.\nВторая строка.",
    "日本語のテキストです。\n二行目です。",
])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark_is_still_read(tmp_path: Path, text: str, encoding: str) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert read_document(path).text == text


def test_layout_codes_in_text_are_text(tmp_path: Path) -> None:
    text = "Page one of the handbook.\f\nPage two: \x1b[1mbold\x1b[0m terms.\x0b Done."
    (tmp_path / "paged.txt").write_text(text)
    assert read_document(tmp_path / "paged.txt").text == text


def test_a_file_name_that_is_not_utf8_is_read_with_its_bytes_escaped(tmp_path: Path) -> None:
    """A Latin-1 file name (an old archive's) reaches Python as lone surrogates, which cannot be
    encoded: one such file ended `convrag index` of its folder with a UnicodeEncodeError."""
    import json
    import os

    try:
        (Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9 menu.txt"))).write_text("The cafe opens at nine.")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    (tmp_path / "ok.txt").write_text("The harbour opens at eight.")
    documents = list(iter_documents(tmp_path))
    assert [(d.doc_id, d.title) for d in documents] == [("caf\\xe9 menu", "caf\\xe9 menu"), ("ok", "ok")]
    json.dumps([d.doc_id for d in documents], ensure_ascii=False).encode("utf-8")  # what the index writes
    assert documents[0].url.endswith("/caf%E9%20menu.txt")  # the file's own address, byte for byte
    binary = Path(os.fsdecode(os.fsencode(tmp_path) + b"/bin\xe9.txt"))
    binary.write_bytes(b"\x00\x01\xff" * 50)
    with pytest.raises(DataFormatError) as error:  # and an error names it as the listing does, not as "\udce9"
        read_document(binary)
    assert str(error.value).startswith(f"{tmp_path}/bin\\xe9.txt: not text")


def test_a_pdf_whose_text_map_gives_half_a_character_is_indexed(tmp_path: Path) -> None:
    """A ToUnicode map can give a lone surrogate (half of a UTF-16 pair), which no passage file can
    hold: `convrag index` ended with a UnicodeEncodeError. A whole pair is joined, half of one is U+FFFD."""
    (tmp_path / "map.pdf").write_bytes(make_pdf(["Fee A, smile BC."], to_unicode={"41": "D800", "42": "D83D", "43": "DE00"}))
    document = read_document(tmp_path / "map.pdf")
    assert document.text == "Fee \ufffd, smile \U0001f600." and document.text.encode("utf-8")


def test_the_documents_of_a_linked_folder_are_read(tmp_path: Path) -> None:
    """rglob passed over a link to a folder: its documents were left out without a word."""
    (tmp_path / "shared" / "fees").mkdir(parents=True)
    (tmp_path / "shared" / "fees" / "boats.txt").write_text("Larger boats pay 60 euros a night.")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "kayaks.txt").write_text("Kayaks need no permit.")
    (tmp_path / "docs" / "linked").symlink_to(tmp_path / "shared")
    (tmp_path / "docs" / "other").symlink_to(tmp_path / "shared")  # the same folder twice is read once
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path / "docs", skipped)] == ["kayaks", "linked/fees/boats"]
    assert skipped == [f"other: a link to {(tmp_path / 'shared').resolve()}, a folder read already"]


def test_documents_differing_only_in_suffix_keep_their_suffix_in_their_ids(tmp_path: Path) -> None:
    """report.pdf beside report.docx were both document "report": one document to the citations, and
    where two of their passages began and ended alike, the build failed on a duplicate passage id."""
    (tmp_path / "notes.txt").write_text("The harbour opens at eight.")
    (tmp_path / "notes.md").write_text("The harbour shuts at eight.")  # as long: the same passage offsets
    (tmp_path / "fees.md").write_text("Boats pay 60 euros a night.")
    documents = list(iter_documents(tmp_path))
    assert [(d.doc_id, d.title) for d in documents] == [("fees", "fees"), ("notes.md", "notes"), ("notes.txt", "notes")]


def test_the_headings_a_document_marks_are_kept_with_their_levels(tmp_path: Path) -> None:
    """A passage that begins inside a section is titled by it (:mod:`convrag.ingest.chunking`): the
    readers that know a heading for sure (Markdown, HTML, Word, OpenDocument, PowerPoint, EPUB) keep
    each as the line it reads as, with its level; plain text and PDF keep none."""
    import docx


    (tmp_path / "fees.md").write_text("# Harbour guide\n\nIntro.\n\n## Fees *2025*\n\nBoats pay.\n\n### Kayaks\n\nFree.\n\n"
                                      "```\n# not a heading\n```\n", encoding="utf-8")
    assert read_document(tmp_path / "fees.md").headings == (Heading(1, "Harbour guide"), Heading(2, "Fees 2025"), Heading(3, "Kayaks"))
    (tmp_path / "fees.html").write_text("<title>Guide</title><h2>Fees <em>now</em></h2><p>Boats pay.</p><h4>Late</h4><p>x</p>",
                                        encoding="utf-8")
    assert read_document(tmp_path / "fees.html").headings == (Heading(2, "Fees now"), Heading(4, "Late"))
    word = docx.Document()
    word.add_heading("Harbour guide", 0)  # the Title style
    word.add_paragraph("Intro.")
    word.add_heading("Fees", 1)
    word.add_heading("Kayaks", 2)
    word.add_paragraph("Free.")
    word.save(tmp_path / "fees.docx")
    assert read_document(tmp_path / "fees.docx").headings == (Heading(0, "Harbour guide"), Heading(1, "Fees"), Heading(2, "Kayaks"))
    body = ('<text:table-of-content><text:index-body><text:h>Fees 1</text:h></text:index-body></text:table-of-content>'
            '<text:h text:outline-level="1">Fees</text:h><text:p>Boats pay.</text:p>'
            '<text:section><text:h text:outline-level="2">Kayaks</text:h></text:section><text:h text:outline-level="x">Odd</text:h>')
    assert read_document(make_odt(tmp_path / "fees.odt", body)).headings == (Heading(1, "Fees"), Heading(2, "Kayaks"), Heading(1, "Odd"))
    assert [h.text for h in read_document(_deck(tmp_path / "fees.pptx")).headings] == ["Harbour fees 2025", "Moorings"]
    book = make_epub(tmp_path / "b.epub", {"a.xhtml": "<h1>Arriving</h1><p>Call.</p>", "b.xhtml": "<h2>Fees</h2><p>40.</p>"},
                     ["a.xhtml", "b.xhtml"])
    assert read_document(book).headings == (Heading(1, "Arriving"), Heading(2, "Fees"))
    (tmp_path / "fees.txt").write_text("Fees\n\nBoats pay 40 dollars a night.\n", encoding="utf-8")
    assert read_document(tmp_path / "fees.txt").headings == ()


def test_an_email_reads_as_its_sender_date_and_body_titled_by_its_subject(tmp_path: Path) -> None:
    """An e-mail saved as a file (.eml: what mail programs save and export threads as) was "not read"."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Date"] = "Ann Lee <ann@harbour.example>", "crew@harbour.example", "Mon, 3 Mar 2025 09:30:00 +0000"
    mail["Subject"] = "Winter mooring fees f\u00fcr Boote"  # sent RFC 2047-encoded, read as its letters
    mail.set_content("Hello crew,\n\nFrom 1 November, boats pay 4 dollars a night and kayaks\n2 dollars.\n")
    mail.add_alternative("<p>HTML copy: boats pay 4 dollars.</p>", subtype="html")
    mail.add_attachment(b"%PDF-1.4 x", maintype="application", subtype="pdf", filename="fees.pdf")
    (tmp_path / "fees.eml").write_bytes(bytes(mail))
    assert b"=?utf-8?" in (tmp_path / "fees.eml").read_bytes()
    document = read_document(tmp_path / "fees.eml")
    assert document.title == "Winter mooring fees f\u00fcr Boote"
    assert document.text.split("\n") == [  # the plain body, its wrapped line joined; the attachment named, not read
        "From: Ann Lee <ann@harbour.example>", "To: crew@harbour.example", "Date: Mon, 03 Mar 2025 09:30:00 +0000",
        "Hello crew,", "", "From 1 November, boats pay 4 dollars a night and kayaks 2 dollars.",
        "Attachments not read: fees.pdf (not a readable PDF (Failed to load document (PDFium: Data format error).))"]
    # a mail of HTML alone is read as a page, laid out in a table as HTML mail is
    html = EmailMessage()
    html["Subject"], html["From"] = "Fees", "ann@harbour.example"
    html.set_content("<table width=600><tr><td><h1>Winter fees</h1><p>Boats pay 4 dollars.</p><table><tr><th>Boat</th>"
                     "<th>Fee</th></tr><tr><td>Kayak</td><td>2</td></tr></table></td></tr></table>", subtype="html")
    (tmp_path / "html.eml").write_bytes(bytes(html))
    document = read_document(tmp_path / "html.eml")
    assert document.text.split("\n") == ["From: ann@harbour.example", "Winter fees", "Boats pay 4 dollars.", "Boat: Kayak | Fee: 2"]
    assert [h.text for h in document.headings] == ["Winter fees"]
    (tmp_path / "notes.eml").write_text("Just some notes, no headers.\n")
    with pytest.raises(DataFormatError, match="notes.eml: not an e-mail"):
        read_document(tmp_path / "notes.eml")


def test_an_emails_attachments_are_read_as_sections_headed_by_their_names(tmp_path: Path) -> None:
    """A mail's facts are often in what it carries: the manual as a PDF, the prices in a forwarded mail's
    table. Attachments were only named, so a question about them found nothing. Each of a type convrag
    reads is now read as the file it is; the others are named with their reasons."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "The heat pump"
    mail.set_content("The manual is attached.\n")
    mail.add_attachment((_MADE / "made_by_pandoc" / "heatpump-manual.docx").read_bytes(), maintype="application",
                        subtype="octet-stream", filename="C:\\Users\\ann\\manual.docx")  # a path, as some mailers send
    mail.add_attachment(b"<svg xmlns='http://www.w3.org/2000/svg'/>", maintype="image", subtype="svg+xml", filename="unit.svg")
    forwarded = EmailMessage()
    forwarded["From"], forwarded["Subject"] = "bob@harbour.example", "Winter prices"
    forwarded.set_content("Prices below.\n")
    forwarded.add_attachment(b"Boat,Fee\nKayak,2\n", maintype="text", subtype="csv", filename="prices.csv")
    mail.add_attachment(forwarded)
    (tmp_path / "pump.eml").write_bytes(bytes(mail))
    document = read_document(tmp_path / "pump.eml")
    manual = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.docx")
    lines = document.text.split("\n")
    start = lines.index("Attachment: manual.docx")
    assert lines[:start] == ["From: ann@harbour.example", "The manual is attached."]
    assert "\n".join(lines[start + 1:]).startswith(manual.text + "\n")  # the Word file read as it is alone
    assert lines[-6:] == ["Attachment: Winter prices.eml", "From: bob@harbour.example", "Prices below.",
                          "Attachment: prices.csv", "Boat: Kayak | Fee: 2",
                          "Attachments not read: unit.svg (not a type convrag reads)"]
    assert document.headings == (Heading(1, "Attachment: manual.docx", part=True),
                                 *(Heading(h.level + 1, h.text) for h in manual.headings),
                                 Heading(1, "Attachment: Winter prices.eml", part=True), Heading(2, "Attachment: prices.csv", part=True))
    assert "E21" in document.text and document.title == "The heat pump"


def test_outlooks_winmail_dat_is_read_as_the_attachments_and_body_it_packs(tmp_path: Path) -> None:
    """Outlook sends a mail written in Rich Text as a MIME mail whose attachments and formatted body are packed
    into one attachment, winmail.dat (TNEF): the mail's attachments read as "winmail.dat (not a type convrag
    reads)". Its files are read as the mail's own attachments (a picture the body shows, hidden in it, is not
    read by OCR); its body is read where the mail has none of its own. A damaged one is named with its reason."""
    from email.message import EmailMessage

    packed = (_MADE / "made_by_outlook" / "winmail-umlaut.dat").read_bytes()
    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "Umlauts"
    mail.set_content("The test file is attached.\n")
    mail.add_attachment(packed, maintype="application", subtype="ms-tnef", filename="winmail.dat")
    (tmp_path / "rich.eml").write_bytes(bytes(mail))
    lines = read_document(tmp_path / "rich.eml").text.split("\n")
    # its files are the mail's: a team's photo read by OCR (no words in it), the picture the body shows left unread,
    # and a text file of 14 bytes in Windows-1252 whose encoding no reading can tell
    assert lines == ["From: ann@harbour.example", "The test file is attached.",
                     "Attachments not read: TBZ PARIV GmbH.jpg (no text (no words OCR could read in it)), image003.jpg (a picture "
                     "shown in the mail's body (a logo, a banner), not read by OCR), UmlautAnhang-\u00e4\u00fc\u00f6.txt (not text "
                     "(binary data, or an encoding that could not be recognised))"]
    bodyless = EmailMessage()
    bodyless["From"], bodyless["Subject"] = "ann@harbour.example", "Umlauts"
    bodyless.add_attachment(packed, maintype="application", subtype="octet-stream", filename="WINMAIL.DAT")
    (tmp_path / "bodyless.eml").write_bytes(bytes(bodyless))
    lines = read_document(tmp_path / "bodyless.eml").text.split("\n")  # its Rich Text body, without the picture's "cid:" name
    assert lines[:2] == ["From: ann@harbour.example", "TEST \u00e4\u00f6\u00fc +-*/~"] and lines[2].startswith("Attachments not read: ")
    damaged = EmailMessage()
    damaged["From"], damaged["Subject"] = "ann@harbour.example", "Umlauts"
    damaged.set_content("The test file is attached.\n")
    damaged.add_attachment(b"XXXX" + packed[4:], maintype="application", subtype="ms-tnef", filename="winmail.dat")  # no TNEF signature
    (tmp_path / "damaged.eml").write_bytes(bytes(damaged))
    assert read_document(tmp_path / "damaged.eml").text.split("\n")[-1] == "Attachments not read: winmail.dat (it looks damaged (ValueError))"


def test_an_outlook_message_reads_as_the_mail_it_stands_for(tmp_path: Path) -> None:
    """A mail dragged out of Outlook is a .msg file (MS-OXMSG, an OLE compound file of properties), "not a
    type convrag reads" before. It reads as the same mail saved as .eml would: sender, recipients, date,
    body, and its attachments, a mail attached to it included (aspose's export sends that one in base64,
    which had left it a mail of no headers)."""
    document = read_document(_MADE / "made_by_aspose" / "harbour-mail.msg")
    manual = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.docx")
    assert document.title == "The heat pump manual"
    lines = document.text.split("\n")
    start = lines.index("Attachment: heatpump-manual.docx")
    assert lines[:start] == ["From: Ann Lee <ann@harbour.example>", "To: Crew <crew@harbour.example>",
                             "Date: Mon, 03 Mar 2025 09:30:00 +0000", "Hello crew,", "",
                             "the manual for the new heat pump is attached. Fault E21 is the water pressure."]
    assert "\n".join(lines[start + 1:]).startswith(manual.text + "\n")
    assert lines[-7:] == ["Attachment: Winter prices.eml", "From: Bob Hart <bob@harbour.example>", "Prices below.",
                          "Attachment: prices.csv", "Boat: Kayak | Fee: 2", "Boat: Dinghy | Fee: 3",
                          "Attachments not read: unit.png (not a readable picture: Pillow knows no picture format that "
                          "starts as it does (damaged, or another kind of file))"]
    assert document.headings[0] == Heading(1, "Attachment: heatpump-manual.docx", part=True)
    assert document.headings[-2:] == (Heading(1, "Attachment: Winter prices.eml", part=True), Heading(2, "Attachment: prices.csv", part=True))
    (tmp_path / "mail.msg").write_bytes(b"From: ann@harbour.example\r\nSubject: Fees\r\n\r\nBoats pay 40.")
    with pytest.raises(DataFormatError, match="mail.msg: not an Outlook message"):
        read_document(tmp_path / "mail.msg")


def test_an_outlook_message_whose_body_is_only_compressed_rtf_reads_its_body(tmp_path: Path) -> None:
    """Outlook keeps a mail written in Rich Text, or its HTML wrapped in RTF, as compressed RTF alone: such a
    message read as its sender and attachments, without a word of its body."""
    import olefile

    rtf_mail = _MADE / "made_by_aspose" / "harbour-rtf-mail.msg"
    assert read_document(rtf_mail).text.split("\n") == [
        "From: Ann Lee <ann@harbour.example>", "Hello crew,", "a winter berth costs 310 dollars this season, paid at the caf\u00e9.",
        "Attachment: prices.csv", "Boat: Kayak | Fee: 2"]
    damaged = tmp_path / "damaged.msg"
    damaged.write_bytes(rtf_mail.read_bytes())
    with olefile.OleFileIO(str(damaged), write_mode=True) as ole:  # the stream's bytes changed, its size kept
        size = ole.get_size("__substg1.0_10090102")
        ole.write_stream("__substg1.0_10090102", b"\xff" * size)
    assert read_document(damaged).text.split("\n")[:2] == [
        "From: Ann Lee <ann@harbour.example>", "Body not read: its compressed RTF looks damaged (Unknown type of RTF compression)"]


def test_a_filled_pdf_form_reads_with_its_answers(tmp_path: Path) -> None:
    """PDFium's text layer holds a form's printed questions, not what was typed into its fields: a filled
    application read as its blank form. Each answer is a line, named by the field's tooltip, else by the
    last part of its name; ticked boxes say yes; empty fields and unticked boxes are left out."""
    from tests.pdfs import with_form

    pdf = with_form(make_pdf(["Mooring application. Boat name: Owner: Length:"]), [
        {"/FT": "/Tx", "/T": "topmostSubform[0].Page1[0].f1_01[0]", "/TU": "Boat name", "/V": "Sea Swallow"},
        {"/FT": "/Tx", "/T": "form1[0].owner[0]", "/V": "Ann Lee"},
        {"/FT": "/Tx", "/T": "length", "/V": ""},
        {"/FT": "/Btn", "/T": "Winter berth", "/V": "/Yes", "/AS": "/Yes"},
        {"/FT": "/Btn", "/T": "Electricity", "/V": "/Off", "/AS": "/Off"},
    ])
    (tmp_path / "application.pdf").write_bytes(pdf)
    assert read_document(tmp_path / "application.pdf").text.split("\n") == [
        "Mooring application. Boat name: Owner: Length:", "Boat name: Sea Swallow", "owner: Ann Lee", "Winter berth: yes"]


def test_a_zip_archive_reads_as_its_files_each_a_section(tmp_path: Path) -> None:
    """A Google Drive folder downloaded, a Notion or Confluence export: a .zip of documents, "not a type
    convrag reads". Each file of a type convrag reads is read as it is alone, under "File: its path", in
    path order; a picture is read by OCR (a photo of a notice); hidden files and macOS's __MACOSX copies are
    left out; a damaged member and one of another type are named with their reasons and the others read."""
    import io
    import zipfile

    from PIL import Image, ImageDraw, ImageFont

    notice = Image.new("RGB", (520, 60), "white")
    ImageDraw.Draw(notice).text((10, 15), "Winter berths close on 1 November.", fill="black", font=ImageFont.load_default(24))
    png = io.BytesIO()
    notice.save(png, format="PNG")

    manual = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.docx")
    with zipfile.ZipFile(tmp_path / "export.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("Harbour/Winter/prices.csv", "Boat,Fee\nKayak,2\n")
        archive.write(_MADE / "made_by_pandoc" / "heatpump-manual.docx", "Harbour/manual.docx")
        archive.writestr("Harbour/logo.svg", b"<svg/>")
        archive.writestr("Harbour/notice.png", png.getvalue())
        archive.writestr("Harbour/.DS_Store", b"\x00")
        archive.writestr("__MACOSX/Harbour/._manual.docx", b"\x00")
        archive.writestr("Harbour/notes.txt", "")
        archive.writestr("Harbour/broken.pdf", b"%PDF-1.4 broken")
    document = read_document(tmp_path / "export.zip")
    assert document.title == "export"  # its file name, as a folder has no title
    lines = document.text.split("\n")
    assert lines[0] == "File: Harbour/Winter/prices.csv" and lines[1] == "Boat: Kayak | Fee: 2"
    assert lines[2] == "File: Harbour/manual.docx" and "\n".join(lines[3:]).startswith(manual.text + "\n")
    assert lines[-3:-1] == ["File: Harbour/notice.png", "Winter berths close on 1 November."]
    assert lines[-1] == ("Files not read: Harbour/broken.pdf (not a readable PDF (Failed to load document (PDFium: Data format "
                         "error).)), Harbour/logo.svg (not a type convrag reads), Harbour/notes.txt (empty)")
    assert document.headings == (Heading(1, "File: Harbour/Winter/prices.csv", part=True), Heading(1, "File: Harbour/manual.docx", part=True),
                                 *(Heading(h.level + 1, h.text) for h in manual.headings), Heading(1, "File: Harbour/notice.png", part=True))
    # an archive of nothing readable, one of more files than the bound, one that claims a bomb's size
    with zipfile.ZipFile(tmp_path / "pictures.zip", "w") as archive:
        archive.writestr("a.svg", b"<svg/>")
    with pytest.raises(DataFormatError, match=r"pictures.zip: no file in it could be read: a.svg \(not a type convrag reads\)"):
        read_document(tmp_path / "pictures.zip")
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as archive:
        for n in range(4):
            archive.writestr(f"{n}.txt", "x")
    archives.MAX_ARCHIVE_FILES, files = 3, archives.MAX_ARCHIVE_FILES
    try:
        with pytest.raises(DataFormatError, match="many.zip: not read: it holds more than 3 files"):
            read_document(tmp_path / "many.zip")
    finally:
        archives.MAX_ARCHIVE_FILES = files
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros.txt", b"0" * (2 << 20))
    archives.MAX_ARCHIVE_BYTES, most = 1 << 20, archives.MAX_ARCHIVE_BYTES
    try:
        with pytest.raises(DataFormatError, match="bomb.zip: not read: its documents unpack to more than 1 MB"):
            read_document(tmp_path / "bomb.zip")
    finally:
        archives.MAX_ARCHIVE_BYTES = most
    (tmp_path / "fake.zip").write_bytes(b"not a zip")
    with pytest.raises(DataFormatError, match="fake.zip: not a readable zip archive"):
        read_document(tmp_path / "fake.zip")


def _tar(path: Path, files: dict[str, bytes], mode: str = "w:gz") -> Path:
    """A tar archive of ``files`` (name: bytes), each under "./" as ``tar -C folder -czf x.tgz .`` writes them."""
    import io
    import tarfile

    with tarfile.open(path, mode) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"./{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(("name", "mode"), [("export.tar.gz", "w:gz"), ("export.tgz", "w:gz"), ("export.TAR.BZ2", "w:bz2"),
                                            ("export.tar.xz", "w:xz"), ("export.tar", "w")])
def test_a_tar_archive_reads_as_its_files_each_a_section(tmp_path: Path, name: str, mode: str) -> None:
    """A folder packed on Linux or macOS, a project's docs, a release's sources: a .tar.gz was "not a type
    convrag reads" (".gz"). It reads as a zip does: each file under "File: its path" (without tar's "./"),
    in path order, hidden files left out, the others named; its id and title are its name without both
    suffixes."""
    manual = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.docx")
    _tar(tmp_path / name, {"Harbour/Winter/prices.csv": b"Boat,Fee\nKayak,2\n",
                           "Harbour/manual.docx": (_MADE / "made_by_pandoc" / "heatpump-manual.docx").read_bytes(),
                           "Harbour/._manual.docx": b"\x00\x05\x16\x07", "Harbour/logo.svg": b"<svg/>"}, mode)
    document = read_document(tmp_path / name)
    assert (document.doc_id, document.title) == ("export", "export")
    lines = document.text.split("\n")
    assert lines[:3] == ["File: Harbour/Winter/prices.csv", "Boat: Kayak | Fee: 2", "File: Harbour/manual.docx"]
    assert "\n".join(lines[3:]) == manual.text + "\nFiles not read: Harbour/logo.svg (not a type convrag reads)"
    assert document.headings[:2] == (Heading(1, "File: Harbour/Winter/prices.csv", part=True), Heading(1, "File: Harbour/manual.docx", part=True))


def test_a_tar_archive_cut_short_or_damaged_reads_as_far_as_it_goes(tmp_path: Path) -> None:
    """A download stopped half way: the files before the cut are read and the cut is named; with none
    before it, or bytes that are no tar, the archive is refused with the reason."""
    whole = _tar(tmp_path / "whole.tar", {"a.md": b"# Fees\n\nBoats pay 5 dollars.\n", "b.txt": b"x" * 20_000, "c.txt": b"late"}, "w")
    (tmp_path / "cut.tar").write_bytes(whole.read_bytes()[:6_000])  # inside b.txt's data
    assert read_document(tmp_path / "cut.tar").text.split("\n") == [
        "File: a.md", "Fees", "Boats pay 5 dollars.", "Files not read: b.txt (it looks damaged (ReadError))",
        "The archive ends early, after b.txt (ReadError: unexpected end of data): any files after it are not read."]
    gz = _tar(tmp_path / "whole.tgz", {"photo.raw": random.Random(0).randbytes(20_000), "a.md": b"# Fees"})
    (tmp_path / "cut.tgz").write_bytes(gz.read_bytes()[:10_000])  # inside the photo, which does not compress
    with pytest.raises(DataFormatError, match=r"cut.tgz: no file in it could be read: photo.raw \(not a type convrag reads\); "
                                              r"the archive ends early, after photo.raw \(EOFError: Compressed file ended"):
        read_document(tmp_path / "cut.tgz")
    (tmp_path / "head.tgz").write_bytes(gz.read_bytes()[:20])
    with pytest.raises(DataFormatError, match="head.tgz: not a readable tar archive"):
        read_document(tmp_path / "head.tgz")
    (tmp_path / "fake.tar.gz").write_text("not a tar")
    with pytest.raises(DataFormatError, match=r"fake.tar.gz: not a readable tar archive \(file could not be opened successfully:\)"):
        read_document(tmp_path / "fake.tar.gz")


def test_a_compressed_tar_is_refused_once_it_unpacks_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tar has no table of its files: listing a compressed one unpacks it all, and a gzip bomb unpacks a
    thousandfold. Listing stops, and the archive is refused, once what it unpacks passes the bound; the
    bounds of a zip (files, documents' bytes) hold for a tar too."""
    _tar(tmp_path / "bomb.tgz", {"zeros.bin": b"\0" * (3 << 20), "late.txt": b"late"})
    monkeypatch.setattr(archives, "MAX_STREAM_BYTES", 2 << 20)
    with pytest.raises(DataFormatError, match="bomb.tgz: not read: it unpacks to more than 2 MB"):
        read_document(tmp_path / "bomb.tgz")
    _tar(tmp_path / "bomb.tar", {"zeros.bin": b"\0" * (3 << 20), "late.txt": b"late"}, "w")
    assert read_document(tmp_path / "bomb.tar").text.startswith("File: late.txt\nlate")  # not compressed: its data is passed over unread
    _tar(tmp_path / "many.tgz", {f"{n}.txt": b"x" for n in range(5)})
    monkeypatch.setattr(archives, "MAX_ARCHIVE_FILES", 3)
    with pytest.raises(DataFormatError, match="many.tgz: not read: it holds more than 3 files"):
        read_document(tmp_path / "many.tgz")


def test_a_tar_in_a_folder_or_in_a_zip_reads_as_the_archive_it_is(tmp_path: Path) -> None:
    """In a folder, a .tar.gz was counted as a ".gz" of another type; beside a docs.md its id was "docs.tar".
    In a zip it was "not a type convrag reads". A gzip file of another kind is still not read."""
    import gzip
    import zipfile

    folder = tmp_path / "docs"
    folder.mkdir()
    packed = _tar(folder / "docs.tar.gz", {"fees.md": b"# Fees\n\nBoats pay 5 dollars.\n"})
    (folder / "docs.md").write_text("Moorings open at eight.")
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "1", "text": "x"}\n'))
    unread: Counter[str] = Counter()
    read = list(iter_documents(folder, [], unread))
    assert [(d.doc_id, d.title) for d in read] == [("docs.md", "docs"), ("docs.tar.gz", "docs")]
    assert read[1].text == "File: fees.md\nFees\nBoats pay 5 dollars." and unread == Counter({".gz": 1})
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.write(packed, "Old/docs.tar.gz")
    assert read_document(tmp_path / "export.zip").text.split("\n") == [
        "File: Old/docs.tar.gz", "File: fees.md", "Fees", "Boats pay 5 dollars."]


def test_a_7z_archive_reads_as_its_files_and_a_locked_one_says_so() -> None:
    """7-Zip is how many Windows users pack a folder: a .7z was "not a type convrag reads". It reads as a zip
    does (one solid block of LZMA2, read in its order). Files locked by a password are named so; an archive
    whose file names are locked too is refused with that reason."""
    manual = read_document(_MADE / "made_by_pandoc" / "heatpump-manual.docx")
    document = read_document(_MADE / "made_by_7zip" / "harbour-export.7z")
    assert (document.doc_id, document.title) == ("harbour-export", "harbour export")
    assert document.text == "\n".join([
        "File: Harbour/Winter/fees.csv", "Boat: Kayak | Fee: 2", "Boat: Dinghy | Fee: 3", "File: Harbour/heatpump-manual.docx",
        manual.text, "File: Harbour/notes.md", "Notes", "The office opens at 8.", "Files not read: Harbour/logo.svg (not a type convrag reads)"])
    assert document.headings[-2:] == (Heading(1, "File: Harbour/notes.md", part=True), Heading(2, "Notes"))
    with pytest.raises(DataFormatError, match=r"harbour-locked.7z: no file in it could be read: Harbour/Winter/fees.csv \(locked by a "
                                              r"password\), Harbour/notes.md \(locked by a password\)$"):
        read_document(_MADE / "made_by_7zip" / "harbour-locked.7z")
    with pytest.raises(DataFormatError, match="harbour-hidden.7z: not read: it is locked by a password, its file names too"):
        read_document(_MADE / "made_by_7zip" / "harbour-hidden.7z")


def test_a_rar_archive_reads_as_far_as_libarchive_reads_it() -> None:
    """WinRAR's archives, RAR 3 and RAR 5, solid or not, read as a zip does; a RAR 3 solid archive, which
    libarchive reads up to its first file, is read that far and the rest named."""
    assert read_document(_MADE / "made_by_rar" / "rar3-subdirs.rar").text.split("\n") == [
        "File: sub/dir1/file1.txt", "file1", "File: sub/dir2/file2.txt", "file2", "File: sub/with space/long fn.txt", "long fn",
        "File: sub/\u00fc\u0235\u0129\u00f6\u1e0b\u00e8/file.txt", "file"]
    lines = read_document(_MADE / "made_by_rar" / "rar5-solid.rar").text.split("\n")
    assert lines[0] == "File: stest1.txt" and lines.index("File: stest2.txt") == 1 + 512 and lines[-1] == "511"
    lines = read_document(_MADE / "made_by_rar" / "rar3-solid.rar").text.split("\n")
    assert lines[:2] == ["File: stest1.txt", "000"] and "File: stest2.txt" not in lines
    assert lines[-1] == ("The archive ends early, after stest1.txt (ArchiveError: RAR solid archive support unavailable.): "
                         "any files after it are not read.")


def test_a_7z_archive_without_libarchive_is_refused_saying_how_to_install_it(tmp_path: Path) -> None:
    """libarchive-c loads the C library when imported; where it is missing, the archive is skipped with the way to install it."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path\n"
                          "from convrag.ingest.documents import read_document\n"
                          "try:\n    read_document(Path(sys.argv[1]))\nexcept Exception as exc:\n    print(exc)",
                          str(_MADE / "made_by_7zip" / "harbour-export.7z")],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "LIBARCHIVE": str(tmp_path / "libarchive.so.13")})
    assert run.stdout.strip().endswith("harbour-export.7z: not read: 7z and RAR archives are read by libarchive, which is not "
                                       "installed (Debian and Ubuntu: apt-get install libarchive13, or libarchive13t64 since "
                                       "Debian 13 and Ubuntu 24.04)"), run.stderr[-2000:]


def test_only_a_tar_is_known_by_two_suffixes() -> None:
    """".gz" alone would claim every gzip file (a BEIR corpus.jsonl.gz beside the documents)."""
    from convrag.ingest.documents import document_stem, document_suffix

    assert [document_suffix(name) for name in ("a.tar.gz", "A.TAR.XZ", "corpus.jsonl.gz", ".tar.gz", "a.b.pdf", "README")] == [
        ".tar.gz", ".tar.xz", ".gz", ".gz", ".pdf", ""]
    assert [document_stem(name) for name in ("docs/a.b.tar.bz2", "a.tgz", "a.pdf")] == ["a.b", "a", "a"]


def test_an_archives_file_names_in_utf8_without_the_flag_read_as_written(tmp_path: Path) -> None:
    """macOS's Archive Utility writes UTF-8 names without the zip's UTF-8 flag; zipfile reads them as code
    page 437, so the section of "Gebühren.md" was headed "File: Geb├╝hren.md"."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("Gebühren.md", "# Gebühren\n\nEin Liegeplatz kostet 40 Euro.\n")
    data = bytearray((tmp_path / "export.zip").read_bytes())
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # clear the UTF-8 flag, as such tools leave it
        where = data.find(signature) + at
        data[where:where + 2] = (int.from_bytes(data[where:where + 2], "little") & ~0x800).to_bytes(2, "little")
    (tmp_path / "export.zip").write_bytes(bytes(data))
    assert zipfile.ZipFile(tmp_path / "export.zip").namelist() != ["Gebühren.md"]  # as zipfile reads it
    assert read_document(tmp_path / "export.zip").text.split("\n")[0] == "File: Gebühren.md"


def test_an_archive_member_packed_with_a_method_zipfile_lacks_is_named_with_advice(tmp_path: Path) -> None:
    """Windows packs large files with Deflate64, which zipfile cannot unpack: "it looks damaged (NotImplementedError)"."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("big.md", "# Big\n\nPacked with Deflate64.\n")
        archive.writestr("small.md", "# Small\n\nStored.\n")
    data = bytearray((tmp_path / "export.zip").read_bytes())
    for signature, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # the first member's method: 9, Deflate64
        where = data.find(signature) + at
        data[where:where + 2] = (9).to_bytes(2, "little")
    (tmp_path / "export.zip").write_bytes(bytes(data))
    lines = read_document(tmp_path / "export.zip").text.split("\n")
    assert lines[:3] == ["File: small.md", "Small", "Stored."]
    assert lines[-1] == ("Files not read: big.md (packed with a method Python's zipfile cannot unpack (9); unpack the archive "
                         "and index the folder)")


def test_archives_nested_in_archives_are_read_three_deep_then_named(tmp_path: Path) -> None:
    import io
    import zipfile

    from convrag.ingest.contained import MAX_NESTING

    inner = b""
    for level in range(6, -1, -1):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr(f"level{level}.txt", f"text of level {level}")
            if inner:
                archive.writestr(f"level{level + 1}.zip", inner)
        inner = out.getvalue()
    (tmp_path / "deep.zip").write_bytes(inner)
    text = read_document(tmp_path / "deep.zip").text
    assert [f"text of level {n}" in text for n in range(7)] == [n <= MAX_NESTING for n in range(7)]
    assert f"level{MAX_NESTING + 1}.zip (an archive nested more than {MAX_NESTING} deep)" in text


def test_mails_nested_in_mails_are_read_three_deep_then_named(tmp_path: Path) -> None:
    """A crafted mail nests mails thousands deep; each level is a file read again. Past three the
    nested mail is named with its reason, and the levels above are kept."""
    from email.message import EmailMessage

    from convrag.ingest.contained import MAX_NESTING

    mail = EmailMessage()
    mail["Subject"] = "level 6"
    mail.set_content("deepest")
    for level in range(5, -1, -1):
        outer = EmailMessage()
        outer["Subject"] = f"level {level}"
        outer.set_content(f"text of level {level}")
        outer.add_attachment(mail)
        mail = outer
    (tmp_path / "deep.eml").write_bytes(bytes(mail))
    text = read_document(tmp_path / "deep.eml").text
    assert [f"text of level {n}" in text for n in range(7)] == [n <= MAX_NESTING for n in range(7)]
    assert f"Attachments not read: level {MAX_NESTING + 1}.eml (a mail nested more than {MAX_NESTING} deep)" in text


_MUTATE = """
import random, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a reader that runs away fails here, not the machine
from convrag.errors import DataFormatError
from convrag.ingest.documents import document_suffix, read_document
source, seed, count, folder = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
rng, whole = random.Random(seed), source.read_bytes()
for i in range(count):
    damaged = bytearray(whole)
    for _ in range(rng.randint(1, 20)):
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
    path = folder / f"{i}{document_suffix(source)}"
    path.write_bytes(bytes(damaged))
    try:
        read_document(path)
    except DataFormatError as exc:
        if exc.reason.startswith("unsupported document type"):  # the copy was not read as its kind at all
            print(f"{i}: {exc}")
    except BaseException as exc:
        print(f"{i}: {type(exc).__name__}: {exc}"[:200])
"""


@pytest.mark.parametrize("name, seed, count", [
    ("made_by_libreoffice/harbour-prices.xls", 1, 120), ("made_by_libreoffice/heatpump-manual.doc", 3, 100),
    *((f"made_by_pandoc/heatpump-manual.{kind}", 7, 40) for kind in ("docx", "odt", "epub", "pptx", "rtf", "rst")),
    ("made_by_libreoffice/heatpump-manual.odp", 7, 40), ("made_by_libreoffice/heatpump-manual.pdf", 7, 40),
    ("made_by_libreoffice/heatpump-manual.ppt", 7, 40), ("made_by_aspose/harbour-mail.msg", 7, 40),
    ("made_by_aspose/harbour-rtf-mail.msg", 5, 40),
    ("made_by_zipfile/harbour-export.zip", 7, 60), ("made_by_pillow_heif/slipway-notice.heic", 11, 40),
    ("made_by_7zip/harbour-export.7z", 7, 80), ("made_by_rar/rar5-solid.rar", 7, 60), ("made_by_rar/rar3-subdirs.rar", 7, 60),
])
def test_a_damaged_file_is_skipped_with_its_reason_not_a_crash(tmp_path: Path, name: str, seed: int, count: int) -> None:
    """Files with random bytes changed are each a :class:`DataFormatError`, which names the file and lets a
    folder's other files be indexed. A damaged Office or OpenDocument package raised what zipfile and zlib
    raise (a UnicodeDecodeError for a file name in the zip, "Error -3 while decompressing", "That compression
    method is not supported"), which ended `convrag index` of the folder; xlrd's container reader followed a
    damaged .xls's chain of sectors round a loop until the process was killed for its memory; olefile raised
    a ValueError formatting a .doc's sector size of 2**40000."""
    _read_damaged_copies(Path(__file__).parent / name, seed, count, tmp_path)


def _read_damaged_copies(source: Path, seed: int, count: int, folder: Path) -> None:
    """Read ``count`` copies of ``source`` with random bytes changed, in a child process (a crash in a
    library's C code fails the test rather than ending pytest), and check each read or refused with a
    :class:`DataFormatError`."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _MUTATE, str(source), str(seed), str(count), str(folder)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == ""


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


_PANDOC_DECK = "made_by_pandoc/heatpump-manual.pptx"
_SHOW_TYPES = {".ppsx": "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
               ".potx": "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"}


@pytest.mark.parametrize("name, like", [
    ("made_by_libreoffice/heatpump-manual.docm", "made_by_pandoc/heatpump-manual.docx"),
    ("made_by_libreoffice/heatpump-manual.dotx", "made_by_pandoc/heatpump-manual.docx"),
    ("made_by_libreoffice/harbour-prices.xlsm", "made_by_libreoffice/harbour-prices.xls"),
    *((suffix, _PANDOC_DECK) for suffix in _SHOW_TYPES),
])
def test_a_macro_enabled_package_a_template_or_a_slide_show_reads_as_its_document(tmp_path: Path, name: str, like: str) -> None:
    """A .docm, .dotx, .xlsm or .ppsx was "not a type convrag reads", and python-docx and python-pptx refuse
    a package whose main part is a macro-enabled document's, a template's or a slide show's. A slide show
    is the deck with its main part's content type changed, as PowerPoint saves one (LibreOffice's .ppsx keeps
    the deck's)."""
    import zipfile

    folder = Path(__file__).parent
    if name in _SHOW_TYPES:
        deck = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
        with zipfile.ZipFile(folder / like) as source, zipfile.ZipFile(tmp_path / f"show{name}", "w") as show:
            for item in source.infolist():
                data = source.read(item)
                show.writestr(item, data.replace(deck.encode(), _SHOW_TYPES[name].encode()) if item.filename == "[Content_Types].xml" else data)
        path = tmp_path / f"show{name}"
    else:
        path = folder / name
    read, expected = read_document(path), read_document(folder / like)
    assert (read.text, read.title, read.headings) == (expected.text, expected.title, expected.headings)
    assert len(read.text) > 150


def test_a_word_package_whose_main_part_is_no_document_is_named(tmp_path: Path) -> None:
    import zipfile

    word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    with zipfile.ZipFile(Path(__file__).parent / "made_by_pandoc/heatpump-manual.docx") as source, \
            zipfile.ZipFile(tmp_path / "odd.docx", "w") as odd:
        for item in source.infolist():
            data = source.read(item)
            odd.writestr(item, data.replace(word.encode(), b"application/vnd.example.glossary+xml") if item.filename == "[Content_Types].xml" else data)
    with pytest.raises(DataFormatError, match=r"odd.docx: not a readable Word document \(its main part \(application/vnd.example.glossary\+xml\) is no document"):
        read_document(tmp_path / "odd.docx")


_TEXT_FORMATS = {
    ".ipynb": '{"cells": [{"cell_type": "markdown", "source": ["# Berths\\n", "Boats pay 40."]}, {"cell_type": "code", '
              '"source": ["print(40)"], "outputs": [{"output_type": "stream", "text": ["40\\n"]}]}], "metadata": {}, "nbformat": 4}',
    ".tex": "\\documentclass{article}\\title{Berths}\\begin{document}\\section{Fees}Boats pay $40$.\\footnote{Yearly.}\\end{document}",
    ".adoc": "= Berths\n\n== Fees\n\nBoats pay 40.\n\nTIP: Pay yearly.\n\n|===\n|Plan |Price\n|Day |15\n|===\n",
    ".mbox": "From MAILER-DAEMON Mon Mar  3 09:30:00 2025\nFrom: Ann <ann@harbour.example>\nSubject: Fees\n\nBoats pay 40.\n\n"
             "From MAILER-DAEMON Mon Mar  3 09:31:00 2025\nSubject: More\nContent-Type: text/html\n\n<p>Kayaks pay 2.</p>\n",
    ".mdx": "import Tabs from '@theme/Tabs';\n\n# Berths\n\n<Tabs>\n<TabItem label=\"Day\">\nBoats pay 40.\n</TabItem>\n</Tabs>\n",
}


@pytest.mark.parametrize("suffix", sorted(_TEXT_FORMATS))
def test_a_damaged_notebook_or_markup_file_is_skipped_with_its_reason(tmp_path: Path, suffix: str) -> None:
    """A notebook's JSON, markup pandoc reads, or a mailbox, with random bytes changed: read, or refused with a reason."""
    (tmp_path / f"berths{suffix}").write_text(_TEXT_FORMATS[suffix])
    assert "Boats pay 40" in read_document(tmp_path / f"berths{suffix}").text
    (tmp_path / "copies").mkdir()
    _read_damaged_copies(tmp_path / f"berths{suffix}", 9, 40, tmp_path / "copies")


@pytest.mark.parametrize("suffix", [".gif", ".avif"])
def test_a_damaged_gif_or_avif_is_skipped_with_its_reason(tmp_path: Path, suffix: str) -> None:
    """GIF and AVIF are opened by Pillow in the process, as PNG and JPEG are (a HEIC photo is decoded
    in a child process: its decoder crashed on a damaged one); a damaged one is refused with a reason."""
    from PIL import Image, ImageDraw, ImageFont

    picture = Image.new("RGB", (520, 120), (245, 243, 236))
    draw = ImageDraw.Draw(picture)
    for i, line in enumerate(["Harbour notice", "The slipway is closed from 3 to 14 March."]):
        draw.text((16, 16 + i * 44), line, fill=(25, 25, 25), font=ImageFont.load_default(26))
    picture.save(tmp_path / f"notice{suffix}")
    assert "slipway is closed" in read_document(tmp_path / f"notice{suffix}").text
    (tmp_path / "copies").mkdir()
    _read_damaged_copies(tmp_path / f"notice{suffix}", 5, 60, tmp_path / "copies")


@pytest.mark.parametrize(("suffix", "mode"), [(".tar.gz", "w:gz"), (".tar", "w"), (".tar.bz2", "w:bz2"), (".tar.xz", "w:xz")])
def test_a_damaged_tar_archive_is_skipped_with_its_reason(tmp_path: Path, suffix: str, mode: str) -> None:
    """A tar's headers, or the compressed stream they are in, with random bytes changed: a size of
    terabytes, a checksum that fails, a stream zlib cannot unpack. Read as far as it goes, or refused
    with a reason."""
    _tar(tmp_path / f"export{suffix}", {"berths.md": b"# Berths\n\nBoats pay 40.\n",
                                        "manual.docx": (_MADE / "made_by_pandoc" / "heatpump-manual.docx").read_bytes()}, mode)
    assert "Boats pay 40" in read_document(tmp_path / f"export{suffix}").text
    (tmp_path / "copies").mkdir()
    _read_damaged_copies(tmp_path / f"export{suffix}", 13, 40, tmp_path / "copies")


def test_a_word_tables_header_row_is_the_one_its_design_sets_apart(tmp_path: Path) -> None:
    """Few Word tables mark their first row "Repeat as header row", so nearly every table was read bare
    ("Day pass | 12 | 15"). A table design that formats the first row apart, with its "Header Row" option
    on, shows that row as the headings; the plain "Table Grid", or a design with the option off, does not."""
    import docx
    from docx.oxml.ns import qn

    document = docx.Document()
    for style, header in (("Light Grid Accent 1", True), ("Table Grid", True), ("Light Grid Accent 1", False)):
        table = document.add_table(rows=2, cols=2)
        table.style = style
        table._tbl.tblPr.find(qn("w:tblLook")).set(qn("w:firstRow"), "1" if header else "0")
        for r, row in enumerate([("Plan", "Summer"), ("Day pass", "15")]):
            for c, text in enumerate(row):
                table.cell(r, c).text = text
    document.save(str(tmp_path / "fees.docx"))
    assert read_document(tmp_path / "fees.docx").text.split("\n") == [
        "Plan: Day pass | Summer: 15", "Plan | Summer", "Day pass | 15", "Plan | Summer", "Day pass | 15"]


def _mailbox(path: Path) -> Path:
    """A mailbox as a mail program exports a folder: three mails, one with an attachment, one whose
    body has a line starting "From " (which mbox writes as ">From ")."""
    import mailbox
    from email.message import EmailMessage

    box = mailbox.mbox(str(path))
    for subject, body, attachment in (("Winter berths", "A winter berth costs 310 dollars.\nFrom 1 November.\n", None),
                                      ("=?utf-8?q?Caf=C3=A9_hours?=", "The caf\u00e9 opens at 8.\n", None),
                                      ("Prices", "Prices attached.\n", b"Boat,Fee\nKayak,2\n")):
        mail = EmailMessage()
        mail["From"], mail["Subject"], mail["Date"] = "Ann Lee <ann@harbour.example>", subject, "Mon, 3 Mar 2025 09:30:00 +0000"
        mail.set_content(body)
        if attachment:
            mail.add_attachment(attachment, maintype="text", subtype="csv", filename="prices.csv")
        box.add(mail)
    box.flush()
    box.close()
    return path


def test_a_mailbox_reads_as_its_mails_each_a_section(tmp_path: Path) -> None:
    """A Thunderbird folder, Gmail's Takeout or a mailing list's archive is a .mbox file: "not a type convrag reads"."""
    document = read_document(_mailbox(tmp_path / "harbour.mbox"))
    assert document.text.split("\n") == [
        "Mail: Winter berths.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000",
        "A winter berth costs 310 dollars.", "From 1 November.",
        "Mail: Caf\u00e9 hours.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000", "The caf\u00e9 opens at 8.",
        "Mail: Prices.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000", "Prices attached.",
        "Attachment: prices.csv", "Boat: Kayak | Fee: 2"]
    assert [h.text for h in document.headings] == ["Mail: Winter berths.eml", "Mail: Caf\u00e9 hours.eml", "Mail: Prices.eml",
                                                   "Attachment: prices.csv"]


def test_what_is_no_mailbox_or_too_large_a_one_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.mbox").write_text("These are notes, not mail.\n")
    with pytest.raises(DataFormatError, match='notes.mbox: not a mailbox \\(.mbox\\): it does not start with a "From " line'):
        read_document(tmp_path / "notes.mbox")
    monkeypatch.setattr(mail, "MAX_MAILBOX_BYTES", 100)
    with pytest.raises(DataFormatError, match="harbour.mbox: not read: it is over 0 MB"):
        read_document(_mailbox(tmp_path / "harbour.mbox"))
