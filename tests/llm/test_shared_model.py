"""Slots share one loaded model (convrag.llm.shared_model), with the real local model."""

import subprocess
import sys
from pathlib import Path

from convrag.llm.shared_model import model_of

PROMPTS = ("The capital of France is", "One, two, three,")


def greedy(llama, prompt: str) -> str:  # type: ignore[no-untyped-def]
    return llama.create_completion(prompt, max_tokens=8, temperature=0)["choices"][0]["text"]


def test_every_context_runs_the_one_model_and_writes_what_a_model_of_its_own_writes(model_path: Path) -> None:
    """Every slot loaded a model of its own: on AVX2 CPUs llama.cpp repacks the weights into private
    memory (about 600 MiB each), so a service with four slots held four copies of the model."""
    from llama_cpp import Llama

    from convrag.llm.local import LocalLLM

    llm = LocalLLM(model_path, n_ctx=512, slots=3)
    first, second, third = (llm.open_context() for _ in range(3))
    assert model_of(first) == model_of(second) == model_of(third) != 0
    alone = Llama(model_path=str(model_path), n_ctx=512, n_threads=llm.n_threads, n_threads_batch=llm.n_threads,
                  flash_attn=llm.flash_attn, verbose=False)
    assert model_of(alone) != model_of(first)
    expected = [greedy(alone, prompt) for prompt in PROMPTS]
    # each context keeps its own state: a prompt read in one leaves the others as they were
    assert [greedy(second, PROMPTS[0]), greedy(third, PROMPTS[1])] == expected
    assert [greedy(first, PROMPTS[1]), greedy(second, PROMPTS[1]), greedy(third, PROMPTS[0])] == [expected[1], expected[1], expected[0]]


def test_the_internals_checked_are_those_of_the_pinned_version() -> None:
    """Raising llama-cpp-python's pin is to come with a look at context_over (and this constant)."""
    import re

    from convrag.llm.shared_model import CHECKED_WITH

    pinned = re.search(r'"llama-cpp-python\[server\]==([^"]+)"', (Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pinned and pinned.group(1) == CHECKED_WITH


def test_another_llama_cpp_python_gets_a_model_per_slot_not_a_guess_at_its_internals(
        model_path: Path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    import llama_cpp

    from convrag.llm.local import LocalLLM

    monkeypatch.setattr(llama_cpp, "__version__", "9.9.9")
    llm = LocalLLM(model_path, n_ctx=512, slots=2)
    first, second = llm.open_context(), llm.open_context()
    assert model_of(first) != model_of(second)
    assert "llama-cpp-python 9.9.9 is not 0.3.36" in caplog.text
    assert greedy(second, PROMPTS[0]) == greedy(first, PROMPTS[0])


# in a process of its own: its memory is what is measured, and freeing the model too early would
# end it with a crash rather than the test session
_MEASURE = """
import gc, sys, psutil
from convrag.llm.local import LocalLLM
llm = LocalLLM(sys.argv[1], n_ctx=2048, slots=4)
rss = lambda: psutil.Process().memory_info().rss
contexts = [llm.open_context()]
contexts[0].create_completion("Hello", max_tokens=1)
before = rss()
for _ in range(3):
    contexts.append(llm.open_context())
    contexts[-1].create_completion("Hello", max_tokens=1)
print((rss() - before) // 3 // 2**20)
last = contexts.pop()
del llm, contexts
gc.collect()  # the contexts that loaded and shared the model are gone; the last one still runs it
print(last.create_completion("One, two, three,", max_tokens=8, temperature=0)["choices"][0]["text"])
"""


def test_another_slot_costs_its_own_cache_not_another_model_and_outlives_the_first(model_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(model_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    per_slot_mib, text = done.stdout.splitlines()[-2:]
    # a 2048-token context (KV cache, compute buffers) is about 120 MiB; a model of its own added
    # about 600 MiB of repacked weights more, and the file's pages mapped again
    assert int(per_slot_mib) < 300, per_slot_mib
    assert "four" in text
