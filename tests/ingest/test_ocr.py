"""Scanned PDFs read by OCR (convrag/ingest/ocr.py and the PDF reader's use of it). The scans are
made here from LibreOffice's PDF of the heat pump manual: its pages rendered to pictures and saved
as a PDF of pictures alone, as a scanner saves one. Tesseract is installed by the set-up."""

import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from convrag.errors import DataFormatError
from convrag.ingest import ocr
from convrag.ingest.documents import read_document

MANUAL_PDF = Path(__file__).parent / "made_by_libreoffice" / "heatpump-manual.pdf"
MANUAL_MD = Path(__file__).parents[2] / "tools" / "data" / "heatpump-manual.md"
_WORD = re.compile(r"\w+")


def _scan(path: Path, pages: list[int] | None = None, dpi: int = 150) -> Path:
    """A PDF of the manual's ``pages`` as pictures, with no text layer."""
    source = pdfium.PdfDocument(MANUAL_PDF)
    images = [source[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for i in pages or range(len(source))]
    images[0].save(path, save_all=True, append_images=images[1:], resolution=dpi)
    return path


def _words(text: str) -> Counter[str]:
    return Counter(word.lower() for word in _WORD.findall(text))


def test_a_scanned_pdf_reads_as_the_text_it_shows(tmp_path: Path) -> None:
    """A PDF of page pictures read as no text, and was skipped. Its words are now the manual's."""
    scan = _scan(tmp_path / "scan.pdf")
    assert pdfium.PdfDocument(scan)[0].get_textpage().get_text_range() == ""
    document = read_document(scan)
    read, manual = _words(document.text), _words(read_document(MANUAL_PDF).text)
    assert sum((read & manual).values()) >= 0.99 * sum(manual.values())
    assert sum((read - manual).values()) <= 0.01 * sum(manual.values())
    assert "E21" in document.text and "0.8 bar" in document.text
    assert "1. Safety" in document.text.split("\n")  # a heading stays a line of its own
    # and its numbered headings are the sections a passage is titled by, as the text PDF's bookmarks are
    assert [h.text for h in document.headings] == [h.text for h in read_document(MANUAL_PDF).headings][1:]
    lines = document.text.split("\n")  # a paragraph's printed lines are one line, as the text layer's are
    assert any(line.startswith("The outdoor unit runs on a 230 V supply") and line.endswith("the refrigerant circuit.") for line in lines)


def test_only_the_scanned_pages_of_a_pdf_are_read_by_ocr_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF of typed pages with one scanned page among them (a signed page put back): the typed pages
    are read from their text layer, the scanned one by OCR, each in its place; a blank page is no scan."""
    scan = pdfium.PdfDocument(_scan(tmp_path / "scan.pdf", pages=[1]))
    mixed = pdfium.PdfDocument.new()
    mixed.import_pages(pdfium.PdfDocument(MANUAL_PDF), [0])
    mixed.import_pages(scan, [0])
    mixed.new_page(595, 842)  # blank
    mixed.import_pages(pdfium.PdfDocument(MANUAL_PDF), [2])
    mixed.save(tmp_path / "mixed.pdf")
    read_pages: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda picture: read_pages.append(picture.width) or real(picture))
    text = read_document(tmp_path / "mixed.pdf").text
    assert len(read_pages) == 1
    order = [text.find(s) for s in ("3. Where to place the outdoor unit", "4. The wall thermostat", "6. Domestic hot water",
                                    "7. The app and remote access")]
    assert -1 not in order and order == sorted(order), order  # page 1 typed, page 2 scanned, page 3 typed
    # without OCR the typed pages are still read; the scanned page gives nothing
    monkeypatch.setattr(ocr, "tesseract", lambda: None)
    without = read_document(tmp_path / "mixed.pdf").text
    assert "3. Where to place the outdoor unit" in without and "7. The app and remote access" in without
    assert "4. The wall thermostat" not in without


def test_a_scanned_pdf_without_ocr_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Skipped as a file that "holds no text", which told the user nothing they could do about it."""
    scan = _scan(tmp_path / "scan.pdf", pages=[0, 1])
    monkeypatch.setattr(ocr, "tesseract", lambda: None)
    with pytest.raises(DataFormatError, match=r"scan.pdf: its 2 page\(s\) are scanned pictures without a text layer, "
                                              r"and no OCR program is installed: install Tesseract OCR \(Debian"):
        read_document(scan)
    monkeypatch.undo()
    monkeypatch.setenv(ocr.LANGUAGES_VARIABLE, "")
    with pytest.raises(DataFormatError, match="and OCR is off"):
        read_document(scan)


def test_a_language_tesseract_does_not_have_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ocr.LANGUAGES_VARIABLE, "xyz")
    with pytest.raises(DataFormatError, match=r"could not be read by OCR: Tesseract failed \(.*xyz"):
        read_document(_scan(tmp_path / "scan.pdf", pages=[0]))


def test_pages_are_read_in_order_several_at_once_and_rendered_only_just_ahead() -> None:
    """Two cores read two pages at once; the pages come back in their order whichever finishes first,
    and no more than two per worker are rendered ahead of the one awaited (a scanned book's pages
    would not fit in memory at once)."""
    made: list[int] = []
    running, most = [0], [0]
    lock = threading.Lock()

    def read(image: bytes) -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02 * (3 - int(image) % 3))  # later pages finish first
        with lock:
            running[0] -= 1
        return f"page {int(image)}"

    def maker(n: int):  # type: ignore[no-untyped-def]
        return lambda: made.append(n) or str(n).encode()

    out = []
    for text in ocr.read_images((maker(n) for n in range(12)), workers=2, read=read):
        out.append(text)
        assert len(made) - len(out) <= 4
    assert out == [f"page {n}" for n in range(12)] and most[0] == 2


def test_a_scan_saved_as_tiff_reads_page_by_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanners and fax programs save a document as a TIFF, a page per frame: "not a type convrag reads"."""
    source = pdfium.PdfDocument(MANUAL_PDF)
    frames = [source[i].render(scale=150 / 72, grayscale=True).to_pil().convert("L") for i in (0, 1)]
    frames[0].save(tmp_path / "scan.tif", save_all=True, append_images=frames[1:], compression="tiff_lzw", dpi=(150, 150))
    text = read_document(tmp_path / "scan.tif").text
    read, manual = _words(text), _words("\n".join(source[i].get_textpage().get_text_range() for i in (0, 1)))
    assert sum((read & manual).values()) >= 0.99 * sum(manual.values()) and sum((read - manual).values()) <= 0.01 * sum(manual.values())
    assert text.find("1. Safety") < text.find("4. The wall thermostat")  # the pages in their order
    monkeypatch.setattr(ocr, "tesseract", lambda: None)
    with pytest.raises(DataFormatError, match=r"scan.tif: its 2 page\(s\) are scanned pictures, and no OCR program is installed"):
        read_document(tmp_path / "scan.tif")
    (tmp_path / "photo.tif").write_bytes(b"II*\x00 not a picture")
    with pytest.raises(DataFormatError, match="photo.tif: not a readable TIFF scan"):
        read_document(tmp_path / "photo.tif")


def test_a_page_is_rendered_at_300_dpi_unless_that_would_be_billions_of_pixels() -> None:
    """PDF allows pages 200 inches a side: at 300 dpi, 3.6 billion pixels, gigabytes to render."""
    assert ocr.scale(595, 842) == pytest.approx(300 / 72)  # A4 in points
    assert ocr.scale(1240, 1754, dpi=150) == pytest.approx(2.0)  # an A4 scan at 150 dpi, enlarged to 300
    poster = ocr.scale(14400, 14400)
    assert 14400 * poster * 14400 * poster == pytest.approx(ocr.MAX_PIXELS)
    assert ocr.scale(2480, 3508, dpi=300) == pytest.approx(1.0)


def test_a_scanned_page_keeps_the_answers_of_a_form_filled_on_it(tmp_path: Path) -> None:
    """A scanned form whose fields were then filled in on screen: the page read by OCR gave way to the
    OCR text, and the typed answers went with its text layer."""
    from tests.pdfs import with_form

    scan = _scan(tmp_path / "scan.pdf", pages=[0])
    (tmp_path / "filled.pdf").write_bytes(with_form(scan.read_bytes(), [{"/FT": "/Tx", "/T": "Owner", "/V": "Ann Lee"}]))
    lines = read_document(tmp_path / "filled.pdf").text.split("\n")
    assert lines[-1] == "Owner: Ann Lee" and "1. Safety" in lines


def test_each_scanned_page_read_is_told_to_whoever_listens(tmp_path: Path) -> None:
    """A long scan is minutes of one file; the service's job says which page OCR is on."""
    heard: list[tuple[str, int, int]] = []
    with ocr.hearing(lambda name, done, total: heard.append((name, done, total))):
        read_document(_scan(tmp_path / "scan.pdf", pages=[0, 1]))
    assert heard == [("scan.pdf", 1, 2), ("scan.pdf", 2, 2)]


def _screenshot(size: int, lines: int = 12) -> tuple[Image.Image, str]:
    """A screenshot of the manual's sentences in ``size``-pixel type, dark on light as a window shows
    them, and the text it shows."""
    words = [w for w in MANUAL_MD.read_text().split() if re.fullmatch(r"[A-Za-z]+[.,]?", w)]
    rows = [" ".join(words[i * 14:(i + 1) * 14]) for i in range(lines)]
    font = ImageFont.load_default(size)
    width = max(round(font.getlength(row)) for row in rows) + 20
    picture = Image.new("RGB", (width, round(size * 1.6) * lines + 20), (248, 248, 248))
    draw = ImageDraw.Draw(picture)
    for i, row in enumerate(rows):
        draw.text((10, 10 + i * round(size * 1.6)), row, fill=(40, 40, 40), font=font)
    return picture, "\n".join(rows)


def _gravel(seed: int = 2) -> Image.Image:
    """A photo's texture without a word in it (gravel, grass): Tesseract's text output reads it as
    "6G / Z / WA / HY AN ce! / NANG / ZY MEY"."""
    import random

    rng = random.Random(seed)
    picture = Image.new("L", (900, 600), 200)
    draw = ImageDraw.Draw(picture)
    for _ in range(900 * 600 // 60):
        x, y = rng.randrange(900), rng.randrange(600)
        draw.line([(x, y), (x + rng.randrange(-8, 9), y + rng.randrange(-8, 9))], fill=rng.choice((20, 60, 120, 240)),
                  width=rng.randrange(1, 3))
    return picture.filter(ImageFilter.GaussianBlur(0.5))


def test_a_screenshot_or_a_photo_of_text_reads_as_its_words(tmp_path: Path) -> None:
    """A PNG or JPEG was "not a type convrag reads": a screenshot of an error message, a phone's
    photo of a notice."""
    for size, suffix in ((12, ".png"), (16, ".jpg"), (24, ".webp"), (16, ".bmp"), (16, ".gif"), (16, ".avif")):
        picture, shown = _screenshot(size)
        picture.save(tmp_path / f"shot{suffix}", quality=90)
        read = _words(read_document(tmp_path / f"shot{suffix}").text)
        assert sum((_words(shown) - read).values()) <= 2, (size, suffix, _words(shown) - read)


def test_small_type_is_read_enlarged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tesseract lost 7 of 168 words of 12-pixel type (words 9 pixels high) read at its own size."""
    picture, shown = _screenshot(12)
    sizes: list[int] = []
    real = ocr.png
    monkeypatch.setattr(ocr, "png", lambda p: sizes.append(p.width) or real(p))
    read = _words(ocr.read_picture(picture.convert("L")))
    assert sizes[0] == picture.width and sizes[1] == round(picture.width * ocr.MAX_ENLARGEMENT)
    assert sum((_words(shown) - read).values()) <= 1


def test_a_photo_without_words_gives_no_text_not_guesses(tmp_path: Path) -> None:
    _gravel().save(tmp_path / "path.jpg", quality=92)
    assert len(ocr.read_words(ocr.png(_gravel()))) >= 5  # Tesseract's guesses, each unsure
    assert read_document(tmp_path / "path.jpg").text == ""


def test_a_photo_is_turned_as_the_camera_says_and_see_through_parts_are_white(tmp_path: Path) -> None:
    """A phone stores an upright photo sideways with an EXIF tag that says so; a PNG's see-through
    background turned black around black type."""
    picture, shown = _screenshot(18, lines=6)
    sideways = picture.transpose(Image.Transpose.ROTATE_90)  # what the sensor saw
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: turn 90 degrees clockwise to show
    sideways.save(tmp_path / "notice.jpg", exif=exif, quality=92)
    assert sum((_words(shown) - _words(read_document(tmp_path / "notice.jpg").text)).values()) <= 2
    see_through = Image.new("RGBA", picture.size, (0, 0, 0, 0))
    see_through.paste((0, 0, 0, 255), mask=picture.convert("L").point(lambda v: 255 if v < 128 else 0))
    for suffix in (".png", ".gif"):  # a GIF's see-through colour is one of its palette's
        see_through.save(tmp_path / f"label{suffix}")
        assert sum((_words(shown) - _words(read_document(tmp_path / f"label{suffix}").text)).values()) <= 2, suffix


def test_an_animated_gif_is_read_by_its_first_frame(tmp_path: Path) -> None:
    """A GIF or an AVIF was "not a type convrag reads": a diagram saved as GIF, a browser's AVIF. An
    animated one's other frames are the same picture moving; its first is read, once."""
    picture, shown = _screenshot(16, lines=4)
    moved = picture.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    picture.save(tmp_path / "moving.gif", save_all=True, append_images=[moved, picture], duration=200, loop=0)
    assert Image.open(tmp_path / "moving.gif").n_frames == 3
    assert sum((_words(shown) - _words(read_document(tmp_path / "moving.gif").text)).values()) <= 1


def test_a_picture_without_ocr_or_not_a_picture_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not a picture")
    with pytest.raises(DataFormatError, match="broken.png: not a readable picture"):
        read_document(tmp_path / "broken.png")
    _screenshot(16)[0].save(tmp_path / "shot.png")
    monkeypatch.setattr(ocr, "tesseract", lambda: None)
    with pytest.raises(DataFormatError, match=r"shot.png: it is a picture, and no OCR program is installed"):
        read_document(tmp_path / "shot.png")


def test_an_iphone_photo_saved_as_heic_reads_upright(tmp_path: Path) -> None:
    """An iPhone saves its photos as HEIC, which Pillow does not open: "not a type convrag reads"."""
    heic = Path(__file__).parent / "made_by_pillow_heif" / "slipway-notice.heic"
    assert read_document(heic).text.split("\n") == ["Harbour notice", "The slipway is closed for repairs from 3 to 14 March.",
                                                    "Boats launch from the north ramp."]
    (tmp_path / "cut.heic").write_bytes(heic.read_bytes()[:2000])
    with pytest.raises(DataFormatError, match="cut.heic: not a readable picture"):
        read_document(tmp_path / "cut.heic")


def test_pages_scanned_upside_down_or_sideways_read_the_right_way_up(tmp_path: Path) -> None:
    """A sheet fed the wrong way round read as "O€ OJ 9194} HI Spjoy", and is now read turned; an upright
    page is read once."""
    source = pdfium.PdfDocument(MANUAL_PDF)
    upright = [source[i].render(scale=150 / 72, grayscale=True).to_pil().convert("L") for i in (0, 1, 2)]
    pages = [upright[0].rotate(180, expand=True), upright[1].rotate(90, expand=True), upright[2]]
    pages[0].save(tmp_path / "scan.pdf", save_all=True, append_images=pages[1:], resolution=150)
    text = read_document(tmp_path / "scan.pdf").text
    manual = _words("\n".join(source[i].get_textpage().get_text_range() for i in (0, 1, 2)))
    read = _words(text)
    assert sum((read & manual).values()) >= 0.99 * sum(manual.values()) and sum((read - manual).values()) <= 0.01 * sum(manual.values())
    assert text.find("1. Safety") < text.find("4. The wall thermostat") < text.find("6. Domestic hot water")


def _stamped(path: Path, pdf: Path, operators: str) -> Path:
    """``pdf`` with a line of text drawn on each page by ``operators`` (in make_pdf's page), as a scanning app stamps one."""
    import io

    import pypdf

    from tests.pdfs import make_pdf

    out = pypdf.PdfWriter(clone_from=pdf)
    stamp = pypdf.PdfReader(io.BytesIO(make_pdf([], operators=operators))).pages[0]
    for page in out.pages:
        page.merge_page(stamp)
    out.write(path)
    return path


def test_a_scan_stamped_by_a_scanning_app_is_read_by_ocr_without_the_stamp(tmp_path: Path) -> None:
    """CamScanner stamps "Scanned with CamScanner" on each page as text: 23 printed characters made the
    pages typed ones, and the scan read as no text at all."""
    stamped = _stamped(tmp_path / "stamped.pdf", _scan(tmp_path / "scan.pdf", pages=[0, 1, 2]),
                       "1 0 0 1 400 20 Tm (Scanned with CamScanner) Tj")
    text = read_document(stamped).text
    manual = _words("\n".join(pdfium.PdfDocument(MANUAL_PDF)[i].get_textpage().get_text_range() for i in (0, 1, 2)))
    assert sum((_words(text) & manual).values()) >= 0.99 * sum(manual.values())
    assert "CamScanner" not in text  # a line at the foot of every page, as a running footer is


def test_a_photo_page_keeps_its_caption_when_ocr_reads_nothing_in_it(tmp_path: Path) -> None:
    """A page of a photo and a short caption: OCR reads no words in the photo, and its nothing had
    replaced the caption."""
    _gravel().save(tmp_path / "photo.pdf", resolution=100)
    for caption in ("Harbour view", "The north ramp, where boats launch in March"):
        stamped = _stamped(tmp_path / "page.pdf", tmp_path / "photo.pdf", f"1 0 0 1 40 10 Tm ({caption}) Tj")
        assert read_document(stamped).text == caption


def test_a_picture_or_a_scan_of_too_many_pixels_is_read_made_smaller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A poster photographed or scanned whole went to Tesseract as it was, hundreds of millions of pixels;
    a 600 dpi scan is read at 300 dpi, a quarter of its pixels."""
    sizes: list[tuple[int, int]] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda picture: sizes.append(picture.size) or real(picture))
    picture, shown = _screenshot(40, lines=3)
    picture.save(tmp_path / "poster.png")
    monkeypatch.setattr(ocr, "MAX_PIXELS", picture.width * picture.height // 4)
    assert sum((_words(shown) - _words(read_document(tmp_path / "poster.png").text)).values()) <= 1
    assert sizes[-1] == (round(picture.width / 2), round(picture.height / 2))
    monkeypatch.undo()
    monkeypatch.setattr(ocr, "read_picture", lambda picture: sizes.append(picture.size) or real(picture))
    picture.convert("L").save(tmp_path / "scan.tif", dpi=(600, 600))
    read_document(tmp_path / "scan.tif")
    assert sizes[-1] == (round(picture.width / 2), round(picture.height / 2))


def test_a_deck_of_slide_pictures_is_read_by_ocr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deck saved from a PDF, or made of scanned pages, is a picture a slide: it read as no text. A
    slide with its own text and a small picture is read as before, without OCR."""
    import io

    import pptx
    from pptx.util import Emu

    picture, shown = _screenshot(24, lines=8)
    png = io.BytesIO()
    picture.save(png, format="PNG")
    deck = pptx.Presentation()
    blank, titled = deck.slide_layouts[6], deck.slide_layouts[5]
    whole = deck.slides.add_slide(blank)
    whole.shapes.add_picture(io.BytesIO(png.getvalue()), 0, 0, width=deck.slide_width, height=deck.slide_height)
    small = deck.slides.add_slide(titled)
    small.shapes.title.text = "Our harbour"
    small.shapes.add_picture(io.BytesIO(png.getvalue()), Emu(914400), Emu(1828800), width=Emu(1828800))
    deck.save(str(tmp_path / "deck.pptx"))
    read: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda p: read.append(p.width) or real(p))
    text = read_document(tmp_path / "deck.pptx").text
    assert len(read) == 1 and sum((_words(shown) - _words(text)).values()) <= 2
    assert text.endswith("\n\nOur harbour")


def test_a_word_document_of_pictures_is_read_by_ocr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A letter scanned and put into Word, a document of screenshots: it read as no text. A document
    with its own text keeps its pictures unread (a logo, a photo)."""
    import io

    import docx
    from docx.shared import Inches

    picture, shown = _screenshot(24, lines=8)
    png = io.BytesIO()
    picture.save(png, format="PNG")
    scanned = docx.Document()
    scanned.add_picture(io.BytesIO(png.getvalue()), width=Inches(6))
    scanned.add_picture(io.BytesIO(png.getvalue()), width=Inches(6))  # the same picture twice: one part, read once
    scanned.save(str(tmp_path / "letter.docx"))
    read: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda p: read.append(p.width) or real(p))
    assert sum((_words(shown) - _words(read_document(tmp_path / "letter.docx").text)).values()) <= 2 and len(read) == 1
    framed = docx.Document()  # a scanned form laid out in a table's cell
    framed.add_table(rows=1, cols=1).cell(0, 0).paragraphs[0].add_run().add_picture(io.BytesIO(png.getvalue()), width=Inches(6))
    framed.save(str(tmp_path / "framed.docx"))
    assert sum((_words(shown) - _words(read_document(tmp_path / "framed.docx").text)).values()) <= 2 and len(read) == 2
    typed = docx.Document()
    typed.add_paragraph("Our harbour has 120 berths and a slipway.")
    typed.add_picture(io.BytesIO(png.getvalue()), width=Inches(6))
    typed.save(str(tmp_path / "typed.docx"))
    assert read_document(tmp_path / "typed.docx").text == "Our harbour has 120 berths and a slipway." and len(read) == 2


_RULES_ODT = Path(__file__).parent / "made_by_libreoffice" / "harbour-rules.odt"


def _odt_with(tmp_path: Path, name: str, change: Callable[[str], str]) -> Path:
    """A copy of harbour-rules.odt with its content.xml changed by ``change``."""
    import zipfile

    with zipfile.ZipFile(_RULES_ODT) as source, zipfile.ZipFile(tmp_path / name, "w") as copy:
        for item in source.infolist():
            data = source.read(item)
            copy.writestr(item, change(data.decode()).encode() if item.filename == "content.xml" else data)
    return tmp_path / name


def test_a_scanned_page_pasted_among_an_opendocument_texts_text_is_read_in_its_place(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """LibreOffice's copy of the Word document below: a Writer document's pictures were never read, so a
    scanned page among its paragraphs, or a letter scanned and put into Writer, read as nothing. As for
    Word, a picture covering half the page's text area or more is read where it is shown (in a table's cell
    too), and every picture of a document with next to no text of its own; a screenshot among text is not."""
    page = pdfium.PdfDocument(MANUAL_PDF)[0].render(scale=150 / 72, grayscale=True).to_pil().convert("L")
    page_text = pdfium.PdfDocument(MANUAL_PDF)[0].get_textpage().get_text_range()
    read: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda p: read.append(p.width) or real(p))
    lines = read_document(_RULES_ODT).text.split("\n")
    assert read == [page.width]
    assert lines[0] == "Our harbour rules follow, as signed." and lines[-1] == "Signed by the harbour master."
    assert sum((_words(page_text) - _words("\n".join(lines[1:-1]))).values()) <= 3
    cell = _odt_with(tmp_path, "cell.odt", lambda xml: re.sub(  # the page laid out in a table's cell
        r'(<text:p [^>]*><draw:frame [^>]*draw:name="Picture 2".*?</text:p>)',
        r"<table:table><table:table-column/><table:table-row><table:table-cell>\1</table:table-cell></table:table-row></table:table>",
        xml, flags=re.S))
    assert "<table:table-cell><text:p" in _content_xml(cell)
    lines = read_document(cell).text.split("\n")
    assert read == [page.width] * 2 and sum((_words(page_text) - _words("\n".join(lines[1:-1]))).values()) <= 3
    def on_the_page(xml: str) -> str:  # the page's frame anchored to the page, out of its paragraph
        frame = re.search(r'<draw:frame [^>]*draw:name="Picture 2".*?</draw:frame>', xml, flags=re.S)[0]
        return xml.replace(frame, "").replace("<office:text>", "<office:text>" + frame.replace('"as-char"', '"page"'), 1)

    paged = _odt_with(tmp_path, "paged.odt", on_the_page)
    assert 'text:anchor-type="page"' in _content_xml(paged)
    lines = read_document(paged).text.split("\n")
    assert read == [page.width] * 3 and sum((_words(page_text) - _words("\n".join(lines))).values()) <= 3
    bare = _odt_with(tmp_path, "bare.odt", lambda xml: xml.replace("Our harbour rules follow, as signed.", "").replace(
        "Signed by the harbour master.", ""))
    read_document(bare)
    assert len(read) == 5 and read[-1] == page.width  # no text of its own: the screenshot is read too


def _content_xml(path: Path) -> str:
    """An OpenDocument's content.xml."""
    import zipfile

    with zipfile.ZipFile(path) as package:
        return package.read("content.xml").decode()


def test_an_opendocument_deck_of_slide_pictures_is_read_by_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    """LibreOffice's copy of the deck above: a slide that is one picture read as nothing; a titled slide
    with a small picture is read as before."""
    shown = _screenshot(24, lines=8)[1]
    read: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda p: read.append(p.width) or real(p))
    text = read_document(Path(__file__).parent / "made_by_libreoffice" / "harbour-slides.odp").text
    assert len(read) == 1 and sum((_words(shown) - _words(text)).values()) <= 2
    assert text.endswith("\n\nOur harbour")


def test_a_scanned_page_pasted_among_a_word_documents_text_is_read_in_its_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signed form scanned and pasted between typed paragraphs: its text was lost, as the document
    had text of its own. A picture covering half the page's text area or more is read where it is
    shown; a screenshot beside its steps is not (a second of OCR each, for a window's menus)."""
    import io

    import docx
    from docx.oxml.ns import qn
    from docx.shared import Inches

    page = pdfium.PdfDocument(MANUAL_PDF)[0].render(scale=150 / 72, grayscale=True).to_pil().convert("L")
    scan = io.BytesIO()
    page.save(scan, format="PNG")
    shot = io.BytesIO()
    _screenshot(16, lines=4)[0].save(shot, format="PNG")
    document = docx.Document()  # Letter, margins of 1.25 inches left and right: a text area of 6 by 9 inches
    document.add_paragraph("Our harbour rules follow, as signed.")
    document.add_picture(io.BytesIO(shot.getvalue()), width=Inches(6))  # a screenshot a few lines high
    document.add_picture(io.BytesIO(scan.getvalue()), width=Inches(6))  # the page, 6 by 7.8 inches
    document.add_paragraph("Signed by the harbour master.")
    document.save(str(tmp_path / "rules.docx"))
    read: list[int] = []
    real = ocr.read_picture
    monkeypatch.setattr(ocr, "read_picture", lambda p: read.append(p.width) or real(p))
    lines = read_document(tmp_path / "rules.docx").text.split("\n")
    assert read == [page.width]
    assert lines[0] == "Our harbour rules follow, as signed." and lines[-1] == "Signed by the harbour master."
    page_text = pdfium.PdfDocument(MANUAL_PDF)[0].get_textpage().get_text_range()
    assert sum((_words(page_text) - _words("\n".join(lines[1:-1]))).values()) <= 3
    for properties in document.element.body.findall(qn("w:sectPr")):  # no page size at all: Letter is assumed
        document.element.body.remove(properties)
    document.save(str(tmp_path / "bare.docx"))
    assert read_document(tmp_path / "bare.docx").text.split("\n") == lines and len(read) == 2


def test_an_archives_pictures_are_read_up_to_a_bound_and_a_wordless_one_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A photo without words and a blank note in a zip were named with no reason ("view.png ()"); a
    Notion export's hundreds of screenshots would each be read by OCR."""
    import io
    import zipfile

    from convrag.ingest import archives

    shot, view = io.BytesIO(), io.BytesIO()
    _screenshot(20, lines=2)[0].save(shot, format="PNG")
    _gravel().save(view, format="PNG")
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("a-shot.png", shot.getvalue())
        archive.writestr("b-view.png", view.getvalue())
        archive.writestr("c-shot.png", shot.getvalue())
        archive.writestr("notes.txt", " \n")
    monkeypatch.setattr(archives, "MAX_ARCHIVE_PICTURES", 2)
    lines = read_document(tmp_path / "export.zip").text.split("\n")
    assert lines[0] == "File: a-shot.png" and lines[-1] == (
        "Files not read: b-view.png (no text (no words OCR could read in it)), c-shot.png (a picture past the first 2 of "
        "the archive, which OCR reads at a second or so each; unpack it and index the folder), notes.txt (no text)")


def test_a_picture_attached_to_a_mail_is_read_and_one_its_body_shows_is_not(tmp_path: Path) -> None:
    """A photo attached to a mail is a document (a receipt, a notice); a newsletter's logos and banners,
    shown in its body, would each take a second of OCR for nothing."""
    import io
    from email.message import EmailMessage

    shot = io.BytesIO()
    picture, shown = _screenshot(20, lines=2)
    picture.save(shot, format="PNG")
    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "The notice"
    mail.set_content("The notice is attached.")
    mail.add_attachment(shot.getvalue(), maintype="image", subtype="png", filename="notice.png")
    (tmp_path / "notice.eml").write_bytes(bytes(mail))
    lines = read_document(tmp_path / "notice.eml").text.split("\n")
    assert lines[2] == "Attachment: notice.png" and sum((_words(shown) - _words("\n".join(lines[3:]))).values()) <= 1
    letter = EmailMessage()  # as a newsletter is sent: its HTML, and the pictures it shows, related to it
    letter["From"], letter["Subject"] = "news@harbour.example", "Harbour news"
    letter.set_content('<p>Winter berths close on 1 November.</p><img src="cid:banner@harbour">', subtype="html")
    letter.add_related(shot.getvalue(), maintype="image", subtype="png", cid="<banner@harbour>", filename="banner.png")
    (tmp_path / "news.eml").write_bytes(bytes(letter))
    assert read_document(tmp_path / "news.eml").text.split("\n") == [
        "From: news@harbour.example", "Winter berths close on 1 November.",
        "Attachments not read: banner.png (a picture shown in the mail's body (a logo, a banner), not read by OCR)"]
