"""MDX pages made into the Markdown their built page shows (convrag/ingest/mdx.py)."""

from pathlib import Path

import pytest

from convrag.ingest.documents import read_document
from convrag.ingest.mdx import is_mdx, to_markdown


def test_an_import_inside_a_code_fence_makes_no_mdx_page() -> None:
    """A README showing how to import a module is Markdown, not MDX: its indented code stays code."""
    assert not is_mdx("Use it so:\n\n```js\nimport gate from 'gate';\n```\n")
    assert not is_mdx("Use it so:\n\n````md\n```js\nimport gate from 'gate';\n```\n````\n")  # a fence shown in a fence
    assert is_mdx("import Tabs from '@theme/Tabs';\n\n# Gate\n")
    assert is_mdx('import {Tabs, TabItem} from "@theme/Tabs"\n')
    assert not is_mdx("import the berth list from the office.\n")


def test_modules_run_to_the_next_blank_line_and_comments_go() -> None:
    page = "export const Price = () => (\n  <b>12 dollars</b>\n);\nexport default Layout;\n\nThe gate {/* the north one */} opens at 6."
    assert to_markdown(page) == "The gate  opens at 6."


@pytest.mark.parametrize("line, html", [
    ('<TabItem value="ios" label="iPhone">', "<div><p>iPhone</p>"),
    ("<TabItem value='ios' label='iPhone' default>", "<div><p>iPhone</p>"),
    ('<Admonition type="warning" title={"Lost phone"}>', "<div><p>Lost phone</p>"),
    ('  <Tabs groupId="phone">', "<div>"),
    ("</Tabs.Item>", "</div>"),
    ("<DocCardList />", ""),
    ('<TabItem label="Q&A">', "<div><p>Q&amp;A</p>"),
    ("<details>", "<details>"),  # HTML, not a component: the HTML reader knows it
    ("Costs <Price /> a season.", "Costs <Price /> a season."),  # in a sentence: its text stays
])
def test_a_component_alone_on_its_line_is_a_block_headed_by_its_label(line: str, html: str) -> None:
    assert to_markdown(line) == html


def test_a_fence_is_left_as_it_is_to_its_closing_line() -> None:
    page = "~~~~\n<Tabs>\nimport x from 'x';\n~~~\n{/* kept */}\n~~~~\n<Tabs>"
    assert to_markdown(page) == "~~~~\n<Tabs>\nimport x from 'x';\n~~~\n{/* kept */}\n~~~~\n<div>"


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
