"""The terminal chat: answers streamed as they are written, and Ctrl-C stopping one answer."""

from __future__ import annotations

import os
import pty
import select
import sys
import time

from convrag.cli.chat import chat_loop
from convrag.generate.answer import AnswerGenerator
from convrag.llm.base import GenerationParams
from convrag.pipeline import Pipeline
from convrag.retrieve.multi import CollectionSearch, open_collections
from convrag.strategies import make_strategy
from tests.helpers import StreamingScriptedLLM


class InterruptedOnce(StreamingScriptedLLM):
    """Streams its answers; the first one is interrupted after two words, as Ctrl-C does while the
    model writes."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answer=answers)
        self.streams = 0

    def stream(self, messages, params=GenerationParams()):  # type: ignore[no-untyped-def]
        self.streams += 1
        for i, piece in enumerate(super().stream(messages, params)):
            if self.streams == 1 and i == 2:
                raise KeyboardInterrupt
            yield piece


def test_ctrl_c_stops_the_answer_being_written_and_the_chat_goes_on(tiny_collection, capsys) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C during an answer ended the whole chat (the answer was not even streamed: the terminal
    showed nothing until it was whole)."""
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = InterruptedOnce(["The Cardinals played in London in 2017 [1].", "The Cardinals played in London in 2017 [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    inputs = iter(["Did the Cardinals play in London?", "Did the Cardinals play in London?", "/quit"])
    history = chat_loop(pipeline, lambda prompt: next(inputs))
    out = capsys.readouterr().out
    assert "stopped: the answer was not kept" in out
    # the stopped turn is not history; the same question asked again is answered (through the stream)
    assert [m.text for m in history] == ["Did the Cardinals play in London?", "The Cardinals played in London in 2017 [1]."]
    assert llm.streams == 2 and out.count("The Cardinals played in London in 2017") == 1
    assert "being written" not in out  # the draft is a terminal's only: printed output holds the answer once


class InterruptedWhileReading(StreamingScriptedLLM):
    """A backend that reads the answer's prompt in pieces when given a stop (as the local model
    does); Ctrl-C comes during the first answer's read, before any piece is written."""

    stoppable = True

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answer=answers)
        self.told: list[bool] = []

    def stream(self, messages, params=GenerationParams(), stop=None):  # type: ignore[no-untyped-def]
        self.told.append(stop is not None)
        if len(self.told) == 1 and stop is not None:  # read in pieces: Ctrl-C lands between two
            raise KeyboardInterrupt
        yield from super().stream(messages, params)


def test_ctrl_c_while_the_prompt_is_read_stops_the_answer_before_it_begins(tiny_collection, capsys) -> None:  # type: ignore[no-untyped-def]
    """Python raises Ctrl-C's KeyboardInterrupt only once the call in progress returns, and the local
    model read the answer's prompt in one call (seconds on 2 cores). The terminal chat now gives the
    turn a stop, so that the model reads the prompt in pieces and Ctrl-C is seen after the current one."""
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = InterruptedWhileReading(["The Cardinals played in London in 2017 [1]."] * 2)
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    inputs = iter(["Did the Cardinals play in London?", "Did the Cardinals play in London?", "/quit"])
    history = chat_loop(pipeline, lambda prompt: next(inputs))
    assert llm.told == [True, True] and "stopped: the answer was not kept" in capsys.readouterr().out
    assert [m.text for m in history] == ["Did the Cardinals play in London?", "The Cardinals played in London in 2017 [1]."]


class ReadingLLM(StreamingScriptedLLM):
    """Records the prompt starts it is asked to read ahead, as the local backend reads them."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answer=answers)
        self.read: list[list] = []

    def prefill(self, messages):  # type: ignore[no-untyped-def]
        self.read.append(messages)
        return len(messages)


def test_the_first_question_s_prompt_is_read_ahead_while_it_is_typed(tiny_collection) -> None:  # type: ignore[no-untyped-def]
    """Only the prompts after an answer were read ahead, so a chat's first answer waited for the model
    to load and read its instructions and examples (8.7 s here with the local model, against 2.4 s
    with them read ahead)."""
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = ReadingLLM(["The Cardinals played in London in 2017 [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    typed = iter(["Did the Cardinals play in London?", "/quit"])

    def read(prompt: str) -> str:
        deadline = time.monotonic() + 10
        while not llm.read and time.monotonic() < deadline:  # the user types for a while
            time.sleep(0.05)
        return next(typed)

    chat_loop(pipeline, read)
    start, asked = llm.read[0], llm.requests[0][1]
    assert asked[:-1] == start[:-1] and asked[-1]["content"].startswith(start[-1]["content"])


def test_again_writes_another_answer_to_the_last_question_and_replaces_it(tiny_collection, capsys) -> None:  # type: ignore[no-untyped-def]
    """The web chat's "Regenerate" had no terminal counterpart: asking the question again gave the
    greedy answer back from the completion cache."""
    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = StreamingScriptedLLM(answer=["The Cardinals played in London in 2017 [1].", "Yes, in London, in 2017 [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    inputs = iter(["/again", "Did the Cardinals play in London?", "/again", "/quit"])
    history = chat_loop(pipeline, lambda prompt: next(inputs))
    assert "no answer to write again yet" in capsys.readouterr().out
    assert [m.text for m in history] == ["Did the Cardinals play in London?", "Yes, in London, in 2017 [1]."]
    asked, again = llm.decodings
    assert (asked.temperature, asked.seed) == (0, None) and again.temperature > 0 and again.seed is not None
    assert llm.requests[0][1] == llm.requests[1][1]  # the same question over the same history, asked again


def test_ask_shows_the_answer_as_it_is_written_on_a_terminal(tiny_collection, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``convrag ask`` showed nothing until the whole answer was written (10-20 s of a blank
    terminal with the local model), though the pipeline streams and ``chat`` showed the draft."""
    import io

    from rich.console import Console
    from typer.testing import CliRunner

    import convrag.cli.answers
    import convrag.cli.chat
    from convrag.cli.main import app

    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = StreamingScriptedLLM(answer=["The Cardinals played in London in 2017 [1]."] * 2)
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    monkeypatch.setattr(convrag.cli.answers, "pipeline_from", lambda *args, **kwargs: pipeline)
    terminal = io.StringIO()
    monkeypatch.setattr(convrag.cli.chat, "console", Console(file=terminal, force_terminal=True, width=100))
    result = CliRunner().invoke(app, ["ask", "Did the Cardinals play in London?", "-c", "docs"])
    assert result.exit_code == 0, result.output
    shown = terminal.getvalue()
    assert "answer (being written; Ctrl-C stops it)" in shown  # the draft, before the cited answer replaced it
    assert "The Cardinals played in London in 2017 [1]." in shown and "[1] docs / " in shown
    piped = CliRunner().invoke(app, ["ask", "-", "-c", "docs"], input="Did the Cardinals play in London?\n")  # from stdin
    assert piped.exit_code == 0 and llm.requests[-1][1][-1]["content"].endswith("Question: Did the Cardinals play in London?\nAnswer:")


def test_a_chat_is_saved_and_goes_on_from_where_it_was(tiny_collection, tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A terminal chat ended with its conversation: nothing wrote it down, and ``chat`` could not
    start from one (``ask --history`` could, one question at a time)."""
    import json

    from typer.testing import CliRunner

    import convrag.pipeline
    from convrag.cli.main import app
    from convrag.types import Message

    bm25 = open_collections({"x": tiny_collection}, "bm25")[0].retriever
    llm = StreamingScriptedLLM(answer=["The Cardinals played in London in 2017 [1].", "They played the Los Angeles Rams in London [1]."])
    pipeline = Pipeline([CollectionSearch("docs", bm25)], make_strategy("last_turn", llm), generator=AnswerGenerator(llm))
    saved = tmp_path / "chat.json"
    inputs = iter(["Did the Cardinals play in London?", f"/save {saved}", f"/save {tmp_path}",  # a folder cannot be written
                   f"/save {tmp_path / 'mistyped' / 'chat.json'}", "/quit"])  # nor a file in a folder that is not there
    history = chat_loop(pipeline, lambda prompt: next(inputs))
    out = capsys.readouterr().out
    assert "saved 2 message(s) to " in out and "cannot write " in out
    assert f"there is no folder {tmp_path / 'mistyped'}" in " ".join(out.split()) and not (tmp_path / "mistyped").exists()
    assert json.loads(saved.read_text()) == {"messages": [{"speaker": m.speaker, "text": m.text} for m in history]}
    # a new chat goes on from the file: the next question is asked after the saved exchange
    monkeypatch.setattr(convrag.pipeline, "LivePipeline", lambda *args, **kwargs: pipeline)
    result = CliRunner().invoke(app, ["chat", "-c", "docs", "--history", str(saved)], input="Which team did the Cardinals play in London?\n/quit\n")
    assert result.exit_code == 0, result.output
    assert "going on from 2 earlier message(s)" in result.output and "They played the Los Angeles Rams in London [1]." in result.output
    assert "caution" not in result.output
    unanswered = tmp_path / "unanswered.json"
    unanswered.write_text('[{"speaker": "user", "text": "Did the Cardinals play in London?"}]')
    result = CliRunner().invoke(app, ["chat", "-c", "docs", "--history", str(unanswered)], input="/quit\n")
    assert "caution: the history ends with a question that has no answer" in result.output
    asked = llm.requests[-1][1]
    assert "Did the Cardinals play in London?" in json.dumps(asked) and "The Cardinals played in London in 2017" in json.dumps(asked)
    assert history == [Message("user", "Did the Cardinals play in London?"), Message("agent", "The Cardinals played in London in 2017 [1].")]


def test_collections_shows_what_the_chat_searches_and_changes_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A terminal chat searched the collections it was started with to its end: adding one meant
    leaving the chat and its conversation."""
    from convrag.index.collection import Collection
    from convrag.pipeline import LivePipeline, PipelineSpec
    from tests.helpers import TINY

    Collection.build(tmp_path / "sports", [TINY[0], TINY[2]], name="sports")
    Collection.build(tmp_path / "money", [TINY[1], TINY[3], TINY[5]], name="money")
    llm = StreamingScriptedLLM(answer=["Index funds usually have low fees [1]."])
    live = LivePipeline(PipelineSpec(("sports",), strategy="last_turn", retriever="bm25"), llm, tmp_path)
    inputs = iter(["/collections", "/collections sports,nope", "/collections money, sports", "/collections",
                   "What fees do index funds have?", "/trace", "/quit"])
    chat_loop(live, lambda prompt: next(inputs))
    out = capsys.readouterr().out
    assert "searching sports; /collections A,B searches others from the next question" in out
    assert "error: unknown collection 'nope'" in out and "still searching sports" in out
    assert "from the next question on, searching money, sports" in out and "searching money, sports;" in out
    assert "kept [1] money/p4" in out  # the next question searched the collection added


def _typed(keys: list[bytes]) -> list[str]:
    """What the chat's reader returns, on a real terminal (a pty), for ``keys`` typed one after another."""
    child = ("from convrag.cli.chat import terminal_reader\nread = terminal_reader()\n"
             "for _ in range(2):\n    print('READ', repr(read('you> ')), flush=True)\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: a Python reading from the terminal
        os.execv(sys.executable, [sys.executable, "-c", child])
    out = b""
    try:
        for typed, key in enumerate(keys):
            # each write after the child has drawn its prompt (readline turns on bracketed paste then)
            deadline = time.monotonic() + 30
            while out.count(b"you> ") <= typed and time.monotonic() < deadline:
                if select.select([fd], [], [], 0.1)[0]:
                    out += os.read(fd, 4096)
            # and once the child has gone quiet: readline redraws the prompt while it takes a paste, so
            # on a busy machine a key written at the second "you> " reached the read before, and was lost
            while select.select([fd], [], [], 0.5)[0] and time.monotonic() < deadline:
                out += os.read(fd, 4096)
            os.write(fd, key)
        deadline = time.monotonic() + 30
        while out.count(b"READ") < 2 and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                out += os.read(fd, 4096)
    finally:
        os.waitpid(pid, 0)
    return [line.split("READ ", 1)[1].strip() for line in out.decode().splitlines() if line.startswith("READ ")]


def test_a_question_pasted_over_several_lines_is_one_question() -> None:
    """Read with plain input(), a pasted block was asked line by line, an answer to each half-question
    (a terminal marks a paste only when the program asks it to: readline does)."""
    pasted = b"\x1b[200~Here is the error:\nQuotaExceeded on bucket logs\x1b[201~\r"
    assert _typed([pasted, b"What does it mean?\r"]) == ["'Here is the error:\\nQuotaExceeded on bucket logs'",
                                                         "'What does it mean?'"]
