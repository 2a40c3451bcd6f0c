from convrag.strategies.standalone import standalone_verdict


def test_a_full_question_without_references_is_standalone():
    verdict = standalone_verdict("What are the tax benefits of a Roth IRA?")
    assert verdict.standalone and verdict.markers == ()


def test_pronouns_references_and_short_questions_are_markers():
    assert "pronoun:they" in standalone_verdict("Do they play outside the United States?").markers
    assert "reference:the previous" in standalone_verdict("Is the previous plan cheaper than the standard plan?").markers
    assert "reference:what about" in standalone_verdict("What about the Chicago Bears team history?").markers
    short = standalone_verdict("Enterprise plan")
    assert not short.standalone and short.markers == ("short:2_words",)


def test_marker_words_inside_other_words_do_not_count():
    assert standalone_verdict("Which theologians wrote about the Ottoman Empire?").standalone
