import pytest

from convrag.generate.citations import (
    Sentence,
    answer_sentences,
    infer_citations,
    join_answer,
    parse_citations,
    repoint_citations,
    separate_markers,
    split_answer,
    strip_citations,
    supported,
    written_numbers,
)
from tests.helpers import PLANS, merged_results


def test_citations_map_to_merged_results():
    cited, invalid = parse_citations("Yes [2]. Also [1][2] and [9].", merged_results(3))
    assert [(c.number, c.collection, c.passage_id, c.url) for c in cited] == [(2, "c1", "p1", "https://x/1"), (1, "c0", "p0", "https://x/0")]
    assert invalid == [9]


def test_markers_stay_with_the_sentence_they_end():
    text = "The plan is free [1]. It holds 25 GB [1][2]! Is that enough? Yes."
    assert answer_sentences(text) == ["The plan is free [1].", "It holds 25 GB [1][2]!", "Is that enough?", "Yes."]
    assert written_numbers(text) == [1, 1, 2] and strip_citations("free [1][2].") == "free ."


def test_abbreviations_initials_and_quotes_do_not_end_a_sentence():
    text = 'E. E. Cummings wrote poems [1]. It is called "Lite." It was made by Dr. Salk, e.g. in 1955 [2].'
    assert answer_sentences(text) == ["E. E. Cummings wrote poems [1].", 'It is called "Lite."',
                                      "It was made by Dr. Salk, e.g. in 1955 [2]."]


def test_line_breaks_and_list_items_stay_inside_a_sentence():
    # pysbd alone splits at each list item, and the repairs join sentences with a space: the list was flattened
    text = "**Fees** by mail:\n- adults pay 130 dollars [1]\n- send form DS-82 with your old passport. Then wait [2]."
    assert answer_sentences(text) == ["**Fees** by mail:\n- adults pay 130 dollars [1]\n- send form DS-82 with your old passport.",
                                      "Then wait [2]."]
    passages = merged_results(["Send form DS-82 with your old passport and a photo."])
    assert infer_citations(text, passages)[0].startswith("**Fees** by mail:\n- adults pay 130 dollars [1]\n- send form")


def test_sentences_keep_the_line_breaks_between_them_when_put_together_again():
    # each was joined with a space: a numbered list or a second paragraph became one line
    text = "Boats pay by the night.\n\n1. Larger boats pay ten dollars a night [2].\n2. The harbour master collects it [1]."
    assert split_answer(text) == [Sentence("Boats pay by the night.", "\n\n"),
                                     Sentence("1. Larger boats pay ten dollars a night [2].", "\n"),
                                     Sentence("2. The harbour master collects it [1].")]
    assert join_answer(split_answer(text)) == text
    # markers that open the next paragraph join the sentence before, and the paragraph stays
    assert split_answer("It is free.\n\n[1] It holds 25 GB.") == [Sentence("It is free. [1]", "\n\n"), Sentence("It holds 25 GB.")]
    passages = merged_results(["Boats pay by the night at the marina, the harbour master collects it.",
                               "Larger boats pay ten dollars a night, smaller ones five."])
    repointed, moved = repoint_citations(text.replace("[2]", "[1]").replace("it [1]", "it [2]"), passages)
    assert repointed == text and [m["to"] for m in moved] == [2, 1]
    inferred, added = infer_citations(strip_citations(text).replace(" .", "."), passages)
    assert inferred == text and added == [2, 1]


def test_a_number_that_names_no_passage_is_re_pointed_or_taken_out():
    # "[7]" of two passages stayed in the answer, a marker a reader could follow nowhere
    text = ("The Lite plan of Object Storage is free of charge [7]. Archive storage is cheaper but slower to read [2][9]. "
            "Yes [8]. Nobody knows who designed the logo [6].")
    repointed, moved = repoint_citations(text, merged_results(PLANS))
    assert repointed == ("The Lite plan of Object Storage is free of charge [1]. Archive storage is cheaper but slower to read [2]. "
                         "Yes. Nobody knows who designed the logo.")
    assert moved == [{"sentence": 0, "written": [7], "to": 1}]


def test_a_short_sentence_citing_no_passage_is_re_pointed_where_one_passage_alone_holds_it():
    """"Every six months [8]." (the model read "8. Care and maintenance" in its one passage): too short to
    choose among passages by its words, its marker was taken out and the answer cited nothing. Where one
    passage alone holds its words, it is that passage's; where several do, or none, the number goes."""
    passages = merged_results(["Clean the magnetic filter every six months.", "The pump runs quietly at night."])
    assert repoint_citations("Every six months [8].", passages) == ("Every six months [1].", [{"sentence": 0, "written": [8], "to": 1}])
    both = merged_results(["Clean the filter every six months.", "Service the pump every six months."])
    assert repoint_citations("Every six months [8].", both) == ("Every six months.", [])
    assert repoint_citations("Every nine years [8].", passages) == ("Every nine years.", [])


def test_an_index_in_code_is_no_citation_and_stays_as_written():
    # "`sys.argv[1]`" counted as a citation of passage 1, and re-pointing it rewrote the code to "`sys.argv [2]`"
    passages = merged_results(["The Lite plan of Object Storage is free.", "Read the first command line argument with sys.argv in a script."])
    text = "Read the first command line argument with `sys.argv[1]` in a script [1]."
    assert written_numbers(text) == [1] and strip_citations(text) == "Read the first command line argument with `sys.argv[1]` in a script ."
    assert repoint_citations(text, passages)[0] == "Read the first command line argument with `sys.argv[1]` in a script [2]."
    fenced = "Read it in a script:\n```\nfirst = sys.argv[1]\n```"
    assert written_numbers(fenced) == [] and parse_citations(fenced, passages) == ([], [])
    inferred = infer_citations(fenced.replace("Read it", "Read the first command line argument"), passages)
    assert inferred == ("Read the first command line argument in a script:\n```\nfirst = sys.argv[1]\n```\n[2]", [2])


def test_markers_that_open_a_sentence_belong_to_the_one_before():
    assert answer_sentences("The plan is free. [1] It holds 25 GB. [1][2]") == ["The plan is free. [1]", "It holds 25 GB. [1][2]"]
    assert answer_sentences("[1] [2]") == ["[1] [2]"] and answer_sentences("  ") == [""]


def test_an_inferred_citation_goes_after_the_sentence_not_after_an_abbreviation():
    passages = merged_results(["The polio vaccine was developed in 1955 by Dr. Jonas Salk at the University of Pittsburgh."])
    text, added = infer_citations("The polio vaccine was developed in 1955 by Dr. Jonas Salk at the University of Pittsburgh.", passages)
    # split at every full stop, this was "... by Dr [1]. Jonas Salk at the University of Pittsburgh [1]."
    assert text == "The polio vaccine was developed in 1955 by Dr. Jonas Salk at the University of Pittsburgh [1]." and added == [1]


def test_support_needs_the_sentence_words_in_the_passage():
    assert supported("The Lite plan is free [1].", "Object Storage Lite plan: free of charge, the plan is free.")
    assert not supported("It was launched in Toronto in 1998 [1].", "The Lite plan is free.")
    # no content words: nothing for the passage to hold, so the marker is not a supported citation (a reply of
    # markers alone once counted five "supported" citations for saying nothing)
    assert not supported("[1]", "anything") and not supported("It is [2].", "It is what it is.")


def test_uncited_sentences_copied_from_a_passage_get_inferred_citations():
    passages = merged_results(["Selling stock has tax effects when you realize a gain or a loss.",
                               "Preferred stocks pay fixed dividends to their holders."])
    text, added = infer_citations("Selling stock has tax effects when you realize a gain. The weather is nice today.", passages)
    assert text == "Selling stock has tax effects when you realize a gain [1]. The weather is nice today." and added == [1]
    assert infer_citations("Stocks pay.", passages) == ("Stocks pay.", [])  # too few words to match on


def test_a_citation_to_a_passage_that_does_not_hold_the_sentence_is_repointed():
    text = ("The Lite plan of Object Storage is free of charge [2]. Archive storage is cheaper but slower to read [2]. "
            "Nobody knows who designed the logo [1].")
    repointed, moved = repoint_citations(text, merged_results(PLANS))
    assert repointed == ("The Lite plan of Object Storage is free of charge [1]. Archive storage is cheaper but slower to read [2]. "
                         "Nobody knows who designed the logo [1].")  # supported: kept; unsupported anywhere: the model's number
    assert moved == [{"sentence": 0, "written": [2], "to": 1}]
    assert repoint_citations("The Lite plan includes 25 GB of storage per month [2][1].", merged_results(PLANS))[1] == []


@pytest.mark.parametrize(("reply", "separated"), [
    ("Both are free [1, 2].", "Both are free [1][2]."),
    ("Both are free [1,3; 4].", "Both are free [1][3][4]."),
    ("See passages [2-4] and [5\u20136].", "See passages [2][3][4] and [5][6]."),
    # not citations: a range too long or counting down, a list in code, a bracket of words
    ("Ports [1-400] and [4-2] stay.", "Ports [1-400] and [4-2] stay."),
    ("Call `f([1, 2])` first [1].", "Call `f([1, 2])` first [1]."),
    ("It is [one, two].", "It is [one, two]."),
])
def test_numbers_cited_together_become_a_marker_each(reply, separated):
    """An OpenAI or Anthropic model writes "[1, 2]": no [n] marker, it stayed in the answer as text and
    the sentence counted as citing nothing."""
    text, groups = separate_markers(reply)
    assert text == separated and bool(groups) == (text != reply)
