"""Multi-query fusion: retrieve with several renderings of a turn and fuse them with RRF.

The renderings are the question as asked, the strategy's rewrite, the summary query, and
optionally ``n`` extra reformulations written by the LLM. Identical renderings are searched
once. This is the recipe of the strongest published systems on MT-RAG.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..llm.base import LLM, GenerationParams, LLMError
from ..merge.base import SourcedHit
from ..merge.fuse import rrf_by_position
from ..strategies.checks import clean_answer, normalize

REFORMULATE_SYSTEM = (
    "You write search engine queries. Given a question, write {n} different short search queries that would find "
    "passages answering it: use synonyms and the likely wording of documents. One query per line, no numbering."
)


def reformulations(llm: LLM, question: str, n: int) -> tuple[list[str], dict]:
    """Up to ``n`` extra queries from the LLM, and the call's record (errors give none)."""
    if n <= 0:
        return [], {}
    messages = [{"role": "system", "content": REFORMULATE_SYSTEM.format(n=n)}, {"role": "user", "content": question}]
    try:
        completion = llm.complete(messages, GenerationParams(max_tokens=24 * n))  # type: ignore[arg-type]
    except LLMError as exc:
        return [], {"purpose": "reformulate", "error": str(exc)}
    lines = [clean_answer(line.lstrip("-*0123456789. )")) for line in completion.text.splitlines()]
    queries = [q for q in lines if 2 <= len(q.split()) <= 30][:n]
    return queries, {"purpose": "reformulate", "messages": messages, "answer": completion.text,
                     "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
                     "latency_s": completion.latency_s, "cached": completion.cached}


def distinct(renderings: Sequence[str]) -> list[str]:
    """Renderings without repeats (up to case, punctuation and spacing), first kept."""
    seen: set[str] = set()
    out = []
    for r in renderings:
        key = normalize(r)
        if key and key not in seen:
            seen.add(key)
            out.append(r)
    return out


def fuse_renderings(lists: Sequence[Sequence[SourcedHit]], k: int, rrf_k: float = 60.0) -> list[SourcedHit]:
    """One ranked list from the lists of several renderings (RRF), keeping each passage's best hit."""
    if len(lists) == 1:
        return list(lists[0][:k])
    fused = rrf_by_position(lists, rrf_k, [1.0] * len(lists))
    best: dict[str, SourcedHit] = {}
    for hits in lists:
        for h in hits:
            best.setdefault(h.passage_id, h)
    ranked = sorted(fused, key=lambda pid: (-fused[pid], pid))[:k]
    return [best[pid]._replace(score=fused[pid], rank=i) for i, pid in enumerate(ranked, start=1)]
