"""How much do the strategy prompts' few-shot examples flatter the MT-RAG figures?

Some examples in ``convrag.strategies.prompts`` share their topic with MT-RAG
conversations. This script finds those conversations (user turns matching the
examples' topics) and recomputes ALL-3 nDCG@10 of every run written by
``convrag bench strategies`` with and without them, using the official
per-domain weighting. Usage:

    .venv/bin/python tools/fewshot_overlap.py --data ../shared/mtrag --runs runs/bench-strategies
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from convrag.data.domains import COMPARABLE_DOMAINS
from convrag.data.layout import MTRAGData
from convrag.eval.metrics import collection_score, per_query_scores, weighted_average
from convrag.eval.writers import read_trec_run

# Topics of the few-shot examples (see convrag/strategies/prompts.py).
EXAMPLE_TOPICS = {
    "Arizona Cardinals": r"\bcardinals\b",
    "Roman Empire / Ottomans": r"roman empire|ottoman|constantinople",
    "Kubernetes cluster in IBM Cloud": r"kubernetes",
    "index funds / Roth IRA": r"index funds?\b|roth ira",
}
ALL3 = tuple(COMPARABLE_DOMAINS)


def overlapping_conversations(conversations_file: Path) -> dict[str, str]:
    """conversation id -> the example topic its user turns share."""
    found: dict[str, str] = {}
    for conversation in json.loads(conversations_file.read_text()):
        users = " ".join(m["text"] for m in conversation["messages"] if m["speaker"] == "user").lower()
        for topic, pattern in EXAMPLE_TOPICS.items():
            if re.search(pattern, users):
                found[conversation["conversation_id"]] = topic
    return found


def all3_ndcg(scores: dict[str, dict[str, float]], qrels_domain: dict[str, str], keep: set[str]) -> float:
    """Official ALL-3 (the project's scorer: per-domain means weighted by task count), over ``keep``."""
    parts = []
    for domain in ALL3:
        tasks = [q for q, d in qrels_domain.items() if d == domain and q in keep]
        parts.append(collection_score(domain, {q: scores[q] for q in tasks if q in scores}, len(tasks)))
    return weighted_average(parts).means["nDCG@10"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/mtrag"))
    parser.add_argument("--runs", type=Path, default=Path("runs/bench-strategies"))
    args = parser.parse_args()
    data = MTRAGData.discover(args.data)
    overlap = overlapping_conversations(args.data / "conversations.json")
    qrels: dict[str, dict[str, int]] = {}
    qrels_domain: dict[str, str] = {}
    for domain in ALL3:
        judged = data.qrels(domain)
        qrels.update(judged)
        qrels_domain.update({q: domain for q in judged})
    everything = set(qrels_domain)
    kept = {q for q in everything if q.split("<::>")[0] not in overlap}
    print("Conversations sharing a few-shot topic:")
    for conversation_id, topic in overlap.items():
        print(f"  {conversation_id}: {topic}")
    print(f"\nALL-3 tasks: {len(everything)}; without those conversations: {len(kept)}\n")
    print("| run | ALL-3 nDCG@10 | without overlapping conversations |")
    print("| --- | ---: | ---: |")
    for run_file in sorted(args.runs.glob("*/run.trec")):
        run = {q: docs for q, docs in read_trec_run(run_file).items() if q in qrels}
        scores = per_query_scores(qrels, run)
        name = run_file.parent.name
        print(f"| {name} | {all3_ndcg(scores, qrels_domain, everything):.4f} | {all3_ndcg(scores, qrels_domain, kept):.4f} |")


if __name__ == "__main__":
    main()
