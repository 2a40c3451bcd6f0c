"""The enhanced merge of the context-merging design note, as composable steps.

fuse (RRF or score fusion, with collection weights; one entry per passage id) -> keep a
candidate pool of the best fused passages -> drop duplicate texts -> quality signals ->
greedy selection with a diversity penalty against the passages already selected (and a
near-duplicate drop) within a token budget -> prompt order, with conflicts marked.
Every kept passage carries its fused and final scores and a selection reason; every
dropped candidate its reason (duplicate, diversity, budget: its tokens do not fit; passages: beyond
their number).

The pool (``pool_factor`` x ``max_passages``, at least 20) bounds the work: the penalty can
lower a score by at most ``diversity`` (10-20 %), so passages far below the pool cannot win;
they are counted in ``settings["not_considered"]`` rather than listed one by one.
"""

from __future__ import annotations

import datetime as dt
import heapq
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ..fusion import RRF_K
from ..types import SourcedHit
from .base import Dropped, MergedResult, MergeOutcome
from .budget import token_counter
from .conflicts import find_conflicts
from .dedup import deduplicate
from .diversity import jaccard, word_set
from .fuse import fuse
from .ordering import edges_first
from .presets import PRESETS, classify_query, preset_weights
from .signals import DEFAULT_SIGNALS, QualitySignals, quality_multiplier


@dataclass(frozen=True)
class MergeSettings:
    fusion: str = "rrf"
    rrf_k: float = RRF_K  # the RRF constant (not a depth)
    norm: str = "minmax"
    collection_weights: Mapping[str, float] = field(default_factory=dict)
    signals: QualitySignals | None = DEFAULT_SIGNALS
    diversity: float | None = None  # None: from the query-type preset
    drop_at: float = 0.9
    max_tokens: int | None = 2000  # whole passages' tokens together; None: no limit
    max_passages: int = 10
    pool_factor: int = 2
    order: str = "edges"
    query_type: str | None = None  # None: classify the query
    detect_conflicts: bool = True


@dataclass
class _Candidate:
    hit: SourcedHit
    base: float
    score: float
    reasons: list[str]
    also_in: tuple[str, ...]
    words: frozenset[str] | None = None  # computed when first compared
    vector: np.ndarray | None = None


def _similarity(a: _Candidate, b: _Candidate) -> float:
    if a.vector is not None and b.vector is not None:
        return float(a.vector @ b.vector)
    if a.words is None:
        a.words = word_set(a.hit.text)
    if b.words is None:
        b.words = word_set(b.hit.text)
    return jaccard(a.words, b.words)


def enhanced_merge(
    results: Mapping[str, Sequence[SourcedHit]],
    query: str = "",
    settings: MergeSettings = MergeSettings(),
    count_tokens: Callable[[str], int] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    now: dt.datetime | None = None,
) -> MergeOutcome:
    """Merge per-collection result lists into one budgeted, attributed, explained context.

    ``vectors`` (passage id -> normalized embedding) switches diversity from word Jaccard to cosine.
    """
    start = time.perf_counter()
    count = token_counter(count_tokens)
    query_type = settings.query_type or classify_query(query)
    preset = PRESETS.get(query_type, PRESETS["general"])
    weights = {**preset_weights(list(results), preset), **settings.collection_weights}
    diversity = preset.diversity if settings.diversity is None else settings.diversity
    use_diversity = diversity > 0 or settings.drop_at <= 1.0

    pool_size = max(20, settings.pool_factor * settings.max_passages)
    pool_hits, fused = fuse(results, settings.fusion, weights, settings.rrf_k, settings.norm, top=pool_size)
    hits, also_in, dropped = deduplicate(pool_hits)

    candidates: list[_Candidate] = []
    for i, hit in enumerate(hits):
        base = fused[hit.key]
        factor, reasons = quality_multiplier(hit, settings.signals, now) if settings.signals else (1.0, [])
        if preset.long_passage_bonus != 1.0 and len(hit.text) > 600:
            factor *= preset.long_passage_bonus
            reasons.append("step-by-step length")
        c = _Candidate(hit, base, base * factor, reasons, also_in.get(i, ()))
        if use_diversity and vectors is not None and hit.passage_id in vectors:
            c.vector = vectors[hit.passage_id]
        candidates.append(c)

    # Greedy selection, lazily re-scored: a candidate's penalized score can only fall as the
    # selection grows, so the best stale score is re-checked before it is taken (CELF).
    heap = [(-c.score, i, 0) for i, c in enumerate(candidates)]
    heapq.heapify(heap)
    selected: list[tuple[_Candidate, float, float, int]] = []  # candidate, final score, similarity, tokens
    used_tokens = 0
    while heap and len(selected) < settings.max_passages:
        neg, i, seen = heapq.heappop(heap)
        c = candidates[i]
        tokens = int(c.hit.metadata["tokens"]) if "tokens" in c.hit.metadata else count(c.hit.text)
        if settings.max_tokens is not None and used_tokens + tokens > settings.max_tokens and selected:
            # dropped before its similarity to the selection is computed: what is kept only grows,
            # so a passage that does not fit now never will (the candidates left once the budget is
            # nearly spent were each compared with every passage kept, most of a warm merge's time)
            dropped.append(Dropped(c.hit, "budget", f"{tokens} tokens do not fit ({used_tokens}/{settings.max_tokens} used)"))
            continue
        sim, near = 0.0, None
        if use_diversity and seen < len(selected):
            for s, _, _, _ in selected:
                value = _similarity(c, s)
                if value > sim:
                    sim, near = value, s
            if sim >= settings.drop_at and near is not None:
                dropped.append(Dropped(c.hit, "diversity", f"similarity {sim:.2f} to {near.hit.collection}/{near.hit.passage_id}"))
                continue
            final = c.score * (1.0 - diversity * sim)
            if heap and final < -heap[0][0]:
                heapq.heappush(heap, (-final, i, len(selected)))
                continue
        else:
            final = -neg
        if settings.max_tokens is not None and used_tokens + tokens > settings.max_tokens:
            # the best passage is taken even where it alone is over the budget: the answer shows its
            # best sentences (or its first words), not all of it, and a collection of passages longer
            # than the budget (`convrag index --max-tokens 1500`) had every question declined
            c.reasons.append(f"{tokens} tokens, over the budget of {settings.max_tokens} alone: taken as the best passage")
        used_tokens += tokens
        if sim > 0.3:
            c.reasons.append(f"diversity penalty (similarity {sim:.2f})")
        selected.append((c, final, sim, tokens))
    for _, i, _ in heap:
        dropped.append(Dropped(candidates[i].hit, "passages", f"beyond the {settings.max_passages} passages allowed"))

    kept: list[MergedResult] = []
    for c, final, _, tokens in selected:
        why = [f"#{c.hit.rank} in {c.hit.collection}", f"fused {settings.fusion} {c.base:.4f}"]
        if weights.get(c.hit.collection, 1.0) != 1.0:
            why.append(f"collection weight {weights[c.hit.collection]:g}")
        why += c.reasons
        if c.also_in:
            why.append(f"also found in {', '.join(c.also_in)}")
        kept.append(MergedResult(c.hit, c.base, final, "; ".join(why), tokens, c.also_in))

    if settings.detect_conflicts and len(kept) > 1:
        marks: dict[int, list[int]] = {}
        for i, j in find_conflicts([r.hit for r in kept]):
            marks.setdefault(i, []).append(j)
            marks.setdefault(j, []).append(i)
        kept = [
            MergedResult(r.hit, r.fused_score, r.final_score, r.selection_reason + "; may conflict with another source",
                         r.tokens, r.also_in, tuple(marks[i])) if i in marks else r
            for i, r in enumerate(kept)
        ]
    if settings.order == "edges":
        order = edges_first(list(range(len(kept))))
        remap = {old: new for new, old in enumerate(order)}
        kept = [kept[i] for i in order]
        kept = [MergedResult(r.hit, r.fused_score, r.final_score, r.selection_reason, r.tokens, r.also_in,
                             tuple(remap[c] for c in r.conflicts_with)) for r in kept]
    settings_dict = {k: v for k, v in asdict(settings).items() if k != "signals"}
    settings_dict.update(query_type=query_type, diversity=diversity, weights=weights,
                         not_considered=max(0, len(fused) - pool_size), used_tokens=used_tokens)
    return MergeOutcome(kept, dropped, settings_dict, time.perf_counter() - start)
