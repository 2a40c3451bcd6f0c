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


def test_a_quantifier_standing_for_a_noun_left_out_is_a_marker():
    # "any" stands for the days of leave the conversation named: searched as asked, the small model
    # answered with the days of leave, not the days carried over
    assert standalone_verdict("Can I carry any over?").markers == ("ellipsis:any",)
    assert "ellipsis:both" in standalone_verdict("Is the fee the same for both?").markers
    assert "ellipsis:some" in standalone_verdict("Could I get some back next month?").markers


def test_a_quantifier_before_its_noun_or_in_an_idiom_is_no_marker():
    for question in ("Is there any fee for changing the flight?", "Can I carry some of the annual leave over?",
                     "Is the hotel breakfast free at all?", "Is the portal secure enough for card numbers?",
                     "Do managers approve more than five days of leave?"):
        assert not [m for m in standalone_verdict(question).markers if m.startswith("ellipsis:")], question


def test_a_comparison_of_things_the_question_does_not_name_is_a_marker():
    # after a conversation about index and active funds, searched as asked and declined
    assert standalone_verdict("Which is better for a beginner?").markers == ("comparison:better",)
    assert standalone_verdict("Which is the most popular?").markers == ("comparison:popular",)
    assert "comparison:cheaper" in standalone_verdict("What's cheaper for a family of four?").markers
    assert "comparison:easiest" in standalone_verdict("Which would be the easiest to set up?").markers


def test_a_comparison_that_names_what_it_compares_is_no_marker():
    for question in ("Which is the largest river in America?", "Which is cheaper, renting or buying a flat?",
                     "Which is safer than a savings account for a pension?", "What is the best time to visit Lisbon?",
                     "What is the interest rate on a Roth IRA?"):
        assert standalone_verdict(question).standalone, question
