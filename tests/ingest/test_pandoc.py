"""LaTeX, Org, AsciiDoc and MediaWiki files read through pandoc (convrag/ingest/pandoc.py), in its sandbox."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import pandoc
from convrag.ingest.documents import _PANDOC_KINDS, SUFFIXES, read_document

_PAPER = r"""\documentclass{article}
\newcommand{\berth}{mooring berth}
\title{Winter Storage of \emph{Small} Boats}
\author{A. Harbour}
\begin{document}
\maketitle
\begin{abstract}
We study how a \berth{} is used in winter.
\end{abstract}
\section{Introduction}
Boats are lifted in October.\footnote{Weather allowing.} The cost is $c = 310$ dollars.
\input{secret}
\subsection{Prices}
\begin{tabular}{ll}
Plan & Price \\
Winter & 310 \\
\end{tabular}
\end{document}
"""


def _secret(folder: Path) -> None:
    """A file beside the document that it names: the sandbox must not read it (a service's upload could name the server's files)."""
    for name in ("secret", "secret.tex", "secret.txt", "secret.org", "secret.adoc"):
        (folder / name).write_text("SECRET LINE\n")


def test_a_latex_paper_reads_as_its_title_abstract_sections_and_tables(tmp_path: Path) -> None:
    """A paper's LaTeX source was "not a type convrag reads"."""
    _secret(tmp_path)
    (tmp_path / "paper.tex").write_text(_PAPER)
    document = read_document(tmp_path / "paper.tex")
    assert document.title == "Winter Storage of Small Boats"
    assert document.text.split("\n") == [
        "We study how a mooring berth is used in winter.", "Introduction",
        "Boats are lifted in October. The cost is c = 310 dollars.", "Prices", "Plan | Price", "Winter | 310", "Weather allowing.",
        "Included files not read: secret.tex (a file is read alone; index them as documents of their own)"]
    assert [(h.level, h.text) for h in document.headings] == [(1, "Introduction"), (2, "Prices")]


def test_a_citation_reads_as_its_keys(tmp_path: Path) -> None:
    """Without a bibliography pandoc leaves a citation empty: "See and Table 1." lost who was cited."""
    (tmp_path / "cites.tex").write_text("\\documentclass{article}\\begin{document}Boats pay 40 dollars~\\cite{lee2024,kim}. "
                                        "See \\citet{jones} and Table~\\ref{t}.\\begin{table}\\caption{Fees}\\label{t}"
                                        "\\begin{tabular}{l}x\\end{tabular}\\end{table}\\end{document}\n")
    assert read_document(tmp_path / "cites.tex").text.split("\n")[0] == "Boats pay 40 dollars [lee2024; kim]. See [jones] and Table 1."


def test_org_notes_read_as_their_headings_lists_and_tables(tmp_path: Path) -> None:
    _secret(tmp_path)
    (tmp_path / "notes.org").write_text('#+TITLE: Harbour notes\n#+INCLUDE: "secret.org"\n* Winter berths\n  A winter berth costs 310 dollars.\n'
                                        "** Closing\n   - Berths close on 1 November.\n| Plan | Price |\n|------+-------|\n| Day  | 15    |\n")
    document = read_document(tmp_path / "notes.org")
    assert document.title == "Harbour notes"
    assert document.text.split("\n") == ["Winter berths", "A winter berth costs 310 dollars.", "Closing",
                                         "Berths close on 1 November.", "Plan: Day | Price: 15",
                                         "Included files not read: secret.org (a file is read alone; index them as documents of their own)"]


def test_an_asciidoc_guide_reads_without_its_includes(tmp_path: Path) -> None:
    """pandoc fails a whole AsciiDoc document on an include it may not read; the include lines go first."""
    _secret(tmp_path)
    (tmp_path / "guide.adoc").write_text("= Gate App Guide\n:toc:\n\ninclude::secret.adoc[]\n\n== Installing\n\n"
                                         "The gate app opens the marina gate.\n\nTIP: Ask the office for your berth code.\n\n"
                                         '[source,js]\n----\ngate.open("north");\n----\n')
    document = read_document(tmp_path / "guide.adoc")
    assert document.title == "Gate App Guide"
    assert document.text.split("\n") == ["Installing", "The gate app opens the marina gate.", "Tip",
                                         "Ask the office for your berth code.", 'gate.open("north");',
                                         "Included files not read: secret.adoc (a file is read alone; index them as documents of their own)"]


def test_a_thesis_split_into_chapters_names_the_chapters_it_could_not_read(tmp_path: Path) -> None:
    """A thesis's main file \\input's its chapters: read alone it is its preamble, and said nothing of the rest."""
    (tmp_path / "thesis.tex").write_text("\\documentclass{report}\\title{Harbours}\\begin{document}\\maketitle\n"
                                         "\\include{ch1}\n\\input{ch2.tex}\n\\include{ch1}\n\\end{document}\n")
    assert read_document(tmp_path / "thesis.tex").text == "Included files not read: ch1.tex, ch2.tex (a file is read alone; index them as documents of their own)"


def test_a_mediawiki_page_reads_without_its_note_numbers(tmp_path: Path) -> None:
    (tmp_path / "berths.mediawiki").write_text("== Winter berths ==\nA '''winter berth''' costs 310 dollars.<ref>Harbour office</ref>\n"
                                               '{| class="wikitable"\n! Plan !! Price\n|-\n| Day || 15\n|}\n')
    assert read_document(tmp_path / "berths.mediawiki").text.split("\n") == [
        "Winter berths", "A winter berth costs 310 dollars.", "Plan: Day | Price: 15", "Harbour office"]


def test_what_pandoc_cannot_read_is_named_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "loop.tex").write_text(r"\newcommand{\a}{\a x}\a")
    with pytest.raises(DataFormatError, match=r"loop.tex: not a readable LaTeX document: pandoc could not read it \(.*Loop encountered"):
        read_document(tmp_path / "loop.tex")
    monkeypatch.setattr(pandoc, "MAX_SECONDS", 0.001)
    (tmp_path / "paper.tex").write_text(_PAPER)
    with pytest.raises(DataFormatError, match=r"paper.tex: not read: pandoc took more than 0.001 s"):
        read_document(tmp_path / "paper.tex")


def test_every_kind_read_through_pandoc_has_a_reader_and_a_suffix() -> None:
    assert set(pandoc.READERS) == _PANDOC_KINDS == {kind for kind in SUFFIXES.values() if kind in pandoc.READERS}
