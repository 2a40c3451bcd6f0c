"""Background indexing of uploaded documents, one job at a time, with progress in the database.

A job reads its staged files, chunks them, and has the collection backend (:mod:`.backends`)
swap the replaced documents' passages for the new ones. Embedded, that builds a new version that
holds the previous passages (their vectors reused) plus the new ones, switched to atomically at
the very end (see :mod:`convrag.index.collection`): a crash or kill at any point before that
leaves the collection as it was, and at the next start such a job is reported as failed; the
built version records its job id, so a job killed after the switch but before its database
update is recognised and completed instead. In Milvus the new passages are written before the
replaced ones are deleted, and a job cut off is run again at the next start.
"""

from __future__ import annotations

import json
import logging
import queue
import shutil
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..embeddings import Embedder, load_embedder
from ..errors import BackendUnavailable, ConvragError
from ..ingest.chunking import chunk_document
from ..ingest.documents import no_text_reason, read_document
from ..types import Passage, document_of
from .backends import ServiceCollections
from .store import Store

log = logging.getLogger("convrag.service")

INTERRUPTED = "interrupted: the server stopped before indexing finished; the collection is unchanged"


def indexed_documents(passages: list[Passage]) -> list[dict[str, Any]]:
    """The documents of what ``convrag index`` built, as the database lists uploaded ones: one per
    document id of its passages, named by that id (there is no file), sized by its passages' text."""
    rows: dict[str, dict[str, Any]] = {}
    for p in passages:
        doc_id = document_of(p.doc_id)
        row = rows.setdefault(doc_id, {"doc_id": doc_id, "filename": doc_id, "title": p.title or doc_id, "bytes": 0, "passages": 0})
        row["bytes"] += len(p.text.encode("utf-8"))
        row["passages"] += 1
    return list(rows.values())


class _Stopped(Exception):
    """The server stopped while a job waited to try again."""


class JobReporter:
    """A :class:`~convrag.progress.Reporter` that writes progress to the job's row (at most 4 times a second)."""

    def __init__(self, store: Store, job_id: str) -> None:
        self.store, self.job_id = store, job_id

    @contextmanager
    def stage(self, description: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        done = 0
        last = 0.0
        self.store.update_job(self.job_id, stage=description, done=0, total=total or 0)

        def advance(n: int = 1) -> None:
            nonlocal done, last
            done += n
            if time.monotonic() - last > 0.25 or (total and done >= total):
                last = time.monotonic()
                self.store.update_job(self.job_id, done=done)

        yield advance
        self.store.update_job(self.job_id, done=total or done)


class Indexer:
    """Runs indexing jobs on one worker thread (jobs of one collection must not interleave, and
    embedding already uses every core).

    A job the backend fails (:class:`BackendUnavailable`: a Milvus server down or unreachable) is
    tried again after each of :attr:`backend_retry_delays`, its files kept, before it fails: an
    outage of a minute or two should not cost a user their upload. It waits in the worker, so the
    jobs queued behind it keep their order (a later upload of the same document is never applied
    before an earlier one)."""

    #: seconds to wait before each new try of a job the backend failed
    backend_retry_delays: tuple[float, ...] = (5.0, 30.0, 120.0)

    def __init__(self, store: Store, collections: ServiceCollections, uploads_root: Path, public_only: bool = True,
                 max_web_bytes: int = 500_000_000) -> None:
        self.store = store
        self.collections = collections
        self.uploads_root = uploads_root
        #: web jobs fetch only from public addresses (:func:`convrag.ingest.web.not_public`), and store at
        #: most this many bytes each (a crawl of 500 pages of 50 MB would fill a disk an upload's bound spares)
        self.public_only = public_only
        self.max_web_bytes = max_web_bytes
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="convrag-indexer", daemon=True)
        self._active: set[str] = set()
        self._headers: dict[str, dict[str, str]] = {}  # a web job's headers, by job id, until it runs
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.on_change: Callable[[str], None] = lambda name: None

    def start(self) -> None:
        self.recover()
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._queue.put(None)

    def submit(self, job_id: str, collection: str, headers: dict[str, str] | None = None) -> None:
        """Queue a job. ``headers``: what a web job sends with each request to its site (a token, a
        cookie), held here for it alone and never written down."""
        with self._lock:
            self._active.add(collection)
            if headers:
                self._headers[job_id] = dict(headers)
        self._queue.put(job_id)

    def busy(self, collection: str) -> bool:
        with self._lock:
            return collection in self._active

    def recover(self) -> None:
        """Settle the jobs a previous process left queued or running: one whose result is live is
        recorded, one a backend cannot tell about (Milvus), one bringing in what ``convrag index``
        built, or one fetching pages from the web whose result is not live is run again, any other failed."""
        for job in self.store.unfinished_jobs():
            applied = self.collections.applied(job["collection"], job["id"])
            # bringing in what `convrag index` built has no files to lose, and gives the same result again; a
            # web job fetches its pages again
            if (job.get("source") == "indexed" or (job.get("source") == "web" and not applied)
                    or (applied is None and (self.uploads_root / job["id"]).is_dir())):
                self.store.update_job(job["id"], status="queued", stage="")
                self.submit(job["id"], job["collection"])
                log.info("job %s was cut off by the stop; it runs again", job["id"])
            elif applied:
                documents = {f["doc_id"] for f in job["files"]}
                passages = self.collections.passages_of(job["collection"], documents)
                self.store.finish_job(job["id"], job["collection"], self._document_rows(job, passages))
                log.info("job %s had finished its index before the stop; recorded it", job["id"])
            else:
                self.store.update_job(job["id"], status="failed", error=INTERRUPTED, finished=time.time())
                shutil.rmtree(self.uploads_root / job["id"], ignore_errors=True)

    def _document_rows(self, job: dict[str, Any], passages: list[Passage]) -> list[dict[str, Any]]:
        """The job's documents as the database records them, from their passages."""
        counts = Counter(document_of(p.doc_id) for p in passages)
        titles: dict[str, str] = {}
        for p in passages:  # the first passage's: a later one's title names the section it begins in too
            titles.setdefault(document_of(p.doc_id), p.title)
        return [
            {"doc_id": f["doc_id"], "filename": f["filename"], "original": f.get("original") or f["filename"],
             "title": titles.get(f["doc_id"], f.get("original") or f["filename"]), "bytes": f["bytes"],
             "passages": counts.get(f["doc_id"], 0)}
            for f in job["files"] if counts.get(f["doc_id"], 0)
        ]

    def public_error(self, exc: BaseException, job: dict[str, Any]) -> str:
        """The error as the API shows it: the user's file names instead of server paths."""
        message = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConvragError) else str(exc)
        folder = self.uploads_root / job["id"]
        for f in job["files"]:
            message = message.replace(str(folder / f["stored"]), f.get("original") or f["filename"])
        # the uploads, the embedded collections' folder, the data folder (a Milvus Lite file's)
        roots = (self.uploads_root, getattr(self.collections, "root", self.uploads_root), self.uploads_root.parent)
        for root in roots:
            message = message.replace(str(root.resolve()), "…").replace(str(root), "…")
        return message

    def _work(self) -> None:
        while True:
            job_id = self._queue.get()
            if job_id is None:
                return
            job = self.store.job(job_id)
            if job is None:
                continue
            try:
                self._run_patiently(job)
            except _Stopped:  # left queued, files kept: the next start runs it (see recover)
                log.info("indexing job %s: the stop came while it waited for the backend; it runs at the next start", job_id)
            except Exception as exc:  # a job's failure is recorded, never fatal to the server
                log.warning("indexing job %s failed: %s", job_id, exc)
                log.debug("%s", traceback.format_exc())
                self.store.update_job(job_id, status="failed", error=self.public_error(exc, job), finished=time.time())
                shutil.rmtree(self.uploads_root / job_id, ignore_errors=True)
            finally:
                with self._lock:
                    self._active.discard(job["collection"])
                    self._headers.pop(job_id, None)  # a job that failed before it fetched
                self.on_change(job["collection"])

    def _run_patiently(self, job: dict[str, Any]) -> None:
        """:meth:`run`, tried again after each of :attr:`backend_retry_delays` while the backend fails."""
        for delay in (*self.backend_retry_delays, None):
            try:
                return self.run(job)
            except BackendUnavailable as exc:
                if delay is None:  # the job's error is the API's: without the backend's address
                    raise BackendUnavailable(f"{exc.public} (tried {len(self.backend_retry_delays) + 1} times; "
                                             "upload the files again once the backend is back)") from None
                log.warning("indexing job %s: %s; trying again in %g s", job["id"], exc, delay)
                self.store.update_job(job["id"], status="queued",
                                      stage=f"waiting for the backend ({exc.public}); trying again in {delay:g} s")
                if self._stopping.wait(delay):
                    raise _Stopped from None

    def run(self, job: dict[str, Any]) -> None:
        job_id, name = job["id"], job["collection"]
        record = self.store.collection(name)
        if record is None:
            raise ConvragError(f"collection {name!r} was deleted")
        began = time.monotonic()
        self.store.update_job(job_id, status="running", started=time.time(), stage="reading documents")
        embedder = load_embedder(record["embedding_model"])
        folder = self.uploads_root / job_id
        reporter = JobReporter(self.store, job_id)
        if job.get("source") == "indexed":
            return self._bring_in_indexed(job, embedder, reporter, began)
        new_passages = []
        skipped: list[str] = []
        if job.get("source") == "web":
            job = self._fetched(job, reporter, skipped)
        with reporter.stage("reading and chunking documents", total=len(job["files"])) as advance:
            for f in job["files"]:
                try:
                    with self._pages_reported(job_id, f.get("original") or f["filename"]):
                        passages = self._chunked(name, folder / f["stored"], f, embedder)
                except ConvragError as exc:
                    skipped.append(f"{f.get('original') or f['filename']}: {self.public_error(exc, job)}")
                    advance(1)
                    continue
                if not passages:  # "no text", or for a scan or a photo that OCR found no words in, that it did not
                    skipped.append(f"{f.get('original') or f['filename']}: {no_text_reason(folder / f['stored'])}")
                new_passages += passages
                advance(1)
        removed = [d for d in job.get("remove", []) if d]
        if not new_passages and not removed:
            where = f"at {job['web']['url']}" if job.get("web") else "in the uploaded files"
            raise ConvragError(f"no readable text {where}" + (f" ({'; '.join(skipped)})" if skipped else ""))
        replaced = {f["doc_id"] for f in job["files"]} | set(removed)
        built = self.collections.apply(name, job_id, new_passages, replaced, embedder, reporter,
                                       lambda skip: self._stored_passages(name, skip, embedder))
        if built.reread:
            log.warning("indexing job %s: collection %s was damaged; its documents were read again from their files", job_id, name)
        previous = [row for d in replaced if (row := self.store.document(name, d)) is not None]
        self.store.finish_job(job_id, name, self._document_rows(job, new_passages), removed)
        self._remove_old_files(previous)
        if skipped:
            self.store.update_job(job_id, error="skipped " + "; ".join(skipped))
        log.info("indexing job %s: collection %s now %d passage(s) (%d from %d file(s)%s%s) in %.1f s", job_id, name,
                 built.passages, len(new_passages), len(job["files"]),
                 f", {len(removed)} document(s) removed" if removed else "", f", {len(skipped)} skipped" if skipped else "",
                 time.monotonic() - began)
        self.on_change(name)

    def _bring_in_indexed(self, job: dict[str, Any], embedder: Embedder, reporter: JobReporter, began: float) -> None:
        """What ``convrag index`` built of the collection in place of the documents taken on before;
        documents uploaded to the service stay, and one uploaded under the id of an indexed one wins.
        Passages the collection holds already keep their vectors; changed and new ones are embedded."""
        job_id, name = job["id"], job["collection"]
        with reporter.stage("reading what convrag index built", total=None):
            model, passages = self.collections.indexed_passages(name)
        if model != embedder.name:
            raise ConvragError(f"`convrag index` built {name!r} with {model or 'no dense index'}; this collection holds "
                               f"{embedder.name} vectors: index it again with --embedding-model {embedder.name}")
        rows = self.store.documents(name)
        uploaded = {row["doc_id"] for row in rows if row["uploaded"]}
        before = {row["doc_id"] for row in rows if not row["uploaded"]}
        new = [p for p in passages if document_of(p.doc_id) not in uploaded]
        documents = indexed_documents(new)
        now = {d["doc_id"] for d in documents}
        built = self.collections.apply(name, job_id, new, before | now, embedder, reporter,
                                       lambda skip: self._stored_passages(name, skip, embedder))
        removed = sorted(before - now)
        self.store.finish_job(job_id, name, documents, removed)
        log.info("indexing job %s: collection %s now %d passage(s), %d document(s) from convrag index (%d gone) in %.1f s",
                 job_id, name, built.passages, len(documents), len(removed), time.monotonic() - began)
        self.on_change(name)

    def _fetched(self, job: dict[str, Any], reporter: JobReporter, skipped: list[str]) -> dict[str, Any]:
        """A web job with its pages fetched (:func:`convrag.ingest.web.fetch_pages`) into its folder, as
        an upload's files are stored, each with the address it came from (its citations link there, and a
        repair reads it again from the file), recorded as the job's files. What was not fetched is
        added to ``skipped``. Each page's id is its host and path (``docs.example.org/guide/install``):
        fetching the same pages again replaces them. A crawl asked to ``replace`` removes the pages
        read before from under its address that it no longer finds (gone from the site, no longer linked,
        disallowed), unless it stopped at its bound or could not fetch a page for a reason that may pass
        (an outage would otherwise empty the collection of the site)."""
        from ..ingest.web import CrawlReport, fetch_pages, is_address, site_doc_id

        request = job["web"]
        with self._lock:
            headers = self._headers.pop(job["id"], {})
        if set(request.get("headers", [])) - set(headers):  # unread, the pages would be the site's log-in page
            raise ConvragError(f"the headers sent with this job ({', '.join(request['headers'])}) are not kept across a "
                               "restart of the server: ask for the pages again")
        folder = self.uploads_root / job["id"]
        shutil.rmtree(folder, ignore_errors=True)  # what a fetch cut off by a stop had written
        folder.mkdir(parents=True)
        files, kept = [], 0
        pages = request["max_pages"] if request["crawl"] else 1
        report, bound = CrawlReport(), "max_pages"
        shown = 0
        with reporter.stage(f"fetching {request['url']}" + (" and the pages under it" if request["crawl"] else ""),
                            total=None) as advance:
            def one_more(_: str) -> None:
                """The job's total is the pages fetched and found so far, up to ``max_pages`` ("4/100" said
                nothing of a section of six pages, then jumped to done): written when it changes (a page
                robots.txt turns away leaves the pages found, never fetched)."""
                nonlocal shown
                advance(1)
                known = report.to_fetch(pages)
                if known != shown:
                    shown = known
                    self.store.update_job(job["id"], total=known)

            for number, page in enumerate(fetch_pages(request["url"], skipped, follow=request["crawl"], max_pages=pages,
                                                      advance=one_more, headers=headers,
                                                      public_only=self.public_only, report=report)):
                kept += len(page.body)
                if kept > self.max_web_bytes:
                    skipped.append(f"{page.url} and the pages after it: not kept, the crawl stops at "
                                   f"{self.max_web_bytes:,} bytes (max_web_bytes)")
                    report.cut, bound = True, "max_web_bytes"  # what it did not reach is not known to be gone
                    break
                stored = f"{number:05d}{page.suffix}"
                (folder / stored).write_bytes(page.body)
                files.append({"filename": page.file_name, "original": page.url, "doc_id": site_doc_id(page),
                              "stored": stored, "bytes": len(page.body), "url": page.url, "charset": page.charset})
        gone: list[str] = []
        if request["crawl"] and request.get("replace"):
            if report.whole:
                found = {f["doc_id"] for f in files}
                gone = [d["doc_id"] for d in self.store.documents(job["collection"])
                        if d["doc_id"].startswith(report.section) and is_address(d["original"]) and d["doc_id"] not in found]
            else:
                skipped.append(f"the pages read before from under {request['url']} are kept: the crawl "
                               + (f"stopped at {bound}" if report.cut else f"could not fetch {report.passing} page(s) this time"))
        self.store.update_job(job["id"], files=json.dumps(files), remove=json.dumps(gone) if gone else None)
        return {**job, "files": files, "remove": gone}

    @contextmanager
    def _pages_reported(self, job_id: str, shown: str) -> Iterator[None]:
        """While one file is read: the job's stage says which of its scanned pages OCR is on (at most
        once a second), since a long scan is minutes of one file; then the stage is the files' again."""
        from ..ingest import ocr

        last = [0.0]

        def hear(_: str, done: int, total: int) -> None:  # the file is named as uploaded (``shown``), not as stored
            if time.monotonic() - last[0] >= 1.0 or done == total:
                last[0] = time.monotonic()
                self.store.update_job(job_id, stage=f"reading and chunking documents ({shown}: page {done} of {total} read by OCR)")

        try:
            with ocr.hearing(hear):
                yield
        finally:
            if last[0]:
                self.store.update_job(job_id, stage="reading and chunking documents")

    def _chunked(self, name: str, path: Path, f: dict[str, Any], embedder: Embedder) -> list[Passage]:
        """The passages of one uploaded file, or of a page fetched from the web (read under its address,
        in the charset its server named), as a document of collection ``name``."""
        url = f.get("url") or f"/api/collections/{quote(name)}/documents/{quote(f['doc_id'], safe='')}/file"
        shown = f["filename"] if f.get("url") else f.get("original") or f["filename"]  # a page's "original" is its address
        document = read_document(path, doc_id=f["doc_id"], name=shown, url=url, charset=f.get("charset", ""))
        return chunk_document(document, embedder.tokenizer)

    def _stored_passages(self, name: str, replaced: set[str], embedder: Embedder) -> list[Passage]:
        """The passages of the collection's documents other than ``replaced``, read again from the
        files they were uploaded as (kept until a document is replaced or removed): what repairs a
        collection whose passage file was damaged, where nothing else holds them."""
        passages: list[Passage] = []
        files: dict[str, dict[str, dict[str, Any]]] = {}  # job id -> doc id -> file: each job's list read once
        for row in self.store.documents(name):
            if row["doc_id"] in replaced:
                continue
            if row["job_id"] not in files:
                files[row["job_id"]] = {f["doc_id"]: f for f in (self.store.job(row["job_id"]) or {}).get("files", [])}
            f = files[row["job_id"]].get(row["doc_id"])
            if f is None:  # a document of a collection taken on as `convrag index` made it
                raise ConvragError(f"collection {name!r} is damaged and its document {row['original']!r} was indexed by "
                                   "`convrag index`, not uploaded, so there is no file to read it again from; bring in what "
                                   f"`convrag index` built (POST /api/collections/{name}/take-on, or \"Update from convrag "
                                   "index\" in the web chat), which repairs it")
            stored = self.uploads_root / row["job_id"] / f["stored"]
            if not stored.is_file():
                raise ConvragError(f"collection {name!r} is damaged and the file of its document {row['original']!r} is gone; "
                                   "delete the collection and upload its documents again")
            passages += self._chunked(name, stored, f, embedder)
        return passages

    def _remove_old_files(self, rows: list[dict[str, Any]]) -> None:
        """Delete the stored files of documents that were replaced or removed (after the switch, so a
        crash before it leaves them in place); a job folder left empty goes too."""
        for row in rows:
            job = self.store.job(row["job_id"])
            for f in (job or {}).get("files", []):
                if f["doc_id"] == row["doc_id"]:
                    (self.uploads_root / row["job_id"] / f["stored"]).unlink(missing_ok=True)
            folder = self.uploads_root / row["job_id"]
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()

