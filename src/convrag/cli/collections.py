"""``convrag index``, ``search``, ``collections`` and ``delete``: building, searching, listing and removing collections."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.filesize import decimal
from rich.markup import escape

from ..console import RichReporter, console
from ..errors import ConfigError, DataFormatError
from ..limits import check_query
from .app import (
    BackendOpt,
    MilvusUriOpt,
    ModelOpt,
    StoreOpt,
    app,
    check_backend,
    milvus_from,
    milvus_token,
    split_list,
)
from .output import snippet


@app.command(rich_help_panel="Collections")
def index(
    source: Annotated[str, typer.Argument(help="A BEIR corpus (.jsonl, .jsonl.gz, .jsonl.zip), a folder of .txt, .md, .rst, .html, .csv, .pdf, .docx, .odt, .ods, .odp, .rtf, .pptx, .xlsx, .epub, .doc, .xls, .ppt, .eml, .msg, .tif, .png, .jpg, .heic, .zip, .tar.gz, .7z and .rar documents, one such document, or a web address (https://...) of a page or a file; with --crawl, the pages it links to under its folder too.")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Name of the collection to create or update.")],
    store: StoreOpt = None,
    embedding_model: ModelOpt = "all-MiniLM-L6-v2",
    device: Annotated[str, typer.Option("--device", envvar="CONVRAG_EMBEDDING_DEVICE",
                                        help="Torch device that embeds the passages (cpu, cuda, cuda:1, mps); queries embed on the CPU.")] = "cpu",
    dense: Annotated[bool, typer.Option("--dense/--no-dense", help="Also build the dense index.")] = True,
    windows: Annotated[bool, typer.Option("--windows/--no-windows", help="Also embed the further windows of passages longer than the model reads.")] = True,
    max_tokens: Annotated[int, typer.Option(help="Passage length in tokens, for documents.")] = 512,
    overlap: Annotated[int, typer.Option(help="Token overlap between passages, for documents.")] = 100,
    structured: Annotated[bool, typer.Option(
        "--structured/--plain-windows",
        help="For documents: passages cut at sentence and line ends and titled by the section they begin in (the "
             "default), or MT-RAG's plain token windows, cut wherever the count falls and titled by the document.")] = True,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Build afresh, even if nothing changed, embedding every passage (without it, the passages the collection already holds keep their vectors).")] = False,
    crawl: Annotated[bool, typer.Option(
        "--crawl", help="For a web address: also read the pages it links to under its folder on the same site, breadth first, "
                        "then those of the folder the site's sitemap lists, one at a time, obeying the site's robots.txt.")] = False,
    max_pages: Annotated[int | None, typer.Option(help="For --crawl: the most pages fetched (500 by default).")] = None,
    delay: Annotated[float | None, typer.Option(
        help="For --crawl: seconds waited between two requests to the site, or the Crawl-delay its robots.txt asks where "
             "longer (0.25 by default).")] = None,
    header: Annotated[list[str] | None, typer.Option(
        "--header", "-H", help="For a web address: a header sent with each request, 'Name: value' (an intranet's "
                               "'Authorization: Bearer ...' or 'Cookie: ...'); repeat it for more. No request leaves the "
                               "address's folder on its host.")] = None,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Build a collection (BM25 + dense indexes) from a corpus file, a folder of documents or a web site's pages."""
    from ..config import default_store
    from ..data.beir import read_corpus
    from ..embeddings import load_embedder
    from ..index.collection import Collection, CollectionStore
    from ..index.windows import WindowSettings
    from ..ingest import ocr
    from ..ingest.chunking import chunk_document, chunk_documents
    from ..ingest.compilations import compilations_summary, drop_compilations
    from ..ingest.docs_builds import BuildFile, build_files_summary
    from ..ingest.documents import SUFFIXES, document_paths, document_suffix, iter_documents, no_text_reason, read_document
    from ..ingest.twins import Twin, twins_summary
    from ..ingest.web import DEFAULT_DELAY, DEFAULT_MAX_PAGES, CrawlReport, is_address
    from ..ingest.web import crawl as crawl_site
    from ..text import some_of

    check_backend(backend, store)
    address = source.strip() if is_address(source) else ""
    if (crawl or max_pages is not None or delay is not None or header) and not address:
        raise ConfigError("--crawl, --max-pages, --delay and --header are for a web address (https://...)")
    headers = dict(_header(line) for line in header or [])
    max_pages = DEFAULT_MAX_PAGES if max_pages is None else max_pages
    delay = DEFAULT_DELAY if delay is None else delay
    if max_pages < 1 or delay < 0:
        raise ConfigError(f"--max-pages must be at least 1 and --delay at least 0; got {max_pages} and {delay}")
    path = Path(source)
    if not 0 <= overlap < max_tokens:  # refused before the embedding model loads (a ValueError traceback from the chunker, after it)
        raise ConfigError(f"--max-tokens must be above --overlap, and --overlap at least 0; got {max_tokens} and {overlap}")
    if backend == "milvus" and not dense:
        raise ConfigError("the milvus backend always stores dense vectors; drop --no-dense")
    if backend == "milvus":  # refused before the corpus is read and embedded, not after
        from ..backends.milvus import MilvusStore

        milvus = MilvusStore(milvus_uri, milvus_token())
        milvus.refuse_served(collection, "`convrag index`")
    else:
        target = CollectionStore(store or default_store()).writable(collection)
    # a GPU embeds a large corpus in minutes where 2 CPU cores take hours (docs/benchmarks.md, mpnet);
    # the vectors are the same to 1e-6, so the collection is searched with the CPU model afterwards
    embedder = load_embedder(embedding_model, device=device, batch_size=16 if device == "cpu" else 128) if dense else None
    reporter = RichReporter()
    corpus = not address and path.name.lower().endswith((".jsonl", ".jsonl.gz", ".jsonl.zip"))  # a BEIR corpus, though .zip is an archive's suffix too
    documents = bool(address) or path.is_dir() or (document_suffix(path) in SUFFIXES and not corpus)
    tokenizer = (embedder or load_embedder(embedding_model)).tokenizer if documents else None
    # a scanned PDF is read by OCR at a second or two a page: the bar says which page, as the service's job does
    with ocr.hearing(lambda name, done, total: reporter.note(f"{name}: page {done} of {total} read by OCR")):
        if address:  # a page or a file on the web, and with --crawl the pages under its folder
            skipped: list[str] = []
            report = CrawlReport()
            with reporter.stage(f"reading {address}" + (f" and the pages under it (at most {max_pages})" if crawl else "")) as advance:
                # the bar's count has no end a crawl knows at its start: the note says how many pages it has found so far
                pages = crawl_site(address, skipped, follow=crawl, max_pages=max_pages if crawl else 1, delay=delay,
                                   advance=lambda url: (reporter.note(f"page {report.fetched} of {report.to_fetch(max_pages)} found: {url}"
                                                                      if crawl else url), advance(1)),
                                   headers=headers, report=report)
                passages, compiled = drop_compilations([(d.doc_id, chunk_document(d, tokenizer, max_tokens, overlap, structured)) for d in pages])
            for line in skipped:
                console.print(f"[yellow]skipped[/yellow] {escape(line)}", highlight=False)
            if compiled:
                console.print(f"[yellow]left out[/yellow] {escape(compilations_summary(compiled))}", highlight=False)
            if not passages:
                raise DataFormatError(address, "no readable text" + (f" ({len(skipped)} skipped)" if skipped else ""))
        elif path.is_dir():
            skipped = []
            unread: Counter[str] = Counter()
            twins: list[Twin] = []
            built: list[BuildFile] = []
            # counted first, so the bar says how many files are left: a folder of scans read by OCR takes minutes
            with reporter.stage(f"reading and chunking documents under {path}", total=len(document_paths(path))) as advance:
                passages, compiled = drop_compilations([(d.doc_id, chunk_document(d, tokenizer, max_tokens, overlap, structured))
                                                        for d in iter_documents(path, skipped, unread, advance, twins, built)])
            for line in skipped:
                console.print(f"[yellow]skipped[/yellow] {escape(line)}", highlight=False)
            if built:
                console.print(f"[yellow]left out[/yellow] {escape(build_files_summary(built, path))}", highlight=False)
            if twins:
                console.print(f"[yellow]left out[/yellow] {escape(twins_summary(twins))}", highlight=False)
            if compiled:
                console.print(f"[yellow]left out[/yellow] {escape(compilations_summary(compiled))}", highlight=False)
            if unread:
                kinds = ", ".join(f"{suffix} ({n})" for suffix, n in sorted(unread.items()))
                console.print(f"[yellow]not read[/yellow] {unread.total()} file(s) of other types: {escape(kinds)}; convrag reads "
                              f"{', '.join(sorted(SUFFIXES))}")
            if not passages:
                raise DataFormatError(path, "no readable text in any supported file" + (f" ({len(skipped)} skipped)" if skipped else "")
                                      + (f" ({unread.total()} of other types not read)" if unread else ""))
        elif documents:  # one document: a collection of it alone (it read as a broken corpus)
            with reporter.stage(f"chunking {path}"):
                passages = list(chunk_documents([read_document(path)], tokenizer, max_tokens, overlap, structured))
            if not passages:
                raise DataFormatError(path, no_text_reason(path))
        else:
            if not corpus and path.is_file():
                raise DataFormatError(path, f"not a BEIR corpus (.jsonl, .jsonl.gz, .jsonl.zip) nor a document "
                                              f"({', '.join(sorted(SUFFIXES))})")
            empty: list[str] = []
            with reporter.stage(f"reading {path}"):
                passages = list(read_corpus(path, empty))
            if empty:
                shown = some_of(empty, 5)
                console.print(f"[yellow]skipped[/yellow] {len(empty)} passage(s) with neither text nor title: {escape(shown)}")
            if not passages:
                raise DataFormatError(path, f"the corpus is empty ({len(empty)} passage(s) with neither text nor title)" if empty else "the corpus is empty")
    if backend == "milvus":
        if rebuild:
            milvus.delete(collection)
        assert embedder is not None
        synced = milvus.create(collection, embedder.name, embedder.dimension).sync(passages, embedder, reporter=reporter)
        done = (f"{synced.written} passage(s) written, {synced.removed} removed" if synced.written or synced.removed
                else "unchanged")
        console.print(f"Milvus collection [bold]{collection}[/bold] at {escape(milvus_uri)}: {done}, {synced.total} in total")
        return
    built = Collection.build(target, passages, name=collection, embedder=embedder, source=address or str(path), force=rebuild, reporter=reporter,
                             windows=WindowSettings() if windows and embedder is not None else None)
    model = built.manifest.embedding_model
    indexes = f"BM25 and dense ({model})" if model else "BM25 only (no dense index)"
    count = f"{len(built):,} passage{'' if len(built) == 1 else 's'}"
    console.print(f"collection [bold]{built.name}[/bold]: {count}, {escape(indexes)}, at {escape(str(built.path))}")


def _header(line: str) -> tuple[str, str]:
    """A --header's name and value ("Authorization: Bearer abc")."""
    name, colon, value = line.partition(":")
    if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
        raise ConfigError(f"--header must be 'Name: value'; got {line!r}")
    return name.strip(), value.strip()


@app.command(rich_help_panel="Collections")
def search(
    query: Annotated[str, typer.Argument(help="The query text.")],
    collection: Annotated[str, typer.Option("--collection", "-c", help=(
        "Collection to search; several, comma-separated, are searched as a chat over them searches: routed to "
        "those the query is about, then fused."))],
    store: StoreOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid.")] = "hybrid",
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 5,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Search collections and print the ranked passages."""
    from ..config import default_store
    from ..index.collection import CollectionStore
    from ..retrieve.registry import make_retriever

    check_query(query)
    if k < 1:
        raise ConfigError("-k must be at least 1")
    names = split_list(collection)
    milvus = milvus_from(backend, milvus_uri, store)
    if len(names) > 1:
        _search_several(query, names, store, retriever, k, milvus)
        return
    if milvus is not None:
        from ..backends.milvus import MilvusRetriever

        searcher = MilvusRetriever(milvus.open(collection), retriever)
    else:
        searcher = make_retriever(retriever, CollectionStore(store or default_store()).open(collection))
    _print_hits(searcher.search([query], k)[0], several=False)


def _search_several(query: str, names: list[str], store: Path | None, retriever: str, k: int, milvus: object) -> None:
    """``names`` searched as ``/api/search`` and a chat's turn search them (the pipeline's routing and
    fusion across collections, no rewriting), each hit named with its collection. A user with a
    handbook and a product FAQ could chat over both but had to search them one at a time, so could
    not see what a turn over both would draw from."""
    from ..pipeline import PipelineSpec, build_pipeline

    spec = PipelineSpec(tuple(names), strategy="last_turn", retriever=retriever, k=k)
    hits, report = build_pipeline(spec, store=store, generate=False, milvus=milvus).search(query, k)
    left_out = [n for n in names if n not in report.results and n not in report.failures]
    searched = [n for n in names if n in report.results]
    note = f"searched {', '.join(searched)}" + (f"; routed away from {', '.join(left_out)}: not about the query" if left_out else "")
    for name, reason in report.failures.items():
        note += f"; {name} failed: {reason}"
    console.out(note, highlight=False, style="dim")
    _print_hits(hits, several=True)


def _print_hits(hits: Sequence[Any], several: bool) -> None:
    """Ranked hits: one collection's own (its retriever's scores), or several collections' fused,
    each named with its collection."""
    if not hits:
        console.print("no passage matches the query")
    for hit in hits:
        name = f"{escape(hit.collection)}/{escape(hit.passage_id)}" if several else escape(hit.doc_id)
        score = f"fused score {hit.score:.4f}" if several else f"score {hit.score:.4f}"
        console.print(f"[bold]{hit.rank}.[/bold] {name}  [dim]{score}[/dim]  {escape(hit.title)}")
        console.out(f"   {snippet(hit.text)}", highlight=False)


@app.command("collections", rich_help_panel="Collections")
def list_collections(
    store: StoreOpt = None,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """List the collections: passages, embedding model, when built, size, and any problem."""
    from rich.table import Table

    from ..backends.milvus import lite_file_missing
    from ..config import default_store
    from ..index.collection import CollectionStore

    if backend == "milvus" and lite_file_missing(milvus_uri):  # as for a store folder not made yet
        check_backend(backend, store)
        console.out(f"no collections in {milvus_uri}: no Milvus Lite file there; build one with convrag index", highlight=False)
        return
    milvus = milvus_from(backend, milvus_uri, store)
    table = Table(box=None, header_style="bold")
    if milvus is not None:
        for column in ("collection", "passages", "embedding model"):
            table.add_column(column)
        for name in milvus.names():
            opened = milvus.open(name)
            table.add_row(name, f"{len(opened):,}", escape(opened.info.embedding_model))
        where = milvus_uri
    else:
        collections = CollectionStore(store or default_store())
        for column in ("collection", "passages", "embedding model", "built", "size"):
            table.add_column(column)
        table.add_column("source", overflow="fold")  # a path cut short names no file
        for name in collections.folders():
            info = collections.info(name)
            if info.problem is not None:
                table.add_row(name, "-", "-", "-", decimal(info.bytes), f"[red]{escape(info.problem)}[/red]")
                continue
            model = escape(info.embedding_model) if info.embedding_model else "[dim]none (BM25 only)[/dim]"
            if info.windows:
                model += f" [dim](+{info.windows:,} windows)[/dim]"
            table.add_row(name, f"{info.passages:,}", model, info.built[:16].replace("T", " "), decimal(info.bytes), escape(info.source))
        where = str(collections.root)
    if not table.rows:
        console.out(f"no collections in {where}; build one with convrag index", highlight=False)
        return
    console.print(table)
    console.print(f"[dim]in {escape(where)}[/dim]", highlight=False)


@app.command(rich_help_panel="Collections")
def delete(
    collection: Annotated[str, typer.Option("--collection", "-c", help="Name of the collection to delete.")],
    store: StoreOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first.")] = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Delete a collection: its passages and indexes (the documents it was built from are not touched)."""
    from ..config import default_store
    from ..errors import CollectionError
    from ..index.collection import CollectionStore

    milvus = milvus_from(backend, milvus_uri, store)
    if milvus is not None:
        if not milvus.exists(collection):
            raise CollectionError(f"unknown Milvus collection {collection!r} at {milvus_uri} (known: {', '.join(milvus.names()) or 'none'})")
        milvus.refuse_served(collection, "`convrag delete`")
        what = f"{len(milvus.open(collection)):,} passages, at {milvus_uri}"
    else:
        collections = CollectionStore(store or default_store())
        path = collections.deletable(collection)  # refused before the question, not after it
        info = collections.info(collection)
        what = f"{info.passages:,} passages, {decimal(info.bytes)}" if info.passages is not None else decimal(info.bytes)
        what += f", at {path}"
    if not yes and not typer.confirm(f"delete collection {collection} ({what})?", default=False):
        console.print("not deleted")
        raise typer.Exit(1)
    if milvus is not None:
        milvus.delete(collection)
    else:
        collections.delete(collection)
    console.print(f"deleted collection [bold]{escape(collection)}[/bold]")

