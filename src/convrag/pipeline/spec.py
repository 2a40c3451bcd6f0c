"""What a pipeline is made of, as one value: collections, strategy, query stages, retriever,
merge, depth and the answer's passage budget. The CLI, the service, the demo, the benchmarks and
``run-incremental`` all describe their pipeline with a :class:`PipelineSpec` and build it with
:func:`convrag.pipeline.build_pipeline`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError
from ..queries.stages import PRIMARY, check_queries

#: the whole passages' token budget of an answer that shows passages whole (the ``first`` prompt):
#: on a CPU the prompt is read at about 70 tokens/s. A compressing answer (the default) needs none:
#: it keeps its own budget of passage sentences (``CompressionSettings.max_tokens``)
ANSWER_TOKENS = 1000
ANSWER_PASSAGES = 5
RETRIEVERS = ("auto", "bm25", "dense", "hybrid")


@dataclass(frozen=True)
class PipelineSpec:
    """``queries``: the strategy's query first, then extra query stages fused with it (RRF), e.g.
    ``("strategy", "summary")``. ``retriever="auto"`` is hybrid (:func:`~convrag.pipeline.build.choose_retriever`);
    with several collections ``route`` searches only those the turn is about
    (:mod:`convrag.retrieve.routing`). ``k``: passages retrieved per collection and query."""

    collections: tuple[str, ...]
    strategy: str = "progressive"
    queries: tuple[str, ...] = (PRIMARY,)
    retriever: str = "auto"
    merge: str = "enhanced"
    k: int = 10
    #: the merged passages' tokens together; None: ``ANSWER_TOKENS`` where the answer shows passages
    #: whole, no limit where it compresses them (:func:`~convrag.pipeline.build.passage_budget`)
    answer_tokens: int | None = None
    answer_passages: int = ANSWER_PASSAGES
    reformulations: int = 2
    route: bool = True  # with several collections, search only those the turn is about
    answer: str = "default"  # how answers are written: a name in convrag.generate.answer.ANSWER_PRESETS
    options: dict[str, object] = field(default_factory=dict, compare=False, hash=False)  # strategy options

    def __post_init__(self) -> None:
        if not self.collections:
            raise ConfigError("choose at least one collection")
        if len(set(self.collections)) != len(self.collections):
            raise ConfigError(f"a collection is named twice in {list(self.collections)}")
        check_queries(self.queries)
        if self.retriever not in RETRIEVERS:
            raise ConfigError(f"unknown retriever {self.retriever!r}; expected one of {', '.join(RETRIEVERS)}")
        if not 1 <= self.k <= 1000:
            raise ConfigError(f"k is the number of passages per collection, 1 to 1000; got {self.k}")
        from ..generate.answer import ANSWER_PRESETS

        if self.answer not in ANSWER_PRESETS:
            raise ConfigError(f"unknown answer settings {self.answer!r}; expected one of {', '.join(ANSWER_PRESETS)}")
        if self.answer_passages < 1 or (self.answer_tokens is not None and self.answer_tokens < 50):
            raise ConfigError("the answer needs at least one passage and 50 tokens of budget")
