"""Social turns: which messages are, and which are not, answered without a search."""

import pytest

from convrag.social import REPLIES, social_turn


@pytest.mark.parametrize(("message", "kind"), [
    ("Thanks, that's helpful!", "thanks"), ("Thank you so much for the information", "thanks"), ("thx", "thanks"),
    ("ok bye", "goodbye"), ("All right, see ya", "goodbye"), ("See you later", "goodbye"),
    ("hi, can you help me", "greeting"), ("Good morning!", "greeting"), ("Hello", "greeting"),
    ("OK", "acknowledgement"), ("cool, got it", "acknowledgement"), ("omg.", "acknowledgement"),
    ("👍", "acknowledgement"), ("🙏🙏", "acknowledgement"),  # a symbol, no words: searched, it was declined
])
def test_greetings_thanks_goodbyes_and_acknowledgements_are_social(message: str, kind: str) -> None:
    social = social_turn(message)
    assert social is not None and social.kind == kind and social.reply == REPLIES[kind]


@pytest.mark.parametrize("message", [
    "Thanks, and how much is the Team plan?",  # a question after the thanks
    "Great. Now tell me about refunds",  # words that ask for something
    "Is that all?", "ok?",  # a question
    "In water", "registered business", "I am in Sacramento.",  # MT-RAG's terse follow-ups, which need a search
    "Good day",  # every word allowed, none social alone
    "", "   ",  # empty: the pipeline's own error
])
def test_anything_that_may_ask_for_information_is_not(message: str) -> None:
    assert social_turn(message) is None


@pytest.mark.parametrize("message", ["???", "?", "!!!", "...", "🤔?", " ?! "])
def test_punctuation_without_words_is_asked_to_be_put_in_words(message: str) -> None:
    """Searched, "???" was rewritten as the conversation's previous question and declined 17 s later."""
    social = social_turn(message)
    assert social is not None and social.kind == "unclear" and social.reply == REPLIES["unclear"]
