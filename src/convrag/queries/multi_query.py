"""Multi-query fusion: retrieve with several renderings of a turn and fuse them with RRF.

The renderings are the question as asked, the strategy's rewrite, the summary query, and
optionally ``n`` extra reformulations written by the LLM. Identical renderings are searched
once. This is the recipe of the strongest published systems on MT-RAG.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fusion import RRF_K, fuse_lists
from ..llm.base import LLM, GenerationParams, LLMError
from ..strategies.checks import clean_answer
from ..text import normalize
from ..types import SourcedHit

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
                     "latency_s": completion.latency_s, "cached": completion.cached,
                     **({"sent_without": list(completion.sent_without)} if completion.sent_without else {})}


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


#: how deep each rendering's result list is before several are fused (RRF), in the pipeline as in
#: `convrag eval`: a passage that two renderings both rank 11th-50th is found only in lists this deep.
#: On the dev half (progressive + hybrid, ALL-3 nDCG@10): 10 deep -0.008, 20 -0.007, 30 -0.002 and
#: 100 -0.003 against 50 (docs/benchmarks.md, "How deep each rendering is searched before fusing")
FUSION_DEPTH = 50


def fuse_renderings(lists: Sequence[Sequence[SourcedHit]], k: int, rrf_k: float = RRF_K) -> list[SourcedHit]:
    """One ranked list of at most ``k`` from the lists of several renderings (RRF), keeping each
    passage's first hit; a single rendering's list is kept as it is (with its own scores), cut to ``k``."""
    return fuse_lists(lists, "rrf", rrf_k=rrf_k, depth=k)
