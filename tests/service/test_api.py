"""The HTTP API against a real uvicorn server on 127.0.0.1, real collections and embeddings.
Answers come from a scripted stand-in LLM so that the tests can assert on control flow; the
real local model answers in ``test_browser.py`` and ``test_schema.py``."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from convrag.llm.base import GenerationParams
from convrag.service import ServiceSettings
from convrag.service.settings import Limits
from tests.helpers import PASSPORT, HeldLLM, ScriptedLLM, SlowStreamingLLM, StreamingScriptedLLM, upload
from tests.pdfs import make_pdf

from .conftest import ThreadServer, wait_job

EVIL = ("<html><head><title>Fishing &lt;script&gt;alert(1)&lt;/script&gt;</title></head><body>"
        "<p>Fishing licenses cost 25 dollars a year. &lt;script&gt;alert('x')&lt;/script&gt;</p></body></html>")


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."] * 10)


@pytest.fixture
def server(settings: ServiceSettings, llm: ScriptedLLM):  # type: ignore[no-untyped-def]
    with ThreadServer(settings, llm) as running:
        yield running


@pytest.fixture
def client(server: ThreadServer):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


@pytest.fixture
def gov(client: httpx.Client) -> str:
    assert client.post("/api/collections", json={"name": "gov", "description": "government"}).status_code == 201
    job = upload(client, "gov", [("passports.md", PASSPORT.encode()), ("fishing.html", EVIL.encode()),
                                 ("fees.pdf", make_pdf(["Court filing fees can be waived for low income."], title="Fee waivers"))])
    assert job["status"] == "succeeded", job
    return "gov"


def test_a_collection_named_twice_is_searched_once(client: httpx.Client, gov: str) -> None:
    """The pipeline refuses a configuration that names a collection twice, so a request that did was
    a 500 from /api/search, from creating a conversation and from the OpenAI endpoint."""
    once = client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal cost", "k": 3}).json()
    twice = client.post("/api/search", json={"collections": ["gov", "gov"], "query": "passport renewal cost", "k": 3})
    assert twice.status_code == 200 and twice.json() == once
    conversation = client.post("/api/conversations", json={"collections": ["gov", "gov"]})
    assert conversation.status_code == 201 and conversation.json()["collections"] == ["gov"]
    reply = client.post("/v1/chat/completions", json={"model": "collection:gov+gov", "messages": [
        {"role": "user", "content": "How much does renewal cost?"}]})
    assert reply.status_code == 200 and {c["collection"] for c in reply.json()["convrag"]["citations"]} == {"gov"}
    changed = client.patch(f"/api/conversations/{conversation.json()['id']}", json={"collections": ["gov", "gov"]})
    assert changed.status_code == 200 and changed.json()["collections"] == ["gov"]


def test_collection_lifecycle_upload_and_search(client: httpx.Client, gov: str) -> None:
    info = client.get("/api/collections/gov").json()
    assert info["documents"] == 3 and info["passages"] == 3 and info["version"]
    assert {d["doc_id"] for d in info["documents_list"]} == {"passports", "fishing", "fees"}
    # a finished job reads as whole: its three files done (its last stage, the BM25 index, left "0 of 0")
    assert info["jobs"][0]["status"] == "succeeded" and info["jobs"][0]["done"] == info["jobs"][0]["total"] == 3
    hits = client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal cost", "k": 2}).json()["hits"]
    assert hits[0]["document_id"] == "passports" and hits[0]["collection"] == "gov" and len(hits) == 2
    pdf_hit = client.post("/api/search", json={"collections": ["gov"], "query": "court fee waiver", "k": 1}).json()["hits"][0]
    assert pdf_hit["title"] == "Fee waivers"
    passage = client.get(f"/api/collections/gov/passages/{hits[0]['passage_id']}").json()
    assert "130 dollars" in passage["text"]
    original = client.get("/api/collections/gov/documents/passports/file")
    assert original.status_code == 200 and original.content == PASSPORT.encode()
    # re-uploading a name replaces that document; the others keep their passages
    job = upload(client, "gov", [("passports.md", b"# Passport renewal\n\nRenewal now costs 165 dollars.\n")])
    assert job["status"] == "succeeded"
    assert client.get("/api/collections/gov").json()["passages"] == 3
    top = client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal", "k": 1}).json()["hits"][0]
    assert "165 dollars" in top["text"]
    assert client.delete("/api/collections/gov").status_code == 204
    assert client.get("/api/collections/gov").status_code == 404
    assert client.get("/api/collections").json() == []


def test_a_spreadsheet_s_table_and_a_slide_deck_are_uploaded_and_searched(client: httpx.Client, tmp_path: Path) -> None:
    """A .csv and a .pptx were refused at upload as unsupported file types."""
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Fuel at the pier"
    slide.placeholders[1].text = "Diesel is sold from 6 to 22."
    deck.save(tmp_path / "fuel.pptx")
    assert client.post("/api/collections", json={"name": "harbour"}).status_code == 201
    faq = b"Question,Answer\nCan kayaks moor overnight?,Yes for 12 dollars a night.\n"
    job = upload(client, "harbour", [("faq.csv", faq), ("fuel.pptx", (tmp_path / "fuel.pptx").read_bytes())])
    assert job["status"] == "succeeded", job
    def top(query: str) -> dict:  # type: ignore[type-arg]
        return client.post("/api/search", json={"collections": ["harbour"], "query": query, "k": 1}).json()["hits"][0]
    assert top("kayaks overnight")["text"] == "Question: Can kayaks moor overnight? | Answer: Yes for 12 dollars a night."
    assert top("diesel hours")["title"] == "Fuel at the pier"


def test_a_zip_archive_and_a_mail_are_uploaded_and_searched(client: httpx.Client) -> None:
    """A Drive folder downloaded as .zip, a folder packed as .tar.gz, and a mail with its attachment:
    "unsupported file type" at upload."""
    import io
    import tarfile
    import zipfile
    from email.message import EmailMessage

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("Harbour/fuel.md", "# Fuel at the pier\n\nDiesel is sold from 6 to 22.\n")
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        berths = b"Winter berths cost 310 dollars a season."
        info = tarfile.TarInfo("./Harbour/winter.txt")
        info.size = len(berths)
        tar.addfile(info, io.BytesIO(berths))
    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "Winter fees"
    mail.set_content("The fees are attached.")
    mail.add_attachment(b"Boat,Fee\nKayak,2\n", maintype="text", subtype="csv", filename="fees.csv")
    assert client.post("/api/collections", json={"name": "harbour"}).status_code == 201
    job = upload(client, "harbour", [("export.zip", out.getvalue()), ("fees.eml", bytes(mail)), ("Winter docs.tar.gz", packed.getvalue())])
    assert job["status"] == "succeeded", job
    def top(query: str) -> dict:  # type: ignore[type-arg]
        return client.post("/api/search", json={"collections": ["harbour"], "query": query, "k": 1}).json()["hits"][0]
    assert top("diesel hours")["document_id"] == "export" and "Diesel is sold from 6 to 22." in top("diesel hours")["text"]
    assert top("winter berths")["document_id"] == "Winter docs" and top("winter berths")["title"] == "Winter docs"
    assert top("kayak fee")["document_id"] == "fees" and "Boat: Kayak | Fee: 2" in top("kayak fee")["text"]


def test_a_scanned_pdf_is_uploaded_read_by_ocr_and_its_pages_shown_in_the_job(client: httpx.Client,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan was "no text"; read by OCR it takes a second or two a page, and the job said nothing of it."""
    import pypdfium2 as pdfium

    from convrag.service.store import Store
    from tests.ingest.test_ocr import MANUAL_PDF

    source = pdfium.PdfDocument(MANUAL_PDF)
    images = [source[i].render(scale=150 / 72, grayscale=True).to_pil().convert("L") for i in (0, 1)]
    source.close()
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], resolution=150)
    stages: list[str] = []
    real = Store.update_job
    monkeypatch.setattr(Store, "update_job", lambda self, job_id, **fields: (stages.append(fields["stage"]) if "stage" in fields else None,
                                                                             real(self, job_id, **fields))[1])
    assert client.post("/api/collections", json={"name": "scans"}).status_code == 201
    job = upload(client, "scans", [("manual-scan.pdf", out.getvalue())])
    assert job["status"] == "succeeded", job
    assert "reading and chunking documents (manual-scan.pdf: page 2 of 2 read by OCR)" in stages
    assert stages[stages.index("reading and chunking documents (manual-scan.pdf: page 2 of 2 read by OCR)") + 1] == "reading and chunking documents"
    hits = client.post("/api/search", json={"collections": ["scans"], "query": "refrigerant R290 propane", "k": 1}).json()["hits"]
    assert "The refrigerant is R290 (propane), which is flammable" in hits[0]["text"]


def test_photos_are_uploaded_and_read_by_ocr_and_one_without_words_is_named(client: httpx.Client) -> None:
    """A phone's photo of a notice (an iPhone's HEIC) was refused as "not a type convrag reads"; a photo
    without words is skipped with the reason, not indexed as Tesseract's guesses."""
    from tests.ingest.test_ocr import _gravel

    heic = Path(__file__).parents[1] / "ingest" / "made_by_pillow_heif" / "slipway-notice.heic"
    gravel = io.BytesIO()
    _gravel().save(gravel, format="JPEG", quality=92)
    assert client.post("/api/collections", json={"name": "photos"}).status_code == 201
    job = upload(client, "photos", [("IMG_0042.HEIC", heic.read_bytes()), ("path.jpg", gravel.getvalue())])
    assert job["status"] == "succeeded", job
    assert job["warning"] == "skipped path.jpg: no text (no words OCR could read in it)"
    hits = client.post("/api/search", json={"collections": ["photos"], "query": "slipway closed", "k": 1}).json()["hits"]
    assert hits[0]["text"].startswith("Harbour notice\nThe slipway is closed for repairs from 3 to 14 March.")


def test_conversation_turns_are_stored_with_citations_and_trace(client: httpx.Client, gov: str, llm: ScriptedLLM) -> None:
    conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
    turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal by mail cost?"})
    assert turn.status_code == 200, turn.text
    turn = turn.json()
    assert turn["answer"] == "Renewal by mail costs 130 dollars [1]."
    assert turn["citations"][0]["collection"] == "gov" and turn["citations"][0]["document_id"] == "passports"
    assert turn["trace"]["strategy"]["stage"] == "1" and turn["trace"]["merge"]["results"]
    assert set(turn["trace"]["timings_s"]) >= {"strategy", "search", "merge", "answer", "total"}
    stored = client.get(f"/api/conversations/{conv['id']}").json()
    assert stored["title"].startswith("How much does passport") and len(stored["turns"]) == 1
    assert stored["turns"][0]["trace"]["strategy"]["final_query"] == turn["trace"]["strategy"]["final_query"]
    assert client.get("/api/conversations").json()[0]["turn_count"] == 1
    # the next turn's history is the stored question and convrag's own answer
    llm.queues["rewrite"].append("How long does passport renewal by mail take?")
    client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How long does it take?"})
    answer_prompt = llm.last_user_prompt("answer")
    assert "Renewal by mail costs 130 dollars" in answer_prompt and "How long does it take?" in answer_prompt
    assert client.delete(f"/api/conversations/{conv['id']}").status_code == 204
    assert client.get(f"/api/conversations/{conv['id']}").status_code == 404


def test_openai_clients_chat_with_a_collection(server: ThreadServer, gov: str) -> None:
    openai = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    assert "collection:gov" in [m.id for m in openai.models.list()]
    question = [{"role": "system", "content": "be nice"}, {"role": "user", "content": "How much does passport renewal by mail cost?"}]
    reply = openai.chat.completions.create(model="collection:gov", messages=question)
    assert reply.choices[0].message.content == "Renewal by mail costs 130 dollars [1]."
    extra = reply.model_extra["convrag"]
    assert extra["citations"][0]["document_id"] == "passports" and "strategy" in extra["trace"]
    stream = openai.chat.completions.create(model="collection:gov", messages=question, stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Renewal by mail costs 130 dollars [1]."
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["convrag"]["citations"]


def test_openai_temperature_samples_the_answer_and_its_seed_is_kept(server: ThreadServer, gov: str, llm: ScriptedLLM) -> None:
    """A client's temperature was ignored: its "regenerate" (the same request again) got the greedy
    answer back from the completion cache. Left out or 0, decoding stays greedy."""
    openai = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
    openai.chat.completions.create(model="collection:gov", messages=question)
    openai.chat.completions.create(model="collection:gov", messages=question, temperature=0)
    assert [(d.temperature, d.seed) for d in llm.decodings[-2:]] == [(0, None), (0, None)]
    seeded = openai.chat.completions.create(model="collection:gov", messages=question, temperature=0.9, seed=7)
    assert (llm.decodings[-1].temperature, llm.decodings[-1].seed) == (0.9, 7)
    assert seeded.model_extra["convrag"]["trace"]["answer"]["details"]["sampled"] == {"temperature": 0.9, "seed": 7}
    chunks = list(openai.chat.completions.create(model="collection:gov", messages=question, temperature=1.2, stream=True))
    sampled = chunks[-1].model_extra["convrag"]["trace"]["answer"]["details"]["sampled"]
    assert llm.decodings[-1].temperature == sampled["temperature"] == 1.2 and llm.decodings[-1].seed == sampled["seed"]
    with httpx.Client(base_url=server.url) as client:
        refused = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": question, "temperature": 2.5})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"


@contextmanager
def _gov_service(tmp_path: Path, llm: ScriptedLLM, gov_files: list[tuple[str, bytes]]) -> Iterator[tuple[httpx.Client, OpenAI]]:
    """A service over the "gov" collection, answering with ``llm``: a client of its API and an OpenAI client."""
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), llm) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        yield client, OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


class WordLimitedLLM(StreamingScriptedLLM):
    """Writes at most ``max_tokens`` words (its tokens are words), as a model stops at its limit."""

    def complete(self, messages, params=GenerationParams()):  # type: ignore[no-untyped-def]
        whole = super().complete(messages, params)
        words = whole.text.split(" ")
        if len(words) <= params.max_tokens:
            return whole._replace(finish_reason="stop")
        return whole._replace(text=" ".join(words[: params.max_tokens]), completion_tokens=params.max_tokens, finish_reason="length")


def test_openai_max_tokens_limits_the_answer(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """A client's max_tokens was ignored: it asked for a short answer and got (and waited for) the
    pipeline's whole one, told finish_reason "stop"."""
    answer = "Renewal by mail costs 130 dollars [1]. Send form DS-82 with your old passport and a photo [1]."
    llm = WordLimitedLLM(answer=[answer] * 6)
    with _gov_service(tmp_path, llm, gov_files) as (client, openai):
        question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
        whole = openai.chat.completions.create(model="collection:gov", messages=question, max_tokens=4000)  # never raised
        assert whole.choices[0].message.content == answer and whole.choices[0].finish_reason == "stop"
        assert llm.decodings[-1].max_tokens == 160
        for extra in ({"max_tokens": 10}, {"max_completion_tokens": 10}, {"max_tokens": 12, "max_completion_tokens": 10}):
            cut = openai.chat.completions.create(model="collection:gov", messages=question, **extra)  # type: ignore[call-overload]
            assert llm.decodings[-1].max_tokens == 10
            # the cut answer keeps its whole sentences
            assert cut.choices[0].message.content == "Renewal by mail costs 130 dollars [1]." and cut.choices[0].finish_reason == "length"
            assert cut.model_extra["convrag"]["trace"]["answer"]["details"]["length_limit"] == {"max_tokens": 10, "reached": True}
        chunks = list(openai.chat.completions.create(model="collection:gov", messages=question, max_tokens=10, stream=True))
        assert chunks[-1].choices[0].finish_reason == "length" and llm.decodings[-1].max_tokens == 10
        refused = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": question, "max_tokens": 0})
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"


class StopHonouringLLM(StreamingScriptedLLM):
    """Ends its text where a stop string begins, as a model does."""

    def complete(self, messages, params=GenerationParams()):  # type: ignore[no-untyped-def]
        whole = super().complete(messages, params)
        cut = min([whole.text.find(s) for s in params.stop if s in whole.text] or [len(whole.text)])
        return whole._replace(text=whole.text[:cut], finish_reason="stop")


def test_openai_stop_and_top_p_reach_the_model(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """A client's stop strings and top_p were dropped: its answer ran past the strings it gave, and
    sampling used the backend's own top_p."""
    answer = "Renewal by mail costs 130 dollars [1]. Send form DS-82 with your old passport [1]."
    llm = StopHonouringLLM(answer=[answer] * 6)
    with _gov_service(tmp_path, llm, gov_files) as (client, openai):
        question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
        cut = openai.chat.completions.create(model="collection:gov", messages=question, stop=["Send form", "\nUser:"], top_p=0.5)
        assert cut.choices[0].message.content == "Renewal by mail costs 130 dollars [1]."
        assert llm.decodings[-1].stop == ("\nUser:", "Send form") and llm.decodings[-1].top_p is None  # greedy: no use for it
        assert cut.model_extra["convrag"]["trace"]["answer"]["details"]["stop_strings"] == ["Send form"]
        chunks = list(openai.chat.completions.create(model="collection:gov", messages=question, stop="Send form", stream=True,
                                                     temperature=0.8, top_p=0.5, seed=3))
        assert llm.decodings[-1].stop == ("\nUser:", "Send form") and llm.decodings[-1].top_p == 0.5
        assert chunks[-1].model_extra["convrag"]["trace"]["answer"]["details"]["sampled"] == {"temperature": 0.8, "seed": 3, "top_p": 0.5}
        for bad in ({"stop": ["a", "b", "c", "d", "e"]}, {"stop": "x" * 201}, {"top_p": 0}, {"top_p": 1.5}, {"n": 3}, {"n": 0}):
            refused = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": question, **bad})
            assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request", bad
        # a client asking for several answers was handed one, as if it were all of them
        told = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": question, "n": 2}).json()["error"]["message"]
        assert told.startswith("body.n: ") and "one answer per request" in told, told
        assert len(openai.chat.completions.create(model="collection:gov", messages=question, n=1).choices) == 1


def test_errors_are_clear_4xx(client: httpx.Client, gov: str) -> None:
    def error(response: httpx.Response, status: int, code: str) -> None:
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code and response.json()["error"]["message"]

    chat = "/v1/chat/completions"
    error(client.post(chat, json={"model": "nope", "messages": [{"role": "user", "content": "hi"}]}), 404, "model_not_found")
    error(client.post(chat, json={"model": "collection:gov", "messages": [{"role": "user", "content": "  "}]}), 400, "empty_question")
    image = [{"type": "image_url", "image_url": {"url": "data:,"}}]
    error(client.post(chat, json={"model": "collection:gov", "messages": [{"role": "user", "content": image}]}), 400, "empty_question")
    error(client.post(chat, json={"model": "collection:gov", "messages": [{"role": "user", "content": "x" * 4001}]}), 413,
          "question_too_long")
    history = [{"role": r, "content": "hello"} for _ in range(51) for r in ("user", "assistant")] + [{"role": "user", "content": "q?"}]
    error(client.post(chat, json={"model": "collection:gov", "messages": history}), 413, "history_too_long")
    error(client.post(chat, json={"model": "collection:gov", "messages": []}), 422, "invalid_request")
    error(client.post(chat, content=b"{not json", headers={"content-type": "application/json"}), 422, "invalid_request")
    error(client.post("/api/collections", json={"name": "../etc"}), 422, "invalid_request")
    error(client.post("/api/collections", json={"name": "gov"}), 409, "collection_exists")
    error(client.get("/api/collections/missing"), 404, "collection_not_found")
    error(client.post("/api/conversations", json={"collections": ["missing"]}), 404, "collection_not_found")
    error(client.post("/api/conversations/nope/messages", json={"question": "hi"}), 404, "conversation_not_found")
    error(client.get("/api/jobs/nope"), 404, "job_not_found")
    error(client.post("/api/search", json={"collections": ["gov"], "query": "x", "k": 1000}), 422, "invalid_request")
    error(client.post("/api/search", json={"collections": ["gov"], "query": "???"}), 422, "invalid_request")  # no word to search
    error(client.post("/api/search", json={"collections": ["gov"], "query": "x" * 4001}), 413, "question_too_long")
    conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
    error(client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "x" * 4001}), 413, "question_too_long")
    error(client.post(f"/api/conversations/{conv['id']}/regenerate"), 409, "nothing_to_regenerate")
    error(client.patch(f"/api/conversations/{conv['id']}", json={"title": "  "}), 422, "invalid_request")
    error(client.delete("/api/collections/gov/documents/nope"), 404, "document_not_found")
    error(client.post("/api/collections/gov/documents", files=[("files", ("notes.exe", b"MZ"))]), 415, "unsupported_file_type")
    error(client.post("/api/collections/gov/documents", files=[("files", ("a.txt", b"1")), ("files", ("a.txt", b"2"))]), 400,
          "invalid_upload")
    error(client.post("/api/collections", content=json.dumps({"name": "big", "description": "x" * 1_100_000}),
                      headers={"content-type": "application/json"}), 413, "body_too_large")


def test_a_broken_file_fails_its_job_and_leaves_the_collection(client: httpx.Client, gov: str) -> None:
    before = client.get("/api/collections/gov").json()
    job = upload(client, "gov", [("broken.pdf", b"%PDF-1.4 not really")])
    assert job["status"] == "failed" and "broken.pdf" in job["error"]
    after = client.get("/api/collections/gov").json()
    assert after["version"] == before["version"] and after["passages"] == before["passages"]


def test_a_damaged_collection_is_named_and_the_others_answer(client: httpx.Client, gov: str, settings: ServiceSettings) -> None:
    """A collection whose index file was damaged on disk made every chat over it, with any other
    collection, a bare 500 "internal error". Now the others answer and the turn names it; alone,
    it is a 500 that says which collection and what to do."""
    assert client.post("/api/collections", json={"name": "boats"}).status_code == 201
    assert upload(client, "boats", [("harbour.md", b"Mooring in the harbour costs 40 dollars a night.")])["status"] == "succeeded"
    version = client.get("/api/collections/boats").json()["version"]
    (Path(settings.data_dir) / "collections" / "boats" / version / "dense" / "embeddings.npy").write_bytes(b"\x00" * 64)
    conv = client.post("/api/conversations", json={"collections": ["gov", "boats"]}).json()
    turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much is passport renewal by mail?"})
    assert turn.status_code == 200 and turn.json()["citations"][0]["collection"] == "gov"
    assert "boats" in turn.json()["trace"]["search"]["failures"]
    assert client.get("/api/collections/boats").json()["problem"].startswith("collection 'boats': its dense index is damaged")
    exported = client.get(f"/api/conversations/{conv['id']}/export", params={"format": "markdown"}).text
    assert "*Caution: the collection boats could not be searched (CollectionDamaged: collection 'boats'" in exported
    alone = client.post("/v1/chat/completions", json={"model": "collection:boats", "messages": [{"role": "user", "content": "Mooring fee?"}]})
    assert alone.status_code == 500 and alone.json()["error"]["code"] == "collection_damaged"
    assert "collection 'boats'" in alone.json()["error"]["message"] and "rebuild" in alone.json()["error"]["message"]
    assert str(settings.data_dir) not in alone.json()["error"]["message"]  # the server's folders are not shown
    # an upload builds it again, its stored passages embedded anew
    assert upload(client, "boats", [("slip.md", b"A boat slip rents for 300 dollars a month.")])["status"] == "succeeded"
    repaired = client.post("/api/search", json={"collections": ["boats"], "query": "mooring in the harbour", "k": 2}).json()
    assert [h["document_id"] for h in repaired["hits"]][:1] == ["harbour"] and not repaired["failures"]
    assert "problem" not in client.get("/api/collections/boats").json()


def test_an_upload_repairs_a_collection_whose_passage_file_was_damaged(client: httpx.Client, gov: str, settings: ServiceSettings) -> None:
    """With its passage file damaged, every upload to the collection failed (its passages are read to
    keep the other documents'), so it could only be deleted and every document uploaded again. The
    documents' own files are kept: they are read again."""
    version = client.get("/api/collections/gov").json()["version"]
    (Path(settings.data_dir) / "collections" / "gov" / version / "passages.jsonl").write_text("{not json\n")
    job = upload(client, "gov", [("boats.md", b"Mooring in the harbour costs 40 dollars a night.")])
    assert job["status"] == "succeeded", job
    info = client.get("/api/collections/gov").json()
    assert info["passages"] == 4 and info["documents"] == 4 and "problem" not in info
    for query, document in (("passport renewal by mail", "passports"), ("mooring in the harbour", "boats"),
                            ("court filing fees waived", "fees")):
        hits = client.post("/api/search", json={"collections": ["gov"], "query": query, "k": 1}).json()["hits"]
        assert hits[0]["document_id"] == document, query
    # a document whose file is gone too cannot be read again: said, and the collection is left as it was
    version = client.get("/api/collections/gov").json()["version"]
    (Path(settings.data_dir) / "collections" / "gov" / version / "passages.jsonl").write_text("{not json\n")
    for stored in (Path(settings.data_dir) / "uploads").rglob("*-passports.md"):
        stored.unlink()
    failed = upload(client, "gov", [("slip.md", b"A boat slip rents for 300 dollars a month.")])
    assert failed["status"] == "failed" and failed["error"] == (
        "collection 'gov' is damaged and the file of its document 'passports.md' is gone; delete the collection and "
        "upload its documents again")
    assert client.get("/api/collections/gov").json()["version"] == version


def test_uploaded_names_cannot_escape_the_data_folder(client: httpx.Client, gov: str, settings: ServiceSettings) -> None:
    job = upload(client, "gov", [("../../../outside.txt", b"Sneaky text about boats and harbours.")])
    assert job["status"] == "succeeded" and job["files"][0]["filename"] == "outside.txt"
    data = Path(settings.data_dir)
    assert not (data.parent / "outside.txt").exists() and not (data / "outside.txt").exists()
    stored = [p for p in (data / "uploads").rglob("*outside.txt")]
    assert stored and all(data / "uploads" in p.parents for p in stored)


def test_an_upload_may_leave_out_the_files_that_cannot_be_indexed(client: httpx.Client, gov: str) -> None:
    """A folder of five hundred documents with one empty file, or a picture named .pdf, was refused whole
    (422/415). With ``skip_refused`` those files are left out and named with their reasons, as `convrag
    index` leaves out a folder's unreadable files; without it the upload is refused as before."""
    files = [("guide/moorings.md", b"# Moorings\n\nA mooring costs 40 dollars a night.\n"), ("guide/empty.txt", b""),
             ("guide/photo.pdf", b"\x89PNG\r\n\x1a\n a picture"), ("guide/winter.txt", b"Kayaks pay 2 dollars a night in winter.\n")]
    form = [("files", (name, data)) for name, data in files]
    strict = client.post("/api/collections/gov/documents", files=form)
    assert strict.status_code == 422 and strict.json()["error"]["code"] == "empty_file"
    sent = client.post("/api/collections/gov/documents", params={"skip_refused": "true"}, files=form)
    assert sent.status_code == 202, sent.text
    assert [(r["file"], r["code"]) for r in sent.json()["refused"]] == [("guide/empty.txt", "empty_file"), ("guide/photo.pdf", "not_a_pdf")]
    assert "is not a PDF file" in sent.json()["refused"][1]["message"]
    assert wait_job(client, sent.json()["id"])["status"] == "succeeded"
    assert {d["original"] for d in client.get("/api/collections/gov/documents").json()} >= {"guide/moorings.md", "guide/winter.txt"}
    assert not {"guide/empty.txt", "guide/photo.pdf"} & {d["original"] for d in client.get("/api/collections/gov/documents").json()}
    # an upload of nothing but such files is refused still, with every reason
    nothing = client.post("/api/collections/gov/documents", params={"skip_refused": "true"}, files=form[1:3])
    assert nothing.status_code == 422 and nothing.json()["error"]["code"] == "empty_file"
    assert "no file of this upload can be indexed" in nothing.json()["error"]["message"] and "photo.pdf" in nothing.json()["error"]["message"]
    assert [(r["file"], r["code"]) for r in nothing.json()["errors"]] == [("guide/empty.txt", "empty_file"), ("guide/photo.pdf", "not_a_pdf")]


def test_empty_collection_declines_without_a_model_call(client: httpx.Client, llm: ScriptedLLM) -> None:
    client.post("/api/collections", json={"name": "empty"})
    conv = client.post("/api/conversations", json={"collections": ["empty"]}).json()
    turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "Anything in here about taxes?"}).json()
    assert turn["declined"] and turn["trace"]["empty_collections"] == ["empty"] and llm.kinds() == []


def test_concurrent_generations_over_the_limit_get_429(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    llm = HeldLLM(["It costs 130 dollars [1]."] * 3)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", limits=Limits(max_concurrent_generations=1))
    with ThreadServer(settings, llm) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        body = {"model": "collection:gov", "messages": [{"role": "user", "content": "How much does passport renewal cost?"}]}
        first: dict = {}
        thread = threading.Thread(target=lambda: first.update(r=client.post("/v1/chat/completions", json=body)))
        thread.start()
        deadline = time.monotonic() + 30
        while server.app.state.convrag.gate._sem._value and time.monotonic() < deadline:  # the first holds the slot
            time.sleep(0.02)
        second = client.post("/v1/chat/completions", json=body)
        assert second.status_code == 429 and second.headers["retry-after"] == "1"
        health = client.get("/api/health")  # other requests are served while the generation runs
        assert health.status_code == 200
        llm.release.set()
        thread.join(60)
        assert first["r"].status_code == 200


@pytest.fixture
def gov_files() -> list[tuple[str, bytes]]:
    return [("passports.md", PASSPORT.encode())]


def test_api_key_is_required_and_never_logged(tmp_path: Path, gov_files: list[tuple[str, bytes]],
                                              caplog: pytest.LogCaptureFixture) -> None:
    key = "sk-test-0123456789abcdef"
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", api_key=key)
    llm = ScriptedLLM(answer=["It costs 130 dollars [1]."])
    caplog.set_level("DEBUG")
    with ThreadServer(settings, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        assert client.get("/api/collections").status_code == 401
        assert client.get("/api/collections", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/v1/models").json()["error"]["code"] == "invalid_api_key"
        assert client.get("/").status_code == 200  # the page loads and asks for the key
        client.headers["Authorization"] = f"Bearer {key}"
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal cost?"})
        assert turn.status_code == 200
        assert key not in turn.text
        db = (Path(settings.data_dir) / "convrag.sqlite").read_bytes()
        assert key.encode() not in db
    assert key not in caplog.text


def test_binding_beyond_loopback_needs_a_key(tmp_path: Path) -> None:
    from convrag.errors import ConfigError
    from convrag.service import create_app

    with pytest.raises(ConfigError, match="without an API key"):
        create_app(ServiceSettings.load(data_dir=tmp_path, host="0.0.0.0"), llm=ScriptedLLM())
    create_app(ServiceSettings.load(data_dir=tmp_path, host="0.0.0.0", api_key="k"), llm=ScriptedLLM()).state.convrag.store.close()


def test_streaming_sends_the_answer_as_the_model_writes_it(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    from tests.helpers import StreamingScriptedLLM

    answer = "Renewal by mail costs 130 dollars for adults [1]."
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, StreamingScriptedLLM(answer=[answer])) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        openai = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
        chunks = list(openai.chat.completions.create(model="collection:gov", messages=question, stream=True))
        deltas = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
        assert len(deltas) == len(answer.split(" ")) and "".join(deltas) == answer
        final = chunks[-1]
        assert final.choices[0].finish_reason == "stop" and final.model_extra["convrag"]["answer"] == answer
        assert final.model_extra["convrag"]["citations"][0]["document_id"] == "passports"
        # a failure after the stream started arrives as an error event, and the slot is released
        follow_up = [*question, {"role": "assistant", "content": answer}, {"role": "user", "content": "And it?"}]
        response = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": follow_up, "stream": True})
        events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]" and json.loads(events[-2])["error"]["code"] == "internal_error"
        assert server.app.state.convrag.gate._sem._value == server.app.state.convrag.gate.limit


def test_answers_can_end_with_their_sources_for_clients_that_show_only_the_text(
        tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    cited = "Renewal by mail costs 130 dollars for adults [1]."
    uncited = "Renewal by mail costs 130 dollars for adults."  # cited by its wording once written
    llm = StreamingScriptedLLM(answer=[cited, uncited, "Processing takes 6 to 8 weeks [1]."],
                               rewrite=["How long does passport renewal by mail take?"])
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc", openai_sources=True), llm) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        openai = OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        question = [{"role": "user", "content": "How much does passport renewal by mail cost?"}]
        plain = openai.chat.completions.create(model="collection:gov", messages=question)
        (citation,) = plain.model_extra["convrag"]["citations"]
        assert plain.choices[0].message.content == f"{cited}\n\nSources:\n- [1] Passport renewal (gov) {citation['url']}".rstrip()
        chunks = list(openai.chat.completions.create(model="collection:gov", messages=question, stream=True, temperature=0.5))
        shown = "".join(c.choices[0].delta.content or "" for c in chunks)
        assert shown.startswith(uncited + "\n\nAs checked against the passages: " + cited + "\n\nSources:\n- [1] Passport renewal")
        assert chunks[-1].model_extra["convrag"]["answer"] == cited  # the extra field holds the answer alone
        # the client sends the answer back as it showed it: the next turn reads the answer as checked
        follow_up = [*question, {"role": "assistant", "content": shown}, {"role": "user", "content": "How long does it take?"}]
        assert openai.chat.completions.create(model="collection:gov", messages=follow_up).choices[0].message.content.startswith(
            "Processing takes 6 to 8 weeks [1].\n\nSources:")
        assert f"Assistant: {cited}\n" in llm.last_user_prompt("rewrite") and "Sources:" not in llm.last_user_prompt("rewrite")


@contextmanager
def slow_gov_server(tmp_path: Path, gov_files: list[tuple[str, bytes]], words: int) -> Iterator[tuple[ThreadServer, httpx.Client, SlowStreamingLLM]]:
    """A server whose model writes a ``words``-word answer slowly, over a "gov" collection."""
    llm = SlowStreamingLLM(words=words)
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), llm) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", gov_files)
        yield server, client, llm


def assert_stopped_and_freed(server: ThreadServer, llm: SlowStreamingLLM) -> None:
    """The answer was stopped before its end, and its generation slot is free again."""
    assert llm.stopped.wait(30), "the answer was not stopped"
    assert llm.written < llm.words
    gate = server.app.state.convrag.gate
    deadline = time.monotonic() + 10
    while gate._sem._value != gate.limit and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gate._sem._value == gate.limit


def test_a_stream_whose_client_goes_away_stops_and_frees_the_model(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """An OpenAI client's "stop" closes the connection; the answer went on to its end (6 s here, far
    longer for a real answer on 2 cores), holding the model, so the next question waited for it."""
    with slow_gov_server(tmp_path, gov_files, words=120) as (server, client, llm):
        body = {"model": "collection:gov", "stream": True,
                "messages": [{"role": "user", "content": "How much does passport renewal by mail cost?"}]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if '"content": "word"' in line:
                    break  # the first word arrived; the client stops reading and hangs up
        assert_stopped_and_freed(server, llm)
        # a client that reads to the end gets the whole answer
        whole = client.post("/v1/chat/completions", json=body)
        assert whole.text.rstrip().endswith("data: [DONE]") and llm.written == llm.words and '"finish_reason": "stop"' in whole.text


def test_a_plain_request_whose_client_gives_up_stops_and_frees_the_model(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """Without streaming, a client that gave up (its timeout, say) left the answer written to its
    end, holding the model and the generation slot while the next question waited."""
    with slow_gov_server(tmp_path, gov_files, words=200) as (server, client, llm):
        body = {"model": "collection:gov", "messages": [{"role": "user", "content": "How much does passport renewal by mail cost?"}]}
        llm.release.clear()  # the model is slow to start
        with pytest.raises(httpx.ReadTimeout):
            client.post("/v1/chat/completions", json=body, timeout=2)
        assert llm.waiting.is_set()
        time.sleep(1)  # the server looks at the connection every 0.25 s
        llm.release.set()
        assert_stopped_and_freed(server, llm)
        whole = client.post("/v1/chat/completions", json=body)  # a client that waits gets the whole answer
        assert whole.status_code == 200 and whole.json()["choices"][0]["message"]["content"] == llm.text


def test_stop_ends_a_conversation_turn_and_stores_nothing(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """There was no way to stop an answer: the web chat waited for its end, and a conversation's
    stream is written to its end even when its client goes away."""
    with slow_gov_server(tmp_path, gov_files, words=200) as (server, client, llm):
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        stop = f"/api/conversations/{conv['id']}/stop"
        assert client.post(stop).json() == {"stopped": False}  # nothing is being written
        assert client.post("/api/conversations/nope/stop").status_code == 404
        question = {"question": "How much does passport renewal by mail cost?", "stream": True}
        kinds = []
        with client.stream("POST", f"/api/conversations/{conv['id']}/messages", json=question) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    kinds.append(line[7:])
                    if kinds == ["token"]:
                        assert client.post(stop).json() == {"stopped": True}
        assert kinds[0] == "token" and kinds[-1] == "stopped" and "turn" not in kinds
        assert llm.stopped.is_set() and llm.written < llm.words
        assert client.get(f"/api/conversations/{conv['id']}").json()["turns"] == []
        # the conversation is free again, and a question asked without streaming can be stopped too
        # (once written, it is not stored)
        llm.release.clear()
        llm.waiting.clear()
        result: dict[str, httpx.Response] = {}
        asking = threading.Thread(target=lambda: result.update(r=client.post(f"/api/conversations/{conv['id']}/messages",
                                                                             json={"question": question["question"]})))
        asking.start()
        assert llm.waiting.wait(30)
        assert client.post(stop).json() == {"stopped": True}
        llm.release.set()
        asking.join(60)
        assert result["r"].status_code == 409 and result["r"].json()["error"]["code"] == "turn_stopped"
        assert client.get(f"/api/conversations/{conv['id']}").json()["turns"] == []


def test_a_conversation_turn_whose_client_goes_away_is_written_and_stored(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    """Unlike a stateless OpenAI request, a conversation keeps the turn: reopened, it shows the answer."""
    with slow_gov_server(tmp_path, gov_files, words=40) as (server, client, llm):
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        question = {"question": "How much does passport renewal by mail cost?", "stream": True}
        with client.stream("POST", f"/api/conversations/{conv['id']}/messages", json=question) as response:
            for line in response.iter_lines():
                if line.startswith("event: token"):
                    break
        deadline = time.monotonic() + 30
        while not (turns := client.get(f"/api/conversations/{conv['id']}").json()["turns"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not llm.stopped.is_set() and llm.written == llm.words
        assert [t["answer"] for t in turns] == [llm.text]


def test_upload_limits(tmp_path: Path) -> None:
    limits = Limits(max_upload_bytes=20_000, max_upload_files=2, max_body_bytes=2_000)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", limits=limits)
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        # said to a client, so that the web chat sends a large folder in parts within them
        assert client.get("/api/upload-limits").json() == {"max_upload_files": 2, "max_upload_bytes": 20_000}
        big = client.post("/api/collections/gov/documents", files=[("files", ("big.txt", b"x" * 30_000))])
        assert big.status_code == 413 and big.json()["error"]["code"] == "body_too_large"
        many = client.post("/api/collections/gov/documents", files=[("files", (f"{i}.txt", b"words")) for i in range(3)])
        assert many.status_code == 413 and many.json()["error"]["code"] == "too_many_files"
        # a body sent without Content-Length is counted while it is read
        chunked = client.post("/api/collections", headers={"content-type": "application/json"},
                              content=(b'{"name": "x", "description": "' + b"y" * 500 + b'"' if i == 0 else b" " * 500 for i in range(6)))
        assert chunked.status_code == 413 and chunked.json()["error"]["code"] == "body_too_large"
        assert client.get("/api/collections").json()[0]["documents"] == 0  # nothing half-applied
        assert list((Path(settings.data_dir) / "uploads").iterdir()) == []


def test_a_configured_pipeline_is_an_openai_model(tmp_path: Path, gov_files: list[tuple[str, bytes]]) -> None:
    from convrag.service.settings import PipelineConfig

    pipelines = {"support": PipelineConfig(collections=["gov", "faq"], strategy="last_turn", description="help desk")}
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", pipelines=pipelines)
    with ThreadServer(settings, ScriptedLLM(answer=["It costs 130 dollars [1]."] * 2)) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        for name in ("gov", "faq"):
            client.post("/api/collections", json={"name": name})
        upload(client, "gov", gov_files)
        models = {m["id"]: m["description"] for m in client.get("/v1/models").json()["data"]}
        assert models["support"] == "help desk" and {"collection:gov", "collection:faq"} <= set(models)
        reply = client.post("/v1/chat/completions", json={"model": "support", "messages": [
            {"role": "user", "content": "How much does renewal cost?"}]}).json()
        extra = reply["convrag"]
        assert extra["trace"]["strategy"]["strategy"] == "last_turn" and extra["trace"]["empty_collections"] == ["faq"]
        assert extra["citations"][0]["collection"] == "gov"
        both = client.post("/v1/chat/completions", json={"model": "collection:gov+faq", "messages": [
            {"role": "user", "content": "How much does renewal cost?"}]})
        assert both.status_code == 200 and both.json()["convrag"]["trace"]["strategy"]["strategy"] == "progressive"
        assert client.post("/v1/chat/completions", json={"model": "collection:gov+nope", "messages": [
            {"role": "user", "content": "q"}]}).status_code == 404
