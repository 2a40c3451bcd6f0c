"""The zero-call topic tools: specific terms, the conversation's terms, the terms a follow-up repeats."""

from convrag.strategies.topic import TopicSettings, conversation_terms, expand, shared_terms, specific_terms
from convrag.types import Message

HISTORY = (
    Message("user", "How do I renew a US passport by mail?"),
    Message("agent", "Send form DS-82 with your old passport and a recent photo."),
)


def test_specific_terms_skip_everyday_words_and_keep_acronyms():
    assert specific_terms("What is the fee for the DS-82 form?", 5.2) == ["fee", "DS-82"]  # "form" is everyday English (Zipf 5.3)
    assert specific_terms("What about that one?", 5.2) == []


def test_shared_terms_are_the_question_terms_the_conversation_used():
    assert shared_terms("Passports for children?", HISTORY, 5.2) == ["passports"]  # compared by stem
    assert shared_terms("What about the fees?", HISTORY, 5.2) == []  # "what" and "about" name nothing
    assert shared_terms("Passport fees?", (), 5.2) == []


def test_the_expansion_appends_only_the_terms_the_question_lacks():
    terms = [t for t, _ in conversation_terms(HISTORY, "What about the fees?", TopicSettings(max_zipf=5.2))]
    assert "passport" in terms
    assert expand("What about the fees?", terms).startswith("What about the fees? ")
    assert expand("passport fees", ["passport"]) == "passport fees"
