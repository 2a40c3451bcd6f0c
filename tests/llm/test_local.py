"""The real local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M via llama.cpp)."""

from collections import defaultdict

import pytest

from convrag.llm.base import GenerationParams
from convrag.llm.local import LocalLLM, build_features, llama_build
from convrag.strategies.prompts import rewrite_messages

SYSTEM_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
               "AVX512 = 1 | AVX512_VBMI = 0 | AVX512_VNNI = 1 | AMX_INT8 = 0 | LLAMAFILE = 1 | OPENMP = 1 | ")


def test_build_features_lists_the_vector_units_switched_on() -> None:
    assert build_features(SYSTEM_INFO) == ["AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512", "AVX512_VNNI"]
    assert build_features("") == []


def test_the_installed_build_names_at_least_avx2() -> None:
    assert "AVX2" in llama_build()  # the set-up never builds without it


@pytest.mark.parametrize("flash_attn", [False, True])
def test_either_attention_kernel_is_opened_as_asked_and_answers(model_path, flash_attn):
    import llama_cpp

    from convrag.llm.local import LocalLLM

    llm = LocalLLM(model_path, n_ctx=512, slots=1, flash_attn=flash_attn)
    wanted = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    assert llm.open_context().context_params.flash_attn_type == wanted
    question = [{"role": "user", "content": "What is the capital of France? Reply with the city's name only."}]
    assert "Paris" in llm.complete(question, GenerationParams(max_tokens=4)).text


def test_completes_with_token_counts(local_llm):
    out = local_llm.complete([{"role": "user", "content": "Reply with the single word: yes"}], GenerationParams(max_tokens=4))
    assert out.text.strip() and out.prompt_tokens > 5 and 0 < out.completion_tokens <= 4 and out.latency_s > 0
    assert local_llm.count_tokens("hello world") >= 2


SEA = [{"role": "user", "content": "Write one short sentence about the sea."}]


@pytest.fixture(scope="module")
def afresh(model_path):  # type: ignore[no-untyped-def]
    """The model reading every prompt afresh (no prefix reuse). With the prompt held from an earlier
    request, a sample starts from another state of the cache (its last token read again on its own,
    into whatever cells are free), which on an AVX-512 Xeon moves the probabilities in their last bits
    and flipped a sampled word ("extends infinitely" / "endlessly"): the same seed wrote two texts.
    What a seed guarantees is the same text from the same reading; a regenerated answer stays the
    same because the completion cache keys it by its seed (docs/service.md)."""
    return LocalLLM(model_path, n_ctx=2048, slots=1, reuse_prefix=False)


def test_a_seeded_sample_is_reproducible_and_differs_from_another_seed(afresh):
    """Regenerating an answer samples with a seed: the same seed writes the same text (so caching it
    is sound), other seeds write other texts, where greedy decoding wrote one answer only."""
    texts = [afresh.complete(SEA, GenerationParams(temperature=0.9, max_tokens=24, seed=seed)).text for seed in (1, 2, 3, 1)]
    assert texts[0] == texts[3] and len(set(texts[:3])) > 1


def test_a_seed_outside_llama_cpps_range_is_still_one_seed(afresh):
    """OpenAI's seed is any integer; llama.cpp's is 32 bits. -1 became llama.cpp's "random seed" (the
    same seed, another answer each time, while the completion cache keyed both by it) and 2**32 + 1
    was cut to 1 (two seeds, one answer)."""
    def sample(seed: int) -> str:
        return afresh.complete(SEA, GenerationParams(temperature=0.9, max_tokens=24, seed=seed)).text

    assert sample(-1) == sample(-1) and sample(2**64) == sample(2**64)
    assert len({sample(1), sample(2**32 + 1), sample(2**32 - 1)}) == 3


def test_top_p_reaches_the_sampler(model_path):
    """A client's top_p was dropped: llama.cpp sampled with its own 0.95. A cut that keeps only the
    likeliest token makes every seed write the greedy text, streamed or not, where the whole nucleus
    at the same temperature writes other texts."""
    from convrag.llm.base import stream
    from convrag.llm.local import LocalLLM

    # one slot, its prompt read once: a prompt read afresh (or in another slot) and one reused can
    # differ in the last bits, enough to flip a near tie between two words
    local_llm = LocalLLM(model_path, n_ctx=512, slots=1)
    messages = [{"role": "user", "content": "Write one short sentence about the sea."}]
    for _ in range(2):  # the state the later calls all start from (the prompt read, a reply after it)
        greedy = local_llm.complete(messages, GenerationParams(max_tokens=24)).text
    narrow = [local_llm.complete(messages, GenerationParams(temperature=1.5, max_tokens=24, seed=seed, top_p=1e-6)).text for seed in (1, 2)]
    streamed = list(stream(local_llm, messages, GenerationParams(temperature=1.5, max_tokens=24, seed=3, top_p=1e-6)))[-1].text
    assert narrow == [greedy, greedy] and streamed == greedy
    wide = {local_llm.complete(messages, GenerationParams(temperature=1.5, max_tokens=24, seed=seed)).text for seed in (1, 2, 3)}
    assert len(wide) > 1


def test_a_reply_cut_by_the_token_limit_says_so_streamed_or_not(local_llm):
    from convrag.llm.base import stream

    done = [{"role": "user", "content": "Reply with the single word: yes"}]
    long = [{"role": "user", "content": "List twenty colours, comma-separated."}]
    assert local_llm.complete(done, GenerationParams(max_tokens=16)).finish_reason == "stop"
    assert local_llm.complete(long, GenerationParams(max_tokens=3)).finish_reason == "length"
    assert list(stream(local_llm, long, GenerationParams(max_tokens=3)))[-1].finish_reason == "length"
    assert list(stream(local_llm, done, GenerationParams(max_tokens=16)))[-1].finish_reason == "stop"


def test_requests_sharing_a_prefix_reuse_a_slot(local_llm):
    params = GenerationParams(max_tokens=24, stop=("\n",))
    local_llm.complete(rewrite_messages("User: Tell me about the Arizona Cardinals.", "Do they play outside the US?"), params)
    slots = len(local_llm._slots)
    local_llm.complete(rewrite_messages("User: What is an index fund?", "Are they safe?"), params)
    assert len(local_llm._slots) == slots  # same instructions and examples: the same slot


def test_a_prompt_over_the_context_window_is_a_clear_error(local_llm):
    from convrag.llm.base import LLMError

    with pytest.raises(LLMError, match="local model failed"):
        local_llm.complete([{"role": "user", "content": "word " * 5000}], GenerationParams(max_tokens=4))
    with pytest.raises(LLMError, match="does not fit"):  # a read-ahead too: refused before reading anything
        local_llm.prefill([{"role": "user", "content": "word " * 5000}])


def test_streaming_gives_the_same_greedy_answer_in_pieces(local_llm):
    from convrag.llm.base import Completion, stream

    messages = [{"role": "user", "content": "List three colours, comma-separated."}]
    params = GenerationParams(max_tokens=16)
    plain = local_llm.complete(messages, params)
    items = list(stream(local_llm, messages, params))
    pieces, completion = items[:-1], items[-1]
    assert isinstance(completion, Completion) and len(pieces) > 1
    assert "".join(pieces) == completion.text == plain.text
    assert completion.completion_tokens > 0 and completion.prompt_tokens > 5


def test_without_prefix_reuse_every_call_reads_its_whole_prompt(model_path):
    """The same prompt twice: with reuse the second call evaluates almost nothing new; without,
    it reads every prompt token again. Counted by llama.cpp's own timings, not by the clock."""
    from convrag.llm.local import LocalLLM

    messages = rewrite_messages("User: Tell me about the Arizona Cardinals.", "Do they play outside the US?")
    params = GenerationParams(max_tokens=8, stop=("\n",))

    def evaluated_on_repeat(llm: LocalLLM) -> int:
        llm.complete(messages, params)
        llama = llm._slots[0].llama
        before = _prompt_tokens_evaluated(llama)
        llm.complete(messages, params)
        return _prompt_tokens_evaluated(llama) - before

    reused = evaluated_on_repeat(LocalLLM(model_path, n_ctx=2048, slots=1))
    fresh = evaluated_on_repeat(LocalLLM(model_path, n_ctx=2048, slots=1, reuse_prefix=False))
    assert reused <= 2 < 100 < fresh


def _prompt_tokens_evaluated(llama) -> int:  # type: ignore[no-untyped-def]
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)


@pytest.fixture
def reads(monkeypatch):  # type: ignore[no-untyped-def]
    """The length of every piece llama.cpp evaluates, per model context: a request's first piece is
    the part of its prompt the cache did not hold, then come its answer's tokens one at a time."""
    from llama_cpp import Llama

    real = Llama.eval
    pieces: dict[int, list[int]] = defaultdict(list)
    # every context recorded is kept until the test ends: a context freed there could hand its id()
    # to the next one made, whose pieces would then be counted after the first one's (it happened)
    alive: list[object] = []

    def eval_and_record(self, tokens):  # type: ignore[no-untyped-def]
        if id(self) not in pieces:
            alive.append(self)
        pieces[id(self)].append(len(tokens))
        real(self, tokens)

    monkeypatch.setattr(Llama, "eval", eval_and_record)
    return pieces


def test_reading_a_prompt_ahead_leaves_only_its_end_to_read_and_the_same_answer(model_path, reads):
    """The start of the next answer prompt read ahead (as the service does after an answer): the
    request then reads only what follows its passages' heading, and writes what it would have."""
    from convrag.generate.answer import cited_messages, cited_prompt_start
    from convrag.history import Budget
    from convrag.llm.local import LocalLLM
    from convrag.types import Message

    history = [Message("user", "How often does a sourdough starter need feeding?"),
               Message("agent", "Every day at room temperature [1]. In the fridge, once a week [1].")]
    block = "[1] (Bread) A loaf is baked at 230 degrees for about 40 minutes, with steam for the first 10."
    question = "How long is it baked?"
    params = GenerationParams(max_tokens=24)

    def answer(read_ahead: bool) -> tuple[str, int, int]:
        """The answer, the tokens read ahead, and the prompt tokens the request itself read."""
        llm = LocalLLM(model_path, n_ctx=2048, slots=2)
        read = 0
        start = cited_prompt_start(history, Budget(400, 60), llm.count_tokens)
        assert not llm.holds(start)
        if read_ahead:
            read = llm.prefill(start)
            assert llm.prefill(start) == 0  # already held
            assert llm.holds(start) and not llm.holds(cited_prompt_start(history[:1], Budget(400, 60), llm.count_tokens))
        before = len(reads[id(llm._slots[0].llama)]) if llm._slots else 0
        out = llm.complete(cited_messages(question, history, block, Budget(400, 60), llm.count_tokens), params)
        assert len(llm._slots) == 1  # the request went to the slot that read ahead
        return out.text, read, reads[id(llm._slots[0].llama)][before]

    ahead_text, read, evaluated = answer(True)
    cold_text, _, cold_evaluated = answer(False)
    assert ahead_text == cold_text  # greedy: the same words, whether or not the start was read ahead
    assert read > 100 and evaluated <= cold_evaluated - read + 5  # only the passages and the question were left


def test_a_request_that_comes_during_a_read_ahead_gets_the_model_after_the_piece_in_progress(model_path, reads):
    """A read-ahead is speculation: a question that arrives meanwhile must not wait for all of it. The
    read stops after the piece it is reading, the request takes the model, reads only what was not
    read yet, and writes the answer it would have written cold."""
    import threading
    import time

    from convrag.generate.answer import cited_messages, cited_prompt_start
    from convrag.history import Budget
    from convrag.llm.local import LocalLLM
    from convrag.types import Message

    history = [Message("user", "How often does a sourdough starter need feeding?"),
               Message("agent", "Every day at room temperature [1]. In the fridge, once a week [1].")]
    block = "[1] (Bread) A loaf is baked at 230 degrees for about 40 minutes, with steam for the first 10."
    params = GenerationParams(max_tokens=24)
    llm = LocalLLM(model_path, n_ctx=2048, slots=1, read_ahead_chunk=32)
    start = cited_prompt_start(history, Budget(400, 60), llm.count_tokens)
    full = cited_messages("How long is it baked?", history, block, Budget(400, 60), llm.count_tokens)

    llama = llm._new_slot().llama  # the only slot: the read-ahead and the request share it
    pieces = reads[id(llama)]
    recording_eval = llama.eval
    answers: list = []
    request = threading.Thread(target=lambda: answers.append(llm.complete(full, params)))

    def first_piece_lets_a_request_come(tokens):  # type: ignore[no-untyped-def]
        if not pieces and not request.is_alive():  # the read-ahead's first piece: the question arrives
            request.start()
            deadline = time.monotonic() + 30
            while llm._waiting == 0 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert llm._waiting == 1
        recording_eval(tokens)

    llama.eval = first_piece_lets_a_request_come
    read = llm.prefill(start)
    request.join(timeout=120)
    assert read == 32 and pieces[0] == 32  # one piece of a start of some 300 tokens, then the request
    evaluated = pieces[1]  # the request's prompt: what the cache did not hold

    cold = LocalLLM(model_path, n_ctx=2048, slots=1)
    cold_answer = cold.complete(full, params)
    assert answers[0].text == cold_answer.text  # the piece read ahead changed nothing in the answer
    assert evaluated == reads[id(cold._slots[0].llama)][0] - read  # and the request did not read it again


def test_a_stop_while_the_answer_prompt_is_read_ends_the_stream_after_the_piece_in_progress(model_path, reads):
    """llama.cpp read an answer's prompt in one call that nothing could end (7.5 s to the first token
    of a cold answer on 2 cores): a user's Stop, or a client gone, waited all that time with the model
    held. Read in pieces, the stream ends after the piece in progress with no completion; the same
    prompt asked again reads only the rest, and the answer is the one written cold."""
    from convrag.generate.answer import cited_messages
    from convrag.history import Budget
    from convrag.llm.base import Completion, stream
    from convrag.llm.local import LocalLLM
    from convrag.types import Message

    history = [Message("user", "How often does a sourdough starter need feeding?"),
               Message("agent", "Every day at room temperature [1]. In the fridge, once a week [1].")]
    block = "[1] (Bread) A loaf is baked at 230 degrees for about 40 minutes, with steam for the first 10."
    params = GenerationParams(max_tokens=24)
    llm = LocalLLM(model_path, n_ctx=2048, slots=1, stop_chunk=32)
    full = cited_messages("How long is it baked?", history, block, Budget(400, 60), llm.count_tokens)
    looks: list[int] = []

    def pressed_during_the_first_piece() -> bool:
        looks.append(1)
        return len(looks) > 1

    assert list(stream(llm, full, params, pressed_during_the_first_piece)) == []  # nothing written, no completion
    pieces = reads[id(llm._slots[0].llama)]
    assert pieces == [32]  # one piece read, then the stop was seen

    cold = LocalLLM(model_path, n_ctx=2048, slots=1)
    cold_answer = cold.complete(full, params)
    cold_read = reads[id(cold._slots[0].llama)][0]
    again = list(stream(llm, full, params))  # asked again: the piece read is not read twice
    assert isinstance(again[-1], Completion) and again[-1].text == cold_answer.text
    assert pieces[1] == cold_read - 32
    # a stop never pressed: the prompt is read in pieces, then the answer written as it is cold
    fresh = LocalLLM(model_path, n_ctx=2048, slots=1, stop_chunk=32)
    *written, completion = stream(fresh, full, params, lambda: False)
    assert completion.text == "".join(written) == cold_answer.text
    assert completion.first_token_s is not None and completion.first_token_s <= completion.latency_s
    evaluated = reads[id(fresh._slots[0].llama)]
    prompt_pieces = evaluated[: evaluated.index(1)]  # then the answer's tokens, one at a time
    assert prompt_pieces[0] == 32 and sum(prompt_pieces) == cold_read  # in pieces, and read once


def test_a_stop_while_a_rewrite_prompt_is_read_ends_the_call_after_the_piece_in_progress(model_path, reads):
    """Only the answer's prompt was read in pieces: a Stop pressed while the model read the rewrite's
    prompt (the question's call, made deep inside a strategy) waited for the whole call. Made for a
    turn that a stop can end (``stopping``), the call now reads its prompt in pieces and raises
    Stopped after the piece in progress; asked again, it reads only the rest and answers as cold."""
    from convrag.llm.base import Stopped, stopping
    from convrag.llm.local import LocalLLM
    from convrag.strategies.prompts import rewrite_messages

    messages = rewrite_messages("User: How often does a sourdough starter need feeding?\n"
                                "Assistant: Every day at room temperature, once a week in the fridge.", "And in summer?")
    params = GenerationParams(max_tokens=24, stop=("\n",))
    llm = LocalLLM(model_path, n_ctx=2048, slots=1, stop_chunk=32)
    looks: list[int] = []

    def pressed_during_the_first_piece() -> bool:
        looks.append(1)
        return len(looks) > 1

    with stopping(pressed_during_the_first_piece), pytest.raises(Stopped):
        llm.complete(messages, params)
    pieces = reads[id(llm._slots[0].llama)]
    assert pieces == [32]  # one piece read, then the stop was seen

    cold = LocalLLM(model_path, n_ctx=2048, slots=1)
    cold_answer = cold.complete(messages, params)
    cold_read = reads[id(cold._slots[0].llama)][0]
    assert llm.complete(messages, params).text == cold_answer.text  # outside a turn: no stop, one call
    assert pieces[1] == cold_read - 32  # the piece read before the stop is not read twice
    # a stop never pressed: read in pieces, answered as cold
    fresh = LocalLLM(model_path, n_ctx=2048, slots=1, stop_chunk=32)
    with stopping(lambda: False):
        assert fresh.complete(messages, params).text == cold_answer.text
    evaluated = reads[id(fresh._slots[0].llama)]
    prompt_pieces = evaluated[: evaluated.index(1)]
    assert prompt_pieces[0] == 32 and sum(prompt_pieces) == cold_read


def test_a_prompt_longer_than_the_context_is_said_apart_however_it_is_read(model_path):
    """The local model's "Requested tokens exceed context window" was one more failure, "the language
    model could not answer; try again": a question pasted whole into `ask` failed again and again."""
    from convrag.generate.answer import TOO_LONG, AnswerFailed
    from convrag.llm.base import PromptTooLong, stream

    llm = LocalLLM(model_path, n_ctx=512, slots=1)
    long = [{"role": "user", "content": "Say which of these words is the longest: " + "harbour mooring " * 400}]
    reads = {"at once": lambda: llm.complete(long, GenerationParams(max_tokens=4)),
             "streamed": lambda: list(stream(llm, long, GenerationParams(max_tokens=4))),
             "in stoppable pieces": lambda: list(llm.stream(long, GenerationParams(max_tokens=4), stop=lambda: False))}
    for how, read in reads.items():
        with pytest.raises(PromptTooLong) as refused:
            read()
        assert "512" in str(refused.value) and str(AnswerFailed.of(refused.value)) == TOO_LONG, how
    fits = [{"role": "user", "content": "Reply with the single word: yes"}]
    assert llm.complete(fits, GenerationParams(max_tokens=4)).text.strip()  # the slot is left usable
