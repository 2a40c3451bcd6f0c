"""How well and how fast are scanned PDFs read by OCR (src/convrag/ingest/ocr.py)?

Scans are made from LibreOffice's PDF of the heat pump manual (tests/ingest/made_by_libreoffice/),
its pages rendered to grey pictures at ``--dpi``, turned by ``--skew`` degrees and sprinkled with
``--noise`` (the share of pixels flipped, as dust on a scanner's glass), then saved as a PDF of
pictures alone, as a scanner saves one; ``--copies`` repeats the pages, for a longer document to
time; ``--turn`` turns each page (a sheet fed upside down). Each scan is read with ``read_document``
and its words are compared with the manual's Markdown: the words it does not hold, and the seconds
per page.

``--type-sizes`` measures screenshots instead: the manual's words typed in DejaVu Sans (Pillow's own
font where it is not installed) at each size in pixels, dark on light as a window shows them, read
by Tesseract at the picture's own size and by :func:`convrag.ingest.ocr.read_picture`, which reads
small type again enlarged; the words of the screenshot each misses.

    .venv/bin/python tools/ocr_check.py --dpi 150 200 --skew 0 1.5 --noise 0 0.002
    .venv/bin/python tools/ocr_check.py --type-sizes 9 11 13 16 20
    .venv/bin/python tools/ocr_check.py --dpi 200 --turn 0 90 180 270
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
from PIL import Image, ImageDraw, ImageFont

from convrag.ingest import ocr
from convrag.ingest.documents import read_document

ROOT = Path(__file__).resolve().parents[1]
MANUAL_PDF = ROOT / "tests" / "ingest" / "made_by_libreoffice" / "heatpump-manual.pdf"
MANUAL_MD = ROOT / "tools" / "data" / "heatpump-manual.md"
_WORD = re.compile(r"\w+(?:-\w+)*")


def make_scan(path: Path, dpi: int, skew: float, noise: float, copies: int = 1, seed: int = 0, turn: int = 0) -> int:
    """Write the manual as a scan to ``path``, each page turned by ``turn`` degrees counterclockwise (a
    sheet fed the wrong way round: 180; a landscape page: 90); returns its number of pages."""
    source = pdfium.PdfDocument(MANUAL_PDF)
    rng = random.Random(seed)
    images = []
    for index in itertools.chain.from_iterable(itertools.repeat(range(len(source)), copies)):
        image = source[index].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
        if skew:
            image = image.rotate(skew, fillcolor=255, resample=Image.Resampling.BICUBIC)
        if turn:
            image = image.rotate(turn, expand=True)
        if noise:
            pixels, (width, height) = image.load(), image.size
            for _ in range(int(width * height * noise)):
                x, y = rng.randrange(width), rng.randrange(height)
                pixels[x, y] = 0 if pixels[x, y] > 128 else 255
        images.append(image)
    images[0].save(path, save_all=True, append_images=images[1:], resolution=dpi)
    return len(images)


def make_screenshot(size: int, lines: int = 28) -> tuple[Image.Image, list[str]]:
    """The manual's words typed at ``size`` pixels, 14 a line, as a grey picture; and those words."""
    words = [w for w in MANUAL_MD.read_text(encoding="utf-8").split() if re.fullmatch(r"[A-Za-z]+[.,]?", w)][:14 * lines]
    rows = [" ".join(words[i:i + 14]) for i in range(0, len(words), 14)]
    try:
        font: ImageFont.FreeTypeFont | ImageFont.ImageFont = ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        font = ImageFont.load_default(size)
    step = round(size * 1.5)
    picture = Image.new("L", (round(max(font.getlength(row) for row in rows)) + 20, step * len(rows) + 20), 250)
    draw = ImageDraw.Draw(picture)
    for i, row in enumerate(rows):
        draw.text((10, 10 + i * step), row, fill=30, font=font)
    return picture, [w.lower() for w in _WORD.findall(" ".join(rows))]


def check_type_sizes(sizes: list[int]) -> None:
    """Print, per type size, the words of a screenshot missed at its own size and by ``read_picture``."""
    print("| type size (px) | words | word height (px) | missed at its own size | missed as read (enlarged) | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in sizes:
        picture, shown = make_screenshot(size)
        own = ocr.read_words(ocr.png(picture))
        height = ocr.median([w.height for w in own if w.confidence >= ocr.MIN_CONFIDENCE])
        start = time.perf_counter()
        read = ocr.read_picture(picture)
        seconds = time.perf_counter() - start
        missed = [sum((Counter(shown) - Counter(w.lower() for w in _WORD.findall(text))).values())
                  for text in (ocr.lay_out(own), read)]
        print(f"| {size} | {len(shown)} | {height:.0f} | {missed[0]} | {missed[1]} | {seconds:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=int, nargs="+", default=[150])
    parser.add_argument("--skew", type=float, nargs="+", default=[0.0])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0])
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--turn", type=int, nargs="+", default=[0], help="degrees each page is turned counterclockwise")
    parser.add_argument("--type-sizes", type=int, nargs="*", help="measure screenshots typed at these sizes instead")
    args = parser.parse_args()
    if args.type_sizes:
        check_type_sizes(args.type_sizes)
        return
    known = Counter(word.lower() for word in _WORD.findall(MANUAL_MD.read_text(encoding="utf-8")))
    print("| scan | pages | words read | not in the manual | seconds | seconds a page |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for dpi, skew, noise, turn in itertools.product(args.dpi, args.skew, args.noise, args.turn):
            path = Path(folder) / "scan.pdf"
            pages = make_scan(path, dpi, skew, noise, args.copies, turn=turn)
            start = time.perf_counter()
            text = read_document(path).text
            seconds = time.perf_counter() - start
            words = [word.lower() for word in _WORD.findall(text)]
            wrong = [word for word in words if word not in known]
            print(f"| {dpi} dpi, skew {skew}, noise {noise}{f', turned {turn}' if turn else ''} | {pages} | {len(words)} | {len(wrong)} "
                  f"({', '.join(w for w, _ in Counter(wrong).most_common(5))}) | {seconds:.1f} | {seconds / pages:.2f} |")


if __name__ == "__main__":
    main()
