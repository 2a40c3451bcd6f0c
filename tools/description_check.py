"""Does a Markdown page's front matter description find the page for a question about what the
page is for?

A docs site describes each page in its front matter ("description: Bump a package version") and
shows that line in its index, not on the page. convrag joins a short description to the page's
title, which heads every passage of the page, and a long one opens its text
(``convrag/ingest/markdown.py``, :func:`described`). This check indexes a docs folder three ways:
with the front matter's ``description`` and ``summary`` lines removed (as the reader saw it
before), with every description opening its page's text, and as convrag reads it. For each
question in ``tools/data/npm-questions.json`` it asks at which rank the first passage of a page
that answers it comes (bm25, dense and hybrid, as ``convrag search`` ranks them), and whether such
a passage reaches the answer's prompt (the default pipeline's merge, with the question as asked). ``--answers`` also has the local model answer each question (greedy, through the
completion cache) and counts the answers that name the command a right answer names.

The docs are npm's own (``docs/content`` of the npm package that Node.js installs, found with
``npm root -g``; ``--docs`` names another folder). The questions were written before the check was
first run, from what a user of npm asks, not from the pages' descriptions; 30 questions are a
small sample, so read the counts, not the decimals.

    .venv/bin/python tools/description_check.py
    .venv/bin/python tools/description_check.py --answers
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from convrag.embeddings import load_embedder
from convrag.index.collection import Collection
from convrag.index.windows import WindowSettings
from convrag.ingest import chunking, markdown
from convrag.ingest.documents import iter_documents
from convrag.llm import make_llm
from convrag.pipeline.build import build_pipeline
from convrag.pipeline.spec import PipelineSpec
from convrag.retrieve.registry import make_retriever
from convrag.types import Message, Passage

HERE = Path(__file__).parent / "data"
VARIANTS = ("without descriptions", "description opens the text", "short description joins the title")
RETRIEVERS = ("bm25", "dense", "hybrid")
DEPTH = 5
#: a description or summary line of a front matter block, as the "without" copy leaves it out
_DESCRIBED = re.compile(r"^(?:description|summary):.*(?:\n|\Z)", re.MULTILINE)
#: a passage's id is its document's id and its character span
_SPAN = re.compile(r"-\d+-\d+$")


def npm_docs() -> Path:
    """``docs/content`` of the npm package that ``npm root -g`` finds."""
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=True).stdout.strip()
    return Path(root) / "npm" / "docs" / "content"


def copy_pages(source: Path, target: Path, descriptions: bool = True) -> None:
    """A copy of the Markdown pages under ``source``, with or without their front matter's descriptions."""
    for page in sorted(source.rglob("*.md")):
        copy = target / page.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        text = page.read_text(encoding="utf-8")
        end = text.find("\n---", 3) if text.startswith("---") and not descriptions else -1
        copy.write_text(_DESCRIBED.sub("", text[:end]) + text[end:] if end > 0 else text, encoding="utf-8")


def passages(folder: Path, tokenizer: object, title_words: int = markdown.TITLE_DESCRIPTION_WORDS) -> list[Passage]:
    """The passages ``convrag index`` cuts the folder's pages into (ids: the page's path, then the
    span), descriptions of up to ``title_words`` words joining the title (0: every one opens the text)."""
    default, markdown.TITLE_DESCRIPTION_WORDS = markdown.TITLE_DESCRIPTION_WORDS, title_words
    try:
        return list(chunking.chunk_documents(iter_documents(folder), tokenizer))
    finally:
        markdown.TITLE_DESCRIPTION_WORDS = default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=None, help="a folder of Markdown pages (default: npm's docs/content)")
    parser.add_argument("--answers", action="store_true", help="also answer each question with the local model")
    args = parser.parse_args()
    docs = args.docs or npm_docs()
    questions = json.loads((HERE / "npm-questions.json").read_text(encoding="utf-8"))["questions"]
    asked = [q for q, *_ in questions]
    embedder = load_embedder()
    llm = make_llm("local")  # its tokenizer counts the merge's budget, as in a chat
    ranks: dict[tuple[str, str], list[int]] = {}
    prompted: dict[str, list[int]] = {}
    answered: dict[str, list[bool]] = {}
    texts: dict[str, list[str]] = {}  # with --answers: each variant's answers
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        kept = (False, True, True)
        for variant, descriptions, title_words in zip(VARIANTS, kept, (0, 0, markdown.TITLE_DESCRIPTION_WORDS), strict=True):
            folder = Path(tmp) / variant.replace(" ", "-")
            copy_pages(docs, folder, descriptions)
            found = passages(folder, embedder.tokenizer, title_words)
            sizes[variant] = len(found)
            collection = Collection.build(Path(tmp) / f"{folder.name}-index", found, embedder=embedder, windows=WindowSettings())

            def answers_it(passage_id: str, targets: list[str]) -> bool:
                return _SPAN.sub("", passage_id) in targets

            for name in RETRIEVERS:
                hits = make_retriever(name, collection, embedder).search(asked, k=DEPTH)
                ranks[variant, name] = [next((h.rank or i + 1 for i, h in enumerate(top) if answers_it(h.doc_id, targets)), 0)
                                        for (_, targets, _), top in zip(questions, hits, strict=True)]
            spec = PipelineSpec(collections=(collection.name,), strategy="last_turn")
            pipeline = build_pipeline(spec, llm=llm, opened={collection.name: collection}, embedder=embedder, generate=False)
            prompted[variant] = [next((i + 1 for i, r in enumerate(pipeline.retrieve([Message("user", q)])[0].results)
                                       if answers_it(r.hit.passage_id, targets)), 0) for q, targets, _ in questions]
            if args.answers:
                answering = build_pipeline(spec, llm=llm, opened={collection.name: collection}, embedder=embedder)
                answered[variant], texts[variant] = [], []
                for q, _, commands in questions:
                    result = answering.answer([Message("user", q)])
                    texts[variant].append(" ".join(result.text.split()))
                    text = result.text.replace("`", "").lower()
                    answered[variant].append(not result.declined and any(c.lower() in text for c in commands))
    n = len(questions)
    print(f"{n} questions over the pages of {docs}; passages: " + ", ".join(f"{v} {sizes[v]}" for v in VARIANTS) + "\n")
    print(f"| retriever | front matter | a page that answers first | in the top {DEPTH} | MRR@{DEPTH} |")
    print("| --- | --- | --- | --- | --- |")
    for name in RETRIEVERS:
        for variant in VARIANTS:
            r = ranks[variant, name]
            print(f"| {name} | {variant} | {sum(x == 1 for x in r)} | {sum(x > 0 for x in r)} | {sum(1 / x for x in r if x) / n:.3f} |")
    print("\n| front matter | a page that answers in the prompt | shown first |" + (" answer names the command |" if answered else ""))
    print("| --- | --- | --- |" + (" --- |" if answered else ""))
    for variant in VARIANTS:
        p = prompted[variant]
        print(f"| {variant} | {sum(x > 0 for x in p)} | {sum(x == 1 for x in p)} |"
              + (f" {sum(answered[variant])} |" if answered else ""))
    print("\nper question (hybrid rank, 0 = not in the top 5; place in the prompt, 0 = not there): " + " / ".join(VARIANTS))
    for i, (q, _, _) in enumerate(questions):
        cells = " / ".join(f"{ranks[v, 'hybrid'][i]} {prompted[v][i]}" + (f" {'right' if answered[v][i] else 'wrong'}" if answered else "")
                           for v in VARIANTS)
        print(f"- {q}: {cells}")
    differing = [i for i in range(n) if answered and len({answered[v][i] for v in VARIANTS}) > 1]
    if differing:
        print("\nanswers right in one variant and wrong in another:")
    for i in differing:
        print(f"- {questions[i][0]}\n" + "\n".join(f"  - {v}: {texts[v][i]}" for v in VARIANTS))


if __name__ == "__main__":
    main()
