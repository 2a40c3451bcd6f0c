"""The decoding steers: the pure sentence rule, the processor on a toy vocabulary, and the real model."""

from dataclasses import replace

import numpy as np
import pytest

from convrag.llm.base import CITE_RULES, GenerationParams
from convrag.llm.steering import CopyIndex, Steering, closing_marks, current_sentence, ends_uncited_sentence, starts_word


@pytest.mark.parametrize(
    ("generated", "piece", "is_end", "expected"),
    [
        ("Green tea has about 30 mg", ".", False, True),  # a sentence closing with no citation
        ("Green tea has about 30 mg [1]", ".", False, False),  # cited
        ("Green tea has about 30 mg [1", "].", False, False),  # a citation being closed
        ("Green tea has about 30 mg", ".\n", False, True),  # the end inside a longer token
        ("Green tea has about", " 30", False, False),  # not an end
        ("It has", ".", False, False),  # too short to need a source
        ("The rate was 3", ".", False, False),  # maybe a decimal point: let through
        ("The vaccine was made by Dr", ".", False, False),  # an abbreviation: "Dr. Salk" goes on
        ("The poems were written by E", ".", False, False),  # an initial: "E. E. Cummings"
        ("It is sold in the U.S", ".", False, False),
        ("Many drinks hold caffeine, e.g", ".", False, False),
        ("It was struck down in United States v", ".", False, False),  # a court case: "v. Windsor" goes on
        ("Deductions cover health care, dependents, etc", ".", False, True),  # "etc." mostly ends the sentence
        ("Green tea is sold by TEA", ".", False, True),  # a word in capitals is a word
        ("The drink was made by Drake", ".", False, True),
        ("Green tea has about 30 mg", "", True, True),  # the answer ends mid-sentence, uncited
        ("Green tea has about 30 mg [1].", "", True, False),  # the answer ends after a cited sentence
        ("First one here [1]. Then a second one", ".", False, True),  # only the current sentence counts
        # inside code nothing ends a sentence: a synopsis's "..." was steered into "[ [ [ [" to the token limit
        ("Run the command `npm docs [<pkgname> [<pkgname>", " ...", False, False),
        ("To join paths use `os", ".", False, False),  # "`os.path`" is not split by a citation
        ("To join paths use the module `os", "", True, False),
        ("Run ```\nnpm docs a b\n", "...", False, False),  # a fenced block
        ("To join paths use `os.path`", ".", False, True),  # the span closed: the sentence ends
        ("To join paths use `os.path", "`.", False, True),  # the token closes the span, then ends the sentence
    ],
)
def test_when_a_sentence_needs_a_citation(generated, piece, is_end, expected):
    assert ends_uncited_sentence(generated, piece, is_end) is expected


def test_current_sentence_starts_after_the_last_end():
    assert current_sentence("One [1]. Two more") == "Two more"
    assert current_sentence("One [1]. ") == ""


@pytest.mark.parametrize(
    ("generated", "expected"),
    [
        ("He was born in the U.S. in 1950", "He was born in the U.S. in 1950"),
        ("Done [1]. It was found by Dr. Jonas Salk", "It was found by Dr. Jonas Salk"),
        ("Some fruit, e.g. apples, keep", "Some fruit, e.g. apples, keep"),
        ("Done [1]. E. E. Cummings wrote it", "E. E. Cummings wrote it"),
        ("It costs 3.5 dollars [1]. Then", "Then"),
        ("Born in the U.S. ", "Born in the U.S. "),
    ],
)
def test_an_abbreviation_does_not_end_the_sentence(generated, expected):
    assert current_sentence(generated) == expected


def test_a_sentence_with_an_abbreviation_still_owes_its_citation():
    # before, the sentence restarted at "in Ohio": two words, too short to need a citation
    assert ends_uncited_sentence("He lived in the U.S. in Ohio", ".", False) is True
    assert ends_uncited_sentence("He lived in the U.S. [1] in Ohio", ".", False) is False


# a toy vocabulary: one token per piece of text
VOCAB = ["<end>", " [", "I", "Tea", " has", " caffeine", ".", "1", "]", " do", " not", " know", " `tea", "`.", "`"]
ID = {piece: i for i, piece in enumerate(VOCAB)}


def _steering(**params):
    return Steering(GenerationParams(**params), lambda ids: "".join(VOCAB[i] for i in ids),
                    lambda text: [ID[text]] if text in ID else [ID[text.split()[0]]], {ID["<end>"]})


def _logits(favourite: str) -> np.ndarray:
    logits = np.zeros(len(VOCAB), dtype=np.float32)
    logits[ID[favourite]] = 5.0
    return logits


def _step(steering: Steering, prompt: list[int], generated: list[str], favourite: str) -> str:
    ids = np.array(prompt + [ID[p] for p in generated])
    return VOCAB[int(np.argmax(steering(ids, _logits(favourite))))]


def test_the_opener_replaces_an_uncited_sentence_end_and_the_model_picks_the_number():
    steering = _steering(cite_sentences=True)
    prompt = [ID["Tea"]] * 3
    assert _step(steering, prompt, [], "Tea") == "Tea"
    assert _step(steering, prompt, ["Tea", " has"], " caffeine") == " caffeine"
    assert _step(steering, prompt, ["Tea", " has", " caffeine"], ".") == " ["  # steered
    assert _step(steering, prompt, ["Tea", " has", " caffeine", " ["], "1") == "1"  # the model's number
    assert _step(steering, prompt, ["Tea", " has", " caffeine", " [", "1", "]"], ".") == "."  # cited: free
    assert steering.report() == {"citation_nudges": 1}


@pytest.mark.parametrize(
    ("generated", "piece", "expected"),
    [
        ("Run `cargo new", "`.", "`"),
        ("Own property, etc", ").\n", ")"),
        ('The infinitive "to go', '").', '")'),
        ("Tea has caffeine", ".", ""),  # a bare end: the opener, as before
        ("Tea has caffeine", ".\n\n", ""),
        ("Tea has caffeine", "...", ""),  # an ellipsis is no closing mark
        ("Own property (see (a)", ").", ""),  # the model wants ")." once more: the opener now
    ],
)
def test_closing_marks_are_what_a_sentence_end_token_writes_before_its_full_stop(generated, piece, expected):
    assert closing_marks(generated, piece) == expected


def test_closing_marks_come_before_the_citation_not_in_its_place():
    # "`." is one token: the opener in its place left the code span open ("use `tea [1].")
    steering = _steering(cite_sentences=True)
    prompt = [ID["Tea"]]
    written = ["Tea", " has", " `tea"]
    _step(steering, prompt, [], "Tea")
    assert _step(steering, prompt, written, "`.") == "`"  # the mark alone first ...
    assert _step(steering, prompt, [*written, "`"], ".") == " ["  # ... then the full stop is steered
    assert _step(steering, prompt, [*written, "`", " [", "1", "]"], "`.") == "`."  # cited: left alone
    assert steering.report() == {"citation_nudges": 1}


def test_a_sentence_is_made_to_cite_once():
    # where the model wrote no number after the opener, the opener was forced at each end it tried
    # again, and the answer ran on as "[ [ [ [" to its token limit
    steering = _steering(cite_sentences=True)
    prompt = [ID["Tea"]]
    written = ["Tea", " has", " caffeine"]
    _step(steering, prompt, [], "Tea")
    assert _step(steering, prompt, written, ".") == " ["
    assert _step(steering, prompt, [*written, " ["], ".") == "."  # no number: the end is let through
    assert steering.report() == {"citation_nudges": 1, "citation_refused": 1}
    # the next sentence is made to cite as before
    assert _step(steering, prompt, [*written, " [", ".", " do", " not", " know"], ".") == " ["
    assert steering.report()["citation_nudges"] == 2


def test_the_first_choice_is_reported_and_forced_only_at_its_threshold():
    logits = np.zeros(len(VOCAB), dtype=np.float32)
    logits[ID["Tea"]] = 2.0  # "Tea" is the greedy choice; "I" has about 4.6 % of the mass
    for at, forced in ((None, False), (0.5, False), (0.04, True)):
        steering = _steering(first_choice="I do not know.", first_choice_at=at)
        chosen = VOCAB[int(np.argmax(steering(np.array([ID["Tea"]]), logits.copy())))]
        report = steering.report()
        assert report["first_choice_p"] == pytest.approx(1 / (np.exp(2.0) + len(VOCAB) - 1), abs=1e-3)
        assert report["first_choice_forced"] is forced and chosen == ("I" if forced else "Tea")


def test_the_decline_sentence_is_not_made_to_cite():
    steering = _steering(cite_sentences=True, first_choice="I do not know.")
    prompt = [ID["Tea"]]
    _step(steering, prompt, [], "I")
    assert _step(steering, prompt, ["I", " do", " not", " know"], ".") == "."
    assert steering.report()["citation_nudges"] == 0


def test_plain_requests_keep_their_cache_keys():
    assert GenerationParams(max_tokens=8).as_dict() == {"temperature": 0.0, "max_tokens": 8, "stop": []}
    assert not GenerationParams().steered and GenerationParams(cite_sentences=True).steered
    # a copy bias without texts to copy from steers nothing, and keeps the plain key
    assert GenerationParams(copy_bias=2.0).as_dict() == GenerationParams().as_dict()
    assert not GenerationParams(copy_bias=2.0).steered and not GenerationParams(copy_from=("Tea has caffeine.",)).steered


def test_the_citation_rules_version_is_in_a_cited_requests_cache_key():
    # an answer cached under older citation rules is not served as the current rules' answer
    assert GenerationParams(cite_sentences=True).as_dict()["cite_sentences"] == CITE_RULES
    assert CITE_RULES >= 3


def test_the_copy_steer_is_in_the_cache_key_with_its_bias_and_texts():
    a = GenerationParams(copy_bias=2.0, copy_from=("Tea has caffeine.",))
    assert a.steered and a.as_dict()["copy"]["bias"] == 2.0
    assert a.as_dict() != GenerationParams(copy_bias=1.0, copy_from=("Tea has caffeine.",)).as_dict()
    assert a.as_dict() != GenerationParams(copy_bias=2.0, copy_from=("Coffee has caffeine.",)).as_dict()


def test_the_copy_index_continues_the_longest_ending_a_text_holds_where_that_text_holds_it():
    every = range(20)  # every token begins a word here
    index = CopyIndex([[1, 2, 3, 4], [9, 2, 5]], every, min_words=1)
    assert index.match([7, 1, 2])[0] == 2 and index.continuations([7, 1, 2]).tolist() == [3]  # "1 2" is followed by 3 only
    assert index.continuations([9, 2]).tolist() == [5]
    assert index.continuations([7, 2]).tolist() == [3, 5]  # one word matched in both texts: both continue
    assert index.continuations([4]).tolist() == []  # a text's last token is followed by nothing
    assert index.continuations([]).tolist() == []
    assert index.continuations(np.array([7, 1, 2])).tolist() == [3]  # as llama.cpp passes them


def test_a_quote_goes_on_in_its_own_passage_and_a_lone_word_continues_nothing():
    # "The Penobscot River is a" -> 8; "River is a" also occurs in the other passage, followed by 9
    penobscot, other = [1, 2, 3, 4, 5, 8], [7, 3, 4, 5, 9]
    index = CopyIndex([penobscot, other], range(20))  # two words at least, the default
    assert index.match([1, 2, 3, 4, 5])[0] == 5 and index.continuations([1, 2, 3, 4, 5]).tolist() == [8]
    assert index.continuations([6, 3, 4, 5]).tolist() == [8, 9]  # "River is a" after another word: both rivers tie
    assert index.continuations([6, 5]).tolist() == []  # only "a" matches: too little to continue a quote
    with pytest.raises(ValueError, match="at least 1 word"):
        CopyIndex([[1, 2]], range(3), min_words=0)


def test_words_not_tokens_are_counted_so_a_space_before_a_number_does_not_make_a_second_word():
    # " about", " " and the digits "9", "5", as the default model's tokenizer splits "about 95"
    about, space, nine, five, has = 1, 2, 3, 4, 5
    index = CopyIndex([[has, about, space, nine, five]], word_starts={about, has})
    assert index.match([about, space])[0] == 1
    assert index.continuations([6, about, space]).tolist() == []  # "about " alone: the number is the model's
    assert index.continuations([has, about, space]).tolist() == [nine]  # "has about " in the passage: go on
    assert [starts_word(p) for p in (" about", " ", "igrams", " 9", "Green", "  ")] == [True, False, False, True, False, False]


def test_the_copy_bonus_turns_a_near_tie_to_the_passage_and_leaves_a_clear_choice_alone():
    passage = ["Tea", " has", " caffeine", "."]
    steering = _steering(copy_bias=2.0, copy_from=("Tea has caffeine.",))
    steering.copy = CopyIndex([[ID[p] for p in passage]], set(ID.values()))  # the toy encoder knows words, not sentences
    prompt = [ID["I"]] * 3
    near = np.zeros(len(VOCAB), dtype=np.float32)
    near[ID[" know"]], near[ID[" caffeine"]] = 1.0, 0.5  # the model slightly prefers its own word
    assert VOCAB[int(np.argmax(steering(np.array(prompt), np.zeros(len(VOCAB), dtype=np.float32))))] == "<end>"  # first step: nothing to continue
    assert VOCAB[int(np.argmax(steering(np.array(prompt + [ID["Tea"], ID[" has"]]), near.copy())))] == " caffeine"
    clear = near.copy()
    clear[ID[" know"]] = 5.0
    assert VOCAB[int(np.argmax(steering(np.array(prompt + [ID["Tea"], ID[" has"], ID[" caffeine"]]), clear)))] == " know"
    report = steering.report()
    assert report == {"copy_steps": 2, "copy_followed": 1}  # the step after " has" followed the passage


def test_the_real_model_cites_every_sentence_and_reports_its_doubt(local_llm):
    from convrag.generate.answer import DECLINE, cited_messages
    from convrag.history import Budget

    block = ("[1] (notes; Tea) Green tea is made from leaves that are not oxidised. It has about 30 mg of caffeine a cup.\n"
             "[2] (notes; Coffee) A cup of coffee has about 95 mg of caffeine.")
    params = GenerationParams(max_tokens=120, cite_sentences=True, first_choice=DECLINE)
    asked = cited_messages("How much caffeine do green tea and coffee have?", [], block, Budget(tokens=100), local_llm.count_tokens)
    answer = local_llm.complete(asked, params)
    sentences = [s for s in answer.text.split(". ") if len(s.split()) >= 3]
    assert sentences and all("[" in s for s in sentences), answer.text
    assert answer.steering["first_choice_p"] < 0.5 and answer.steering["first_choice_forced"] is False
    off_topic = cited_messages("Who was the first king of Norway?", [], block, Budget(tokens=100), local_llm.count_tokens)
    doubt = local_llm.complete(off_topic, params).steering["first_choice_p"]
    forced = local_llm.complete(off_topic, GenerationParams(max_tokens=40, first_choice=DECLINE, first_choice_at=0.0))
    assert doubt > answer.steering["first_choice_p"] and forced.text.startswith("I ")



def test_the_real_model_follows_the_passage_where_the_copy_bonus_outweighs_its_choice(local_llm):
    """The steer wired to the real tokenizer: at an overwhelming bonus the model, which stops after
    what was asked, must go on quoting the passage from the first two words it shares with it."""
    from convrag.generate.answer import DECLINE, cited_messages
    from convrag.history import Budget

    museum = ("The museum opens at nine in the morning on weekdays, and its garden cafe, which the purple walrus "
              "of Leeds designed, serves lunch until three.")
    tickets = "Tickets cost twelve pounds for adults."
    asked = cited_messages("When does the museum open?", [], f"[1] (notes; Museum) {museum}\n[2] (notes; Tickets) {tickets}",
                           Budget(tokens=100), local_llm.count_tokens)
    params = GenerationParams(max_tokens=120, cite_sentences=True, first_choice=DECLINE)
    free = local_llm.complete(asked, params)
    steered = local_llm.complete(asked, replace(params, copy_bias=50.0, copy_from=(museum, tickets)))
    assert "copy_steps" not in free.steering and "walrus" not in free.text, free.text
    assert "purple walrus of Leeds designed, serves lunch until three [1]" in steered.text, steered.text
    assert 0 < steered.steering["copy_followed"] <= steered.steering["copy_steps"]


def test_a_steer_that_fails_is_reported_and_leaves_the_model_to_write_on(caplog):
    def broken(ids):  # type: ignore[no-untyped-def]
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    steering = Steering(GenerationParams(cite_sentences=True), broken, lambda text: [ID[text]] if text in ID else [0],
                        {ID["<end>"]})
    prompt = [ID["Tea"]] * 3
    steering(np.array(prompt), _logits("Tea"))
    logits = _logits(".")
    out = steering(np.array(prompt + [ID["Tea"], ID[" has"], ID[" caffeine"]]), logits.copy())  # decoding needed: it fails
    assert VOCAB[int(np.argmax(out))] == "." and np.array_equal(out, logits)  # the model's own choice stands
    assert "UnicodeDecodeError" in steering.report()["error"] and "steering failed" in caplog.text
    again = steering(np.array(prompt + [ID["Tea"], ID[" has"], ID[" caffeine"]]), logits.copy())
    assert np.array_equal(again, logits)  # off for the rest of the answer
