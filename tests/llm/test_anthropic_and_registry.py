import pytest

from convrag.errors import ConfigError
from convrag.llm import make_llm
from convrag.llm.anthropic_api import AnthropicLLM
from convrag.llm.base import LLMError, complete_json, parse_json_object
from convrag.llm.cache import CachedLLM
from tests.helpers import GarbageServer, ScriptedLLM


def test_anthropic_needs_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("claude-x")


def test_anthropic_unreachable_is_an_llm_error(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    llm = AnthropicLLM("claude-x", timeout_s=2, max_retries=0)
    with pytest.raises(LLMError, match="anthropic"):
        llm.complete([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])


def test_registry(tmp_path, monkeypatch):
    with pytest.raises(ConfigError):
        make_llm("nope")
    with pytest.raises(ConfigError):
        make_llm("openai")
    llm = make_llm("openai:some-model", cache=tmp_path / "c.sqlite", base_url="http://127.0.0.1:9/v1")
    assert isinstance(llm, CachedLLM) and llm.backend == "openai" and llm.model == "some-model"
    assert make_llm("local:/nonexistent.gguf", cache=False).model == "nonexistent"


def test_json_helper():
    assert parse_json_object('Sure! ```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object("no json here") is None
    assert parse_json_object("[1, 2]") is None

    class Echo(ScriptedLLM):
        def complete(self, messages, params=None):  # type: ignore[no-untyped-def, override]
            from convrag.llm.base import Completion

            return Completion('{"standalone": true}', 1, 1, 0.0, "echo")

    value, completion = complete_json(Echo(), [{"role": "user", "content": "?"}])
    assert value == {"standalone": True} and completion.model == "echo"


def test_anthropic_stop_reasons_read_as_finish_reasons(monkeypatch):
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from convrag.llm.anthropic_api import finish_reason

    assert [finish_reason(r) for r in ("end_turn", "stop_sequence", "max_tokens", "refusal", None)] == [
        "stop", "stop", "length", "refusal", None]

    class MessagesAPI(BaseHTTPRequestHandler):  # answers every request as the Messages API does when cut short
        def do_POST(self):  # type: ignore[no-untyped-def]
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                               "content": [{"type": "text", "text": "Red, green,"}], "stop_reason": "max_tokens",
                               "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 3}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # type: ignore[no-untyped-def]
            pass

    server = HTTPServer(("127.0.0.1", 0), MessagesAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_port}")
        out = AnthropicLLM("claude-x", timeout_s=5, max_retries=0).complete([{"role": "user", "content": "List colours."}])
    finally:
        server.shutdown()
    assert out.text == "Red, green," and out.finish_reason == "length" and (out.prompt_tokens, out.completion_tokens) == (12, 3)


def test_an_anthropic_reply_that_is_not_a_message_is_an_llm_error(monkeypatch):
    """A 200 with a page where the Messages API should be raised AttributeError ('str' object has no
    attribute 'content'), which the strategies do not catch."""
    with GarbageServer(b"<html>Sign in to the proxy</html>", "text/html") as proxy:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", proxy.url)
        with pytest.raises(LLMError, match="the reply is not a Messages API message: '<html>Sign in"):
            AnthropicLLM("claude-x", timeout_s=5, max_retries=0).complete([{"role": "user", "content": "hi"}])
