"""MDX pages made into the Markdown their built page shows (convrag/ingest/mdx.py)."""

import pytest

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
