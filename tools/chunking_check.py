"""Does chunking a user's document by its structure find the answer's passage more often?

MT-RAG's corpora come already cut into passages, so the benchmark cannot measure how convrag cuts
a user's documents. This check indexes four documents three ways and asks, for each question in
``tools/data/chunking-questions.json``, at which rank the first passage holding the sentence that
answers it comes (bm25, dense and hybrid, as ``convrag search`` ranks them), and whether that passage
reaches the answer's prompt: kept by the default pipeline's merge (enhanced, within its budget of
1000 tokens of whole passages, counted by the local model's tokenizer; ``--answer-tokens`` sets another,
``none`` for no budget), with the question as asked; and whether the sentence itself is among those the
compression shows the model, on a turn the decline gate lets through (best sentence cosine 0.45 or more):

* ``plain``: MT-RAG's token windows (512 tokens, 100 overlapping), cut wherever the count falls and
  titled by the document (``convrag index --plain-windows``);
* ``aligned``: the same windows cut at sentence and line ends, titled by the document;
* ``structured``: aligned, and titled by the sections each passage begins in (the default).

The documents: a made-up heat pump manual written for convrag (``tools/data/heatpump-manual.md``),
orjson's README as its installed package carries it (orjson 3.13.0 is pinned in the lock file), and
two reference pages of the playwright-cli skill that the pinned playwright package carries (its
storage and sessions pages: Markdown whose answers are mostly commands in code blocks, under a
comment line). The questions were written from the documents alone, before any variant was run
(the playwright pages' 17, added later, after one of them had shown the compression keeping a
comment without its command); 47 questions are a small sample, so read the counts, not the decimals.

``--scan`` reads the manual from a 300 dpi scan of its PDF by OCR instead (``tools/ocr_check.py``
makes it), as a user's scanned manual is read: a text that marks no headings. Its variant
``structured, no headings`` is the structured one without the numbered section lines taken for
headings (``convrag/ingest/numbered_headings.py``), as such a text was chunked before.

    .venv/bin/python tools/chunking_check.py
    .venv/bin/python tools/chunking_check.py --scan
    .venv/bin/python tools/chunking_check.py --answer-tokens none
    .venv/bin/python tools/chunking_check.py --answers

``--answers`` also has the local model answer each question over the structured collection (the default
pipeline, greedy, through the completion cache) and counts the answers that hold what a right answer
must: the pieces a question lists (a command's name and its option: "cookie-delete", "--domain"), else
every word of the gold piece (a word: what spaces separate, backticks, quotes and end punctuation
aside, any case), which is strict for prose the model may put in its own words.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from importlib.metadata import distribution
from pathlib import Path

from convrag.embeddings import load_embedder
from convrag.generate.answer import AnswerSettings
from convrag.generate.compress import compress
from convrag.index.collection import Collection
from convrag.index.windows import WindowSettings
from convrag.ingest import chunking
from convrag.ingest.documents import Document, read_document
from convrag.llm import make_llm
from convrag.pipeline.build import build_pipeline
from convrag.pipeline.spec import PipelineSpec
from convrag.retrieve.registry import make_retriever
from convrag.types import Message, Passage

HERE = Path(__file__).parent / "data"
VARIANTS = ("plain", "aligned", "structured")
RETRIEVERS = ("bm25", "dense", "hybrid")
DEPTH = 5


def _norm(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def _words(text: str) -> set[str]:
    return {w.strip("`'\".,;:!?()[]").lower() for w in text.split()} - {""}


def _orjson_readme(folder: Path) -> Path:
    """orjson's README from its package metadata (the headers before the first line of Markdown dropped)."""
    text = distribution("orjson").read_text("METADATA") or ""
    body = text[text.index("\n# ") + 1:]
    path = folder / "orjson.md"
    path.write_text(body, encoding="utf-8")
    return path


def _playwright_page(name: str) -> Path:
    """A reference page of the playwright-cli skill (``playwright-cli/storage-state.md``) in the installed playwright package."""
    return Path(str(distribution("playwright").locate_file(f"playwright/driver/package/lib/tools/skills/{name.replace('/', '/references/')}")))


def _document(name: str, folder: Path) -> Path:
    if name == "orjson.md":
        return _orjson_readme(folder)
    return _playwright_page(name) if name.startswith("playwright-cli/") else HERE / name


def _scanned_manual(folder: Path) -> Path:
    """The manual's PDF as a 300 dpi scan of its pages, named as the Markdown is (its questions' key)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from ocr_check import make_scan

    path = folder / "heatpump-manual.pdf"
    make_scan(path, dpi=300, skew=0.0, noise=0.0)
    return path


def _passages(document: Document, tokenizer: object, variant: str) -> list[Passage]:
    if variant == "structured, no headings":
        return chunking.chunk_document(dataclasses.replace(document, headings=()), tokenizer)
    if variant == "plain":
        return chunking.chunk_document(document, tokenizer, structured=False)
    passages = chunking.chunk_document(document, tokenizer)
    if variant == "aligned":
        return [p._replace(title=document.title) for p in passages]
    return passages


def _budget(value: str) -> int | None:
    return None if value == "none" else int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scan", action="store_true", help="read the manual from a scan of its PDF, by OCR")
    parser.add_argument("--answer-tokens", type=_budget, default=PipelineSpec.answer_tokens,
                        help="the merge's budget of whole-passage tokens (PipelineSpec.answer_tokens), or none")
    parser.add_argument("--answers", action="store_true", help="also answer each question with the local model (structured chunking)")
    args = parser.parse_args()
    settings = AnswerSettings()
    floor = settings.decline.min_relevance if settings.decline is not None else 0.0
    variants = (*VARIANTS, "structured, no headings") if args.scan else VARIANTS
    questions = json.loads((HERE / "chunking-questions.json").read_text(encoding="utf-8"))["documents"]
    embedder = load_embedder()
    llm = make_llm("local")  # its tokenizer counts the merge's budget, as in a chat
    with tempfile.TemporaryDirectory() as tmp:
        paths = {name: _document(name, Path(tmp)) for name in questions}
        if args.scan:
            paths["heatpump-manual.md"] = _scanned_manual(Path(tmp))
        documents = {name: read_document(path) for name, path in paths.items()}
        ranks: dict[tuple[str, str], list[int]] = {}
        prompted: dict[str, list[int]] = {}  # the answer's passage's place among the passages the answer is shown
        mean_kept: dict[str, float] = {}
        # per question: the answer's sentence among those the compression shows, and the turn let through by the gate
        compressed: dict[str, list[tuple[bool, bool]]] = {}
        answered: list[tuple[bool, bool]] = []  # per question, with --answers: the gold in the answer, the turn declined
        sizes: dict[str, int] = {}
        for variant in variants:
            passages = [p for d in documents.values() for p in _passages(d, embedder.tokenizer, variant)]
            sizes[variant] = len(passages)
            collection = Collection.build(Path(tmp) / variant.replace(", ", "-").replace(" ", "-"), passages, embedder=embedder, windows=WindowSettings())
            texts = {p.doc_id: _norm(p.text) for p in passages}
            asked = [(q, _norm(gold)) for items in questions.values() for q, gold, *_ in items]
            for name in RETRIEVERS:
                retriever = make_retriever(name, collection, embedder)
                hits = retriever.search([q for q, _ in asked], k=DEPTH)
                ranks[variant, name] = [next((h.rank or i + 1 for i, h in enumerate(found) if gold in texts[h.doc_id]), 0)
                                        for (_, gold), found in zip(asked, hits, strict=True)]
            spec = PipelineSpec(collections=(collection.name,), strategy="last_turn", answer_tokens=args.answer_tokens)
            pipeline = build_pipeline(spec, llm=llm, opened={collection.name: collection}, embedder=embedder, generate=False)
            prompted[variant], compressed[variant], shown = [], [], 0
            for q, gold in asked:
                kept = pipeline.retrieve([Message("user", q)])[0].results
                shown += len(kept)
                prompted[variant].append(next((i + 1 for i, r in enumerate(kept) if gold in texts[r.hit.passage_id]), 0))
                compressed_passages = compress(q, kept, embedder, llm.count_tokens, settings.compression) if settings.compression else []
                seen = _norm(" ".join(p.text for p in compressed_passages))
                compressed[variant].append((gold in seen, max((p.best for p in compressed_passages), default=0.0) >= floor))
            mean_kept[variant] = shown / len(asked)
            if args.answers and variant == "structured":
                answering = build_pipeline(spec, llm=llm, opened={collection.name: collection}, embedder=embedder)
                needs = [item[2] if len(item) > 2 else None for items in questions.values() for item in items]
                for (q, gold), pieces in zip(asked, needs, strict=True):
                    result = answering.answer([Message("user", q)])
                    right = (all(p.lower() in result.text.lower() for p in pieces) if pieces
                             else _words(gold) <= _words(result.text))
                    answered.append((right and not result.declined, result.declined))
    n = len(next(iter(ranks.values())))
    print(f"{n} questions over {len(questions)} documents; passages: "
          + ", ".join(f"{v} {sizes[v]}" for v in variants) + "\n")
    print(f"| retriever | chunking | answer's passage first | in the top {DEPTH} | MRR@{DEPTH} |")
    print("| --- | --- | --- | --- | --- |")
    for name in RETRIEVERS:
        for variant in variants:
            r = ranks[variant, name]
            mrr = sum(1 / x for x in r if x) / n
            print(f"| {name} | {variant} | {sum(x == 1 for x in r)} | {sum(x > 0 for x in r)} | {mrr:.3f} |")
    budget = "no budget" if args.answer_tokens is None else f"a budget of {args.answer_tokens} tokens"
    print(f"\nThe merge with {budget}; the compression's {settings.compression.max_tokens if settings.compression else 0} "
          f"tokens; the decline gate's floor {floor}:\n")
    print("| chunking | answer's passage in the prompt | shown first | passages in the prompt (mean) "
          "| answer's sentence shown | shown, the turn not declined |")
    print("| --- | --- | --- | --- | --- | --- |")
    for variant in variants:
        p, c = prompted[variant], compressed[variant]
        print(f"| {variant} | {sum(x > 0 for x in p)} | {sum(x == 1 for x in p)} | {mean_kept[variant]:.2f} "
              f"| {sum(a for a, _ in c)} | {sum(a and b for a, b in c)} |")
    print("\nper question (hybrid rank of the answer's passage, 0 = not in the top 5; then its place in the prompt, 0 = not "
          "there): " + " / ".join(variants))
    asked = [(doc, q) for doc, items in questions.items() for q, *_ in items]
    for i, (doc, q) in enumerate(asked):
        row = " / ".join(f"{ranks[v, 'hybrid'][i]},{prompted[v][i]}" for v in variants)
        said = f"  answer: {'right' if answered[i][0] else 'declined' if answered[i][1] else '-'}" if answered else ""
        print(f"  {row}  {doc}: {q}{said}")
    if answered:
        print(f"\nanswers (structured): right in {sum(a for a, _ in answered)} of {len(answered)}, "
              f"declined {sum(d for _, d in answered)}; by document: "
              + ", ".join(f"{doc} {sum(answered[i][0] for i, (d, _) in enumerate(asked) if d == doc)}/{len(items)}"
                          for doc, items in questions.items()))


if __name__ == "__main__":
    main()
