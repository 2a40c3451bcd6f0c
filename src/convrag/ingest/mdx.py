"""MDX pages (Docusaurus, Nextra, Astro Starlight): Markdown with JSX components and JavaScript
modules in it, made into the Markdown a reader of the built site sees.

A docs site written in MDX opens its pages with ``import Tabs from '@theme/Tabs';`` and puts its
text in components (``<Tabs>``, ``<TabItem label="Android">``, ``<Admonition title="...">``). Read
as plain Markdown, the imports were the page's first sentence, a tab's label was lost, and the text
of two tabs ran into one line (a component is no HTML block element). MDX's own rules are kept
(https://mdxjs.com/docs/what-is-mdx/): an ``import`` or ``export`` at the start of a line opens a
JavaScript block that runs to the next blank line; ``{/* ... */}`` is a comment; indented lines
are no code block (the caller parses with that rule off). Code fences are left as they are.
"""

from __future__ import annotations

import html
import itertools
import re

#: a code fence's opening or closing line: inside one nothing is MDX
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: a JavaScript module statement opening a line: MDX's ESM block, up to the next blank line
_ESM = re.compile(r"^(?:import|export)[\s{*]")
#: a line that is one component's tag alone: ``<Tabs>``, ``<TabItem value="ios" label="iPhone">``,
#: ``</Tabs>``, ``<DocCardList />``; a component's name starts with a capital (``<Tabs.Item>`` too).
#: No two parts can take the same characters: a line of 50,000 spaces after "<A " took 49 s
_COMPONENT_LINE = re.compile(r"\s*<(?P<close>/)?(?P<name>[A-Z][\w.]*)(?P<attributes>[\s/][^<>]*)?>\s*")
#: the attributes whose text a built page shows as a heading of the component: a tab's label, a box's title
_SHOWN = re.compile(r"""\b(?:label|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{\s*["'`]([^"'`]*)["'`]\s*\})""")


#: an import of a component: what marks a Markdown file written for MDX (Docusaurus reads its .md
#: pages as MDX, and their imports read as the page's first sentence)
_IMPORT = re.compile(r"""^import\s.+\sfrom\s+["'][^"']+["'];?\s*$""")


def is_mdx(source: str) -> bool:
    """Whether a Markdown file is an MDX page: a line outside its code fences imports a module."""
    return any(not fenced and _IMPORT.match(line) for line, fenced in _lines(source))


def to_markdown(source: str) -> str:
    """The Markdown of an MDX page: its JavaScript blocks and comments out, each component standing
    on a line of its own an HTML ``div`` (so its text is a block of its own, as the built page shows
    it), headed by its label or title where it has one; other components' tags are left to the
    HTML reader, which keeps their text."""
    out: list[str] = []
    for fenced, run in itertools.groupby(_lines(source), key=lambda line: line[1]):
        text = "\n".join(line for line, _ in run)
        out.append(text if fenced else _unfenced(_without_comments(text)))
    return "\n".join(out)


def _without_comments(text: str) -> str:
    """``text`` without its JSX comments (``{/* ... */}``, which may run over lines), found in one pass:
    a lazy regular expression searched a page of unclosed ``{/*`` in quadratic time (12 s for 90 KB)."""
    out: list[str] = []
    at = 0
    while (start := text.find("{/*", at)) >= 0 and (end := text.find("*/}", start + 3)) >= 0:
        out.append(text[at:start])
        at = end + 3
    return "".join(out) + text[at:]


def _unfenced(text: str) -> str:
    """:func:`to_markdown` of a part of a page outside its code fences."""
    out: list[str] = []
    in_module = False
    for line in text.split("\n"):
        if in_module or _ESM.match(line):
            in_module = bool(line.strip())
        elif found := _COMPONENT_LINE.fullmatch(line):
            out.append(_component(found))
        else:
            out.append(line)
    return "\n".join(out)


def _lines(source: str) -> list[tuple[str, bool]]:
    """Each line of ``source``, and whether it is a code fence's (its opening and closing lines too)."""
    out: list[tuple[str, bool]] = []
    fence = ""
    for line in source.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence) and not line.strip()[len(opened[1]):]:
                fence = ""
            out.append((line, True))
        else:
            fence = opened[1] if opened else ""
            out.append((line, bool(opened)))
    return out


def _component(found: re.Match[str]) -> str:
    """The HTML a component's tag alone on its line stands for: a block, its label or title first."""
    attributes = found["attributes"] or ""
    if found["close"]:
        return "</div>"
    if attributes.rstrip().endswith("/"):  # <DocCardList />: it shows what the page's code makes, not text of the page
        return ""
    shown = _SHOWN.search(attributes)
    label = next((group for group in shown.groups() if group), "") if shown else ""
    return "<div>" + (f"<p>{html.escape(label)}</p>" if label.strip() else "")
