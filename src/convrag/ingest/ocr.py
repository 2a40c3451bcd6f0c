"""Reading scanned pages by OCR: Tesseract, the program, run once per page.

A scanned PDF (a contract signed and scanned, a manual photocopied, a fax) holds pictures of its
pages and no text layer, so it read as no text at all and was skipped. Its pages are rendered by
PDFium (:mod:`.documents`) and read here by Tesseract 5, which the set-up installs from the system's
packages (Debian's ``tesseract-ocr``, with its English model). Tesseract is run as a program, one
process per page with its own thread limit: its OpenMP threads, left to themselves on two cores,
spin against each other and read a page about eight times slower (15 s instead of 2 s here).
Pages are read by as many processes at once as there are cores, in order.

``CONVRAG_OCR_LANGUAGES`` names Tesseract's language models to read with ("eng" by default;
"deu+eng" for German and English, each installed as ``tesseract-ocr-deu`` and its like); empty
turns OCR off. Without Tesseract, a scanned PDF is skipped with a reason that says how to install it.
"""

from __future__ import annotations

import contextvars
import os
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

#: the environment variable naming the language models Tesseract reads with
LANGUAGES_VARIABLE = "CONVRAG_OCR_LANGUAGES"
DEFAULT_LANGUAGES = "eng"
#: the resolution a page is rendered at for Tesseract, which reads best at about 300 dpi
DPI = 300
#: the most pixels a page is rendered to: an A4 page at 300 dpi is 8.7 million, a poster-sized page
#: (PDF allows 200 inches a side) would be billions, so it is rendered at what resolution this allows
MAX_PIXELS = 40_000_000
#: the longest one page is read for: a page of text takes about 2 s on one core
PAGE_SECONDS = 120.0
#: how to install Tesseract, said where a scanned PDF cannot be read without it
HOW_TO_INSTALL = "install Tesseract OCR (Debian and Ubuntu: apt install tesseract-ocr; macOS: brew install tesseract)"

#: who hears of each scanned page read, with the pages read so far and the document's scanned pages:
#: a long scan is minutes of one file, and the service's job says which page it is on
page_progress: contextvars.ContextVar[Callable[[int, int], None] | None] = contextvars.ContextVar("convrag_ocr_progress", default=None)


class OcrError(Exception):
    """Tesseract could not read a page (a language model not installed, the program failing)."""


def scale(width: float, height: float, dpi: float = 72.0) -> float:
    """How much to enlarge a page of ``width`` x ``height`` at ``dpi`` (72 for PDF points) for
    Tesseract: to :data:`DPI`, or less where that would pass :data:`MAX_PIXELS`."""
    wanted = DPI / dpi
    room = (MAX_PIXELS / max(width * height, 1.0)) ** 0.5
    return min(wanted, room)


def languages() -> str:
    """The language models to read with, from :data:`LANGUAGES_VARIABLE`; "" where OCR is off."""
    return os.environ.get(LANGUAGES_VARIABLE, DEFAULT_LANGUAGES).strip()


def tesseract() -> str | None:
    """The Tesseract program's path, or None where it is not installed."""
    return shutil.which("tesseract")


def available() -> bool:
    """Whether scanned pages can be read: Tesseract is installed and OCR is not turned off."""
    return bool(languages()) and tesseract() is not None


def read_image(image: bytes, language: str | None = None) -> str:
    """The text Tesseract reads in one image (PNG, or any format Leptonica reads), its lines as
    Tesseract lays them out: a line per printed line, a blank line between paragraphs."""
    program = tesseract()
    if program is None:
        raise OcrError(f"no OCR program: {HOW_TO_INSTALL}")
    language = language or languages() or DEFAULT_LANGUAGES
    try:
        run = subprocess.run([program, "stdin", "stdout", "-l", language, "--psm", "3"], input=image, capture_output=True,
                             timeout=PAGE_SECONDS, env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    except subprocess.TimeoutExpired:
        raise OcrError(f"Tesseract took more than {PAGE_SECONDS:.0f} s over one page") from None
    if run.returncode != 0:
        said = [line for line in run.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise OcrError(f"Tesseract failed ({said[0] if said else f'exit status {run.returncode}'})")
    return run.stdout.decode("utf-8", "replace")


def read_images(images: Iterable[Callable[[], bytes]], workers: int | None = None,
                read: Callable[[bytes], str] | None = None) -> Iterator[str]:
    """The text of each image, in order, read by ``workers`` processes at once (one per core by
    default). Each image is made by calling its maker only when a worker is about to be free (at
    most two per worker wait), so a scanned book's pages are not all rendered into memory at once;
    the makers are called on the calling thread (PDFium, which renders them, is not thread-safe)."""
    workers = max(1, workers or os.cpu_count() or 1)
    read = read or read_image
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="convrag-ocr") as pool:
        waiting: deque[Future[str]] = deque()
        for make in images:
            if len(waiting) >= 2 * workers:
                yield waiting.popleft().result()
            waiting.append(pool.submit(read, make()))
        while waiting:
            yield waiting.popleft().result()
