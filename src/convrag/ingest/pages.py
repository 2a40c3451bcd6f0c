"""The pages of a paged document (a PDF, a multi-page scan) joined into one text: lines repeated at
the top or bottom of most pages (running headers and footers) and page numbers dropped, so that a
passage is not cut by "Page 3 of 12"."""

from __future__ import annotations

import re
from collections import Counter

from ..characters import whole_characters
from .typesetting import typeset_letters, unwrap_lines


def page_lines(pages: list[str]) -> str:
    """Pages of text as one text: without their page numbers and running lines, sentences wrapped
    over lines (and pages) joined, hyphenated words made whole (PDF pages and scanned ones alike)."""
    pages = [page.replace("\r\n", "\n").replace("\r", "\n") for page in pages]
    lines = [line for page in _without_running_lines([[" ".join(line.split()) for line in page.splitlines()] for page in pages])
             for line in page]
    return unwrap_lines(typeset_letters(whole_characters("\n".join(lines))))


#: a line that only numbers its page: "12", "- 12 -", "Page 12", "page 12 of 40", "12 / 40"
_PAGE_NUMBER = re.compile(r"(?P<dash>[-\u2013\u2014] ?)?(?P<page>page )?(?P<n>\d{1,5})(?P<of> ?(?:of|/) ?\d{1,5})?(?(dash) ?[-\u2013\u2014])",
                          re.IGNORECASE)


def _page_number(line: str) -> tuple[int, bool] | None:
    """The number a line gives its page, and whether the line says so itself ("Page 12", "12 of 40",
    "- 12 -") rather than being a bare number, which could as well be a table's last figure."""
    m = _PAGE_NUMBER.fullmatch(line)
    return (int(m["n"]), any(m[g] for g in ("dash", "page", "of"))) if m else None


#: a running header or footer is on at least this many pages, and on at least half of them
RUNNING_PAGES = 3
_DIGITS = re.compile(r"\d+")


def _without_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages without what the layout repeats at their foot or top: page numbers, and a running
    header or footer ("Harbour Authority | Annual report 2024"). Read into the text, they went into
    the sentence that runs on to the next page ("boats must 12 register the next morning")."""
    pages = [[line for line in page if line] for page in pages]
    for _ in range(2):  # a footer may stand below the page number, or above it
        for where in (-1, 0):  # the foot, then the top
            pages = _without_page_numbers(pages, where)
            pages = _without_repeated_lines(pages, where)
    return pages


def _without_page_numbers(pages: list[list[str]], where: int) -> list[list[str]]:
    """Pages without the page number at ``where`` (-1 the foot, 0 the top). A bare number is taken
    for one only where the page before or after has the next or previous number there; "Page 12"
    and its like are taken anywhere."""
    found = [_page_number(page[where]) if page else None for page in pages]
    numbers = [f[0] if f else None for f in found]
    drop = [f is not None and (f[1] or (i > 0 and numbers[i - 1] == f[0] - 1)
                               or (i + 1 < len(numbers) and numbers[i + 1] == f[0] + 1)) for i, f in enumerate(found)]
    return [_without_end(page, where) if gone else page for page, gone in zip(pages, drop)]


def _without_repeated_lines(pages: list[list[str]], where: int) -> list[list[str]]:
    """Pages without a line that stands at ``where`` on many of them (:data:`RUNNING_PAGES`, and half
    of them at least), figures aside: "Annual report 2024 | 3" and "... | 4" are one footer."""
    keys = [_DIGITS.sub("#", page[where]).lower() if page else "" for page in pages]
    counts = Counter(keys)
    running = {key for key, n in counts.items() if key and n >= RUNNING_PAGES and 2 * n >= len(pages)}
    return [_without_end(page, where) if key in running else page for page, key in zip(pages, keys)]


def _without_end(page: list[str], where: int) -> list[str]:
    return page[:-1] if where == -1 else page[1:]
