import logging
import sqlite3

import pytest

from convrag.errors import ConfigError
from convrag.llm.base import GenerationParams, LLMError
from convrag.llm.cache import CachedLLM, cache_key
from convrag.strategies.prompts import rewrite_messages
from tests.helpers import ScriptedLLM


def test_hits_are_served_from_disk_and_survive_a_reopen(tmp_path):
    inner = ScriptedLLM(rewrite=["How old is the Moon?"])
    messages = rewrite_messages("User: the moon", "How old is it?")
    cached = CachedLLM(inner, tmp_path / "c.sqlite")
    first = cached.complete(messages)
    second = cached.complete(messages)
    assert first.text == second.text == "How old is the Moon?"
    assert (first.cached, second.cached) == (False, True) and second.latency_s == first.latency_s
    assert len(inner.requests) == 1
    cached.close()
    reopened = CachedLLM(ScriptedLLM(), tmp_path / "c.sqlite")  # would raise on any call
    assert reopened.complete(messages).cached


def test_key_depends_on_parameters_and_model(tmp_path):
    m = rewrite_messages("", "q?")
    assert cache_key("local", "a", m, GenerationParams()) != cache_key("local", "a", m, GenerationParams(max_tokens=5))
    assert cache_key("local", "a", m, GenerationParams()) != cache_key("local", "b", m, GenerationParams())


def test_a_sampled_request_is_keyed_by_its_seed_and_a_greedy_one_keeps_its_key(tmp_path):
    """A regenerated answer is sampled with a seed of its own; keyed like the greedy request, the
    cache handed back the very answer being regenerated."""
    m = rewrite_messages("", "q?")
    greedy = GenerationParams()
    assert greedy.as_dict() == {"temperature": 0.0, "max_tokens": 64, "stop": []}  # plain keys unchanged since before seeds
    sampled = [GenerationParams(temperature=0.7, seed=s) for s in (1, 2, 1)]
    keys = [cache_key("local", "a", m, p) for p in (greedy, *sampled)]
    assert len(set(keys[:3])) == 3 and keys[1] == keys[3]


def test_errors_are_not_cached(tmp_path):
    inner = ScriptedLLM(rewrite=[LLMError("down"), "How old is the Moon?"])
    cached = CachedLLM(inner, tmp_path / "c.sqlite")
    messages = rewrite_messages("", "How old is the Moon?")
    with pytest.raises(LLMError):
        cached.complete(messages)
    assert cached.complete(messages).text == "How old is the Moon?"


def test_streams_are_stored_when_complete_and_replayed_in_one_piece(tmp_path):
    from convrag.llm.base import Completion, stream
    from tests.helpers import StreamingScriptedLLM

    inner = StreamingScriptedLLM(rewrite=["How old is the Moon?", "How old is the Sun?"])
    cached = CachedLLM(inner, tmp_path / "c.sqlite")
    messages = rewrite_messages("User: the moon", "How old is it?")
    first = list(stream(cached, messages))
    assert first[:-1] == ["How", " old", " is", " the", " Moon?"] and isinstance(first[-1], Completion)
    second = list(stream(cached, messages))
    assert second[0] == "How old is the Moon?" and second[-1].cached and len(inner.requests) == 1
    assert cached.complete(messages).cached  # streaming and plain calls share the cache
    other = rewrite_messages("User: the sun", "How old is it?")
    pieces = stream(cached, other)
    next(pieces)
    pieces.close()  # a client that went away: nothing half-written is stored
    assert cached._lookup(cache_key(cached.backend, cached.model, other, GenerationParams())) is None


def test_what_the_steers_did_and_why_the_model_stopped_are_stored_with_the_completion(tmp_path):
    from convrag.llm.base import Completion

    class Steered(ScriptedLLM):
        def complete(self, messages, params=GenerationParams()):  # type: ignore[no-untyped-def]
            return super().complete(messages, params)._replace(steering={"first_choice_p": 0.42, "citation_nudges": 2},
                                                               finish_reason="length")

    messages = rewrite_messages("", "How old is the Moon?")
    params = GenerationParams(cite_sentences=True, first_choice="I do not know.")
    first = CachedLLM(Steered(rewrite=["4.5 billion years [1]."]), tmp_path / "c.sqlite").complete(messages, params)
    again = CachedLLM(ScriptedLLM(), tmp_path / "c.sqlite").complete(messages, params)
    assert isinstance(again, Completion) and again.cached and again.steering == first.steering
    assert again.finish_reason == first.finish_reason == "length"
    assert cache_key("local", "a", messages, params) != cache_key("local", "a", messages, GenerationParams())


def test_a_cache_file_from_before_the_later_columns_still_answers(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    messages = rewrite_messages("", "How old is the Moon?")
    old = sqlite3.connect(path)  # the table as the first release made it: no first token, steers or finish reason
    old.execute("CREATE TABLE completions (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, request TEXT NOT NULL,"
                " text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, latency_s REAL NOT NULL,"
                " created TEXT NOT NULL DEFAULT (datetime('now')))")
    old.execute("INSERT INTO completions (key, backend, model, request, text, prompt_tokens, completion_tokens, latency_s)"
                " VALUES (?, 'scripted', 'scripted', '{}', '4.5 billion years.', 10, 4, 0.5)",
                (cache_key("scripted", "scripted", messages, GenerationParams()),))
    old.commit()
    old.close()
    hit = CachedLLM(ScriptedLLM(), path).complete(messages)  # ScriptedLLM() would raise on a call
    assert hit.cached and hit.text == "4.5 billion years." and hit.finish_reason is None and hit.steering is None


def test_an_unreadable_cache_file_is_kept_aside_and_a_new_cache_started(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    garbage = b"not a database, perhaps a half-copied file " * 200
    path.write_bytes(garbage)
    messages = rewrite_messages("User: the moon", "How old is it?")
    with caplog.at_level(logging.WARNING, logger="convrag.llm"):
        cached = CachedLLM(ScriptedLLM(rewrite=["How old is the Moon?"]), path)
    assert cached.complete(messages).text == "How old is the Moon?" and cached.complete(messages).cached
    (aside,) = tmp_path.glob("c.sqlite.unreadable-*")
    assert aside.read_bytes() == garbage  # nothing the user had is deleted
    assert "unreadable" in caplog.text and aside.name in caplog.text


def test_a_completion_that_cannot_be_stored_is_still_answered(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    inner = ScriptedLLM(rewrite=["How old is the Moon?", "How old is the Moon?"])
    cached = CachedLLM(inner, path)
    cached._db.close()
    cached._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)  # a full disk, say
    messages = rewrite_messages("User: the moon", "How old is it?")
    with caplog.at_level(logging.WARNING, logger="convrag.llm"):
        assert cached.complete(messages).text == "How old is the Moon?"
    assert "could not store" in caplog.text
    assert not cached.complete(messages).cached and len(inner.requests) == 2  # asked again, not made up


def test_a_cache_that_cannot_be_opened_is_one_clear_error(tmp_path):
    (tmp_path / "home").write_text("a file where the cache's folder should be")
    with pytest.raises(ConfigError, match="cannot open the completion cache .*--no-llm-cache"):
        CachedLLM(ScriptedLLM(), tmp_path / "home" / "c.sqlite")
