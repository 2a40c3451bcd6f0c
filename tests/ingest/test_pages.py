"""Running headers, footers and page numbers of paged documents (convrag/ingest/pages.py)."""

from pathlib import Path

from convrag.ingest.documents import read_document
from tests.ingest.makers import pdf_of_pages


def test_page_numbers_stay_out_of_the_sentence_that_runs_over_the_page(tmp_path: Path) -> None:
    # "boats that arrive after six must 1 register": the foot's number went into the sentence
    pdf = pdf_of_pages(tmp_path / "rules.pdf", [["Visiting boats that arrive after the office closes must", "1"],
                                           ["register the next morning before nine.", "Fees are paid on the east pier and", "2"],
                                           ["Page 3 of 3", "in cash only.", "Total per night", "120"]])
    assert read_document(pdf).text == ("Visiting boats that arrive after the office closes must register the next morning before nine.\n"
                                       "Fees are paid on the east pier and in cash only.\nTotal per night\n120")
    # a bare number with no page numbered beside it may be a figure: it stays
    alone = pdf_of_pages(tmp_path / "total.pdf", [["Mooring fees collected in the season", "120"]])
    assert read_document(alone).text == "Mooring fees collected in the season 120"


def test_running_headers_and_footers_stay_out_of_the_text(tmp_path: Path) -> None:
    body = [["Visiting boats that arrive after the office closes must"], ["register the next morning before nine."],
            ["Fees are paid on the east pier and"], ["in cash only."]]
    pages = [["Harbour Authority", *lines, f"Annual report 2024 | {i}"] for i, lines in enumerate(body, start=1)]
    text = read_document(pdf_of_pages(tmp_path / "report.pdf", pages)).text
    assert text == ("Visiting boats that arrive after the office closes must register the next morning before nine.\n"
                    "Fees are paid on the east pier and in cash only.")
    # two pages are too few to tell a running line from the document's own
    assert read_document(pdf_of_pages(tmp_path / "two.pdf", pages[:2])).text.startswith("Harbour Authority\n")
