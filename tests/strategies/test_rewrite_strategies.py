"""full_rewrite, targeted, mmr_cluster, summary and last_turn with a scripted LLM."""

import pytest

from convrag.errors import ConfigError
from convrag.history import Budget
from convrag.strategies import STRATEGIES, make_strategy
from convrag.strategies.full_rewrite import FullRewrite
from convrag.strategies.mmr_cluster import MMRCluster, cluster_count, extract_sentences
from convrag.strategies.prompts import summary_messages
from convrag.strategies.registry import BUILT_IN
from convrag.strategies.summary import Summary, parse_summary
from convrag.strategies.targeted import Targeted, select_turns
from convrag.types import Message, Task
from tests.helpers import CARDINALS, ScriptedLLM, make_task

GOOD = "Do the Arizona Cardinals play outside the US?"


def test_registry_has_the_six_strategies():
    assert BUILT_IN == ("last_turn", "full_rewrite", "targeted", "mmr_cluster", "summary", "progressive")
    assert set(BUILT_IN) <= set(STRATEGIES)  # and any of one's own registered by an earlier test
    with pytest.raises(ConfigError):
        make_strategy("nope")
    with pytest.raises(ConfigError):
        make_strategy("progressive")  # needs an LLM


def test_last_turn_returns_the_question():
    result = make_strategy("last_turn").rewrite(make_task("Do they play?", CARDINALS))
    assert result.query == "Do they play?" and result.trace.calls == []


def test_full_rewrite_sends_the_whole_history_and_trims_a_long_one():
    llm = ScriptedLLM(rewrite=[GOOD, GOOD])
    rewritten = FullRewrite(llm).rewrite(make_task("Do they play outside the US?", CARDINALS))
    assert rewritten.query == rewritten.trace.standalone == GOOD
    assert "passport" in llm.last_user_prompt("rewrite") and "Tell me about" in llm.last_user_prompt("rewrite")
    long_history = CARDINALS * 30
    result = FullRewrite(llm, Budget(tokens=200)).rewrite(make_task("Do they play outside the US?", long_history))
    assert result.trace.trimmed_turns > 80 and llm.count_tokens(llm.last_user_prompt("rewrite")) < 260


def test_full_rewrite_falls_back_on_garbage():
    result = FullRewrite(ScriptedLLM(rewrite=["%%%% ### !!"])).rewrite(make_task("Do they play outside the US?", CARDINALS))
    assert result.query == "Do they play outside the US?" and result.trace.stage == "fallback_original"
    assert result.trace.standalone == ""  # nothing the model wrote is asked in the question's place
    assert result.trace.fallbacks[0].reason in {"not_a_question", "lost_content"}


def test_history_with_no_user_turn_still_works():
    task = Task("t<::>1", "t", 1, "cloud", "How much does the Lite plan cost?", (Message("agent", "Welcome to IBM Cloud support."),))
    llm = ScriptedLLM(rewrite=["How much does the IBM Cloud Lite plan cost?"])
    assert FullRewrite(llm).rewrite(task).query == "How much does the IBM Cloud Lite plan cost?"


def test_select_turns_rules():
    import numpy as np

    sims = np.array([0.45, 0.52, 0.18])
    assert select_turns(sims) == [0, 1, 2]  # 2 is the last turn: always kept
    assert select_turns(np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1]), max_turns=3) == [0, 1, 6]
    assert select_turns(np.array([0.1, 0.1]), include_last=False) == []


def test_targeted_keeps_related_turns_only(embedder):
    llm = ScriptedLLM(rewrite=["Which Arizona Cardinals stadium has a retractable roof?"])
    result = Targeted(llm, embedder).rewrite(make_task("Which stadium has a retractable roof?", CARDINALS))
    turns = [c["turn"] for c in result.trace.context]
    assert 2 in turns and 3 in turns  # the related turn, and the last turn (recency)
    assert set(result.trace.details["similarities"]) == {1, 2, 3}


def test_mmr_cluster_trace_has_the_seed_fields(embedder):
    exchanges = CARDINALS * 3
    llm = ScriptedLLM(rewrite=["do the arizona cardinals play outside the US"])
    result = MMRCluster(llm, embedder).rewrite(make_task("Do they play outside the US?", exchanges))
    d = result.trace.details
    assert result.query == "Do the arizona cardinals play outside the US?"  # tidied
    for key in ("original_query", "rewritten_query", "num_extracted_sentences", "extracted_sentences", "num_clusters",
                "cluster_sizes", "representative_sentences", "selected_sentences"):
        assert key in d
    assert 2 <= d["num_clusters"] <= 7 and sum(d["cluster_sizes"]) == d["num_extracted_sentences"]
    assert len(d["selected_sentences"]) == 5
    assert {"sentence", "speaker", "turn", "cluster_id"} <= set(d["selected_sentences"][0])


def test_sentence_extraction_drops_filler_and_fragments():
    task = make_task("q?", [("Hi there", "Thank you for asking. The Cardinals play in Glendale, Arizona. Sure! Okay.")])
    assert [(s.speaker, s.text) for s in extract_sentences(task)] == [
        ("user", "Hi there"), ("agent", "The Cardinals play in Glendale, Arizona.")
    ]
    assert [cluster_count(n) for n in (1, 4, 9, 30, 100)] == [2, 2, 3, 5, 7]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Summary: A talk about the Cardinals.\nQuestion: Do the Cardinals travel?", ("A talk about the Cardinals.", "Do the Cardinals travel?")),
        ("**Summary:** A talk. **Question:** Do they?", ("A talk.", "Do they?")),
        ("Summary: A talk.\n\n\nquestion: Do they?", ("A talk.", "Do they?")),
        ("Summary: only a summary", ("only a summary", "")),
        # the order the prompt asks for: the question first
        ("Question: Do the Cardinals travel?\nSummary: A talk about the Cardinals.", ("A talk about the Cardinals.", "Do the Cardinals travel?")),
        ("Question: Do they? Summary: A talk.", ("A talk.", "Do they?")),
        ("Question: Do they?\nSummary: A talk. Question: Anything else?", ("A talk.", "Do they?")),  # the first question counts
        ("nothing labelled", ("", "")),
    ],
)
def test_parse_summary(text, expected):
    assert tuple(parse_summary(text)) == expected


def test_the_summary_prompt_shows_the_question_before_the_summary():
    """A small model copies the examples' layout; asked for the summary first, it often never wrote the question."""
    replies = [m["content"] for m in summary_messages("User: Hi\nAssistant: Hello", "Why?") if m["role"] == "assistant"]
    assert replies and all(r.startswith("Question: ") and "\nSummary: " in r for r in replies)


def test_summary_query_forms_and_fallbacks():
    summary = "The user asks about the Arizona Cardinals, an NFL team from Glendale founded in Chicago in 1898, and their stadium."
    answer = f"Question: {GOOD}\nSummary: {summary}"
    task = make_task("Do they play outside the US?", CARDINALS)
    result = Summary(ScriptedLLM(summary=[answer])).rewrite(task)
    assert result.query == f"Summary: {summary} Question: {GOOD}" and result.trace.standalone == GOOD
    assert Summary(ScriptedLLM(summary=[answer]), query_form="question").rewrite(task).query == GOOD
    missing = Summary(ScriptedLLM(summary=[f"Summary: {summary}"])).rewrite(task)
    assert missing.query.endswith("Question: Do they play outside the US?")
    assert missing.trace.fallbacks[0].reason == "question_empty" and missing.trace.standalone == ""
    essay = Summary(ScriptedLLM(summary=[f"Summary: {'long ' * 100}\nQuestion: {GOOD}"])).rewrite(task)
    assert essay.trace.fallbacks[0].reason == "summary_overlong_clipped" and len(essay.query.split()) < 70
