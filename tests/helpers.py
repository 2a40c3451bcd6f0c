"""Test helpers: the stand-ins (a scripted LLM, failing and slow retrievers) and small data
builders that several test modules share. Never shipped, never a default: the scripted LLM only
drives control-flow tests; everything else in the suite runs the real parts.
"""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from convrag.generate.answer import CITED_SYSTEM
from convrag.generate.answer import SYSTEM as ANSWER_SYSTEM
from convrag.llm.base import ChatMessage, Completion, GenerationParams
from convrag.merge.base import MergedResult
from convrag.strategies.prompts import REWRITE_SYSTEM, SUMMARY_SYSTEM
from convrag.types import Message, Passage, SourcedHit, Task

# data ------------------------------------------------------------------------------------------
TINY = [
    Passage("p1", "The Arizona Cardinals play their home games at State Farm Stadium in Glendale.", "Arizona Cardinals"),
    Passage("p2", "Passport renewal costs 130 dollars for adults applying by mail.", "Passports"),
    Passage("p3", "The Cardinals played the Los Angeles Rams in London in 2017.", "2017 Arizona Cardinals season"),
    Passage("p4", "Index funds track a market index and usually have low fees.", "Index funds"),
    Passage("p5", "IBM Cloud Object Storage keeps data in buckets with storage classes.", "Object Storage"),
    Passage("p6", "A fee waiver lets people with low income skip court filing fees.", "Fee waivers"),
]


def write_jsonl(path: Path, rows: list[object], compress: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_task(question: str, exchanges: list[tuple[str, str]] = (), task_id: str = "c1<::>9", domain: str = "clapnq") -> Task:  # type: ignore[assignment]
    history: list[Message] = []
    for user, agent in exchanges:
        history += [Message("user", user), Message("agent", agent)]
    return Task(task_id, "c1", len(exchanges) + 1, domain, question, tuple(history))


CARDINALS = [
    ("Tell me about the Arizona Cardinals.", "The Arizona Cardinals are an NFL team based in Glendale, Arizona. They were founded in Chicago in 1898."),
    ("What stadium do they play in?", "They play their home games at State Farm Stadium in Glendale, which has a retractable roof."),
    ("How do I renew a passport?", "You can renew a US passport by mail with form DS-82 if your old passport is undamaged."),
]


# a scripted LLM -----------------------------------------------------------------------------------
KINDS = {REWRITE_SYSTEM: "rewrite", SUMMARY_SYSTEM: "summary", ANSWER_SYSTEM: "answer", CITED_SYSTEM: "answer"}


class ScriptedLLM:
    backend = "scripted"
    model = "scripted"

    def __init__(self, rewrite=(), summary=(), answer=(), reformulate=()) -> None:  # type: ignore[no-untyped-def]
        self.queues = {"rewrite": deque(rewrite), "summary": deque(summary), "answer": deque(answer),
                       "reformulate": deque(reformulate), "unknown": deque()}
        self.requests: list[tuple[str, list[ChatMessage]]] = []
        self.decodings: list[GenerationParams] = []  # the decoding settings of each request, in order

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        system = messages[0]["content"]
        kind = KINDS.get(system) or ("reformulate" if system.startswith("You write search engine queries") else "unknown")
        self.requests.append((kind, messages))
        self.decodings.append(params)
        queue = self.queues[kind]
        if not queue:
            raise AssertionError(f"unexpected {kind} call")
        answer = queue.popleft()
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, Completion):  # scripted with more than its text (e.g. a finish reason)
            return answer
        return Completion(answer, sum(len(m["content"].split()) for m in messages), len(answer.split()), 0.5, self.model)

    def kinds(self) -> list[str]:
        return [k for k, _ in self.requests]

    def last_user_prompt(self, kind: str) -> str:
        return [m for k, m in self.requests if k == kind][-1][-1]["content"]


class HeldLLM(ScriptedLLM):
    """Answers only once ``release`` is set (or after 60 s), so that a test can act while an answer is
    being written; ``waiting`` is set when a call arrives."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answer=answers)
        self.release, self.waiting = threading.Event(), threading.Event()

    def complete(self, messages, params=None):  # type: ignore[no-untyped-def]
        self.waiting.set()
        self.release.wait(60)
        return super().complete(messages)


class StreamingScriptedLLM(ScriptedLLM):
    """A :class:`ScriptedLLM` that also streams: each answer word by word, then the completion."""

    def stream(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()):  # type: ignore[no-untyped-def]
        completion = self.complete(messages, params)
        words = completion.text.split(" ")
        for i, word in enumerate(words):
            yield word if i == 0 else " " + word
        yield completion


class SlowStreamingLLM(HeldLLM):
    """Streams a long answer a word every 50 ms, recording how many words it wrote and whether it
    was stopped before the end. Not held unless a test clears ``release``."""

    def __init__(self, words: int) -> None:
        self.text = " ".join(["word"] * (words - 1) + ["[1]."])
        super().__init__([self.text] * 5)
        self.release.set()
        self.words, self.written, self.stopped = words, 0, threading.Event()

    def stream(self, messages, params=None):  # type: ignore[no-untyped-def]
        completion = self.complete(messages, params)
        self.written = 0
        try:
            for i, word in enumerate(completion.text.split(" ")):
                time.sleep(0.05)
                self.written += 1
                yield word if i == 0 else " " + word
        except GeneratorExit:
            self.stopped.set()
            raise
        yield completion


# retrievers that fail ----------------------------------------------------------------------------
class Failing:
    name = "failing"

    def search(self, queries, k=10):  # type: ignore[no-untyped-def]
        raise RuntimeError("index file is corrupt")


class Slow:
    name = "slow"

    def search(self, queries, k=10):  # type: ignore[no-untyped-def]
        time.sleep(5)
        return [[] for _ in queries]


# the service -------------------------------------------------------------------------------------
PASSPORT = "# Passport renewal\n\nRenewing an adult passport by mail costs 130 dollars. Processing takes 6 to 8 weeks.\n"


def upload(client: Any, name: str, files: list[tuple[str, bytes]]) -> dict:
    """Upload files to a collection of a running service and wait for the indexing job."""
    from tests.service.conftest import wait_job

    response = client.post(f"/api/collections/{name}/documents", files=[("files", (f, data)) for f, data in files])
    assert response.status_code == 202, response.text
    return wait_job(client, response.json()["id"])


def merged_results(texts: list[str] | int, conflict: bool = False) -> list[MergedResult]:
    """Merged results over ``texts`` (or that many placeholder texts), alternating two collections;
    with ``conflict`` the first two are marked as conflicting with each other."""
    texts = [f"text {i}" for i in range(texts)] if isinstance(texts, int) else texts
    return [
        MergedResult(SourcedHit(f"c{i % 2}", f"p{i}", f"d{i}", t, f"T{i}", f"https://x/{i}", 1.0, i + 1), 0.1, 0.1, "r",
                     conflicts_with=(1 - i,) if conflict and i < 2 else ())
        for i, t in enumerate(texts)
    ]


#: two passages about storage plans, for tests of citations and support
PLANS = [
    "The Lite plan of Object Storage is free. It includes 25 GB of storage per month. Requests beyond the quota are refused.",
    "The Standard plan is billed per gigabyte stored. Archive storage is cheaper but slower to read.",
]


#: a library passage the two "indexed during a chat" tests add between the chat's turns
LIBRARY_FEES = Passage("f1", "Library cards cost 12 dollars a year for non-residents.", "Library fees")


def chat_with_indexing(source: Any, index_meanwhile: Callable[[], object]) -> None:
    """Two questions to ``convrag.cli.chat.chat_loop``, with ``index_meanwhile`` run between them
    (as another terminal would index), the second about :data:`LIBRARY_FEES`."""
    from convrag.cli.chat import chat_loop

    between = [lambda: None, index_meanwhile, lambda: None]
    inputs = iter(["How much is a passport renewal by mail?", "What does a library card cost for non-residents?", "/quit"])

    def read(prompt: str) -> str:
        between.pop(0)()
        return next(inputs)

    chat_loop(source, read)


class FakeEndpoint:
    """An HTTP server on 127.0.0.1 that answers every POST with ``respond(request body)``: a status,
    a content type and the reply's bytes. ``url`` is its address (append ``/v1`` for an OpenAI base
    URL); use it as a context manager, which stops it."""

    def __init__(self, respond: Callable[[bytes], tuple[int, str, bytes]]) -> None:
        from http.server import BaseHTTPRequestHandler, HTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                status, content_type, body = respond(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> FakeEndpoint:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class GarbageServer(FakeEndpoint):
    """Answers every POST ``status`` (200) with ``body`` as ``content_type``: what a sign-in proxy, a
    misconfigured gateway or a half-compatible server sends where a model API was expected."""

    def __init__(self, body: bytes, content_type: str, status: int = 200) -> None:
        super().__init__(lambda _request: (status, content_type, body))


# a web site ----------------------------------------------------------------------------------------
class _Site(http.server.SimpleHTTPRequestHandler):
    """A folder served as a site, with a redirect, and each request's path, User-Agent and Authorization recorded (in
    ``requests``, the list of the subclass :func:`served_site` makes for each site)."""

    requests: list[tuple[str, str, str]]

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        type(self).requests.append((self.path, self.headers.get("User-Agent", ""), self.headers.get("Authorization", "")))
        if self.path == "/docs/moved":  # a page moved out of the section
            self.send_response(301)
            self.send_header("Location", "/blog/moved.html")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


class Served(NamedTuple):
    """A site being served: its address ("http://127.0.0.1:PORT"), each request's path, User-Agent and
    Authorization, in order, and the folder it serves."""

    address: str
    requests: list[tuple[str, str, str]]
    root: Path


@contextlib.contextmanager
def served_site(tmp_path: Path) -> Iterator[Served]:
    """A small site served on 127.0.0.1 from a folder under ``tmp_path``: a docs section of pages linking
    to each other, a PDF, a page robots.txt disallows, a page outside the section, a redirect out of
    it, a missing page and a picture."""
    root = tmp_path / "site"
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "docs" / "private").mkdir()
    (root / "blog").mkdir()
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /docs/private/\n")
    (root / "docs" / "index.html").write_text(
        "<html><head><title>Harbour docs</title></head><body><nav><a href='guide/fees.html'>Fees</a> "
        "<a href='/docs/guide/winter.html#dates'>Winter</a> <a href='../blog/news.html'>Blog</a> "
        "<a href='https://example.com/'>Elsewhere</a> <a href='mailto:office@harbour.example'>Mail</a></nav>"
        "<main><h1>Harbour docs</h1><p>Welcome to the harbour's documentation.</p>"
        "<p><a href='manual.pdf'>The manual</a>, <a href='private/keys.html'>keys</a>, <a href='moved'>moved</a>, "
        "<a href='gone.html'>gone</a>, <a href='logo.svg'>logo</a>, <a href='guide/fees.html' rel='nofollow'>again</a></p>"
        "</main></body></html>")
    (root / "docs" / "guide" / "fees.html").write_text(
        "<html><head><title>Fees</title><link rel='canonical' href='/docs/guide/fees.html'></head><body>"
        "<h1>Fees</h1><p>A mooring costs 40 dollars a night.</p><a href='../index.html'>Home</a></body></html>")
    (root / "docs" / "guide" / "winter.html").write_text(
        "<html><head><title>Winter</title><meta name='robots' content='nofollow'></head><body><h1>Winter</h1>"
        "<p id='dates'>Winter berths close on 1 November.</p><a href='hidden.html'>hidden</a></body></html>")
    (root / "docs" / "guide" / "hidden.html").write_text("<p>Only a nofollow page links here.</p>")
    (root / "docs" / "private" / "keys.html").write_text("<p>The key code is 1234.</p>")
    (root / "blog" / "news.html").write_text("<p>Not in the docs section.</p>")
    (root / "blog" / "moved.html").write_text("<p>Moved out of the docs section.</p>")
    (root / "docs" / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    manual = Path(__file__).parent / "ingest" / "made_by_libreoffice" / "heatpump-manual.pdf"
    (root / "docs" / "manual.pdf").write_bytes(manual.read_bytes())
    handler = type("Site", (_Site,), {"requests": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}", handler.requests, root)
    finally:
        server.shutdown()
        server.server_close()
