"""`convrag bench answers`: grounded answers on MT-RAG turns with the local LLM.

A seeded sample of conversation turns per answerability label (ANSWERABLE, UNANSWERABLE) across
the four domains (from conversations.json: the retrieval tasks exclude unanswerable turns); each turn answered by the pipeline over its domain's collection (progressive strategy,
hybrid retrieval, enhanced merge within 1,000 tokens), history = the benchmark's own turns.
Reports the share of answerable turns whose answer cites at least one passage (model-written
citations, and with inferred ones), the share of unanswerable turns the answer declines, and
latency per turn p50/p95. Model calls are cached, so a rerun reports the recorded latencies.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import numpy as np

from ..cli.console import RichReporter, console
from ..data.layout import MTRAGData
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes
from ..generate import AnswerGenerator
from ..index.atomic import write_json, write_text
from ..llm import make_llm
from ..merge import MergeSettings
from ..pipeline import Pipeline
from ..retrieve.multi import open_collections
from ..strategies import make_strategy
from ..types import Message
from .timing import machine_description, percentiles


def run_answer_benchmark(data_root: Path, out: Path, per_label: int = 40, seed: int = 0, llm_spec: str = "local") -> dict[str, Any]:
    reporter = RichReporter()
    data = MTRAGData.discover(data_root)
    indexes = BenchmarkIndexes(data, reporter=reporter)
    llm = make_llm(llm_spec)
    strategy = make_strategy("progressive", llm, indexes.embedder)
    pipelines = {
        d: Pipeline(open_collections({d: indexes.collection(d)}, "hybrid"), strategy,
                    merge_settings=MergeSettings(max_tokens=1000, max_passages=5), generator=AnswerGenerator(llm))
        for d in data.domains
    }
    rng = random.Random(seed)
    by_label: dict[str, list[Any]] = {"ANSWERABLE": [], "UNANSWERABLE": []}
    # All conversation turns, not only the retrieval tasks: the benchmark's retrieval tasks leave out
    # the UNANSWERABLE turns, which are exactly the ones where an answer should decline.
    for conversation in data.conversations:
        if conversation.domain not in pipelines:
            continue
        for t in conversation.tasks():
            label = t.enrichments.answerability[0] if t.enrichments.answerability else ""
            if label in by_label:
                by_label[label].append(t)
    rows: list[dict[str, Any]] = []
    for label, tasks in by_label.items():
        chosen = rng.sample(tasks, min(per_label, len(tasks)))
        with reporter.stage(f"answers: {label}", total=len(chosen)) as advance:
            for task in chosen:
                result = pipelines[task.domain].answer([*task.history, Message("user", task.question)], task.task_id)
                t = result.trace
                call = t["answer"].get("llm_call", {})
                cached_s = sum(c["latency_s"] for c in t["strategy"]["calls"] if c["cached"]) + (call.get("latency_s", 0) if call.get("cached") else 0)
                rows.append({
                    "task_id": task.task_id, "domain": task.domain, "label": label, "answer": result.text,
                    "declined": result.declined, "citations": len(result.citations),
                    "model_citations": sum(not c.inferred for c in result.citations),
                    "latency_s": t["timings_s"]["total"] + cached_s,
                })
                advance(1)
    answerable = [r for r in rows if r["label"] == "ANSWERABLE"]
    unanswerable = [r for r in rows if r["label"] == "UNANSWERABLE"]
    lat = percentiles(np.array([r["latency_s"] for r in rows]))
    summary = {
        "answerable_turns": len(answerable),
        "answerable_citing_share": np.mean([r["citations"] > 0 for r in answerable]) if answerable else None,
        "answerable_model_citing_share": np.mean([r["model_citations"] > 0 for r in answerable]) if answerable else None,
        "answerable_declined_share": np.mean([r["declined"] for r in answerable]) if answerable else None,
        "unanswerable_turns": len(unanswerable),
        "unanswerable_declined_share": np.mean([r["declined"] for r in unanswerable]) if unanswerable else None,
        "latency_s": lat,
    }
    report = {"date": dt.date.today().isoformat(), "machine": machine_description(), "llm": f"{llm.backend}:{llm.model}",
              "summary": {k: (float(v) if isinstance(v, np.floating) else v) for k, v in summary.items()}, "turns": rows}
    write_json(out / "report.json", report)
    def share(key: str) -> str:
        return "n/a (no such turns)" if summary[key] is None else f"{summary[key]:.1%}"

    table = markdown_table(["measure", "value"], [
        ["answerable turns whose answer cites >= 1 passage (incl. inferred)", f"{share('answerable_citing_share')} of {len(answerable)}"],
        ["... with a citation the model wrote itself", share("answerable_model_citing_share")],
        ["answerable turns declined", share("answerable_declined_share")],
        ["unanswerable turns declined", f"{share('unanswerable_declined_share')} of {len(unanswerable)}"],
        ["latency per turn p50 / p95", f"{lat['p50']:.1f} / {lat['p95']:.1f} s"],
    ])
    markdown = f"Machine: {report['machine']}; LLM {report['llm']}; date {report['date']}.\n\n{table}\n"
    write_text(out / "report.md", markdown)
    console.print(markdown, highlight=False, soft_wrap=True)
    return report
