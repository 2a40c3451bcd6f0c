"""``progressive``: spend only as much context and model time as a turn needs.

Designed on MT-RAG's dev half, where a follow-up's need for context shows in its surface:

Stage 1 (no call): the first turn, or a follow-up with no dependency marker (no pronoun, no
quantifier standing for a noun it leaves out ("Can I carry any over?"), no "the previous", at least
``min_words`` words) is searched as asked. On the dev half such turns
gain nothing from a rewrite, human or model.

Stage 1a (no call): a follow-up with no pronoun that repeats a specific term of the conversation
("Passport fees?", "What about the Pro plan?") already names what it is about; it is searched
as asked *and* as the question plus the conversation's most specific terms (:mod:`.topic`), fused
(RRF). On the dev half the model's rewrite of these turns retrieved no better, and leaving them out
takes a quarter of the calls away.

Stage 2 (one call): every other follow-up (one with a pronoun, or an explicit reference or too few
words and no term the conversation used) is rewritten with the last exchange, and the rewrite is
searched *together with* the topic expansion, the two result lists fused (RRF). The fusion is what
makes the call pay: on the dev half neither the 1.5B model's rewrite alone nor the zero-call
expansion alone retrieves as well as both. The verdict costs no call: a rewrite that passes the
acceptance checks is kept; one that leaves the reference open is recorded (``stage_2_unresolved``)
and, with ``escalate``, goes on to stage 3.

Stage 3 (one more call, only with ``escalate``): MMR-cluster context over the whole history.
Off by default: on the dev half it changed no result, and without it a follow-up costs at most
one call.

Zero-call variants (chosen in an earlier design, kept as settings): ``rewrite="references"`` sends
only explicit references to the model and searches pronoun-only follow-ups with the conversation's
terms appended (stage 1r); ``expand_short`` searches short follow-ups without a pronoun as asked
and with the terms appended, fused (stage 1x).

Known limit of the default context: a pronoun whose referent was named two or more exchanges back
and not in the last one ("Tell me about the Cardinals" / "Where do they play?" / "Do they play
abroad?") cannot be resolved by the model from the last exchange; the topic expansion may still
carry it. ``top_k`` adds the earlier exchanges most like the question (on the dev half 0.005 lower
nDCG, one more exchange of prompt).

When no rewrite survives, the turn falls back to the zero-call fusion. Every step, with its
inputs, is in the trace (progressive-context-escalation seed; the seed's separate "is it still
ambiguous?" model call is replaced by the rule verdict, and its stage 2a/2b windows by one
context: the last exchange, plus the ``top_k`` earlier exchanges most like the question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..embeddings import Embedder
from ..history import Budget, TurnPair, render_pairs, turn_pairs
from ..llm.base import LLM, ChatMessage
from ..text import content_stems
from ..types import Message, Task
from .base import Rewrite, Trace, UsesEmbedder, finish, record_context, start_trace
from .mmr_cluster import MMRCluster, MMRSettings
from .prompts import rewrite_prompt_start
from .rewriter import CheckSettings, rewrite
from .standalone import MIN_WORDS, standalone_verdict
from .summary import Summary
from .topic import TopicSettings, conversation_terms, expand, shared_terms

STAGES = ("1", "1a", "1x", "1r", "2", "2_fallback_original", "3", "3_fallback_previous_stage", "3_fallback_original")
REWRITE_POLICIES = ("markers", "references", "never")
STAGE_2_CALLS = ("rewrite", "summary")


def similar_turns(similarities: np.ndarray, threshold: float = 0.7, top_k: int = 3) -> tuple[list[int], bool]:
    """Indices (chronological) of turns at or above ``threshold`` (at most ``top_k``, the most
    similar); the ``top_k`` most similar when none is. The flag says whether the threshold selected them."""
    order = [int(i) for i in np.argsort(-similarities, kind="stable")]
    above = [i for i in order if similarities[i] >= threshold][:top_k]
    if above:
        return sorted(above), True
    return sorted(order[:top_k]), False


@dataclass(frozen=True)
class ProgressiveSettings:
    """The knobs of :class:`Progressive`, chosen on the dev split (docs/benchmarks.md)."""

    min_words: int = MIN_WORDS
    similarity_threshold: float = 0.7
    #: earlier exchanges (the most similar to the question) added to the last one in stage 2; on the
    #: dev half the last exchange alone retrieved as well as with two more, with a shorter prompt
    top_k: int = 0
    #: a follow-up without a pronoun that repeats a specific term of the conversation is searched as asked
    #: and with the topic expansion, fused, without a call (stage 1a); False sends it to the model
    anchored_without_call: bool = True
    #: short follow-ups without a reference: True searches them with the topic expansion (stage 1x,
    #: no call), False sends them to the model (stage 2)
    expand_short: bool = False
    #: which follow-ups that refer back go to the model (stage 2): ``markers`` (any pronoun or reference),
    #: ``references`` (an explicit one: "the previous", "what about", "you mentioned"), ``never``; the
    #: others are searched as the question with the conversation's terms appended (stage 1r, no call)
    rewrite: str = "markers"
    fuse_rewrite: bool = True  # also fuse a stage 2/3 rewrite with the topic-expanded question
    #: whether a stage-2 rewrite that leaves the reference open escalates to stage 3 (a second call);
    #: when False it is kept as it is (fused with the expansion when ``fuse_rewrite``), so a
    #: follow-up costs at most one call
    escalate: bool = False
    #: what the stage-2 call asks: ``rewrite`` (a standalone question, from the last exchange) or
    #: ``summary`` (the ``summary`` strategy's prompt: the question restated and a 40-50 word summary
    #: of the conversation, searched as well, fused; a longer reply, hence a slower call; ``escalate``
    #: does not apply to it). On the dev half it retrieved no better with hybrid (docs/benchmarks.md)
    stage_2_call: str = "rewrite"
    topic: TopicSettings = TopicSettings(max_zipf=5.2)


class Progressive(UsesEmbedder):
    name = "progressive"

    def __init__(
        self,
        llm: LLM,
        embedder: Embedder | None = None,
        settings: ProgressiveSettings = ProgressiveSettings(),
        mmr: MMRSettings = MMRSettings(),
        domain_lambda: Mapping[str, float] | None = None,
        budget: Budget = Budget(),
        checks: CheckSettings = CheckSettings(),
    ) -> None:
        if settings.rewrite not in REWRITE_POLICIES:
            raise ValueError(f"unknown rewrite policy {settings.rewrite!r}; expected one of {', '.join(REWRITE_POLICIES)}")
        if settings.stage_2_call not in STAGE_2_CALLS:
            raise ValueError(f"unknown stage-2 call {settings.stage_2_call!r}; expected one of {', '.join(STAGE_2_CALLS)}")
        self.llm = llm
        self._embedder = embedder
        self.settings = settings
        self.budget = budget
        self.checks = checks
        self._mmr = MMRCluster(llm, embedder, mmr, domain_lambda, budget, checks)
        self._summary = Summary(llm)

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        s = self.settings
        pairs = turn_pairs(task.history)
        if not pairs:
            return finish(trace, started, task.question, "1")
        verdict = standalone_verdict(task.question, s.min_words)
        refers = [m for m in verdict.markers if not m.startswith("short:")]
        terms = [t for t, _ in conversation_terms(task.history, task.question, s.topic)]
        expanded = expand(task.question, terms)
        trace.details["stage_1"] = {"markers": list(verdict.markers), "conversation_terms": terms}

        if verdict.standalone:
            trace.self_contained = True
            return finish(trace, started, task.question, "1")
        if not refers and (s.expand_short or s.rewrite == "never"):
            return finish(trace, started, task.question, "1x", (expanded,))
        explicit = [m for m in refers if m.startswith("reference:")]
        if refers and (s.rewrite == "never" or (terms and s.rewrite == "references" and not explicit)):
            return finish(trace, started, expanded, "1r")  # the topic terms stand in for what the pronoun points to
        # a pronoun, a quantifier without its noun or a comparison without what it compares points to
        # something the question does not name
        if s.anchored_without_call and not any(m.startswith(("pronoun:", "ellipsis:", "comparison:")) for m in refers):
            anchor = shared_terms(task.question, task.history, s.topic.max_zipf)
            if anchor:
                trace.details["stage_1"]["anchor"] = anchor  # the terms it shares with the conversation
                return finish(trace, started, task.question, "1a", (expanded,))

        fuse = (expanded,) if s.fuse_rewrite else ()
        if s.stage_2_call == "summary":
            return self._summarized(task, trace, started, expanded, fuse)
        # Stage 2: the last exchange (and, with top_k, the earlier ones whose question resembles this one).
        compares = any(m.startswith("comparison:") for m in refers)
        chosen = self._stage_2_turns(task, pairs, trace, compares)
        query = self._rewrite_with(task, trace, "2", [pairs[i] for i in chosen])
        if query is not None:
            if resolved(task.question, query, task.history):
                return finish(trace, started, query, "2", fuse, standalone=query)
            trace.details["stage_2_unresolved"] = list(standalone_verdict(query, 0).markers)
        if not s.escalate:
            trace.details["stage_3"] = "skipped: escalation is off (at most one call per turn)"
            if query is not None:
                return finish(trace, started, query, "2", fuse, standalone=query)
            return finish(trace, started, task.question, "2_fallback_original", (expanded,))

        # Stage 3: MMR-cluster over the full history.
        self._mmr._embedder = self.embedder  # share the loaded model with the stage-3 helper
        final, used = self._mmr.resolve(task, trace, "3")
        trace.context.extend(used)
        if final is not None:
            return finish(trace, started, final, "3", fuse, standalone=final)
        if query is not None:
            return finish(trace, started, query, "3_fallback_previous_stage", fuse, standalone=query)
        return finish(trace, started, task.question, "3_fallback_original", (expanded,))

    def prompt_start(self, history: Sequence[Message]) -> list[ChatMessage] | None:
        """The start of the stage-2 prompt of the turn after ``history``, for the backend to read
        ahead (:meth:`convrag.pipeline.Pipeline.prefill`): its context is the last exchange, known
        before the question (the summary prompt's, with ``stage_2_call="summary"``). None with
        ``top_k`` (the context then depends on the question)."""
        if self.settings.stage_2_call == "summary":
            return self._summary.prompt_start(history)
        pairs = turn_pairs(history)
        if not pairs or self.settings.top_k > 0:
            return None
        context, _ = render_pairs(pairs[-1:], self.llm.count_tokens, self.budget)
        return rewrite_prompt_start(context)

    def _summarized(self, task: Task, trace: Trace, started: float, expanded: str, fuse: tuple[str, ...]) -> Rewrite:
        """Stage 2 as one summary call: the restated question is the query, searched together with
        the topic expansion and the "Summary: … Question: …" rendering (fused). A rejected
        restatement falls back to the question as asked, still fused with both."""
        trace.details["stage_2"] = {"call": "summary"}
        outcome = self._summary.summarize(task, trace, "2")
        if outcome is None:
            return finish(trace, started, task.question, "2_fallback_original", (expanded,))
        summary = (outcome.query,) if outcome.query else ()
        if not outcome.standalone:
            return finish(trace, started, task.question, "2_fallback_original", (expanded, *summary))
        return finish(trace, started, outcome.question, "2", (*fuse, *summary), standalone=outcome.standalone)

    def _stage_2_turns(self, task: Task, pairs: list[TurnPair], trace: Trace, compares: bool = False) -> list[int]:
        """The exchanges the stage-2 rewrite reads: the last, and the one before it when the question
        compares things it does not name ("Which is higher?" after a question about the hotel limit
        and one about the meal allowance: the last exchange alone names one of the two)."""
        last = len(pairs) - 1
        earlier = [i for i in range(last) if pairs[i].user.strip()]
        chosen = {last}
        details: dict = {"last_turn": pairs[last].turn}
        if compares and earlier:
            chosen.add(earlier[-1])
            details["compared_with_turn"] = pairs[earlier[-1]].turn
        if earlier and self.settings.top_k > 0:
            vectors = self.embedder.encode([task.question] + [pairs[i].user for i in earlier])
            sims = vectors[1:] @ vectors[0]
            picked, by_threshold = similar_turns(sims, self.settings.similarity_threshold, self.settings.top_k)
            chosen |= {earlier[i] for i in picked}
            details.update(
                similarities={pairs[i].turn: round(float(x), 4) for i, x in zip(earlier, sims)},
                similar_turns=[pairs[earlier[i]].turn for i in picked],
                by_threshold=by_threshold,
            )
        trace.details["stage_2"] = details
        return sorted(chosen)

    def _rewrite_with(self, task: Task, trace: Trace, stage: str, pairs: list[TurnPair]) -> str | None:
        context = record_context(trace, pairs, self.llm.count_tokens, self.budget,
                                 lambda p: {"stage": stage, "turn": p.turn, "user": p.user})
        return rewrite(self.llm, trace, stage, task.question, context, task.user_questions[:-1], self.checks)


def resolved(question: str, query: str, history: tuple) -> bool:  # type: ignore[type-arg]
    """The rule verdict on a rewrite: it brought in something the conversation named and the
    question did not, or it has no reference left (a standalone question that needed nothing)."""
    said = set().union(*(content_stems(m.text) for m in history)) if history else set()
    added = (content_stems(query) - content_stems(question)) & said
    return bool(added) or not standalone_verdict(query, 0).markers
