"""One document in several formats side by side (convrag/ingest/twins.py)."""

from collections import Counter

from convrag.ingest.formats import Document
from convrag.ingest.twins import TWIN_SHARE, Twin, held_share, sort_twins, twins_summary, words

SOURCE = "Fees. Boats pay 60 euros a night; kayaks pay nothing. The harbour opens at eight."
#: the page built from it: the same words, a permalink and the version that added the fees
BUILT = "Fees # Added in: v2. Boats pay 60 euros a night; kayaks pay nothing. The harbour opens at eight."


def test_words_are_counted_with_their_repeats_and_case_aside() -> None:
    assert words("Boats pay; boats stay.") == Counter({"boats": 2, "pay": 1, "stay": 1})
    assert held_share(words("boats boats pay"), words("boats pay")) == 2 / 3
    assert held_share(words(""), words("boats")) == 0.0


def test_the_document_holding_the_others_words_is_kept_whatever_its_place() -> None:
    source, built = Document("fees.md", "Fees", SOURCE), Document("fees.html", "Fees | Harbour", BUILT)
    for given in ([source, built], [built, source]):
        twins = sort_twins(given)
        assert twins.kept == [built]
        assert [(t.left_out, t.held_by, t.share) for t in twins.left_out] == [(source, built, 1.0)]


def test_two_documents_of_the_same_words_keep_the_first() -> None:
    first, second = Document("a.html", "A", SOURCE), Document("a.md", "A", SOURCE.upper())
    assert sort_twins([first, second]).kept == [first]


def test_documents_of_one_name_saying_different_things_are_both_kept() -> None:
    report = Document("report.pdf", "Report", SOURCE)
    # two words of 15 changed ("shuts" for "opens", "kayaks" for "boats"): below the share, two documents
    changed = Document("report.txt", "Report", SOURCE.replace("opens", "shuts").replace("Boats", "Kayaks"))
    assert held_share(words(changed.text), words(report.text)) < TWIN_SHARE
    data = Document("report.csv", "Report", "night,euros\n1,60\n2,120")
    twins = sort_twins([report, changed, data])
    assert twins.kept == [report, changed, data] and twins.left_out == []


def test_a_document_without_words_is_no_twin() -> None:
    empty, page = Document("x.md", "X", "…"), Document("x.html", "X", SOURCE)
    assert sort_twins([empty, page]).kept == [empty, page]


def test_the_report_names_a_few_and_counts_the_rest() -> None:
    twins = [Twin(Document(f"p{i}.md", "", SOURCE), Document(f"p{i}.html", "", BUILT), 1.0) for i in range(5)]
    assert twins_summary(twins[:1]).endswith("is indexed: p0.md (in p0.html)")
    assert twins_summary(twins).endswith(": p0.md (in p0.html), p1.md (in p1.html), p2.md (in p2.html) and 2 more")
    assert twins_summary(twins).startswith("5 file(s)")
