"""Markdown pages, their front matter and admonitions (convrag/ingest/markdown.py)."""

from pathlib import Path

import pytest

from convrag.ingest import markdown
from convrag.ingest.documents import read_document


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
    assert markdown._front_matter(f"---\n{block}---\nBody.") == (f"---\n{block}---\nBody.", "", "")


@pytest.mark.parametrize("front, title", [
    # npm's docs: the page never says what it is for; "How do I bump the version of my package?" ranked it third
    ("title: npm-version\ndescription: Bump a package version", "npm-version: Bump a package version"),
    ("title: npm-version\nsummary: Bump a package version", "npm-version: Bump a package version"),  # Hugo
    ("description: Bump a package version", "Synopsis: Bump a package version"),  # titled by its first heading
    ("title: npm-version\ndescription: [a, list]", "npm-version"),  # not a line of text
    ("title: npm-version\ndescription: NPM-version", "npm-version"),  # the title again
])
def test_a_short_description_joins_the_title(tmp_path: Path, front: str, title: str) -> None:
    (tmp_path / "npm-version.md").write_text(f"---\n{front}\n---\n\n### Synopsis\n\n```bash\nnpm version [<newversion>]\n```\n")
    doc = read_document(tmp_path / "npm-version.md")
    assert (doc.title, doc.text) == (title, "Synopsis\nnpm version [<newversion>]")


def test_a_long_description_opens_the_text_once(tmp_path: Path) -> None:
    """Shown with every passage, a paragraph-long description would crowd the prompt and the citations."""
    said = "Boats pay 5 dollars a night in summer and 3 dollars a night in winter, cash or card."
    page = f"---\ntitle: Mooring fees\ndescription: {said}\n---\n# Fees\n\nWhat boats pay.\n\nAsk the office.\n\n{said}\n"
    (tmp_path / "fees.md").write_text(page)
    doc = read_document(tmp_path / "fees.md")
    assert (doc.title, doc.text) == ("Mooring fees", f"{said}\nFees\nWhat boats pay.\nAsk the office.\n{said}")
    # the page opens with it already: not said twice
    (tmp_path / "fees.md").write_text(page.replace("Ask the office.\n\n", ""))
    doc = read_document(tmp_path / "fees.md")
    assert (doc.title, doc.text) == ("Mooring fees", f"Fees\nWhat boats pay.\n{said}")
