"""Pictures read by OCR (:mod:`.ocr`): picture files and TIFF scans, and the pictures inside
documents that stand for text (a scanned page pasted into a Word or OpenDocument text, a slide that
is one photo). Which pictures are worth a second of OCR each is decided here, within bounds of count
and time."""

from __future__ import annotations

import contextlib
import functools
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataFormatError
from .formats import FORMAT_NAMES, SUFFIXES, Heading
from .pages import page_lines

_clock = time.monotonic

#: the longest a PDF's scanned pages are read for by OCR (:mod:`.ocr`), about 1,500 pages on two
#: cores; past it the PDF is skipped with advice, rather than keep an indexing job busy for hours
MAX_OCR_SECONDS = 1800.0
#: a page with fewer printed characters than this in its text layer, and a picture, is a scanned page
#: (a scanner may stamp a page number or a Bates number as text on the picture of the page)
SCANNED_PAGE_CHARACTERS = 20
#: so is a page with fewer than this, where one picture covers at least :data:`SCANNED_PAGE_SHARE` of it: a
#: scanning app stamps "Scanned with CamScanner" on each page, a fax machine its header line
STAMPED_PAGE_CHARACTERS = 60
SCANNED_PAGE_SHARE = 0.5


def printed_characters(text: str) -> int:
    """How many characters of ``text`` print (all but white space), counted in C, not a character at
    a time (a crafted page holds 1.6 million)."""
    return len("".join(text.split()))


def no_ocr(path: Path, what: str) -> DataFormatError:
    """The error for scanned pictures that cannot be read: OCR off, or no Tesseract (how to install it)."""
    from . import ocr

    how = (f"OCR is off ({ocr.LANGUAGES_VARIABLE} is empty)" if not ocr.languages() else
           f"no OCR program is installed: {ocr.HOW_TO_INSTALL}")
    return DataFormatError(path, f"{what}, and {how}")


def read_by_ocr(path: Path, pages: list[Any]) -> list[str]:
    """The text of scanned pages (``pages``: each a function that renders one to a picture), read by OCR
    in order within :data:`MAX_OCR_SECONDS`; Tesseract's failure is the file's :class:`DataFormatError`."""
    from . import ocr

    deadline = _clock() + MAX_OCR_SECONDS
    texts: list[str] = []
    try:
        for text in ocr.read_images(pages):
            if _clock() > deadline:
                raise DataFormatError(path, f"not read: its scanned pages took more than {MAX_OCR_SECONDS / 60:.0f} min to read "
                                            f"by OCR ({len(texts)} of {len(pages)} read); give it a text layer first "
                                            "(e.g. ocrmypdf) and index that")
            texts.append(text.replace("\f", "\n"))
            if (hear := ocr.page_progress.get()) is not None:
                hear(path.name, len(texts), len(pages))
    except ocr.OcrError as exc:
        raise DataFormatError(path, f"its scanned pages could not be read by OCR: {exc}") from None
    return texts


def tiff_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """A scanned document saved as TIFF (what scanners and fax programs save, a page per frame),
    read by OCR page by page (:mod:`.ocr`) as a scanned PDF is. A frame is brought to 300 dpi, as
    Tesseract reads best there: a grey 150 dpi scan enlarged went from 4 words wrong to 0, and a
    600 dpi one is read in a quarter of the pixels."""
    return _pictures_to_text(path, every_frame=True)


def picture_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """A picture (PNG, JPEG, WebP, BMP, GIF, AVIF, and HEIC, the iPhone's photos, opened by pi-heif):
    a screenshot, a phone's photo of a notice or a receipt, a diagram saved as GIF, read by OCR. Its
    first frame only (an animated WebP's or GIF's others are the same picture moving), turned as the
    camera's EXIF orientation says (a phone stores a photo taken upright sideways, with that tag). Its resolution tag is not
    trusted (a phone's photo says 72 dpi whatever it shows), so small type is found by its height
    instead (:func:`.ocr.read_picture`); a picture of more pixels than :data:`.ocr.MAX_PIXELS` (a
    poster scanned whole) is made smaller to them. A photo without text gives none."""
    return _pictures_to_text(path, every_frame=False)


def _pictures_to_text(path: Path, every_frame: bool) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of a picture file's frames (every one, or the first), read by OCR. Pillow opens it,
    and refuses a picture so large it would fill the memory (its decompression-bomb check). A HEIC
    photo is first decoded to a PNG by a child process (:mod:`.heif`: its decoder crashed on a
    damaged one)."""
    from PIL import Image, UnidentifiedImageError

    from . import heif, ocr

    with contextlib.ExitStack() as stack:
        source = path
        if path.suffix.lower() in (".heic", ".heif"):
            source = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="convrag-heif-"))) / "photo.png"
            heif.to_png(path, source)
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")  # Pillow's word on a damaged file's EXIF: the file is read, or fails, all the same
        try:
            image = stack.enter_context(Image.open(source))
        except UnidentifiedImageError:  # its message names the file's path, a temporary one inside a mail
            raise DataFormatError(path, f"not a readable {FORMAT_NAMES[SUFFIXES[path.suffix.lower()]]}: Pillow knows no "
                                        "picture format that starts as it does (damaged, or another kind of file)") from None
        count = getattr(image, "n_frames", 1) if every_frame else 1
        if not ocr.available():
            raise no_ocr(path, f"its {count} page(s) are scanned pictures" if every_frame else "it is a picture")

        def render(index: int) -> Any:
            image.seek(index)
            if not every_frame:  # a picture as it is (a phone's tag says 72 dpi whatever it shows), within the pixels OCR is given
                return _for_ocr(image)
            frame = image.convert("L")  # a scan's frame at 300 dpi, where its resolution tag says what it has
            dpi = float((image.info.get("dpi") or (0, 0))[0] or 0)
            return ocr.resized(frame, ocr.scale(frame.width, frame.height, dpi) if dpi > 0 else min(1.0, ocr.room(frame.width, frame.height)))

        texts = read_by_ocr(path, [functools.partial(render, index) for index in range(count)])
    return page_lines(texts), "", ()


def _for_ocr(picture: Any) -> Any:
    """A picture as OCR is given it: turned as its EXIF tag says, see-through parts on white, grey,
    and made smaller where it has more pixels than :data:`.ocr.MAX_PIXELS`."""
    from PIL import ImageOps

    from . import ocr

    frame = _on_white(ImageOps.exif_transpose(picture)).convert("L")
    return ocr.resized(frame, min(1.0, ocr.room(frame.width, frame.height)))


def _on_white(picture: Any) -> Any:
    """A picture with see-through parts (a PNG logo, a screenshot of a window's shadow) laid on white:
    turned grey as it is, the see-through black around black type read as one black block."""
    from PIL import Image

    if picture.mode not in ("RGBA", "LA", "PA") and "transparency" not in picture.info:
        return picture
    picture = picture.convert("RGBA")
    return Image.alpha_composite(Image.new("RGBA", picture.size, "white"), picture)


#: the most pictures of a Word document read by OCR (a second or so each)
MAX_WORD_PICTURES = 500
#: the style :func:`.word._word_lines` (and :func:`.opendocument._odf_lines`) gives the empty line that marks where a picture is
#: shown: "<mark><key> <area>", the key its relationship id (a Word document's) or its path (an OpenDocument's)
PICTURE_MARK = "\x00picture "


def pictures_to_read(lines: list[tuple[str, str]], page: float, blob: Callable[[str], bytes | None]) -> dict[int, bytes]:
    """The pictures of a Word or OpenDocument text to read by OCR, by their place in ``lines`` (the
    marks its reader leaves: ``"<mark><key> <area>"``, the area in the unit of ``page``, the page's
    text area), each once, at most :data:`MAX_WORD_PICTURES`; ``blob`` gives a picture's bytes by its
    key (None where the document does not hold it). Where the document has next to no text of its
    own (fewer printed characters than a scanned PDF page, :data:`SCANNED_PAGE_CHARACTERS`: a letter
    scanned and put into Word), every picture; it read as no text at all. Otherwise those covering
    at least :data:`SCANNED_PAGE_SHARE` of the page's text area, as a scanned page pasted among
    typed ones does (its text was lost); a logo, an icon or a screenshot beside the steps it shows
    stays unread, as a PDF's picture among text does."""
    every = printed_characters("".join(line for _, line in lines)) < SCANNED_PAGE_CHARACTERS
    found: dict[int, bytes] = {}
    seen: set[str] = set()
    for place, (style, _) in enumerate(lines):
        if not style.startswith(PICTURE_MARK):
            continue
        key, area = style[len(PICTURE_MARK):].rsplit(" ", 1)
        data = blob(key) if key not in seen and (every or float(area) >= SCANNED_PAGE_SHARE * page) else None
        if data is not None:
            seen.add(key)
            found[place] = data
            if len(found) >= MAX_WORD_PICTURES:
                break
    return found


def with_pictures_read(lines: list[tuple[str, str]], read: dict[int, str]) -> list[tuple[str, str]]:
    """``lines`` with the text OCR read in the pictures at the places ``read`` names: pictures shown
    one after the other, with no text between (a letter's scanned pages), read as one scan is
    (:func:`page_lines`: a sentence runs on to the next page, a page number and a running line go)."""
    out: list[tuple[str, str]] = []
    pages: list[str] = []

    def flush() -> None:  # the run of pages read so far, as one scan
        out.extend(("", page_line) for page_line in page_lines(pages).split("\n"))
        pages.clear()

    for place, (style, line) in enumerate(lines):
        if place in read:
            pages.append(read[place])
        elif line and pages:
            flush()
        out.append((style, line))
    if pages:
        flush()
    return out


def with_slide_pictures_read(path: Path, slides: list[str], pictured: list[tuple[int, bytes]]) -> list[str]:
    """``slides`` with the text OCR reads in the pictures some of them are (``pictured``: a slide's
    place and its picture's bytes) after what text each has; without OCR, such a slide keeps what it has."""
    from . import ocr

    if not pictured or not ocr.available():
        return slides
    slides = list(slides)
    texts = read_by_ocr(path, [functools.partial(opened_for_ocr, blob) for _, blob in pictured])
    for (index, _), text in zip(pictured, texts, strict=True):
        slides[index] = "\n".join(part for part in (slides[index], page_lines([text])) if part)
    return slides


def opened_for_ocr(blob: bytes) -> Any:
    """A picture's bytes opened and made ready for OCR (:func:`_for_ocr`); one Pillow cannot open (a
    Windows metafile, a damaged one) is a blank picture, read as nothing."""
    import io

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(blob)) as picture:
                return _for_ocr(picture)
    except Exception:  # what Pillow raises for a format it does not know or a damaged file
        return Image.new("L", (1, 1), 255)
