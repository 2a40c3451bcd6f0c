"""The openai backend against a real OpenAI-compatible server (llama-cpp-python's) on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from convrag.llm.base import GenerationParams, LLMError
from convrag.llm.openai_compat import OpenAICompatibleLLM
from convrag.strategies.progressive import Progressive
from tests.helpers import CARDINALS, FakeEndpoint, GarbageServer, make_task


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(model_path):  # type: ignore[no-untyped-def]
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", "qwen-local",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--verbose", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=1) as response:
                if response.status == 200:
                    break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("llama_cpp.server did not start in 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_chat_completion_through_the_server(server):
    llm = OpenAICompatibleLLM("qwen-local", base_url=server)
    out = llm.complete([{"role": "user", "content": "Reply with the single word: yes"}], GenerationParams(max_tokens=4))
    assert out.text.strip() and out.prompt_tokens > 5 and out.completion_tokens >= 1 and out.model == "qwen-local"


def test_streaming_through_the_server(server):
    from convrag.llm.base import Completion, stream

    llm = OpenAICompatibleLLM("qwen-local", base_url=server)
    messages = [{"role": "user", "content": "List three colours, comma-separated."}]
    items = list(stream(llm, messages, GenerationParams(max_tokens=16)))
    assert len(items) > 2 and isinstance(items[-1], Completion)
    assert "".join(items[:-1]) == items[-1].text == llm.complete(messages, GenerationParams(max_tokens=16)).text


def test_the_server_says_when_a_reply_was_cut_by_the_token_limit(server):
    from convrag.llm.base import stream

    llm = OpenAICompatibleLLM("qwen-local", base_url=server)
    long = [{"role": "user", "content": "List twenty colours, comma-separated."}]
    assert llm.complete(long, GenerationParams(max_tokens=3)).finish_reason == "length"
    assert list(stream(llm, long, GenerationParams(max_tokens=3)))[-1].finish_reason == "length"
    done = [{"role": "user", "content": "Reply with the single word: yes"}]
    assert llm.complete(done, GenerationParams(max_tokens=16)).finish_reason == "stop"


# A follow-up with a reference ("what about", "they") is what sends a progressive turn to the model.
EXPLICIT = "What about outside the US, do they play there?"


def test_a_strategy_runs_over_the_server(server, embedder):
    llm = OpenAICompatibleLLM("qwen-local", base_url=server)
    result = Progressive(llm, embedder).rewrite(make_task(EXPLICIT, CARDINALS[:2]))
    assert result.trace.calls and all(c.error is None for c in result.trace.calls)
    assert result.trace.stage in {"2", "2_fallback_original", "3", "3_fallback_previous_stage", "3_fallback_original"}


def test_an_unreachable_endpoint_is_an_llm_error_and_a_strategy_falls_back(embedder):
    llm = OpenAICompatibleLLM("m", base_url=f"http://127.0.0.1:{_free_port()}/v1", timeout_s=2, max_retries=0)
    with pytest.raises(LLMError, match="APIConnectionError"):
        llm.complete([{"role": "user", "content": "hi"}])
    result = Progressive(llm, embedder).rewrite(make_task(EXPLICIT, CARDINALS[:2]))
    assert result.query == EXPLICIT
    assert {f.reason for f in result.trace.fallbacks} == {"llm_error"}


NO_MESSAGE = b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "finish_reason": "stop"}]}'


@pytest.mark.parametrize(("body", "content_type", "complete_error", "stream_error"), [
    (b"<html>Sign in to the proxy</html>", "text/html", "the reply is not a chat completion: '<html>Sign in",
     "the reply is not a stream of chat completion chunks"),
    (b"[1, 2]", "application/json", r"the reply is not a chat completion: '\[1, 2\]'", "not a stream of chat completion chunks"),
    (NO_MESSAGE, "application/json", "the reply's first choice has no message", "not a stream of chat completion chunks"),
    (b'{"choices": [', "application/json", "the reply is not valid JSON", "not a stream of chat completion chunks"),
    (b"data: {not json\n\n", "text/event-stream", "the reply is not a chat completion", "a streamed event is not valid JSON"),
], ids=["html-page", "json-list", "choice-without-message", "torn-json", "torn-event"])
def test_a_reply_that_is_not_a_chat_completion_is_an_llm_error(embedder, body, content_type, complete_error, stream_error):  # type: ignore[no-untyped-def]
    """Each of these raised AttributeError or JSONDecodeError from the client (or, streamed, gave an
    empty answer as if the model had written nothing), which no strategy catches: a turn crashed
    instead of falling back as it does when the server is down."""
    from convrag.llm.base import stream

    with GarbageServer(body, content_type) as garbage:
        llm = OpenAICompatibleLLM("m", base_url=f"{garbage.url}/v1", timeout_s=5, max_retries=0)
        with pytest.raises(LLMError, match=complete_error):
            llm.complete([{"role": "user", "content": "hi"}])
        with pytest.raises(LLMError, match=stream_error):
            list(stream(llm, [{"role": "user", "content": "hi"}]))
        result = Progressive(llm, embedder).rewrite(make_task(EXPLICIT, CARDINALS[:2]))
    assert result.query == EXPLICIT and {f.reason for f in result.trace.fallbacks} == {"llm_error"}


@pytest.mark.parametrize(("body", "too_long"), [
    (b'{"error": {"message": "This model\'s maximum context length is 8192 tokens.", "type": "invalid_request_error", '
     b'"code": "context_length_exceeded"}}', True),  # OpenAI
    (b'{"object": "error", "message": "This model\'s maximum context length is 4096 tokens. However, you requested 5000 '
     b'tokens", "type": "BadRequestError", "code": 400}', True),  # vLLM
    (b'{"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", '
     b'"type": "exceed_context_size_error"}}', True),  # llama.cpp server
    (b'{"error": {"message": "Invalid value for temperature", "type": "invalid_request_error", "code": null}}', False),
], ids=["openai", "vllm", "llama-server", "other-400"])
def test_a_prompt_longer_than_the_models_context_is_said_apart(body: bytes, too_long: bool) -> None:
    """A server that refuses a prompt longer than its model's context was "the language model could
    not answer; try again", and asking again fails alike."""
    from convrag.generate.answer import TOO_LONG, AnswerFailed
    from convrag.llm.base import PromptTooLong, stream

    with GarbageServer(body, "application/json", status=400) as refusing:
        llm = OpenAICompatibleLLM("m", base_url=f"{refusing.url}/v1", timeout_s=5, max_retries=0)
        for call in (lambda: llm.complete([{"role": "user", "content": "hi"}]), lambda: list(stream(llm, [{"role": "user", "content": "hi"}]))):
            with pytest.raises(LLMError) as failed:
                call()
            assert isinstance(failed.value, PromptTooLong) is too_long and "BadRequestError" in str(failed.value)
            assert (str(AnswerFailed.of(failed.value)) == TOO_LONG) is too_long


def _sse(*contents: str) -> bytes:
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": c}, "finish_reason": None}]} for c in contents]
    chunks.append({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def _completion(content: str) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}).encode()


@pytest.mark.parametrize(("content", "reply"), [
    ("<think>\nThe user asks about moorings.\n</think>\n\nMoorings cost 40 dollars [1].", "Moorings cost 40 dollars [1]."),
    ("The user asks about moorings; the template opened the block.\n</think>\n\nMoorings cost 40 dollars [1].",
     "Moorings cost 40 dollars [1]."),  # DeepSeek-R1: "<think>" is the prompt's
    ("<think>\nThe user asks about moorings, and", ""),  # the token limit reached while it reasoned
    ("<b>Moorings</b> cost 40 dollars [1].", "<b>Moorings</b> cost 40 dollars [1]."),
])
def test_a_thinking_model_s_reasoning_is_no_part_of_its_reply(content: str, reply: str) -> None:
    """Served without a reasoning parser (vLLM's default, llama.cpp's --reasoning-format none), Qwen3 or
    DeepSeek-R1 put "<think> ... </think>" before the reply: it became the rewritten query and the answer."""
    with GarbageServer(_completion(content), "application/json") as server:
        llm = OpenAICompatibleLLM("m", base_url=f"{server.url}/v1", timeout_s=5, max_retries=0)
        assert llm.complete([{"role": "user", "content": "hi"}]).text == reply


def test_a_thinking_model_s_reasoning_is_not_streamed() -> None:
    from convrag.llm.base import Completion, stream

    pieces = ("<th", "ink>\nThe user asks", " about moorings.</th", "ink>\n\nMoorings", " cost 40 dollars [1].")
    with GarbageServer(_sse(*pieces), "text/event-stream") as server:
        llm = OpenAICompatibleLLM("m", base_url=f"{server.url}/v1", timeout_s=5, max_retries=0)
        items = list(stream(llm, [{"role": "user", "content": "hi"}]))
    assert [i for i in items if isinstance(i, str)] == ["Moorings", " cost 40 dollars [1]."]
    assert isinstance(items[-1], Completion) and items[-1].text == "Moorings cost 40 dollars [1]."


#: what OpenAI's reasoning models (o-series, gpt-5) answer a request with ``max_tokens`` or a temperature but 1
REFUSALS = {
    "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    "temperature": "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.",
}


def reasoning_model(bodies: list[dict]) -> Callable[[bytes], tuple[int, str, bytes]]:  # type: ignore[type-arg]
    """A :class:`FakeEndpoint` reply that takes requests as OpenAI's reasoning models do (a 400 for
    ``max_tokens``, and for any temperature but 1); each request's body is added to ``bodies``."""
    def respond(request: bytes) -> tuple[int, str, bytes]:
        body = json.loads(request)
        bodies.append(body)
        refused = next((p for p in REFUSALS if p in body and body[p] != 1), None)
        if refused:
            error = {"message": REFUSALS[refused], "type": "invalid_request_error", "param": refused, "code": "unsupported_parameter"}
            return 400, "application/json", json.dumps({"error": error}).encode()
        if body.get("stream"):
            return 200, "text/event-stream", _sse("Moorings cost 40 dollars [1].")
        return 200, "application/json", _completion("Moorings cost 40 dollars [1].")

    return respond


def test_a_reasoning_model_that_refuses_max_tokens_and_temperature_is_asked_as_it_takes_requests() -> None:
    """OpenAI's reasoning models (gpt-5, o-series) refuse max_tokens and a temperature of 0 with a 400: every
    rewrite and answer with --llm openai:gpt-5-mini failed. The endpoint's refusal is learned, once."""
    from convrag.llm.base import stream
    from convrag.llm.openai_compat import REASONING_TOKENS

    bodies: list[dict] = []  # type: ignore[type-arg]
    with FakeEndpoint(reasoning_model(bodies)) as server:
        llm = OpenAICompatibleLLM("gpt-5-mini", base_url=f"{server.url}/v1", timeout_s=5, max_retries=0)
        params = GenerationParams(max_tokens=160)
        completion = llm.complete([{"role": "user", "content": "hi"}], params)
        assert completion.text == "Moorings cost 40 dollars [1]."
        assert len(bodies) == 3 and llm.refuses == {"max_tokens", "temperature"}  # refused twice, then taken
        assert completion.sent_without == ("max_tokens", "temperature")  # for the trace
        last = bodies[-1]
        assert last["max_completion_tokens"] == 160 + REASONING_TOKENS and "max_tokens" not in last and "temperature" not in last
        items = list(stream(llm, [{"role": "user", "content": "hi"}], params))
        assert "".join(p for p in items if isinstance(p, str)) == "Moorings cost 40 dollars [1]." and len(bodies) == 4  # asked right the first time
        assert items[-1].sent_without == ("max_tokens", "temperature")


def test_the_trace_says_which_parameters_a_call_was_sent_without(embedder) -> None:
    """A rewrite or an answer sent without its length limit and greedy decoding says so in its record:
    the trace showed the call as if the model had been asked for them."""
    from convrag.generate.answer import AnswerGenerator, AnswerSettings
    from convrag.strategies.base import Trace
    from convrag.strategies.rewriter import call
    from tests.helpers import merged_results

    with FakeEndpoint(reasoning_model([])) as server:
        llm = OpenAICompatibleLLM("gpt-5-mini", base_url=f"{server.url}/v1", timeout_s=5, max_retries=0)
        trace = Trace("t", "full_rewrite", "How much?")
        assert call(llm, trace, "rewrite", "1", [{"role": "user", "content": "hi"}], GenerationParams(max_tokens=40))
        assert trace.to_dict()["calls"][0]["sent_without"] == ["max_tokens", "temperature"]
        settings = AnswerSettings(decline=None)
        answer = AnswerGenerator(llm, settings, embedder).answer("How much is a mooring?", [], merged_results(["Moorings cost 40 dollars."]))
        assert answer.trace["llm_call"]["sent_without"] == ["max_tokens", "temperature"]
