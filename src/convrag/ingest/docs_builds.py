"""What a documentation generator writes beside a site's pages that is no page of it. A folder of
built docs (Sphinx's ``_build/html``, the HTML zip Read the Docs offers) holds, beside
each page, a copy of the page's reStructuredText or Markdown source (``_sources/signer.rst.txt``)
and index pages made from the pages (``genindex.html``: every name defined, in a list; ``search.html``;
``py-modindex.html``). Indexed, the raw source ("``.. module:: itsdangerous.signer``") stood second
in a search's ten beside its own page, and the index pages' lists of names matched the names a
question asks about. Such files are left out, and the index's report says so in one line; so are
the sources themselves where the folder holds them beside their build.

Sphinx's builds are known by the ``searchindex.js`` every HTML build of it writes (``html`` and
``dirhtml`` builders). Pure functions over the folder's paths; the folder's walk
(:func:`convrag.ingest.documents.iter_documents`) leaves the files out, and an archive
(:mod:`.archives`) names them among the files it did not read."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from ..text import some_of

#: the file every Sphinx HTML build writes at its root, and so names a folder as one
SPHINX_MARK = "searchindex.js"
#: the folder of the pages' sources a Sphinx build copies (``html_copy_source``)
SPHINX_SOURCES = "_sources"
#: the index pages Sphinx makes from the pages, at the build's root (``html``) or as folders (``dirhtml``)
SPHINX_INDEX_PAGES = re.compile(r"genindex(-[A-Za-z_]+|-all)?|search|[a-z]+-modindex")

#: why a build's file is left out
SOURCE_COPY = "a copy of a page's source"
INDEX_PAGE = "an index page made from the pages"
BUILT_SOURCE = "a page's source, built into a page indexed"


class BuildFile(NamedTuple):
    """A file a docs build wrote beside its pages: its path, and why it is no page (:data:`SOURCE_COPY`, :data:`INDEX_PAGE`)."""

    path: Path
    why: str


def build_files(paths: Iterable[Path], on_disk: bool = True) -> list[BuildFile]:
    """Of ``paths`` (a folder's files), those a Sphinx build wrote beside its pages, in the given order;
    with ``on_disk`` false (an archive's members), without the sources beside the build, which are
    known by their bytes."""
    paths = list(paths)
    roots = {path.parent for path in paths if path.name == SPHINX_MARK}
    found: list[BuildFile] = []
    for path in paths:
        for root in roots:
            if root not in path.parents:
                continue
            parts = path.relative_to(root).parts
            if parts[0] == SPHINX_SOURCES:
                found.append(BuildFile(path, SOURCE_COPY))
            elif (len(parts) == 1 and path.suffix == ".html" and SPHINX_INDEX_PAGES.fullmatch(path.stem)) or (
                    len(parts) == 2 and parts[1] == "index.html" and SPHINX_INDEX_PAGES.fullmatch(parts[0])):
                found.append(BuildFile(path, INDEX_PAGE))
            break
    if not on_disk:
        return found
    return found + _built_sources(paths, roots, [file.path for file in found if file.why == SOURCE_COPY])


def _built_sources(paths: Sequence[Path], roots: set[Path], copies: Sequence[Path]) -> list[BuildFile]:
    """The files of ``paths`` outside the builds at ``roots`` that are byte for byte one of ``copies`` (a
    build's ``_sources/signer.rst.txt``): the sources of pages built beside them. A project's folder holds
    its docs' sources and, once they are built, the build (``docs/signer.rst`` and ``docs/_build/html``):
    both were indexed, each page twice. The built page is kept, since it holds what the source only
    asks for (the API reference autodoc writes from docstrings)."""
    by_name: dict[str, list[Path]] = {}
    for copy in copies:
        by_name.setdefault(copy.stem, []).append(copy)  # "signer.rst.txt" -> "signer.rst"
    found: list[BuildFile] = []
    for path in paths:
        if path.name not in by_name or any(root in path.parents for root in roots):
            continue
        try:
            size = path.stat().st_size
            if any(copy.stat().st_size == size and copy.read_bytes() == path.read_bytes() for copy in by_name[path.name]):
                found.append(BuildFile(path, BUILT_SOURCE))
        except OSError:  # unreadable: the walk names it when it reads it
            continue
    return found


def build_files_summary(found: Sequence[BuildFile], folder: Path, shown: int = 3) -> str:
    """The files left out, in one line of an index's report: how many of each kind, a few of them named."""
    kinds = []
    for why, label in ((SOURCE_COPY, "copies of the pages' sources"), (INDEX_PAGE, "index pages made from the pages"),
                       (BUILT_SOURCE, "sources of pages built beside them")):
        names = [file.path.relative_to(folder).as_posix() for file in found if file.why == why]
        if names:
            kinds.append(f"{len(names)} {label} ({some_of(names, shown)})")
    return f"{len(found)} file(s) of a Sphinx build, whose pages are indexed: {'; '.join(kinds)}"
