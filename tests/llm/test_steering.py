"""The decoding steers: the pure sentence rule, the processor on a toy vocabulary, and the real model."""

import numpy as np
import pytest

from convrag.llm.base import GenerationParams
from convrag.llm.steering import Steering, current_sentence, ends_uncited_sentence


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
        ("Green tea has about 30 mg", "", True, True),  # the answer ends mid-sentence, uncited
        ("Green tea has about 30 mg [1].", "", True, False),  # the answer ends after a cited sentence
        ("First one here [1]. Then a second one", ".", False, True),  # only the current sentence counts
    ],
)
def test_when_a_sentence_needs_a_citation(generated, piece, is_end, expected):
    assert ends_uncited_sentence(generated, piece, is_end) is expected


def test_current_sentence_starts_after_the_last_end():
    assert current_sentence("One [1]. Two more") == "Two more"
    assert current_sentence("One [1]. ") == ""


# a toy vocabulary: one token per piece of text
VOCAB = ["<end>", " [", "I", "Tea", " has", " caffeine", ".", "1", "]", " do", " not", " know"]
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


def test_the_first_choice_is_reported_and_forced_only_at_its_threshold():
    logits = np.zeros(len(VOCAB), dtype=np.float32)
    logits[ID["Tea"]] = 2.0  # "Tea" is the greedy choice; "I" has about 5 % of the mass
    for at, forced in ((None, False), (0.5, False), (0.05, True)):
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
