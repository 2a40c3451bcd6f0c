import pytest

from convrag.errors import ConvragError
from convrag.limits import MAX_QUESTION_CHARS, check_query, check_question


def test_a_question_within_the_limit_is_returned_as_is() -> None:
    assert check_question("  How much? ") == "  How much? "
    assert check_question("x" * MAX_QUESTION_CHARS) == "x" * MAX_QUESTION_CHARS


@pytest.mark.parametrize(("text", "message"), [("", "the query is empty"), (" \n\t", "the query is empty"),
                                               ("x" * (MAX_QUESTION_CHARS + 1), "the query is 20,001 characters; the limit is 20,000")])
def test_empty_and_huge_questions_are_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(ConvragError) as error:
        check_question(text, "query")
    assert str(error.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("caf\udce9", "the query is not UTF-8 text: byte 0xe9 at character 4; set the terminal, or the file piped in, to UTF-8"),
    ("smile \ud83d", "the query is not UTF-8 text: half a character (U+D83D) at character 7; set the terminal, or the file piped in, to UTF-8"),
])
def test_text_that_is_not_utf8_is_refused_by_its_byte(text: str, message: str) -> None:
    """A byte that is not UTF-8 in a command line or piped text reaches Python as a lone surrogate,
    which the tokenizers refused with a TypeError traceback."""
    with pytest.raises(ConvragError) as error:
        check_question(text, "query")
    assert str(error.value) == message
    assert check_question("café 😀", "query") == "café 😀"


@pytest.mark.parametrize("text", ["???", "?!", "...", "🤔"])
def test_a_query_without_words_is_refused(text: str) -> None:
    """Searched, "???" drew passages with scores as if they answered it."""
    with pytest.raises(ConvragError, match="the query has no words to search"):
        check_query(text)
    assert check_query("C++?") == "C++?" and check_query("税金") == "税金"
