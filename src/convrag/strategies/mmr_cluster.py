"""``mmr_cluster``: rewrite with a few diverse, relevant sentences picked from the whole history.

Steps (incremental-mmr-cluster-rewrite seed): extract sentences (a user turn is one unit; agent
turns are split into sentences, dropping filler and fragments), embed them, KMeans with
k = round(sqrt(n)) clamped to [2, 7], the 3 sentences nearest each centroid as candidates,
MMR (lambda 0.7, overridable per domain) choosing 5, rewrite, tidy. The trace keeps the seed's
intermediate fields under ``details``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.cluster import KMeans

from ..embeddings import Embedder
from ..history import Budget, render_context, turn_pairs
from ..llm.base import LLM
from ..text import split_sentences, words
from ..types import Task
from .base import Fallback, Rewrite, Trace, UsesEmbedder, finish, start_trace
from .checks import tidy
from .mmr import mmr_select
from .rewriter import CheckSettings, rewrite

_FILLER = re.compile(
    r"^(thank(s| you)|you'?re welcome|glad (to|i could) help|hope (this|that) helps|let me know|sure|of course|"
    r"certainly|hello|hi|great question|is there anything else|feel free)\b",
    re.IGNORECASE,
)
MIN_SENTENCE_WORDS = 4


@dataclass(frozen=True)
class Sentence:
    text: str
    speaker: str
    turn: int


def extract_sentences(task: Task, min_words: int = MIN_SENTENCE_WORDS) -> list[Sentence]:
    """History sentences in conversation order: user turns whole, agent turns split and filtered."""
    out: list[Sentence] = []
    for pair in turn_pairs(task.history):
        if pair.user.strip():
            out.append(Sentence(" ".join(pair.user.split()), "user", pair.turn))
        if pair.agent.strip():
            for sentence in split_sentences(pair.agent):
                if len(words(sentence)) < min_words or _FILLER.match(sentence):
                    continue
                out.append(Sentence(sentence, "agent", pair.turn))
    return out


def cluster_count(n: int, low: int = 2, high: int = 7) -> int:
    return max(low, min(high, round(math.sqrt(n))))


def representatives(vectors: np.ndarray, k: int, per_cluster: int = 3, seed: int = 0) -> tuple[np.ndarray, list[int]]:
    """Cluster labels, and the indices of the ``per_cluster`` members nearest each centroid."""
    model = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(vectors)
    reps: list[int] = []
    for c in range(k):
        members = np.flatnonzero(model.labels_ == c)
        distances = np.linalg.norm(vectors[members] - model.cluster_centers_[c], axis=1)
        reps.extend(int(i) for i in members[np.argsort(distances)[:per_cluster]])
    return model.labels_, reps


@dataclass(frozen=True)
class MMRSettings:
    num_sentences: int = 5
    lambda_: float = 0.7
    per_cluster: int = 3
    min_clusters: int = 2
    max_clusters: int = 7


def select_context(
    task: Task, embedder: Embedder, settings: MMRSettings, trace: Trace, domain_lambda: Mapping[str, float] = {}
) -> list[Sentence]:
    """The MMR-selected sentences (chronological), recording the seed's intermediate fields."""
    sentences = extract_sentences(task)
    details = trace.details
    details["num_extracted_sentences"] = len(sentences)
    details["extracted_sentences"] = [s.text for s in sentences]
    if not sentences:
        return []
    vectors = embedder.encode([task.question] + [s.text for s in sentences])
    query, history = vectors[0], vectors[1:]
    if len(sentences) <= settings.num_sentences:
        labels, candidates = np.zeros(len(sentences), dtype=int), list(range(len(sentences)))
        details["num_clusters"] = 1
    else:
        k = min(cluster_count(len(sentences), settings.min_clusters, settings.max_clusters), len(sentences))
        labels, candidates = representatives(history, k, settings.per_cluster)
        details["num_clusters"] = k
    details["cluster_sizes"] = np.bincount(labels).tolist()
    details["representative_sentences"] = [sentences[i].text for i in candidates]
    lambda_ = domain_lambda.get(task.domain, settings.lambda_)
    details["lambda"] = lambda_
    picked = mmr_select(query, history[candidates], settings.num_sentences, lambda_)
    chosen = sorted(candidates[i] for i in picked)
    details["selected_sentences"] = [
        {"sentence": sentences[i].text, "speaker": sentences[i].speaker, "turn": sentences[i].turn, "cluster_id": int(labels[i])}
        for i in chosen
    ]
    return [sentences[i] for i in chosen]


def sentence_blocks(sentences: Sequence[Sentence]) -> list[list[str]]:
    return [[f"{'User' if s.speaker == 'user' else 'Assistant'}: {s.text}"] for s in sentences]


class MMRCluster(UsesEmbedder):
    name = "mmr_cluster"

    def __init__(
        self,
        llm: LLM,
        embedder: Embedder | None = None,
        settings: MMRSettings = MMRSettings(),
        domain_lambda: Mapping[str, float] | None = None,
        budget: Budget = Budget(),
        checks: CheckSettings = CheckSettings(),
    ) -> None:
        self.llm = llm
        self._embedder = embedder
        self.settings = settings
        self.domain_lambda = dict(domain_lambda or {})
        self.budget = budget
        self.checks = checks

    def resolve(self, task: Task, trace: Trace, stage: str) -> tuple[str | None, list[dict[str, Any]]]:
        """Select context and rewrite: the query (None when it failed, recorded) and the context used.
        Shared with progressive's stage 3: the same prompt, so cached calls are shared too."""
        selected = select_context(task, self.embedder, self.settings, trace, self.domain_lambda)
        if not selected:
            trace.fallbacks.append(Fallback(stage, "no_history_sentences"))
            return None, []
        context, dropped = render_context(sentence_blocks(selected), self.llm.count_tokens, self.budget)
        trace.trimmed_turns = max(trace.trimmed_turns, dropped)
        used = [{"stage": stage, "turn": s.turn, "speaker": s.speaker, "sentence": s.text} for s in selected[dropped:]]
        query = rewrite(self.llm, trace, stage, task.question, context, task.user_questions[:-1], self.checks)
        return (tidy(query, task.question) if query else None), used

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        trace.details["original_query"] = task.question
        if not turn_pairs(task.history):
            trace.details["rewritten_query"] = task.question
            return finish(trace, started, task.question, "first_turn")
        query, trace.context = self.resolve(task, trace, "rewrite")
        trace.details["rewritten_query"] = query or task.question
        if query is None:
            return finish(trace, started, task.question, "fallback_original")
        return finish(trace, started, query, "rewrite", standalone=query)
