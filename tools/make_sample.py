"""Build the bundled MT-RAG sample (src/convrag/sample/mtrag) from the full data folder.

Two conversations per domain (6-8 user turns, with both Follow-up and
Clarification turns where possible), every passage their tasks and agent turns
need, the other passages of the same source documents (natural hard
distractors) and a seeded random draw of further distractors per domain.

    .venv/bin/python tools/make_sample.py ../shared/mtrag

The output is deterministic for a given input.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sys
from pathlib import Path

from convrag.data.beir import read_corpus
from convrag.data.layout import MTRAGData

PER_DOMAIN = 2
DISTRACTORS = 1200
OUT = Path(__file__).resolve().parents[1] / "src" / "convrag" / "sample" / "mtrag"


def source_document(doc_id: str) -> str:
    """The document part of an MT-RAG passage id (before the character span)."""
    head = doc_id.rsplit("-", 2)[0] if doc_id.count("-") >= 2 else doc_id
    # clapnq ids are <wikipedia page>_<span>-<span>: the page is the document.
    prefix, _, rest = head.partition("_")
    return prefix if prefix.isdigit() and rest else head


def main(root: Path) -> None:
    data = MTRAGData.discover(root)
    raw_conversations = json.loads(data.conversations_path.read_text())
    by_id = {c["conversation_id"]: c for c in raw_conversations}
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "corpora").mkdir(parents=True)
    chosen_raw = []
    for domain in data.domains:
        lastturn = data.queries(domain, "lastturn")
        candidates = []
        for conversation in sorted(data.conversations, key=lambda c: c.conversation_id):
            if conversation.domain != domain:
                continue
            tasks = [t for t in conversation.tasks() if t.task_id in lastturn]
            labels = {lab for t in tasks for lab in t.enrichments.multi_turn}
            if 6 <= len(conversation.tasks()) <= 8 and len(tasks) >= 5:
                candidates.append((-len(labels & {"Follow-up", "Clarification"}), conversation.conversation_id))
        picked = [cid for _, cid in sorted(candidates)[:PER_DOMAIN]]
        chosen_raw += [by_id[cid] for cid in picked]
        task_ids = {tid for tid in lastturn if tid.partition("<::>")[0] in picked}

        qrels = data.qrels(domain)
        needed = {pid for tid in task_ids for pid in qrels.get(tid, {})}
        for cid in picked:
            for message in by_id[cid]["messages"]:
                needed |= {ctx["document_id"] for ctx in message.get("contexts", [])}
        passages = list(read_corpus(data.corpus_path(domain)))
        documents = {source_document(p) for p in needed}
        keep = {p.doc_id for p in passages if p.doc_id in needed or source_document(p.doc_id) in documents}
        rest = sorted(p.doc_id for p in passages if p.doc_id not in keep)
        keep |= set(random.Random(f"convrag-sample-{domain}").sample(rest, min(DISTRACTORS, len(rest))))
        with gzip.open(OUT / "corpora" / f"{domain}.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as handle:
            for p in passages:
                if p.doc_id in keep:
                    handle.write(json.dumps({"_id": p.doc_id, "title": p.title, "text": p.text, "url": p.url}, ensure_ascii=False) + "\n")

        task_dir = OUT / "retrieval_tasks" / domain
        (task_dir / "qrels").mkdir(parents=True)
        for kind in ("lastturn", "rewrite", "questions"):
            lines = (root / "retrieval_tasks" / domain / f"{domain}_{kind}.jsonl").read_text().splitlines()
            kept = [line for line in lines if json.loads(line)["_id"] in task_ids]
            (task_dir / f"{domain}_{kind}.jsonl").write_text("\n".join(kept) + "\n")
        rows = (root / "retrieval_tasks" / domain / "qrels" / "dev.tsv").read_text().splitlines()
        kept_rows = [rows[0]] + [row for row in rows[1:] if row.split("\t")[0] in task_ids]
        (task_dir / "qrels" / "dev.tsv").write_text("\n".join(kept_rows) + "\n")
        print(f"{domain}: conversations {picked}, {len(task_ids)} tasks, {len(keep)} passages ({len(needed)} needed)")
    (OUT / "conversations.json").write_text(json.dumps(chosen_raw, ensure_ascii=False, indent=1) + "\n")
    shutil.copy(root / "LICENSE", OUT / "LICENSE")
    (OUT / "ATTRIBUTION.md").write_text(
        "# Attribution\n\n"
        "This folder is a small slice of the MT-RAG benchmark (IBM Research, "
        "https://github.com/IBM/mt-rag-benchmark), distributed under the Apache License 2.0 (see LICENSE).\n\n"
        f"It holds {PER_DOMAIN} human conversations per domain from `conversations.json`, their retrieval tasks, "
        "query files and relevance judgements, and a subset of the pooled passage corpora: every passage the "
        f"tasks need, the other passages of the same source documents, and {DISTRACTORS} randomly drawn "
        "distractor passages per domain. Built by `tools/make_sample.py`; the figures measured on it are not "
        "comparable to the benchmark's.\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/mtrag"))
