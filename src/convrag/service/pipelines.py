"""Which pipeline answers a request, built once per set of collection versions.

An OpenAI ``model`` name selects a pipeline configured in the settings, or ``collection:NAME``
(``collection:a+b`` for several) for any collection of the service. Pipelines are cached and
rebuilt when one of their collections gets a new version (an upload finished; Milvus collections,
which have no versions, are forgotten when a job changes them, :meth:`Pipelines.forget`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ..llm.base import LLM
from ..pipeline import Pipeline
from ..retrieve.multi import Unavailable
from .backends import ServiceCollections
from .links import ServedLinks
from .settings import PipelineConfig, ServiceSettings

COLLECTION_PREFIX = "collection:"
MAX_CACHED = 32


class UnknownModel(LookupError):
    pass


@dataclass(frozen=True)
class Route:
    """What a request runs: collections (those without documents yet are left out and named)."""

    name: str
    config: PipelineConfig


class Pipelines:
    def __init__(self, settings: ServiceSettings, collections: ServiceCollections, llm: LLM) -> None:
        self.settings = settings
        self.collections = collections
        self.llm = llm
        self._cache: dict[tuple[object, ...], Pipeline] = {}
        self._lock = threading.Lock()

    def models(self, collection_names: Sequence[str]) -> list[tuple[str, str]]:
        """(model id, description) for every configured pipeline and every collection."""
        out = [(name, p.description or f"pipeline over {', '.join(p.collections)}") for name, p in self.settings.pipelines.items()]
        out += [(f"{COLLECTION_PREFIX}{c}", f"the collection {c}") for c in collection_names]
        return out

    def route(self, model: str, known: Sequence[str]) -> Route:
        if model in self.settings.pipelines:
            return Route(model, self.settings.pipelines[model])
        if model.startswith(COLLECTION_PREFIX):
            # each once, as the API's lists of collections: "a+a" made the pipeline refuse itself, a 500
            names = list(dict.fromkeys(n for n in model[len(COLLECTION_PREFIX):].split("+") if n))
            missing = [n for n in names if n not in known]
            if names and not missing:
                return Route(model, self.settings.pipeline(names))
        raise UnknownModel(
            f"unknown model {model!r}: use a configured pipeline ({', '.join(self.settings.pipelines) or 'none configured'}) "
            f"or collection:NAME with one of: {', '.join(known) or 'no collections yet'}"
        )

    def _versions(self, names: Sequence[str]) -> dict[str, str | None]:
        """Each collection's live version, looked up once (a file read, or a Milvus count, per collection)."""
        return {n: self.collections.version(n) for n in names}

    def ready(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """The collections that have an index, and those that have no documents yet."""
        versions = self._versions(names)
        return [n for n in names if versions[n] is not None], [n for n in names if versions[n] is None]

    def get(self, config: PipelineConfig, k: int | None = None) -> Pipeline:
        """The pipeline for ``config`` over its collections' live versions (``k`` overrides its depth)."""
        live = {n: v for n, v in self._versions(config.collections).items() if v is not None}
        spec = config.spec(list(live), k)
        key = (tuple(live.items()), spec)
        with self._lock:
            pipeline = self._cache.get(key)
            if pipeline is None:
                pipeline = self.collections.pipeline(spec, self.llm)
                for c in pipeline.collections:  # a damaged one stays recognisable to damage()
                    if not isinstance(c.retriever, Unavailable):
                        c.retriever = ServedLinks(c.retriever)
                self._cache[key] = pipeline
                while len(self._cache) > MAX_CACHED:  # oldest first
                    self._cache.pop(next(iter(self._cache)))
            return pipeline

    def damage(self, collection: str, version: str | None) -> str | None:
        """Why ``collection`` at ``version`` could not be searched, when a cached pipeline found it
        damaged (a collection's info shows it; a new version, as an upload builds, has none)."""
        with self._lock:
            for (versions, _), pipeline in self._cache.items():  # type: ignore[misc]
                if (collection, version) in versions:
                    for c in pipeline.collections:
                        if c.name == collection and isinstance(c.retriever, Unavailable):
                            return str(c.retriever.error)
        return None

    def forget(self, collection: str) -> None:
        """Drop cached pipelines that read ``collection`` (it changed or was deleted)."""
        with self._lock:
            self._cache = {key: v for key, v in self._cache.items() if all(n != collection for n, _ in key[0])}  # type: ignore[union-attr]
