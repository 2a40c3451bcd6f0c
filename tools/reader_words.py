"""Which words of a converted document are not the words of the file it was made from?

A reader's defects show as words the source does not hold: "contr ol" where a justifying writer
widened the spaces, "mag-netic" where it hyphenated a line's end. This reads ``converted`` (any
type ``convrag index`` reads) with ``read_document`` and lists its words that ``source`` (the
Markdown or text it was made from) does not hold. For a PDF it also lists the hyphens PDFium found
at line ends and what became of each (ingest/hyphenation.py): made whole, or kept as a compound.

    .venv/bin/python tools/reader_words.py manual.pdf tools/data/heatpump-manual.md

The groff PDF of docs/benchmarks.md ("Words hyphenated at a line end") was made with pandoc 2.17
and groff 1.22.4 (Debian packages, not the project's):
``pandoc tools/data/heatpump-manual.md -s -t ms -o manual.ms && groff -ms -Tpdf -t manual.ms > manual.pdf``
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from convrag.ingest.documents import read_document
from convrag.ingest.hyphenation import BREAK

_WORD = re.compile(r"\w+(?:-\w+)*")


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def line_end_hyphens(pdf: Path, text: str) -> list[tuple[str, str]]:
    """Each word PDFium marks as broken over a line end, with the form it has in ``text``."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    raw = "".join(page.get_textpage().get_text_range() for page in document)
    found = []
    for m in re.finditer(rf"(\w+){BREAK}(?:\r?\n)?(\w+)", raw):
        joined, hyphenated = f"{m[1]}{m[2]}", f"{m[1]}-{m[2]}"
        found.append((hyphenated, joined if re.search(rf"\b{re.escape(joined)}\b", text) else hyphenated))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("converted", type=Path)
    parser.add_argument("source", type=Path)
    args = parser.parse_args()
    text = read_document(args.converted).text
    source = set(_words(args.source.read_text(encoding="utf-8")))
    missing = Counter(word for word in _words(text) if word not in source)
    print(f"{args.converted}: {len(_words(text))} words, {sum(missing.values())} not in {args.source.name}"
          f" ({len(missing)} distinct)")
    for word, count in missing.most_common():
        print(f"  {count:4d}  {word}")
    if args.converted.suffix.lower() == ".pdf":
        hyphens = line_end_hyphens(args.converted, text)
        whole = sum(1 for broken, read in hyphens if "-" not in read)
        print(f"hyphens at line ends: {len(hyphens)}, made whole {whole}, kept {len(hyphens) - whole}")
        for broken, read in hyphens:
            print(f"  {broken:24s} -> {read}")


if __name__ == "__main__":
    main()
