"""Collection routing: a turn searches only the collections it is about."""

import numpy as np

from convrag.index.collection import Collection
from convrag.pipeline import PipelineSpec, build_pipeline
from convrag.retrieve.routing import RoutingSettings, evidence, route
from convrag.types import Message, Passage
from tests.helpers import ScriptedLLM


def test_the_best_collection_and_those_within_the_margin_are_kept() -> None:
    routing = route({"cloud": 0.62, "fiqa": 0.60, "govt": 0.41}, settings=RoutingSettings(margin=0.05))
    assert routing.kept == ("cloud", "fiqa") and routing.to_dict()["dropped"] == ["govt"]


def test_earlier_questions_tip_a_close_call() -> None:
    current = {"cloud": 0.50, "fiqa": 0.52}
    earlier = [{"cloud": 0.70, "fiqa": 0.30}, {"cloud": 0.65, "fiqa": 0.35}]
    assert route(current, settings=RoutingSettings(margin=0.0)).kept == ("fiqa",)
    assert route(current, earlier, RoutingSettings(margin=0.0)).kept == ("cloud",)


def test_evidence_is_the_mean_of_the_best_cosines() -> None:
    assert evidence(np.array([0.1, 0.9, 0.5, 0.7]), 2) == 0.8
    assert evidence(np.array([]), 3) == 0.0


def test_a_pipeline_over_two_collections_searches_the_one_the_turn_is_about(tmp_path, embedder, tiny_collection) -> None:
    cooking = Collection.build(tmp_path / "cooking", [
        Passage("c1", "Knead the dough for ten minutes, then let it rise for an hour.", "Bread"),
        Passage("c2", "Simmer the tomato sauce with garlic and basil.", "Sauce"),
    ], embedder=embedder)
    pipeline = build_pipeline(PipelineSpec(("tiny", "cooking"), strategy="last_turn"), llm=ScriptedLLM(answer=["It costs 130 dollars [1].", "Ten minutes [1]."]),
                              opened={"tiny": tiny_collection, "cooking": cooking}, embedder=embedder)
    result = pipeline.answer([Message("user", "How much does passport renewal cost by mail?")])
    routing = result.trace.to_dict()["routing"]
    assert routing["kept"] == ["tiny"] and routing["dropped"] == ["cooking"] and list(result.retrieved) == ["tiny"]
    assert result.citations[0].passage_id == "p2"
    # the earlier questions keep a vague follow-up in the conversation's collection
    history = [Message("user", "How long should bread dough rise?"), Message("agent", "About an hour.")]
    follow_up = pipeline.answer([*history, Message("user", "And how long do I knead it?")])
    assert follow_up.trace.routing is not None and follow_up.trace.routing.kept == ("cooking",)
    hits, _ = pipeline.search("tomato sauce with basil", 2)
    assert hits[0].collection == "cooking"
