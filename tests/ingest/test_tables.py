"""CSV files and Excel workbooks, a row a line (convrag/ingest/tables.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document


@pytest.mark.parametrize(("name", "table", "text"), [
    # an FAQ exported from a help desk: each row a line, each cell named by its column; a quoted answer over two lines
    ("faq.csv", 'Question,Answer,Updated\r\nCan kayaks moor overnight?,"Yes, for 12 dollars\r\na night.",2025-01-02\r\n'
     "Is there Wi-Fi?,,2025-03-04\r\n",
     "Question: Can kayaks moor overnight? | Answer: Yes, for 12 dollars a night. | Updated: 2025-01-02\n"
     "Question: Is there Wi-Fi? | Updated: 2025-03-04"),
    # a spreadsheet saved where a comma is the decimal mark: ";" parts the cells
    ("prices.csv", 'Plan;Price\nLite;0\nStandard;"0,02"\n', "Plan: Lite | Price: 0\nPlan: Standard | Price: 0,02"),
    ("berths.tsv", "Berth\tBoat\n1\tKayak\n", "Berth: 1 | Boat: Kayak"),
    # no headings: numbers, or a first row of long sentences, are data
    ("numbers.csv", "1,2,3\n4,5,6\n", "1 | 2 | 3\n4 | 5 | 6"),
    ("plain-faq.csv", "Can kayaks moor overnight?,Yes they can for twelve dollars a night.\nWhere is fuel?,At the pier.\n",
     "Can kayaks moor overnight? | Yes they can for twelve dollars a night.\nWhere is fuel? | At the pier."),
])
def test_csv_tables_are_read_a_row_to_a_line_each_cell_named_by_its_heading(tmp_path: Path, name: str, table: str, text: str) -> None:
    """A .csv (an FAQ or a price list exported from a help desk or a spreadsheet) was skipped as unread."""
    (tmp_path / name).write_text(table, newline="")
    doc = read_document(tmp_path / name)
    assert (doc.text, doc.title) == (text, Path(name).stem.replace("-", " "))


def test_a_row_wider_than_a_passage_is_parted_into_lines_each_led_by_its_key(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """A sheet of specifications 90 columns wide made each row one line longer than a passage: the
    passages cut from it began inside a cell ("W): 703 | Spec 49 ...") and never named the product,
    so "Model X3 Spec 80" found the first passage of some other row. Each line now holds whole cells
    and begins with the row's first cell."""
    from convrag.ingest.chunking import chunk_documents
    from convrag.ingest.tables import WIDE_ROW_WORDS

    columns = ["Product"] + [f"Spec {i} ({unit})" for i, unit in zip(range(1, 91), ["mm", "kg", "W", "V", "Hz"] * 18)]
    rows = [[f"Model X{r}"] + [str(100 * r + c) for c in range(1, 91)] for r in range(4)]
    (tmp_path / "specs.csv").write_text("\n".join(",".join(row) for row in [columns, *rows]) + "\n")
    doc = read_document(tmp_path / "specs.csv")
    lines = doc.text.splitlines()
    assert len(lines) > len(rows) and all(len(line.split()) <= WIDE_ROW_WORDS for line in lines)
    assert all(line.startswith("Product: Model X") for line in lines)
    assert sum(line.startswith("Product: Model X3 |") for line in lines) > 1 and "Spec 80 (Hz): 380" in doc.text  # whole cells
    passages = list(chunk_documents([doc], embedder.tokenizer))
    assert len(passages) > len(rows) and all(p.text.startswith("Product: Model X") for p in passages)
    narrow = "Plan,Price\nLite,0\n"  # a row that fits stays one line
    (tmp_path / "plans.csv").write_text(narrow)
    assert read_document(tmp_path / "plans.csv").text == "Plan: Lite | Price: 0"


def test_a_csv_cell_too_long_to_parse_is_an_error_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / "long.csv").write_text("Question,Answer\nWhy?," + "x" * 200_000 + "\n")
    with pytest.raises(DataFormatError, match=r"long\.csv:2: not a readable CSV table \(field larger than field limit"):
        read_document(tmp_path / "long.csv")


def test_excel_workbooks_are_read_sheet_by_sheet_as_csv_tables_are(tmp_path: Path) -> None:
    """A .xlsx (a price list kept in a spreadsheet) was skipped as unread."""
    import datetime

    import openpyxl

    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices 2025"
    for row in (["Plan", "Price", "From"], ["Lite", 0, datetime.datetime(2025, 1, 1)], [], ["Standard", 12.0, None]):
        prices.append(row)
    berths = book.create_sheet("Sheet2")  # a name that names nothing is no line of the text
    for row in (["Berth", "Boat"], [1, "Kayak"]):
        berths.append(row)
    book.create_sheet("Notes").sheet_state = "hidden"
    book["Notes"].append(["not shown to readers"])
    book.save(tmp_path / "harbour_prices.xlsx")
    doc = read_document(tmp_path / "harbour_prices.xlsx")
    assert (doc.title, doc.text) == ("harbour prices", "Prices 2025\nPlan: Lite | Price: 0 | From: 2025-01-01\n"
                                                      "Plan: Standard | Price: 12\n\nBerth: 1 | Boat: Kayak")
    book.properties.title = "Harbour price list"
    book.save(tmp_path / "titled.xlsx")
    assert read_document(tmp_path / "titled.xlsx").title == "Harbour price list"
