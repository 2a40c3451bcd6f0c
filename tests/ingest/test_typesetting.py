"""Lines a layout broke joined, ligatures made letters (convrag/ingest/typesetting.py)."""

from pathlib import Path

import pytest

from convrag.ingest.documents import read_document
from tests.pdfs import make_pdf

WRAPPED = ["Renewal by mail costs 130 dollars for adults", "(and teenagers) and must be paid by check within the", "30 days. Children under 16 cannot renew by",
           "mail, and apply in person.", "Fees", "Processing takes 6 weeks."]


#: as a PDF of justified text breaks it, a word hyphenated at the line's end
HYPHENATED = [*WRAPPED[:2], "30 days. Children under 16 can-", "not renew by mail, and apply in person.", *WRAPPED[4:]]


def test_a_line_broken_after_a_capital_a_digit_or_a_colon_is_joined() -> None:
    """LibreOffice's PDF of a manual broke its sentences after a capital ("a 25 A type C" / "breaker."),
    a number ("for 30" / "minutes.") and a colon (a legionella cycle:" / "the immersion heater"), and
    only lines ending in a lower-case letter, a comma or a semicolon were joined. A short line, or
    one whose next begins as a new sentence or a list item does, keeps its break."""
    from convrag.ingest.documents import unwrap_lines

    text = ("The outdoor unit runs on a 230 V supply protected by a 25 A type C\nbreaker. Keep the tank at 65 degrees for 30\n"
            "minutes once a week, as the control box runs a legionella cycle:\nthe immersion heater does it.\n"
            "Fault codes shown on the display of the control box E21\nE35 means the sensor failed.\nNotes:\nall fees are due.\n"
            "Replace both batteries of the wall thermostat within 2\n3. Mount it on an inside wall.")
    assert unwrap_lines(text).split("\n") == [
        "The outdoor unit runs on a 230 V supply protected by a 25 A type C breaker. Keep the tank at 65 degrees for 30 "
        "minutes once a week, as the control box runs a legionella cycle: the immersion heater does it.",
        "Fault codes shown on the display of the control box E21", "E35 means the sensor failed.", "Notes:", "all fees are due.",
        "Replace both batteries of the wall thermostat within 2", "3. Mount it on an inside wall."]


@pytest.mark.parametrize("name, content, second", [
    ("fees.pdf", make_pdf(WRAPPED), "cannot renew"), ("hyphenated.pdf", make_pdf(HYPHENATED), "cannot renew"),  # a PDF's visual lines
    ("fees.txt", "\n".join(WRAPPED).encode(), "cannot renew"),  # a text file wrapped by its writer
    ("hyphenated.txt", "\n".join(HYPHENATED).encode(), "cannot renew"),  # the word made whole (ingest/hyphenation.py)
    ("fees.md", ("\n".join(WRAPPED[:4]) + "\n\n# Fees\n\nProcessing takes\n6 weeks.\n\n```\nimport fees\nimport os\n```\n").encode(),
     "cannot renew"),
    ("fees.html", ("<p>" + "\n".join(WRAPPED[:4]) + "</p><h2>Fees</h2><p>Processing takes\n6 weeks.</p><pre>import fees\nimport os</pre>").encode(),
     "cannot renew"),
])
def test_a_sentence_written_over_several_lines_is_one_line(tmp_path: Path, name: str, content: bytes, second: str) -> None:
    # the sentence splitter ends a sentence at every line break: the answer's compression kept half-sentences
    from convrag.text import split_sentences

    (tmp_path / name).write_bytes(content)
    text = read_document(tmp_path / name).text
    assert split_sentences(text)[:3] == ["Renewal by mail costs 130 dollars for adults (and teenagers) and must be paid by check within "
                                         "the 30 days.",
                                         f"Children under 16 {second} by mail, and apply in person.", "Fees"]
    assert "Processing takes 6 weeks." in text
    if name.endswith(".txt"):  # short lines are no wrapped sentence: a list keeps its lines
        listed = ("Bring:\napples\npears, if ripe\nplums\nand when you are asked to do the following, then\n2. sign the form\n"
                  "and when you are asked to do the following, then\n(b) sign the form\n"
                  "    pip install the-harbour-tools --upgrade\n    harbour-tools register --boat\n"  # code keeps its lines
                  "and when you are asked to do the following, then\n    indented, a new paragraph")
        (tmp_path / "list.txt").write_text(listed)
        assert read_document(tmp_path / "list.txt").text == listed
    if name.endswith((".md", ".html")):
        assert "import fees\nimport os" in text  # code keeps its lines


def test_ligatures_are_letters_and_invisible_characters_go(tmp_path: Path) -> None:
    # a PDF's "\ufb01le" (one character) was no word "file" to BM25, the tokenizer or the citation checks
    (tmp_path / "fees.pdf").write_bytes(make_pdf(["The renewal Ale goes to the Harbour ofAce."], to_unicode={"41": "FB01"}))
    assert read_document(tmp_path / "fees.pdf").text == "The renewal file goes to the Harbour office."
    (tmp_path / "fees.txt").write_text("The o\ufb03ce keeps the \ufb02ow of re\xad\nnewals and each zero\u200b-width mark.")
    assert read_document(tmp_path / "fees.txt").text == "The office keeps the flow of renewals and each zero-width mark."
