from convrag.queries.strategy import StrategySource
from convrag.strategies.full_rewrite import FullRewrite
from tests.helpers import CARDINALS, ScriptedLLM, make_task


def test_rewrites_once_in_conversation_order_and_keeps_traces():
    tasks = [make_task("Which stadium is it?", CARDINALS[:2], task_id="c<::>3"), make_task("Do they travel?", CARDINALS[:1], task_id="c<::>2")]
    tasks[0] = tasks[0].__class__(**{**tasks[0].__dict__, "turn": 3})
    tasks[1] = tasks[1].__class__(**{**tasks[1].__dict__, "turn": 2})
    llm = ScriptedLLM(rewrite=["Do the Arizona Cardinals travel?", "Which stadium is the Arizona Cardinals' stadium?"])
    source = StrategySource(FullRewrite(llm))
    queries = source.queries(tasks)
    assert queries == {"c<::>3": "Which stadium is the Arizona Cardinals' stadium?", "c<::>2": "Do the Arizona Cardinals travel?"}
    assert source.queries(tasks) == queries and len(llm.requests) == 2  # a second retriever reuses the rewrites
    assert set(source.traces) == {"c<::>2", "c<::>3"}


def test_workers_rewrite_conversations_concurrently():
    tasks = [make_task("Do they travel?", CARDINALS[:1], task_id=f"c{i}<::>2") for i in range(6)]
    tasks = [t.__class__(**{**t.__dict__, "conversation_id": f"c{i}"}) for i, t in enumerate(tasks)]
    source = StrategySource(FullRewrite(ScriptedLLM(rewrite=["Do the Arizona Cardinals travel?"] * 6)), workers=3)
    assert set(source.queries(tasks).values()) == {"Do the Arizona Cardinals travel?"}
