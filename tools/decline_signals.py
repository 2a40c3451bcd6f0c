"""Can anything cheap tell an unanswerable MT-RAG turn from an answerable one? (dev half only)

The decline target of issue 16 asks for 60 % of UNANSWERABLE turns declined at no more than 10 %
of answerable ones: a separator of about that quality (an ROC AUC well above 0.8). Two families of
signals are measured here, neither of which writes an answer:

    .venv/bin/python tools/decline_signals.py retrieval   # every dev turn: retrieval-side signals
    .venv/bin/python tools/decline_signals.py verdict     # 71 dev turns: the model's yes/no verdict
    .venv/bin/python tools/decline_signals.py pmi --answers runs/answers-dev-ungated/answers-ungated.jsonl

``retrieval`` runs the default query path (progressive, hybrid, enhanced merge; rewrites from the
completion cache) on every dev turn with an answerability label and scores: the best cosine of a
passage sentence to the retrieval query (the default gate's signal; ``relevance_query_alone`` scores the
sentences without their section headings, as the gate did before 2026-11-28; ``relevance_query_headed``
reads them as shown and under their section heading, not without the heading a sentence opens with, as it
did before 2026-12-07) and to the question as asked or
as the model restated it, the mean of the three best passages' sentences, the dense cosine of the
best passage, and the share of the question's specific terms found in the top five passages.
``verdict`` asks the local model, with two worked examples (topics absent from MT-RAG), whether the
compressed passages answer the question, and reads the probability of "No" at its first step; the
turns are the answer evaluation's dev sample (30 ANSWERABLE, 10 PARTIAL, all UNANSWERABLE, seed 0).
Each prints the ROC AUC of every signal (low relevance or a high "No" meaning unanswerable) and the
share of UNANSWERABLE turns declined at the threshold that falsely declines 10 % of answerable ones.
``pmi`` reads answers already written (an ungated ``eval-answers`` run of the same sample) and asks how
much the passages raised the model's probability of its own answer: each answer token's log-probability
under the answer prompt as it was, minus the same under that prompt with "(none)" for the passages. An
answer read off the passages gains from them; a guess the model would have made without them ("Yes,
they use guns") does not. It scores the mean gain per token (``pmi_mean``), the share of tokens that
gained more than one nat (``pmi_share``), and the answer's mean log-probability with the passages
(``logprob``); citation markers are taken out first. Two prompt reads per turn, about 10 minutes.
``retrieval`` also scores the signals combined: a logistic regression, its probabilities for each turn
taken from a model fitted on the other conversations (five folds split by conversation), once with the
retrieval signals alone and once with the question's form too (its length in words, whether it refers
back). ``--rows FILE`` keeps the measured rows (JSONL), ``--from FILE`` scores kept rows again.
``--sentence-model NAME`` adds the best sentence cosine to the question as asked or restated, scored by
another embedding model (e.g. ``all-mpnet-base-v2``, after ``make mpnet``): does a stronger sentence
encoder than the retrieval's separate better?
``--bm25`` retrieves with BM25 alone, where the dense indexes are not built (about an hour on two
cores): the turns' passages are then not the default's, so its figures are a proxy for the gate's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import log_softmax
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convrag.cli.app import make_llm_from
from convrag.data.jsonl import read_jsonl
from convrag.data.layout import MTRAGData
from convrag.embeddings import load_embedder
from convrag.eval.answers import AnswerTurn, answer_turns
from convrag.eval.report import markdown_table
from convrag.eval.runner import BenchmarkIndexes
from convrag.generate.answer import EXAMPLE_SETS, compressed_block
from convrag.generate.citations import strip_citations
from convrag.generate.compress import CompressionSettings, _split, best_score, compress, sentence_scores
from convrag.generate.decline import DeclineSettings
from convrag.index.atomic import write_jsonl
from convrag.llm.base import GenerationParams
from convrag.llm.local import LocalLLM, chat_formatter
from convrag.merge.budget import token_counter
from convrag.pipeline import PipelineSpec, build_pipeline
from convrag.strategies.standalone import standalone_verdict
from convrag.strategies.topic import _stem, specific_terms
from convrag.text import content_stems
from convrag.types import Message

VERDICT_SYSTEM = ("You check whether numbered passages answer a user's question. Reply with one word: Yes if the "
                  "passages state the answer, No if they do not.")


def _verdict_user(block: str, question: str) -> str:
    return f"Passages:\n{block}\n\nQuestion: {question}\nDo the passages answer the question?"


def separation(rows: list[dict[str, Any]], signals: dict[str, int]) -> str:
    """One table row per signal: ROC AUC, declines at 10 % false declines, and for the best-sentence
    scores (``relevance_query*``, the gate's own signal) declines at the gate's floor. ``signals`` maps
    a signal to -1 when a low value means unanswerable, +1 when a high one does."""
    y = np.array([r["label"] == "UNANSWERABLE" for r in rows])
    floor = DeclineSettings().min_relevance
    table = []
    for name, sign in signals.items():
        x = sign * np.array([r[name] for r in rows], dtype=float)
        threshold = np.percentile(x[~y], 90)  # 10 % of answerable turns at or above it
        at_floor = -x < floor if name.startswith("relevance_query") else None
        table.append([name, f"{roc_auc_score(y, x):.3f}", f"{np.mean(x[y] > threshold):.1%}", f"{np.mean(x[~y] > threshold):.1%}",
                      "" if at_floor is None else f"{np.mean(at_floor[y]):.1%} / {np.mean(at_floor[~y]):.1%}"])
    header = f"{int(y.sum())} UNANSWERABLE, {int((~y).sum())} ANSWERABLE/PARTIAL turns (dev)\n\n"
    return header + markdown_table(["signal", "ROC AUC", "UNANSWERABLE declined", "answerable declined",
                                    f"at the floor {floor}: UNANSWERABLE / answerable declined"], table)


RETRIEVAL_SIGNALS = {"relevance_query": -1, "relevance_query_alone": -1, "relevance_query_headed": -1, "relevance_asked": -1, "relevance_top3": -1, "dense_best": -1, "term_coverage": -1}
QUESTION_FORM = ("question_words", "refers_back")


def out_of_fold(rows: list[dict[str, Any]], features: tuple[str, ...], folds: int = 5) -> list[float]:
    """Each row's probability of UNANSWERABLE from a logistic regression fitted on the other
    conversations' rows (``folds`` folds split by conversation), so that no turn scores itself."""
    x = np.array([[r[f] for f in features] for r in rows], dtype=float)
    y = np.array([r["label"] == "UNANSWERABLE" for r in rows])
    groups = [r["conversation"] for r in rows]
    p = np.zeros(len(rows))
    for train, held in GroupKFold(n_splits=folds).split(x, y, groups):
        model = make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000))
        model.fit(x[train], y[train])
        p[held] = model.predict_proba(x[held])[:, 1]
    return [float(v) for v in p]


def with_combined(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Adds the combined signals to ``rows`` (in place) and returns every signal to report."""
    single = dict(RETRIEVAL_SIGNALS)
    if all("relevance_asked_other" in r for r in rows):
        single["relevance_asked_other"] = -1
    for name, features in (("combined_retrieval", tuple(single)),
                           ("combined_with_question_form", (*single, *QUESTION_FORM))):
        for r, p in zip(rows, out_of_fold(rows, features)):
            r[name] = p
    return {**single, "combined_retrieval": 1, "combined_with_question_form": 1}


def _turns(layout: MTRAGData, sample: bool) -> list[AnswerTurn]:
    per_label: dict[str, int | None] = {"ANSWERABLE": 30, "PARTIAL": 10, "UNANSWERABLE": None} if sample else dict.fromkeys(
        ("ANSWERABLE", "PARTIAL", "UNANSWERABLE"))
    return answer_turns(layout, per_label, seed=0)


def _dev_pipelines(data: str, answer: str | None = None, split: str = "dev",
                   bm25: bool = False) -> tuple[MTRAGData, BenchmarkIndexes, Any, dict[str, Any]]:
    """The dev half (or ``split``), its indexes, the cached local model and one default pipeline per
    domain (with the ``answer`` settings named, else without a generator); with ``bm25``, BM25
    retrieval alone (no dense index is built: about an hour on two cores)."""
    layout = MTRAGData.discover(data, split)
    indexes = BenchmarkIndexes(layout, dense=not bm25)
    model = make_llm_from("local", None, False)
    spec: dict[str, Any] = {"answer": answer} if answer else {}
    if bm25:
        spec["retriever"] = "bm25"
    pipelines = {d: build_pipeline(PipelineSpec((d,), strategy="progressive", **spec), llm=model, opened={d: indexes.collection(d)},
                                   embedder=indexes.embedder, generate=answer is not None) for d in layout.domains}
    return layout, indexes, model, pipelines


def _with_headings_only(query: str, results: Any, embedder: Any, count_tokens: Callable[[str], int]) -> float:
    """The gate's signal as it was before 2026-12-07: each sentence read as shown and under its section
    heading, not without the heading it opens with."""
    asked = embedder.encode([query])[0]
    return max((float(np.max(np.maximum(s.alone, s.headed))) for s in
                (sentence_scores(embedder, read, asked) for read in _split(results, token_counter(count_tokens), CompressionSettings()))
                if len(s.alone)), default=0.0)


def collect(what: str, data: str, sentence_model: str | None = None, bm25: bool = False) -> list[dict[str, Any]]:
    layout, indexes, model, pipelines = _dev_pipelines(data, bm25=bm25)
    embedder = indexes.embedder
    measure: Callable[..., dict[str, Any]]
    other = load_embedder(sentence_model) if sentence_model else None
    if what == "retrieval":
        def measure(results: Any, query: str, asked: str) -> dict[str, Any]:
            by_query = compress(query, results, embedder, model.count_tokens)
            alone = best_score(query, results, embedder, model.count_tokens, CompressionSettings(headings=False))
            by_asked = sorted(p.best for p in compress(asked, results, embedder, model.count_tokens))
            terms = {_stem(t) for t in specific_terms(asked)}
            shown: set[str] = set()
            for r in results[:5]:
                shown |= {_stem(t) for t in specific_terms(r.hit.text)} | content_stems(r.hit.text)
            vectors = embedder.encode([asked] + [r.hit.text for r in results[:5]])
            row = {"relevance_query": max(p.best for p in by_query), "relevance_query_alone": alone,
                   "relevance_query_headed": _with_headings_only(query, results, embedder, model.count_tokens),
                   "relevance_asked": by_asked[-1],
                   "relevance_top3": float(np.mean(by_asked[-3:])), "dense_best": float(np.max(vectors[1:] @ vectors[0])),
                   "term_coverage": len(terms & shown) / len(terms) if terms else 1.0}
            if other is not None:
                row["relevance_asked_other"] = max(p.best for p in compress(asked, results, other, model.count_tokens))
            return row
    else:
        local = LocalLLM()  # uncached: the first-step probability is read live
        examples = EXAMPLE_SETS["brief"]
        prefix = [{"role": "system", "content": VERDICT_SYSTEM}]
        for example, verdict in zip(examples, ("Yes", "No")):
            prefix += [{"role": "user", "content": _verdict_user(example.passages, example.question)},
                       {"role": "assistant", "content": verdict}]

        def measure(results: Any, query: str, asked: str) -> dict[str, Any]:
            block = compressed_block(compress(query, results, embedder, model.count_tokens))
            done = local.complete([*prefix, {"role": "user", "content": _verdict_user(block, asked)}],
                                  GenerationParams(max_tokens=2, first_choice="No"))
            return {"p_no": (done.steering or {}).get("first_choice_p"), "verdict": done.text.strip()}

    rows = []
    for turn in _turns(layout, sample=what == "verdict"):
        merged, trace, _ = pipelines[turn.task.domain].retrieve([*turn.task.history, Message("user", turn.task.question)],
                                                                turn.task.task_id)
        if not merged.results or trace.strategy is None:
            continue
        asked = trace.strategy.standalone or turn.task.question
        verdict = standalone_verdict(turn.task.question)
        rows.append({"label": turn.label, "task_id": turn.task.task_id, "conversation": turn.task.conversation_id,
                     "domain": turn.task.domain, "question_words": len(turn.task.question.split()),
                     "refers_back": float(bool(turn.task.history) and not verdict.standalone),
                     **measure(merged.results, trace.strategy.final_query, asked)})
    return rows


class _Scorer:
    """Log-probabilities of a given reply under a chat prompt, on one llama.cpp context that keeps
    every position's logits; the prompt tokens shared with the previous call are not read again."""

    def __init__(self, local: LocalLLM) -> None:
        self.llama = local.open_context(logits_all=True)
        self.formatter = chat_formatter(self.llama, local.model_path.name)
        self.read: list[int] = []

    def logprobs(self, messages: list[dict[str, str]], reply: str) -> np.ndarray:
        laid = self.formatter(messages=messages)
        prompt = self.llama.tokenize(laid.prompt.encode("utf-8"), add_bos=not laid.added_special, special=True)
        tokens = [*prompt, *self.llama.tokenize(reply.encode("utf-8"), add_bos=False, special=False)]
        shared = 0
        while shared < min(len(tokens) - 1, len(self.read)) and tokens[shared] == self.read[shared]:
            shared += 1
        self.llama.n_tokens = shared
        self.llama.eval(tokens[shared:])
        self.read = tokens
        # position i's logits predict token i + 1
        log_p = log_softmax(np.asarray(self.llama.scores[len(prompt) - 1: len(tokens) - 1], dtype=np.float64), axis=1)
        return log_p[np.arange(len(tokens) - len(prompt)), tokens[len(prompt):]]


def _without_passages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The same prompt with "(none)" in place of its last message's passages."""
    last = messages[-1]["content"]
    head, _, rest = last.partition("\n\nPassages:\n")
    _, _, tail = rest.partition("\n\nQuestion: ")
    return [*messages[:-1], {**messages[-1], "content": f"{head}\n\nPassages:\n(none)\n\nQuestion: {tail}"}]


def collect_pmi(data: str, answers: Path) -> list[dict[str, Any]]:
    """How much the passages raised the probability of each answer of an ungated run (``pmi``)."""
    written = {row["task_id"]: row for _, row in read_jsonl(answers) if not row.get("failed")}
    layout, _, _, pipelines = _dev_pipelines(data, answer="ungated")
    scorer = _Scorer(LocalLLM())
    rows = []
    for turn in _turns(layout, sample=True):
        row = written.get(turn.task.task_id)
        pipeline = pipelines[turn.task.domain]
        merged, trace, _ = pipeline.retrieve([*turn.task.history, Message("user", turn.task.question)], turn.task.task_id)
        if row is None or not merged.results or trace.strategy is None or pipeline.generator is None:
            continue
        prepared = pipeline.generator._prepare(turn.task.question, turn.task.history, merged.results,
                                               trace.strategy.final_query, trace.strategy.standalone,
                                               trace.strategy.self_contained, 0.0)
        if prepared.messages is None:
            continue
        reply = " ".join(strip_citations(row["answer"]).split())
        with_passages = scorer.logprobs(prepared.messages, reply)
        gain = with_passages - scorer.logprobs(_without_passages(prepared.messages), reply)
        rows.append({"label": turn.label, "task_id": turn.task.task_id, "conversation": turn.task.conversation_id,
                     "domain": turn.task.domain, "declined": row["declined"], "answer": reply,
                     "pmi_mean": float(gain.mean()), "pmi_share": float(np.mean(gain > 1.0)),
                     "logprob": float(with_passages.mean())})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("retrieval", "verdict", "pmi"))
    parser.add_argument("--answers", type=Path, help="pmi: the answers of an ungated eval-answers run on the dev sample")
    parser.add_argument("--data", default="../shared/mtrag")
    parser.add_argument("--rows", help="write the measured rows to this JSONL file")
    parser.add_argument("--from", dest="source", help="score the rows of an earlier --rows file instead of measuring")
    parser.add_argument("--sentence-model", help="also score the best sentence with this embedding model (retrieval only)")
    parser.add_argument("--bm25", action="store_true", help="retrieval: BM25 alone, where no dense index is built")
    args = parser.parse_args()
    if args.source:
        rows = [row for _, row in read_jsonl(Path(args.source))]
    elif args.what == "pmi":
        if args.answers is None:
            parser.error("pmi needs --answers (an ungated eval-answers run of the dev sample)")
        rows = collect_pmi(args.data, args.answers)
    else:
        rows = collect(args.what, args.data, args.sentence_model, args.bm25)
    if args.rows and not args.source:
        write_jsonl(Path(args.rows), rows)
    signals = with_combined(rows) if args.what == "retrieval" else (
        {"pmi_mean": -1, "pmi_share": -1, "logprob": -1} if args.what == "pmi" else {"p_no": 1})
    print(separation(rows, signals))


if __name__ == "__main__":
    main()
