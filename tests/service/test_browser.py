"""The web chat end to end in a real headless Chromium (Debian's, driven by Playwright) against a
real server: with the real local model, create a collection, upload documents, ask, watch the
answer stream in, see a citation, open the cited passage and the decisions (a screenshot is
saved); with scripted answers, manage documents and conversations and render Markdown safely;
and from a second origin, fail to change anything; and the answers' Markdown renderer on a page of its own."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from convrag.service import ServiceSettings
from tests.helpers import Served, SlowStreamingLLM, StreamingScriptedLLM, upload

from .conftest import ThreadServer, free_port, milvus_indexed_elsewhere, wait_job

CHROMIUM = os.environ.get("CONVRAG_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
PASSPORT = ("Passport renewal by mail costs 130 dollars for adults. Send form DS-82 with your old passport and a photo. "
            "<script>window.pwned = 1</script>")
FISHING = "<html><head><title>Fishing licenses</title></head><body><p>A fishing license costs 25 dollars a year.</p></body></html>"


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


def test_web_chat_end_to_end(tmp_path: Path, browser, local_llm) -> None:  # type: ignore[no-untyped-def]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "passports.txt").write_text(PASSPORT)
    (docs / "fishing.html").write_text(FISHING)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, local_llm) as server:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        page.fill("#collection-name", "gov")
        page.click("#create-collection button")
        expect(page.locator("#upload-target")).to_have_value("gov")
        page.set_input_files("#upload-files", [str(docs / "passports.txt"), str(docs / "fishing.html")])
        page.click("#upload button")
        expect(page.locator("#upload-status")).to_have_text("indexed 2 file(s)", timeout=120_000)
        page.check(".collection-choice[value=gov]")
        page.click("#new-chat")
        expect(page.locator("#chat-header")).to_contain_text("gov")
        page.fill("#question", "How much does passport renewal by mail cost?")
        # the answer streams: a draft with the first words appears before the stored turn replaces it. The
        # page records what the draft showed: an answer from the completion cache arrives at once, and its
        # draft lives for milliseconds, too briefly for a locator's polling to see it
        page.evaluate("""() => {
            window.drafted = [];
            new MutationObserver((records) => {
                for (const r of records) {
                    const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
                    if (node && node.classList.contains("streaming") && /\\w/.test(node.textContent)) window.drafted.push(node.textContent);
                }
            }).observe(document.getElementById("messages"), {subtree: true, childList: true, characterData: true});
        }""")
        page.click("#send")
        answer = page.locator(".msg.assistant:not(.streaming)").first
        expect(answer).to_be_visible(timeout=300_000)
        assert page.evaluate("window.drafted.length") > 0, "no streamed words were shown before the stored answer"
        assert "130" in answer.inner_text()
        citation = answer.locator(".cite").first
        expect(citation).to_be_visible()
        citation.click()
        expect(page.locator("#passage-panel")).to_be_visible()
        expect(page.locator("#passage-text")).to_contain_text("<script>window.pwned = 1</script>")  # shown as text
        assert page.evaluate("window.pwned") is None
        expect(page.locator("#passage-meta")).to_contain_text("[1] passports — collection gov")
        answer.get_by_role("button", name="Show decisions").click()
        trace = page.locator("#trace-panel")
        expect(trace).to_contain_text("stage reached")
        expect(trace).to_contain_text("Passages kept")
        expect(trace).to_contain_text("passage sentences (relevance")  # the compression's line
        expect(trace).to_contain_text("Timings")
        expect(page.locator("#conversations li")).to_have_count(1)
        shot = tmp_path / "web-chat.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        if os.environ.get("CONVRAG_SCREENSHOT_DIR"):
            target = Path(os.environ["CONVRAG_SCREENSHOT_DIR"])
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, target / shot.name)
        page.close()


def test_page_manages_documents_and_conversations_and_renders_markdown_safely(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    # grounded in the passage (else the decline gate replaces it), with markup that must stay inert
    markdown = ("**Fees** for passport renewal by mail:\n- adults pay 130 dollars [1]\n- send form DS-82 with your old passport "
                "and a photo <img src=x onerror=\"window.pwned=2\"> [link](javascript:alert(1))")
    llm = StreamingScriptedLLM(answer=[markdown, "Adults pay 130 dollars by mail [1].", "It depends."])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "passports.txt").write_text(PASSPORT)
    (docs / "fishing.html").write_text(FISHING)
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), llm) as server:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.on("dialog", lambda dialog: dialog.accept("Renewal fees") if dialog.type == "prompt" else dialog.accept())
        page.goto(server.url)
        # the name pattern is a valid expression for Chromium (an invalid one is ignored: nothing would mismatch)
        page.fill("#collection-name", "bad name!")
        assert page.eval_on_selector("#collection-name", "e => e.validity.patternMismatch")
        page.fill("#collection-name", "gov")
        assert not page.eval_on_selector("#collection-name", "e => e.validity.patternMismatch")
        page.click("#create-collection button")
        expect(page.locator("#upload-target")).to_have_value("gov")
        # an error is shown, then cleared by the next successful action
        page.click("#new-chat")
        expect(page.locator("#error")).to_have_text("tick at least one collection")
        page.set_input_files("#upload-files", [str(docs / "passports.txt"), str(docs / "fishing.html")])
        page.click("#upload button")
        expect(page.locator("#error")).to_have_text("")
        expect(page.locator("#upload-status")).to_have_text("indexed 2 file(s)", timeout=120_000)
        # documents: listed, one deleted
        page.locator("#collections li", has_text="gov").get_by_role("button", name="Documents").click()
        expect(page.locator("#documents-table tr")).to_have_count(2)
        page.check(".collection-choice[value=gov]")  # ticked before the delete's job redraws the collections
        page.locator("#documents-table tr", has_text="fishing.html").get_by_role("button", name="Delete").click()
        expect(page.locator("#documents-table tr")).to_have_count(1, timeout=120_000)
        expect(page.locator("#collections li", has_text="(1 doc, ")).to_have_count(1)  # the list was redrawn
        expect(page.locator(".collection-choice[value=gov]")).to_be_checked()
        # a conversation: Markdown answer with citations, nothing injected
        # asked while the conversation is still being created (its POST held back): the question waits for it
        held: list = []
        page.route("**/api/conversations", lambda route: held.append(route) if route.request.method == "POST"
                   else route.continue_())
        page.click("#new-chat")
        page.fill("#question", "How much does passport renewal cost?")
        page.click("#send")
        for _ in range(200):
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the new conversation's POST never reached the route"
        expect(page.locator("#error")).to_have_text("")
        expect(page.locator("#send")).to_be_disabled()  # a second click would ask the question twice
        held[0].continue_()
        page.unroute("**/api/conversations")
        answer = page.locator(".msg.assistant:not(.streaming)").first
        expect(answer.locator("strong")).to_have_text("Fees", timeout=60_000)
        expect(answer.locator("li")).to_have_count(2)
        expect(answer.locator("li .cite")).to_have_text("1")
        assert answer.locator("img").count() == 0 and page.evaluate("window.pwned") is None
        assert answer.locator("a").count() == 0  # a javascript: link is not a link
        expect(answer.locator(".when")).not_to_be_empty()
        assert answer.locator(".caution").count() == 0  # a cited answer carries no warning
        # regenerate, rename, export, delete
        answer.get_by_role("button", name="Regenerate").click()
        expect(page.locator(".msg.assistant:not(.streaming)").first).to_contain_text("Adults pay 130 dollars by mail", timeout=60_000)
        expect(page.locator(".msg.assistant")).to_have_count(1)
        page.click("#rename-chat")
        expect(page.locator("#chat-title")).to_contain_text("Renewal fees")
        with page.expect_download() as download:
            page.click("#export-md")
        assert "Adults pay 130 dollars by mail" in Path(download.value.path()).read_text()
        # an answer with a warning in its trace says so beside the answer; asked with Enter (Shift+Enter is a new line)
        page.fill("#question", "Does renewing an adult passport by mail cost 130 dollars?")
        page.press("#question", "Shift+Enter")
        expect(page.locator("#question")).to_have_value("Does renewing an adult passport by mail cost 130 dollars?\n")
        expect(page.locator(".msg.user")).to_have_count(1)
        page.press("#question", "Enter")
        expect(page.locator(".msg.assistant:not(.streaming)").nth(1).locator(".caution")).to_have_text(
            "Caution: answer cites no passage", timeout=60_000)
        expect(page.locator("#question")).to_have_value("")
        with page.expect_download() as download:
            page.click("#export-md")
        assert "*Caution: answer cites no passage*" in Path(download.value.path()).read_text()  # the export says it too
        page.click("#delete-chat")
        expect(page.locator("#conversations li")).to_have_count(0)
        page.close()


def ask_in_a_new_chat(browser, url: str, collections: list[str], question: str, height: int = 900):  # type: ignore[no-untyped-def]
    """A page of the web chat at ``url`` that ticked ``collections``, started a conversation and asked ``question``."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    page.goto(url)
    for name in collections:
        page.check(f".collection-choice[value={name}]")
    page.click("#new-chat")
    page.fill("#question", question)
    page.click("#send")
    return page


def gov_and_boats(server: ThreadServer) -> httpx.Client:
    """Two collections of one document each, "gov" and "boats"; a client of the server's API."""
    api = httpx.Client(base_url=server.url, timeout=120)
    for name, text in (("gov", PASSPORT), ("boats", "Mooring in the harbour costs 40 dollars a night.")):
        assert api.post("/api/collections", json={"name": name}).status_code == 201
        assert upload(api, name, [(f"{name}.txt", text.encode())])["status"] == "succeeded"
    return api


def test_a_collection_that_could_not_be_searched_is_said_beside_the_answer(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """A turn over two collections, one of them damaged on disk: the page said nothing of the
    collection the answer could not draw from, not even in its decisions."""

    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, StreamingScriptedLLM(answer=["Adults pay 130 dollars by mail [1]."])) as server:
        api = gov_and_boats(server)
        version = api.get("/api/collections/boats").json()["version"]
        (tmp_path / "svc" / "collections" / "boats" / version / "dense" / "embeddings.npy").write_bytes(b"\x00" * 64)
        page = ask_in_a_new_chat(browser, server.url, ["gov", "boats"], "How much does passport renewal by mail cost?")
        answer = page.locator(".msg.assistant:not(.streaming)").first
        expect(answer.locator(".caution")).to_contain_text("Caution: the collection boats could not be searched (CollectionDamaged: ",
                                                           timeout=60_000)
        answer.get_by_role("button", name="Show decisions").click()
        expect(page.locator("#trace-body tr.dropped", has_text="not searched: boats")).to_contain_text("rebuild the collection")
        expect(page.locator("#trace-body tr", has_text="search time")).to_contain_text("gov")
        # the collection list says it too, where the collection is chosen, until an upload builds it again
        page.reload()
        damaged = page.locator("#collections li", has_text="boats").locator(".problem")
        expect(damaged).to_contain_text("cannot be searched: collection 'boats': its dense index is damaged")
        assert upload(api, "boats", [("slip.txt", b"A boat slip rents for 300 dollars a month.")])["status"] == "succeeded"
        page.reload()
        expect(page.locator("#collections li", has_text="boats")).to_contain_text("2 docs")
        expect(page.locator("#collections .problem")).to_have_count(0)
        page.close()


def test_a_turn_the_gate_declined_says_where_its_floor_is_set_and_can_be_answered_anyway(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The decisions said "best cosine 0.37 < 0.45" and nothing of the setting that moves the floor,
    and a user who found the passages did hold the answer could not have it."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", decline_below=0.99)  # every turn under it
    llm = StreamingScriptedLLM(answer=["Adults pay 130 dollars by mail [1]."])  # asked only once the gate is off
    with ThreadServer(settings, llm) as server:
        gov_and_boats(server)
        page = ask_in_a_new_chat(browser, server.url, ["gov"], "How much does passport renewal by mail cost?")
        answer = page.locator(".msg.assistant:not(.streaming)").first
        expect(answer).to_contain_text("I do not have specific information", timeout=60_000)
        answer.get_by_role("button", name="Show decisions").click()
        expect(page.locator("#trace-body")).to_contain_text("< 0.99")
        expect(page.locator("#trace-body")).to_contain_text("the floor is the server's decline_below setting (or its pipeline's)")
        assert llm.requests == []
        # "Answer anyway": the same question with the gate off, in place of the decline
        answer.get_by_role("button", name="Answer anyway").click()
        expect(page.locator(".msg.assistant:not(.streaming)").first).to_contain_text("Adults pay 130 dollars by mail", timeout=60_000)
        expect(page.locator(".msg.assistant")).to_have_count(1)
        expect(page.get_by_role("button", name="Answer anyway")).to_have_count(0)
        assert llm.kinds() == ["answer"]
        page.close()


def test_the_ticks_are_the_open_conversation_s_collections_and_change_them(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The ticks showed the choice for a new conversation whatever was open, so a conversation over
    "gov" showed no tick or another's, and its collections could not be changed."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    answers = ["Mooring in the harbour costs 40 dollars a night [1]."] * 2
    with ThreadServer(settings, StreamingScriptedLLM(answer=answers)) as server:
        api = gov_and_boats(server)
        harbour = api.post("/api/conversations", json={"collections": ["boats"], "title": "Harbour"}).json()
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        page.check(".collection-choice[value=gov]")
        page.click("#new-chat")
        expect(page.locator("#chat-title")).to_contain_text("— gov (")
        page.locator("#conversations li", has_text="Harbour").click()
        expect(page.locator("#chat-title")).to_have_text("Harbour — boats (progressive)")
        expect(page.locator(".collection-choice[value=boats]")).to_be_checked()
        expect(page.locator(".collection-choice[value=gov]")).not_to_be_checked()
        # a change is shown, and applied by the next question asked in the conversation
        page.check(".collection-choice[value=gov]")
        expect(page.locator("#chat-title")).to_have_text("Harbour — boats (progressive) · next question searches: boats, gov")
        assert api.get(f"/api/conversations/{harbour['id']}").json()["collections"] == ["boats"]
        page.fill("#question", "How much is mooring in the harbour?")
        page.click("#send")
        expect(page.locator(".msg.assistant:not(.streaming)")).to_contain_text("40 dollars a night", timeout=60_000)
        expect(page.locator("#chat-title")).to_have_text("Harbour — boats, gov (progressive)")
        assert api.get(f"/api/conversations/{harbour['id']}").json()["collections"] == ["boats", "gov"]
        # "New conversation" takes the ticks, and leaves the open one as it was
        page.uncheck(".collection-choice[value=boats]")
        page.click("#new-chat")
        expect(page.locator("#chat-title")).to_have_text("New conversation — gov (progressive)")
        assert api.get(f"/api/conversations/{harbour['id']}").json()["collections"] == ["boats", "gov"]
        page.uncheck(".collection-choice[value=gov]")  # nothing ticked: said when asked, nothing sent
        page.fill("#question", "How much is mooring?")
        page.click("#send")
        expect(page.locator("#error")).to_have_text("tick at least one collection for this conversation to search")
        expect(page.locator(".msg")).to_have_count(0)
        page.close()


def test_the_strategy_is_chosen_as_the_collections_are(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The page had no way to choose how follow-ups are rewritten: every conversation it made used
    the server's default, and an open conversation's strategy could not be changed."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, StreamingScriptedLLM(answer=["Mooring in the harbour costs 40 dollars a night [1]."])) as server:
        api = gov_and_boats(server)
        harbour = api.post("/api/conversations", json={"collections": ["boats"], "title": "Harbour"}).json()
        server.app.state.convrag.store.add_conversation("Old", ["boats"], "retired_strategy")  # no longer offered
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        # every strategy the server offers, its default chosen, what the chosen one does said under it
        offered = api.get("/api/strategies").json()["strategies"]
        expect(page.locator("#strategy option")).to_have_count(len(offered))
        expect(page.locator("#strategy")).to_have_value("progressive")
        expect(page.locator("#strategy option[value=full_rewrite]")).to_have_text("full_rewrite (calls the model)")
        expect(page.locator("#strategy option[value=last_turn]")).to_have_text("last_turn")
        page.select_option("#strategy", "last_turn")
        about = next(s["description"] for s in offered if s["name"] == "last_turn")
        expect(page.locator("#strategy-about")).to_have_text(about[0].upper() + about[1:])
        # "New conversation" takes it
        page.check(".collection-choice[value=gov]")
        page.click("#new-chat")
        expect(page.locator("#chat-title")).to_have_text("New conversation — gov (last_turn)")
        # an open conversation shows its own; a change is shown, and applied by its next question
        page.locator("#conversations li", has_text="Harbour").click()
        expect(page.locator("#strategy")).to_have_value("progressive")
        page.select_option("#strategy", "last_turn")
        expect(page.locator("#chat-title")).to_have_text("Harbour — boats (progressive) · next question's strategy: last_turn")
        assert api.get(f"/api/conversations/{harbour['id']}").json()["strategy"] == "progressive"
        page.fill("#question", "How much is mooring in the harbour?")
        page.click("#send")
        expect(page.locator(".msg.assistant:not(.streaming)")).to_contain_text("40 dollars a night", timeout=60_000)
        expect(page.locator("#chat-title")).to_have_text("Harbour — boats (last_turn)")
        stored = api.get(f"/api/conversations/{harbour['id']}").json()
        assert stored["strategy"] == "last_turn" and stored["turns"][0]["trace"]["strategy"]["strategy"] == "last_turn"
        # a conversation whose strategy the server no longer offers shows it as such, not another one
        page.locator("#conversations li", has_text="Old").click()
        expect(page.locator("#strategy")).to_have_value("retired_strategy")
        expect(page.locator("#strategy option[value=retired_strategy]")).to_have_text("retired_strategy (no longer offered)")
        expect(page.locator("#chat-title")).to_have_text("Old — boats (retired_strategy)")
        page.locator("#conversations li", has_text="Harbour").click()
        expect(page.locator("#strategy option[value=retired_strategy]")).to_have_count(0)
        page.close()


def test_creating_a_collection_indexed_elsewhere_in_milvus_says_it_was_taken_on(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus",
                                    milvus_uri=milvus_indexed_elsewhere(tmp_path / "shared-milvus.db"))
    with ThreadServer(settings, StreamingScriptedLLM(answer=[])) as server:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        expect(page.locator("#collections li")).to_have_count(0)
        page.fill("#collection-name", "harbour")
        page.click("#create-collection button")
        expect(page.locator("#collection-status")).to_have_text(
            "harbour: taken on as convrag index made it (1 document, 1 passage, all-MiniLM-L6-v2); uploads add to it")
        expect(page.locator("#collections li", has_text="harbour")).to_contain_text("(1 doc, 1 passage)")
        page.locator("#collections li", has_text="harbour").get_by_role("button", name="Documents").click()
        row = page.locator("#documents-table tr", has_text="moorings")  # no uploaded file: named, not a download link
        expect(row.locator("span[title='indexed by convrag index: no uploaded file']")).to_have_text("moorings")
        expect(row.locator("a")).to_have_count(0)
        page.fill("#collection-name", "fresh")  # a new one says nothing
        page.click("#create-collection button")
        expect(page.locator("#collections li", has_text="fresh")).to_have_count(1)
        expect(page.locator("#collection-status")).to_have_text("")
        page.close()


def test_a_taken_on_collection_is_updated_from_convrag_index_in_the_page(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from convrag.cli.main import app

    folder, store = tmp_path / "handbook", tmp_path / "indexes"
    folder.mkdir()
    (folder / "parking.md").write_text("# Parking\n\nA parking permit costs 40 dollars a month.\n")
    assert CliRunner().invoke(app, ["index", str(folder), "-c", "handbook", "--store", str(store)]).exit_code == 0
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", indexed_store=store)
    with ThreadServer(settings, StreamingScriptedLLM(answer=[])) as server:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        page.fill("#collection-name", "handbook")
        page.click("#create-collection button")
        expect(page.locator("#collection-status")).to_have_text(
            "handbook: taken on as convrag index made it (1 document, 1 passage, all-MiniLM-L6-v2); uploads add to it")
        page.fill("#collection-name", "fresh")
        page.click("#create-collection button")
        page.locator("#collections li", has_text="fresh").get_by_role("button", name="Documents").click()
        expect(page.locator("#take-on-again")).to_be_hidden()  # nothing of its name was built by convrag index
        (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lunch from noon to two.\n")
        assert CliRunner().invoke(app, ["index", str(folder), "-c", "handbook", "--store", str(store)]).exit_code == 0
        page.locator("#collections li", has_text="handbook").get_by_role("button", name="Documents").click()
        page.click("#take-on-again")
        expect(page.locator("#upload-status")).to_have_text("brought in what convrag index built", timeout=120_000)
        expect(page.locator("#documents-table tr")).to_have_count(2)
        expect(page.locator("#collections li", has_text="handbook")).to_contain_text("(2 docs, 2 passages)")
        page.close()


@contextlib.contextmanager
def _upload_page(tmp_path: Path, browser, name: str, **settings: object):  # type: ignore[no-untyped-def]
    """A server with scripted answers and an empty collection ``name``, and the chat page open on it,
    ready to upload to it; yields the server, an API client and the page."""
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc", **settings), StreamingScriptedLLM()) as server:
        api = httpx.Client(base_url=server.url, timeout=120)
        assert api.post("/api/collections", json={"name": name}).status_code == 201
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        expect(page.locator("#upload-target")).to_have_value(name)
        yield server, api, page


def test_a_sites_pages_are_read_from_the_web_in_the_page(tmp_path: Path, browser, served: Served) -> None:  # type: ignore[no-untyped-def]
    """A web address and "the pages under it" ticked read a site's section into the chosen collection; what
    was not read is said beside the result, and the pages are listed by their addresses. An intranet's
    header typed in goes with every request to the site (the page had no field for it)."""
    with _upload_page(tmp_path, browser, "harbour", allow_private_web=True) as (_, api, page):
        page.fill("#web-address", f"{served.address}/docs/")
        page.check("#web-crawl")
        page.fill("#web-header", "Authorization: Bearer s3cret-token")
        page.click("#from-web button")
        expect(page.locator("#upload-status")).to_contain_text(
            f"read 4 page(s) from {served.address}/docs/; skipped {served.address}/docs/private/keys.html: disallowed by the "
            "site's robots.txt", timeout=120_000)
        page.locator("#collections li", has_text="harbour").get_by_role("button", name="Documents").click()
        expect(page.locator("#documents-table tr")).to_have_count(4)
        fees = page.locator("#documents-table a", has_text=f"{served.address}/docs/guide/fees.html")
        expect(fees).to_have_attribute("href", f"{served.address}/docs/guide/fees.html")  # the page, not its copy
        assert len(api.get("/api/collections/harbour").json()["documents_list"]) == 4
        assert served.requests and {auth for _, _, auth in served.requests} == {"Bearer s3cret-token"}
        assert "s3cret-token" not in api.get("/api/jobs").text
        page.fill("#web-header", "Authorization")  # no value: the server's 422 is said in the page
        page.click("#from-web button")
        expect(page.locator("#error")).to_contain_text("header", timeout=10_000)
        page.fill("#web-header", "")
        (served.root / "docs" / "guide" / "winter.html").unlink()  # read again: the page gone from the site goes
        page.click("#from-web button")
        expect(page.locator("#upload-status")).to_contain_text(
            f"read 3 page(s) from {served.address}/docs/; removed 1 page(s) no longer there", timeout=120_000)
        expect(page.locator("#documents-table tr")).to_have_count(3)
        page.close()


def test_files_dropped_on_the_page_are_uploaded(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Dropping a file on the page made the browser open it in place of the chat; only the file
    picker uploaded. Files of other types dropped with the documents are left out and named."""
    with _upload_page(tmp_path, browser, "gov") as (server, api, page):
        dropped = page.evaluate_handle("""() => {
            const data = new DataTransfer();
            data.items.add(new File(["Passport renewal by mail costs 130 dollars."], "passports.txt", {type: "text/plain"}));
            data.items.add(new File(["A fishing license costs 25 dollars a year."], "fishing.txt", {type: "text/plain"}));
            data.items.add(new File(["<svg/>"], "logo.svg", {type: "image/svg+xml"}));  // dropped with the documents
            return data;
        }""")
        page.dispatch_event("#messages", "dragover", {"dataTransfer": dropped})
        expect(page.locator("body")).to_have_class("dropping")
        page.dispatch_event("#messages", "drop", {"dataTransfer": dropped})
        # the picture is named and left out; it made the server refuse the whole upload
        expect(page.locator("#upload-status")).to_have_text("indexed 2 file(s); not uploaded, not a type convrag reads: logo.svg",
                                                          timeout=120_000)
        expect(page.locator("body")).not_to_have_class("dropping")
        assert page.url.startswith(server.url)  # still the chat, not the file
        assert sorted(d["original"] for d in api.get("/api/collections/gov").json()["documents_list"]) == ["fishing.txt", "passports.txt"]
        page.close()


def test_a_folder_is_uploaded_whole_with_its_paths(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """A folder dropped on the page came as one nameless file, "not a type convrag reads", and the
    picker took files only. A folder picked or dropped is walked, subfolders too, hidden ones left
    out, and each file goes with its path, so that two index.md stay two documents."""
    docs = tmp_path / "docs"
    for folder, text in (("boats", "Boats pay 5 dollars a night."), ("kayaks", "Kayaks pay 2 dollars a night.")):
        (docs / folder).mkdir(parents=True)
        (docs / folder / "index.md").write_text(f"# {folder.title()}\n\n{text}\n")
    (docs / "logo.svg").write_bytes(b"<svg/>")
    (docs / ".git").mkdir()
    (docs / ".git" / "notes.md").write_text("# Not a document\n\nA version control file.\n")
    with _upload_page(tmp_path, browser, "harbour") as (_, api, page):
        page.set_input_files("#upload-folder", str(docs))
        expect(page.locator("#upload-status")).to_have_text("indexed 2 file(s); not uploaded, not a type convrag reads: docs/logo.svg",
                                                          timeout=120_000)
        documents = api.get("/api/collections/harbour").json()["documents_list"]
        assert sorted(d["original"] for d in documents) == ["docs/boats/index.md", "docs/kayaks/index.md"]
        # a dropped folder is read through the browser's file system entries, a batch of a folder's
        # entries at a time until an empty one; a test cannot drop a real folder, so entries stand in
        walked = page.evaluate("""() => {
            const file = (name, text) => ({name, isFile: true, isDirectory: false, file: (done) => done(new File([text], name))});
            const folder = (name, children) => ({name, isFile: false, isDirectory: true, createReader: () => {
                const batches = [children.slice(0, 2), children.slice(2), []];
                return {readEntries: (done) => done(batches.shift())};
            }});
            const dropped = [folder("docs", [file("a.md", "A"), folder("boats", [file("index.md", "B")]), file("b.md", "C"),
                                             folder(".git", [file("HEAD", "x")]), file(".DS_Store", "x")]), file("top.txt", "T")];
            return walkEntries(dropped).then((found) => found.map((f) => [f.path, f.file.name]));
        }""")
        assert walked == [["docs/a.md", "a.md"], ["docs/boats/index.md", "index.md"], ["docs/b.md", "b.md"], ["top.txt", "top.txt"]]
        page.close()


def test_a_folder_larger_than_one_upload_goes_in_parts(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """One upload request over the server's limits (2,000 files, 50 MB by default) is refused whole, so a
    large folder was not uploaded at all. The page sends it in parts within the limits, each indexed before
    the next, and names a file larger than one request may be."""
    from convrag.service.settings import Limits

    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(5):
        (docs / f"berth-{n}.md").write_text(f"# Berth {n}\n\nBerth {n} costs {10 + n} dollars a night.\n")
    (docs / "big.md").write_text("# Big\n\n" + "Boats pay. " * 1000)
    with _upload_page(tmp_path, browser, "harbour", limits=Limits(max_upload_files=2, max_upload_bytes=6_000)) as (_, api, page):
        page.set_input_files("#upload-folder", str(docs))
        expect(page.locator("#upload-status")).to_have_text(
            "indexed 5 file(s) in 3 of 3 uploads; not uploaded, larger than one upload may be (6 KB): docs/big.md", timeout=120_000)
        documents = api.get("/api/collections/harbour").json()["documents_list"]
        assert sorted(d["original"] for d in documents) == [f"docs/berth-{n}.md" for n in range(5)]
        page.close()


def test_a_folders_files_that_cannot_be_indexed_are_named_and_the_rest_goes_in(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """One empty file or one picture named .pdf refused the whole upload it was sent in, and a refused or
    failed part stopped the parts after it: of a folder of documents, none or only some went in. They
    are now left out and named with their reasons, in whichever part they fall, the last included."""
    from convrag.service.settings import Limits

    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"berth-{n}.md").write_text(f"# Berth {n}\n\nBerth {n} costs {10 + n} dollars a night.\n")
    (docs / "empty.md").write_text("")
    (docs / "zz-photo.pdf").write_bytes(b"\x89PNG\r\n\x1a\n not a PDF")
    (docs / "zz-scan.pdf").write_bytes(b"\x89PNG\r\n\x1a\n not a PDF either")
    with _upload_page(tmp_path, browser, "harbour", limits=Limits(max_upload_files=2)) as (_, api, page):
        page.set_input_files("#upload-folder", str(docs))
        expect(page.locator("#upload-status")).to_have_text(re.compile(
            r"indexed 3 file\(s\) in 3 of 3 uploads; not uploaded, cannot be indexed: docs/empty.md \(empty file\), "
            r"docs/zz-photo.pdf \(not a .pdf file\), docs/zz-scan.pdf \(not a .pdf file\)"), timeout=120_000)
        expect(page.locator("#error")).to_have_text("")
        documents = api.get("/api/collections/harbour").json()["documents_list"]
        assert sorted(d["original"] for d in documents) == [f"docs/berth-{n}.md" for n in range(3)]
        page.close()


def test_stop_ends_the_answer_being_written_and_keeps_the_question(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The page had no Stop: a long or unwanted answer held the model (and the conversation) to its end."""
    llm = SlowStreamingLLM(words=400)  # 20 s: far longer than the test takes to stop it
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, llm) as server:
        api = httpx.Client(base_url=server.url, timeout=120)
        assert api.post("/api/collections", json={"name": "gov"}).status_code == 201
        assert upload(api, "gov", [("gov.txt", PASSPORT.encode())])["status"] == "succeeded"
        other = api.post("/api/conversations", json={"collections": ["gov"], "title": "Another one"}).json()
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        expect(page.locator("#stop")).to_be_hidden()
        page.check(".collection-choice[value=gov]")
        page.click("#new-chat")
        question = "How much does passport renewal by mail cost?"
        page.fill("#question", question)
        page.click("#send")
        expect(page.locator(".msg.streaming")).to_contain_text("word word", timeout=60_000)
        # another conversation opened meanwhile (the server is asked to read its next prompt ahead): Stop
        # still stops the answer being written, not that one
        with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(f"/api/conversations/{other['id']}/read-ahead")):
            page.locator("#conversations li", has_text="Another one").click()
        expect(page.locator("#chat-title")).to_contain_text("Another one")
        page.click("#stop")
        expect(page.locator("#error")).to_have_text("Stopped: the answer was not kept.", timeout=30_000)
        assert llm.stopped.is_set() and llm.written < llm.words
        expect(page.locator(".msg")).to_have_count(0)  # neither the draft nor the question stays in the conversation
        expect(page.locator("#question")).to_have_value(question)  # the question is back in the box
        expect(page.locator("#stop")).to_be_hidden()
        expect(page.locator("#send")).to_be_enabled()
        assert [c["turn_count"] for c in api.get("/api/conversations").json()] == [0, 0]
        assert other["id"] in [c["id"] for c in api.get("/api/conversations").json()]
        page.close()


def test_an_answer_being_written_leaves_a_reader_who_scrolled_up_where_they_are(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Each token scrolled the chat to its end: a reader who scrolled up to an earlier answer while a long
    one was written was pulled down a word at a time. At the end, the chat follows the answer."""
    llm = SlowStreamingLLM(words=400)
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), llm) as server:
        api = httpx.Client(base_url=server.url, timeout=120)
        assert api.post("/api/collections", json={"name": "gov"}).status_code == 201
        assert upload(api, "gov", [("gov.txt", PASSPORT.encode())])["status"] == "succeeded"
        page = ask_in_a_new_chat(browser, server.url, ["gov"], "How much does passport renewal by mail cost?", height=400)
        messages = page.locator("#messages")

        def wait_until(condition: Callable[[], bool]) -> None:  # the page's policy allows no script from a string
            for _ in range(600):
                if condition():
                    return
                page.wait_for_timeout(100)
            raise AssertionError("the answer did not grow")

        wait_until(lambda: messages.evaluate("m => m.scrollHeight > m.clientHeight + 100"))
        assert messages.evaluate("m => m.scrollHeight - m.scrollTop - m.clientHeight") < 40  # following the answer
        messages.evaluate("m => { m.scrollTop = 0; }")
        shown = len(page.locator(".msg.streaming").text_content().split())
        wait_until(lambda: len(page.locator(".msg.streaming").text_content().split()) > shown + 20)
        assert messages.evaluate("m => m.scrollTop") == 0
        page.click("#stop")
        expect(page.locator("#error")).to_have_text("Stopped: the answer was not kept.", timeout=30_000)
        page.close()


@pytest.mark.parametrize("width", [390, 800, 1400])
def test_the_chat_has_room_in_a_narrow_window(tmp_path: Path, browser, width: int) -> None:  # type: ignore[no-untyped-def]
    """Three fixed columns (260 + 380 px) left the chat a sliver in a half-screen window and nothing
    on a phone: the question box was a few pixels wide."""
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), StreamingScriptedLLM()) as server:
        page = browser.new_page(viewport={"width": width, "height": 800})
        page.goto(server.url)
        page.locator("#question").scroll_into_view_if_needed()
        box = page.locator("#question").bounding_box()
        assert box is not None and box["width"] >= min(width, 1400 - 260 - 380) * 0.6, box
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the side
        page.close()


def test_a_page_from_another_origin_cannot_change_anything(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The cross-site upload of the review: a page on another origin posts a file (no-cors fetch
    and a self-submitting form) to the server on 127.0.0.1. Nothing may reach the collection."""
    with ThreadServer(ServiceSettings.load(data_dir=tmp_path / "svc"), StreamingScriptedLLM()) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        client.post("/api/collections", json={"name": "gov"})
        wait_job(client, client.post("/api/collections/gov/documents", files=[("files", ("passports.md", b"# P\n\nReal."))]).json()["id"])
        site = tmp_path / "attacker"
        site.mkdir()
        (site / "index.html").write_text(f"""<!doctype html><html><body>
<form id="f" method="post" enctype="multipart/form-data" action="{server.url}/api/collections/gov/documents" target="sink">
<input type="hidden" name="x" value="y"></form><iframe name="sink"></iframe>
<script>
const data = new FormData();
data.append("files", new Blob(["# P\\n\\nForged text."], {{type: "text/markdown"}}), "passports.md");
fetch("{server.url}/api/collections/gov/documents", {{method: "POST", mode: "no-cors", body: data}})
  .then(() => {{ document.body.dataset.sent = "fetch"; document.getElementById("f").submit(); }})
  .catch((e) => {{ document.body.dataset.sent = "error " + e; }});
</script></body></html>""")
        port = free_port()
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        try:
            page = browser.new_page()
            page.goto(f"http://localhost:{port}/index.html")  # another origin: other host name and port
            expect(page.locator("body")).to_have_attribute("data-sent", "fetch", timeout=30_000)
            page.wait_for_timeout(1500)  # let the form submission land
            page.close()
        finally:
            attacker.shutdown()
        jobs = client.get("/api/jobs").json()
        assert len(jobs) == 1  # only the upload made above
        assert client.get("/api/collections/gov/documents/passports/file").text == "# P\n\nReal."



def rendered(browser, markdown: str, summary: str) -> object:  # type: ignore[no-untyped-def]
    """``summary`` (a JavaScript function of the element) of ``markdown`` as the web chat renders an answer."""
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(Path(__file__).parents[2] / "src/convrag/service/static/markdown.js"))
        return page.evaluate(f"""markdown => {{
            const box = document.createElement("div");
            box.append(Markdown.render(markdown));
            return ({summary})(box);
        }}""", markdown)
    finally:
        page.close()


def test_a_numbered_list_parted_by_a_blank_line_goes_on_counting(browser) -> None:  # type: ignore[no-untyped-def]
    """A model writes steps as a loose list ("1. ..." / blank line / "2. ..."): each part was an <ol> of its
    own, so the page numbered the steps 1, 1, 1."""
    steps = rendered(browser, "To renew:\n\n1. Fill in form DS-82.\n\n2. Add a photo.\nKeep a copy.\n3. Mail both.",
                     "box => [...box.querySelectorAll('ol')].map(ol => [ol.start, ol.children.length])")
    assert steps == [[1, 1], [2, 1], [3, 1]]


def test_underscores_inside_a_word_are_no_emphasis(browser) -> None:  # type: ignore[no-untyped-def]
    """"max_connections and min_idle_time" (setting names, as IBM Cloud's documents hold them) was shown as
    "maxconnections and minidle_time" with "connections and min" in italics."""
    text, emphasised = rendered(browser, "Set max_connections and min_idle_time, then _restart_ it.",
                                "box => [box.textContent, [...box.querySelectorAll('em')].map(e => e.textContent)]")
    assert text == "Set max_connections and min_idle_time, then restart it." and emphasised == ["restart"]
