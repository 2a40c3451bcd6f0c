"""The comparisons that chose convrag's defaults, recomputed on the dev half of MT-RAG.

Every default that a benchmark in docs/benchmarks.md reports on the test half was chosen here,
on the dev half (split by conversation, `convrag.data.splits`). Two modes, `bm25-before-after`
and `fusion-depth`, also run on the test half, only to report a choice already made (`--split test`). Usage (after `make install`; the
model calls of `progressive` come from the completion cache when it is warm):

    .venv/bin/python tools/tune_on_dev.py retrieval     # window scoring, hybrid fusion, PRF, memory
    .venv/bin/python tools/tune_on_dev.py retrieval --embedding-model all-mpnet-base-v2 --domains clapnq,cloud,fiqa
    .venv/bin/python tools/tune_on_dev.py routing       # four domains as four collections
    .venv/bin/python tools/tune_on_dev.py progressive   # the stage designs, against full_rewrite
    .venv/bin/python tools/tune_on_dev.py renderings --domains clapnq,cloud,fiqa   # zero-call context renderings fused with progressive
    .venv/bin/python tools/tune_on_dev.py escalation --domains clapnq,cloud,fiqa   # what progressive's one call asks for
    .venv/bin/python tools/tune_on_dev.py stage-one --domains clapnq,cloud,fiqa    # a call on the follow-ups stage 1 takes as asked
    .venv/bin/python tools/tune_on_dev.py stage-two-history --domains clapnq,cloud,fiqa   # full_rewrite's whole history for stage 2
    .venv/bin/python tools/tune_on_dev.py query-vector --domains clapnq,cloud,fiqa # the dense query moved toward the conversation
    .venv/bin/python tools/tune_on_dev.py hybrid-sides --domains clapnq,cloud,fiqa   # a rendering for one side of the hybrid, or its own dense weight
    .venv/bin/python tools/tune_on_dev.py fusion-depth --domains clapnq,cloud,fiqa   # how deep each rendering is searched before fusing
    .venv/bin/python tools/tune_on_dev.py pipeline-parity --domains clapnq,cloud,fiqa   # a chat turn retrieves what eval scores
    .venv/bin/python tools/tune_on_dev.py grounded-memory --domains clapnq,cloud,fiqa   # the last answer's passages as a prior
    .venv/bin/python tools/tune_on_dev.py bm25-params --domains clapnq,cloud,fiqa   # BM25's k1 and b
    .venv/bin/python tools/tune_on_dev.py bm25-before-after --split test --domains clapnq,cloud,fiqa   # reports that choice on test, once
    .venv/bin/python tools/tune_on_dev.py fusion-depth --split test --domains clapnq,cloud,fiqa   # what chats retrieved before the depth was eval's
    .venv/bin/python tools/tune_on_dev.py invented-terms --domains clapnq,cloud,fiqa   # topics a rewrite brings in
    .venv/bin/python tools/tune_on_dev.py answers runs/answers-dev/answers-ungated.jsonl   # decline thresholds

Each prints a Markdown table of ALL-3 nDCG@10 (and what else decides the choice).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from convrag.data.domains import parse_domains
from convrag.data.layout import MTRAGData
from convrag.embeddings import DEFAULT_EMBEDDING_MODEL
from convrag.eval.report import markdown_table
from convrag.eval.runner import BenchmarkIndexes, RunResult, run_retrieval, score_run
from convrag.eval.significance import paired_test
from convrag.fusion import fuse_lists
from convrag.generate.decline import restates_question
from convrag.index.bm25 import BM25Params
from convrag.queries.sources import make_query_source
from convrag.queries.strategy import StrategySource
from convrag.retrieve.memory import boost_with_memory
from convrag.types import Hit


def _scored(indexes: BenchmarkIndexes, data: MTRAGData, retriever: str, source: Any, options: Mapping[str, Any] | None = None,
            k: int = 10) -> RunResult:
    return score_run(run_retrieval(indexes, data.domains, retriever, source, k, options), {d: data.qrels(d) for d in data.domains})


def _against(base: RunResult, result: RunResult) -> list[Any]:
    """A run's ALL-3 nDCG@10, and its delta and randomization p against ``base``, paired task by task."""
    t = paired_test(base.per_query, result.per_query)
    return [result.all3.means["nDCG@10"], f"{t.delta:+.4f}", f"{t.p_randomization:.3f}"]


def _follow_up_calls(source: StrategySource, result: RunResult) -> tuple[float, int]:
    """Model calls per follow-up turn of a scored strategy run, and how many were made live (not
    answered by the completion cache)."""
    follow = [t for t in source.traces.values() if t.task_id in result.tasks and result.tasks[t.task_id].turn > 1]
    calls = [c for t in follow for c in t.calls]
    return len(calls) / max(1, len(follow)), sum(not c.cached for c in calls)


def retrieval(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    rewrites = make_query_source("rewrite", data)
    variants = [("dense", {"windows": w}) for w in ("first", "max", "mix")]
    variants += [("hybrid", {"fusion": "rrf", "alpha": a, "rrf_k": k, "windows": w})
                 for w in ("first", "mix") for a in (None, 0.6, 0.7, 0.8) for k in (60, 20)]
    variants += [("hybrid", {"fusion": "combsum", "alpha": a, "windows": w}) for w in ("first", "mix") for a in (0.5, 0.6, 0.7, 0.8)]
    variants += [("hybrid", {"prf": p}) for p in ("rm3", "rocchio", "both")]
    rows = []
    for retriever, options in variants:
        result = _scored(indexes, data, retriever, rewrites, options)
        rows.append([retriever, json.dumps(options), result.all3.means["nDCG@10"], result.all.means["nDCG@10"]])
    default = _scored(indexes, data, "hybrid", rewrites, k=30)
    for weight in (0.05, 0.1, 0.2):
        boosted = {t: boost_with_memory(h, [default.hits.get(f"{default.tasks[t].conversation_id}<::>{default.tasks[t].turn - j}", [])
                                             for j in (1, 2)], weight, k=10) for t, h in default.hits.items()}
        memory = score_run(RunResult("memory", "hybrid", "rewrite", default.tasks, default.queries, boosted),
                           {d: data.qrels(d) for d in data.domains})
        rows.append(["hybrid", f"conversation memory, boost {weight}", memory.all3.means["nDCG@10"], memory.all.means["nDCG@10"]])
    return markdown_table(["retriever", "options (rewrite queries)", "ALL-3 nDCG@10", "ALL nDCG@10"], rows)


def routing(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    from convrag.pipeline import PipelineSpec, build_pipeline
    from convrag.retrieve.routing import RoutingSettings

    rewrites = make_query_source("rewrite", data)
    tasks = {t.task_id: t for d in data.domains for t in data.tasks(d)}
    queries = {}
    for d in data.domains:
        queries.update(rewrites.queries(data.tasks(d)))
    ids = list(tasks)
    found = {d: dict(zip(ids, indexes.retriever(d, "hybrid").search([queries[i] for i in ids], 10))) for d in data.domains}
    pipeline = build_pipeline(PipelineSpec(tuple(data.domains), strategy="last_turn"), opened={d: indexes.collection(d) for d in data.domains},
                              embedder=indexes.embedder, generate=False)
    qrels = {d: data.qrels(d) for d in data.domains}

    def score(name: str, hits: Mapping[str, list[Hit]]) -> list[object]:
        result = score_run(RunResult(name, "hybrid", "rewrite", tasks, queries, dict(hits)), qrels)
        return [name, result.all3.means["nDCG@10"], result.all.means["nDCG@10"]]

    rows = [score("each domain searched alone", {i: found[tasks[i].domain][i] for i in ids}),
            score("RRF over the four collections", {i: fuse_lists([found[d][i] for d in data.domains], depth=10) for i in ids})]
    for margin, decay in ((0.0, 0.0), (0.05, 0.0), (0.05, 0.5), (0.05, 0.8), (0.1, 0.8)):
        pipeline.routing = RoutingSettings(margin=margin, decay=decay, earlier=3 if decay else 0)
        hits = {}
        for i in ids:
            earlier = [m.text for m in reversed(tasks[i].history) if m.speaker == "user"]
            kept, _ = pipeline.route_collections(queries[i], earlier)
            hits[i] = fuse_lists([found[c.name][i] for c in kept], depth=10)
        rows.append(score(f"routed: margin {margin}, earlier questions decay {decay}", hits))
    return markdown_table(["policy (hybrid, rewrite queries)", "ALL-3 nDCG@10", "ALL nDCG@10"], rows)


def progressive(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    from convrag.llm import make_llm
    from convrag.strategies import make_strategy
    from convrag.strategies.progressive import Progressive, ProgressiveSettings

    llm = make_llm("local")
    once = dict(fuse_rewrite=True, escalate=False)
    marked = dict(rewrite="markers", expand_short=False, **once)  # every marked or short follow-up, one call at most
    # the settings before today's last two levers, spelled out so that a change of defaults cannot change a row
    earlier = dict(top_k=2, anchored_without_call=False)
    variants = {
        "no model call (pronouns and short turns get the topic terms)": ProgressiveSettings(
            rewrite="never", expand_short=True, fuse_rewrite=False, **earlier),
        "explicit references to the model, stage 3 (the former default)": ProgressiveSettings(
            rewrite="references", expand_short=True, fuse_rewrite=False, escalate=True, **earlier),
        "explicit references to the model, fused with the expansion": ProgressiveSettings(
            rewrite="references", expand_short=True, **once, **earlier),
        "every marker to the model, short turns expanded, fused": ProgressiveSettings(
            rewrite="markers", expand_short=True, **once, **earlier),
        "every marker and short turn to the model, not fused, stage 3": ProgressiveSettings(
            rewrite="markers", expand_short=False, fuse_rewrite=False, escalate=True, **earlier),
        "every marker and short turn to the model, fused, stage 3": ProgressiveSettings(
            rewrite="markers", expand_short=False, fuse_rewrite=True, escalate=True, **earlier),
        "every marker and short turn to the model, fused, one call at most": ProgressiveSettings(**marked, **earlier),
        "the same with the last exchange alone as stage-2 context (top_k 0)": ProgressiveSettings(
            **marked, top_k=0, anchored_without_call=False),
        "the same, and follow-ups that repeat a conversation term without a pronoun searched without a call (the default)": (
            ProgressiveSettings(**marked, top_k=0, anchored_without_call=True)),
    }
    rows = []
    full = StrategySource(make_strategy("full_rewrite", llm, indexes.embedder))
    sources = {label: StrategySource(Progressive(llm, indexes.embedder, settings)) for label, settings in variants.items()}
    for retriever in ("bm25", "hybrid"):  # each source rewrites once; the second retriever reuses its queries
        base = {name: _scored(indexes, data, retriever, make_query_source(name, data)).all3.means["nDCG@10"] for name in ("lastturn", "rewrite")}
        rows.append([retriever, "full_rewrite", _scored(indexes, data, retriever, full).all3.means["nDCG@10"], "1.00"])
        for label, source in sources.items():
            result = _scored(indexes, data, retriever, source)
            calls, _ = _follow_up_calls(source, result)
            rows.append([retriever, f"progressive: {label}", result.all3.means["nDCG@10"], f"{calls:.2f}"])
        rows.append([retriever, "question as asked / human rewrite", f"{base['lastturn']:.4f} / {base['rewrite']:.4f}", "-"])
    return markdown_table(["retriever", "queries", "ALL-3 nDCG@10", "LLM calls per follow-up"], rows)


#: the question-free running summary tried as a rendering (a prototype kept here, not in the package: it lost on dev)
RUNNING_SUMMARY_SYSTEM = (
    "You keep notes on a conversation for a search engine. Summarize the conversation in 30-50 words: the subject the "
    "user is asking about, with the names, products, places and terms it mentions, and what the user wanted to know. "
    "Do not add facts. Reply with the summary only, on one line."
)
RUNNING_SUMMARY_EXAMPLES = (
    ("User: What was the Hanseatic League?\n"
     "Assistant: A medieval alliance of merchant guilds and market towns around the Baltic Sea, led by Lübeck.\n"
     "User: What did they trade?\n"
     "Assistant: Mostly timber, furs, grain, fish and wax from the Baltic, and cloth from Flanders.",
     "The user is learning about the Hanseatic League, a medieval alliance of merchant guilds and market towns around "
     "the Baltic Sea led by Lübeck, and asked what it traded: timber, furs, grain, fish and wax from the Baltic, and "
     "cloth from Flanders."),
    ("User: How do I set up alerting in Grafana?\n"
     "Assistant: Open a dashboard panel, create an alert rule with a query and a condition, and pick a contact point.",
     "The user wants to set up alerting in Grafana: an alert rule is created from a dashboard panel with a query and a "
     "condition, and its notifications go to a contact point."),
)


def running_summary(llm: Any, history: Any) -> str:
    """A 30-50 word summary of the conversation so far, without the question: what a chat could write in the
    background after each answer, so that no summary call waits on the question."""
    from convrag.history import Budget, render_pairs, turn_pairs
    from convrag.llm.base import GenerationParams

    context, _ = render_pairs(turn_pairs(history), llm.count_tokens, Budget(tokens=900, answer_words=80, step=2))
    messages = [{"role": "system", "content": RUNNING_SUMMARY_SYSTEM}]
    for conversation, summary in RUNNING_SUMMARY_EXAMPLES:
        messages += [{"role": "user", "content": f"Conversation:\n{conversation}\n\nSummary:"}, {"role": "assistant", "content": summary}]
    messages.append({"role": "user", "content": f"Conversation:\n{context}\n\nSummary:"})
    return " ".join(llm.complete(messages, GenerationParams(temperature=0.0, max_tokens=100)).text.split())


class Rerouted:
    """Progressive's renderings of each follow-up, rewritten by ``route(task, stage, renderings)`` (first turns
    keep theirs); the renderings of a task are fused (RRF) as the pipeline fuses them."""

    def __init__(self, name: str, progressive: StrategySource, route: Any) -> None:
        self.name, self.progressive, self.route = name, progressive, route

    def queries(self, tasks: Any) -> dict[str, str]:
        return {t: q[0] for t, q in self.query_sets(tasks).items()}

    def query_sets(self, tasks: Any) -> dict[str, tuple[str, ...]]:
        sets = self.progressive.query_sets(tasks)
        stage = {t.task_id: t.stage for t in self.progressive.traces.values()}
        return {t.task_id: self.route(t, stage.get(t.task_id), sets[t.task_id]) if t.history else sets[t.task_id] for t in tasks}


def renderings(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Zero-call renderings of a follow-up that carry more of the conversation than progressive's topic
    expansion (two terms), each fused with progressive's own renderings; and a question-free running summary
    (one call per exchange, off the question's path in a chat)."""
    from convrag.history import clip_words, turn_pairs
    from convrag.llm import make_llm
    from convrag.strategies.base import start_trace
    from convrag.strategies.mmr_cluster import MMRSettings, extract_sentences, select_context
    from convrag.strategies.progressive import Progressive
    from convrag.strategies.topic import TopicSettings, conversation_terms, expand
    from convrag.text import split_sentences

    llm = make_llm("local")
    embedder = indexes.embedder
    progressive = StrategySource(Progressive(llm, embedder))

    def pairs(t: Any) -> Any:
        return turn_pairs(t.history)

    def terms(t: Any, n: int) -> str:
        return expand(t.question, [w for w, _ in conversation_terms(t.history, t.question, TopicSettings(max_zipf=5.2, max_terms=n))])

    def last_answer_lead(t: Any) -> str:
        sentences = split_sentences(pairs(t)[-1].agent) if pairs(t)[-1].agent else []
        return f"{t.question} {sentences[0]}" if sentences else t.question

    def mmr_sentences(t: Any) -> str:
        trace, _ = start_trace(t, "mmr")
        return " ".join([s.text for s in select_context(t, embedder, MMRSettings(), trace)] + [t.question])

    def similar_sentences(t: Any) -> str:
        sentences = extract_sentences(t)
        if not sentences:
            return t.question
        vectors = embedder.encode([t.question] + [s.text for s in sentences])
        top = sorted(range(len(sentences)), key=lambda i: -float(vectors[1 + i] @ vectors[0]))[:2]
        return " ".join([sentences[i].text for i in sorted(top)] + [t.question])

    variants = {
        "+ the previous question": lambda t, q: f"{t.question} {pairs(t)[-1].user}",
        "+ the first question": lambda t, q: f"{t.question} {pairs(t)[0].user}",
        "+ the last answer's first sentence": lambda t, q: last_answer_lead(t),
        "+ the last exchange (answer clipped to 40 words)": lambda t, q: f"{t.question} {pairs(t)[-1].user} {clip_words(pairs(t)[-1].agent, 40)}",
        "+ all questions so far": lambda t, q: " ".join([p.user for p in pairs(t)] + [t.question]),
        "+ five conversation terms": lambda t, q: terms(t, 5),
        "+ two conversation terms, every follow-up": lambda t, q: terms(t, 2),
        "+ five MMR-selected history sentences (the mmr_cluster context)": lambda t, q: mmr_sentences(t),
        "+ the two history sentences most like the question": lambda t, q: similar_sentences(t),
        "+ running summary (one call per exchange), Summary: ... Question: <progressive's query>": (
            lambda t, q: f"Summary: {running_summary(llm, t.history)} Question: {q}"),
    }
    rows = []
    for retriever in ("bm25", "hybrid"):
        rows.append([retriever, "progressive (the default)", _scored(indexes, data, retriever, progressive).all3.means["nDCG@10"]])
        for label, render in variants.items():
            result = _scored(indexes, data, retriever, Rerouted(label, progressive, lambda t, _, q, render=render: (*q, render(t, q[0]))))
            rows.append([retriever, f"progressive {label}", result.all3.means["nDCG@10"]])
    return markdown_table(["retriever", "renderings fused (RRF)", "ALL-3 nDCG@10"], rows)


def grounded_memory(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """The passages the last agent answer drew on as a prior for the next turn (no model call): the
    answer's text searched with the same retriever, its top ``g`` passages added to the turn's
    candidates with ``weight`` on top of their fused score (or the list's lowest, when the turn's own
    search missed them). A sharper memory than the earlier turns' whole top ten (``retrieval``'s rows),
    which is what a chat knows exactly: the passages its last answer cited. Also counts the follow-ups
    whose answer-grounded top passage is judged relevant to the turn itself."""
    qrels = {d: data.qrels(d) for d in data.domains}
    rows = []
    for queries in ("lastturn", "rewrite"):
        base = _scored(indexes, data, "hybrid", make_query_source(queries, data), k=50)
        last_answer = {tid: next((m.text for m in reversed(t.history) if m.speaker != "user" and m.text.strip()), "")
                       for tid, t in base.tasks.items()}
        grounded: dict[str, list[Hit]] = {}
        for domain in data.domains:
            ids = [tid for tid, t in base.tasks.items() if t.domain == domain and last_answer[tid]]
            grounded.update(zip(ids, indexes.retriever(domain, "hybrid").search([last_answer[i] for i in ids], 3)))
        relevant_now = sum(bool(g) and qrels[base.tasks[tid].domain].get(tid, {}).get(g[0].doc_id, 0) > 0 for tid, g in grounded.items())
        top10 = score_run(RunResult("base", "hybrid", queries, base.tasks, base.queries, {t: h[:10] for t, h in base.hits.items()}), qrels)
        rows.append([queries, "none", "-", top10.all3.means["nDCG@10"], f"{relevant_now} of {len(grounded)}"])
        for g, weight in itertools.product((1, 2), (0.05, 0.1, 0.2, 0.3)):
            boosted = {}
            for tid, hits in base.hits.items():
                scores = {h.doc_id: h.score for h in hits}
                floor = min(scores.values(), default=0.0)
                for h in grounded.get(tid, [])[:g]:
                    scores[h.doc_id] = scores.get(h.doc_id, floor) + weight
                by_id = {h.doc_id: h for h in [*hits, *grounded.get(tid, [])]}
                ranked = sorted(scores, key=lambda d: -scores[d])[:10]
                boosted[tid] = [by_id[d]._replace(score=scores[d], rank=i) for i, d in enumerate(ranked, start=1)]
            result = score_run(RunResult("memory", "hybrid", queries, base.tasks, base.queries, boosted), qrels)
            rows.append([queries, g, weight, result.all3.means["nDCG@10"], ""])
    return markdown_table(["queries (hybrid)", "grounded passages of the last answer", "boost", "ALL-3 nDCG@10",
                           "follow-ups whose grounded top passage is relevant now"], rows)


def escalation(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """What progressive's one call asks for: the standalone rewrite (the default) or the ``summary``
    strategy's question and summary, whose summary query is fused as well; with the stage-1a turns
    (a repeated conversation term, no pronoun) searched without a call or sent to that call too.
    Every summary prompt is the ``summary`` strategy's, so a dev run of that strategy fills the cache."""
    from convrag.llm import make_llm
    from convrag.strategies.progressive import Progressive, ProgressiveSettings

    llm = make_llm("local")
    variants = {
        "rewrite (the default)": ProgressiveSettings(),
        "summary": ProgressiveSettings(stage_2_call="summary"),
        "summary, stage-1a turns to the call too": ProgressiveSettings(stage_2_call="summary", anchored_without_call=False),
    }
    rows = []
    sources = {label: StrategySource(Progressive(llm, indexes.embedder, settings)) for label, settings in variants.items()}
    for retriever in ("bm25", "hybrid"):  # each source rewrites once; the second retriever reuses its queries
        for label, source in sources.items():
            result = _scored(indexes, data, retriever, source)
            calls, live = _follow_up_calls(source, result)
            rows.append([retriever, label, result.all3.means["nDCG@10"], f"{calls:.2f}", live])
    return markdown_table(["retriever", "stage-2 call", "ALL-3 nDCG@10", "LLM calls per follow-up", "calls made live"], rows)


def _on_turns(result: RunResult, turns: list[str]) -> list[object]:
    """ALL-3 nDCG@10 of a run, and its mean nDCG@10 on ``turns`` (with their count)."""
    mean = sum(result.per_query[t]["nDCG@10"] for t in turns) / max(1, len(turns))
    return [result.all3.means["nDCG@10"], f"{mean:.4f} ({len(turns)})"]


def stage_one(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Would a call pay on the follow-ups stage 1 searches as asked (no marker)? On both halves
    full_rewrite beats the question as asked on those turns; here they are sent to stage 2 instead
    (the last exchange rewritten, fused with the topic expansion), everything else unchanged."""
    import convrag.strategies.progressive as progressive_module
    from convrag.llm import make_llm
    from convrag.strategies import make_strategy
    from convrag.strategies.base import Rewrite
    from convrag.strategies.full_rewrite import FullRewrite
    from convrag.strategies.progressive import Progressive
    from convrag.strategies.standalone import MIN_WORDS, StandaloneVerdict

    verdict = progressive_module.standalone_verdict

    def marked(question: str, min_words: int = MIN_WORDS) -> StandaloneVerdict:
        found = verdict(question, min_words)
        # min_words 0 is the rewrite's own verdict (stage 2's check), which stays as it is
        return found._replace(standalone=False, markers=("pronoun:stage-1",)) if found.standalone and min_words else found

    class StageOneRewritten(Progressive):
        def rewrite(self, task: Any) -> Any:
            progressive_module.standalone_verdict = marked
            try:
                return super().rewrite(task)
            finally:
                progressive_module.standalone_verdict = verdict

    class StageOneWholeHistory(Progressive):
        """Stage-1 follow-ups get full_rewrite's rewrite (the whole history), alone or fused with the question."""

        def __init__(self, llm: Any, embedder: Any, fuse: bool) -> None:
            super().__init__(llm, embedder)
            self.fuse = fuse
            self.full = FullRewrite(llm)

        def rewrite(self, task: Any) -> Any:
            out = super().rewrite(task)
            if out.trace.stage != "1" or not task.history:
                return out
            full = self.full.rewrite(task)
            out.trace.calls.extend(full.trace.calls)
            if full.trace.stage != "rewrite":  # no rewrite survived its checks: the question as asked
                return out
            return Rewrite(full.query, out.trace, (task.question,) if self.fuse and full.query != task.question else ())

    llm = make_llm("local")
    default = StrategySource(Progressive(llm, indexes.embedder))
    sources = {"stage-1 follow-ups rewritten too": StrategySource(StageOneRewritten(llm, indexes.embedder)),
               "stage-1 follow-ups rewritten with the whole history (full_rewrite's prompt)":
                   StrategySource(StageOneWholeHistory(llm, indexes.embedder, fuse=False)),
               "the same, fused with the question as asked": StrategySource(StageOneWholeHistory(llm, indexes.embedder, fuse=True)),
               "full_rewrite (the whole history, every follow-up)": StrategySource(make_strategy("full_rewrite", llm, indexes.embedder))}
    rows = []
    for retriever in ("bm25", "hybrid"):
        base = _scored(indexes, data, retriever, default)
        turns = [t.task_id for t in default.traces.values() if t.stage == "1" and t.task_id in base.tasks and base.tasks[t.task_id].turn > 1]
        runs = [("the default (stage 1 as asked)", default, base)]
        runs += [(label, source, _scored(indexes, data, retriever, source)) for label, source in sources.items()]
        for label, source, result in runs:
            calls, live = _follow_up_calls(source, result)
            p = "-" if result is base else f"{paired_test(base.per_query, result.per_query).p_randomization:.3f}"
            rows.append([retriever, label, *_on_turns(result, turns), p, f"{calls:.2f}", live])
        for name in ("lastturn", "rewrite"):  # the question as asked, the benchmark's human rewrite
            rows.append([retriever, name, *_on_turns(_scored(indexes, data, retriever, make_query_source(name, data)), turns), "-", "-", "-"])
    return markdown_table(["retriever", "progressive", "ALL-3 nDCG@10", "nDCG@10 on stage-1 follow-ups (turns)", "p vs the default",
                           "LLM calls per follow-up", "calls made live"], rows)


def stage_two_history(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Would stage 2 gain from the whole history that full_rewrite reads? Its turns get full_rewrite's
    rewrite in place of the last exchange's (still fused with the topic expansion: the same calls, each
    longer), or beside it; or stage 1a's turns get it too (a second call, shown for what it could add at
    most). Every call from the completion cache (full_rewrite's and progressive's dev runs)."""
    from convrag.llm import make_llm
    from convrag.strategies import make_strategy
    from convrag.strategies.progressive import Progressive

    llm = make_llm("local")
    progressive = StrategySource(Progressive(llm, indexes.embedder))
    full = StrategySource(make_strategy("full_rewrite", llm, indexes.embedder))
    whole = full.queries([t for d in data.domains for t in data.tasks(d)])

    def instead(t: Any, stage: str | None, q: tuple[str, ...]) -> tuple[str, ...]:
        return (whole[t.task_id], *q[1:]) if stage == "2" else q

    def beside(stages: tuple[str, ...]) -> Any:
        return lambda t, stage, q: (*q, whole[t.task_id]) if stage in stages and whole[t.task_id] not in q else q

    sources = {"stage 2: the whole-history rewrite instead of the last exchange's": Rerouted("instead", progressive, instead),
               "stage 2: both rewrites": Rerouted("both", progressive, beside(("2",))),
               "stages 1a and 2: the whole-history rewrite added": Rerouted("added", progressive, beside(("1a", "2"))),
               "full_rewrite (every follow-up)": full}
    rows = []
    for retriever in ("bm25", "hybrid"):
        base = _scored(indexes, data, retriever, progressive)
        turns = [t.task_id for t in progressive.traces.values() if t.stage == "2" and t.task_id in base.tasks]
        rows.append([retriever, "progressive (the default)", *_on_turns(base, turns), "-", "-"])
        for label, source in sources.items():
            result = _scored(indexes, data, retriever, source)
            rows.append([retriever, label, *_on_turns(result, turns), *_against(base, result)[1:]])  # its delta and p
    return markdown_table(["retriever", "renderings", "ALL-3 nDCG@10", "nDCG@10 on stage-2 follow-ups (turns)", "delta", "p"], rows)


def query_vector(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """A zero-call way to bring the conversation into the dense query without a second result list:
    each follow-up's query vectors are moved toward a vector of the conversation (the mean of the
    earlier questions, the previous question, or the last answer), then renormalised; BM25 is left
    alone. On progressive's stage-1 follow-ups only, or on every follow-up's renderings."""
    import numpy as np

    from convrag.llm import make_llm
    from convrag.strategies.progressive import Progressive

    source = StrategySource(Progressive(make_llm("local"), indexes.embedder))
    base = _scored(indexes, data, "hybrid", source)
    embedder = indexes.embedder
    encode = embedder.encode
    moves: dict[str, np.ndarray] = {}

    def moved(texts: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        vectors = encode(texts, *args, **kwargs)
        if moves:
            vectors = vectors.copy()
            for i, text in enumerate(texts):
                if text in moves:
                    v = vectors[i] + moves[text]
                    vectors[i] = v / np.linalg.norm(v)
        return vectors

    follow_ups = [t for d in data.domains for t in data.tasks(d) if t.task_id in base.tasks and t.turn > 1]
    texts = list(dict.fromkeys(m.text for task in follow_ups for m in task.history))  # a conversation's turns recur in its later tasks
    vector = dict(zip(texts, encode(texts)))
    context = {}
    for task in follow_ups:
        questions = np.array([vector[m.text] for m in task.history if m.speaker == "user"])
        last_answer = next(vector[m.text] for m in reversed(task.history) if m.speaker == "agent")
        mean = questions.mean(axis=0)
        context[task.task_id] = {"the earlier questions (mean)": mean / np.linalg.norm(mean), "the previous question": questions[-1],
                                 "the last answer": last_answer}
    stage = {t.task_id: t.stage for t in source.traces.values()}
    rows = [["-", "-", "-", base.all3.means["nDCG@10"], "-", "-"]]
    embedder.encode = moved  # type: ignore[method-assign]
    try:
        for toward in ("the earlier questions (mean)", "the previous question", "the last answer"):
            for weight in (0.25, 0.5):
                for scope in ("stage-1 follow-ups", "every follow-up"):
                    moves.clear()
                    for task in follow_ups:
                        if scope == "every follow-up" or stage.get(task.task_id) == "1":
                            moves.update({q: weight * context[task.task_id][toward] for q in source.results[task.task_id].queries})
                    rows.append([toward, weight, scope, *_against(base, _scored(indexes, data, "hybrid", source))])
    finally:
        embedder.encode = encode  # type: ignore[method-assign]
    return markdown_table(["query vector moved toward", "weight", "on", "hybrid ALL-3 nDCG@10", "delta", "p"], rows)


#: marks a rendering that only one side of the hybrid searches (stripped before the search): BM25 or dense
_LEXICAL, _DENSE = "lexical-only: ", "dense-only: "
#: dense weights a rendering may be searched with instead of the hybrid's own 0.7 (:func:`_weighted` marks it)
_ALPHAS = (0.3, 0.5, 0.85)


def _weighted(alpha: float) -> str:
    return f"dense-weight-{alpha}: "


def _with_alpha(hybrid: Any, alpha: float) -> Any:
    """A copy of ``hybrid`` that weighs its dense side by ``alpha``."""
    import copy

    other = copy.copy(hybrid)
    other.alpha = alpha
    return other


class _RoutedHybrid:
    """The hybrid retriever, except that a rendering marked :data:`_LEXICAL` or :data:`_DENSE` is searched by that
    side of it alone, and one marked by :func:`_weighted` by the hybrid with that dense weight."""

    def __init__(self, hybrid: Any) -> None:
        self.hybrid = hybrid
        self.sides: dict[str, Any] = {_LEXICAL: hybrid.sparse, _DENSE: hybrid.dense, **{_weighted(a): _with_alpha(hybrid, a) for a in _ALPHAS}}

    def search(self, queries: Any, k: int = 10) -> list[list[Hit]]:
        groups: dict[str, list[int]] = {}
        for i, q in enumerate(queries):
            groups.setdefault(next((m for m in self.sides if q.startswith(m)), ""), []).append(i)
        found: dict[int, list[Hit]] = {}
        for marker, own in groups.items():
            hits = self.sides.get(marker, self.hybrid).search([queries[i][len(marker):] for i in own], k)
            found.update(zip(own, (h[:k] for h in hits)))
        return [found[i] for i in range(len(queries))]


def hybrid_sides(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Conversation words for BM25 only: with BM25 alone, renderings that carry more of the conversation gain,
    with hybrid every one loses (`renderings`), because the dense query is pulled toward what was said before.
    Here the hybrid's dense side sees only the question or rewrite, and the conversation's words go to a
    BM25-only list fused with it (RRF, as every rendering is); the other way, renderings for the dense side
    alone; and a rendering of one kind (the topic expansion, a stage-1 question, a stage-2 rewrite) searched with
    its own dense weight. No model call beyond progressive's own."""
    from convrag.llm import make_llm
    from convrag.strategies.progressive import Progressive
    from convrag.strategies.topic import TopicSettings, conversation_terms, expand

    progressive = StrategySource(Progressive(make_llm("local"), indexes.embedder))

    def terms(t: Any, query: str, n: int) -> str:
        return expand(query, [w for w, _ in conversation_terms(t.history, t.question, TopicSettings(max_zipf=5.2, max_terms=n))])

    variants = {
        "the topic expansion searched by BM25 only": lambda t, s, q: (q[0], *(_LEXICAL + r for r in q[1:])),
        "+ BM25 only: the query and five conversation terms, every follow-up": lambda t, s, q: (*q, _LEXICAL + terms(t, q[0], 5)),
        "+ BM25 only: the query and two conversation terms, every follow-up": lambda t, s, q: (*q, _LEXICAL + terms(t, q[0], 2)),
        "+ BM25 only: the query and two conversation terms, stage-1 follow-ups": (
            lambda t, s, q: (*q, _LEXICAL + terms(t, q[0], 2)) if s == "1" else q),
        "both: the expansion by BM25 only, and five terms by BM25 only on every follow-up": (
            lambda t, s, q: (q[0], *(_LEXICAL + r for r in q[1:]), _LEXICAL + terms(t, q[0], 5))),
        "the topic expansion searched by the dense side only": lambda t, s, q: (q[0], *(_DENSE + r for r in q[1:])),
        "+ dense only: the query, every follow-up": lambda t, s, q: (*q, _DENSE + q[0]),
        **{f"the topic expansion with dense weight {a} (the hybrid's 0.7 elsewhere)": (
            lambda t, s, q, a=a: (q[0], *(_weighted(a) + r for r in q[1:]))) for a in _ALPHAS},
        **{f"stage-1 follow-ups with dense weight {a}": (
            lambda t, s, q, a=a: tuple(_weighted(a) + r for r in q) if s == "1" else q) for a in _ALPHAS},
        **{f"stage-2 rewrites with dense weight {a}": (
            lambda t, s, q, a=a: (_weighted(a) + q[0], *q[1:]) if s == "2" else q) for a in _ALPHAS},
    }
    base = _scored(indexes, data, "hybrid", progressive)
    rows = [["progressive (the default)", base.all3.means["nDCG@10"], "-", "-"]]
    retriever = indexes.retriever
    indexes.retriever = lambda domain, name, options=None: (  # type: ignore[method-assign]
        _RoutedHybrid(retriever(domain, name, options)) if name == "hybrid" else retriever(domain, name, options))
    try:
        for label, route in variants.items():
            rows.append([label, *_against(base, _scored(indexes, data, "hybrid", Rerouted(label, progressive, route)))])
    finally:
        indexes.retriever = retriever  # type: ignore[method-assign]
    return markdown_table(["hybrid: progressive's renderings", "ALL-3 nDCG@10", "delta", "p"], rows)


def fusion_depth(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """How deep each of progressive's renderings is searched before their lists are fused (RRF), and RRF's
    constant there: the pipeline and `convrag eval` share the depth (`convrag.queries.multi_query.FUSION_DEPTH`).
    On the test half only the pipeline's depth before the two were made one (10) is compared: a report of
    what chats retrieved until then, not a choice."""
    from convrag.fusion import RRF_K
    from convrag.llm import make_llm
    from convrag.queries.multi_query import FUSION_DEPTH
    from convrag.strategies.progressive import Progressive

    source = StrategySource(Progressive(make_llm("local"), indexes.embedder))
    qrels = {d: data.qrels(d) for d in data.domains}
    runs: dict[tuple[int, float], RunResult] = {}

    def scored(depth: int, rrf_k: float) -> RunResult:
        if (depth, rrf_k) not in runs:
            runs[depth, rrf_k] = score_run(run_retrieval(indexes, data.domains, "hybrid", source, 10, depth=depth, rrf_k=rrf_k), qrels)
        return runs[depth, rrf_k]

    base = scored(FUSION_DEPTH, RRF_K)
    cells = [(d, RRF_K) for d in (10, 20, 30, 50, 100)] + [(FUSION_DEPTH, k) for k in (5.0, 20.0, 100.0)]
    rows = [[depth, rrf_k, *_against(base, scored(depth, rrf_k))] for depth, rrf_k in (cells if data.split != "test" else [(10, RRF_K)])]
    return markdown_table(["depth per rendering", "RRF k", "hybrid ALL-3 nDCG@10", "delta vs the default", "p"], rows)


def pipeline_parity(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Does a chat turn retrieve what `convrag eval` scores? Every task through the pipeline the `ask`
    command builds (progressive, hybrid, one collection), its domain's fused list against eval's top 10;
    and the same with the pipeline's former fusion depth (each rendering's top 10)."""
    import convrag.pipeline.core as core
    from convrag.llm import make_llm
    from convrag.pipeline import PipelineSpec, build_pipeline
    from convrag.strategies.progressive import Progressive
    from convrag.types import Message

    llm = make_llm("local")
    measured = run_retrieval(indexes, data.domains, "hybrid", StrategySource(Progressive(llm, indexes.embedder)), 10)
    pipelines = {d: build_pipeline(PipelineSpec((d,), strategy="progressive"), opened={d: indexes.collection(d)},
                                   embedder=indexes.embedder, generate=False, llm=llm) for d in data.domains}
    rows = []
    depth = core.FUSION_DEPTH
    try:
        for label, fusion_depth in (("today's pipeline", depth), ("the former fusion depth (10)", 10)):
            core.FUSION_DEPTH = fusion_depth  # read by Pipeline.retrieve at each call
            same = sum(
                [h.passage_id for h in pipelines[t.domain].retrieve([*t.history, Message("user", t.question)])[2][t.domain]]
                == [h.doc_id for h in measured.hits[t.task_id]]
                for d in data.domains for t in data.tasks(d))
            rows.append([label, len(measured.hits), same, len(measured.hits) - same])
    finally:
        core.FUSION_DEPTH = depth
    return markdown_table(["pipeline", "tasks", "top 10 identical to eval's", "different"], rows)


#: BM25's weights before they were chosen here: bm25s's defaults (the Lucene/Elasticsearch b, a higher k1)
BM25_BEFORE = BM25Params(k1=1.5, b=0.75)


def _paired_row(label: str, t: Any) -> list[Any]:
    """A table row of a paired test (:func:`convrag.eval.significance.paired_test`)."""
    return [label, t.n, f"{t.mean_baseline:.4f}", f"{t.mean_run:.4f}", f"{t.delta:+.4f}", f"{t.p_randomization:.3f}"]


def _use_bm25(indexes: BenchmarkIndexes, data: MTRAGData, params: BM25Params) -> None:
    """Search every domain with a BM25 index of ``params``, built in memory from the collection's
    own passages (the collection on disk keeps the weights it has)."""
    for domain in data.domains:
        collection = indexes.collection(domain)
        collection.__dict__["bm25"] = collection.bm25_index(params)


def bm25_params(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """BM25's two weights (k1: how fast a term's repeats stop counting; b: how much a long passage
    is discounted) on a grid around bm25s's defaults (1.5, 0.75), scored alone and inside the
    default hybrid, with the human rewrite and with the default query path (progressive; its model
    calls from the completion cache); then today's default against the weights before it, paired
    per task."""
    from convrag.llm import make_llm
    from convrag.strategies.progressive import Progressive

    sources = {"rewrite": make_query_source("rewrite", data),
               "progressive": StrategySource(Progressive(make_llm("local"), indexes.embedder))}
    runs = [(retriever, name) for retriever in ("bm25", "hybrid") for name in sources]
    per_query: dict[BM25Params, list[Any]] = {}
    rows = []
    for k1, b in itertools.product((0.9, 1.2, 1.5, 2.0), (0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9)):
        params = BM25Params(k1=k1, b=b)
        _use_bm25(indexes, data, params)
        results = [_scored(indexes, data, retriever, sources[name]) for retriever, name in runs]
        per_query[params] = [r.per_query for r in results]
        label = f"{k1} / {b}" + (" (the default)" if params == BM25Params() else " (before)" if params == BM25_BEFORE else "")
        rows.append([label, *(f"{r.all3.means['nDCG@10']:.4f}" for r in results)])
    grid = markdown_table(["k1 / b", *(f"{retriever} + {name}" for retriever, name in runs)], rows)
    tests = [paired_test(before, now) for before, now in zip(per_query[BM25_BEFORE], per_query[BM25Params()])]
    paired = markdown_table(["run", "tasks", "before", "the default", "delta", "p (randomization)"],
                            [_paired_row(f"{retriever} + {name}", t) for (retriever, name), t in zip(runs, tests)])
    return f"{grid}\n\n{paired}"


def bm25_before_after(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Today's BM25 weights against those before them, for every query source of the strategies
    benchmark, each source's queries the same under both (model calls from the completion cache);
    then progressive against full_rewrite under each. Meant for ``--split test``, once, to report
    a choice made on dev with ``bm25-params`` apart from anything else that changed the queries."""
    from convrag.llm import make_llm
    from convrag.strategies import make_strategy
    from convrag.strategies.progressive import Progressive

    llm = make_llm("local")
    sources = {"last turn": make_query_source("lastturn", data), "rewrite": make_query_source("rewrite", data),
               "progressive": StrategySource(Progressive(llm, indexes.embedder)),
               "full_rewrite": StrategySource(make_strategy("full_rewrite", llm, indexes.embedder))}
    weights = {"before": BM25_BEFORE, "now": BM25Params()}
    per_query = {}
    for when, params in weights.items():
        _use_bm25(indexes, data, params)
        for retriever in ("bm25", "hybrid"):
            for name, source in sources.items():
                per_query[when, retriever, name] = _scored(indexes, data, retriever, source).per_query
    rows = []
    for retriever in ("bm25", "hybrid"):
        for name in sources:
            t = paired_test(per_query["before", retriever, name], per_query["now", retriever, name])
            rows.append(_paired_row(f"{retriever} + {name}", t))
    before, now = (f"b {p.b}" for p in weights.values())
    for when, params in weights.items():
        for retriever in ("bm25", "hybrid"):
            t = paired_test(per_query[when, retriever, "full_rewrite"], per_query[when, retriever, "progressive"])
            rows.append(_paired_row(f"{retriever}, b {params.b}: progressive vs full_rewrite", t))
    return markdown_table(["run (ALL-3 nDCG@10)", "tasks", before, now, "delta", "p (randomization)"], rows)


def answers(rows_file: Path) -> str:
    """Decline thresholds from a dev run of `convrag eval-answers` without the gate (`--answers
    ungated`): which relevance, model-doubt and grounding cut-offs, and whether declining a restated
    question, separate UNANSWERABLE from answerable turns (recomputed from the features recorded for
    every turn). A turn counts as declined when its relevance is under the floor, the model declined
    by itself, its doubt (the probability of the decline sentence's first word) reaches the threshold,
    its grounding is under the floor, or (with the restated gate) its answer adds no content word to
    the question and none of its citations is supported by its passage."""
    rows = [row for line in rows_file.read_text().splitlines() if line.strip() and not (row := json.loads(line)).get("failed")]
    details = [r.get("answer_details") or {} for r in rows]
    features = [((d.get("compression") or {}).get("relevance", 1.0), d.get("grounding", 1.0), r.get("first_choice_p"),
                 bool(r.get("model_declined")), _restated_unbacked(r), r["label"] == "UNANSWERABLE") for r, d in zip(rows, details)]

    def share(declined: list[bool]) -> str:
        return f"{sum(declined) / max(1, len(declined)):.0%}"

    out = []
    for min_rel, doubt_at, min_ground, restated in itertools.product((0.0, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6), (None, 0.02, 0.05, 0.1, 0.2, 0.3),
                                                                     (0.0, 0.5), (False, True)):
        declined = [(un, rel < min_rel or by_model or ground < min_ground or (restated and guess)
                     or (doubt_at is not None and doubt is not None and doubt >= doubt_at))
                    for rel, ground, doubt, by_model, guess, un in features]
        out.append([min_rel, "off" if doubt_at is None else doubt_at, min_ground, "on" if restated else "off",
                    share([d for un, d in declined if un]), share([d for un, d in declined if not un])])
    return markdown_table(["min relevance", "model doubt at", "min grounding", "restated", "UNANSWERABLE declined",
                           "answerable declined"], out)


def _restated_unbacked(row: dict[str, Any]) -> bool:
    """An answered turn whose answer restates the question (:func:`convrag.generate.decline.restates_question`)
    and none of whose citations the evaluation found supported: what ``decline_restated`` declines."""
    if row.get("declined"):
        return False
    return restates_question(row["answer"], row["question"]) and not any(c["supported"] for c in row.get("citation_checks") or [])


#: the comparisons over the benchmark's indexes, by name (``answers`` reads a run's rows instead)
def invented_terms(data: MTRAGData, indexes: BenchmarkIndexes) -> str:
    """Does the model bring into its stage-2 rewrite a topic the conversation never had (a toy chat
    about visitor parking got "...to park visitors at the museum")? Counts the rewrites with a
    specific term (Zipf <= 5.2, as progressive's topic terms) absent from what the model read, and
    lists those whose term is absent from the whole conversation. A check that rejects them would be
    worth building only if such rewrites were common and retrieved worse."""
    from convrag.llm import make_llm
    from convrag.strategies.progressive import Progressive
    from convrag.strategies.topic import specific_terms
    from convrag.text import content_stems

    source = StrategySource(Progressive(make_llm("local"), indexes.embedder))
    tasks = {t.task_id: t for d in data.domains for t in data.tasks(d)}
    source.queries(list(tasks.values()))
    rewrites, beyond_prompt, rows = 0, 0, []
    for trace in source.traces.values():
        task = tasks[trace.task_id]
        said = content_stems(" ".join(m.text for m in task.history) + " " + task.question)
        for call in trace.calls:
            if call.purpose != "rewrite" or not call.answer.strip():
                continue
            rewrites += 1
            terms = specific_terms(call.answer, 5.2)
            read = content_stems(call.messages[-1]["content"])
            beyond_prompt += any(not content_stems(t) <= read for t in terms)
            new = [t for t in terms if not content_stems(t) <= said]
            if new:
                rows.append([trace.task_id, trace.stage, call.answer.strip()[:100], ", ".join(new)])
    head = (f"{rewrites} stage-2 rewrites; {beyond_prompt} name a specific term absent from their prompt; "
            f"{len(rows)} one absent from the whole conversation:\n\n")
    return head + markdown_table(["task", "stage reached", "rewrite", "terms the conversation never had"], rows)


MODES = {
    "retrieval": retrieval, "routing": routing, "progressive": progressive, "renderings": renderings, "escalation": escalation,
    "stage-one": stage_one, "stage-two-history": stage_two_history, "query-vector": query_vector, "hybrid-sides": hybrid_sides, "fusion-depth": fusion_depth,
    "pipeline-parity": pipeline_parity, "grounded-memory": grounded_memory, "bm25-params": bm25_params,
    "bm25-before-after": bm25_before_after, "invented-terms": invented_terms,
}
#: the modes that may run on the test half: each reports a choice already made on dev, none chooses
TEST_MODES = ("bm25-before-after", "fusion-depth")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=(*MODES, "answers"))
    parser.add_argument("rows", nargs="?", type=Path, help="for answers: the answers-*.jsonl of a dev eval-answers run")
    parser.add_argument("--data", type=Path, default=Path("../shared/mtrag"))
    parser.add_argument("--domains", default="all", help="comma-separated domains (e.g. clapnq,cloud,fiqa: ALL-3 alone)")
    parser.add_argument("--split", default="dev", choices=("dev", "test"),
                        help=f"dev, where everything is chosen; test only for {' and '.join(TEST_MODES)}, to report a choice made on dev")
    parser.add_argument("--embedding-model", default=DEFAULT_EMBEDDING_MODEL,
                        help="the dense model (all-mpnet-base-v2 re-chooses the hybrid settings for it)")
    args = parser.parse_args()
    if args.what == "answers":
        print(answers(args.rows))
        return
    if args.split == "test" and args.what not in TEST_MODES:
        parser.error(f"only {' and '.join(TEST_MODES)} report on the test half; every choice is made on dev")
    data = MTRAGData.discover(args.data, args.split)
    domains = parse_domains(args.domains)
    data = replace(data, corpus_paths={d: path for d, path in data.corpus_paths.items() if d in domains})
    indexes = BenchmarkIndexes(data, embedding_model=args.embedding_model)
    print(MODES[args.what](data, indexes))


if __name__ == "__main__":
    main()
