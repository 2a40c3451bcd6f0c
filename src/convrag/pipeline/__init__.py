"""The conversational RAG pipeline: strategy (+ query stages) -> search over many collections ->
merge -> grounded answer, with one trace that records every decision and its time.

    spec = PipelineSpec(collections=("handbook", "faq"))
    pipeline = build_pipeline(spec)
    result = pipeline.answer(messages)   # messages end with the user's question
    result.text, result.citations, result.trace.to_dict()
"""

from .build import LivePipeline, build_pipeline, choose_retriever, default_fusion
from .core import Pipeline, PipelineResult
from .spec import PipelineSpec
from .trace import TurnTrace, turn_trace_schema

__all__ = ["LivePipeline", "Pipeline", "PipelineResult", "PipelineSpec", "TurnTrace", "build_pipeline", "choose_retriever", "default_fusion",
           "turn_trace_schema"]
