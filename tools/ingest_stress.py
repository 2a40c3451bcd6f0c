"""Time convrag's readers on the inputs that used to stall them (docs/benchmarks.md, "Reading users'
documents"): deeply nested HTML (one with a stray end tag), a text file wrapped over 300,000 lines, a Markdown line of spaces
and #s, MDX pages of unclosed comments and of a long component line, 20,000 admonitions, a 2 MB LaTeX
paper (pandoc), a transcript of 50,000 cues, a mailbox of 2,000 mails, archives of 5,000 pages (tar.gz, zip, 7z, tar.zst),
a tar.gz that unpacks to 3 GB, a crawl of 300 pages served on 127.0.0.1, a Word document of 56,000 paragraphs, a 23 MB text to chunk (with its peak memory), a PDF
whose pages are slow to parse, and the service's document listing for 20,000 uploaded documents.

    .venv/bin/python tools/ingest_stress.py            # about 3 minutes on 2 cores, most of it the PDF
"""

from __future__ import annotations

import io
import json
import multiprocessing
import random
import resource
import tempfile
import time
import zlib
from pathlib import Path


def _timed(label: str, work) -> None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    detail = work()
    print(f"| {label} | {time.perf_counter() - start:.2f} s | {detail} |", flush=True)


def _chunk_23mb(queue) -> None:  # type: ignore[no-untyped-def]
    from convrag.embeddings import load_embedder
    from convrag.ingest.chunking import chunk_document
    from convrag.ingest.documents import Document

    tokenizer = load_embedder().tokenizer
    rng = random.Random(0)
    words = "the harbour office opens at eight and boats must register at the desk before mooring while visitors pay".split()
    text = " ".join(rng.choice(words) for _ in range(4_000_000))
    start = time.perf_counter()
    passages = chunk_document(Document("d", "T", text), tokenizer)
    queue.put((time.perf_counter() - start, len(passages), len(text)))


def _slow_pdf(path: Path, pages: int) -> None:
    """Pages that share one content stream of 150,000 text operations (about 18 s each to parse)."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, NumberObject, StreamObject

    writer = PdfWriter()
    stream = StreamObject()
    stream._data = zlib.compress(b"BT /F1 12 Tf 10 10 Td (hello world) Tj ET\n" * 150_000, 9)
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    stream[NameObject("/Length")] = NumberObject(len(stream._data))
    contents = writer._add_object(stream)
    font = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                                NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = contents
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    writer.write(str(path))


def main() -> None:
    from convrag.errors import DataFormatError
    from convrag.ingest.documents import read_document
    from convrag.service.store import Store

    folder = Path(tempfile.mkdtemp())
    print("| input | time | result |\n|---|---|---|")
    html = folder / "nested.html"
    html.write_text("<html><body>" + "<div>" * 200_000 + "deep text" + "</div>" * 200_000 + "</body></html>")
    _timed(f"HTML, 200,000 nested divs ({html.stat().st_size / 1e6:.1f} MB)", lambda: repr(read_document(html).text))
    stray = folder / "stray.html"  # one end tag too many: read as a browser builds it, unless nested this deep
    stray.write_text("<html><body>" + "<div>" * 25_000 + "deep text" + "</div>" * 25_001 + "</body></html>")
    _timed(f"HTML, 25,000 nested divs and a stray end tag ({stray.stat().st_size / 1e6:.1f} MB)", lambda: repr(read_document(stray).text))
    tables = folder / "tables.html"  # a table in a table's cell, 20,000 deep: each is judged a layout table once
    tables.write_text("<html><body>" + "<table><tr><td>" * 20_000 + "deep text" + "</td></tr></table>" * 20_000 + "</body></html>")
    _timed(f"HTML, 20,000 nested tables ({tables.stat().st_size / 1e6:.1f} MB)", lambda: repr(read_document(tables).text))
    wrapped = folder / "wrapped.txt"  # one sentence wrapped over 300,000 lines: every line break is joined
    rng = random.Random(0)
    words = "the harbour office opens at eight and boats must register at the desk before mooring while visitors pay".split()
    wrapped.write_text("\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(300_000)))
    _timed(f"text file of {wrapped.stat().st_size / 1e6:.0f} MB wrapped over 300,000 lines",
           lambda: f"{read_document(wrapped).text.count(chr(10)) + 1:,} line(s) after joining")
    md = folder / "line.md"
    md.write_text("# a" + " " * 4000 + "#" * 4000 + " " * 4000 + "x\n\nBody.\n")
    _timed("Markdown, a 12 KB heading line of spaces and #s", lambda: f"title of {len(read_document(md).title):,} characters")
    comments = folder / "comments.mdx"  # 30,000 unclosed JSX comments: a lazy regular expression searched them in quadratic time
    comments.write_text("{/*" * 30_000)
    _timed("MDX page of 30,000 unclosed {/* comments", lambda: f"{len(read_document(comments).text):,} characters")
    component = folder / "component.mdx"  # a component's tag line of 50,000 spaces: two parts of a pattern could take each
    component.write_text("<A " + " " * 50_000 + "x\n")
    _timed("MDX page, a component line of 50,000 spaces", lambda: f"{len(read_document(component).text):,} characters")
    notes = folder / "admonitions.md"
    notes.write_text("!!! note\n    Boats pay 40.\n\n" * 20_000)
    _timed("Markdown, 20,000 MkDocs admonitions", lambda: f"{read_document(notes).text.count(chr(10)) + 1:,} lines")
    latex = folder / "paper.tex"  # a long paper's source through pandoc: 2,000 sections of 150 words, math and citations
    latex.write_text("\\documentclass{article}\\begin{document}\n" + "\n\n".join(
        f"\\section{{Part {i}}}\n" + " ".join(rng.choice(words + ["$x^2$", "\\emph{berth}", "\\cite{a}"]) for _ in range(150))
        for i in range(2000)) + "\n\\end{document}\n")
    _timed(f"LaTeX paper of {latex.stat().st_size / 1e6:.1f} MB (pandoc)", lambda: f"{len(read_document(latex).headings):,} headings")
    captions = folder / "meeting.vtt"  # a day of a meeting's transcript
    captions.write_text("WEBVTT\n\n" + "\n\n".join(
        f"{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000 --> {i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.900\n"
        f"<v {rng.choice(['Ann Lee', 'Bo Chen', 'Cy Dunn'])}>{' '.join(rng.choice(words) for _ in range(10))}</v>" for i in range(50_000)))
    _timed("WebVTT transcript of 50,000 cues", lambda: f"{read_document(captions).text.count(chr(10)) + 1:,} turns")
    import mailbox
    from email.message import EmailMessage

    box = mailbox.mbox(str(folder / "archive.mbox"))
    for i in range(2000):
        mail = EmailMessage()
        mail["From"], mail["Subject"] = "ann@harbour.example", f"Berth {i}"
        mail.set_content(" ".join(rng.choice(words) for _ in range(80)))
        box.add(mail)
    box.close()
    _timed("mailbox of 2,000 mails", lambda: f"{len(read_document(folder / 'archive.mbox').headings):,} mails")
    import tarfile
    import zipfile

    pages = {f"docs/page{i:04d}.md": f"# Page {i}\n\n{' '.join(rng.choice(words) for _ in range(60))}\n".encode() for i in range(5000)}
    with tarfile.open(folder / "docs.tar.gz", "w:gz") as tar, zipfile.ZipFile(folder / "docs.zip", "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in pages.items():  # a compressed tar is one stream: its files are read in its order, never from its start again
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            zipped.writestr(name, data)
    import libarchive

    with libarchive.file_writer(str(folder / "docs.7z"), "7zip") as sevenz, \
            libarchive.file_writer(str(folder / "docs.tar.zst"), "ustar", "zstd") as zstd:  # one solid block, one stream: read forward once
        for name, data in pages.items():
            sevenz.add_file_from_memory(name, len(data), data)
            zstd.add_file_from_memory(name, len(data), data)
    for name in ("docs.tar.gz", "docs.zip", "docs.7z", "docs.tar.zst"):
        _timed(f"{name}, 5,000 Markdown pages", lambda name=name: f"{len(read_document(folder / name).headings):,} headings")
    with tarfile.open(folder / "bomb.tar.gz", "w:gz", compresslevel=1) as tar, open("/dev/zero", "rb") as zeros:
        for i in range(3):  # three files of 1 GB: the third's header is read only once the first two are unpacked
            info = tarfile.TarInfo(f"zeros{i}.bin")
            info.size = 1 << 30
            tar.addfile(info, zeros)

    def read_bomb() -> str:
        try:
            read_document(folder / "bomb.tar.gz")
        except DataFormatError as exc:
            return f"refused: {exc.reason[:60]}"
        return "read"

    _timed(f"tar.gz of {(folder / 'bomb.tar.gz').stat().st_size / 1e6:.0f} MB unpacking to 3 GB of zeros", read_bomb)
    import http.server
    import threading

    from convrag.ingest.web import crawl

    site = folder / "site"
    site.mkdir()
    for i in range(300):  # a documentation site's section: each page links to five others
        links = " ".join(f"<a href='page{(i * 7 + k) % 300}.html'>p</a>" for k in range(1, 6))
        (site / f"page{i}.html").write_text(f"<html><head><title>Page {i}</title></head><body><nav>{links}</nav><main><h1>Page {i}</h1>"
                                            + "".join(f"<p>{' '.join(rng.choice(words) for _ in range(40))}</p>" for _ in range(8))
                                            + "</main></body></html>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Quiet(*a, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    start = f"http://127.0.0.1:{server.server_address[1]}/page0.html"
    _timed("crawl of 300 pages on 127.0.0.1, no delay", lambda: f"{len(list(crawl(start, [], delay=0))):,} pages")
    server.shutdown()
    import docx

    word = docx.Document()
    for i in range(56_000):
        word.add_paragraph(f"Berth {i} is free on Mondays and costs {i % 90} dollars.")
    word.save(str(folder / "berths.docx"))
    _timed("Word document of 56,000 paragraphs", lambda: f"{read_document(folder / 'berths.docx').text.count(chr(10)) + 1:,} lines")
    queue: multiprocessing.Queue = multiprocessing.Queue()
    child = multiprocessing.Process(target=_chunk_23mb, args=(queue,))
    child.start()
    seconds, passages, chars = queue.get()
    child.join()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(f"| chunking a {chars / 1e6:.0f} MB text (tokenizer loaded apart) | {seconds:.2f} s | {passages:,} passages, "
          f"peak memory {peak:.1f} GB (the process, model included) |", flush=True)
    pdf = folder / "slow.pdf"
    _slow_pdf(pdf, 50)

    def read_pdf() -> str:
        try:
            read_document(pdf)
        except DataFormatError as exc:
            return f"skipped: {exc.reason[:60]}…"
        return "read"

    _timed(f"PDF of 50 slow pages ({pdf.stat().st_size / 1e3:.0f} KB)", read_pdf)
    store = Store(folder / "db.sqlite")
    with store.transaction() as db:
        db.execute("INSERT INTO collections (name, description, embedding_model, created) VALUES ('c', '', 'm', 0)")
        for j in range(10):
            files = [{"filename": f"f{j}_{i}.md", "doc_id": f"f{j}_{i}", "stored": "x", "bytes": 1} for i in range(2000)]
            db.execute("INSERT INTO jobs (id, collection, status, files, created) VALUES (?, 'c', 'succeeded', ?, ?)",
                       (f"j{j}", json.dumps(files), j))
            db.executemany("INSERT INTO documents (collection, doc_id, filename, title, bytes, passages, job_id, added) "
                           "VALUES ('c', ?, ?, 't', 1, 1, ?, ?)", [(f["doc_id"], f["filename"], f"j{j}", j) for f in files])
    _timed("service: list 20,000 documents uploaded 2,000 at a time", lambda: f"{len(store.documents('c')):,} documents")
    _timed("service: look up one of them (a download)", lambda: f"uploaded: {store.document('c', 'f9_1999')['uploaded']}")


if __name__ == "__main__":
    main()
