"""The pipeline end to end: strategy, search over several collections, merge, cited answer."""

import pytest
from pydantic import TypeAdapter

from convrag.cli.chat import chat_loop
from convrag.eval.runner import run_retrieval
from convrag.generate.answer import ANSWER_PRESETS, DECLINE, AnswerGenerator
from convrag.generate.decline import DeclineSettings
from convrag.history import Budget
from convrag.merge import MergeSettings
from convrag.pipeline import Pipeline, PipelineSpec, build_pipeline
from convrag.pipeline.trace import TurnTraceDict
from convrag.queries.stages import make_query_stages
from convrag.queries.strategy import StrategySource
from convrag.retrieve.multi import CollectionSearch, open_collections
from convrag.strategies import make_strategy
from convrag.strategies.base import finish, start_trace
from convrag.types import Message
from tests.helpers import TINY, Failing, ScriptedLLM


class Empty:
    name = "empty"

    def search(self, queries, k=10):  # type: ignore[no-untyped-def]
        return [[] for _ in queries]


def test_a_failed_collection_is_traced_and_duplicates_are_merged(tiny_collection):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    collections = [CollectionSearch("docs", bm25), CollectionSearch("mirror", bm25), CollectionSearch("broken", Failing())]
    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
    pipeline = Pipeline(collections, make_strategy("last_turn"), generator=AnswerGenerator(llm), merge_settings=MergeSettings(max_tokens=500))
    result = pipeline.answer([Message("user", "How much does passport renewal cost?")])
    assert result.trace.search.failures == {"broken": "RuntimeError: index file is corrupt"}
    assert result.citations[0].passage_id == "p2" and result.citations[0].collection == "docs"
    ids = [r.hit.passage_id for r in result.merged.results]
    assert len(ids) == len(set(ids)) and result.merged.results[0].also_in == ("mirror",)
    assert {d.reason for d in result.merged.dropped} >= {"duplicate"}
    assert set(result.trace.timings_s) == {"strategy", "search", "merge", "answer", "total"}
    assert result.retrieved["docs"] and "broken" not in result.retrieved


def test_empty_results_everywhere_decline_without_a_model_call():
    llm = ScriptedLLM()
    pipeline = Pipeline([CollectionSearch("a", Empty()), CollectionSearch("b", Empty())], make_strategy("last_turn"), generator=AnswerGenerator(llm))
    result = pipeline.answer([Message("user", "Anything about zebras?")])
    assert result.text == DECLINE and result.declined and result.citations == [] and llm.requests == []


def test_a_social_turn_is_replied_to_without_a_search_or_a_model_call(tiny_collection):
    """"Thanks, that's helpful!" cost a rejected rewrite, a search and an answer call (18.6 s on two
    cores) to be declined; the question after it is searched with the exchange before the thanks."""
    from convrag.social import REPLIES

    llm = ScriptedLLM(answer=["Processing takes 6 to 8 weeks [1]."], rewrite=["How long does passport renewal take?"])
    pipeline = build_pipeline(PipelineSpec(("tiny",), retriever="bm25"), llm=llm, opened={"tiny": tiny_collection})
    history = [Message("user", "How much does passport renewal cost?"), Message("agent", "130 dollars [1].")]
    thanks = [*history, Message("user", "Thanks, that's helpful!")]
    streamed = list(pipeline.stream(thanks))
    assert streamed[0] == REPLIES["thanks"] and streamed[-1].text == REPLIES["thanks"] and llm.requests == []
    result = streamed[-1]
    assert not result.declined and result.citations == [] and result.trace.search is None and result.trace.strategy is None
    assert result.trace.to_dict()["social"] == {"kind": "thanks", "reply": REPLIES["thanks"]}
    TypeAdapter(TurnTraceDict).validate_python(result.trace.to_dict())
    follow_up = pipeline.answer([*thanks, Message("agent", result.text), Message("user", "How long does it take?")])
    assert follow_up.trace.strategy.stage == "2" and "User: How much does passport renewal cost?" in llm.last_user_prompt("rewrite")
    assert "Thanks" not in llm.last_user_prompt("rewrite") and "Thanks" not in llm.last_user_prompt("answer")
    # the first prompt, kept for comparison with the benchmark's, answers every turn
    first = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn", retriever="bm25", answer="first"), llm=ScriptedLLM(answer=["Welcome."]),
                           opened={"tiny": tiny_collection})
    assert first.answer(thanks).trace.social is None


def test_a_stop_while_the_question_is_searched_ends_the_turn_before_the_answer_is_begun(tiny_collection):
    """A "Stop" was seen only at the answer's first piece, after the model had read the whole answer
    prompt (seconds on a CPU), which held the model that long for an answer nobody wanted."""
    import threading

    stop, pressed = threading.Event(), []

    class StoppedWhileSearching:
        name = "bm25"

        def search(self, queries, k=10):  # type: ignore[no-untyped-def]
            if not pressed:  # the user presses Stop now, once
                pressed.append(stop.set())
            return open_collections({"x": tiny_collection}, "bm25")[0].retriever.search(queries, k)

    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
    pipeline = Pipeline([CollectionSearch("docs", StoppedWhileSearching())], make_strategy("last_turn"), generator=AnswerGenerator(llm))
    question = [Message("user", "How much does passport renewal cost?")]
    assert list(pipeline.stream(question, stop=stop)) == [] and llm.requests == []
    stop.clear()
    *_, result = pipeline.stream(question, stop=stop)  # not stopped: answered
    assert result.citations[0].passage_id == "p2" and len(llm.requests) == 1


def test_a_stop_reaches_a_backend_still_reading_the_answer_prompt(tiny_collection, tmp_path):
    """The pipeline looked at a stop only between the answer's pieces, so a backend reading the
    answer's prompt (the local model: seconds on a CPU before its first piece) could not be told.
    Now the stop reaches a backend that says it looks at one, through the completion cache too, and
    the turn ends with nothing; nothing is cached. Without a stop (``eval``) the backend is asked as
    before."""
    import threading

    from convrag.llm.base import GenerationParams
    from convrag.llm.cache import CachedLLM
    from tests.helpers import StreamingScriptedLLM

    stop = threading.Event()

    class ReadsThePromptInPieces(StreamingScriptedLLM):
        stoppable = True

        def stream(self, messages, params=GenerationParams(), stop=None):  # type: ignore[no-untyped-def]
            self.told.append(stop is not None)
            pressed.set()  # the user presses Stop while the prompt is being read
            if stop is not None and stop():
                return
            yield from super().stream(messages, params)

    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    question = [Message("user", "How much does passport renewal cost?")]
    for wrap in (lambda llm: llm, lambda llm: CachedLLM(llm, tmp_path / "cache.sqlite")):
        llm = ReadsThePromptInPieces(answer=["Renewal by mail costs 130 dollars [1]."] * 2)
        llm.told = []
        pressed = stop
        pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn"), generator=AnswerGenerator(wrap(llm)))
        assert list(pipeline.stream(question, stop=stop)) == [] and llm.told == [True]
        stop.clear()
        pressed = threading.Event()  # nobody presses it now
        *_, result = pipeline.stream(question)  # no stop to look at: asked as before, and answered
        assert llm.told == [True, False] and result.citations[0].passage_id == "p2"


def test_a_stop_reaches_a_backend_still_reading_the_rewrite_prompt(tiny_collection, tmp_path):
    """Only the answer's prompt read looked at a stop: one pressed while the local model read the
    rewrite's prompt (seconds on a CPU when no read-ahead had read it) waited for the whole call.
    Now a turn streamed with a stop hands it to the plain calls made for it, through the completion
    cache too; a stopped call ends the turn with nothing, the answer never asked, nothing cached.
    Without a stop, and outside a turn, the calls see none."""
    import threading

    from convrag.llm.base import GenerationParams, Stopped, turn_stop
    from convrag.llm.cache import CachedLLM

    stop = threading.Event()

    class ReadsThePromptInPieces(ScriptedLLM):
        def complete(self, messages, params=GenerationParams()):  # type: ignore[no-untyped-def]
            seen = turn_stop()
            self.told.append(seen is not None)
            pressed.set()  # the user presses Stop while the rewrite's prompt is read
            if seen is not None and seen():
                raise Stopped("stopped while reading")
            return super().complete(messages, params)

    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    conversation = [Message("user", "How much does passport renewal cost?"), Message("agent", "It costs 130 dollars [1]."),
                    Message("user", "And by mail?")]
    for wrap in (lambda llm: llm, lambda llm: CachedLLM(llm, tmp_path / "cache.sqlite")):
        llm = ReadsThePromptInPieces(rewrite=["What is the fee for renewing a passport by mail?"],
                                     answer=["Renewal by mail costs 130 dollars [1]."])
        llm.told = []
        pressed = stop
        pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("full_rewrite", wrap(llm)),
                            generator=AnswerGenerator(wrap(llm)))
        assert list(pipeline.stream(conversation, stop=stop)) == []
        assert llm.told == [True] and llm.kinds() == []  # the rewrite unanswered, the answer never asked
        stop.clear()
        pressed = threading.Event()  # nobody presses it now
        *_, result = pipeline.stream(conversation)  # no stop: the rewrite is asked as before, and answered
        assert llm.told == [True, False, False] and llm.kinds() == ["rewrite", "answer"]
        assert result.citations[0].passage_id == "p2" and turn_stop() is None


def test_bad_conversations_are_refused(tiny_collection):
    from convrag.errors import ConvragError

    pipeline = Pipeline([CollectionSearch("a", Empty())], make_strategy("last_turn"))
    for messages in ([], [Message("agent", "hi")], [Message("user", "  ")], [Message("user", "x" * 20_001)]):
        with pytest.raises(ConvragError):
            pipeline.answer(messages)


def test_chat_loop_keeps_history_and_shows_the_trace(tiny_collection, capsys):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = ScriptedLLM(rewrite=["Where do the Arizona Cardinals play home games?"],
                      answer=["The Cardinals play in London sometimes [1].", "At State Farm Stadium [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("progressive", llm), generator=AnswerGenerator(llm))
    inputs = iter(["Did the Cardinals play in London?", "/help", "/tarce", "What about their home games?", "/trace", "/quit"])
    history = chat_loop(pipeline, lambda prompt: next(inputs))
    # "/help" and the mistyped "/tarce" are commands, not questions: only the two questions were answered
    assert [m.speaker for m in history] == ["user", "agent", "user", "agent"]
    assert history[1].text == "The Cardinals play in London sometimes [1]." and history[3].text == "At State Farm Stadium [1]."
    out = capsys.readouterr().out
    assert "stage 2" in out and "kept [1] docs/" in out
    assert "unknown command /tarce" in out and out.count("commands: /trace") == 3  # at the start, for /help, for /tarce


def test_the_strategys_standalone_question_reaches_the_answer_prompt_when_asked_for(tiny_collection):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    rewrite = "Where do the Arizona Cardinals play their home games?"
    history = [Message("user", "Did the Arizona Cardinals play in London?"), Message("agent", "Yes, in 2017 [1].")]
    for preset, asked in (("fast", rewrite), ("default", "Where do they play at home?")):
        llm = ScriptedLLM(rewrite=[rewrite], answer=["At State Farm Stadium [1]."])
        generator = AnswerGenerator(llm, ANSWER_PRESETS[preset])
        pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("progressive", llm), generator=generator)
        result = pipeline.answer([*history, Message("user", "Where do they play at home?")])
        assert result.trace.strategy.standalone == rewrite and result.trace.to_dict()["strategy"]["standalone"] == rewrite
        assert llm.last_user_prompt("answer").endswith(f"Question: {asked}\nAnswer:")


def test_a_follow_up_the_strategy_found_self_contained_gets_the_answer_prompts_own_history_budget(tiny_collection):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    history = [Message("user", "Did the Arizona Cardinals play in London?"), Message("agent", "Yes, in 2017 at Twickenham [1].")]
    questions_only = ANSWER_PRESETS["self-contained"]
    assert questions_only.self_contained_history == Budget(tokens=100, answer_words=0) and ANSWER_PRESETS["default"].self_contained_history is None
    for question, self_contained in (("Where is the home stadium of the Arizona Cardinals?", True),
                                     ("Where do they play at home?", False)):
        llm = ScriptedLLM(rewrite=["Where do the Arizona Cardinals play their home games?"], answer=["At State Farm Stadium [1]."])
        pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("progressive", llm),
                            generator=AnswerGenerator(llm, questions_only))
        result = pipeline.answer([*history, Message("user", question)])
        assert result.trace.to_dict()["strategy"]["self_contained"] is self_contained
        prompt = llm.last_user_prompt("answer")
        assert "User: Did the Arizona Cardinals play in London?" in prompt
        assert ("Twickenham" in prompt) is not self_contained  # the agent's answers only where the question needs them


@pytest.mark.slow
def test_real_model_over_two_sample_collections(sample_indexes, local_llm):
    data = sample_indexes.data
    collections = open_collections({d: sample_indexes.collection(d) for d in ("cloud", "fiqa")}, "hybrid")
    pipeline = Pipeline(collections, make_strategy("progressive", local_llm, sample_indexes.embedder),
                        merge_settings=MergeSettings(max_tokens=700, max_passages=4),
                        generator=AnswerGenerator(local_llm, ANSWER_PRESETS["ungated"]))  # the model always answers
    task = next(t for t in data.tasks("cloud") if t.turn == 2)
    result = pipeline.answer([*task.history, Message("user", task.question)])
    assert result.text.strip()
    trace = result.trace.to_dict()
    assert set(trace["search"]["hits"]) == {"cloud", "fiqa"} and not trace["search"]["failures"]
    assert trace["answer"]["llm_call"]["prompt_tokens"] > 0
    TypeAdapter(TurnTraceDict).validate_python(trace)  # the documented schema holds for a real turn
    assert sum(r.tokens for r in result.merged.results) <= 700
    merged_ids = {(r.hit.collection, r.hit.passage_id) for r in result.merged.results}
    assert all((c.collection, c.passage_id) in merged_ids for c in result.citations)


def test_multi_query_searches_every_rendering_and_fuses_them(tiny_collection):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    summary = ("Summary: The user asks about the Arizona Cardinals, an NFL team, and where the team has played its games "
               "abroad.\nQuestion: Did the Arizona Cardinals play in London?")
    llm = ScriptedLLM(summary=[summary], reformulate=["Arizona Cardinals London game\n1. Cardinals international games"],
                      answer=["They played the Rams in London in 2017 [1]."])
    # ungated: what is tested is the fusion, not whether the tiny collection passes the decline gate
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn"), generator=AnswerGenerator(llm, ANSWER_PRESETS["ungated"]),
                        renderings=make_query_stages(("strategy", "summary", "reformulations"), llm))
    history = [Message("user", "Tell me about the Arizona Cardinals."), Message("agent", "An NFL team from Glendale.")]
    result = pipeline.answer([*history, Message("user", "Did they play in London?")])
    queries = result.trace.queries
    assert queries[0] == "Did they play in London?" and len(queries) == 4  # as asked (= last_turn), summary, 2 reformulations
    assert queries[1].startswith("Summary: ") and queries[2:] == ["Arizona Cardinals London game", "Cardinals international games"]
    assert len(result.trace.to_dict()["search"]["hits"]["docs"]) == 4  # one result list per rendering, fused before the merge
    assert [r.stage for r in result.trace.renderings] == ["summary", "reformulations"]
    assert "p3" in [r.hit.passage_id for r in result.merged.results]
    cited = result.citations[0]  # the number points into the merged results (re-pointed to the passage holding the sentence)
    assert cited.passage_id == result.merged.results[cited.number - 1].hit.passage_id


class TwoRenderings:
    """A zero-call strategy that fuses two renderings of every follow-up: the question, and the
    question with the conversation's first question."""

    name = "two-renderings"

    def rewrite(self, task):  # type: ignore[no-untyped-def]
        trace, started = start_trace(task, self.name)
        first = next(m.text for m in task.history if m.speaker == "user")
        return finish(trace, started, task.question, "1", fuse_with=(f"{task.question} {first}",))


@pytest.mark.slow
def test_a_turn_retrieves_what_the_evaluation_measures_when_renderings_are_fused(sample, sample_indexes):
    """`convrag eval` scores a strategy's fused renderings from lists searched FUSION_DEPTH deep; a chat
    turn must fuse the same lists, or the figures it reports are not what the pipeline retrieves (it
    fused each rendering's top 10, which ranks passages that both renderings place 11th-50th lower)."""
    strategy, domain = TwoRenderings(), "clapnq"
    tasks = [t for t in sample.tasks(domain) if t.history][:8]
    measured = run_retrieval(sample_indexes, [domain], "hybrid", StrategySource(strategy), tasks_by_domain={domain: tasks})
    pipeline = Pipeline([CollectionSearch(domain, sample_indexes.retriever(domain, "hybrid"))], strategy)
    for task in tasks:
        _, trace, per_collection = pipeline.retrieve([*task.history, Message("user", task.question)])
        assert len(trace.queries) == 2 and trace.to_dict()["search"]["hits"][domain] == [50, 50]
        assert [h.passage_id for h in per_collection[domain]] == [h.doc_id for h in measured.hits[task.task_id]]


@pytest.mark.parametrize("with_question", [False, True])
def test_query_stages_compose_in_order(tiny_collection, with_question):
    """"rewrite + summary, fused" is a composition; the question as asked is one more stage."""
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    summary = "Summary: The user asks about the Arizona Cardinals, an NFL team.\nQuestion: Did the Arizona Cardinals play in London?"
    llm = ScriptedLLM(rewrite=["Did the Arizona Cardinals play a game in London?"], summary=[summary])
    stages = ("strategy", "summary", "question") if with_question else ("strategy", "summary")
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("full_rewrite", llm), renderings=make_query_stages(stages, llm))
    history = [Message("user", "Tell me about the Arizona Cardinals."), Message("agent", "An NFL team from Glendale.")]
    result = pipeline.answer([*history, Message("user", "Did they play in London?")])
    queries = result.trace.queries
    assert queries[0] == "Did the Arizona Cardinals play a game in London?"
    assert ("Did they play in London?" in queries) is with_question
    assert queries[1].startswith("Summary: ") and len(queries) == 2 + with_question


class ReadingScriptedLLM(ScriptedLLM):
    """A scripted LLM that, like the local backend, can be asked to read a prompt's start ahead."""

    def __init__(self, **queues) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**queues)
        self.read: list[list] = []

    def prefill(self, messages):  # type: ignore[no-untyped-def]
        self.read.append(messages)
        return sum(len(m["content"].split()) for m in messages)


def test_reading_ahead_covers_the_summary_stage_and_each_next_prompt_starts_with_what_was_read(tiny_collection):
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = ReadingScriptedLLM(rewrite=["Did the Arizona Cardinals play in London?"],
                             summary=["Question: Did the Arizona Cardinals play in London?\nSummary: The user asks about the "
                                      "Arizona Cardinals, an NFL team from Glendale, and where it plays."],
                             answer=["They played the Rams in London in 2017 [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("progressive", llm), generator=AnswerGenerator(llm),
                        renderings=make_query_stages(("strategy", "summary"), llm))
    history = [Message("user", "Tell me about the Arizona Cardinals."), Message("agent", "An NFL team from Glendale.")]
    record = pipeline.prefill(history)
    assert list(record) == ["strategy", "stage:summary", "answer"] and all(r["tokens"] > 0 for r in record.values())
    pipeline.answer([*history, Message("user", "Did they play in London?")])
    assert llm.kinds() == ["rewrite", "summary", "answer"]
    for (kind, request), start in zip(llm.requests, llm.read):
        # the request repeats what was read and continues it: the backend's cache then holds its start
        assert request[:-1] == start[:-1] and request[-1]["content"].startswith(start[-1]["content"]), kind


def test_a_spec_builds_the_pipeline_it_describes(tiny_collection):
    llm = ScriptedLLM()
    spec = PipelineSpec(collections=("tiny",), strategy="last_turn", queries=("strategy", "question"), k=3, answer_passages=2)
    pipeline = build_pipeline(spec, llm=llm, opened={"tiny": tiny_collection})
    assert [c.name for c in pipeline.collections] == ["tiny"] and pipeline.collections[0].k == 3
    assert pipeline.collections[0].retriever.name == "hybrid"  # one collection: hybrid
    assert [s.name for s in pipeline.renderings] == ["question"] and pipeline.merge_settings.max_passages == 2
    hits, _ = pipeline.search("passport renewal cost", 2)
    assert len(hits) == 2 and hits[0].passage_id == "p2"


def test_the_whole_passage_budget_is_a_setting_that_can_be_lifted(tiny_collection):
    opened = {"tiny": tiny_collection}
    default = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn"), llm=ScriptedLLM(), opened=opened)
    tight = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn", answer_tokens=50), llm=ScriptedLLM(), opened=opened)
    free = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn", answer_tokens=None), llm=ScriptedLLM(), opened=opened)
    assert (default.merge_settings.max_tokens, tight.merge_settings.max_tokens, free.merge_settings.max_tokens) == (1000, 50, None)
    turn = [Message("user", "How much does a passport renewal cost?")]
    kept = {name: len(p.retrieve(turn)[0].results) for name, p in (("tight", tight), ("free", free))}
    assert 1 <= kept["tight"] < kept["free"]


def test_the_decline_floor_is_a_setting_of_the_pipeline(tiny_collection):
    """A turn declined without a model call ("best cosine 0.43 < 0.45") is answered where the pipeline
    sets a floor under its best cosine, and still declined over it: the floor chosen on MT-RAG can be
    moved for a collection whose answers are phrased far from its users' questions."""
    opened = {"tiny": tiny_collection}
    turn = [Message("user", "What is the price of a driving licence?")]
    declined = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn"), llm=(llm := ScriptedLLM()), opened=opened).answer(turn)
    relevance = declined.trace.answer["details"]["compression"]["relevance"]
    assert declined.declined and llm.requests == [] and 0.1 < relevance < DeclineSettings().min_relevance
    assert declined.trace.answer["details"]["declined_below"] == DeclineSettings().min_relevance  # the floor it was held to
    for floor, answered in ((relevance - 0.02, True), (relevance + 0.02, False)):
        llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
        spec = PipelineSpec(("tiny",), strategy="last_turn", decline_below=floor)
        result = build_pipeline(spec, llm=llm, opened=opened).answer(turn)
        assert (not result.declined, len(llm.requests) == 1) == (answered, answered), floor
        assert ("declined_below" in result.trace.answer["details"]) == (not answered)


def test_a_bad_spec_is_a_clear_error():
    from convrag.errors import ConfigError

    for bad in (dict(collections=()), dict(collections=("a", "a")), dict(collections=("a",), queries=("summary",)),
                dict(collections=("a",), queries=("strategy", "nope")), dict(collections=("a",), retriever="sparse"),
                dict(collections=("a",), k=0), dict(collections=("a",), decline_below=1.5),
                dict(collections=("a",), decline_below=-0.1), dict(collections=("a",), answer="first", decline_below=0.3)):
        with pytest.raises(ConfigError):
            PipelineSpec(**bad)  # type: ignore[arg-type]


def test_a_turn_searches_the_version_it_opened_when_an_upload_is_indexed_during_its_rewrite(tmp_path, embedder):
    """The service's case: a pipeline opened over a collection's live version, then a build (an upload
    indexed in the background) published while the turn's question was being rewritten. The turn used
    to fail at its search: the version it had opened was gone."""
    from convrag.index.collection import Collection

    class IndexingMeanwhile(ScriptedLLM):
        def complete(self, messages, params=None):  # type: ignore[no-untyped-def]
            Collection.build(tmp_path / "kb", TINY[:1], embedder=embedder)
            return super().complete(messages)

    first = Collection.build(tmp_path / "kb", TINY, embedder=embedder).version_dir
    llm = IndexingMeanwhile(rewrite=["How much does a passport renewal cost?"])
    pipeline = build_pipeline(PipelineSpec(("kb",), strategy="full_rewrite"), llm=llm, store=tmp_path, generate=False)
    outcome, trace, _ = pipeline.retrieve([Message("user", "I need a passport."), Message("agent", "You can renew it."),
                                          Message("user", "How much is it?")])
    assert not first.exists() and llm.kinds() == ["rewrite"]  # the build published during the rewrite
    assert outcome.results[0].hit.passage_id == "p2" and not trace.search.failures


def test_building_a_pipeline_opens_again_when_a_build_publishes_between_opening_and_loading(tmp_path, embedder, monkeypatch):
    from convrag.index.collection import Collection, CollectionStore

    Collection.build(tmp_path / "kb", TINY, embedder=embedder)
    store_open, published = CollectionStore.open, []

    def open_then_publish(self, name):  # type: ignore[no-untyped-def]
        opened = store_open(self, name)
        if not published:  # once: the version just opened is replaced before its indexes are loaded
            published.append(Collection.build(tmp_path / "kb", TINY[:1], embedder=embedder).version_dir)
        return opened

    monkeypatch.setattr(CollectionStore, "open", open_then_publish)
    pipeline = build_pipeline(PipelineSpec(("kb",), strategy="last_turn"), store=tmp_path, generate=False)
    hits, report = pipeline.search("Cardinals home games stadium", 3)
    assert [h.passage_id for h in hits] == ["p1"] and not report.failures
    assert pipeline.collections[0].retriever.sparse.collection.version_dir == published[0]


def test_a_chat_moves_its_decline_floor_and_asks_again(tmp_path, embedder, capsys):
    """A turn declined at "best cosine 0.37 < 0.45" could only be asked again in a new chat started
    with --decline-below; ``/decline-below X`` moves the floor from the next question on."""
    from convrag.cli.chat import chat_loop
    from convrag.index.collection import Collection
    from convrag.pipeline import LivePipeline

    Collection.build(tmp_path / "kb", TINY, embedder=embedder)
    llm = ScriptedLLM(answer=["Passport renewal costs 130 dollars [1]."] * 3)
    source = LivePipeline(PipelineSpec(("kb",), strategy="last_turn"), llm, store=tmp_path)
    question = "How much is a passport renewal by mail?"
    asked = source.pipeline.answer([Message("user", question)])
    best = asked.trace.answer["details"]["compression"]["relevance"]  # this turn's own best cosine
    over = f"{min(best + 0.02, 1.0):.4f}"
    lines = iter([question, "/decline-below", f"/decline-below {over}", "/again", "/decline-below lots", "/decline-below 1.5",
                  "/decline-below 0", "/again", "/quit"])
    history = chat_loop(source, lambda prompt: next(lines))
    out = " ".join(capsys.readouterr().out.split())
    assert "declining below a best cosine of 0.45;" in out
    assert f"from the next question on, declining below {float(over):g}" in out
    assert "the floor is a number from 0 to 1, as in /decline-below 0.35; got lots" in out
    assert "the decline floor is a cosine from 0 to 1; got 1.5" in out
    # answered as asked, declined without a call over its best cosine, answered again with the gate off
    assert out.count("Passport renewal costs 130 dollars [1].") == 2 and out.count(DECLINE) == 1
    assert history[-1].text == "Passport renewal costs 130 dollars [1]." and len(history) == 2
    assert llm.kinds() == ["answer"] * 3  # the first outside the chat, for the turn's best cosine


def test_a_terminal_chat_searches_a_collection_re_indexed_during_it(tmp_path, embedder, capsys):
    """`convrag chat` kept searching the version it started with: documents indexed from another
    terminal during the chat were never found. The chat now follows the collection's live version."""
    from convrag.index.collection import Collection
    from convrag.pipeline import LivePipeline
    from tests.helpers import LIBRARY_FEES, chat_with_indexing

    Collection.build(tmp_path / "kb", TINY, embedder=embedder)
    llm = ScriptedLLM(answer=["Passport renewal costs 130 dollars [1].", "A library card costs 12 dollars a year [1]."])
    chat_with_indexing(LivePipeline(PipelineSpec(("kb",), strategy="last_turn"), llm, store=tmp_path),
                       lambda: Collection.build(tmp_path / "kb", [*TINY, LIBRARY_FEES], embedder=embedder))
    out = capsys.readouterr().out
    assert "kb / Library fees (f1)" in out  # the second answer cites the passage indexed during the chat
    assert "re-indexed since the last turn, now searched as they are: kb" in out
    assert out.count("re-indexed") == 1


@pytest.mark.parametrize("damaged_file", ["dense/embeddings.npy", "passages.jsonl"])
def test_a_damaged_collection_among_several_is_named_and_the_others_answer(tmp_path, embedder, capsys, damaged_file):
    """One collection whose files could not be read (a disk fault) made every turn over it and any
    other collection fail, in the service with a bare 500. The others now answer; the trace and a
    caution beside the answer name the one left out. Alone, it is one clear error."""
    from convrag.cli.chat import print_answer
    from convrag.errors import CollectionDamaged
    from convrag.index.collection import Collection

    Collection.build(tmp_path / "admin", TINY[1::2], embedder=embedder)
    sport = Collection.build(tmp_path / "sport", TINY[::2], embedder=embedder).version_dir
    (sport / damaged_file).write_bytes(b"\x00" * 64)
    llm = ScriptedLLM(answer=["Passport renewal costs 130 dollars [1]."])
    pipeline = build_pipeline(PipelineSpec(("admin", "sport"), strategy="last_turn"), llm=llm, store=tmp_path)
    result = pipeline.answer([Message("user", "How much is a passport renewal?")])
    assert [(c.collection, c.passage_id) for c in result.citations] == [("admin", "p2")]
    failures = result.trace.to_dict()["search"]["failures"]
    assert list(failures) == ["sport"] and "CollectionDamaged: " in failures["sport"] and "rebuild" in failures["sport"]
    print_answer(result)
    assert "caution: the collection sport could not be searched (CollectionDamaged: " in capsys.readouterr().out
    with pytest.raises(CollectionDamaged, match="rebuild"):
        build_pipeline(PipelineSpec(("sport",), strategy="last_turn"), llm=llm, store=tmp_path)
    # the fusion of the collections still searched is the one chosen without the damaged one
    Collection.build(tmp_path / "more", TINY[:2], embedder=embedder)
    dense = build_pipeline(PipelineSpec(("admin", "more", "sport"), strategy="last_turn", retriever="dense"), llm=llm, store=tmp_path)
    assert dense.merge_settings.fusion == "combsum"
