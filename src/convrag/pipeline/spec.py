"""What a pipeline is made of, as one value: collections, strategy, query stages, retriever,
merge, depth and the answer's passage budget. The CLI, the service, the demo, the benchmarks and
``run-incremental`` all describe their pipeline with a :class:`PipelineSpec` and build it with
:func:`convrag.pipeline.build_pipeline`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError
from ..queries.stages import PRIMARY, check_queries

#: the merged passages' token budget, counted on whole passages: on a CPU the prompt is read at about
#: 70 tokens/s. With long passages it lets only one or two through (see ``PipelineSpec.answer_tokens``)
ANSWER_TOKENS = 1000
ANSWER_PASSAGES = 5
RETRIEVERS = ("auto", "bm25", "dense", "hybrid")


def answer_budget(tokens: int) -> int | None:
    """:attr:`PipelineSpec.answer_tokens` from a setting where 0 lifts the budget, as 0 turns the decline
    gate off: a command-line option and an environment variable have no None to give."""
    return tokens or None


def check_answer(name: str) -> str:
    """``name`` if it names answer settings (:data:`convrag.generate.answer.ANSWER_PRESETS`), else a ConfigError."""
    from ..generate.answer import ANSWER_PRESETS

    if name not in ANSWER_PRESETS:
        raise ConfigError(f"unknown answer settings {name!r}; expected one of {', '.join(ANSWER_PRESETS)}")
    return name


def check_decline_below(floor: float | None, answer: str) -> None:
    """A ConfigError unless ``floor`` can be the decline gate's relevance floor for the answer
    settings ``answer``: None (theirs), or a cosine from 0 to 1 for settings that have the gate."""
    from ..generate.answer import ANSWER_PRESETS

    if floor is None:
        return
    if not 0.0 <= floor <= 1.0:
        raise ConfigError(f"the decline floor is a cosine from 0 to 1; got {floor}")
    if ANSWER_PRESETS[answer].decline is None:
        raise ConfigError(f"the answer settings {answer!r} have no decline gate to set a floor for")


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
    #: the merged passages' tokens together, counted on whole passages even where the answer shows only
    #: their best sentences; None: no such budget, all ``answer_passages`` reach the compression. That
    #: read more sentences but was no better on MT-RAG's dev half and, on the test half, slower to the
    #: first token (+0.46 s in a replayed chat), so 1000 stays (docs/benchmarks.md, "All five passages
    #: to the compression"); a collection of long passages (512-token chunks) gets one or two through,
    #: and the best passage is taken even where it alone is over the budget
    answer_tokens: int | None = ANSWER_TOKENS
    answer_passages: int = ANSWER_PASSAGES
    reformulations: int = 2
    route: bool = True  # with several collections, search only those the turn is about
    answer: str = "default"  # how answers are written: a name in convrag.generate.answer.ANSWER_PRESETS
    #: the decline gate's relevance floor in place of the answer settings' (0.45, chosen on MT-RAG's
    #: dev half): a turn whose passages hold no sentence this close to the question is declined
    #: without a model call. A collection whose answers are phrased far from its users' questions
    #: (the trace's "best cosine 0.43 < 0.45") may want it lower; 0 turns the gate off. None: the
    #: answer settings' own
    decline_below: float | None = None
    options: dict[str, object] = field(default_factory=dict, compare=False, hash=False)  # strategy options

    def __post_init__(self) -> None:
        if not self.collections:
            raise ConfigError("choose at least one collection")
        if len(set(self.collections)) != len(self.collections):
            raise ConfigError(f"a collection is named twice in {list(self.collections)}")
        from ..strategies.registry import check_strategy

        check_strategy(self.strategy)
        check_queries(self.queries)
        if self.retriever not in RETRIEVERS:
            raise ConfigError(f"unknown retriever {self.retriever!r}; expected one of {', '.join(RETRIEVERS)}")
        if not 1 <= self.k <= 1000:
            raise ConfigError(f"k is the number of passages per collection, 1 to 1000; got {self.k}")
        check_answer(self.answer)
        if self.answer_passages < 1 or (self.answer_tokens is not None and self.answer_tokens < 50):
            raise ConfigError(f"the answer needs at least one passage and 50 tokens of budget; got "
                              f"{self.answer_passages} passages and {self.answer_tokens} tokens")
        check_decline_below(self.decline_below, self.answer)
