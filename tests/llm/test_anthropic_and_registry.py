import pytest

from convrag.errors import ConfigError
from convrag.llm import make_llm
from convrag.llm.anthropic_api import AnthropicLLM
from convrag.llm.base import LLMError, complete_json, parse_json_object
from convrag.llm.cache import CachedLLM
from tests.helpers import ScriptedLLM


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
