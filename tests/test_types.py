"""The shared value types."""

from convrag.types import Passage, document_of


def test_document_of_an_mt_rag_style_passage_id() -> None:
    assert document_of("ibmcld_00007-1713-3490") == "ibmcld_00007"
    assert document_of("guides/setup-0-1200") == "guides/setup"
    assert document_of("plain") == "plain"



def test_searchable_text_heads_with_the_title_once() -> None:
    assert Passage("p", "Body text.", "Title").searchable_text == "Title\nBody text."
    assert Passage("p", "Title: body text.", "Title").searchable_text == "Title: body text."
