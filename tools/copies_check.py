"""How many different passages does a search's ten hold, over a docs folder that has each page more
than once?

Node.js's API docs (``/usr/share/doc/nodejs/api`` where Debian's nodejs package is installed) hold
each page as Markdown and as the HTML built from it, and ``all.html`` gathers every page again.
Indexed file by file, a search's ten held the same passage two or three times. convrag leaves out a
file whose words another of its name holds (``convrag/ingest/twins.py``) and a document most of
whose passages are others' word for word (``convrag/ingest/compilations.py``). This check asks 12
questions (written before its first run, from what a user of Node.js asks) of each collection
named, hybrid as ``convrag search`` ranks, and counts in each question's ten the passages that say
something the ones above them did not: a passage 90 % of whose words (counted with repeats) an
earlier one holds, or which holds 90 % of an earlier one's, is a copy of it.

    convrag index /usr/share/doc/nodejs/api -c nodeapi   # once with the code before, once after
    .venv/bin/python tools/copies_check.py nodeapi nodeapi-now
"""

from __future__ import annotations

import argparse

from convrag.config import default_store
from convrag.index.collection import CollectionStore
from convrag.ingest.twins import held_share, words
from convrag.retrieve.registry import make_retriever

QUESTIONS = [
    "How do I read a file line by line?", "How do I create an HTTP server?",
    "How can I run a shell command and get its output?", "How do I hash a password with scrypt?",
    "How do I get the command line arguments?", "What does the --inspect flag do?",
    "How do I make a directory recursively?", "How do I run code when the process exits?",
    "How do I compute a SHA-256 hash of a string?", "How do I use worker threads?",
    "How do I import a CommonJS module from an ES module?", "How do I set a timeout on an HTTP request?",
]
#: the share of words that makes one passage a copy of another
COPY = 0.9


def different(texts: list[str]) -> int:
    """How many of ``texts`` are no copy of one above them."""
    seen: list = []
    for text in texts:
        counted = words(text)
        if not any(held_share(counted, other) >= COPY or held_share(other, counted) >= COPY for other in seen):
            seen.append(counted)
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", help="collections of the same docs, built by convrag index")
    parser.add_argument("-k", type=int, default=10, help="how many hits a question's search returns")
    args = parser.parse_args()
    store = CollectionStore(default_store())
    for name in args.collections:
        collection = store.open(name)
        searcher = make_retriever("hybrid", collection)
        counts = [different([hit.text for hit in searcher.search([question], args.k)[0]]) for question in QUESTIONS]
        print(f"{name}: {len(collection):,} passages; different passages in the top {args.k}: "
              f"{sum(counts) / len(counts):.2f} on average over {len(counts)} questions ({', '.join(map(str, counts))})")


if __name__ == "__main__":
    main()
