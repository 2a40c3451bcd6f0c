"""Numbered section lines taken for headings where a text marks none (convrag/ingest/numbered_headings.py)."""

from pathlib import Path

from convrag.ingest.chunking import chunk_document
from convrag.ingest.documents import Heading, read_document
from convrag.ingest.numbered_headings import NumberedHeading, numbered_headings

RULES = """Harbour rules
Contents
1. Berths
2. Fees
3. Winter
These rules apply to every boat in the harbour.
1. Berths
Each boat keeps the berth it is given. Before you leave a berth for more than a week:
1. Empty the bilge
2. Close the seacocks
Tell the office when you come back.
2. Fees
Fees are paid by the month.
2.1 Kayaks
A kayak pays 2 dollars a night.
2.2 Dinghies
A dinghy pays 3 dollars a night.
3. Winter
Berths close on 1 November.
"""


def test_numbered_section_lines_are_the_headings_not_a_list_or_the_contents() -> None:
    assert numbered_headings(RULES) == (NumberedHeading("1. Berths", 1), NumberedHeading("2. Fees", 1), NumberedHeading("2.1 Kayaks", 2),
                                        NumberedHeading("2.2 Dinghies", 2), NumberedHeading("3. Winter", 1))


def test_steps_that_are_sentences_and_short_runs_are_not_headings() -> None:
    steps = "Do this:\n1. Open the panel.\nThen wait.\n2. Close the panel.\nThen check.\n3. Switch it on.\n"
    assert numbered_headings(steps) == ()
    assert numbered_headings("1. Berths\nText.\n2. Fees\nText.\n") == ()  # two are too few to say
    assert numbered_headings("3. Berths\nText.\n4. Fees\nText.\n5. Winter\nText.\n") == ()  # a numbering starts at 1
    # a heading whose number does not continue the run is left to the text: "7. Keys" after "2. Fees"
    assert [h.text for h in numbered_headings("1. A\nx\n2. B\nx\n7. Keys\nx\n3. C\nx\n")] == ["1. A", "2. B", "3. C"]


def test_a_plain_text_file_is_chunked_by_its_numbered_sections(tmp_path: Path) -> None:
    """A plain text file's passages were titled by the document alone."""
    from convrag.embeddings import load_embedder

    (tmp_path / "rules.txt").write_text(RULES + "".join(f"Winter rule {n}: boats on the hard are checked each week by the office.\n"
                                                        for n in range(60)))
    document = read_document(tmp_path / "rules.txt")
    assert document.headings == (Heading(1, "1. Berths"), Heading(1, "2. Fees"), Heading(2, "2.1 Kayaks"), Heading(2, "2.2 Dinghies"),
                                 Heading(1, "3. Winter"))
    passages = chunk_document(document, load_embedder().tokenizer, max_tokens=128, overlap=20)
    assert passages[-1].title == "rules \u203a 3. Winter"
