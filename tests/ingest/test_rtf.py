"""RTF documents (convrag/ingest/rtf.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document


def test_an_rtf_document_is_read_with_its_letters_tables_and_title(tmp_path: Path) -> None:
    """An .rtf (WordPad's, an older editor's) was "not read ... of other types"."""
    rtf = (r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times;}}{\info{\title Harbour fees}}"
           r"{\pard\b Fees\b0\par}{\pard Moorings cost 40 dollars a night at the Caf\'e9 pontoon (\u8364?5 for kayaks).\par}"
           r"\trowd\cellx2000\cellx4000 Lite\cell Free\cell\row\trowd\cellx2000\cellx4000 Pro\cell 10 dollars\cell\row"
           r"{\pard Pay at the office.{\footnote\pard Cash only.}\par}{\pict\pngblip 89504e47}}")
    (tmp_path / "fees.rtf").write_text(rtf)
    doc = read_document(tmp_path / "fees.rtf")
    assert doc.title == "Harbour fees"
    assert doc.text.split("\n") == ["Fees", "Moorings cost 40 dollars a night at the Café pontoon (€5 for kayaks).",
                                    "Lite | Free", "Pro | 10 dollars", "Pay at the office."]
    # a code page of its own: Windows-1251's Cyrillic
    (tmp_path / "ru.rtf").write_text(r"{\rtf1\ansi\ansicpg1251{\pard \'cf\'f0\'e8\'f1\'f2\'e0\'ed\'e8\par}}")
    assert read_document(tmp_path / "ru.rtf").text == "Пристани" and read_document(tmp_path / "ru.rtf").title == "ru"
    # a letter past the first 65,536 is one (a surrogate pair in RTF); a \u number too large is a damaged file
    (tmp_path / "emoji.rtf").write_text(r"{\rtf1{\pard Boats welcome \u-10179?\u-8704? and \u55296? alone.\par}}")
    assert read_document(tmp_path / "emoji.rtf").text == "Boats welcome \U0001f600 and \ufffd alone."
    (tmp_path / "huge.rtf").write_text(r"{\rtf1{\pard Boats \u99999999999? welcome.\par}}")
    with pytest.raises(DataFormatError, match="not a readable RTF document"):
        read_document(tmp_path / "huge.rtf")
    (tmp_path / "fake.rtf").write_text("Moorings cost 40 dollars.")
    with pytest.raises(DataFormatError, match=r"not an RTF document \(it does not start with \{\\rtf\)"):
        read_document(tmp_path / "fake.rtf")


def test_rtf_tables_keep_a_row_on_one_line_and_headings_their_level(tmp_path: Path) -> None:
    r"""pandoc (and Word, for a cell of several paragraphs) ends a cell's paragraph with \par before
    its \cell: each cell came out on a line of its own ("Property", "|Value"). And an RTF's headings
    (``\outlinelevel``) were not read, so its passages were not cut at its sections; nor was a
    header row, which names the columns (a row "Kayak | Slip 4" says less to the model)."""
    rtf = (r"{\rtf1\ansi\uc0{\stylesheet{\s1\outlinelevel0 heading 1;}}"
           r"{\pard\s1\outlinelevel0\b Harbour fees\par}{\pard Moorings are paid at the office.\par}"
           r"{\pard \outlinelevel1 \b Kayaks\par}{\pard Text before the table.\par}"
           r"{\trowd\cellx2000\cellx4000\trkeep\intbl{{\pard\intbl Plan\par}\cell}{{\pard\intbl Price\par}\cell}\intbl\row}"
           r"{\trowd\cellx2000\cellx4000\trkeep\intbl{{\pard\intbl Lite\par}\cell}"
           r"{{\pard\intbl 5 dollars\par}{\pard\intbl a night\par}\cell}\intbl\row}"
           r"{\pard Body \u8364 5 after.\par}"  # \uc0: nothing to skip after a \u letter, the mark's group leaves it so
           r"\pard Before a table with its row's settings at the end\par\pard\intbl Pro\cell 9 dollars\cell\row"
           r"\pard Berths:\par{\trowd\trhdr\cellx2000\cellx4000\intbl{{\pard\intbl Boat\par}\cell}{{\pard\intbl Berth\par}\cell}\intbl\row}"
           r"{\trowd\cellx2000\cellx4000\intbl{{\pard\intbl Kayak\par}\cell}{{\pard\intbl Slip 4\par}\cell}\intbl\row}"
           r"\pard\outlinelevel9 Body text by its outline level\par}")
    (tmp_path / "fees.rtf").write_text(rtf)
    doc = read_document(tmp_path / "fees.rtf")
    assert doc.text.split("\n") == ["Harbour fees", "Moorings are paid at the office.", "Kayaks", "Text before the table.",
                                    "Plan | Price", "Lite | 5 dollars a night", "Body €5 after.",
                                    "Before a table with its row's settings at the end", "Pro | 9 dollars",
                                    "Berths:", "Boat: Kayak | Berth: Slip 4",  # a header row (\trhdr) names the columns
                                    "Body text by its outline level"]
    assert [(h.level, h.text) for h in doc.headings] == [(1, "Harbour fees"), (2, "Kayaks")]
    assert doc.title == "Harbour fees"  # no {\info{\title}}: the first top-level heading names it
