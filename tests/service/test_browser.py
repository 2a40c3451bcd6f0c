"""The web chat end to end in a real headless Chromium (Debian's, driven by Playwright) against a
real server with the real local model: create a collection, upload documents, ask, see the
answer and a citation, open the cited passage and the decisions. A screenshot is saved."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from convrag.service import ServiceSettings

from .conftest import ThreadServer

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
        page.click("#send")
        answer = page.locator(".msg.assistant").first
        expect(answer).to_be_visible(timeout=300_000)
        assert "130" in answer.inner_text()
        citation = answer.locator(".cite").first
        expect(citation).to_be_visible()
        citation.click()
        expect(page.locator("#passage-panel")).to_be_visible()
        expect(page.locator("#passage-text")).to_contain_text("<script>window.pwned = 1</script>")  # shown as text
        assert page.evaluate("window.pwned") is None
        expect(page.locator("#passage-meta")).to_contain_text("[1] passports — collection gov")
        answer.locator(".trace-link").click()
        trace = page.locator("#trace-panel")
        expect(trace).to_contain_text("stage reached")
        expect(trace).to_contain_text("Passages kept")
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
