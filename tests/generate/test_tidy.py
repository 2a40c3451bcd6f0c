import pytest

from convrag.generate.tidy import drop_repeats, has_words, whole_sentences


@pytest.mark.parametrize("text, words", [("[1] [2] [3]", False), (" [2][3]. ", False), ("…", False), ("", False),
                                         ("Free [1].", True), ("25 GB [1]", True)])
def test_a_reply_says_something_only_with_words_besides_its_markers(text, words):
    assert has_words(text) is words


@pytest.mark.parametrize("text, ended, rest", [
    ("It is free [1]. It holds 25 GB", "It is free [1].", "It holds 25 GB"),
    ("It is free [1]. It holds 25 GB [1", "It is free [1].", "It holds 25 GB [1"),  # cut inside a marker
    ('It is called "Lite". It holds', 'It is called "Lite".', "It holds"),
    ('It is free. It is called "Lite."', 'It is free. It is called "Lite."', ""),  # a closing quote after the full stop
    ("It is free [1]. It holds 25 GB [1]", "It is free [1]. It holds 25 GB [1]", ""),  # ends with a marker: said
    ("Is it free? Yes!", "Is it free? Yes!", ""),
    ("It is free of charge for the first", "It is free of charge for the first \u2026", ""),  # all there is
    ("It is free [1]. It was made by Dr. Salk in", "It is free [1].", "It was made by Dr. Salk in"),  # not "Dr."
    # a list cut short: its numbers end no sentence, so the list goes whole
    ("It is free [1]. You may add, 8. Beg, and 9. Burgl", "It is free [1].", "You may add, 8. Beg, and 9. Burgl"),
    ("It is free [1]. Zoom ![a picture of the pl", "It is free [1].", "Zoom ![a picture of the pl"),  # no space: no end
    # a list keeps its lines (the sentences were joined with a space)
    ("Fees:\n\n1. Adults pay 130 dollars [1].\n2. Children pay 100 dollars [1].\n3. Send the", "Fees:\n\n1. Adults pay 130 dollars [1].\n"
     "2. Children pay 100 dollars [1].", "3. Send the"),
])
def test_a_cut_reply_ends_at_its_last_whole_sentence(text, ended, rest):
    assert whole_sentences(text) == (ended, rest)


def test_repeats_go_and_new_content_stays():
    text = ("Backups run nightly to a second region [1]. Backups also run nightly to a second region [2]. "
            "Restores take about an hour from the console [1]. Again, backups run nightly to a second region.")
    kept, dropped = drop_repeats(text)
    assert kept == "Backups run nightly to a second region [1]. Restores take about an hour from the console [1]."
    assert dropped == ["Backups also run nightly to a second region [2].", "Again, backups run nightly to a second region."]
    # a subset of an earlier sentence's words is a repeat too; a new figure or name is not
    assert drop_repeats("Plans cost 5 dollars per user monthly [1]. Plans cost 5 dollars per user [1].")[1]
    same_shape = "The Lite plan costs 5 dollars per month [1]. The Pro plan costs 9 dollars per month [2]."
    assert drop_repeats(same_shape) == (same_shape, [])
    short = "Yes [1]. Yes [2]. No."  # too few words to tell a repeat from an answer
    assert drop_repeats(short) == (short, [])
    listed = "- Backups run nightly to a second region [1].\n- Backups run nightly to a second region [1].\n- Restores take an hour [1]."
    assert drop_repeats(listed)[0] == "- Backups run nightly to a second region [1].\n- Restores take an hour [1]."
