"""Strategies by name, so that the CLI, the evaluation and the pipeline pick one with a string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..embeddings import Embedder
from ..errors import ConfigError
from ..llm.base import LLM
from .base import Strategy
from .full_rewrite import FullRewrite
from .last_turn import LastTurn
from .mmr_cluster import MMRCluster
from .progressive import Progressive
from .summary import Summary
from .targeted import Targeted

#: name -> factory(llm, embedder, **options); ``last_turn`` needs neither
STRATEGIES: dict[str, Callable[..., Strategy]] = {
    "last_turn": lambda llm, embedder, **o: LastTurn(),
    "full_rewrite": lambda llm, embedder, **o: FullRewrite(llm, **o),
    "targeted": lambda llm, embedder, **o: Targeted(llm, embedder, **o),
    "mmr_cluster": lambda llm, embedder, **o: MMRCluster(llm, embedder, **o),
    "summary": lambda llm, embedder, **o: Summary(llm, **o),
    "progressive": lambda llm, embedder, **o: Progressive(llm, embedder, **o),
}

NEEDS_LLM = frozenset(STRATEGIES) - {"last_turn"}


def check_strategy(name: str) -> str:
    """``name`` when it names a strategy; else a :class:`ConfigError` listing them."""
    if name not in STRATEGIES:
        raise ConfigError(f"unknown strategy {name!r}; expected one of {', '.join(STRATEGIES)}")
    return name


def make_strategy(name: str, llm: LLM | None = None, embedder: Embedder | None = None, **options: Any) -> Strategy:
    """A strategy by name; ``llm`` is required by every strategy but ``last_turn``."""
    check_strategy(name)
    if name in NEEDS_LLM and llm is None:
        raise ConfigError(f"strategy {name!r} needs an LLM")
    return STRATEGIES[name](llm, embedder, **options)
