"""How well and how fast are scanned PDFs read by OCR (src/convrag/ingest/ocr.py)?

Scans are made from LibreOffice's PDF of the heat pump manual (tests/ingest/made_by_libreoffice/),
its pages rendered to grey pictures at ``--dpi``, turned by ``--skew`` degrees and sprinkled with
``--noise`` (the share of pixels flipped, as dust on a scanner's glass), then saved as a PDF of
pictures alone, as a scanner saves one; ``--copies`` repeats the pages, for a longer document to
time. Each scan is read with ``read_document`` and its words are compared with the manual's
Markdown: the words it does not hold, and the seconds per page.

    .venv/bin/python tools/ocr_check.py --dpi 150 200 --skew 0 1.5 --noise 0 0.002
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image

from convrag.ingest.documents import read_document

ROOT = Path(__file__).resolve().parents[1]
MANUAL_PDF = ROOT / "tests" / "ingest" / "made_by_libreoffice" / "heatpump-manual.pdf"
MANUAL_MD = ROOT / "tools" / "data" / "heatpump-manual.md"
_WORD = re.compile(r"\w+(?:-\w+)*")


def make_scan(path: Path, dpi: int, skew: float, noise: float, copies: int = 1, seed: int = 0) -> int:
    """Write the manual as a scan to ``path``; returns its number of pages."""
    source = pdfium.PdfDocument(MANUAL_PDF)
    rng = random.Random(seed)
    images = []
    for index in itertools.chain.from_iterable(itertools.repeat(range(len(source)), copies)):
        image = source[index].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
        if skew:
            image = image.rotate(skew, fillcolor=255, resample=Image.Resampling.BICUBIC)
        if noise:
            pixels, (width, height) = image.load(), image.size
            for _ in range(int(width * height * noise)):
                x, y = rng.randrange(width), rng.randrange(height)
                pixels[x, y] = 0 if pixels[x, y] > 128 else 255
        images.append(image)
    images[0].save(path, save_all=True, append_images=images[1:], resolution=dpi)
    return len(images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=int, nargs="+", default=[150])
    parser.add_argument("--skew", type=float, nargs="+", default=[0.0])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0])
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    known = Counter(word.lower() for word in _WORD.findall(MANUAL_MD.read_text(encoding="utf-8")))
    print("| scan | pages | words read | not in the manual | seconds | seconds a page |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for dpi, skew, noise in itertools.product(args.dpi, args.skew, args.noise):
            path = Path(folder) / "scan.pdf"
            pages = make_scan(path, dpi, skew, noise, args.copies)
            start = time.perf_counter()
            text = read_document(path).text
            seconds = time.perf_counter() - start
            words = [word.lower() for word in _WORD.findall(text)]
            wrong = [word for word in words if word not in known]
            print(f"| {dpi} dpi, skew {skew}, noise {noise} | {pages} | {len(words)} | {len(wrong)} "
                  f"({', '.join(w for w, _ in Counter(wrong).most_common(5))}) | {seconds:.1f} | {seconds / pages:.2f} |")


if __name__ == "__main__":
    main()
