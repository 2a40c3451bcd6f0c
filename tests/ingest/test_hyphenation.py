"""Words hyphenated at a line end: made whole, or kept as the compounds they are."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from convrag.ingest.documents import read_document, unwrap_lines
from convrag.ingest.hyphenation import BREAK, joins, mend
from tests.pdfs import make_pdf

NONE: Counter[str] = Counter()


@pytest.mark.parametrize("head, tail, joined", [
    ("mag", "netic", True),  # a common word once joined
    ("Representa", "tives", True),  # a capital keeps its case; looked up in lower case
    ("renew", "al", True),
    ("legio", "nella", True),  # rare, but "legio" is no word: a hyphenation
    ("Wärme", "pumpe", True),  # no English pieces: German writes its compounds whole
    ("moor", "ing", True),  # groff's and TeX's break: "ing" is common in wordfreq's counts, but no word a compound ends in
    ("heat", "ed", True),
    ("instal", "lation", True),
    ("care", "less", True),
    ("self", "service", False),  # two words, and "selfservice" is rare: a compound
    ("heat", "pump", False),
    ("follow", "up", False),  # "followup" is written, but not as often as a word is
    ("long", "term", False),
    ("Wi", "Fi", False),  # a capital after the hyphen: kept
    ("COVID", "19", False),  # a digit: kept
])
def test_a_broken_word_is_joined_and_a_compound_keeps_its_hyphen(head: str, tail: str, joined: bool) -> None:
    assert joins(head, tail, NONE, NONE) is joined


def test_the_document_decides_before_the_dictionary() -> None:
    # the manual writes "heatpump" whole elsewhere: its own spelling wins over English frequencies
    assert joins("heat", "pump", Counter({"heatpump": 2}), NONE)
    # and "re-cover" (cover again) with its hyphen, though "recover" is a common word
    assert not joins("re", "cover", NONE, Counter({"re-cover": 1}))
    assert mend(f"Re-cover the seat. We re{BREAK}cover it yearly.") == "Re-cover the seat. We re-cover it yearly."
    assert mend(f"The heatpump hums. The heat{BREAK}pump stops.") == "The heatpump hums. The heatpump stops."


def test_marks_without_a_word_before_them_are_dropped_and_text_without_marks_is_as_it_was() -> None:
    assert mend(f"{BREAK}Fees are due. The fee is 5 {BREAK}") == "Fees are due. The fee is 5 "
    assert mend(f"Ask for mag{BREAK}") == "Ask for mag-"  # nothing after it: the hyphen stays
    text = "No marks: self-service, mag-\nnetic."
    assert mend(text) is text


def test_a_text_files_hyphenated_lines_are_mended() -> None:
    text = ("Before the season ends, have a qualified installer clean the mag-\nnetic filter and check the whole of the self-\n"
            "service menu on the control box of the heat-\npump.")
    assert unwrap_lines(text) == ("Before the season ends, have a qualified installer clean the magnetic filter and check the whole "
                                  "of the self-service menu on the control box of the heat-pump.")


def test_a_justified_pdfs_hyphenated_words_are_whole_and_found(tmp_path: Path) -> None:
    """PDFium marks a hyphen at a line end (U+FFFE) and runs the lines together; the reader wrote it
    as a hyphen, so BM25 and the embedding model read "mag-netic", not the word a user searches."""
    lines = ["Clean the mag-", "netic filter and the self-", "service panel of the outdoor unit every six months.",
             "Representa-", "tives of the maker check the ALPHA-", "2 pump."]
    (tmp_path / "manual.pdf").write_bytes(make_pdf(lines))
    assert read_document(tmp_path / "manual.pdf").text == (
        "Clean the magnetic filter and the self-service panel of the outdoor unit every six months.\n"
        "Representatives of the maker check the ALPHA-2 pump.")


def test_a_two_column_report_reads_a_column_at_a_time_with_its_words_whole() -> None:
    """groff's two columns, justified and hyphenated: the left column first, then the right, each paragraph a line
    as written; "moor-" / "ing" at a line end read "moor-ing" (wordfreq counts "ing" a word)."""
    folder = Path(__file__).parent / "made_by_groff"
    source = (folder / "harbour-report.ms").read_text()
    paragraphs = [" ".join(part.split(".NH")[0].split()) for part in source.split(".PP\n")[1:]]
    assert read_document(folder / "harbour-report.pdf").text.split("\n") == [
        "Harbour Report", "1. Moorings", *paragraphs[:2], "2. Winter storage", *paragraphs[2:]]
    assert "A mooring costs" in paragraphs[0]
