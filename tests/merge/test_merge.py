"""Merging many collections: fusion, attribution, duplicates, diversity, budget, order, presets, conflicts."""

import datetime as dt
import random

import pytest
from ranx import Run
from ranx import fuse as ranx_fuse

from convrag.fusion.rrf import reciprocal_rank_fusion
from convrag.merge import MERGERS, MergeSettings, SourcedHit, enhanced_merge, make_merger
from convrag.merge.conflicts import find_conflicts
from convrag.merge.fuse import fuse
from convrag.merge.ordering import edges_first
from convrag.merge.presets import classify_query
from convrag.merge.signals import QualitySignals, quality_multiplier
from convrag.types import document_of


def words(text: str) -> int:
    return len(text.split())


def hits(collection: str, ids: list[str], texts: dict[str, str] | None = None) -> list[SourcedHit]:
    texts = texts or {}
    return [
        SourcedHit(collection, pid, document_of(pid), texts.get(pid, f"passage {pid} about topic {pid} " * 10), f"Title {pid}",
                   f"https://example.org/{pid}", 1.0 / rank, rank)
        for rank, pid in enumerate(ids, start=1)
    ]


def test_rrf_on_a_hand_made_example():
    results = {"a": hits("a", ["x", "y"]), "b": hits("b", ["y", "z"])}
    ordered, fused = fuse(results, "rrf", rrf_k=60)
    assert fused == pytest.approx({"x": 1 / 61, "y": 1 / 62 + 1 / 61, "z": 1 / 62})
    assert [h.passage_id for h in ordered] == ["y", "y", "x", "z"]
    _, weighted = fuse(results, "rrf", weights={"a": 2.0}, rrf_k=60)
    assert weighted["x"] == pytest.approx(2 / 61)


def test_rrf_parity_with_the_fusion_module_and_ranx():
    rng = random.Random(1)
    lists = [[f"d{i}" for i in rng.sample(range(40), 15)] for _ in range(5)]
    results = {f"c{n}": hits(f"c{n}", ids) for n, ids in enumerate(lists)}
    _, ours = fuse(results, "rrf", rrf_k=60)
    runs = [{pid: float(100 - r) for r, pid in enumerate(ids)} for ids in lists]
    assert ours == pytest.approx(reciprocal_rank_fusion(runs, rrf_k=60))
    theirs = ranx_fuse([Run({"q": r}, name=f"r{i}") for i, r in enumerate(runs)], method="rrf", params={"k": 60}).to_dict()["q"]
    assert ours == pytest.approx(theirs)


@pytest.mark.parametrize("method,ranx_method", [("combsum", "sum"), ("combmnz", "mnz")])
def test_score_fusion_parity_with_ranx(method, ranx_method):
    rng = random.Random(2)
    results = {}
    for n in range(3):
        ids = rng.sample(range(30), 10)
        results[f"c{n}"] = [SourcedHit(f"c{n}", f"d{i}", f"d{i}", "t", score=rng.uniform(0, 20), rank=r + 1) for r, i in enumerate(ids)]
    _, ours = fuse(results, method, norm="minmax")
    runs = [Run({"q": {h.passage_id: h.score for h in hs}}, name=n) for n, hs in results.items()]
    theirs = ranx_fuse(runs, norm="min-max", method=ranx_method).to_dict()["q"]
    assert ours == pytest.approx(theirs)


def test_attribution_survives_every_step():
    results = {"manuals": hits("manuals", ["m1-0-10", "m2-0-10"]), "faq": hits("faq", ["f1", "f2"])}
    outcome = enhanced_merge(results, "what is it", MergeSettings(order="score"), count_tokens=words)
    for r in outcome.results:
        original = next(h for h in results[r.hit.collection] if h.passage_id == r.hit.passage_id)
        assert r.hit == original  # collection, passage id, document id, title, url, original score and rank
        assert r.fused_score > 0 and r.final_score > 0 and r.selection_reason.startswith(f"#{original.rank} in {r.hit.collection}")
    assert {r.hit.document_id for r in outcome.results} >= {"m1", "m2"}


def test_duplicates_across_collections_are_merged_and_recorded():
    shared = "The Lite plan is free and includes 1 GB of storage."
    results = {
        "a": hits("a", ["p1", "p2"], {"p1": shared}),
        "b": hits("b", ["p1", "q9"]),
        "c": hits("c", ["other"], {"other": "  the lite plan is FREE and includes 1 GB of storage. "}),
    }
    outcome = make_merger("rrf")(results, "", count_tokens=words)
    ids = [r.hit.passage_id for r in outcome.results]
    assert ids.count("p1") == 1 and "other" not in ids
    top = outcome.results[0]
    assert top.hit.passage_id == "p1" and set(top.also_in) == {"b", "c"}
    assert sorted(d.reason for d in outcome.dropped) == ["duplicate", "duplicate"]


def test_token_budget_is_exceeded_only_by_the_best_passage_alone():
    rng = random.Random(3)
    texts = {f"p{i}": "word " * rng.randint(20, 400) for i in range(60)}
    results = {f"c{n}": hits(f"c{n}", rng.sample(list(texts), 20), texts) for n in range(4)}
    for budget in (50, 300, 1000, 5000):
        outcome = enhanced_merge(results, "q", MergeSettings(max_tokens=budget, max_passages=30, diversity=0.0, drop_at=1.01), count_tokens=words)
        assert sum(r.tokens for r in outcome.results) <= budget or len(outcome.results) == 1
        assert all(r.tokens == words(r.hit.text) for r in outcome.results)
        if budget < 5000:
            assert any(d.reason == "budget" and "do not fit" in d.detail for d in outcome.dropped)
    unlimited = enhanced_merge(results, "q", MergeSettings(max_tokens=None, max_passages=30, diversity=0.0, drop_at=1.01), count_tokens=words)
    assert len(unlimited.results) == 30 and not any("do not fit" in d.detail for d in unlimited.dropped)


def test_the_best_passage_is_taken_even_over_the_budget_alone():
    """Every passage of a collection chunked longer than the budget (`index --max-tokens 1500`) was
    dropped, and every question declined with "no passages retrieved"; the answer shows only the
    best sentences of a passage, so the best one is taken, and the next ones only where they fit."""
    texts = {"long": "harbour fee " * 600, "longer": "harbour " * 1500, "short": "fee " * 40}
    results = {"docs": hits("docs", ["long", "longer", "short"], texts)}
    outcome = make_merger("rrf")(results, "q", MergeSettings(max_tokens=1000, max_passages=5), count_tokens=words)
    assert [r.hit.passage_id for r in outcome.results] == ["long"]
    assert "over the budget of 1000 alone: taken as the best passage" in outcome.results[0].selection_reason
    assert [(d.hit.passage_id, d.reason) for d in outcome.dropped] == [("longer", "budget"), ("short", "budget")]


def test_precomputed_token_counts_are_used():
    h = SourcedHit("c", "p", "p", "word " * 50, metadata={"tokens": 7})
    outcome = enhanced_merge({"c": [h]}, "q", count_tokens=words)
    assert outcome.results[0].tokens == 7


def test_diversity_penalizes_and_drops_near_duplicates():
    near = "the arizona cardinals play in glendale arizona at state farm stadium"
    texts = {"a": near, "b": near + " today", "c": "passport renewal costs 130 dollars by mail for adults"}
    results = {"x": hits("x", ["a", "b", "c"], texts)}
    outcome = enhanced_merge(results, "q", MergeSettings(diversity=0.5, drop_at=0.9, order="score", signals=None), count_tokens=words)
    assert [r.hit.passage_id for r in outcome.results] == ["a", "c"]
    assert [(d.hit.passage_id, d.reason) for d in outcome.dropped] == [("b", "diversity")]
    kept = enhanced_merge(results, "q", MergeSettings(diversity=0.5, drop_at=1.01, order="score", signals=None), count_tokens=words)
    assert [r.hit.passage_id for r in kept.results] == ["a", "c", "b"]  # b penalized below c
    assert "diversity penalty" in kept.results[2].selection_reason


def test_quality_signals():
    now = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    good = SourcedHit("c", "p", "p", "x" * 500, "Title", metadata={"file_type": "PDF", "created_at": "2026-11-10"})
    factor, reasons = quality_multiplier(good, QualitySignals(), now)
    assert factor == pytest.approx(1.1 * 1.05 * 1.02 * 1.03) and reasons == ["good length", "titled", "pdf document", "recent"]
    assert quality_multiplier(SourcedHit("c", "p", "p", "short"), QualitySignals(), now)[0] == pytest.approx(0.8)
    assert quality_multiplier(SourcedHit("c", "p", "p", "x" * 3000), QualitySignals(), now)[0] == pytest.approx(0.9)


def test_edges_ordering():
    assert edges_first([1, 2, 3, 4, 5]) == [1, 3, 4, 5, 2]
    assert edges_first([1, 2]) == [1, 2]
    outcome = enhanced_merge({"c": hits("c", ["a", "b", "c", "d"])}, "q", MergeSettings(signals=None, diversity=0.0), count_tokens=words)
    assert [r.hit.passage_id for r in outcome.results] == ["a", "c", "d", "b"]


def test_presets_follow_the_query_type():
    assert classify_query("How do I create a bucket?") == "procedural"
    assert classify_query("Why do municipalities issue bonds?") == "analytical"
    assert classify_query("Who founded the Cardinals?") == "factual"
    assert classify_query("bonds") == "general"
    results = {"official-docs": hits("official-docs", ["o1"]), "forum": hits("forum", ["f1"])}
    factual = enhanced_merge(results, "What is the Lite plan?", count_tokens=words)
    assert factual.settings["query_type"] == "factual" and factual.settings["weights"]["official-docs"] == 1.3
    assert "collection weight 1.3" in factual.results[0].selection_reason
    analytical = enhanced_merge(results, "Why is the Lite plan free?", count_tokens=words)
    assert analytical.settings["diversity"] == 0.2 and analytical.settings["weights"]["official-docs"] == 1.0


def test_conflicting_sources_are_both_kept_and_marked():
    a = SourcedHit("pricing", "p1", "p1", "The Lite plan of IBM Cloud Object Storage includes 25 GB of storage per month.", rank=1)
    b = SourcedHit("forum", "f1", "f1", "The Lite plan of IBM Cloud Object Storage includes 5 GB of storage per month.", rank=1)
    c = SourcedHit("forum", "f2", "f2", "Passports cost 130 dollars.", rank=2)
    assert find_conflicts([a, b, c]) == [(0, 1)]
    outcome = enhanced_merge({"pricing": [a], "forum": [b, c]}, "How much storage?", MergeSettings(order="score"), count_tokens=words)
    marked = {r.hit.passage_id: r.conflicts_with for r in outcome.results}
    assert marked["p1"] and marked["f1"] and not marked["f2"]
    assert outcome.results[marked["p1"][0]].hit.passage_id == "f1"


def test_empty_results_everywhere():
    outcome = enhanced_merge({"a": [], "b": []}, "q", count_tokens=words)
    assert outcome.results == [] and outcome.dropped == []
    assert set(MERGERS) == {"rrf", "combsum", "combmnz", "enhanced"}


def test_the_default_merge_keeps_the_first_passage_whatever_its_length():
    """The design note's length band (1.1 for 200-1000 characters, 0.9 above 2000) outweighed the RRF
    gap between ranks (under 2 % between neighbours): a short tenth passage went before a long first
    one, and the budget then left the first out (on MT-RAG's dev half, on 27 % of turns). The default
    leaves the band out; the design note's values still apply where asked for."""
    ids = [f"p{i}" for i in range(1, 11)]
    texts = {"p1": "The mooring fee is 40 dollars a night for boats under 12 metres. " * 40}  # 2,640 characters
    texts |= {pid: f"Short note {pid} about something else entirely, " * 6 for pid in ids[1:]}  # about 300
    results = {"harbour": hits("harbour", ids, texts)}
    count = words
    default = enhanced_merge(results, "mooring fee", MergeSettings(max_tokens=600, max_passages=5), count_tokens=count)
    assert default.results[0].hit.passage_id == "p1"
    seed = enhanced_merge(results, "mooring fee", MergeSettings(max_tokens=600, max_passages=5, signals=QualitySignals()), count_tokens=count)
    assert "p1" not in [r.hit.passage_id for r in seed.results]  # what the band did


def test_a_signal_switched_off_names_no_reason():
    """With the length band off (the default), a passage of a good length is not said to be raised for it."""
    hit = SourcedHit("c", "p", "p", "x" * 500, "A title")
    assert quality_multiplier(hit, QualitySignals(in_band=1.0)) == (pytest.approx(1.05), ["titled"])
    assert quality_multiplier(hit, QualitySignals(in_band=1.0, has_title=1.0)) == (1.0, [])
