"""Document management, conversation management, model failures and browser protections, against a
real uvicorn server on 127.0.0.1 with real collections and embeddings (scripted answers)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx
import pytest

from convrag.data.messages import read_history
from convrag.embeddings import load_embedder
from convrag.llm.base import LLMError
from convrag.service import ServiceSettings
from convrag.service.store import ConversationChanged, Store
from convrag.types import Message
from tests.helpers import HeldLLM, ScriptedLLM, Served, StreamingScriptedLLM, upload

from .conftest import ThreadServer, wait_job

PASSPORT = b"# Passport renewal\n\nRenewing an adult passport by mail costs 130 dollars.\n"
FISHING = b"# Fishing\n\nA yearly fishing license costs 25 dollars for residents.\n"


def serve(tmp_path: Path, llm: ScriptedLLM, **settings: object) -> ThreadServer:
    return ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc", **settings), llm)


@pytest.fixture
def running(tmp_path: Path):  # type: ignore[no-untyped-def]
    llm = StreamingScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."] * 6)
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        yield server, client, llm


def search(client: httpx.Client, query: str, k: int = 5) -> list[dict]:
    return client.post("/api/search", json={"collections": ["gov"], "query": query, "k": k}).json()["hits"]


def test_distinct_names_stay_distinct_documents(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    files = [("日本.md", "# 日本\n\nTokyo is the capital of Japan.".encode()), ("中国.md", "# 中国\n\nBeijing is the capital.".encode()),
             ("a b.md", b"# Boats\n\nBoats float on water."), ("a_b.md", b"# Bikes\n\nBikes have two wheels."),
             ("a?b.md", b"# Birds\n\nBirds can fly.")]
    assert upload(client, "gov", files)["status"] == "succeeded"
    docs = {d["original"]: d["doc_id"] for d in client.get("/api/collections/gov/documents").json()}
    assert docs == {"日本.md": "日本", "中国.md": "中国", "a b.md": "a b", "a_b.md": "a_b", "a?b.md": "a_b-2"}
    # the same user name replaces exactly that document
    assert upload(client, "gov", [("a b.md", b"# Boats\n\nBoats now fly too.")])["status"] == "succeeded"
    after = client.get("/api/collections/gov/documents").json()
    assert len(after) == 5 and client.get("/api/collections/gov").json()["passages"] == 5
    assert "Boats now fly" in client.get(f"/api/collections/gov/documents/{'a b'}/file").text
    assert client.get("/api/collections/gov/documents/%E6%97%A5%E6%9C%AC/file").content.decode().startswith("# 日本")


def test_a_sites_pages_are_fetched_indexed_and_cited_by_their_addresses(tmp_path: Path, served: Served) -> None:
    """``POST .../web`` reads a page, or a site's section, into a collection as ``convrag index https://...
    --crawl`` does: a job fetches the pages and keeps them as an upload's files, each a document named by
    its host and path whose citations link to the page; what was not read is the job's warning. Fetching a
    page again replaces its document; a collection whose passages are lost reads the pages again from
    their files, under their addresses still."""
    site, host = served.address, served.address.split("//", 1)[1]
    llm = StreamingScriptedLLM(answer=["A mooring costs 40 dollars a night [1]."])
    with serve(tmp_path, llm, allow_private_web=True) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "harbour"})
        job = client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True}).json()
        assert job["source"] == "web" and job["web"] == {"url": f"{site}/docs/", "crawl": True, "max_pages": 100, "replace": False,
                                                         "headers": []}
        done = wait_job(client, job["id"])
        assert done["status"] == "succeeded", done
        assert f"{site}/docs/private/keys.html: disallowed by the site's robots.txt" in done["warning"]
        documents = {d["doc_id"]: d["original"] for d in client.get("/api/collections/harbour/documents").json()}
        assert documents == {f"{host}/docs/index": f"{site}/docs/", f"{host}/docs/guide/fees": f"{site}/docs/guide/fees.html",
                             f"{host}/docs/guide/winter": f"{site}/docs/guide/winter.html",
                             f"{host}/docs/manual.pdf": f"{site}/docs/manual.pdf"}
        hits = client.post("/api/search", json={"collections": ["harbour"], "query": "What does a mooring cost a night?",
                                                "k": 1}).json()["hits"]
        assert hits[0]["document_id"] == f"{host}/docs/guide/fees" and hits[0]["url"] == f"{site}/docs/guide/fees.html"
        answer = client.post("/api/conversations", json={"collections": ["harbour"]}).json()
        turn = client.post(f"/api/conversations/{answer['id']}/messages", json={"question": "What does a mooring cost?"}).json()
        assert turn["citations"][0]["url"] == f"{site}/docs/guide/fees.html"
        (served.root / "docs" / "guide" / "fees.html").write_text("<title>Fees</title><p>A mooring now costs 45 dollars a night.</p>")
        again = wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/guide/fees.html"}).json()["id"])
        assert again["status"] == "succeeded" and [f["doc_id"] for f in again["files"]] == [f"{host}/docs/guide/fees"]
        assert len(client.get("/api/collections/harbour/documents").json()) == 4
        got = client.get(f"/api/collections/harbour/documents/{host}%2Fdocs%2Fguide%2Ffees/file")  # an id holding "/"
        assert "45 dollars" in got.text and 'filename="fees.html"' in got.headers["content-disposition"]
        removed = client.delete(f"/api/collections/harbour/documents/{host}/docs/manual.pdf").json()
        assert wait_job(client, removed["id"])["status"] == "succeeded"
        assert len(client.get("/api/collections/harbour/documents").json()) == 3
        passages = server.app.state.convrag.indexer._stored_passages("harbour", set(), load_embedder("all-MiniLM-L6-v2"))
        assert {p.url for p in passages if p.doc_id.startswith(f"{host}/docs/guide/fees")} == {f"{site}/docs/guide/fees.html"}


def test_a_document_whose_id_ends_in_file_is_replaced_deleted_and_downloaded(tmp_path: Path, served: Served) -> None:
    """A page at ``.../guide/file.html`` is the document ``host/docs/guide/file``: its PUT and DELETE were
    405s (the id's last "/file" was taken for the download's route, which only GETs), so it could be
    neither replaced nor removed, and its own file could not be downloaded. Where no document's id ends
    so, a PUT or DELETE of a download's path is the 405 the API's schema says."""
    site, host = served.address, served.address.split("//", 1)[1]
    (served.root / "docs" / "guide" / "file.html").write_text("<title>File a claim</title><p>Claims are filed at the office.</p>")
    with serve(tmp_path, StreamingScriptedLLM(answer=[]), allow_private_web=True) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "harbour"})
        for page in ("file.html", "fees.html"):
            job = client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/guide/{page}"}).json()
            assert wait_job(client, job["id"])["status"] == "succeeded"
        doc = f"{host}/docs/guide/file"
        got = client.get(f"/api/collections/harbour/documents/{doc}/file")
        assert got.status_code == 200 and "Claims are filed" in got.text
        assert "A mooring costs" in client.get(f"/api/collections/harbour/documents/{host}/docs/guide/fees/file").text
        replaced = client.put(f"/api/collections/harbour/documents/{doc}", files={"file": ("claims.md", b"# Claims\n\nFile claims online.")})
        assert replaced.status_code == 202, replaced.text
        assert wait_job(client, replaced.json()["id"])["status"] == "succeeded"
        assert "File claims online" in client.get(f"/api/collections/harbour/documents/{doc}/file").text
        removed = client.delete(f"/api/collections/harbour/documents/{doc}")
        assert removed.status_code == 202 and wait_job(client, removed.json()["id"])["status"] == "succeeded"
        assert [d["doc_id"] for d in client.get("/api/collections/harbour/documents").json()] == [f"{host}/docs/guide/fees"]
        refused = client.delete(f"/api/collections/harbour/documents/{host}/docs/guide/fees/file")  # the download's path
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"


def test_a_crawls_progress_counts_the_pages_found_not_its_bound(tmp_path: Path, served: Served) -> None:
    """A crawl's job showed "4/100" (the request's max_pages) for a section of a few pages, then jumped to
    done; its total is now the pages fetched and found so far, up to the bound."""
    with serve(tmp_path, StreamingScriptedLLM(answer=[]), allow_private_web=True) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        store = server.app.state.convrag.indexer.store
        totals: list[int] = []
        update = store.update_job

        def recorded(job_id: str, **fields: object) -> None:
            stage = fields.get("stage") or store.job(job_id).get("stage", "")
            if fields.get("total") and str(stage).startswith("fetching"):  # 0 is "not known yet"
                totals.append(int(fields["total"]))  # type: ignore[call-overload]
            update(job_id, **fields)

        store.update_job = recorded  # type: ignore[method-assign]
        client.post("/api/collections", json={"name": "harbour"})
        job = client.post("/api/collections/harbour/web", json={"url": f"{served.address}/docs/", "crawl": True}).json()
        assert wait_job(client, job["id"])["status"] == "succeeded"
        fetched = sum(path.startswith("/docs/") for path, _, _ in served.requests)
        assert totals and max(totals) <= fetched + 1 < 100  # + the page robots.txt turns away; never the bound of 100
        assert totals[0] == 1 and max(totals) > 1  # the start page, then the pages it links to


def test_reading_a_site_again_can_remove_the_pages_gone_from_it_but_not_after_a_partial_crawl(tmp_path: Path, served: Served) -> None:
    """A docs site read again with ``replace`` mirrors it: a page deleted from the site (404) or no longer
    linked goes from the collection, the section's other pages and the collection's uploads stay. A crawl
    cut short by its bound removes nothing and says so: what it did not reach is not known to be gone."""
    site, host = served.address, served.address.split("//", 1)[1]
    with serve(tmp_path, StreamingScriptedLLM(answer=[]), allow_private_web=True) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "harbour"})
        assert upload(client, "harbour", [("passports.md", PASSPORT)])["status"] == "succeeded"
        assert wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True}).json()["id"])[
            "status"] == "succeeded"
        ids = lambda: sorted(d["doc_id"] for d in client.get("/api/collections/harbour/documents").json())  # noqa: E731
        assert len(ids()) == 5
        (served.root / "docs" / "guide" / "winter.html").unlink()
        cut = wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True, "max_pages": 1,
                                                                                 "replace": True}).json()["id"])
        assert cut["status"] == "succeeded" and cut["remove"] == [] and len(ids()) == 5
        assert f"the pages read before from under {site}/docs/ are kept: the crawl stopped at max_pages" in cut["warning"]
        whole = wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True,
                                                                                   "replace": True}).json()["id"])
        assert whole["status"] == "succeeded" and whole["remove"] == [f"{host}/docs/guide/winter"]
        assert ids() == sorted([f"{host}/docs/index", f"{host}/docs/guide/fees", f"{host}/docs/manual.pdf", "passports"])


def test_a_crawl_stops_at_the_bytes_a_server_keeps_for_it_and_removes_nothing_then(tmp_path: Path, served: Served) -> None:
    """An upload is bounded by max_upload_bytes; a crawl of 500 pages of 50 MB each was bounded by nothing, and
    could fill the server's disk. It stops at max_web_bytes, says so, and, cut short, removes no page."""
    site = served.address
    with serve(tmp_path, StreamingScriptedLLM(answer=[]), allow_private_web=True, limits={"max_web_bytes": 3000}) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "harbour"})
        first = wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True}).json()["id"])
        assert first["status"] == "succeeded" and len(first["files"]) == 3  # the pages; the PDF is 80 KB
        assert (f"{site}/docs/manual.pdf and the pages after it: not kept, the crawl stops at 3,000 bytes (max_web_bytes)"
                in first["warning"])
        (served.root / "docs" / "guide" / "winter.html").unlink()
        again = wait_job(client, client.post("/api/collections/harbour/web", json={"url": f"{site}/docs/", "crawl": True,
                                                                                   "replace": True}).json()["id"])
        assert again["remove"] == [] and f"the pages read before from under {site}/docs/ are kept: the crawl stopped at " \
                                          "max_web_bytes" in again["warning"]
        assert len(client.get("/api/collections/harbour/documents").json()) == 3


def test_a_crawls_headers_reach_the_site_alone_and_are_never_stored(tmp_path: Path, served: Served) -> None:
    """An intranet's wiki wants a token or a cookie: the headers a request gives go with each request to the
    site, and nowhere is their value written down (the database, the job's JSON, the logs' folder): the
    job keeps their names, and one a restart cut off fails rather than index the site's log-in page."""
    site = served.address
    with serve(tmp_path, StreamingScriptedLLM(answer=[]), allow_private_web=True) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "wiki"})
        job = client.post("/api/collections/wiki/web", json={"url": f"{site}/docs/", "crawl": True,
                                                             "headers": ["Authorization: Bearer s3cret-token"]}).json()
        assert job["web"]["headers"] == ["Authorization"]
        assert wait_job(client, job["id"])["status"] == "succeeded"
        assert served.requests and {auth for _, _, auth in served.requests} == {"Bearer s3cret-token"}
        assert "s3cret-token" not in client.get("/api/jobs").text
        assert not [p for p in tmp_path.rglob("*") if p.is_file() and b"s3cret-token" in p.read_bytes()]
        framing = client.post("/api/collections/wiki/web", json={"url": f"{site}/docs/", "headers": ["Host: intranet"]})
        broken = client.post("/api/collections/wiki/web", json={"url": f"{site}/docs/", "headers": ["Cookie: a\nb"]})
        assert framing.status_code == 422 and broken.status_code == 422 and "a\nb" not in broken.text


def test_a_web_address_that_is_not_public_is_refused_unless_the_server_allows_it(running, served: Served) -> None:  # type: ignore[no-untyped-def]
    """The server fetches what a user of its API names, so by default it reads only public addresses: a
    page on its own localhost, an intranet or a cloud's metadata service is refused before a job."""
    _, client, _ = running
    refused = client.post("/api/collections/gov/web", json={"url": f"{served.address}/docs/"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "address_not_allowed"
    assert "not a public address" in refused.json()["detail"] and served.requests == []
    assert client.post("/api/collections/gov/web", json={"url": "file:///etc/passwd"}).status_code == 422
    too_many = client.post("/api/collections/gov/web", json={"url": "https://example.com/", "crawl": True, "max_pages": 501})
    assert too_many.status_code == 422 and "max_pages" in too_many.json()["detail"]
    assert client.put("/api/collections/gov/documents/fees/file", files={"file": ("a.md", b"x")}).status_code == 405
    assert client.post("/api/collections/nope/web", json={"url": "https://example.com/"}).status_code == 404
    assert client.get("/api/jobs").json() == []


def test_a_folders_files_keep_their_paths_so_same_names_stay_apart(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A documentation folder holds an index.md in each of its folders. Uploaded whole (the web page
    sends each file's path in the folder), the upload named "index.md" twice and was refused; now
    each keeps its path, and one uploaded again replaces its own. A client's absolute local path is
    cut to the file's name, and no path places a stored file outside the upload folder."""
    _, client, _ = running
    files = [("docs/boats/index.md", b"# Boats\n\nBoats pay 5 dollars a night."),
             ("docs/kayaks/index.md", b"# Kayaks\n\nKayaks pay 2 dollars a night."),
             ("/home/ann/Desktop/fees.md", b"# Fees\n\nFees are due on arrival."), ("../../../etc/notes.md", b"# Notes\n\nBe kind.")]
    assert upload(client, "gov", files)["status"] == "succeeded"
    docs = {d["original"]: d["doc_id"] for d in client.get("/api/collections/gov/documents").json()}
    assert docs == {"docs/boats/index.md": "index", "docs/kayaks/index.md": "index-2", "fees.md": "fees", "etc/notes.md": "notes"}
    assert upload(client, "gov", [("docs/kayaks/index.md", b"# Kayaks\n\nKayaks now pay 3 dollars.")])["status"] == "succeeded"
    assert len(client.get("/api/collections/gov/documents").json()) == 4
    got = client.get("/api/collections/gov/documents/index-2/file")
    assert "3 dollars" in got.text and 'filename="index.md"' in got.headers["content-disposition"]
    assert not [p for p in tmp_path.rglob("*") if p.name in ("etc", "docs", "boats")]  # stored by their names alone
    refused = client.post("/api/collections/gov/documents", files=[("files", ("a/x.md", b"# X\n\nx")), ("files", ("a/x.md", b"# X\n\ny"))])
    assert refused.status_code == 400 and "'a/x.md' appears twice" in refused.json()["error"]["message"]


def test_word_and_excel_97_2003_files_are_uploaded_and_searched(running) -> None:  # type: ignore[no-untyped-def]
    """A .doc or .xls upload was refused, "unsupported file type"."""
    _, client, _ = running
    made = Path(__file__).parent.parent / "ingest" / "made_by_libreoffice"
    files = [(name, (made / name).read_bytes()) for name in ("heatpump-manual.doc", "harbour-prices.xls")]
    assert upload(client, "gov", files)["status"] == "succeeded"
    titles = {d["doc_id"]: d["title"] for d in client.get("/api/collections/gov/documents").json()}
    assert titles == {"heatpump-manual": "Solenne HX-9 Air-to-Water Heat Pump: Owner\u2019s Manual", "harbour-prices": "harbour prices"}
    assert "magnetic filter" in search(client, "How often should the magnetic filter be cleaned?", 1)[0]["text"]
    assert "Plan: Standard | Price: 12.5" in search(client, "price of the Standard plan", 1)[0]["text"]


def test_delete_and_replace_single_documents(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    upload(client, "gov", [("passports.md", PASSPORT), ("fishing.md", FISHING)])
    uploads = tmp_path / "svc" / "uploads"
    stored_before = {p.name for p in uploads.rglob("*.md")}
    # replace: any file name, the document keeps its id
    job = client.put("/api/collections/gov/documents/passports", files={"file": ("renewal-2026.md", b"# Passports\n\nIt now costs 165 dollars.")})
    assert job.status_code == 202 and wait_job(client, job.json()["id"])["status"] == "succeeded"
    docs = {d["doc_id"]: d for d in client.get("/api/collections/gov/documents").json()}
    assert set(docs) == {"passports", "fishing"} and docs["passports"]["original"] == "renewal-2026.md"
    assert "165 dollars" in search(client, "passport cost", 1)[0]["text"]
    assert not any(name.endswith("passports.md") for name in {p.name for p in uploads.rglob("*.md")})  # old file gone
    assert any(name.endswith("fishing.md") for name in stored_before)
    # delete one document: its passages and its file go, the other stays
    job = client.delete("/api/collections/gov/documents/fishing")
    assert job.status_code == 202 and wait_job(client, job.json()["id"])["status"] == "succeeded"
    assert [d["doc_id"] for d in client.get("/api/collections/gov/documents").json()] == ["passports"]
    assert all(h["document_id"] == "passports" for h in search(client, "fishing license"))
    assert client.get("/api/collections/gov/documents/fishing/file").status_code == 404
    # deleting the last document leaves an empty collection, not a broken one
    wait_job(client, client.delete("/api/collections/gov/documents/passports").json()["id"])
    info = client.get("/api/collections/gov").json()
    assert info["documents"] == 0 and info["passages"] == 0 and info["version"] is None
    assert search(client, "passport") == []
    assert upload(client, "gov", [("fishing.md", FISHING)])["status"] == "succeeded"  # and it can be filled again


def test_files_that_cannot_be_indexed_are_refused_before_a_job(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    for name, data, status, code in [("empty.md", b"", 422, "empty_file"), ("fake.pdf", b"just text", 415, "not_a_pdf"),
                                     ("image.txt", b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00" * 20, 415, "not_text")]:
        response = client.post("/api/collections/gov/documents", files=[("files", (name, data))])
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    assert client.get("/api/jobs").json() == []


def test_a_word_document_is_uploaded_searched_and_cited(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import docx

    _, client, _ = running
    word = docx.Document()
    word.add_heading("Fishing licences", 1)
    table = word.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Licence", (0, 1): "Yearly fee"}.items():
        table.cell(row, col).text = text
    table.cell(1, 0).text, table.cell(1, 1).text = "Residents", "25 dollars"
    word.save(tmp_path / "licences.docx")
    job = upload(client, "gov", [("licences.docx", (tmp_path / "licences.docx").read_bytes())])
    assert job["status"] == "succeeded", job
    hit = search(client, "yearly fee for residents", 1)[0]
    assert hit["title"] == "Fishing licences" and "Residents | 25 dollars" in hit["text"]
    original = client.get(f"/api/collections/gov/documents/{hit['document_id']}/file")
    assert original.content == (tmp_path / "licences.docx").read_bytes()


def test_an_uploaded_document_s_passages_are_titled_by_their_sections_and_it_by_its_own(running) -> None:  # type: ignore[no-untyped-def]
    """A passage of an upload that begins inside a section is titled by it (what a search shows and a
    citation names); the document is still listed under its own title, not its last passage's."""
    _, client, _ = running
    filler = " ".join(f"Rule {i} of the pier says boats keep their lines coiled and tidy." for i in range(40))
    markdown = f"# Pier rules\n\n## Mooring\n\n{filler}\n\n## Fuel\n\n{filler} Diesel is sold from 6am to 9pm at the pump.\n"
    job = upload(client, "gov", [("pier.md", markdown.encode())])
    assert job["status"] == "succeeded", job
    hit = search(client, "diesel hours at the pump", 1)[0]
    assert hit["title"] == "Pier rules \u203a Fuel" and "from 6am to 9pm" in hit["text"]
    listed = [d for d in client.get("/api/collections/gov/documents").json() if d["doc_id"] == hit["document_id"]]
    assert listed[0]["title"] == "Pier rules" and listed[0]["passages"] > 1


def test_text_saved_in_a_windows_encoding_is_indexed_as_text(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    files = [("licence.txt", "Fishing licence: 25 € for résidents of the county.".encode("cp1252")),
             ("renewal.txt", "Passport renewal by mail costs 130 dollars.".encode("utf-16"))]
    assert upload(client, "gov", files)["status"] == "succeeded"
    assert "25 € for résidents" in search(client, "fishing licence", 1)[0]["text"]
    assert "130 dollars" in search(client, "passport renewal", 1)[0]["text"]


def test_job_errors_name_the_file_not_server_paths(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    job = upload(client, "gov", [("broken.pdf", b"%PDF-1.4 not really a pdf")])
    assert job["status"] == "failed" and "broken.pdf" in job["error"]
    assert str(tmp_path) not in job["error"] and "/uploads/" not in job["error"]


def test_deleting_a_collection_removes_its_uploads(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    upload(client, "gov", [("passports.md", PASSPORT)])
    uploads = tmp_path / "svc" / "uploads"
    assert any(uploads.iterdir())
    assert client.delete("/api/collections/gov").status_code == 204
    assert list(uploads.iterdir()) == [] and client.get("/api/jobs").json() == []


def test_a_conversation_over_a_deleted_collection_says_so_and_keeps_its_turns(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    upload(client, "gov", [("passports.md", PASSPORT)])
    conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
    assert client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does renewal by mail cost?"}).status_code == 200
    assert client.delete("/api/collections/gov").status_code == 204
    for path, body in (("messages", {"question": "And for children?"}), ("messages", {"question": "And for children?", "stream": True}),
                       ("regenerate", {})):
        refused = client.post(f"/api/conversations/{conv['id']}/{path}", json=body)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "collection_deleted", (path, refused.text)
        assert "'gov'" in refused.json()["error"]["message"]
    turns = client.get(f"/api/conversations/{conv['id']}").json()["turns"]
    assert len(turns) == 1 and not turns[0]["declined"]  # the answer given before the delete is kept
    assert client.post("/api/collections", json={"name": "gov"}).status_code == 201  # the same name: another collection
    upload(client, "gov", [("passports.md", PASSPORT)])
    refused = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "And for children?"})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "collection_deleted", refused.text
    fresh = client.post("/api/conversations", json={"collections": ["gov"]}).json()
    assert client.post(f"/api/conversations/{fresh['id']}/messages", json={"question": "And for children?"}).status_code == 200


def test_a_conversation_s_collections_can_be_changed_for_its_next_questions(tmp_path: Path) -> None:
    """A knowledge base could not be added to (or taken from) a conversation: its collections were
    fixed when it was created, so the user had to start over and lose the context."""
    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1].", "A fishing license costs 25 dollars a year [1]."])
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        for name, files in (("gov", [("passports.md", PASSPORT)]), ("fish", [("fishing.md", FISHING)])):
            client.post("/api/collections", json={"name": name})
            upload(client, name, files)
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        first = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal cost?"}).json()
        assert set(first["trace"]["search"]["seconds"]) == {"gov"}
        changed = client.patch(f"/api/conversations/{conv['id']}", json={"collections": ["gov", "fish", "gov"]}).json()
        assert changed["collections"] == ["gov", "fish"] and changed["title"] == "How much does passport renewal cost?"
        second = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "And a yearly fishing license?"}).json()
        # both were looked at (routing kept the one that bears on the question), and the answer cites the new one
        assert set(second["trace"]["routing"]["scores"]) == {"gov", "fish"} and second["citations"][0]["collection"] == "fish"
        turns = client.get(f"/api/conversations/{conv['id']}").json()["turns"]
        assert turns[0]["citations"] == first["citations"]  # the earlier turn keeps what it was answered from
        assert client.patch(f"/api/conversations/{conv['id']}", json={}).json()["collections"] == ["gov", "fish"]  # nothing changed
        for body, status, code in (({"collections": []}, 422, "invalid_request"),
                                   ({"collections": ["gov", "missing"]}, 404, "collection_not_found")):
            refused = client.patch(f"/api/conversations/{conv['id']}", json=body)
            assert refused.status_code == status and refused.json()["error"]["code"] == code, body
        assert client.get(f"/api/conversations/{conv['id']}").json()["collections"] == ["gov", "fish"]
        missing = client.patch("/api/conversations/nope", json={"collections": ["gov"]})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "conversation_not_found"


def test_a_conversation_s_strategy_can_be_changed_for_its_next_questions(tmp_path: Path) -> None:
    """A conversation kept the strategy it was created with: trying another one on the same
    conversation (the web chat's strategy choice) meant starting over."""
    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1].", "Renewal by mail costs 130 dollars [1]."])
    (tmp_path / "planted.py").write_text("raise SystemExit('a client made the server import this')\n")
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        assert conv["strategy"] == "progressive"
        first = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal cost?"}).json()
        changed = client.patch(f"/api/conversations/{conv['id']}", json={"strategy": "last_turn"}).json()
        assert changed["strategy"] == "last_turn" and changed["collections"] == ["gov"] and changed["title"] == "How much does passport renewal cost?"
        second = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much by mail?"}).json()
        assert first["trace"]["strategy"]["strategy"] == "progressive" and second["trace"]["strategy"]["strategy"] == "last_turn"
        turns = client.get(f"/api/conversations/{conv['id']}").json()["turns"]
        assert turns[0]["trace"]["strategy"]["strategy"] == "progressive"  # the earlier turn keeps its decisions
        for strategy in ("no_such_strategy", f"{tmp_path / 'planted.py'}:Planted", "os:system"):
            refused = client.patch(f"/api/conversations/{conv['id']}", json={"strategy": strategy})
            assert refused.status_code == 422 and refused.json()["error"]["code"] == "unknown_strategy", strategy
        assert client.patch(f"/api/conversations/{conv['id']}", json={"strategy": ""}).status_code == 422
        assert client.get(f"/api/conversations/{conv['id']}").json()["strategy"] == "last_turn"
        assert client.get("/api/health").status_code == 200  # the planted file never ran


def test_model_failure_is_503_and_nothing_is_stored(tmp_path: Path) -> None:
    secret = "http://10.9.8.7:9999/v1 connection refused"
    llm = ScriptedLLM(answer=[LLMError(secret), LLMError(secret), "Renewal costs 130 dollars [1]."])
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        question = "How much does passport renewal by mail cost?"
        reply = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": [{"role": "user", "content": question}]})
        assert reply.status_code == 503 and reply.json()["error"]["code"] == "llm_unavailable"
        assert "10.9.8.7" not in reply.text and reply.headers["retry-after"]
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        failed = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": question})
        assert failed.status_code == 503 and "10.9.8.7" not in failed.text
        assert client.get(f"/api/conversations/{conv['id']}").json()["turns"] == []  # no failure stored as an answer
        retry = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": question})
        assert retry.status_code == 200 and retry.json()["answer"] == "Renewal costs 130 dollars [1]."


def test_a_prompt_the_model_cannot_read_at_once_is_413_not_try_again(tmp_path: Path) -> None:
    """A question too long for the model's context (where an operator raised max_question_chars) was
    a 503 "could not answer; try again" with Retry-After, and asking again fails alike."""
    from convrag.llm.base import PromptTooLong

    too_long = PromptTooLong("http://10.9.8.7:9999/v1 (m): BadRequestError: context_length_exceeded")
    with serve(tmp_path, ScriptedLLM(answer=[too_long, too_long])) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        question = "How much does passport renewal by mail cost?"
        reply = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": [{"role": "user", "content": question}]})
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": question})
        for refused in (reply, turn):
            assert refused.status_code == 413 and refused.json()["error"]["code"] == "prompt_too_long"
            assert "fewer words" in refused.json()["error"]["message"] and "10.9.8.7" not in refused.text
            assert "retry-after" not in refused.headers
        assert client.get(f"/api/conversations/{conv['id']}").json()["turns"] == []


def test_a_declined_answer_is_regenerated_under_another_floor(tmp_path: Path) -> None:
    """A turn the gate declined ("best cosine 0.37 < 0.45") could not be answered in that
    conversation; a regenerate may give the floor for its answer alone (the web chat's "Answer anyway")."""
    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
    with serve(tmp_path, llm, decline_below=0.99) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        asked = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does renewal by mail cost?"}).json()
        assert asked["declined"] and asked["trace"]["answer"]["details"]["declined_below"] == 0.99 and llm.requests == []
        for floor, code in ((1.5, "invalid_request"), (-0.1, "invalid_request"), (False, "invalid_request"), ("0", "invalid_request")):
            refused = client.post(f"/api/conversations/{conv['id']}/regenerate", json={"decline_below": floor})
            assert refused.status_code == 422 and refused.json()["error"]["code"] == code
        again = client.post(f"/api/conversations/{conv['id']}/regenerate", json={"decline_below": 0}).json()
        assert not again["declined"] and again["answer"] == "Renewal by mail costs 130 dollars [1]."
        assert llm.decodings[-1].temperature == 0  # the answer under that floor, not another sampled attempt
        turns = client.get(f"/api/conversations/{conv['id']}").json()["turns"]
        assert [t["answer"] for t in turns] == [again["answer"]]
        # the conversation's next turns keep the server's floor
        follow_up = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "What does passport renewal in person cost?"}).json()
        assert follow_up["declined"] and len(llm.requests) == 1
    with serve(tmp_path / "first", ScriptedLLM(), answer="first") as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        server.app.state.convrag.store.add_turn(conv["id"], "Fees?", "Unknown.", True, [], {})
        refused = client.post(f"/api/conversations/{conv['id']}/regenerate", json={"decline_below": 0.3})
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "no_decline_gate"


def test_conversation_rename_stream_regenerate_and_export(running, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, client, llm = running
    upload(client, "gov", [("passports.md", PASSPORT)])
    conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
    streamed = client.post(f"/api/conversations/{conv['id']}/messages",
                           json={"question": "How much does passport renewal by mail cost?", "stream": True})
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [(block.split("\n")[0][7:], json.loads(block.split("\n")[1][6:])) for block in streamed.text.strip().split("\n\n")]
    tokens = [data["text"] for kind, data in events if kind == "token"]
    assert len(tokens) > 3 and "".join(tokens) == "Renewal by mail costs 130 dollars [1]."
    kind, turn = events[-1]
    assert kind == "turn" and turn["idx"] == 0 and turn["citations"][0]["document_id"] == "passports"
    first = client.get(f"/api/conversations/{conv['id']}").json()["turns"][0]
    assert first["answer"] == turn["answer"] and first["created"] > 0
    # regenerate replaces the last answer, keeping its question
    llm.queues["answer"].appendleft("By mail, renewal costs 130 dollars [1].")
    again = client.post(f"/api/conversations/{conv['id']}/regenerate").json()
    turns = client.get(f"/api/conversations/{conv['id']}").json()["turns"]
    assert len(turns) == 1 and turns[0]["answer"] == again["answer"] == "By mail, renewal costs 130 dollars [1]."
    # another attempt, not the greedy answer again (which the completion cache would hand back at once)
    asked, regenerated = llm.decodings[-2], llm.decodings[-1]
    assert asked.temperature == 0 and asked.seed is None
    assert regenerated.temperature > 0 and regenerated.seed is not None
    assert again["trace"]["answer"]["details"]["sampled"] == {"temperature": regenerated.temperature, "seed": regenerated.seed}
    renamed = client.patch(f"/api/conversations/{conv['id']}", json={"title": "Passports"}).json()
    assert renamed["title"] == "Passports"
    markdown = client.get(f"/api/conversations/{conv['id']}/export")
    assert markdown.headers["content-type"].startswith("text/markdown") and "attachment" in markdown.headers["content-disposition"]
    assert markdown.text.startswith("# Passports") and "By mail, renewal costs 130 dollars [1]." in markdown.text
    assert "- [1] Passport renewal — gov" in markdown.text
    exported = client.get(f"/api/conversations/{conv['id']}/export", params={"format": "json"})
    assert exported.json()["turns"][0]["trace"]["strategy"]["final_query"]
    # the export is a history the terminal chat goes on from (convrag chat --history)
    (tmp_path / "export.json").write_bytes(exported.content)
    assert read_history(tmp_path / "export.json") == (Message("user", "How much does passport renewal by mail cost?"),
                                                      Message("agent", "By mail, renewal costs 130 dollars [1]."))


def _ask_in_background(client: httpx.Client, conv_id: str, question: str) -> tuple[threading.Thread, dict]:
    reply: dict = {}
    thread = threading.Thread(target=lambda: reply.update(
        r=client.post(f"/api/conversations/{conv_id}/messages", json={"question": question})))
    thread.start()
    return thread, reply


def test_a_conversation_answers_one_question_at_a_time(tmp_path: Path) -> None:
    llm = HeldLLM(["Renewal by mail costs 130 dollars [1]."] * 3)
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        questions = ["How much does passport renewal by mail cost?", "What does passport renewal by mail cost for adults?",
                     "Is passport renewal by mail 130 dollars?"]
        llm.release.set()
        assert client.post(f"/api/conversations/{conv['id']}/messages", json={"question": questions[0]}).status_code == 200
        llm.release.clear()
        llm.waiting.clear()
        thread, second = _ask_in_background(client, conv["id"], questions[1])
        assert llm.waiting.wait(60)  # the second answer is being written
        for path, body in (("messages", {"question": questions[2]}), ("messages", {"question": questions[2], "stream": True}),
                           ("regenerate", {})):
            refused = client.post(f"/api/conversations/{conv['id']}/{path}", json=body)
            assert refused.status_code == 409 and refused.json()["error"]["code"] == "conversation_busy", (path, refused.text)
        other = client.post("/api/conversations", json={"collections": ["gov"]}).json()  # other conversations go on
        assert client.get(f"/api/conversations/{other['id']}").status_code == 200
        llm.release.set()
        thread.join(60)
        assert second["r"].status_code == 200
        assert [t["question"] for t in client.get(f"/api/conversations/{conv['id']}").json()["turns"]] == questions[:2]
        third = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": questions[2]})  # released
        assert third.status_code == 200
        assert [t["question"] for t in client.get(f"/api/conversations/{conv['id']}").json()["turns"]] == questions


def test_an_answer_to_a_conversation_deleted_meanwhile_is_not_stored(tmp_path: Path) -> None:
    llm = HeldLLM(["Renewal by mail costs 130 dollars [1]."])
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        thread, reply = _ask_in_background(client, conv["id"], "How much does passport renewal by mail cost?")
        assert llm.waiting.wait(60)
        assert client.delete(f"/api/conversations/{conv['id']}").status_code == 204
        llm.release.set()
        thread.join(60)
        assert reply["r"].status_code == 409 and reply["r"].json()["error"]["code"] == "conversation_changed"
        assert client.get(f"/api/conversations/{conv['id']}").status_code == 404
        assert client.get("/api/conversations").json() == []


def test_the_store_refuses_a_turn_written_from_an_older_conversation(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    conv = store.add_conversation("c", ["gov"], "progressive")
    store.add_turn(conv["id"], "q1", "a1", False, [], {}, expected_turns=0)
    for replace_last, expected in ((False, 0), (True, 0), (False, 2)):
        with pytest.raises(ConversationChanged, match="0 turns then, 1 now|2 turns then, 1 now"):
            store.add_turn(conv["id"], "q2", "a2", False, [], {}, replace_last=replace_last, expected_turns=expected)
    assert [t["answer"] for t in store.turns(conv["id"])] == ["a1"]  # nothing replaced, nothing added
    store.add_turn(conv["id"], "q1", "a1 again", False, [], {}, replace_last=True, expected_turns=1)
    assert [t["answer"] for t in store.turns(conv["id"])] == ["a1 again"]
    store.delete_conversation(conv["id"])
    with pytest.raises(ConversationChanged, match="deleted"):
        store.add_turn(conv["id"], "q1", "a1", False, [], {})


def test_cross_origin_writes_are_refused_and_same_origin_ones_pass(running) -> None:  # type: ignore[no-untyped-def]
    server, client, _ = running
    evil = {"Origin": "http://attacker.example:8080"}
    for response in (
        client.post("/api/collections/gov/documents", files=[("files", ("x.md", b"# x\n\ninjected"))], headers=evil),
        client.post("/api/collections", json={"name": "other"}, headers={"Referer": "https://attacker.example/page"}),
        client.delete("/api/collections/gov", headers={"Sec-Fetch-Site": "cross-site"}),
        client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": []}, headers={"Origin": "null"}),
    ):
        assert response.status_code == 403 and response.json()["error"]["code"] == "cross_origin_refused"
    assert client.get("/api/jobs").json() == [] and [c["name"] for c in client.get("/api/collections").json()] == ["gov"]
    assert client.get("/api/collections", headers=evil).status_code == 200  # reading is not a write
    own = client.post("/api/collections", json={"name": "mine"}, headers={"Origin": server.url})
    assert own.status_code == 201


def test_foreign_host_names_are_refused_on_loopback(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    rebound = client.get("/api/collections", headers={"Host": "attacker.example"})
    assert rebound.status_code == 421 and rebound.json()["error"]["code"] == "unknown_host"
    assert client.get("/api/collections", headers={"Host": "localhost:1234"}).status_code == 200


def test_headers_allow_and_offline_docs(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    assert client.get("/api/health").headers["x-content-type-options"] == "nosniff"
    not_allowed = client.put("/api/collections")
    assert not_allowed.status_code == 405 and not_allowed.headers["allow"] == "GET, HEAD, POST"
    assert client.post("/api/collections/gov/passages/a/b").headers["allow"] == "GET, HEAD"
    docs = client.get("/docs")
    assert "script-src 'self'" in docs.headers["content-security-policy"] and "https://" not in docs.text
    for asset in ("/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css", "/static/docs.js"):
        assert client.get(asset).status_code == 200


class ReadingAheadLLM(StreamingScriptedLLM):
    """Records what it is asked to read ahead (a backend that reuses evaluated prefixes)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.read: list[list[dict]] = []

    def prefill(self, messages: list[dict]) -> int:
        self.read.append(messages)
        return len(messages[-1]["content"].split())


@pytest.mark.parametrize("read_ahead", [True, False])
def test_after_an_answer_the_next_prompt_is_read_up_to_its_passages(tmp_path: Path, read_ahead: bool) -> None:
    answers = ["Renewal by mail costs 130 dollars [1].", "Residents pay 25 dollars a year [1]."]
    llm = ReadingAheadLLM(answer=answers, rewrite=["How much does a yearly fishing license cost?"] * 2)
    with serve(tmp_path, llm, read_ahead=read_ahead) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT), ("fishing.md", FISHING)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        state = server.app.state.convrag
        assert state.read_ahead.wait_idle(timeout=30)
        # a new conversation: its first answer prompt is read up to its passages while the question is typed
        first_start = llm.read[:]
        client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal by mail cost?"})
        assert state.read_ahead.wait_idle(timeout=30)
        if not read_ahead:
            assert llm.read == [] and state.read_ahead.last is None
            return
        assert len(first_start) == 1  # only the answer's: progressive asks the model nothing on a first question
        asked = [m for k, m in llm.requests if k == "answer"][0]
        assert asked[:-1] == first_start[0][:-1] and asked[-1]["content"].startswith(first_start[0][-1]["content"])
        _, rewrite_start, answer_start = llm.read  # then progressive's rewrite prompt, then the answer prompt
        assert answers[0] in answer_start[-1]["content"] and state.read_ahead.last["answer"]["tokens"] > 0
        assert answers[0] in rewrite_start[-1]["content"] and state.read_ahead.last["strategy"]["tokens"] > 0
        client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "Does it cost less for a yearly fishing license?"})
        # what was read ahead is exactly the start of the prompts the next turn's calls were made with
        for kind, start in (("answer", answer_start), ("rewrite", rewrite_start)):
            asked = [m for k, m in llm.requests if k == kind][-1]
            assert asked[:-1] == start[:-1] and asked[-1]["content"].startswith(start[-1]["content"])
            assert "yearly fishing license" not in start[-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_the_openai_endpoint_reads_ahead_for_a_client_that_sends_the_history_back(tmp_path: Path, stream: bool) -> None:
    answers = ["Renewal by mail costs 130 dollars [1].", "Residents pay 25 dollars a year [1]."]
    llm = ReadingAheadLLM(answer=answers, rewrite=["How much does a yearly fishing license cost?"] * 2)
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT), ("fishing.md", FISHING)])
        first = [{"role": "system", "content": "Be helpful."},
                 {"role": "user", "content": "How much does passport renewal by mail cost?"}]
        reply = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": first, "stream": stream})
        assert reply.status_code == 200 and answers[0] in reply.text
        state = server.app.state.convrag
        assert state.read_ahead.wait_idle(timeout=30)
        rewrite_start, answer_start = llm.read
        assert answers[0] in answer_start[-1]["content"] and state.read_ahead.last["answer"]["tokens"] > 0
        # the client sends its history back with the answer it was given, and the next question
        follow_up = [*first, {"role": "assistant", "content": answers[0]},
                     {"role": "user", "content": "Does it cost less for a yearly fishing license?"}]
        assert client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": follow_up}).status_code == 200
        for kind, start in (("answer", answer_start), ("rewrite", rewrite_start)):
            asked = [m for k, m in llm.requests if k == kind][-1]
            assert asked[:-1] == start[:-1] and asked[-1]["content"].startswith(start[-1]["content"])


def test_a_started_service_reads_a_new_conversation_s_prompt_start_before_the_first_request(tmp_path: Path) -> None:
    """An OpenAI client's first question after a start waited for the model to load and read the
    answer prompt's instructions and worked examples (10.1 s against 2.4 s read ahead, by hand with
    the local model): only a conversation created in the web chat had them read ahead."""
    answers = ["Renewal by mail costs 130 dollars [1]."]
    with serve(tmp_path, ReadingAheadLLM(answer=answers)) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        assert server.app.state.convrag.read_ahead.last is None  # a service without documents reads nothing at start
    llm = ReadingAheadLLM(answer=answers)
    with serve(tmp_path, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        assert server.app.state.convrag.read_ahead.wait_idle(timeout=30)
        (start,) = llm.read
        question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
        assert client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": question}).status_code == 200
        asked = [m for k, m in llm.requests if k == "answer"][0]
        assert asked[:-1] == start[:-1] and asked[-1]["content"].startswith(start[-1]["content"])


@pytest.mark.parametrize("read_ahead", [True, False])
def test_a_reopened_conversation_has_its_next_prompt_read_ahead_on_request(tmp_path: Path, read_ahead: bool) -> None:
    """Reopened later, a conversation's prompt was long gone from the model's cache, and its next
    question waited for the whole of it to be read."""
    answers = ["Renewal by mail costs 130 dollars [1].", "Residents pay 25 dollars a year [1]."]
    llm = ReadingAheadLLM(answer=answers, rewrite=["How much does a yearly fishing license cost?"])
    with serve(tmp_path, llm, read_ahead=read_ahead) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT), ("fishing.md", FISHING)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal by mail cost?"})
        state = server.app.state.convrag
        assert state.read_ahead.wait_idle(timeout=30)
        llm.read.clear()  # as if the model had served other conversations since
        reply = client.post(f"/api/conversations/{conv['id']}/read-ahead")
        assert reply.status_code == 202 and reply.json() == {"reading": read_ahead}
        assert client.post("/api/conversations/nope/read-ahead").status_code == 404
        assert state.read_ahead.wait_idle(timeout=30)
        if not read_ahead:
            assert llm.read == []
            return
        rewrite_start, answer_start = llm.read
        client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "Does it cost less for a yearly fishing license?"})
        for kind, start in (("answer", answer_start), ("rewrite", rewrite_start)):
            asked = [m for k, m in llm.requests if k == kind][-1]
            assert answers[0] in start[-1]["content"]
            assert asked[:-1] == start[:-1] and asked[-1]["content"].startswith(start[-1]["content"])


def test_a_strategy_of_the_operators_own_is_used_and_a_client_cannot_import_one(tmp_path: Path) -> None:
    """A conversation's strategy is the client's to choose: had the request's name been imported as
    the CLI's `-s package.module:Class` is, any client could make the server run a file of its choosing."""
    own = str(Path(__file__).parents[2] / "examples" / "previous_question.py") + ":PreviousQuestion"
    marker = tmp_path / "ran"
    planted = tmp_path / "planted.py"
    planted.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\nclass X:\n    name = 'x'\n")
    llm = StreamingScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
    with serve(tmp_path, llm, strategy=own) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT)])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        assert conv["strategy"] == own
        offered = client.get("/api/strategies").json()
        assert offered["default"] == own
        assert [s["name"] for s in offered["strategies"] if s["built_in"]] == ["last_turn", "full_rewrite", "targeted", "mmr_cluster",
                                                                               "summary", "progressive"]
        mine = next(s for s in offered["strategies"] if s["name"] == own)
        assert not mine["needs_llm"] and mine["description"].startswith("The question, then the user's previous question")
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does renewal by mail cost?"}).json()
        assert turn["trace"]["strategy"]["strategy"] == "previous_question"
        for name in (f"{planted}:X", "os:getcwd"):
            refused = client.post("/api/conversations", json={"collections": ["gov"], "strategy": name})
            assert refused.status_code == 422 and refused.json()["error"]["code"] == "unknown_strategy", refused.text
        assert not marker.exists() and f"{planted}:X" not in str(client.get("/api/strategies").json())


def test_jobs_are_listed_a_page_at_a_time(running) -> None:  # type: ignore[no-untyped-def]
    _, client, _ = running
    ids = [upload(client, "gov", [(f"note{i}.md", f"# Note {i}\n\nFishing licence note number {i}.")])["id"] for i in range(3)]
    page = client.get("/api/jobs", params={"limit": 2}).json()
    assert [j["id"] for j in page] == ids[:0:-1]  # newest first
    rest = client.get("/api/jobs", params={"limit": 2, "before": page[-1]["created"]}).json()
    assert [j["id"] for j in rest] == ids[:1]
    assert client.get("/api/jobs", params={"limit": 0}).status_code == 422
