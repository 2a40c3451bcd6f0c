"""Strategies by name, so that the CLI, the evaluation, the pipeline and the service pick one with a string.

Besides the six built in, a strategy of your own is named in three ways, everywhere a name is taken
(``convrag eval -s``, ``ask``, ``chat``, ``serve``, ``PipelineSpec``):

* ``package.module:attr`` or ``path/to/file.py:attr``: imported when first named;
* a name an installed package declares in the ``convrag.strategies`` entry-point group;
* :func:`register_strategy` from Python.

``attr`` is a strategy class or a factory returning a strategy (an object with a ``name`` and a
``rewrite(task) -> Rewrite``). It is called with the keyword arguments it declares of ``llm`` and
``embedder``, so ``def __init__(self, llm)`` gets the run's LLM and a class without parameters gets
nothing; declaring ``llm`` is what makes the evaluation load a model for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import threading
import time
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, NamedTuple

from ..embeddings import Embedder
from ..errors import ConfigError
from ..llm.base import LLM
from ..types import Task
from .base import Rewrite, Strategy, Trace, finish, start_trace
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
BUILT_IN = tuple(STRATEGIES)

#: the strategies that are given an LLM (every one but ``last_turn``, and each added one that declares ``llm``)
NEEDS_LLM: set[str] = set(STRATEGIES) - {"last_turn"}

#: the entry-point group an installed package declares its strategies in
ENTRY_POINT_GROUP = "convrag.strategies"

#: what a strategy's own ``name`` may be: it names its output folder (``strategies/<name>/``)
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_lock = threading.Lock()
_entry_points_read = False


def register_strategy(name: str, factory: Callable[..., Any], *, needs_llm: bool | None = None) -> None:
    """Make ``factory`` (a strategy class or a function returning a strategy) available as ``name``.

    ``factory`` is called with the keyword arguments it declares of ``llm`` and ``embedder``, and with
    the pipeline's strategy options; ``needs_llm`` defaults to whether it declares ``llm``. A built-in
    name cannot be taken: the benchmark tables would no longer say which strategy they measured."""
    if name in BUILT_IN:
        raise ConfigError(f"{name!r} is a built-in strategy; register yours under another name")
    accepted = _parameters(factory)
    wants_llm = "llm" in accepted if needs_llm is None else needs_llm

    def build(llm: LLM | None, embedder: Embedder | None, **options: Any) -> Strategy:
        given = {"llm": llm, "embedder": embedder}
        kwargs = {k: v for k, v in given.items() if k in accepted or "**" in accepted}
        strategy = factory(**kwargs, **options)
        _check_built(name, strategy)
        return OwnStrategy(name, strategy)

    build.__wrapped__ = factory  # type: ignore[attr-defined]  # what offered_strategies describes

    with _lock:
        STRATEGIES[name] = build
        if wants_llm:
            NEEDS_LLM.add(name)
        else:
            NEEDS_LLM.discard(name)


def is_strategy(name: str) -> bool:
    """Whether ``name`` names a strategy rather than another query source (loading it if it is an
    installed one). A ``module:attr`` is one (its import errors are raised, not taken for "no"), a
    ``.jsonl`` file is not."""
    if ":" in name and not name.endswith(".jsonl"):
        check_strategy(name)
        return True
    return _available(name)


def check_strategy(name: str) -> str:
    """``name`` when it names a strategy (a ``module:attr`` is imported and registered); else a
    :class:`ConfigError` listing them."""
    if ":" in name and name not in STRATEGIES:
        register_strategy(name, _import(name))
    if not _available(name):
        raise ConfigError(f"unknown strategy {name!r}; expected one of {', '.join(STRATEGIES)}, "
                          "or your own as package.module:Class or path/to/file.py:Class")
    return name


def check_known_strategy(name: str) -> str:
    """``name`` when it names a strategy already available (built in, installed, or registered, e.g. by
    the server's own settings); never imports a ``module:attr``. What a request to the service may name:
    a client must not make the server import modules or run files of its choosing."""
    if not _available(name):
        raise ConfigError(f"unknown strategy {name!r}; this server offers {', '.join(STRATEGIES)}")
    return name


def _available(name: str) -> bool:
    """Whether ``name`` is registered, once installed packages' strategies are read (never imports a ``module:attr``)."""
    if name not in STRATEGIES:
        _read_entry_points()
    return name in STRATEGIES


class Offered(NamedTuple):
    """A strategy as the service lists it."""

    name: str
    built_in: bool
    needs_llm: bool
    description: str


def offered_strategies() -> list[Offered]:
    """Every strategy available by name (built in, installed, registered), with the first sentence
    of what its module or class says about itself."""
    _read_entry_points()
    with _lock:
        named = dict(STRATEGIES)
        needs = set(NEEDS_LLM)
    return [Offered(name, name in BUILT_IN, name in needs, _description(name, factory)) for name, factory in named.items()]


def _description(name: str, factory: Callable[..., Any]) -> str:
    source = sys.modules.get(f"{__package__}.{name}") if name in BUILT_IN else getattr(factory, "__wrapped__", factory)
    doc = inspect.getdoc(source) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return re.sub(r"^``[^`]+``:\s*", "", first)


def make_strategy(name: str, llm: LLM | None = None, embedder: Embedder | None = None, **options: Any) -> Strategy:
    """A strategy by name; ``llm`` is required by every strategy that declares one (all built-in ones but ``last_turn``)."""
    check_strategy(name)
    if name in NEEDS_LLM and llm is None:
        raise ConfigError(f"strategy {name!r} needs an LLM")
    return STRATEGIES[name](llm, embedder, **options)


def _parameters(factory: Callable[..., Any]) -> set[str]:
    """The keyword names ``factory`` takes (``"**"`` when it takes any)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or an extension type: give it nothing
        return set()
    return {"**" if p.kind is p.VAR_KEYWORD else p.name for p in parameters if p.kind is not p.VAR_POSITIONAL}


def _check_built(name: str, strategy: object) -> None:
    """A strategy of one's own must have the shape the evaluation and the pipeline rely on."""
    own = getattr(strategy, "name", None)
    if not callable(getattr(strategy, "rewrite", None)) or not isinstance(own, str):
        raise ConfigError(f"strategy {name!r} made a {type(strategy).__name__}, which has no name and "
                          "rewrite(task) method; a strategy needs both")
    if not _SAFE_NAME.fullmatch(own) or own in BUILT_IN:
        raise ConfigError(f"strategy {name!r} calls itself {own!r}: its name must be letters, digits, '_', '.' "
                          "or '-' (at most 64) and not a built-in strategy's, since it names its results")


class OwnStrategy:
    """A strategy of one's own, its answers checked: everything downstream (the evaluation's files,
    the pipeline's trace) reads a :class:`Rewrite`. A ``rewrite`` that returns the query as a plain
    string is taken, with a trace made for it (a quick experiment need not build one); anything else
    is one clear error naming the strategy, where it had been an ``AttributeError`` deep in the
    evaluation. Every other attribute is the strategy's own."""

    def __init__(self, registered: str, strategy: Any) -> None:
        self._registered = registered
        self._strategy = strategy
        self.name: str = strategy.name

    def rewrite(self, task: Task) -> Rewrite:
        started = time.perf_counter()
        out = self._strategy.rewrite(task)
        if isinstance(out, str) and out.strip():
            trace, _ = start_trace(task, self.name)
            trace.details["own_trace"] = "none: rewrite() returned the query as a string"
            return finish(trace, started, out, "own")
        if isinstance(out, Rewrite) and isinstance(out.query, str) and out.query.strip() and isinstance(out.trace, Trace):
            return out
        what = "an empty query" if isinstance(out, str | Rewrite) else f"a {type(out).__name__}"
        raise ConfigError(f"strategy {self._registered!r}: rewrite() of task {task.task_id or '(unnamed)'} returned {what}; "
                          "expected a non-empty query string, or convrag.strategies.base.Rewrite "
                          "(finish(trace, started, query, stage) makes one; see examples/previous_question.py)")

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or attribute == "_strategy":  # copy and pickle look these up before __init__
            raise AttributeError(attribute)
        return getattr(self._strategy, attribute)


def _import(spec: str) -> Callable[..., Any]:
    """The object a ``module:attr`` or ``file.py:attr`` names, with a clear error for each way it can be wrong."""
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise ConfigError(f"strategy {spec!r}: expected package.module:Class or path/to/file.py:Class")
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            module = _load_file(Path(where))
        else:
            module = importlib.import_module(where)
    except ConfigError:
        raise
    except Exception as exc:  # the user's code: an ImportError, or anything its import raised
        raise ConfigError(f"strategy {spec!r}: cannot import {where}: {type(exc).__name__}: {exc}") from exc
    found = getattr(module, attr, None)
    if not callable(found):
        raise ConfigError(f"strategy {spec!r}: {where} has no class or function {attr!r}")
    return found


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"no strategy file {path}")
    module_name = f"convrag_user_strategy_{abs(hash(str(path.resolve())))}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _read_entry_points() -> None:
    """Register the strategies installed packages declare (once; a broken one is an error when named)."""
    global _entry_points_read
    with _lock:
        if _entry_points_read:
            return
        _entry_points_read = True
        declared = list(entry_points(group=ENTRY_POINT_GROUP))
    for point in declared:
        if point.name in STRATEGIES:
            continue
        try:
            register_strategy(point.name, point.load())
        except Exception as exc:
            message = f"strategy {point.name!r} from {point.value}: {type(exc).__name__}: {exc}"

            def broken(*args: Any, _message: str = message, **kwargs: Any) -> Strategy:
                raise ConfigError(_message)

            with _lock:
                STRATEGIES[point.name] = broken
