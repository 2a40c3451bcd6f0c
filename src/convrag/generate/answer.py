"""Writing a cited answer from the merged passages and the conversation.

Passages are numbered in prompt order; the model cites them as [n]. Citations are parsed back to
the merged results (collection, passage, title, url; :mod:`.citations`); numbers that match no
passage are dropped and recorded, and an uncited sentence copied from a passage gets that passage's
number, marked ``inferred``. Passages the merge marked as conflicting are flagged in the prompt.

What the default settings add to that (each measured on the dev split, docs/benchmarks.md):

* a prompt with worked examples (topics absent from MT-RAG) that show the citation format and the
  decline sentence: a 1.5B model copies an example far better than it follows an instruction;
* extractive compression (:mod:`.compress`): only the sentences that bear on the question, within a
  token budget, so the prompt is read sooner; the conversation comes before the passages, so the
  backend reuses the evaluated prefix from one turn to the next;
* a decline decision that does not rely on the model's greedy choice (:mod:`.decline`): nothing
  relevant retrieved, the model's doubt read at its first step, or an answer not grounded in the
  passages, becomes the decline sentence;
* steered decoding on the local backend (:mod:`..llm.steering`): a sentence about to end without a
  citation gets the opener ``[`` and the model writes the passage number, so citations are the
  model's own rather than inferred afterwards. The trace says how many sentences were steered.

``AnswerSettings.first()`` is the prompt and behaviour before these, kept for comparison.
A model failure raises :class:`AnswerFailed`: it is never passed off as an answer.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple

from ..embeddings import Embedder, load_embedder
from ..errors import ConvragError
from ..history import Budget, render_pairs, turn_pairs
from ..llm.base import LLM, ChatMessage, Completion, GenerationParams, LLMError, PromptTooLong, holds, prefill, stream
from ..merge.base import MergedResult
from ..text import content_stems, same_query
from ..types import Message
from .citations import (
    MIN_WORDS,
    Citation,
    answer_sentences,
    has_citation,
    infer_citations,
    parse_citations,
    repoint_citations,
    separate_markers,
    strip_citations,
    supported,
    written_numbers,
)
from .compress import CompressedPassage, CompressionSettings, best_score, compress
from .decline import DeclineSettings, EchoGuard, echoes_question, grounding, repeats_earlier, restates_question, said_sentences
from .tidy import drop_repeats, has_words, whole_sentences

DECLINE = "I do not have specific information about that in the available sources."
#: where an answer ends at the latest: the prompts show the conversation as "User: ..." lines, and
#: a small model sometimes goes on to write the user's next question and its own reply to it (one
#: dev answer of 71 in the 2026-11-25 runs); that text is never part of the answer
ANSWER_STOP = ("\nUser:",)
#: how freely another attempt at an answer (a regenerated one) is sampled: enough to word it anew,
#: little enough that a 1.5B model keeps to the passages and the citation format
VARIATION_TEMPERATURE = 0.7
#: the seed of the second attempt after an answer that repeated the question (:meth:`AnswerGenerator._again`)
ECHO_SEED = 0


class Sampling(NamedTuple):
    """An answer sampled instead of decoded greedily: another attempt at it ("Regenerate"), or a
    client that asks for a temperature. Greedy decoding, and the completion cache keyed by it, would
    give the same answer again; the seed makes a sampled one reproducible and keys it on its own."""

    temperature: float
    seed: int
    #: nucleus sampling's cut (a client's ``top_p``); None: the backend's own (llama.cpp: 0.95)
    top_p: float | None = None

    @classmethod
    def fresh(cls, temperature: float = VARIATION_TEMPERATURE, seed: int | None = None, top_p: float | None = None) -> Sampling:
        """Sampling at ``temperature`` with ``seed``, or a random seed where none is given."""
        return cls(temperature, secrets.randbelow(2**31) if seed is None else seed, top_p)


class ClientLimits(NamedTuple):
    """What a client's request asks of one answer beyond the pipeline's settings (OpenAI's
    ``max_tokens`` and ``stop``). Both can only end the answer sooner: a higher ``max_tokens``
    than the pipeline's is not taken, and the pipeline's own stop strings stay."""

    max_tokens: int | None = None
    stop: tuple[str, ...] = ()

SYSTEM = (
    "You answer the user's last question using ONLY the numbered passages. After each sentence, cite the passages "
    "that support it as [1], [2]. Be concise: at most 4 sentences. If the passages do not contain the answer, reply "
    f"exactly: \"{DECLINE}\" Do not use outside knowledge. If passages marked (conflicting) disagree, say that the "
    "sources disagree and cite each."
)

CITED_SYSTEM = (
    "Answer the user's last question from the numbered passages only. Write at most 3 short sentences and end every "
    "sentence with the number of the passage it comes from, like [1]. If the passages do not answer the question, "
    f"reply exactly: \"{DECLINE}\" If passages marked (conflicting) disagree, say so and cite each."
)


class AnswerExample(NamedTuple):
    """A worked example for the cited prompt, with the named topics it is about (checked against the
    benchmark data by tests/strategies/test_prompts.py)."""

    passages: str
    question: str
    answer: str
    topics: tuple[str, ...]


_STARTER = "[1] (Sourdough starter) A starter is fed with equal weights of flour and water."
_STEAM = "[2] (Baking) Steam in the first minutes of baking gives the loaf a crisp outside."
_FEEDING = f"{_STARTER} At room temperature it needs feeding every day … Kept in the fridge, once a week is enough."
_CHESS = AnswerExample(f"{_STARTER}\n{_STEAM}", "Who invented the chess clock?", DECLINE, ("sourdough", "baking", "chess"))

#: worked examples of the ``cited`` prompt, by name (``AnswerSettings.examples``). The model copies
#: the examples' form far more than it follows the instructions, so the answers' length is set here.
EXAMPLE_SETS: dict[str, tuple[AnswerExample, ...]] = {
    # two short cited sentences: quick to write, but short of what a full reference answer says
    "brief": (
        AnswerExample(
            f"{_FEEDING}\n{_STEAM}",
            "How often does a sourdough starter need feeding?",
            "At room temperature a sourdough starter needs feeding every day [1]. In the fridge, once a week is enough [1].",
            ("sourdough", "baking"),
        ),
        _CHESS,
    ),
    # three sentences that restate the question's subject and gather what every passage adds
    "full": (
        AnswerExample(
            f"{_FEEDING}\n{_STEAM}\n[3] (Sourdough starter) A starter that misses its feeding turns sour and collects "
            "a grey liquid on top … Pouring the liquid off and feeding it twice a day usually revives it.",
            "How often does a sourdough starter need feeding?",
            "A sourdough starter kept at room temperature needs feeding every day, with equal weights of flour and "
            "water [1]. Kept in the fridge, it needs feeding only once a week [1]. If a feeding is missed, the starter "
            "turns sour and collects a grey liquid, but pouring the liquid off and feeding it twice a day usually "
            "revives it [3].",
            ("sourdough", "baking"),
        ),
        _CHESS,
    ),
}
ANSWER_EXAMPLES = EXAMPLE_SETS["brief"]

#: who says there is nothing to answer from: the model itself or the passages (a subject is needed:
#: "Medicare does not provide information to third parties [1]" is an answer, not a decline)
_SAYER = r"\b(?:I|we|(?:passages?|sources?|documents?|context|texts?)(?: provided| given| above| here)?)"
_NOT = r"(?:do not|does not|don['’]t|doesn['’]t)"
_CANNOT = r"(?:cannot|can['’]t|could not|couldn['’]t|am unable to|am not able to)"
_IN_PASSAGES = r"in the (?:given |provided |available )?(?:passages?|sources?|documents?|context|texts?)\b"
#: the ways a model says it has no answer besides :data:`DECLINE`; each names the sayer or what is
#: missing, as "cannot find" and "no information" alone did not: "If you cannot find your receipt,
#: call the desk [1]" and "There is no information fee [1]" were declined, their answers lost
_DECLINED = re.compile(
    rf"{_SAYER} {_NOT} (?:have|contain|provide|include|mention) (?:any |specific |enough )?(?:information|details|answer)"
    r"|\bno (?:specific |relevant )?information(?=(?: is| was)? (?:about|on|regarding|in|available|provided|given|found)\b|\s*[.,;!]|\s*$)"
    rf"|{_SAYER} {_CANNOT} (?:find|answer|locate)\b"
    rf"|\bnot (?:mentioned|specified|provided) {_IN_PASSAGES}",
    re.IGNORECASE,
)
PROMPTS = ("cited", "plain")


def _label(r: MergedResult) -> str:
    """A passage label with its source: collection and title, or the document id (the default)."""
    flag = " (conflicting)" if r.conflicts_with else ""
    return f"{flag} ({r.hit.collection}; {r.hit.title or r.hit.document_id})"


def _title_label(r: MergedResult) -> str:
    """A passage label with the title alone, as the worked examples show it (``labels="title"``): no
    collection name, and no document id in place of a missing title (cloud and fiqa passages have
    none), about 26 prompt tokens fewer on MT-RAG. An option, not the default: on the dev half the
    first token came 0.17 s sooner in a replayed chat, but ROUGE-L fell by a point in both dev runs
    (pooled over 91 answerable turns -1.1 points, p = 0.10; docs/benchmarks.md)."""
    flag = " (conflicting)" if r.conflicts_with else ""
    return f"{flag} ({r.hit.title})" if r.hit.title else flag


#: how the ``cited`` prompt labels a passage (``AnswerSettings.labels``)
LABELS: dict[str, Callable[[MergedResult], str]] = {"source": _label, "title": _title_label}


@dataclass(frozen=True)
class AnswerSettings:
    """How answers are written. ``prompt``: ``cited`` (worked examples, history first) or ``plain``
    (the first prompt); ``compression`` and ``decline`` off with None."""

    prompt: str = "cited"
    compression: CompressionSettings | None = CompressionSettings()
    decline: DeclineSettings | None = DeclineSettings()
    max_tokens: int = 160
    history: Budget = Budget(tokens=400, answer_words=60)
    #: the history budget of a follow-up the strategy judged self-contained (progressive's stage 1:
    #: no reference back, the topic named in the question), e.g. the user's earlier questions only
    #: (``Budget(100, answer_words=0)``); a backend that read the whole history ahead (a chat) is
    #: shown it anyway. Reading the conversation is most of a cold turn's wait before the first
    #: token: with the user's questions only, these turns' first token came 2.4 s sooner on the dev
    #: half at the same ROUGE-L, but on the test half the answers were shorter and overlapped the
    #: references less (-1.1 points, p = 0.03), with two more false declines (docs/benchmarks.md),
    #: so it is an option. None: ``history`` for every turn
    self_contained_history: Budget | None = None
    passage_words: int = 180  # without compression, each passage is clipped to this many words
    #: make the model cite every sentence as it writes it (:mod:`..llm.steering`; local backend)
    cite_sentences: bool = True
    #: the ``cited`` prompt's worked examples (:data:`EXAMPLE_SETS`)
    examples: str = "brief"
    #: ask the strategy's standalone question (when the model wrote one) in place of the question as
    #: asked: the question then carries its own topic, so the history can be cut to the user's side
    ask_standalone: bool = False
    #: passage labels in the ``cited`` prompt: ``source`` (collection; title or document id) or
    #: ``title`` (the title alone, as in the worked examples: fewer tokens, see :func:`_title_label`)
    labels: str = "source"
    #: logit bonus for continuing a shown passage's wording where the answer's ending (two words or
    #: more) occurs in it (:class:`..llm.steering.CopyIndex`; local backend); 0 leaves the wording alone
    copy_bias: float = 0.0
    #: the fewest words of the answer's ending a passage must hold before its continuation gets the bonus
    copy_context: int = 2
    #: answer a greeting, thanks, a goodbye or a bare "ok" with a reply of its kind, without a search
    #: or a model call (:mod:`convrag.social`); the pipeline looks at it before the strategy
    social_replies: bool = True
    #: write an answer once more, sampled, when it is made wholly of sentences the conversation's
    #: earlier answers said (:func:`.decline.repeats_earlier`; ``repeat_retry`` in the trace): shown
    #: the same passages again, the small model wrote its last answer to a new question. The second
    #: attempt stands, a repeat or not: the user may have asked the same thing again. An option: on
    #: the dev half it changed one answer and no figure (docs/benchmarks.md, "An earlier answer
    #: written again"). Off, a repeat is still marked in the trace (``details.repeat``)
    retry_repeat: bool = False

    def __post_init__(self) -> None:
        if self.prompt not in PROMPTS:
            raise ValueError(f"unknown answer prompt {self.prompt!r}; expected one of {', '.join(PROMPTS)}")
        if self.labels not in LABELS:
            raise ValueError(f"unknown passage labels {self.labels!r}; expected one of {', '.join(LABELS)}")
        if self.examples not in EXAMPLE_SETS:
            raise ValueError(f"unknown worked examples {self.examples!r}; expected one of {', '.join(EXAMPLE_SETS)}")

    @classmethod
    def first(cls) -> AnswerSettings:
        """The answers before compression, the decline gate and the cited prompt (for comparison)."""
        return cls(prompt="plain", compression=None, decline=None, max_tokens=200, cite_sentences=False, social_replies=False)


#: named settings, so that a pipeline spec, the CLI and the evaluation can pick one
ANSWER_PRESETS: dict[str, AnswerSettings] = {
    "default": AnswerSettings(),
    "first": AnswerSettings.first(),
    # the default without the decline gate: every turn reaches the model, so that relevance and
    # grounding can be recorded for all of them and the thresholds chosen (tools/tune_on_dev.py)
    "ungated": AnswerSettings(decline=DeclineSettings(min_relevance=0.0, min_grounding=0.0)),
    # a shorter prompt for a slow machine: the model's standalone question in place of the
    # conversation, of which only the user's questions stay. On the dev half the first token came
    # 3.3 s sooner, at 2.5 points of ROUGE-L and twice the false declines (docs/benchmarks.md);
    # measured with 350 passage tokens, which it keeps
    "fast": AnswerSettings(history=Budget(tokens=100, answer_words=0), ask_standalone=True,
                           compression=CompressionSettings(max_tokens=350)),
    # the default with the copy steer at the strength measured on the dev half: more verbatim
    # answers (support by word overlap 87 -> 93 %), not better ones to read (docs/benchmarks.md)
    "copy": AnswerSettings(copy_bias=4.0),
    # the default, a follow-up the strategy found self-contained shown only the user's earlier
    # questions when its history was not read ahead: a cold turn's first token about 2 s sooner, at
    # about a point of ROUGE-L on the test half and more false declines (docs/benchmarks.md)
    "self-contained": AnswerSettings(self_contained_history=Budget(tokens=100, answer_words=0)),
    # the default with a kept heading and a table's rows on lines of their own: it mended a handbook
    # chat (the leave, hotel and mileage questions), but on MT-RAG it changed 8 dev and 11 test answers,
    # for the worse on average, none significantly (docs/benchmarks.md)
    "layout": AnswerSettings(compression=CompressionSettings(layout=True)),
    # the default with an answer that repeats an earlier one written once more, sampled: on the dev
    # half one answer changed and no figure; on test one answer was mended, one declined and one
    # made a guess (docs/benchmarks.md, "An earlier answer written again")
    "retry-repeat": AnswerSettings(retry_repeat=True),
}


@dataclass
class Answer:
    text: str
    citations: list[Citation]
    declined: bool
    trace: dict[str, Any] = field(default_factory=dict)


class AnswerFailed(ConvragError):
    """The language model could not write the answer (backend down, timeout, refused request).

    Raised rather than turned into an answer: a failure is not something to show as the
    assistant's words, store as a conversation turn or feed back as history. ``detail`` keeps
    the backend's own message for logs; ``str()`` is safe to show (no URL, no key).
    """

    def __init__(self, detail: str, too_long: bool = False) -> None:
        super().__init__(TOO_LONG if too_long else "the language model could not answer; try again")
        self.detail = detail
        #: the prompt did not fit the model's context: asking again fails alike (it was "try again")
        self.too_long = too_long

    @classmethod
    def of(cls, exc: LLMError) -> AnswerFailed:
        return cls(str(exc), too_long=isinstance(exc, PromptTooLong))


#: what a user is told when the answer's prompt is longer than the model reads at once: the history
#: and the passages are cut to their budgets, so what does not fit is the question
TOO_LONG = "the question is too long for the language model to read with its passages; ask it in fewer words"


def passage_block(results: Sequence[MergedResult], max_words: int = 180, label: Callable[[MergedResult], str] = _label) -> str:
    lines = []
    for i, r in enumerate(results, start=1):
        words = r.hit.text.split()
        text = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
        lines.append(f"[{i}]{label(r)} {text}")
    return "\n".join(lines)


def compressed_block(passages: Sequence[CompressedPassage], label: Callable[[MergedResult], str] = _label) -> str:
    return "\n".join(f"[{i}]{label(p.result)} {p.text}" for i, p in enumerate(passages, start=1))


def answer_messages(question: str, history: Sequence[Message], results: Sequence[MergedResult], history_budget: Budget,
                    count_tokens: Any) -> list[ChatMessage]:
    """The first (``plain``) prompt: passages, then the conversation, then the question."""
    context, _ = render_pairs(turn_pairs(history), count_tokens, history_budget)
    user = (
        f"Passages:\n{passage_block(results) or '(none)'}\n\n"
        f"Conversation so far:\n{context or '(none)'}\n\n"
        f"Question: {question}\nAnswer with citations:"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _cited_head(context: str) -> str:
    """The start of the ``cited`` prompt's last message: all of it that is known before the question."""
    return f"Conversation so far:\n{context or '(none)'}\n\nPassages:\n"


def _cited_user(context: str, block: str, question: str) -> str:
    return f"{_cited_head(context)}{block or '(none)'}\n\nQuestion: {question}\nAnswer:"


def _cited_start(examples: Sequence[AnswerExample]) -> list[ChatMessage]:
    messages: list[ChatMessage] = [{"role": "system", "content": CITED_SYSTEM}]
    for example in examples:
        messages.append({"role": "user", "content": _cited_user("", example.passages, example.question)})
        messages.append({"role": "assistant", "content": example.answer})
    return messages


def _cited_opening(context: str, examples: Sequence[AnswerExample]) -> list[ChatMessage]:
    """The ``cited`` prompt up to its passages, with ``context`` as the conversation."""
    return [*_cited_start(examples), {"role": "user", "content": _cited_head(context)}]


def _cited_prompt(context: str, block: str, question: str, examples: Sequence[AnswerExample]) -> list[ChatMessage]:
    return [*_cited_start(examples), {"role": "user", "content": _cited_user(context, block, question)}]


def cited_messages(question: str, history: Sequence[Message], block: str, history_budget: Budget, count_tokens: Any,
                   examples: Sequence[AnswerExample] = ANSWER_EXAMPLES) -> list[ChatMessage]:
    """The ``cited`` prompt: instructions and worked examples (a fixed prefix), then the conversation
    (which grows turn by turn, so the prefix up to it is reused), the passages and the question."""
    context, _ = render_pairs(turn_pairs(history), count_tokens, history_budget)
    return _cited_prompt(context, block, question, examples)


def cited_prompt_start(history: Sequence[Message], history_budget: Budget, count_tokens: Any,
                       examples: Sequence[AnswerExample] = ANSWER_EXAMPLES) -> list[ChatMessage]:
    """The part of the next turn's ``cited`` prompt that is known once ``history`` is: everything
    up to the passages. Its last message is the start of :func:`cited_messages`'s last message."""
    context, _ = render_pairs(turn_pairs(history), count_tokens, history_budget)
    return _cited_opening(context, examples)


_RESTATED = "the answer only restates the question and no passage it cites holds it"


def _backed(text: str, results: Sequence[MergedResult]) -> bool:
    """Whether some sentence of the answer is supported by a passage it cites (the test the answer
    evaluation judges citations by)."""
    return any(supported(sentence, results[n - 1].hit.text) for sentence in answer_sentences(text)
               for n in written_numbers(sentence) if 1 <= n <= len(results))


def is_decline(text: str) -> bool:
    return DECLINE.lower().rstrip(".") in text.lower() or bool(_DECLINED.search(text))


def answered_part(text: str, results: Sequence[MergedResult]) -> list[str]:
    """The sentences of a reply that say what a passage holds (:data:`.citations.MIN_WORDS` content
    words or more, most of them in one passage) without saying there is nothing to answer from.
    Asked for the fee and the opening hours, the model answers "The fee is 5 dollars [1]. The passages
    do not mention the opening hours."; such a reply declines only in part, and replacing it with
    the decline sentence threw the fee away."""
    return [sentence for sentence in answer_sentences(text)
            if not is_decline(sentence) and len(content_stems(strip_citations(sentence))) >= MIN_WORDS
            and any(supported(sentence, r.hit.text) for r in results)]


def _question_before(history: Sequence[Message]) -> str:
    """The user's last question in ``history`` ("" in a conversation's first turn)."""
    return next((m.text.strip() for m in reversed(history) if m.speaker == "user" and m.text.strip()), "")


@dataclass
class _Prepared:
    """What the model is asked, or the answer decided without asking it."""

    messages: list[ChatMessage] | None
    shown: list[str]
    trace: dict[str, Any]
    question: str  # as the model is asked it
    early: Answer | None = None
    #: the conversation's earlier answers: one made again of their sentences (:attr:`said`) is marked,
    #: and with ``retry_repeat`` written once more
    earlier: tuple[str, ...] = ()

    @cached_property
    def said(self) -> tuple[tuple[str, ...], ...]:
        """The earlier answers' sentences (:func:`.decline.said_sentences`), split when first asked for:
        after the answer, unless ``retry_repeat``'s stream guard needs them before it (about 1 ms an
        earlier answer, which would otherwise come before every turn's first token)."""
        return said_sentences(self.earlier)


class AnswerGenerator:
    """Answers from merged passages with any backend of the LLM layer (the local model by default).
    ``embedder`` scores sentences for compression (the default model, loaded on first use)."""

    def __init__(self, llm: LLM, settings: AnswerSettings = AnswerSettings(), embedder: Embedder | None = None) -> None:
        self.llm = llm
        self.settings = settings
        self._embedder = embedder
        cited = settings.prompt == "cited"
        self.params = GenerationParams(
            max_tokens=settings.max_tokens, stop=ANSWER_STOP, cite_sentences=settings.cite_sentences and cited,
            # the model's doubt about the decline sentence is read on every cited answer, and decides
            # at the dev-chosen threshold (:class:`.decline.DeclineSettings`)
            first_choice=DECLINE if cited else "",
            first_choice_at=settings.decline.model_decline_at if cited and settings.decline is not None else None,
            copy_bias=settings.copy_bias, copy_context=settings.copy_context,
        )

    def _params(self, prepared: _Prepared, sampling: Sampling | None = None, limits: ClientLimits | None = None) -> GenerationParams:
        """The request's decoding settings: the copy steer needs the passages this prompt shows;
        ``sampling`` replaces greedy decoding, which would write, or read from the cache, the same
        answer again; ``limits`` (a client's) lower the answer's length limit, never raise it, and
        add stop strings to the pipeline's."""
        params = self.params if self.params.copy_bias <= 0 else replace(self.params, copy_from=tuple(prepared.shown))
        if sampling is not None:
            params = replace(params, temperature=sampling.temperature, seed=sampling.seed, top_p=sampling.top_p)
            prepared.trace["details"]["sampled"] = {k: v for k, v in sampling._asdict().items() if v is not None}
        if limits is None:
            return params
        if limits.max_tokens is not None and limits.max_tokens < params.max_tokens:
            params = replace(params, max_tokens=limits.max_tokens)
            prepared.trace["details"]["length_limit"] = {"max_tokens": limits.max_tokens}
        if extra := tuple(s for s in dict.fromkeys(limits.stop) if s not in params.stop):
            params = replace(params, stop=(*params.stop, *extra))
            prepared.trace["details"]["stop_strings"] = list(extra)
        return params

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder()
        return self._embedder

    def _prepare(self, question: str, history: Sequence[Message], results: Sequence[MergedResult], query: str | None,
                 standalone: str | None, self_contained: bool, start: float) -> _Prepared:
        s = self.settings
        trace: dict[str, Any] = {"passages": len(results), "details": {"prompt": s.prompt}}
        if s.ask_standalone and standalone and standalone.strip() != question.strip():
            trace["details"]["asked"] = standalone  # the model is asked the standalone question
            question = standalone
        if not results:
            trace["fallback"] = "no passages retrieved: declined without a model call"
            return _Prepared(None, [], trace, question, Answer(DECLINE, [], True, {**trace, "latency_s": time.perf_counter() - start}))
        earlier = tuple(m.text for m in history if m.speaker != "user")
        if s.prompt == "plain":
            return _Prepared(answer_messages(question, history, results, s.history, self.llm.count_tokens),
                             [r.hit.text for r in results], trace, question, earlier=earlier)
        if s.compression is not None:
            passages = compress(query or question, results, self.embedder, self.llm.count_tokens, s.compression)
            relevance = max(p.best for p in passages)
            trace["details"]["compression"] = {"kept_sentences": [p.kept for p in passages],
                                               "total_sentences": [p.total for p in passages], "relevance": round(relevance, 4)}
            if heading := max(passages, key=lambda p: p.best).heading:  # the best sentence scored under its heading
                trace["details"]["compression"]["relevance_heading"] = heading
            before = _question_before(history) if not standalone or same_query(standalone, question) else ""
            if before and (query is None or same_query(query, question)):
                # a follow-up searched as asked, scored with the question before it too (DeclineSettings.in_context)
                in_context = best_score(f"{before} {question}", results, self.embedder, self.llm.count_tokens, s.compression)
                trace["details"]["compression"]["relevance_in_context"] = round(in_context, 4)
                if s.decline is not None and s.decline.in_context:
                    relevance = max(relevance, in_context)
            if s.decline is not None and relevance < s.decline.min_relevance:
                trace["details"]["declined_below"] = s.decline.min_relevance  # the floor: a setting (PipelineSpec.decline_below)
                used = s.decline.in_context and "relevance_in_context" in trace["details"]["compression"]
                scored = " alone or with the question before it" if used else ""
                trace["fallback"] = (f"declined without a model call: no passage sentence is close to the question{scored} "
                                     f"(best cosine {relevance:.2f} < {s.decline.min_relevance})")
                return _Prepared(None, [], trace, question, Answer(DECLINE, [], True, {**trace, "latency_s": time.perf_counter() - start}))
            block, shown = compressed_block(passages, LABELS[s.labels]), [p.text for p in passages]
        else:
            block, shown = passage_block(results, s.passage_words, LABELS[s.labels]), [r.hit.text for r in results]
        pairs = turn_pairs(history)
        examples = EXAMPLE_SETS[s.examples]
        budget = s.history
        context, dropped = render_pairs(pairs, self.llm.count_tokens, budget)
        own = s.self_contained_history if self_contained and pairs else None
        if own is not None:
            # a question that names its own topic needs the conversation little: a short history
            # saves a cold prompt most of its reading, unless the backend read the whole one ahead
            if holds(self.llm, _cited_opening(context, examples)):
                trace["details"]["self_contained"] = "the whole history: the backend had read it ahead"
            else:
                budget = own
                context, dropped = render_pairs(pairs, self.llm.count_tokens, budget)
                trace["details"]["self_contained"] = f"history cut to {budget.tokens} tokens, {budget.answer_words} words an answer"
        # which exchanges the model sees: with a stepped window the start moves only every few turns
        trace["details"]["history"] = {"exchanges": len(pairs), "dropped": dropped, "step": budget.step}
        return _Prepared(_cited_prompt(context, block, question, examples), shown, trace, question, earlier=earlier)

    def prefill(self, history: Sequence[Message]) -> int | None:
        """Have the backend read the next turn's prompt up to its passages, once ``history`` (the
        conversation including the last answer) is known: the next answer then reads only its
        passages and question. Returns the tokens read; None when there is nothing to read ahead
        (the ``plain`` prompt puts the passages first; a backend without prefix reuse). A model
        failure raises :class:`~convrag.llm.base.LLMError`."""
        s = self.settings
        if s.prompt != "cited":
            return None
        return prefill(self.llm, cited_prompt_start(history, s.history, self.llm.count_tokens, EXAMPLE_SETS[s.examples]))

    def answer(self, question: str, history: Sequence[Message], results: Sequence[MergedResult], query: str | None = None,
               standalone: str | None = None, self_contained: bool = False, sampling: Sampling | None = None,
               limits: ClientLimits | None = None) -> Answer:
        """The cited answer; ``query`` (the strategy's retrieval query) scores sentences for compression;
        ``standalone`` (the question the model restated on its own, if any) is asked with ``ask_standalone``;
        ``self_contained`` (the strategy found the question needs no context) selects
        ``self_contained_history``; ``sampling`` samples the answer instead of decoding greedily;
        ``limits`` (a client's) lower its length limit (the cut answer keeps its whole sentences) and add stop strings."""
        start = time.perf_counter()
        prepared = self._prepare(question, history, results, query, standalone, self_contained, start)
        if prepared.early is not None:
            return prepared.early
        assert prepared.messages is not None
        params = self._params(prepared, sampling, limits)
        answer = self._finish(self._complete(prepared, params), params, prepared, results, start)
        why = self._retries(answer)
        if why is None:
            return answer
        params = self._again(prepared, sampling, limits, start, why)
        return self._finish(self._complete(prepared, params), params, prepared, results, start, again=True)

    def _complete(self, prepared: _Prepared, params: GenerationParams) -> Completion:
        assert prepared.messages is not None
        try:
            return self.llm.complete(prepared.messages, params)
        except LLMError as exc:
            raise AnswerFailed.of(exc) from exc

    def _streamed(self, prepared: _Prepared, params: GenerationParams, stop: Callable[[], bool] | None,
                  guard: EchoGuard | None = None) -> Generator[str, None, Completion | None]:
        """The model's pieces as it writes them (through ``guard`` where given); returns its
        :class:`Completion`, or None where ``stop`` ended the stream before it."""
        assert prepared.messages is not None
        completion: Completion | None = None
        try:
            for item in stream(self.llm, prepared.messages, params, stop):
                if isinstance(item, Completion):
                    completion = item
                else:
                    yield from guard.feed(item) if guard is not None else (item,)
        except LLMError as exc:
            raise AnswerFailed.of(exc) from exc
        return completion

    def _retries(self, answer: Answer) -> str | None:
        """Why ``answer`` is to be written once more: ``echo`` (declined as the question written back,
        ``retry_echo``) or ``repeat`` (an earlier answer written again, ``retry_repeat``); None: it stands."""
        decline, details = self.settings.decline, answer.trace["details"]
        if decline is not None and decline.retry_echo and "echo" in details:
            return "echo"
        return "repeat" if self.settings.retry_repeat and "repeat" in details else None

    def _again(self, prepared: _Prepared, sampling: Sampling | None, limits: ClientLimits | None, start: float,
               why: str) -> GenerationParams:
        """The decoding settings of the second attempt after an echo or a repeat (``why``), the first's
        kept in the trace (``echo_retry``, ``repeat_retry``): sampled, since greedy decoding (and the
        completion cache) would give the same text back; its seed fixed, or the next one after a
        sampled first attempt's, so that the attempt is reproducible."""
        trace = prepared.trace
        first = trace.pop("llm_call")
        trace.pop("fallback", None)
        trace["details"].pop(why)
        retry = Sampling(VARIATION_TEMPERATURE, ECHO_SEED if sampling is None else sampling.seed + 1,
                         None if sampling is None else sampling.top_p)
        trace["details"][f"{why}_retry"] = {"first": first, "sampling": retry._asdict(), "after_s": time.perf_counter() - start}
        return self._params(prepared, retry, limits)

    def stream(self, question: str, history: Sequence[Message], results: Sequence[MergedResult], query: str | None = None,
               standalone: str | None = None, self_contained: bool = False, sampling: Sampling | None = None,
               limits: ClientLimits | None = None, stop: Callable[[], bool] | None = None) -> Iterator[str | Answer]:
        """:meth:`answer`, with the model's text in pieces as it is written before the :class:`Answer`.
        The final text may differ from the pieces: inferred citation markers are added, citations
        are re-pointed, and an empty or ungrounded answer becomes the decline sentence. ``stop``
        reaches the backend (:func:`~convrag.llm.base.stream`): once it is true, the stream may end
        with no :class:`Answer`, even before the first piece."""
        start = time.perf_counter()
        prepared = self._prepare(question, history, results, query, standalone, self_contained, start)
        if prepared.early is not None:
            yield prepared.early.text
            yield prepared.early
            return
        assert prepared.messages is not None
        decline = self.settings.decline
        echoes = decline is not None and decline.decline_echo
        repeats = self.settings.retry_repeat and bool(prepared.said)
        guard = EchoGuard(prepared.question if echoes else "", prepared.said if repeats else ()) if echoes or repeats else None
        params = self._params(prepared, sampling, limits)
        completion = yield from self._streamed(prepared, params, stop, guard)
        if completion is None and stop is not None and stop():
            return  # stopped while the backend read the prompt
        assert completion is not None
        answer = self._finish(completion, params, prepared, results, start)
        why = self._retries(answer)
        if guard is None or guard.released or why is None or (stop is not None and stop()):
            if guard is not None and "echo" not in answer.trace["details"]:
                yield from guard.flush()  # held, and not a declined echo
            yield answer
            return
        params = self._again(prepared, sampling, limits, start, why)  # held back whole: nobody saw it
        completion = yield from self._streamed(prepared, params, stop)
        if completion is None:
            return  # stopped
        yield self._finish(completion, params, prepared, results, start, again=True)

    def _finish(self, completion: Completion, params: GenerationParams, prepared: _Prepared, results: Sequence[MergedResult],
                start: float, again: bool = False) -> Answer:
        """The answer from the model's ``completion``: its repairs, declines and citations, all traced;
        ``again``: the completion is the second attempt after an echo (:meth:`_again`)."""
        trace = prepared.trace
        separated, grouped = separate_markers(completion.text.strip())
        text = separated
        if grouped:  # "[1, 2]": each number its own marker, so that each is a citation
            trace["details"]["grouped_citations"] = grouped
        empty_reason = "empty answer"
        # the repairs of :mod:`.tidy`; what each removed is in the trace, the model's text in llm_call
        if text and not has_words(text):  # nothing was said, so nothing is cited
            text, empty_reason = "", "the answer holds only citation markers, no words"
        if "length_limit" in trace["details"]:  # the caller's limit: whether it cut the answer (OpenAI's finish_reason)
            trace["details"]["length_limit"]["reached"] = completion.finish_reason == "length"
        if text and completion.finish_reason == "length":
            ended, cut = whole_sentences(text)
            if ended != text:
                text = ended
                trace["details"]["cut_off"] = {"max_tokens": params.max_tokens, "dropped": cut}
        if text:
            text, repeats = drop_repeats(text)
            if repeats:
                trace["details"]["repeats_dropped"] = repeats
        declined = is_decline(text)
        if declined and answered_part(text, results):  # a partial answer keeps what it answers
            declined = False
            trace["details"]["declined_in_part"] = [sentence for sentence in answer_sentences(text) if is_decline(sentence)]
        trace["llm_call"] = {
            "purpose": "answer", "stage": "answer", "messages": prepared.messages, "answer": completion.text,
            "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
            "latency_s": completion.latency_s, "cached": completion.cached, "error": None,
            **({"sent_without": list(completion.sent_without)} if completion.sent_without else {}),
        }
        if completion.first_token_s is not None:  # after an echo or a repeat, the first token of the attempt that is shown
            retried = trace["details"].get("echo_retry") or trace["details"].get("repeat_retry") or {}
            trace["details"]["first_token_s"] = completion.first_token_s + (retried["after_s"] if again else 0.0)
        if params.steered:
            trace["details"]["steering"] = completion.steering  # None: the backend cannot steer
            if (completion.steering or {}).get("first_choice_forced"):
                trace["fallback"] = (f"declined by the model's doubt: it gave the decline sentence probability "
                                     f"{completion.steering['first_choice_p']:.2f} >= {params.first_choice_at}")
        decline = self.settings.decline
        if text and not declined and decline is not None:
            grounded = grounding(strip_citations(text), prepared.shown)
            trace["details"]["grounding"] = round(grounded, 4)
            if grounded < decline.min_grounding:
                trace["fallback"] = (f"declined: the answer is not grounded in the passages (grounding {grounded:.2f} < "
                                     f"{decline.min_grounding}); the model's text is in llm_call")
                text, declined = DECLINE, True
        if text and not declined and decline is not None and decline.decline_echo and echoes_question(text, prepared.question):
            trace["fallback"] = ("declined: the answer repeats the question word for word"
                                 + (", written again, sampled, and again" if again else "") + "; the model's text is in llm_call")
            trace["details"]["echo"] = text  # declined as an echo: _retries reads it
            text, declined = DECLINE, True
        if text and not declined and prepared.earlier and repeats_earlier(text, prepared.said):
            if not again:
                trace["details"]["repeat"] = text  # with retry_repeat written once more (_retries reads it); else a mark
            elif "repeat_retry" in trace["details"]:
                trace["details"]["repeat_retry"]["again"] = True  # the second attempt stands all the same
        invalid: list[int] = []
        if not declined and text and has_citation(text):
            invalid = parse_citations(text, results)[1]  # numbers that name no passage: re-pointed or taken out
            text, moved = repoint_citations(text, results)
            if moved:
                trace["repointed_citations"] = moved
        citations = parse_citations(text, results)[0] if not declined else []
        if citations and trace.get("repointed_citations"):
            # a number the model wrote nowhere is matched by wording, as an inferred one is
            own = set(written_numbers(separated))
            citations = [c._replace(inferred=c.number not in own) for c in citations]
        if not citations and not declined and text:
            text, inferred = infer_citations(text, results)
            if inferred:
                trace["inferred_citations"] = inferred
                citations = [c._replace(inferred=True) for c in parse_citations(text, results)[0]]
        if invalid:
            trace["invalid_citations"] = invalid
        guess = bool(text) and not declined and restates_question(text, prepared.question) and not _backed(text, results)
        if guess:
            trace["details"]["unbacked_restatement"] = True
            if decline is not None and decline.decline_restated:
                trace["fallback"] = f"declined: {_RESTATED}; the model's text is in llm_call"
                text, declined, citations = DECLINE, True, []
        if not text:
            trace["fallback"] = empty_reason
            text, declined = DECLINE, True
        elif declined and text != DECLINE and self.settings.decline is not None:
            text = DECLINE  # one decline sentence, whatever words the model used
        elif not citations and not declined:
            trace["warning"] = "answer cites no passage"
        if guess and not declined:
            trace["warning"] = "; ".join(filter(None, [trace.get("warning"), f"{_RESTATED}: maybe a guess"]))
        trace["latency_s"] = time.perf_counter() - start
        return Answer(text, citations, declined, trace)
