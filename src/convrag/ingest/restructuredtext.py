"""reStructuredText read as the page docutils renders, through :mod:`.html_pages`; a Sphinx
project's roles (``:func:``, ``:ref:``) read as their text rather than as errors."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from ..errors import DataFormatError
from .formats import Heading
from .html_pages import html_to_text

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


def rst_to_text(source: str, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
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
    text, title, _, headings = html_to_text(f"<html><body>{parts['html_body']}</body></html>")
    return text, title, headings
