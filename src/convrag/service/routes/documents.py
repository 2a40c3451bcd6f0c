"""Documents of a collection: upload (many files), replace one, delete one, list, the source file,
and single passages. Every change is an indexing job (202 + a job to poll): the collection
switches to its new version only when the job has finished."""

import shutil
from typing import Annotated, Any, NamedTuple

from fastapi import APIRouter, Depends, File, HTTPException, Query, Request, UploadFile
from fastapi.responses import FileResponse
from pydantic import AfterValidator, BaseModel, Field, create_model
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor, register_url_convertor
from starlette.datastructures import UploadFile as FormFile

from ...errors import ConvragError
from ..errors import ApiError
from ..links import served_url
from ..settings import Limits
from ..state import ServiceState, get_state
from ..store import new_id
from ..uploads import SNIFF_BYTES, UploadError, assign_doc_ids, check_content, file_part, inside, original_name, safe_filename
from .common import job_info, require_collection

Staged = tuple[UploadFile, str, str]  # the upload, the user's name, the safe file name


class Refused(NamedTuple):
    """A file of an upload that the early checks left out: its name, and why (an :class:`UploadError`'s)."""

    file: str
    code: str
    message: str


def _prepare(files: list[UploadFile], skip_refused: bool = False) -> tuple[list[Staged], list[Refused]]:
    """Names and early content checks for every file, before anything is written. A file that fails
    them refuses the whole upload, unless ``skip_refused``: then it is left out and returned with its
    reason, as ``convrag index`` leaves out a folder's unreadable files. One empty file or one
    picture named .pdf in a folder of five hundred had refused the folder. An upload of nothing but
    such files is refused still."""
    staged: list[Staged] = []
    refused: list[Refused] = []
    first: UploadError | None = None
    seen: set[str] = set()
    for upload in files:
        original = original_name(upload.filename or "")
        try:
            safe = safe_filename(original)
            if original in seen:
                raise UploadError(f"{original!r} appears twice in this upload")
            seen.add(original)
            head = upload.file.read(SNIFF_BYTES)
            upload.file.seek(0)
            size = upload.size if upload.size is not None else len(head)
            check_content(original, head, size)
        except UploadError as exc:
            if not skip_refused:
                raise ApiError(exc.status, str(exc), exc.code) from None
            first = first or exc
            refused.append(Refused(original, exc.code, str(exc)))
            continue
        staged.append((upload, original, safe))
    if first is not None and not staged:
        reasons = "; ".join(r.message for r in refused[:5]) + (f"; and {len(refused) - 5} more" if len(refused) > 5 else "")
        raise ApiError(first.status, f"no file of this upload can be indexed: {reasons}", first.code,
                       [r._asdict() for r in refused])
    return staged, refused


def _known_names(state: ServiceState, name: str) -> dict[str, str]:
    """doc id -> the user's file name, over stored documents and files of jobs not yet finished."""
    known = {d["doc_id"]: d["original"] for d in state.store.documents(name)}
    for job in state.store.unfinished_jobs():
        if job["collection"] == name:
            known.update({f["doc_id"]: f.get("original") or f["filename"] for f in job["files"]})
    return known


def _stage(state: ServiceState, name: str, staged: list[Staged], doc_ids: dict[str, str],
           remove: list[str] | None = None) -> dict[str, Any]:
    """Write the files under a new job's folder, then queue the job (a failure removes the folder)."""
    folder = state.uploads / f".incoming-{new_id()}"
    folder.mkdir(parents=True)
    files = []
    try:
        for number, (upload, original, safe) in enumerate(staged):
            stored = f"{number:05d}-{safe}"
            with open(inside(folder, stored), "wb") as out:
                size = 0
                while chunk := upload.file.read(1 << 20):
                    size += len(chunk)
                    out.write(chunk)
            files.append({"filename": safe, "original": original, "doc_id": doc_ids[original], "stored": stored, "bytes": size})
        job = state.store.add_job(name, files, remove)
        folder.rename(state.uploads / job["id"])
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    state.indexer.submit(job["id"], name)
    return job_info(job)


#: a web address as the API takes one: http:// or https:// and no white space (no \s, whose members differ
#: between the regex engines of pydantic, of JSON Schema's clients and of Python)
WEB_ADDRESS = r"^[Hh][Tt][Tt][Pp][Ss]?://[^ \t\r\n\f\v]+$"
#: the headers that say how a request is framed or where it goes, which a crawl's client may not set
_FRAMING = frozenset({"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"})


def _not_framing(line: str) -> str:
    name = line.split(":", 1)[0]
    if name.lower() in _FRAMING:  # the pattern leaves no space around a name
        raise ValueError(f"{name} is set by the server for each request")
    return line


#: a request header a client gives for a crawl, as ``convrag index -H`` takes one: "Name: value", the name a
#: token and not one of :data:`_FRAMING`, the value printable ASCII (one httpx refuses would fail the job
#: with an error that quotes it)
HeaderLine = Annotated[str, Field(pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}:[\t\x20-\x7e]{0,8000}$"),
                       AfterValidator(_not_framing)]


def web_source_model(limits: Limits) -> type[BaseModel]:
    """The body of ``POST /collections/{name}/web``, with this service's limit in its schema (so the
    OpenAPI description says what is accepted)."""
    return create_model(
        "WebSource",
        url=(str, Field(..., max_length=2000, pattern=WEB_ADDRESS,
                        description="a web address (http:// or https://) of a page or a file")),
        crawl=(bool, Field(False, description="also read the pages it links to under its folder on the same site, breadth "
                                              "first, one at a time, obeying robots.txt")),
        max_pages=(int, Field(min(100, limits.max_web_pages), ge=1, le=limits.max_web_pages,
                              description="with crawl: the most pages fetched")),
        replace=(bool, Field(False, description="with crawl: the pages read before from under this address that the crawl "
                                                "no longer finds are removed (kept where it stopped at max_pages or could "
                                                "not fetch a page for a reason that may pass)")),
        headers=(list[HeaderLine], Field(
            default_factory=list, max_length=20,
            description="'Name: value' lines sent with each request to the site (an intranet's Authorization or Cookie); "
                        "kept in the server's memory for this job alone, never stored: a job a restart cuts off fails, and "
                        "is asked again")),
    )


class _DocumentId(Convertor[str]):
    """A document's id in a route. It may hold "/" (a page read from the web is named by its host and
    path, a folder's file indexed by ``convrag index`` by its path), so it takes the rest of the path,
    but not a last "/file", which asks for the document's file: a PUT or a DELETE of ``.../file`` is
    a 405, as the API's schema says, unless a document's own id ends so (routes outside the schema,
    ``_ending_in_file``)."""

    regex = r".+(?<!/file)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("document_id", _DocumentId())


def _document(state: ServiceState, name: str, doc_id: str) -> dict[str, Any]:
    row = state.store.document(name, doc_id)
    if row is None:
        raise ApiError(404, f"no document {doc_id!r} in {name!r}", "document_not_found")
    return row


def router(limits: Limits) -> APIRouter:
    api = APIRouter(tags=["documents"])

    @api.post("/collections/{name}/documents", status_code=202, form_limits={"max_files": limits.max_upload_files})
    async def upload_documents(name: str, files: list[UploadFile] = File(..., description="txt, md, rst, html, csv, tsv, pdf, docx, doc, odt, ods, odp, rtf, pptx, ppt, xlsx, xls, epub, eml, msg, tif or zip files"),
                               skip_refused: bool = Query(False, description="leave out the files the early checks refuse "
                                                          "(empty, not the type their suffix says, not text), listed under "
                                                          "'refused', instead of refusing the whole upload"),
                               state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Store the files and start a background job that indexes them; poll ``/api/jobs/{id}``.
        A file with exactly the name of a stored document replaces it; any other file becomes a new
        document (names that clean up alike get distinct ids). A file that cannot be indexed refuses
        the upload (415/422), or with ``skip_refused`` is left out and named under ``refused``."""
        require_collection(state, name)
        staged, refused = _prepare(files, skip_refused)

        def work() -> dict[str, Any]:
            ids = assign_doc_ids([original for _, original, _ in staged], _known_names(state, name))
            return _stage(state, name, staged, ids)

        job = await run_in_threadpool(work)
        return {**job, "refused": [r._asdict() for r in refused]} if skip_refused else job

    WebSource = web_source_model(limits)  # noqa: N806 - a class

    @api.post("/collections/{name}/web", status_code=202)
    def add_from_web(name: str, body: WebSource, state: ServiceState = Depends(get_state)) -> dict[str, Any]:  # type: ignore[valid-type]
        """Read a page or a file from the web into the collection, or with ``crawl`` the pages it links
        to under its folder (as ``convrag index https://... --crawl`` does): a background job that
        fetches them, then indexes them as an upload's files; poll ``/api/jobs/{id}``. Each page is a
        document whose id is its host and path and whose citations link to its address; fetching the
        same pages again replaces them. Only public addresses are read unless the server's
        ``allow_private_web`` is set (403 ``address_not_allowed``)."""
        from ...ingest.web import not_public

        require_collection(state, name)
        if not state.settings.allow_private_web and (refused := not_public(body.url)):
            raise ApiError(403, refused, "address_not_allowed")
        # the headers' names are kept with the job, their values (a token, a cookie) in memory alone
        headers = {key.strip(): value.strip() for key, value in (line.split(":", 1) for line in body.headers)}
        job = state.store.add_job(name, [], source="web", web={"url": body.url.strip(), "crawl": body.crawl,
                                                               "max_pages": body.max_pages, "replace": body.replace,
                                                               "headers": sorted(headers)})
        state.indexer.submit(job["id"], name, headers=headers)
        return job_info(job)

    @api.get("/upload-limits")
    def upload_limits() -> dict[str, int]:
        """How many files and bytes one upload request may carry. The web chat splits a larger folder
        into requests within them (one request over either is refused whole, with a 413)."""
        return {"max_upload_files": limits.max_upload_files, "max_upload_bytes": limits.max_upload_bytes}

    @api.get("/collections/{name}/documents")
    def list_documents(name: str, state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        require_collection(state, name)
        return state.store.documents(name)

    @api.put("/collections/{name}/documents/{doc_id:document_id}", status_code=202)
    async def replace_document(name: str, doc_id: str, file: UploadFile = File(..., description="the new version"),
                               state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Replace one document with a new file (any name); it keeps its id. Returns the job."""
        require_collection(state, name)
        _document(state, name, doc_id)
        staged, _ = _prepare([file])
        return await run_in_threadpool(_stage, state, name, staged, {staged[0][1]: doc_id})

    @api.delete("/collections/{name}/documents/{doc_id:document_id}", status_code=202)
    def delete_document(name: str, doc_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Remove one document and its passages (a job; the collection changes when it ends)."""
        require_collection(state, name)
        _document(state, name, doc_id)
        return _stage(state, name, [], {}, remove=[doc_id])

    @api.get("/collections/{name}/documents/{doc_id:path}/file", response_class=FileResponse)
    def document_file(name: str, doc_id: str, state: ServiceState = Depends(get_state)) -> FileResponse:
        """The uploaded file itself (the source a citation points to), or the page fetched from the web as
        it was read; served as a download. A document's id may hold "/" (a page's path, a folder's file
        indexed by ``convrag index``), and end in "/file" itself: this route takes all of the path but
        its last "/file" as the id."""
        require_collection(state, name)
        row = state.store.document(name, doc_id)
        job = state.store.job(row["job_id"]) if row else None
        file = next((f for f in (job or {}).get("files", []) if f["doc_id"] == doc_id), None)
        if row is None:
            raise ApiError(404, f"no document {doc_id!r} in {name!r}", "document_not_found")
        if file is None:  # a document of a collection taken on as `convrag index` made it
            raise ApiError(404, f"document {doc_id!r} of {name!r} was indexed by `convrag index`, not uploaded: "
                                "the service has no file of it", "no_uploaded_file")
        path = inside(state.uploads / row["job_id"], file["stored"])
        # a page's own name ("fees.html"; "index.html" for a folder's), not its address's last part
        filename = file["filename"] if file.get("url") else file_part(row["original"])
        return FileResponse(path, filename=filename, content_disposition_type="attachment")

    def _ending_in_file(state: ServiceState, name: str, doc_id: str) -> str:
        """The id of a document that itself ends in "/file" (a page at ``.../guide/file.html`` is
        ``host/docs/guide/file``), which the documented PUT and DELETE routes cannot take: their
        ``.../file`` is the download's, a 405 to them. Where the collection holds such a document,
        a PUT or DELETE of its path is about it; where not, the 405 it was."""
        require_collection(state, name)
        if state.store.document(name, f"{doc_id}/file") is None:
            raise HTTPException(405, "Method Not Allowed")
        return f"{doc_id}/file"

    @api.put("/collections/{name}/documents/{doc_id:path}/file", status_code=202, include_in_schema=False)
    async def replace_document_ending_in_file(name: str, doc_id: str, request: Request,
                                              state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        full = _ending_in_file(state, name, doc_id)
        upload = (await request.form(max_files=1)).get("file")
        if not isinstance(upload, FormFile):
            raise ApiError(422, "body.file: Field required", "invalid_request")
        return await replace_document(name, full, upload, state)  # type: ignore[arg-type]

    @api.delete("/collections/{name}/documents/{doc_id:path}/file", status_code=202, include_in_schema=False)
    def delete_document_ending_in_file(name: str, doc_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        return delete_document(name, _ending_in_file(state, name, doc_id), state)

    @api.get("/collections/{name}/passages/{passage_id:path}")
    def passage(name: str, passage_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        require_collection(state, name)
        try:
            p = state.collections.passage(name, passage_id)
        except (ConvragError, OSError):
            raise ApiError(404, f"collection {name!r} cannot be read", "passage_not_found") from None
        if p is None:
            raise ApiError(404, f"no passage {passage_id!r} in {name!r}", "passage_not_found")
        return {"collection": name, "passage_id": p.doc_id, "title": p.title, "url": served_url(p.url), "text": p.text}

    return api
