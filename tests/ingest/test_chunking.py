import re

import pytest

from convrag.embeddings import Embedder
from convrag.ingest.chunking import chunk_document, chunk_spans, token_spans
from convrag.ingest.documents import Document


def test_spans_overlap_and_cover() -> None:
    offsets = [(i * 2, i * 2 + 1) for i in range(10)]
    assert chunk_spans(offsets, 4, 1) == [(0, 7), (6, 13), (12, 19)]
    assert chunk_spans(offsets[:3], 4, 1) == [(0, 5)]
    assert chunk_spans([], 4, 1) == []
    with pytest.raises(ValueError):
        chunk_spans(offsets, 4, 4)


def test_chunks_are_512_model_tokens_with_100_overlap(embedder: Embedder) -> None:
    text = " ".join(f"token{i % 50} word{i}" for i in range(800))
    passages = chunk_document(Document("doc-7", "Title", text, "http://x"), embedder.tokenizer)
    tokenizer = embedder.tokenizer
    lengths = [len(tokenizer(p.text, add_special_tokens=False)["input_ids"]) for p in passages]
    assert len(passages) > 2 and all(n <= 512 for n in lengths[:-1]) and lengths[0] >= 510
    first_ids = tokenizer(passages[0].text, add_special_tokens=False)["input_ids"]
    second_ids = tokenizer(passages[1].text, add_special_tokens=False)["input_ids"]
    assert first_ids[-100:] == second_ids[:100]
    for passage in passages:
        _, start, end = passage.doc_id.rsplit("-", 2)
        assert passage.doc_id.startswith("doc-7-") and text[int(start) : int(end)] == passage.text
        assert passage.title == "Title" and passage.url == "http://x"


def test_empty_document_gives_no_passages(embedder: Embedder) -> None:
    assert chunk_document(Document("d", "t", "   \n"), embedder.tokenizer) == []


def test_a_word_the_tokenizer_cannot_split_is_counted_by_its_length(embedder: Embedder) -> None:
    """WordPiece reads a word of over 100 characters as one unknown token, however long: a 1 MB run
    of letters and digits made one 1 MB passage, which no answer prompt can hold, and the sentences
    around it went with it. It is now counted as a token every 2 characters."""
    import random
    import string

    rng = random.Random(3)
    blob = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(200_000))
    text = "Moorings cost 40 euros a night. " * 20 + blob + "\n\nKayaks need no permit."
    passages = chunk_document(Document("harbour", "Harbour", text), embedder.tokenizer)
    assert max(len(p.text) for p in passages) < 1_500  # no longer than a passage of English text
    assert passages[-1].text.endswith("Kayaks need no permit.")
    assert passages[0].text.startswith("Moorings cost 40 euros")
    covered = sorted((int(p.doc_id.rsplit("-", 2)[1]), int(p.doc_id.rsplit("-", 2)[2])) for p in passages)
    assert covered[0][0] == 0 and covered[-1][1] == len(text)  # nothing left out: the windows overlap, no gap
    assert all(b[0] <= a[1] for a, b in zip(covered, covered[1:], strict=False))


def test_ordinary_text_is_chunked_by_its_tokens_alone(embedder: Embedder) -> None:
    """Words the tokenizer splits (up to 100 characters) keep their tokens: the rule above changes
    nothing for ordinary text."""
    text = "Antidisestablishmentarianism " * 30 + "x" * 100 + " ends here."
    encoding = embedder.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert token_spans(encoding["offset_mapping"]) == [(a, b) for a, b in encoding["offset_mapping"] if b > a]


def test_a_long_document_is_tokenized_in_pieces_with_the_same_tokens(embedder: Embedder) -> None:
    """One call on a 23 MB text took 3.5 GB of memory; pieces cut before a space give the same spans."""
    from convrag.ingest.chunking import document_spans

    text = ("Boats pay 60 euros a night.\nKayaks—free; café «Lite» plan: 25 GB. 港口费用每晚六十欧元。 "
            "Antidisestablishmentarianism x" + "y" * 150 + " ends.  Two  spaces\n\nnew paragraph ") * 40
    whole = embedder.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    seen: list[int] = []

    def recording(piece: str, **kwargs: object) -> object:
        seen.append(len(piece))
        return embedder.tokenizer(piece, **kwargs)

    for piece_chars in (200, 333, 10_000):  # each longer than the longest word (151 characters)
        seen.clear()
        assert document_spans(text, recording, piece_chars) == token_spans(whole), piece_chars
        assert max(seen) <= piece_chars and (len(seen) > 1) == (piece_chars < len(text))


def _manual(sections: int = 8, sentences: int = 14) -> Document:
    """A document of numbered sections, each a heading line and a paragraph of sentences."""
    from convrag.ingest.documents import Heading

    lines, headings = ["Pump manual"], [Heading(1, "Pump manual")]
    for s in range(1, sections + 1):
        heading = f"{s}. Part {s}"
        paragraph = " ".join(f"Sentence {k} of part {s} says the valve turns {k * s} times, e.g. twice a day." for k in range(sentences))
        lines += [heading, paragraph]
        headings.append(Heading(2, heading))
    return Document("manual", "Pump manual", "\n".join(lines), headings=tuple(headings))


def test_structured_passages_end_and_begin_at_sentences_and_sections(embedder: Embedder) -> None:
    """MT-RAG's windows are cut wherever the token count falls: a passage began ", and less in quiet
    mode." and ended "Clean the magnetic". A user's document is now cut at sentence and line ends, and
    a new section's heading is where a passage begins where one is near: never its last line."""
    document = _manual()
    passages = chunk_document(document, embedder.tokenizer)
    plain = chunk_document(document, embedder.tokenizer, structured=False)
    assert any(not p.text.endswith(".") for p in plain)  # the old windows end mid-sentence: the test can fail
    spans = [tuple(int(x) for x in p.doc_id.rsplit("-", 2)[1:]) for p in passages]
    assert spans[0][0] == 0 and spans[-1][1] == len(document.text)
    for a, b in zip(spans, spans[1:], strict=False):  # in order, and nothing but a line break between two
        assert a[0] < b[0] and not document.text[a[1]:b[0]].strip()
    for passage, (start, _) in zip(passages, spans, strict=True):
        assert passage.text.endswith(".") and document.text[start:].startswith(("Sentence", "Pump", *"12345678"))
        assert not passage.text.split("\n")[-1].endswith(tuple(f"Part {s}" for s in range(1, 9)))  # no heading left at the end
        assert not re.search(r"\d\.$", passage.text)  # "6." numbers a line; no sentence ends there
    lengths = [len(embedder.tokenizer(p.text, add_special_tokens=False)["input_ids"]) for p in passages]
    assert max(lengths) <= 512 and min(lengths[:-1]) > 256  # cut in the window's second half
    assert sum(p.text.startswith(tuple(f"{s}. Part" for s in range(1, 9))) for p in passages) >= len(passages) - 2


def test_a_passage_is_titled_by_the_sections_it_begins_in(embedder: Embedder) -> None:
    """A passage that began mid-section had no words for what it was about but its own: the second half
    of a manual's fault codes did not say "fault codes"; its title now does, for BM25, the dense model
    (both read the title) and the citation."""
    from convrag.ingest.chunking import section_titles
    from convrag.ingest.documents import Heading

    passages = chunk_document(_manual(), embedder.tokenizer)
    for passage in passages:
        start = int(passage.doc_id.rsplit("-", 2)[1])
        before = [line for line in _manual().text[:start].split("\n") if ". Part " in line]
        opens = passage.text.split("\n")[0]
        if start == 0:
            assert passage.title == "Pump manual"  # its heading repeats the title: not named twice
        elif ". Part " in opens:
            assert passage.title == "Pump manual"  # it opens with its section's heading, which its text shows
        else:
            assert passage.title == f"Pump manual \u203a {before[-1]}"
    marks = [(0, Heading(1, "Guide")), (10, Heading(2, "Fees")), (20, Heading(3, "Kayaks")), (30, Heading(2, "Rules"))]
    assert section_titles("Guide", marks, [(0, 9), (12, 25), (25, 35), (30, 40), (33, 50)]) == [
        "Guide", "Guide \u203a Fees", "Guide \u203a Fees \u203a Kayaks", "Guide", "Guide \u203a Rules"]
    assert section_titles("", marks[1:2], [(12, 20)]) == ["Fees"]


def test_a_web_pages_heading_that_is_its_title_without_the_site_is_not_named_twice() -> None:
    """The Rust book's pages are titled "Hello, Cargo! - The Rust Programming Language" and open with
    the heading "Hello, Cargo!": each passage's title named the page twice."""
    from convrag.ingest.chunking import repeats_title, section_titles
    from convrag.ingest.documents import Heading

    title = "Hello, Cargo! - The Rust Programming Language"
    marks = [(0, Heading(1, "Hello, Cargo!")), (40, Heading(2, "Building for Release"))]
    assert section_titles(title, marks, [(10, 30), (50, 60)]) == [title, f"{title} \u203a Building for Release"]
    assert repeats_title("Pricing", "Widgetly | Pricing") and repeats_title("Pricing", "Pricing \u2014 Widgetly")
    assert repeats_title("What Is Ownership?", "What is Ownership? - The Rust Programming Language")  # its case aside
    assert not repeats_title("Hello", "Hello, Cargo! - The Rust Programming Language")  # a part, not a prefix
    assert not repeats_title("Fees", "Fees-free banking")  # a hyphen inside a word sets nothing apart


def test_headings_are_found_by_their_lines_in_order(embedder: Embedder) -> None:
    """A heading is placed at the first line after the last one found that reads as it; one no line
    reads as (a reader joined it otherwise) is skipped, and those after it are still found."""
    from convrag.ingest.chunking import heading_offsets
    from convrag.ingest.documents import Heading

    text = "Fees\nBoats pay. Fees\nKayaks\nFees\nRules"
    found = heading_offsets(text, [Heading(1, "Fees"), Heading(2, "Lost"), Heading(2, "Fees"), Heading(1, "Rules")])
    assert found == [(0, Heading(1, "Fees")), (text.index("\nFees\n") + 1, Heading(2, "Fees")), (text.rindex("Rules"), Heading(1, "Rules"))]


def test_a_heading_wrapped_over_two_lines_is_found() -> None:
    """A PDF's bookmark names a heading that its narrow column wrapped ("3. Where to place the" /
    "outdoor unit"); no line read as it, so the section before it went on and titled the passages
    of this one. A single line that reads as it still wins, and a pair is looked for only among
    short lines."""
    from convrag.ingest.chunking import heading_offsets
    from convrag.ingest.documents import Heading

    text = "1. Safety\nSwitch it off.\n3. Where to place\nthe outdoor unit\nOn a level base.\nKayaks\nKayaks pay."
    found = heading_offsets(text, [Heading(1, "1. Safety"), Heading(1, "3. Where to place the outdoor unit"),
                                   Heading(1, "Kayaks"), Heading(1, "Kayaks pay.")])
    assert found == [(0, Heading(1, "1. Safety")), (text.index("3. Where"), Heading(1, "3. Where to place the outdoor unit")),
                     (text.index("Kayaks"), Heading(1, "Kayaks")), (text.index("Kayaks pay."), Heading(1, "Kayaks pay."))]
    long = "word " * 50
    assert heading_offsets(f"{long}\n{long}", [Heading(1, f"{long.strip()} {long.strip()}")]) == []


def test_text_without_sentence_ends_is_cut_where_the_count_falls(embedder: Embedder) -> None:
    """A run of words with no full stop or line break has nowhere better to be cut: the windows are
    MT-RAG's, and nothing is lost."""
    text = " ".join(f"word{i}" for i in range(900))
    structured = chunk_document(Document("d", "T", text), embedder.tokenizer)
    assert [p.doc_id for p in structured] == [p.doc_id for p in chunk_document(Document("d", "T", text), embedder.tokenizer, structured=False)]


def test_a_heading_right_under_another_stays_with_it(embedder: Embedder) -> None:
    """"## Fees" then "### Kayaks": a passage that began at the second heading left the first as the
    last line of the passage before it."""
    from convrag.ingest.documents import Heading

    body = " ".join(f"Boat {i} pays {i} dollars a night at the pier." for i in range(45))
    lines, headings = [], []
    for s in range(1, 6):
        lines += [f"Part {s}", f"Fees of part {s}", body]
        headings += [Heading(2, f"Part {s}"), Heading(3, f"Fees of part {s}")]
    document = Document("pier", "Pier", "\n".join(lines), headings=tuple(headings))
    passages = chunk_document(document, embedder.tokenizer)
    assert len(passages) > 3
    for passage in passages:
        assert not passage.text.startswith("Fees of part") and not passage.text.endswith(tuple(f"Part {s}" for s in range(1, 6)))


def test_no_passage_runs_from_one_file_of_an_archive_or_a_mail_into_the_next(embedder: Embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A zip of two notes read as one document: the passage that began in the first file ran on into the
    second and was titled by the first, so the second's words were cited by the first file's name."""
    import zipfile

    from convrag.ingest.documents import read_document

    first = "# Moorings\n\n" + "Moorings are booked at the harbour office. " * 40
    second = "# Fuel\n\nDiesel is sold from 6 to 22 at the pier.\n"
    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as archive:
        archive.writestr("a-moorings.md", first)
        archive.writestr("b-fuel.md", second)
    document = read_document(tmp_path / "notes.zip")
    passages = chunk_document(document, embedder.tokenizer)
    fuel = [p for p in passages if "Diesel" in p.text]
    assert len(fuel) == 1 and "Moorings" not in fuel[0].text and fuel[0].text.startswith("File: b-fuel.md")
    assert all(not ("Moorings are booked" in p.text and "Diesel" in p.text) for p in passages)
    # the same text with the file heading an ordinary one: a passage runs across it, as across any section
    plain = Document("d", "notes", document.text, headings=tuple(h._replace(part=False) for h in document.headings))
    assert any("Moorings are booked" in p.text and "Diesel" in p.text for p in chunk_document(plain, embedder.tokenizer))
