"""convrag.ingest.web against a real HTTP server on 127.0.0.1 serving a small site from a folder."""

from __future__ import annotations

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import web
from convrag.ingest.web import crawl, is_address
from tests.helpers import Served


def test_a_sites_section_is_crawled_breadth_first_within_its_folder_as_a_guest(served: Served) -> None:
    """The start page's links are followed to the pages under its folder, one at a time, each read as the file it
    is with its address kept; robots.txt, a page's nofollow, other sections and sites, a redirect out of the
    section, a missing page and a type convrag does not read are each named or passed by, and nothing else."""
    site = served.address
    skipped: list[str] = []
    documents = list(crawl(f"{site}/docs/", skipped, delay=0))
    assert [(d.doc_id, d.title, d.url) for d in documents] == [
        ("index", "Harbour docs", f"{site}/docs/"),
        ("guide/fees", "Fees", f"{site}/docs/guide/fees.html"),  # its canonical address, made whole
        ("guide/winter", "Winter", f"{site}/docs/guide/winter.html"),
        ("manual.pdf", "Solenne HX-9 Air-to-Water Heat Pump: Owner\u2019s Manual", f"{site}/docs/manual.pdf"),
    ]
    assert documents[0].text.split("\n") == ["Harbour docs", "Welcome to the harbour's documentation.",
                                             "The manual, keys, moved, gone, logo, again"]  # its menu is no text
    assert "A mooring costs 40 dollars a night." in documents[1].text and "refrigerant" in documents[3].text
    assert skipped == [f"{site}/docs/private/keys.html: disallowed by the site's robots.txt",
                       f"{site}/docs/moved: redirected to {site}/blog/moved.html, outside {site}/docs/",
                       f"{site}/docs/gone.html: HTTP 404 File not found",
                       f"{site}/docs/logo.svg: not a type convrag reads (image/svg+xml)"]
    fetched = [path for path, _, _ in served.requests]
    # nofollow; another section; a redirect out of the section, not followed
    assert "/docs/guide/hidden.html" not in fetched and "/blog/news.html" not in fetched and "/blog/moved.html" not in fetched
    assert fetched[0] == "/robots.txt" and fetched.count("/docs/guide/fees.html") == 1
    assert {agent for _, agent, _ in served.requests} == {web.USER_AGENT}


def test_one_address_is_read_alone_and_a_crawl_stops_at_its_bound(served: Served) -> None:
    site = served.address
    skipped: list[str] = []
    documents = list(crawl(f"{site}/docs/guide/fees.html", skipped, follow=False, delay=0))
    assert [d.doc_id for d in documents] == ["fees"] and skipped == []
    documents = list(crawl(f"{site}/docs/index.html", skipped, max_pages=2, delay=0))
    assert [d.doc_id for d in documents] == ["index", "guide/fees"]
    assert skipped == ["6 more page(s) not fetched: the crawl stops at 2 (--max-pages)"]


def test_a_response_past_the_bound_or_a_server_that_does_not_answer_is_named(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    site = served.address
    monkeypatch.setattr(web, "MAX_RESPONSE_BYTES", 1000)
    skipped: list[str] = []
    assert [d.doc_id for d in crawl(f"{site}/docs/", skipped, delay=0)][:1] == ["index"]
    assert f"{site}/docs/manual.pdf: larger than 0 MB" in skipped
    skipped = []
    assert list(crawl("http://127.0.0.1:9/docs/", skipped, delay=0)) == []
    # nor its robots.txt: a site that cannot say "no" is not crawled (RFC 9309)
    assert skipped[0].startswith("http://127.0.0.1:9/docs/: not fetched, as the site's robots.txt could not be read (not fetched "
                                 "(ConnectError")


def test_only_web_addresses_are_crawled() -> None:
    assert is_address("https://docs.example.com/guide/") and is_address("HTTP://x.example/a.pdf")
    assert not is_address("docs/guide") and not is_address("ftp://x.example/a") and not is_address("https://a b")
    with pytest.raises(DataFormatError, match="not a web address"):
        list(crawl("file:///etc/passwd", []))


def test_a_sites_crawl_delay_is_waited_between_requests(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """robots.txt's "Crawl-delay" asks a crawler to wait longer than it would; it is obeyed, up to its bound."""
    waits: list[float] = []
    monkeypatch.setattr(web.time, "sleep", waits.append)
    robots = served.root / "robots.txt"
    robots.write_text("User-agent: *\nCrawl-delay: 2\nDisallow: /docs/private/\n")
    list(crawl(f"{served.address}/docs/", [], delay=0.5))
    assert waits and set(waits) == {2.0}
    robots.write_text("User-agent: *\nCrawl-delay: 3600\n")
    waits.clear()
    list(crawl(f"{served.address}/docs/", [], delay=0.5))
    assert set(waits) == {web.MAX_CRAWL_DELAY}


def test_a_pages_text_is_read_in_the_charset_its_server_names(served: Served) -> None:
    """A short page in ISO-8859-2 (Polish) whose server says so in its Content-Type: its bytes alone read as
    Western text, "\u00a3odzie p\u00b3ac\u00b1 40 z\u00b3" (too short for a detector to tell)."""
    import http.server
    import threading

    class Latin(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            text = "<p>\u0141odzie p\u0142ac\u0105 40 z\u0142.</p>"
            # a server that names Latin-1 for every page, this UTF-8 one too: the bytes say what they are
            body = text.encode("utf-8") if self.path == "/utf8" else text.encode("iso-8859-2")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=ISO-8859-1" if self.path == "/utf8" else "text/html; charset=ISO-8859-2")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Latin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        skipped: list[str] = []
        documents = [document for path in ("oplaty", "utf8")
                     for document in crawl(f"http://127.0.0.1:{server.server_address[1]}/{path}", skipped, follow=False, delay=0)]
    finally:
        server.shutdown()
        server.server_close()
    assert [d.text for d in documents] == ["\u0141odzie p\u0142ac\u0105 40 z\u0142."] * 2 and skipped == []


def test_a_server_that_trickles_its_page_is_given_up_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte every so often keeps each read inside the timeout and the response open for ever."""
    import http.server
    import threading
    import time

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/robots.txt":  # none: every page allowed
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            for _ in range(40):
                self.wfile.write(b"<p>x</p>")
                self.wfile.flush()
                time.sleep(0.05)

        def log_message(self, *args: object) -> None:
            pass

    monkeypatch.setattr(web, "MAX_RESPONSE_SECONDS", 0.5)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        skipped: list[str] = []
        address = f"http://127.0.0.1:{server.server_address[1]}/slow"
        assert list(crawl(address, skipped, follow=False, delay=0)) == []
    finally:
        server.shutdown()
        server.server_close()
    assert skipped == [f"{address}: not received whole within 0.5 s"]


@pytest.mark.parametrize("address, public", [
    ("127.0.0.1", False), ("10.1.2.3", False), ("192.168.0.10", False), ("172.16.5.4", False),
    ("169.254.169.254", False),  # a cloud's metadata service
    ("100.64.0.1", False), ("0.0.0.0", False), ("224.0.0.1", False), ("::1", False), ("fc00::1", False),
    ("fe80::1%eth0", False), ("::ffff:127.0.0.1", False),  # IPv4 loopback written as IPv6
    ("93.184.215.14", True), ("2606:4700:4700::1111", True), ("::ffff:8.8.8.8", True),
])
def test_an_address_is_public_only_where_the_internet_reaches_it(address: str, public: bool) -> None:
    assert web._public(address) is public


def test_a_fetch_for_somebody_else_refuses_hosts_that_are_not_public(served: Served) -> None:
    """A service reading the addresses its users give must not read what only the server reaches: an
    admin page on localhost, a cloud's metadata, an intranet. Refused by name before any request (the
    site's robots.txt is not asked for either), and by the answering server's address after connecting,
    which catches a name that resolved to a public address when checked and to a private one when
    fetched (DNS rebinding, stood in for here by a check that passes)."""
    site = served.address
    assert web.not_public(f"{site}/docs/").startswith("127.0.0.1 is at 127.0.0.1, not a public address")
    assert web.not_public("http://localhost:8000/admin").startswith("localhost is at ")
    assert web.not_public("http://no-such-host.invalid/") == ""  # left to the fetch, which names the error
    skipped: list[str] = []
    assert list(crawl(f"{site}/docs/", skipped, delay=0, public_only=True)) == []
    assert skipped == [f"{site}/docs/: 127.0.0.1 is at 127.0.0.1, not a public address: this server reads only public "
                       "web addresses (its operator can allow private ones with allow_private_web)"]
    assert served.requests == []
    passes = pytest.MonkeyPatch()
    with passes.context() as patched:
        patched.setattr(web, "not_public", lambda url: "")
        skipped = []
        assert list(crawl(f"{site}/docs/", skipped, delay=0, public_only=True)) == []
    assert skipped[0].endswith("not a public address: this server reads only public web addresses (its operator can allow "
                               "private ones with allow_private_web)")
    assert [d.doc_id for d in crawl(f"{site}/docs/", [], follow=False, delay=0)] == ["index"]  # the command line reads it


def test_pages_a_sitemap_lists_and_no_page_links_to_are_read_after_the_linked_ones(served: Served) -> None:
    """A documentation site whose menu a script draws links to few of its pages in its HTML and lists them
    all in its sitemap: those under the section are read after the pages the links reach. A sitemap index's
    sitemaps are read, gzipped or not; one on another site is not asked for (the crawl's headers go to
    this site alone), and the sitemap's pages outside the section are not read."""
    import gzip

    site, root = served.address, served.root
    namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"
    (root / "docs" / "orphan.html").write_text("<title>Orphan</title><p>Only the sitemap lists this page.</p>")
    (root / "pages.xml.gz").write_bytes(gzip.compress(
        f"<urlset xmlns='{namespace}'><url><loc>{site}/docs/orphan.html</loc></url><url><loc>{site}/docs/guide/fees.html</loc></url>"
        f"<url><loc>{site}/blog/news.html</loc></url></urlset>".encode()))
    (root / "sitemap.xml").write_text(f"<sitemapindex xmlns='{namespace}'><sitemap><loc>{site}/pages.xml.gz</loc></sitemap>"
                                      "<sitemap><loc>https://example.com/sitemap.xml</loc></sitemap></sitemapindex>")
    skipped: list[str] = []
    documents = list(crawl(f"{site}/docs/", skipped, delay=0))
    assert [d.doc_id for d in documents] == ["index", "guide/fees", "guide/winter", "manual.pdf", "orphan"]
    assert "https://example.com/sitemap.xml: the sitemap is on another site, not read" in skipped
    fetched = [path for path, _, _ in served.requests]
    assert "/blog/news.html" not in fetched and fetched.count("/docs/guide/fees.html") == 1
    assert [d.doc_id for d in crawl(f"{site}/docs/", [], follow=False, delay=0)] == ["index"]
    assert "/sitemap.xml" not in [path for path, _, _ in served.requests[len(fetched):]]  # one page: no sitemap asked for
    (root / "robots.txt").write_text(f"User-agent: *\nDisallow: /docs/private/\nSitemap: {site}/missing.xml\n")
    skipped = []
    assert [d.doc_id for d in crawl(f"{site}/docs/", skipped, delay=0)][-1] == "manual.pdf"  # no sitemap: no orphan
    assert f"{site}/missing.xml: the sitemap was not read (HTTP 404 File not found)" in skipped


def test_a_gzipped_sitemap_that_unpacks_past_the_bound_is_refused() -> None:
    import gzip

    with pytest.raises(ValueError, match="unpacks past 50 MB"):
        web._gunzipped(gzip.compress(b"0" * (web.MAX_RESPONSE_BYTES + 1)))


def test_a_crawls_report_tells_pages_gone_from_pages_it_could_not_fetch(served: Served) -> None:
    """What a crawl did not find may be gone (a 404, a page robots.txt disallows) or only out of reach this
    time (a refused connection, a timeout, a server error): whoever removes pages a crawl no longer finds
    must know which, and whether the crawl stopped at its bound."""
    report = web.CrawlReport()
    assert [d.doc_id for d in crawl(f"{served.address}/docs/", [], delay=0, report=report)][-1] == "manual.pdf"
    assert report.whole and report.section == f"{served.address.split('//')[1]}/docs/"  # a 404, a disallowed page: gone
    report = web.CrawlReport()
    list(crawl(f"{served.address}/docs/", [], delay=0, max_pages=2, report=report))
    assert report.cut and not report.whole
    report = web.CrawlReport()
    assert list(crawl("http://127.0.0.1:9/docs/", [], delay=0, report=report)) == []
    assert report.passing == 1 and not report.whole


def test_a_folders_address_without_its_slash_crawls_the_folder_the_server_sends_it_on_to(served: Served) -> None:
    """"https://docs.example.com/guide" is a page of the site's top folder, so the crawl read the whole site;
    the server sends it on to "guide/", and the crawl reads that folder, under the same ids."""
    site = served.address
    report = web.CrawlReport()
    documents = list(crawl(f"{site}/docs", [], delay=0, report=report))
    assert [(d.doc_id, d.url) for d in documents] == [(d.doc_id, d.url) for d in crawl(f"{site}/docs/", [], delay=0)]
    assert "/blog/news.html" not in [path for path, _, _ in served.requests]
    assert report.section == f"{site.split('//')[1]}/docs/"


def test_a_start_address_its_site_moves_to_https_or_www_is_crawled_where_it_moved() -> None:
    """"http://docs.example/guide" typed as a person types it, which the site sends on to
    "https://www.docs.example/guide/": the crawl refused the move ("outside http://docs.example/"), and read
    nothing. A move to the same page in the site's own form is followed, and the crawl reads that folder
    under that site's robots.txt; a redirect to another path or site is still not followed."""
    import httpx

    pages = {"https://www.docs.example/guide/": "<title>Guide</title><a href='fees.html'>Fees</a> <a href='/blog/'>Blog</a>",
             "https://www.docs.example/guide/fees.html": "<title>Fees</title><p>A mooring costs 40 dollars.</p>",
             "https://www.docs.example/robots.txt": "User-agent: *\nDisallow: /guide/private/\n"}
    asked: list[str] = []

    def site(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        asked.append(url)
        moved = (url.replace("http://", "https://", 1) if url.startswith("http://")
                 else url.replace("//docs.example", "//www.docs.example", 1) if "//docs.example" in url
                 else f"{url}/" if url.endswith("/guide") else "https://elsewhere.example/guide/" if url.endswith("/away/") else "")
        if moved:
            return httpx.Response(301, headers={"location": moved})
        return httpx.Response(200, html=pages[url]) if url in pages else httpx.Response(404)

    with httpx.Client(transport=httpx.MockTransport(site)) as client:
        skipped: list[str] = []
        documents = list(crawl("http://docs.example/guide", skipped, delay=0, client=client))
        assert [(d.doc_id, d.url) for d in documents] == [("index", "https://www.docs.example/guide/"),
                                                          ("fees", "https://www.docs.example/guide/fees.html")]
        assert "https://www.docs.example/robots.txt" in asked and "https://www.docs.example/blog/" not in asked
        skipped = []
        assert list(crawl("https://www.docs.example/away/", skipped, delay=0, client=client)) == []
        assert skipped == ["https://www.docs.example/away/: redirected to https://elsewhere.example/guide/, outside "
                           "https://www.docs.example/away/"]
    assert web._moved("http://a.example/x", "https://a.example/x/") and web._moved("https://www.a.example/", "https://a.example/")
    assert not web._moved("https://a.example/x", "https://a.example/y") and not web._moved("https://a.example/", "http://a.example/")
    assert not web._moved("https://a.example/", "https://a.example:8443/") and not web._moved("https://a.example/", "https://b.example/")


def test_robots_txt_is_read_through_the_sites_redirects_and_one_it_cannot_give_allows_nothing() -> None:
    """RFC 9309: a crawler follows robots.txt's redirects (a site moved to https), where it had taken a redirect
    for no robots.txt and read what it disallows; and one the site cannot give (a 5xx, a timeout) allows
    nothing, as the site may have been saying "no" when it failed, where it had allowed everything. Pages
    not fetched so are not known to be gone (a crawl's report counts them as passing)."""
    import httpx

    robots = {"https://docs.example/robots.txt": httpx.Response(200, text="User-agent: *\nDisallow: /guide/private\n"),
              "https://down.example/robots.txt": httpx.Response(503)}

    def site(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url.startswith("http://"):
            return httpx.Response(301, headers={"location": url.replace("http://", "https://", 1)})
        if url in robots:
            return robots[url]
        return httpx.Response(200, html="<title>Guide</title><a href='private.html'>Keys</a>")

    with httpx.Client(transport=httpx.MockTransport(site)) as client:
        skipped: list[str] = []
        assert [d.doc_id for d in crawl("https://docs.example/guide/", skipped, delay=0, client=client)] == ["index"]
        assert skipped == ["https://docs.example/guide/private.html: disallowed by the site's robots.txt"]
        skipped = []
        assert [d.doc_id for d in crawl("http://docs.example/guide/", skipped, delay=0, client=client)] == ["index"]
        assert skipped == ["https://docs.example/guide/private.html: disallowed by the site's robots.txt"]
        skipped, report = [], web.CrawlReport()
        assert list(crawl("https://down.example/guide/", skipped, delay=0, client=client, report=report)) == []
        assert skipped == ["https://down.example/guide/: not fetched, as the site's robots.txt could not be read "
                           "(HTTP 503 Service Unavailable)"]
        assert report.passing == 1 and not report.whole


def test_a_crawl_says_how_many_pages_it_has_found_and_not_yet_fetched(served: Served) -> None:
    """A progress of a crawl showed "4/100" (its bound) for a section of a few pages, then jumped to done:
    with each page fetched, the report says how many it has found and not fetched yet, so the pages
    fetched and those pending are how far it has to go."""
    report = web.CrawlReport()
    steps: list[int] = []
    list(crawl(f"{served.address}/docs/", [], delay=0, report=report, advance=lambda _: steps.append(report.pending)))
    assert steps[0] == 0 and steps[1] >= 5 and steps[-1] == 0  # nothing known before the start page; its links; none left
    disallowed = 1  # /docs/private/keys.html: found, then turned away by robots.txt, never fetched
    assert all(done + 1 + pending <= len(steps) + disallowed for done, pending in enumerate(steps))
    bounded = web.CrawlReport()
    totals: list[int] = []
    list(crawl(f"{served.address}/docs/", [], max_pages=3, delay=0, report=bounded, advance=lambda _: totals.append(bounded.to_fetch(3))))
    assert totals == [1, 3, 3]  # the start page alone, then its links past the bound of 3


def test_robots_txt_on_another_site_is_followed_without_the_crawls_headers() -> None:
    """RFC 9309 has a crawler follow robots.txt's redirects across sites (a site's rules kept on its CDN): such a
    redirect was taken for no robots.txt, and what it disallows was read. The token a user gave for the site
    goes to the site alone, not to the other one."""
    import httpx

    asked: list[tuple[str, str]] = []

    def site(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        asked.append((url, request.headers.get("authorization", "")))
        if url == "https://docs.example/robots.txt":
            return httpx.Response(301, headers={"location": "https://cdn.example/docs-site/robots.txt"})
        if url == "https://cdn.example/docs-site/robots.txt":
            return httpx.Response(200, text="User-agent: *\nDisallow: /guide/private\n")
        if url.endswith("/fees.html"):
            return httpx.Response(200, html="<title>Fees</title><p>A mooring costs 40 dollars.</p>")
        return httpx.Response(200, html="<title>Guide</title><a href='private.html'>Keys</a> <a href='fees.html'>Fees</a>")

    with httpx.Client(transport=httpx.MockTransport(site), headers={"Authorization": "Bearer s3cret"}) as client:
        skipped: list[str] = []
        assert [d.doc_id for d in crawl("https://docs.example/guide/", skipped, delay=0, client=client)] == ["index", "fees"]
    assert skipped == ["https://docs.example/guide/private.html: disallowed by the site's robots.txt"]
    assert ("https://cdn.example/docs-site/robots.txt", "") in asked  # asked, without the token
    assert {auth for url, auth in asked if url.startswith("https://docs.example/")} == {"Bearer s3cret"}
