"""Several llama.cpp contexts over one loaded model.

llama-cpp-python's ``Llama`` loads a model of its own for every context it makes. Where llama.cpp
repacks weights for the CPU (Q4_K into an interleaved layout on AVX2 machines: about 600 MiB of
private memory for the default model), every extra slot of :class:`~convrag.llm.local.LocalLLM`
cost that much memory again, and the load and repack time again, on top of its own KV cache: four
slots held about 5 GB. A context made by :func:`context_over` uses the model its ``owner`` loaded
(weights mapped and repacked once) and holds a reference to the owner, so the model is freed only
after the last context over it.

This reaches into llama-cpp-python's internals, so it is used only with the version pinned in
pyproject.toml (:data:`CHECKED_WITH`); with another, :func:`shares_models` is False and every slot
loads the model again, as llama-cpp-python itself does (slower and larger, never wrong).
tests/llm/test_shared_model.py checks that a context made here shares the owner's model and
writes what a context loaded on its own writes.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

import numpy as np

#: the llama-cpp-python version whose internals :func:`context_over` was written and tested against
CHECKED_WITH = "0.3.36"


def installed_version() -> str:
    import llama_cpp

    return str(getattr(llama_cpp, "__version__", "unknown"))


def shares_models() -> bool:
    """Whether the installed llama-cpp-python is the one :func:`context_over` is known to be right for."""
    return installed_version() == CHECKED_WITH


def context_over(owner: Any) -> Any:
    """A new ``Llama`` with the owner's settings and model and a context (KV cache, batch, token
    and logit buffers, sampler state) of its own, empty."""
    from llama_cpp import Llama
    from llama_cpp import _internals as internals

    llama = Llama.__new__(Llama)
    llama.__dict__.update(owner.__dict__)  # settings, metadata, the model and its tokenizer: shared
    llama._model_owner = owner  # the owner frees the model when it goes: not before this context
    llama._stack = contextlib.ExitStack()  # closes this context's own parts, never the model
    llama._ctx = llama._stack.enter_context(contextlib.closing(
        internals.LlamaContext(model=owner._model, params=owner.context_params, verbose=owner.verbose)))
    llama._batch = llama._stack.enter_context(contextlib.closing(
        internals.LlamaBatch(n_tokens=owner.n_batch, embd=0, n_seq_max=owner.context_params.n_ctx, verbose=owner.verbose)))
    llama._candidates = internals.LlamaTokenDataArray(n_vocab=owner._n_vocab)
    llama.n_tokens = 0
    llama._requires_eval = True
    llama.input_ids = np.ndarray(owner.input_ids.shape, dtype=np.intc)
    llama.scores = np.ndarray(owner.scores.shape, dtype=np.single)
    llama._mirostat_mu = ctypes.c_float(2.0 * 5.0)  # llama-cpp-python's starting value
    llama._sampler = None
    llama.cache = None
    llama._chat_handlers = dict(owner._chat_handlers)
    llama.metadata = dict(owner.metadata)
    return llama


def model_of(llama: Any) -> int:
    """The address of the llama.cpp model a context runs (equal for contexts that share one)."""
    return int(ctypes.cast(llama._model.model, ctypes.c_void_p).value or 0)
