"""``progressive``: spend only as much context and model time as a turn needs.

Stage 1: a question with no dependency markers and at least 5 words (or the first turn)
is used as asked, with no model call. Stage 2a: rewrite with the earlier exchanges whose
user question is most like this one (cosine >= 0.7, else the top 3), then ask the model
whether the result is unambiguous; stop if so. Stage 2b: the same with the last 2
exchanges. Stage 3: MMR-cluster context over the whole history, final rewrite.
A stage whose rewrite fails a check hands over to the next; the query finally used is the
last accepted rewrite, else the question as asked (progressive-context-escalation seed).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..embeddings import Embedder
from ..llm.base import LLM
from ..types import Task
from .base import Rewrite, Trace, UsesEmbedder, finish, start_trace
from .context import Budget, TurnPair, render_pairs, turn_pairs
from .mmr_cluster import MMRCluster, MMRSettings
from .rewriter import CheckSettings, is_disambiguated, rewrite
from .standalone import MIN_WORDS, standalone_verdict


def similar_turns(similarities: np.ndarray, threshold: float = 0.7, top_k: int = 3) -> tuple[list[int], bool]:
    """Indices (chronological) of turns at or above ``threshold``; the ``top_k`` most similar when
    none is. The flag says whether the threshold selected them."""
    above = [i for i, s in enumerate(similarities) if s >= threshold]
    if above:
        return above, True
    return sorted(int(i) for i in np.argsort(-similarities, kind="stable")[:top_k]), False


class Progressive(UsesEmbedder):
    name = "progressive"

    def __init__(
        self,
        llm: LLM,
        embedder: Embedder | None = None,
        min_words: int = MIN_WORDS,
        similarity_threshold: float = 0.7,
        top_k: int = 3,
        window: int = 2,
        mmr: MMRSettings = MMRSettings(),
        domain_lambda: Mapping[str, float] | None = None,
        budget: Budget = Budget(),
        checks: CheckSettings = CheckSettings(),
    ) -> None:
        self.llm = llm
        self._embedder = embedder
        self.min_words = min_words
        self.similarity_threshold = similarity_threshold
        self.top_k = top_k
        self.window = window
        self.budget = budget
        self.checks = checks
        self._mmr = MMRCluster(llm, embedder, mmr, domain_lambda, budget, checks)

    def _rewrite_with(self, task: Task, trace: Trace, stage: str, pairs: list[TurnPair]) -> tuple[str | None, list[dict]]:
        context, dropped = render_pairs(pairs, self.llm.count_tokens, self.budget)
        trace.trimmed_turns = max(trace.trimmed_turns, dropped)
        selected = [{"stage": stage, "turn": p.turn, "user": p.user} for p in pairs[dropped:]]
        trace.context.extend(selected)
        return rewrite(self.llm, trace, stage, task.question, context, task.user_questions[:-1], self.checks), selected

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        pairs = turn_pairs(task.history)
        verdict = standalone_verdict(task.question, self.min_words)
        trace.details["markers"] = list(verdict.markers)
        if not pairs:
            return finish(trace, started, task.question, "1")
        if verdict.standalone:
            return finish(trace, started, task.question, "1")

        best: str | None = None  # the last accepted (if still ambiguous) rewrite

        # Stage 2a: the turns whose user question resembles this one.
        asked = [i for i, p in enumerate(pairs) if p.user.strip()]
        tried: list[int] = []
        if asked:
            vectors = self.embedder.encode([task.question] + [pairs[i].user for i in asked])
            sims = vectors[1:] @ vectors[0]
            chosen, by_threshold = similar_turns(sims, self.similarity_threshold, self.top_k)
            tried = [asked[i] for i in chosen]
            trace.details["stage_2a"] = {
                "similarities": {pairs[i].turn: round(float(s), 4) for i, s in zip(asked, sims)},
                "selected_turns": [pairs[i].turn for i in tried],
                "by_threshold": by_threshold,
            }
            query, _ = self._rewrite_with(task, trace, "2a", [pairs[i] for i in tried])
            if query is not None:
                best = query
                if is_disambiguated(self.llm, trace, "2a", query):
                    return finish(trace, started, query, "2a")

        # Stage 2b: the local window, unless 2a already used exactly these turns.
        window = list(range(max(0, len(pairs) - self.window), len(pairs)))
        if window != tried:
            query, _ = self._rewrite_with(task, trace, "2b", [pairs[i] for i in window])
            if query is not None:
                best = query
                if is_disambiguated(self.llm, trace, "2b", query):
                    return finish(trace, started, query, "2b")
        else:
            trace.details["stage_2b"] = "skipped: same turns as stage 2a"

        # Stage 3: MMR-cluster over the full history.
        self._mmr._embedder = self.embedder  # share the loaded model with the stage-3 helper
        query, used = self._mmr.resolve(task, trace, "3")
        trace.context.extend(used)
        if query is not None:
            return finish(trace, started, query, "3")
        if best is not None:
            return finish(trace, started, best, "3_fallback_previous_stage")
        return finish(trace, started, task.question, "3_fallback_original")
