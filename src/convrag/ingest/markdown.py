"""Markdown (CommonMark through markdown-it, with tables, front matter and admonitions) read as the
page it renders to, through :mod:`.html_pages`: its title the front matter's or the first heading,
joined by what the front matter's description says the page is for (:func:`described`)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from markdown_it import MarkdownIt

from ..text import folded
from .formats import Heading
from .html_pages import html_to_text

#: the longest front matter read as such: a real one is a few lines, and PyYAML reads about 170 KB a
#: second here (a crafted 2.5 MB block took 15 s); a longer block is left as the document's text
MAX_FRONT_MATTER_CHARS = 65_536
#: a Markdown file's front matter: YAML between "---" lines (or "..." closing it), or TOML between "+++"
_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n(.*?)\r?\n(?:\1|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class FrontMatter(NamedTuple):
    """A Markdown file's text without its front matter, and what the front matter says of it."""

    body: str
    title: str = ""
    #: what the page is for, in a line: the ``description`` (Jekyll, Hugo, Docusaurus, MkDocs) or
    #: Hugo's ``summary``
    description: str = ""


#: the front matter keys that say in a line what a page is for, in the order they are looked for
DESCRIPTION_KEYS = ("description", "summary")


def _line(value: object) -> str:
    """A front matter value as one line of text; empty for a list, a mapping or nothing."""
    return " ".join(str(value).split()) if isinstance(value, str | int | float) else ""


def _front_matter(markdown: str) -> FrontMatter:
    """A Markdown file without its front matter (the metadata block static-site generators read:
    Jekyll, Hugo, MkDocs), and the title and description it gives. CommonMark reads such a block as
    a rule and a heading, so "title: Mooring fees date: 2024-01-01" was the document's title and its
    first line. A block that does not parse as a mapping is no front matter (a rule, then a heading)
    and stays."""
    found = _FRONT_MATTER.match(markdown)
    if not found or len(found[2]) > MAX_FRONT_MATTER_CHARS:
        return FrontMatter(markdown)
    try:
        if found[1] == "+++":
            import tomllib

            data = tomllib.loads(found[2])
        else:
            import yaml

            data = yaml.safe_load(found[2])
    except Exception:  # noqa: BLE001 - whatever the parser raises, the block is the document's own text
        return FrontMatter(markdown)
    if not isinstance(data, dict):
        return FrontMatter(markdown)
    description = next((line for key in DESCRIPTION_KEYS if (line := _line(data.get(key)))), "")
    return FrontMatter(markdown[found.end():], _line(data.get("title")), description)


#: the most words a description has to join the title; a longer one opens the text instead, as the
#: title is shown with every passage of the page, in the prompt and in its citations
TITLE_DESCRIPTION_WORDS = 12
#: how many of a text's first lines are looked at for a long description: a page that opens with its
#: heading and then the description's sentence needs it no second time
OPENING_LINES = 3


def described(title: str, text: str, description: str) -> tuple[str, str]:
    """The page's title and text with what its front matter's description says.

    A docs site says in the front matter what each page is for, and shows that line in its index,
    not on the page: npm's page for ``npm version`` is titled "npm-version" and described "Bump a
    package version", and "How do I bump the version of my package?" ranked it third, behind pages
    that mention versions more often. A description of at most :data:`TITLE_DESCRIPTION_WORDS` words
    joins the title ("npm-version: Bump a package version"), which heads every passage of the page
    for the indexes and names it in citations; over 30 questions about npm, a page that answers came
    first in hybrid search for 21 where it did for 16, and where the description only opened the
    text for 17 (docs/benchmarks.md, "A docs page's description"). A longer one opens the text,
    unless the text opens with it already (within its first :data:`OPENING_LINES` lines). A
    description the title holds adds nothing."""
    said, named = folded(description), folded(title)
    if not said or said in named:
        return title, text
    if len(description.split()) <= TITLE_DESCRIPTION_WORDS:
        return (f"{title}: {description}" if title else description), text
    opening = "\n".join(text.split("\n", OPENING_LINES)[:OPENING_LINES])
    if said in folded(opening):
        return title, text
    return title, f"{description}\n{text}" if text else description


def _plain(inline: Any) -> str:
    """The text of a Markdown inline token as a reader sees it: "**Fees** for `boats`" titled a
    document with its asterisks and backticks, a link with its address."""
    parts = [child.content if child.type in ("text", "code_inline") else " " if child.type in ("softbreak", "hardbreak") else ""
             for child in inline.children or ()]
    return " ".join("".join(parts).split())


def markdown_to_text(markdown: str, mdx: bool = False) -> tuple[str, str, tuple[Heading, ...]]:
    """Plain text and title of a Markdown document (an MDX page with ``mdx``, or where it imports a
    module as one does, :mod:`.mdx`): the title its front matter gives, else its first heading as
    the CommonMark parser reads it. The heading was found with a regular expression that backtracked
    in cubic time on a line of spaces and #s (a 12 KB line took 104 s), and took a "# comment" in a
    fenced code block for one. A docs site's admonitions (:func:`_admonitions`) read as a block
    headed by their title."""
    from . import mdx as mdx_pages

    markdown, title, description = _front_matter(markdown)
    parser = _admonitions(MarkdownIt("commonmark").enable("table"))  # GFM tables: a row is a line of its cells
    if mdx or mdx_pages.is_mdx(markdown):  # Docusaurus reads its .md pages as MDX
        markdown = mdx_pages.to_markdown(markdown)
        parser.disable("code")  # MDX has no indented code: a component's text is indented
    tokens = parser.parse(markdown)
    heading = next((_plain(tokens[i + 1]) for i, token in enumerate(tokens[:-1])
                    if token.type == "heading_open" and tokens[i + 1].type == "inline"), "")
    text, _, _, headings = html_to_text(parser.renderer.render(tokens, parser.options, {}))
    title, text = described(title or heading, text, description)
    return text, title, headings


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
