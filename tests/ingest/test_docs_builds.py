"""What a documentation generator writes beside a site's pages (convrag/ingest/docs_builds.py)."""

from pathlib import Path

from convrag.ingest.docs_builds import BUILT_SOURCE, INDEX_PAGE, SOURCE_COPY, BuildFile, build_files, build_files_summary

BUILD = Path("/docs/_build/html")


def test_a_sphinx_builds_source_copies_and_index_pages_are_found() -> None:
    paths = [BUILD / name for name in ("searchindex.js", "index.html", "signer.html", "api/timed.html", "genindex.html",
                                       "search.html", "py-modindex.html", "genindex-B.html", "_sources/signer.rst.txt",
                                       "_sources/api/timed.md.txt", "_images/logo.png", "_static/basic.css")]
    found = build_files(paths)
    assert found == [BuildFile(BUILD / "genindex.html", INDEX_PAGE), BuildFile(BUILD / "search.html", INDEX_PAGE),
                     BuildFile(BUILD / "py-modindex.html", INDEX_PAGE), BuildFile(BUILD / "genindex-B.html", INDEX_PAGE),
                     BuildFile(BUILD / "_sources/signer.rst.txt", SOURCE_COPY), BuildFile(BUILD / "_sources/api/timed.md.txt", SOURCE_COPY)]


def test_the_dirhtml_builders_index_pages_are_folders() -> None:
    paths = [BUILD / name for name in ("searchindex.js", "index.html", "genindex/index.html", "search/index.html",
                                       "signer/index.html", "api/search.html")]
    assert [f.path.relative_to(BUILD).as_posix() for f in build_files(paths)] == ["genindex/index.html", "search/index.html"]


def test_without_a_sphinx_build_nothing_is_found() -> None:
    # a site's own search page and a folder called _sources, with no searchindex.js: pages like any other
    paths = [BUILD / name for name in ("index.html", "search.html", "genindex.html", "_sources/notes.txt")]
    assert build_files(paths) == []


def test_a_build_inside_the_folder_is_found_under_its_own_root() -> None:
    # the folder indexed holds the docs' sources and their build: the sources are pages, the build's copies are not
    root = Path("/project")
    paths = [root / name for name in ("docs/signer.rst", "docs/search.rst", "docs/_build/html/searchindex.js",
                                      "docs/_build/html/signer.html", "docs/_build/html/search.html",
                                      "docs/_build/html/_sources/signer.rst.txt")]
    assert [f.path.relative_to(root).as_posix() for f in build_files(paths)] == [
        "docs/_build/html/search.html", "docs/_build/html/_sources/signer.rst.txt"]


def test_the_report_counts_each_kind_and_names_a_few() -> None:
    found = [BuildFile(BUILD / f"_sources/p{i}.rst.txt", SOURCE_COPY) for i in range(5)] + [BuildFile(BUILD / "search.html", INDEX_PAGE)]
    assert build_files_summary(found, BUILD) == (
        "6 file(s) of a Sphinx build, whose pages are indexed: 5 copies of the pages' sources (_sources/p0.rst.txt, "
        "_sources/p1.rst.txt, _sources/p2.rst.txt and 2 more); 1 index pages made from the pages (search.html)")


def test_a_projects_sources_beside_their_build_are_left_out_where_the_build_copied_them(tmp_path: Path) -> None:
    # docs/ holds the sources and docs/_build/html their build: a source byte for byte its build's copy is
    # left out (its built page, with autodoc's API reference, is kept); one edited since the build is kept
    docs, build = tmp_path / "docs", tmp_path / "docs" / "_build" / "html"
    (build / "_sources").mkdir(parents=True)
    (build / "searchindex.js").write_text("Search.setIndex({})")
    for name, source, copy in (("signer.rst", "Signing\n=======\n", "Signing\n=======\n"),
                               ("timed.rst", "Timed\n=====\nNow with max_age.\n", "Timed\n=====\n")):
        (docs / name).write_text(source)
        (build / "_sources" / f"{name}.txt").write_text(copy)
        (build / name.replace(".rst", ".html")).write_text("<p>page</p>")
    (docs / "notes").mkdir()
    (docs / "notes" / "signer.rst").write_text("Our own notes on signing.\n")  # the same name, other words
    paths = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    found = {f.path.relative_to(tmp_path).as_posix(): f.why for f in build_files(paths)}
    assert found == {"docs/signer.rst": BUILT_SOURCE, "docs/_build/html/_sources/signer.rst.txt": SOURCE_COPY,
                     "docs/_build/html/_sources/timed.rst.txt": SOURCE_COPY}
    assert build_files_summary([f for f in build_files(paths) if f.why == BUILT_SOURCE], tmp_path).endswith(
        "1 sources of pages built beside them (docs/signer.rst)")
