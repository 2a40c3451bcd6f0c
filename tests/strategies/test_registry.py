"""Strategies of one's own: named as ``module:attr`` or ``file.py:attr``, declared by an installed
package (entry points), or registered from Python; checked like the built-in ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from convrag.errors import ConfigError
from convrag.strategies import registry
from convrag.strategies.registry import NEEDS_LLM, STRATEGIES, check_strategy, is_strategy, make_strategy, register_strategy
from convrag.types import Message, Task
from tests.helpers import ScriptedLLM

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "previous_question.py") + ":PreviousQuestion"
OWN = "tests.strategies.own_strategies"
FOLLOW_UP = Task("t", "c", 2, "", "How much does it cost?", (Message("user", "Tell me about the ferry pass."), Message("agent", "It covers all routes.")))


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    """Each test starts from the built-in strategies."""
    strategies, needs, read = dict(STRATEGIES), set(NEEDS_LLM), registry._entry_points_read
    yield
    STRATEGIES.clear()
    STRATEGIES.update(strategies)
    NEEDS_LLM.clear()
    NEEDS_LLM.update(needs)
    registry._entry_points_read = read


def test_a_strategy_from_a_file_needs_no_model_when_it_declares_none() -> None:
    strategy = make_strategy(EXAMPLE)  # no llm: it declares none
    assert EXAMPLE not in NEEDS_LLM
    first = strategy.rewrite(Task("t", "c", 1, "", "What does the ferry pass cover?", ()))
    assert first.query == "What does the ferry pass cover?" and first.trace.stage == "as_asked"
    result = strategy.rewrite(FOLLOW_UP)
    assert result.query == "How much does it cost? Tell me about the ferry pass."
    assert result.trace.strategy == "previous_question" and result.trace.context == [{"turn": 1, "user": "Tell me about the ferry pass."}]


def test_a_strategy_from_a_module_gets_the_model_it_declares_and_the_options() -> None:
    name = f"{OWN}:WithModel"
    with pytest.raises(ConfigError, match="needs an LLM"):
        make_strategy(name)
    llm = ScriptedLLM()
    strategy = make_strategy(name, llm, prefix="ferry: ")
    assert strategy.llm is llm and strategy.rewrite(FOLLOW_UP).query == "ferry: How much does it cost?"  # type: ignore[attr-defined]
    assert check_strategy(name) == name and is_strategy(name) and not is_strategy("lastturn") and not is_strategy("q.jsonl")


@pytest.mark.parametrize(("name", "message"), [
    ("tests.strategies.nowhere:X", "cannot import tests.strategies.nowhere: ModuleNotFoundError"),
    (f"{OWN}:Missing", "has no class or function 'Missing'"),
    (f"{OWN}:NOT_CALLABLE", "has no class or function 'NOT_CALLABLE'"),
    ("no/such/file.py:X", "no strategy file no/such/file.py"),
    (":X", "expected package.module:Class"),
    (f"{OWN}:NoRewrite", "which has no name and rewrite(task) method"),
    (f"{OWN}:not_a_class_or_function", "made a NoneType"),
    (f"{OWN}:CallsItselfProgressive", "calls itself 'progressive'"),
    ("progresive", "unknown strategy 'progresive'; expected one of last_turn, full_rewrite"),
])
def test_a_strategy_that_cannot_be_used_is_one_clear_error(name: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_strategy(name, ScriptedLLM())
    assert message in str(caught.value)


def test_a_query_returned_as_a_string_is_taken_with_a_trace_made_for_it() -> None:
    result = make_strategy(f"{OWN}:ReturnsText").rewrite(FOLLOW_UP)
    assert (result.query, result.trace.stage, result.trace.strategy) == ("ferry How much does it cost?", "own", "returns_text")
    assert result.trace.original_query == "How much does it cost?" and "own_trace" in result.trace.details


@pytest.mark.parametrize(("attr", "returned"), [("ReturnsNothing", "returned a NoneType"), ("ReturnsEmptyRewrite", "returned an empty query")])
def test_a_rewrite_that_returns_no_query_is_one_clear_error(attr: str, returned: str) -> None:
    """It was an AttributeError ("'NoneType' object has no attribute 'query'") in the evaluation."""
    strategy = make_strategy(f"{OWN}:{attr}", ScriptedLLM())
    with pytest.raises(ConfigError) as caught:
        strategy.rewrite(FOLLOW_UP)
    assert f"strategy '{OWN}:{attr}': rewrite() of task t {returned}" in str(caught.value)


def test_an_own_strategy_is_evaluated_the_same_way_when_it_returns_a_string() -> None:
    from convrag.queries.strategy import StrategySource

    source = StrategySource(make_strategy(f"{OWN}:ReturnsText"))
    assert source.queries([FOLLOW_UP]) == {"t": "ferry How much does it cost?"} and source.traces["t"].stage == "own"


def test_a_built_in_name_cannot_be_taken() -> None:
    with pytest.raises(ConfigError, match="built-in"):
        register_strategy("progressive", lambda: None)


def test_an_installed_package_declares_strategies_by_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `pip install` of a package with `[project.entry-points."convrag.strategies"]` leaves behind."""
    (tmp_path / "ferry_strategies.py").write_text(
        "from convrag.strategies.base import finish, start_trace\n"
        "class Ferry:\n"
        "    name = 'ferry'\n"
        "    def rewrite(self, task):\n"
        "        trace, started = start_trace(task, self.name)\n"
        "        return finish(trace, started, 'ferry ' + task.question, 'ferry')\n"
    )
    info = tmp_path / "ferry_strategies-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ferry-strategies\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[convrag.strategies]\nferry = ferry_strategies:Ferry\nbroken = ferry_strategies:Gone\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._entry_points_read = False
    assert make_strategy("ferry").rewrite(FOLLOW_UP).query == "ferry How much does it cost?"
    with pytest.raises(ConfigError, match="strategy 'broken' from ferry_strategies:Gone: AttributeError"):
        make_strategy("broken")


def test_rewrite_runs_a_strategy_of_ones_own(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from convrag.cli.main import app

    history = tmp_path / "chat.json"
    history.write_text(json.dumps([{"role": "user", "content": "Tell me about the ferry pass."}, {"role": "assistant", "content": "It covers all routes."}]))
    result = CliRunner().invoke(app, ["rewrite", "How much does it cost?", "--history", str(history), "-s", EXAMPLE, "--trace"])
    assert result.exit_code == 0, result.output
    assert "How much does it cost? Tell me about the ferry pass." in result.output and "previous_question" in result.output


def test_an_own_strategy_can_be_copied() -> None:
    """The checking wrapper looks attributes up on the strategy it wraps; copy and pickle look some up
    before it has one, which must not recurse."""
    import copy
    import pickle

    strategy = make_strategy(f"{OWN}:ReturnsText")
    assert copy.deepcopy(strategy).rewrite(FOLLOW_UP).query == "ferry How much does it cost?"
    assert pickle.loads(pickle.dumps(strategy)).name == "returns_text"
