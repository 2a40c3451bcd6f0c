"""Retrievers by name, so a CLI option or config value can pick one."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..embeddings import Embedder
from ..errors import ConfigError
from ..fusion import get_fusion
from ..index.collection import Collection
from .base import Retriever
from .bm25 import BM25Retriever
from .dense import DEFAULT_WINDOWS, DenseRetriever, check_windows
from .hybrid import DEFAULT_FUSION, HybridRetriever
from .prf import RM3, Rocchio

PRF = ("none", "rm3", "rocchio", "both")


def _bm25(collection: Collection, prf: str = "none") -> Retriever:
    return RM3(collection) if prf in ("rm3", "both") else BM25Retriever(collection)


def _dense(collection: Collection, embedder: Embedder | None = None, prf: str = "none", **options: Any) -> Retriever:
    dense = DenseRetriever(collection, embedder, **options)
    return Rocchio(dense) if prf in ("rocchio", "both") else dense


def _hybrid(collection: Collection, embedder: Embedder | None = None, prf: str = "none", **options: Any) -> Retriever:
    dense = {k: options.pop(k) for k in ("windows",) if k in options}
    return HybridRetriever(_bm25(collection, prf), _dense(collection, embedder, prf, **dense), **options)


def _check_prf(prf: str) -> str:
    if prf not in PRF:
        raise ConfigError(f"unknown pseudo-relevance feedback {prf!r}; expected one of {', '.join(PRF)}")
    return prf


#: ``prf``: pseudo-relevance feedback (``rm3`` for BM25, ``rocchio`` for dense, ``both``), an option
RETRIEVERS: dict[str, Callable[..., Retriever]] = {
    "bm25": lambda collection, embedder=None, prf="none", **options: _bm25(collection, _check_prf(prf)),
    "dense": lambda collection, embedder=None, prf="none", **options: _dense(collection, embedder, _check_prf(prf), **options),
    "hybrid": lambda collection, embedder=None, prf="none", **options: _hybrid(collection, embedder, _check_prf(prf), **options),
}


def check_retrievers(names: Sequence[str], options: Mapping[str, Any]) -> None:
    """Refuse an unknown retriever or option value before anything is built or searched: a grid meets
    a retriever only when its turn comes, and a typo found after an hour of runs costs the hour. An
    option no chosen retriever takes (``--fusion`` with ``-r bm25``) is still checked."""
    for name in names:
        _factory(name)
    _check_prf(options.get("prf", "none"))
    get_fusion(options.get("fusion", DEFAULT_FUSION))
    check_windows(options.get("windows", DEFAULT_WINDOWS))


def make_retriever(name: str, collection: Collection, embedder: Embedder | None = None, **options: Any) -> Retriever:
    """Build the retriever ``name`` over ``collection`` (``options`` go to its constructor)."""
    return _factory(name)(collection, embedder, **options)


def _factory(name: str) -> Callable[..., Retriever]:
    try:
        return RETRIEVERS[name]
    except KeyError:
        raise ConfigError(f"unknown retriever {name!r}; expected one of {', '.join(RETRIEVERS)}") from None
