"""The offline default: a GGUF model run in-process by llama.cpp (llama-cpp-python).

On a CPU, reading the prompt is what costs (about 70 tokens/s on two cores), so this backend
keeps a few llama.cpp contexts ("slots") over one loaded model and sends each request to
the slot whose last prompt shares the longest prefix with it. llama.cpp then evaluates only the
new suffix: the fixed instructions of a prompt template, and the conversation so far when turns
of one conversation are rewritten in order, are read once instead of on every call.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import ChatMessage, Completion, GenerationParams, LLMError, PromptTooLong, Stopped, turn_stop
from .llama_output import quiet_llama
from .model_files import DEFAULT_MODEL_NAME, ensure_default_model
from .shared_model import CHECKED_WITH, context_over, installed_version, shares_models
from .steering import Steering

#: a slot is reused for a new request when it shares at least this many prompt characters
MIN_SHARED_PREFIX = 200

#: a read-ahead evaluates its prompt this many tokens at a time and hands the model to a waiting
#: request between two pieces (64 tokens: well under a second on two cores; docs/benchmarks.md)
READ_AHEAD_CHUNK = 64

#: a request that may be stopped reads its prompt this many tokens at a time, looking at the stop
#: between pieces: on 2 cores (AVX2) an 892-token answer prompt came 0.4 s (2.4-2.8 %) later to its
#: first token than read in one call, and a stop ended it 1.2 s after it was pressed, against 14.4 s;
#: 64-token pieces cost 8 % (docs/benchmarks.md, "A stop while the answer's prompt is read")
STOP_CHUNK = 128

log = logging.getLogger("convrag.llm")


def _nucleus(params: GenerationParams) -> dict[str, float]:
    """``top_p`` for llama.cpp when one is asked for; otherwise its own default (0.95) stays."""
    return {} if params.top_p is None else {"top_p": params.top_p}


#: llama.cpp's seeds are 32 bits, and the largest means "a random seed" (LLAMA_DEFAULT_SEED)
_RANDOM_SEED = 2**32 - 1


def _llama_seed(seed: int | None) -> int | None:
    """A client's seed as llama.cpp can take it: one in its range as it is, any other mapped by a hash
    into the range. Passed as it was, ctypes cut a larger seed to its low 32 bits (2**32 + 5 sampled
    what 5 did) and -1 became llama.cpp's "random seed", so one seed gave a different answer each time."""
    if seed is None or 0 <= seed < _RANDOM_SEED:
        return seed
    digest = hashlib.blake2b(str(seed).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % _RANDOM_SEED


def _failure(exc: Exception) -> LLMError:
    """llama-cpp-python's error as convrag's: a prompt longer than the context (its ValueError
    "Requested tokens (N) exceed context window of M") is a :class:`PromptTooLong`."""
    kind = PromptTooLong if "exceed context window" in str(exc) else LLMError
    return kind(f"local model failed: {exc}")


def _render(messages: list[ChatMessage]) -> str:
    return "".join(f"<{m['role']}>{m['content']}" for m in messages)


def _shared_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def chat_formatter(llama: Any, name: str) -> Any:
    """What llama-cpp-python builds for the model's own chat template (``chat_template.default``):
    called with ``messages``, it lays them out as the model reads them, the assistant's header last."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise LLMError(f"{name} has no chat template to lay a prompt out with")

    def text(token: int) -> str:
        return llama.detokenize([token], special=True).decode("utf-8") if token != -1 else ""

    return Jinja2ChatFormatter(template=template, eos_token=text(llama.token_eos()), bos_token=text(llama.token_bos()))


def build_features(system_info: str) -> list[str]:
    """The vector features a llama.cpp build was compiled with, from its system-info line
    (``"CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | ..."``); features set to 0 are left out."""
    features = []
    for item in system_info.replace("CPU :", "|").split("|"):
        name, _, value = item.partition("=")
        if value.strip() == "1" and name.strip().startswith(("AVX", "AMX", "F16C", "FMA", "BMI2")):
            features.append(name.strip())
    return features


def llama_build() -> str:
    """How the installed llama.cpp was built, for reports that time this backend: the same CPU reads
    a prompt a third faster with AVX-512 kernels than with AVX2 ones (docs/benchmarks.md)."""
    try:
        import llama_cpp
    except ImportError:
        return "llama.cpp not installed"
    features = build_features(llama_cpp.llama_print_system_info().decode("utf-8", "replace"))
    return f"llama.cpp built with {', '.join(features) or 'no vector features'}"


@dataclass
class _Slot:
    llama: Any
    last_prompt: str = ""
    last_used: float = field(default_factory=time.monotonic)


#: llama.cpp's fused ("flash") attention kernel, on unless a backend is made with ``flash_attn=False``:
#: on the 2-core AMD EPYC host measured it reads a prompt about 5 % faster and writes as fast; its
#: rounding differs, so a greedy reply may be worded otherwise where two tokens are near-tied
#: (quality the same within the noise on dev; docs/benchmarks.md, "Flash attention")
FLASH_ATTN = True


class LocalLLM:
    """A llama.cpp chat model. ``model_path`` None means the verified default model."""

    backend = "local"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        slots: int = 4,
        reuse_prefix: bool = True,
        read_ahead_chunk: int | None = READ_AHEAD_CHUNK,
        flash_attn: bool = FLASH_ATTN,
        stop_chunk: int | None = STOP_CHUNK,
    ) -> None:
        self._path = Path(model_path) if model_path else None
        self.model = self._path.stem if self._path else DEFAULT_MODEL_NAME
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, len(os.sched_getaffinity(0)))
        self.max_slots = max(1, slots)
        #: False makes every call read its whole prompt (as a backend without prefix caching
        #: would); the strategy latency benchmark uses it to show what the reuse is worth
        self.reuse_prefix = reuse_prefix
        #: tokens a read-ahead evaluates between two looks for a waiting request; None reads the
        #: whole start in one go (a request then waits for all of it: the benchmark's baseline)
        self.read_ahead_chunk = read_ahead_chunk
        #: tokens a request given a stop reads between two looks at it; None: in one call, which
        #: nothing can end
        self.stop_chunk = stop_chunk
        self.flash_attn = flash_attn
        self._slots: list[_Slot] = []
        # the first context made: it loaded the model, which every later context shares
        self._model_owner: Any = None
        self._model_lock = threading.Lock()
        self._lock = threading.Lock()
        # requests waiting for the model: a read-ahead in progress stops at its next piece for them
        self._waiting = 0
        self._waiting_lock = threading.Lock()
        # Counting tokens must not wait for a generation in progress (a server counts tokens for
        # other requests meanwhile): a vocabulary-only copy of the model, with its own lock.
        self._vocab: Any = None
        self._vocab_lock = threading.Lock()
        self._formatter: Any = None  # the model's own chat template, for reading a prompt's start ahead

    @property
    def model_path(self) -> Path:
        if self._path is None:
            self._path = ensure_default_model()
        if not self._path.is_file():
            raise LLMError(f"model file {self._path} does not exist")
        return self._path

    def open_context(self) -> Any:
        """A new llama.cpp context with this backend's settings (threads, window), over the model
        this backend loaded once: the first context loads it, every later one shares it
        (:mod:`convrag.llm.shared_model`), so a slot costs its KV cache, not another model.

        The slots are made of these; the reading-speed benchmark times one directly."""
        with self._model_lock:
            if self._model_owner is None:
                self._model_owner = self._load()
                return self._model_owner
        if not shares_models():  # another llama-cpp-python than the one context_over was checked with
            log.warning("llama-cpp-python %s is not %s: every slot loads the model again", installed_version(), CHECKED_WITH)
            return self._load()
        return context_over(self._model_owner)

    def _load(self) -> Any:
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - installed by the project's set-up
            raise LLMError("llama-cpp-python is not installed; run `make install`") from exc
        quiet_llama()  # the load would point the whole process's output at /dev/null for its seconds
        try:
            # n_threads_batch (the prompt's threads) defaults to os.cpu_count(), which counts the host's
            # cores, not those this process may use: in a container limited to 2 of 64 cores, 64
            # threads would contend for 2 while reading every prompt
            return Llama(model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                         n_threads_batch=self.n_threads, flash_attn=self.flash_attn, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"could not load {self.model_path}: {exc}") from exc

    def _new_slot(self) -> _Slot:
        slot = _Slot(self.open_context())
        self._slots.append(slot)
        return slot

    def _pick_slot(self, prompt: str) -> _Slot:
        slot = self._choose_slot(prompt)
        if not self.reuse_prefix:
            slot.llama.reset()  # forget the evaluated tokens: llama.cpp then reads the whole prompt
        return slot

    def _choose_slot(self, prompt: str) -> _Slot:
        if not self._slots:
            return self._new_slot()
        best = max(self._slots, key=lambda s: _shared_prefix(s.last_prompt, prompt))
        if _shared_prefix(best.last_prompt, prompt) >= MIN_SHARED_PREFIX:
            return best
        if len(self._slots) < self.max_slots:
            return self._new_slot()
        return min(self._slots, key=lambda s: s.last_used)

    def _steering(self, llama: Any, params: GenerationParams) -> Steering | None:
        """The request's steers as a logits processor on ``llama``, or None when it asks for none."""
        if not params.steered:
            return None

        def decode(tokens: Any) -> str:
            return bytes(llama.detokenize(list(tokens))).decode("utf-8", errors="ignore")

        def encode(text: str) -> list[int]:
            return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

        ends = {int(llama.token_eos())}
        end_of_turn = llama.tokenize(b"<|im_end|>", add_bos=False, special=True)  # the chat template's end of a message
        if len(end_of_turn) == 1:
            ends.add(int(end_of_turn[0]))
        return Steering(params, decode, encode, ends)

    @staticmethod
    def _processors(steering: Steering | None) -> Any:
        if steering is None:
            return None
        from llama_cpp import LogitsProcessorList

        return LogitsProcessorList([steering])

    def count_tokens(self, text: str) -> int:
        with self._vocab_lock:
            if self._vocab is None:
                import llama_cpp
                from llama_cpp._internals import LlamaModel  # the model without a context: tokenizer only

                params = llama_cpp.llama_model_default_params()
                params.vocab_only = True
                quiet_llama()
                try:
                    self._vocab = LlamaModel(path_model=str(self.model_path), params=params, verbose=False)
                except (ValueError, RuntimeError) as exc:
                    raise LLMError(f"could not load {self.model_path}: {exc}") from exc
            return len(self._vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _open_prompt(self, llama: Any, messages: list[ChatMessage]) -> list[int]:
        """The tokens of ``messages`` as the chat template lays them out, stopping where the last
        message's content stops (no end-of-message, no assistant header): the start of a longer prompt."""
        if self._formatter is None:
            self._formatter = chat_formatter(llama, self.model_path.name)
        mark = "\u2063\u2063"  # invisible separators: no prompt of ours holds them
        *head, last = messages
        laid_out = self._formatter(messages=[*head, {**last, "content": last["content"] + mark}])
        text = laid_out.prompt[: laid_out.prompt.index(mark)]
        return list(llama.tokenize(text.encode("utf-8"), add_bos=not laid_out.added_special, special=True))

    @contextmanager
    def _serving(self) -> Iterator[None]:
        """Hold the model for a request. While the request waits for it, a read-ahead in progress
        sees it waiting and stops at its next piece: nobody waits for a prompt read on speculation."""
        with self._waiting_lock:
            self._waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._waiting_lock:
                self._waiting -= 1
        try:
            yield
        finally:
            self._lock.release()

    def _prompt_start(self, llama: Any, messages: list[ChatMessage]) -> tuple[list[int], int]:
        """The tokens of a prompt's start (:meth:`_open_prompt`), and how many of them ``llama``'s cache
        holds already. One that does not fit the context is refused before the cache is touched."""
        tokens = self._open_prompt(llama, messages)
        if len(tokens) >= self.n_ctx:
            raise PromptTooLong(f"local model failed: a prompt start of {len(tokens)} tokens does not fit the {self.n_ctx}-token context")
        return tokens, llama.longest_token_prefix(llama.input_ids[: llama.n_tokens], tokens)

    def _read_pieces(self, llama: Any, tokens: list[int], shared: int, until: Callable[[], bool], why: str,
                     chunk: int | None) -> int:
        """Evaluate ``tokens[shared:]`` into ``llama``'s cache ``chunk`` tokens at a time (all at
        once when None), looking at ``until`` before each piece and stopping when it says so.
        Returns the tokens read; the cache then holds the prompt up to there, which a request that
        begins with it reuses. A failure resets the cache (its state is unknown) and raises LLMError."""
        import llama_cpp

        step = chunk or len(tokens)
        read = 0
        try:
            for begin in range(shared, len(tokens), step):
                if until():
                    log.info("%s after %d of %d tokens", why, begin - shared, len(tokens) - shared)
                    break
                # what llama.cpp's own generate does with a shared prefix: keep it and read what
                # follows (eval first drops the cache beyond ``n_tokens``)
                llama.n_tokens = begin
                llama.eval(tokens[begin: begin + step])
                # llama.cpp may still be computing the piece (and counts it only) until synced
                llama_cpp.llama_synchronize(llama.ctx)
                read = int(llama.n_tokens) - shared
        except (ValueError, RuntimeError) as exc:
            llama.reset()  # what the cache holds is unknown: the next request reads from scratch
            raise LLMError(f"local model failed: {exc}") from exc
        return read

    def prefill(self, messages: list[ChatMessage]) -> int:
        """Read the start of a coming prompt into the slot that request will be sent to (the one
        sharing the longest prefix with it), so that the request reads only what follows. Returns
        the tokens read now: 0 when the slot held them already, prefix reuse is off, or a request
        was waiting for the model.

        The start is read ``read_ahead_chunk`` tokens at a time; when a request comes meanwhile, the
        read stops at the end of the piece in progress and the model goes to the request, which
        still finds what was read so far in the slot's cache."""
        if not self.reuse_prefix or self._waiting:
            return 0
        prompt = _render(messages)
        with self._lock:
            if self._waiting:
                return 0
            slot = self._choose_slot(prompt)
            llama = slot.llama
            tokens, shared = self._prompt_start(llama, messages)
            if shared == len(tokens):
                return 0
            before, slot.last_prompt = slot.last_prompt, ""
            read = self._read_pieces(llama, tokens, shared, lambda: bool(self._waiting), "read-ahead yielded to a request",
                                     self.read_ahead_chunk)
            if not read:  # a request came before anything was read: the slot holds what it held
                slot.last_prompt = before
                return 0
            # the slot holds this prompt's start (all of it, or the part read before a request
            # came); llama.cpp compares tokens, so a request that shares less reads the rest
            slot.last_prompt = prompt
            slot.last_used = time.monotonic()
            return read

    def holds(self, messages: list[ChatMessage]) -> bool:
        """Whether a slot's last prompt (a read-ahead's, or a request's) begins with ``messages``, a
        prompt start: a request that begins with them would read only what follows. A read-ahead that
        yielded to a request part-way counts too; the request then reads the rest."""
        if not self.reuse_prefix:
            return False
        start = _render(messages)
        return any(slot.last_prompt.startswith(start) for slot in list(self._slots))

    def _stopped_reading(self, slot: _Slot, messages: list[ChatMessage], prompt: str, before: str,
                         stop: Callable[[], bool]) -> bool:
        """Read the prompt's start into ``slot`` ``stop_chunk`` tokens at a time, looking at ``stop``
        between pieces; True when it ended the read. The slot then records the prompt if anything
        of it was read (a request that begins with it reads the rest), else what it held (``before``)."""
        tokens, shared = self._prompt_start(slot.llama, messages)
        read = self._read_pieces(slot.llama, tokens, shared, stop, "a prompt read was stopped", self.stop_chunk)
        if not stop():
            return False
        slot.last_prompt = prompt if read else before
        slot.last_used = time.monotonic()
        return True

    #: :meth:`stream` takes ``stop``, and looks at it while the prompt is read (:func:`..base.stream`)
    stoppable = True

    def stream(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams(),
               stop: Callable[[], bool] | None = None) -> Iterator[str | Completion]:
        """Pieces of the answer as llama.cpp decodes them, then the :class:`Completion`. The model is
        held for the whole generation; closing the iterator early releases it.

        With ``stop`` (a user's "Stop", a client gone), the prompt is read ``stop_chunk`` tokens
        at a time first, looking at ``stop`` between pieces, and the generation then reads
        only the few tokens that open the reply. Without it, llama.cpp reads the prompt in one call
        that nothing can end: seconds on a CPU (a cold answer prompt took 7.5 s to its first token on
        2 cores), through which a stop waited and the model stayed held. Stopped there, the stream
        ends with no :class:`Completion`; the cache keeps what was read, which the same prompt asked
        again reuses. The first-token time counts the read."""
        prompt = _render(messages)
        with self._serving():
            slot = self._pick_slot(prompt)
            start = time.perf_counter()
            pieces: list[str] = []
            first: float | None = None
            finish: str | None = None
            before, slot.last_prompt = slot.last_prompt, ""  # until the generation completes, the slot's state is not this prompt's
            if stop is not None and self.stop_chunk and self._stopped_reading(slot, messages, prompt, before, stop):
                return
            steering = self._steering(slot.llama, params)
            try:
                for chunk in slot.llama.create_chat_completion(
                    messages=list(messages), temperature=params.temperature, max_tokens=params.max_tokens, seed=_llama_seed(params.seed),
                    stop=list(params.stop) or None, stream=True, logits_processor=self._processors(steering), **_nucleus(params),
                ):
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    piece = choice["delta"].get("content")
                    if piece:
                        if first is None:
                            first = time.perf_counter() - start
                        pieces.append(piece)
                        yield piece
            except (ValueError, RuntimeError) as exc:
                raise _failure(exc) from exc
            latency = time.perf_counter() - start
            slot.last_prompt = prompt
            slot.last_used = time.monotonic()
            used = int(slot.llama.n_tokens)  # prompt and answer tokens now in the context
        text = "".join(pieces)
        completion_tokens = self.count_tokens(text)
        yield Completion(text, max(0, used - completion_tokens), completion_tokens, latency, self.model, first_token_s=first,
                         steering=steering.report() if steering is not None else None, finish_reason=finish)

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        """The whole answer in one :class:`Completion`. Made for a turn that a stop can end
        (:func:`..base.stopping`: the rewrite's call in the service and the terminal chat), the
        prompt is read ``stop_chunk`` tokens at a time first, looking at the stop between pieces,
        and a stop there raises :class:`~..base.Stopped`; the cache keeps what was read."""
        prompt = _render(messages)
        stop = turn_stop()
        with self._serving():
            slot = self._pick_slot(prompt)
            start = time.perf_counter()
            if stop is not None and self.stop_chunk:
                before, slot.last_prompt = slot.last_prompt, ""  # until the call completes, the slot's state is not this prompt's
                if self._stopped_reading(slot, messages, prompt, before, stop):
                    raise Stopped("the turn was stopped while the model read this call's prompt")
            steering = self._steering(slot.llama, params)
            try:
                out = slot.llama.create_chat_completion(
                    messages=list(messages),
                    temperature=params.temperature,
                    max_tokens=params.max_tokens,
                    seed=_llama_seed(params.seed),
                    stop=list(params.stop) or None,
                    logits_processor=self._processors(steering),
                    **_nucleus(params),
                )
            except (ValueError, RuntimeError) as exc:  # e.g. the prompt exceeds n_ctx
                slot.last_prompt = ""
                raise _failure(exc) from exc
            latency = time.perf_counter() - start
            slot.last_prompt = prompt
            slot.last_used = time.monotonic()
        usage = out.get("usage") or {}
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        return Completion(text, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)), latency, self.model,
                          steering=steering.report() if steering is not None else None, finish_reason=choice.get("finish_reason"))
