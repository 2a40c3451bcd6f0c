"""Reading scanned pages and pictures by OCR: Tesseract, the program, run once per page.

A scanned PDF (a contract signed and scanned, a manual photocopied, a fax) holds pictures of its
pages and no text layer, so it read as no text at all and was skipped. Its pages are rendered by
PDFium (:mod:`.documents`) and read here by Tesseract 5, which the set-up installs from the system's
packages (Debian's ``tesseract-ocr``, with its English model). Tesseract is run as a program, one
process per page with its own thread limit: its OpenMP threads, left to themselves on two cores,
spin against each other and read a page about eight times slower (15 s instead of 2 s here).
Pages are read by as many processes at once as there are cores, in order. A TIFF scan's frames and
a picture file (a screenshot, a phone's photo of a notice) are read the same way.

``CONVRAG_OCR_LANGUAGES`` names Tesseract's language models to read with ("eng" by default;
"deu+eng" for German and English, each installed as ``tesseract-ocr-deu`` and its like); empty
turns OCR off. Without Tesseract, a scanned PDF is skipped with a reason that says how to install it.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import shutil
import statistics
import subprocess
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

from PIL import Image

#: the environment variable naming the language models Tesseract reads with
LANGUAGES_VARIABLE = "CONVRAG_OCR_LANGUAGES"
DEFAULT_LANGUAGES = "eng"
#: the resolution a page is rendered at for Tesseract, which reads best at about 300 dpi
DPI = 300
#: the most pixels a page is rendered to: an A4 page at 300 dpi is 8.7 million, a poster-sized page
#: (PDF allows 200 inches a side) would be billions, so it is rendered at what resolution this allows
MAX_PIXELS = 40_000_000
#: a picture whose median word Tesseract reads with less confidence than this holds no text: the words it
#: guesses in a photo have medians of 22-45 (two photos, three gravel textures), printed text 90 and more,
#: the pages of a 150 dpi scan with dust 93-96
MIN_CONFIDENCE = 60.0
#: a picture whose words are less high than this, in pixels, is read again enlarged for its words to be
#: about :data:`TEXT_PIXELS` high (at most :data:`MAX_ENLARGEMENT` times). Screenshots of 392 words in
#: DejaVu Sans (``tools/ocr_check.py --type-sizes``): 9-pixel type (words 8 high) missed 70 at its own
#: size and 7 enlarged, 11-pixel type 5 and none; from 16-pixel type (words 12 high), none either way
SMALL_TEXT_PIXELS = 12
TEXT_PIXELS = 28
MAX_ENLARGEMENT = 3.0
#: the longest one page is read for: a page of text takes about 2 s on one core
PAGE_SECONDS = 120.0
#: how to install Tesseract, said where a scanned PDF cannot be read without it
HOW_TO_INSTALL = "install Tesseract OCR (Debian and Ubuntu: apt install tesseract-ocr; macOS: brew install tesseract)"

#: who hears of each scanned page read, with the file's name, the pages read so far and the file's scanned
#: pages: a long scan is minutes of one file, and the service's job and the CLI's bar say which page it is on
page_progress: contextvars.ContextVar[Callable[[str, int, int], None] | None] = contextvars.ContextVar("convrag_ocr_progress",
                                                                                                      default=None)


@contextlib.contextmanager
def hearing(hear: Callable[[str, int, int], None]) -> Iterator[None]:
    """While the block runs, ``hear`` is told of each scanned page read (:data:`page_progress`)."""
    token = page_progress.set(hear)
    try:
        yield
    finally:
        page_progress.reset(token)


class OcrError(Exception):
    """Tesseract could not read a page (a language model not installed, the program failing)."""


def scale(width: float, height: float, dpi: float = 72.0) -> float:
    """How much to scale a page of ``width`` x ``height`` at ``dpi`` (72 for PDF points) for
    Tesseract: to :data:`DPI`, or less where that would pass :data:`MAX_PIXELS`."""
    return min(DPI / dpi, room(width, height))


def room(width: float, height: float) -> float:
    """The most a picture of ``width`` x ``height`` pixels may be enlarged within :data:`MAX_PIXELS`."""
    return (MAX_PIXELS / max(width * height, 1.0)) ** 0.5


def resized(picture: Image.Image, factor: float) -> Image.Image:
    """``picture`` scaled by ``factor`` (itself where that is 1), a pixel a side at least."""
    if factor == 1:
        return picture
    size = (max(1, round(picture.width * factor)), max(1, round(picture.height * factor)))
    return picture.resize(size, Image.Resampling.LANCZOS)


def languages() -> str:
    """The language models to read with, from :data:`LANGUAGES_VARIABLE`; "" where OCR is off."""
    return os.environ.get(LANGUAGES_VARIABLE, DEFAULT_LANGUAGES).strip()


def tesseract() -> str | None:
    """The Tesseract program's path, or None where it is not installed."""
    return shutil.which("tesseract")


def available() -> bool:
    """Whether scanned pages can be read: Tesseract is installed and OCR is not turned off."""
    return bool(languages()) and tesseract() is not None


class Word(NamedTuple):
    """A word Tesseract read: the block, paragraph and line it stands in, how sure Tesseract is of it
    (0-100), and its height in pixels."""

    block: int
    paragraph: int
    line: int
    confidence: float
    height: int
    text: str


def read_words(image: bytes, language: str | None = None, turned: bool = False) -> list[Word]:
    """The words Tesseract reads in one image (PNG, or any format Leptonica reads), in reading order;
    ``turned``: Tesseract first finds which way up the text is (its page segmentation mode 1, with its
    orientation model), which reads a page scanned upside down or sideways, at 0.3 s more a page."""
    program = tesseract()
    if program is None:
        raise OcrError(f"no OCR program: {HOW_TO_INSTALL}")
    language = language or languages() or DEFAULT_LANGUAGES
    try:
        run = subprocess.run([program, "stdin", "stdout", "-l", language, "--psm", "1" if turned else "3", "tsv"], input=image, capture_output=True,
                             timeout=PAGE_SECONDS, env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    except subprocess.TimeoutExpired:
        raise OcrError(f"Tesseract took more than {PAGE_SECONDS:.0f} s over one page") from None
    if run.returncode != 0:
        said = [line for line in run.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise OcrError(f"Tesseract failed ({said[0] if said else f'exit status {run.returncode}'})")
    words = []
    for row in run.stdout.decode("utf-8", "replace").splitlines()[1:]:
        # level page block paragraph line word left top width height confidence text
        cells = row.split("\t")
        if len(cells) == 12 and cells[0] == "5" and cells[11].strip():
            words.append(Word(int(cells[2]), int(cells[3]), int(cells[4]), float(cells[10]), int(cells[9]), cells[11].strip()))
    return words


def lay_out(words: list[Word]) -> str:
    """Words as Tesseract's own text output lays them out: a line per printed line, a blank line
    between paragraphs."""
    lines: list[str] = []
    where: tuple[int, int, int] | None = None
    for word in words:
        here = (word.block, word.paragraph, word.line)
        if here == where:
            lines[-1] += " " + word.text
            continue
        if where is not None and here[:2] != where[:2]:
            lines.append("")
        lines.append(word.text)
        where = here
    return "\n".join(lines) + "\n" if lines else ""


def median(values: list[float]) -> float:
    """The median of ``values``, 0 for none (a picture without words)."""
    return statistics.median(values) if values else 0.0


def read_picture(picture: Image.Image, language: str | None = None) -> str:
    """The text in one picture (a scanned page, a screenshot, a photo of a notice): its words laid
    out by :func:`lay_out`, or "" where the picture holds no text Tesseract is sure of.

    Three judgements Tesseract's text output does not make. A photo without text (a view, a product)
    reads as dozens of guessed "words" ("Pca", "pcs", "PAs"), most below :data:`MIN_CONFIDENCE`,
    where printed text reads above 90 even through a noisy scan's dust; so a picture whose median
    word is below it gives no text. And a screenshot's small type (words under
    :data:`SMALL_TEXT_PIXELS` high) is read again enlarged, which costs a second reading of a small
    picture: 9-pixel type missed 70 of 392 words at its own size, 7 enlarged. And a page scanned
    upside down or sideways, which reads as unsure guesses too ("O€ OJ 9194} HI Spjoy"), is read again
    with Tesseract's orientation detection, which costs a second reading only of such pages (and photos)."""
    image = png(picture)
    words = read_words(image, language)
    height = median([w.height for w in words if w.confidence >= MIN_CONFIDENCE])
    if 0 < height < SMALL_TEXT_PIXELS:
        factor = min(TEXT_PIXELS / height, MAX_ENLARGEMENT, room(picture.width, picture.height))
        if factor > 1:
            image = png(resized(picture, factor))
            words = read_words(image, language)
    sure = median([w.confidence for w in words])
    if sure < MIN_CONFIDENCE:  # a page the wrong way up reads as unsure guesses, as a photo does: read it turned
        turned = read_words(image, language, turned=True)
        if median([w.confidence for w in turned]) > sure:
            words, sure = turned, median([w.confidence for w in turned])
    return lay_out(words) if sure >= MIN_CONFIDENCE else ""


def png(picture: Image.Image) -> bytes:
    """A picture as PNG bytes, for Tesseract (fast to write: OCR, not storage)."""
    out = io.BytesIO()
    picture.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def read_images(pictures: Iterable[Callable[[], Image.Image]], workers: int | None = None,
                read: Callable[[Image.Image], str] | None = None) -> Iterator[str]:
    """The text of each picture, in order, read by ``workers`` processes at once (one per core by
    default). Each picture is made by calling its maker only when a worker is about to be free (at
    most two per worker wait), so a scanned book's pages are not all rendered into memory at once;
    the makers are called on the calling thread (PDFium, which renders them, is not thread-safe)."""
    workers = max(1, workers or os.cpu_count() or 1)
    read = read or read_picture
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="convrag-ocr") as pool:
        waiting: deque[Future[str]] = deque()
        for make in pictures:
            if len(waiting) >= 2 * workers:
                yield waiting.popleft().result()
            waiting.append(pool.submit(read, make()))
        while waiting:
            yield waiting.popleft().result()
