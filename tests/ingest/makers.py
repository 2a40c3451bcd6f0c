"""What the ingest tests read: the folders of documents other tools made (:data:`FIXTURES`), documents
made here (PDFs of pages, decks, EPUB books, OpenDocument texts), and the damaged-copy harness."""

from pathlib import Path

from tests.pdfs import make_pdf


def pdf_of_pages(path: Path, pages: list[list[str]]) -> Path:
    """A PDF of ``pages``, each made by :func:`make_pdf`."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for lines in pages:
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    writer.write(str(path))
    return path


def make_deck(path: Path, title: str = "") -> Path:
    """A two-slide PowerPoint deck made with python-pptx, as PowerPoint lays one out."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.title = title
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text = "Harbour fees 2025"
    cover.placeholders[1].text = "Moorings and ramps"
    layout = deck.slide_layouts[1]
    slide = deck.slides.add_slide(layout)
    slide.shapes.title.text = "Moorings"
    body = slide.placeholders[1].text_frame
    body.text = "Kayaks pay 12 dollars a night"
    body.add_paragraph().text = "Yachts  pay 40 dollars a night"
    table = slide.shapes.add_table(4, 3, Inches(1), Inches(5), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Plan", (0, 1): "Spring", (0, 2): "Summer", (1, 0): "Season pass", (1, 1): "300",
                             (1, 2): "300", (2, 0): "Day pass", (2, 1): "12", (2, 2): "15", (3, 1): "10", (3, 2): "10"}.items():
        table.cell(row, col).text = text
    table.cell(2, 0).merge(table.cell(3, 0))  # "Day pass" merged down two rows
    slide.shapes.add_textbox(Inches(7), Inches(0.1), Inches(2), Inches(0.5)).text_frame.text = "Draft"  # above the title
    slide.shapes.add_group_shape().shapes.add_textbox(Inches(1), Inches(6.5), Inches(2), Inches(0.4)).text_frame.text = "Ramps open at 6"
    slide.notes_slide.notes_text_frame.text = "Fees rise by 5 percent in spring."
    for placeholder in layout.placeholders:  # the slide number, date and footer, as "Insert > Header & Footer" adds them
        if placeholder.placeholder_format.type.name in ("SLIDE_NUMBER", "FOOTER", "DATE"):
            slide.shapes.clone_placeholder(placeholder)
            slide.shapes[-1].text_frame.text = "Harbour office 2"
    deck.save(path)
    return path


_CONTAINER = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
              '<rootfiles><rootfile full-path="{opf}" media-type="application/oebps-package+xml"/></rootfiles></container>')


def make_epub(path: Path, pages: dict[str, str], spine: list[str], title: str = "", opf: str = "OEBPS/content.opf",
              named: str | None = None) -> Path:
    """An EPUB 3 book: ``pages`` (file name under the package's folder -> body HTML), read in the
    order of ``spine`` (an entry "name:no" is a non-linear aside); the container names the package
    file ``named`` when given (a damaged book), else ``opf``."""
    import zipfile

    folder = opf.rsplit("/", 1)[0] + "/" if "/" in opf else ""
    manifest = "".join(f'<item id="p{i}" href="{name}" media-type="application/xhtml+xml"/>' for i, name in enumerate(pages))
    manifest += '<item id="css" href="style.css" media-type="text/css"/>'
    ids = {name: f"p{i}" for i, name in enumerate(pages)}
    aside = ' linear="no"'
    refs = "".join(f'<itemref idref="{ids[entry.split(":")[0]]}"{aside if entry.endswith(":no") else ""}/>' for entry in spine)
    meta = f"<dc:title>{title}</dc:title>" if title else ""
    package = (f'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata '
               f'xmlns:dc="http://purl.org/dc/elements/1.1/">{meta}</metadata><manifest>{manifest}</manifest><spine>{refs}</spine></package>')
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", _CONTAINER.format(opf=named or opf))
        book.writestr(opf, package)
        book.writestr(folder + "style.css", "p { margin: 0 }")
        for name, body in pages.items():
            book.writestr(folder + name, f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>{body}</body></html>')
    return path


ODT_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
           'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/"')


def make_odt(path: Path, body: str, title: str = "") -> Path:
    """An OpenDocument text whose body is ``body`` (ODF XML, the namespaces above)."""
    import zipfile

    with zipfile.ZipFile(path, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ODT_NS}><office:body><office:text>'
                                        f'{body}</office:text></office:body></office:document-content>')
        if title:
            package.writestr("meta.xml", f'<?xml version="1.0"?><office:document-meta {ODT_NS}><office:meta><dc:title>{title}'
                                         '</dc:title></office:meta></office:document-meta>')
    return path


#: the readers' test documents made by real writers, from the manual in tools/data
FIXTURES = Path(__file__).parent


_MUTATE = """
import random, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a reader that runs away fails here, not the machine
from convrag.errors import DataFormatError
from convrag.ingest.documents import document_suffix, read_document
source, seed, count, folder = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
rng, whole = random.Random(seed), source.read_bytes()
for i in range(count):
    damaged = bytearray(whole)
    for _ in range(rng.randint(1, 20)):
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
    path = folder / f"{i}{document_suffix(source)}"
    path.write_bytes(bytes(damaged))
    try:
        read_document(path)
    except DataFormatError as exc:
        if exc.reason.startswith("unsupported document type"):  # the copy was not read as its kind at all
            print(f"{i}: {exc}")
    except BaseException as exc:
        print(f"{i}: {type(exc).__name__}: {exc}"[:200])
"""


def read_damaged_copies(source: Path, seed: int, count: int, folder: Path) -> None:
    """Read ``count`` copies of ``source`` with random bytes changed, in a child process (a crash in a
    library's C code fails the test rather than ending pytest), and check each read or refused with a
    :class:`DataFormatError`."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _MUTATE, str(source), str(seed), str(count), str(folder)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == ""
