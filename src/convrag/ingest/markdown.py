"""Markdown (CommonMark through markdown-it, with tables, front matter and admonitions) read as the
page it renders to, through :mod:`.html_pages`: its title the front matter's or the first heading."""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

from .formats import Heading
from .html_pages import html_to_text

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


def markdown_to_text(markdown: str, mdx: bool = False) -> tuple[str, str, tuple[Heading, ...]]:
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
    text, _, _, headings = html_to_text(parser.renderer.render(tokens, parser.options, {}))
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
