"""Documents read from their web addresses: one page or file, or a site's pages crawled from a start page.

Much of what a team wants to chat over is published, not filed: a product's documentation site, an
intranet wiki, a handbook's pages. ``convrag index https://docs.example.com/guide/ --crawl`` reads the
start page and follows its links, breadth first, to the pages under the start page's folder on the
same host (``https://docs.example.com/guide/...``), as a person would read that section of the site;
links elsewhere (another section, another site, a ``mailto:``) are not followed. The pages of that
folder the site's sitemap lists and no page links to (a menu a script draws) are read after them.
Each page or file is read as the file it is by its content type (an HTML page, a PDF, a Word
document linked from a page), with its address kept as the document's, so a citation links to the page.

A crawler is a guest: it asks for one page at a time, waits :data:`DEFAULT_DELAY` seconds between two
(or the ``Crawl-delay`` the site's ``robots.txt`` asks, up to :data:`MAX_CRAWL_DELAY`), says who it is
(:data:`USER_AGENT`), obeys that ``robots.txt`` (a page it disallows is named and not fetched) and a page's ``<meta name="robots">`` (``noindex``: not read; ``nofollow``: its
links not followed), and stops at ``max_pages``. A response larger than :data:`MAX_RESPONSE_BYTES`, one
silent for :data:`TIMEOUT_SECONDS` or not whole within :data:`MAX_RESPONSE_SECONDS`, an error status, a redirect out of the section and a type convrag
does not read are each named with the reason, and the crawl goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import ipaddress
import re
import socket
import time
import urllib.request
import urllib.robotparser
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from .. import __version__
from ..characters import readable_name
from ..errors import DataFormatError
from .charsets import page_text
from .documents import read_bytes
from .formats import SUFFIXES, Document, document_suffix
from .packages import parse_xml

#: who the crawler says it is, in each request and to robots.txt
USER_AGENT = f"convrag/{__version__} (document indexer)"
#: seconds waited between two requests to the site
DEFAULT_DELAY = 0.25
#: the most bytes of one response read (a page, a PDF); a larger one is named and skipped
MAX_RESPONSE_BYTES = 50 << 20
TIMEOUT_SECONDS = 30.0
#: the longest one response may take to arrive whole (a PDF of 50 MB at a slow 1 MB/s is under a minute)
MAX_RESPONSE_SECONDS = 300.0
#: the longest "Crawl-delay" of a robots.txt obeyed (seconds); a longer one is read as this
MAX_CRAWL_DELAY = 30.0
#: the pages a crawl reads at most unless told otherwise
DEFAULT_MAX_PAGES = 500

#: a web address, as a command line's argument may give one
_ADDRESS = re.compile(r"https?://\S+", re.IGNORECASE)
#: the suffix a response is read as, by its content type (a page's address often has none: "/guide/")
_CONTENT_TYPES = {"text/html": ".html", "application/xhtml+xml": ".html", "text/plain": ".txt", "text/markdown": ".md",
                  "text/csv": ".csv", "application/pdf": ".pdf", "application/rtf": ".rtf", "text/rtf": ".rtf",
                  "application/epub+zip": ".epub", "application/msword": ".doc", "message/rfc822": ".eml",
                  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
                  "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
                  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
                  "application/vnd.oasis.opendocument.text": ".odt"}
#: content types that say nothing of the format: the address's own suffix decides
_UNTYPED = frozenset({"", "application/octet-stream", "binary/octet-stream", "application/x-download"})


def is_address(text: str) -> bool:
    """Whether a command line's source is a web address rather than a path."""
    return _ADDRESS.fullmatch(text.strip()) is not None


class _Page(NamedTuple):
    """A response read whole: the address it came from (after redirects), its content type (lower
    case, without parameters) and its bytes; ``reason`` says why it holds none."""

    url: str
    content_type: str
    body: bytes
    reason: str = ""
    charset: str = ""  # the Content-Type's own, lower case
    #: the reason may pass (a timeout, a refused connection, a server error): the page is not known to be gone
    passing: bool = False


class FetchedPage(NamedTuple):
    """A page or file fetched whole and worth reading: its address (after redirects), the suffix it is
    read as (:func:`_suffix`), its bytes, the charset its server named, and its document id (its path
    under the crawl's folder, :func:`_page_id`)."""

    url: str
    suffix: str
    body: bytes
    charset: str
    doc_id: str
    #: the crawl's section, its host and folder ("docs.example.org/guide/"), what :func:`site_doc_id` puts before ``doc_id``
    section: str = ""

    @property
    def file_name(self) -> str:
        """The name of the file it is read as: its address's last part, with the suffix it is read as."""
        name = PurePosixPath(unquote(urlsplit(self.url).path)).name or "index"
        return name if document_suffix(name) == self.suffix else f"{name}{self.suffix}"


@dataclasses.dataclass
class CrawlReport:
    """How a crawl ended, for whoever would take the pages it did not find for pages gone from the site:
    ``cut`` where it stopped at its bound with pages left, ``passing`` the pages it could not fetch for
    a reason that may pass (a timeout, a refused connection, a server error)."""

    cut: bool = False
    passing: int = 0
    #: the host and folder the crawl read ("docs.example.org/guide/"), what the ids of its pages begin with (:func:`site_doc_id`)
    section: str = ""
    #: while it runs, the pages fetched, and those found (linked, or listed by the sitemap) and not yet
    #: fetched: how far a progress can say the crawl has to go (:attr:`known`), where ``max_pages`` says nothing
    fetched: int = 0
    pending: int = 0

    @property
    def known(self) -> int:
        """The pages the crawl has fetched or found so far."""
        return self.fetched + self.pending

    def to_fetch(self, max_pages: int) -> int:
        """The pages the crawl will have fetched, as far as it knows now: those fetched and found, up
        to ``max_pages`` (a progress's total, which grows as pages link to more)."""
        return min(max_pages, self.known)

    @property
    def whole(self) -> bool:
        """Whether every page the crawl reached was fetched or is known to be gone (a 404, robots.txt)."""
        return not self.cut and not self.passing


def crawl(start: str, skipped: list[str], follow: bool = True, max_pages: int = DEFAULT_MAX_PAGES,
          delay: float = DEFAULT_DELAY, advance: Callable[[str], None] | None = None,
          headers: dict[str, str] | None = None, client: Any = None, public_only: bool = False,
          report: CrawlReport | None = None) -> Iterator[Document]:
    """The documents at ``start`` and, ``follow``, at the pages it links to under its folder: each page
    of :func:`fetch_pages` (which takes the same arguments) read by :func:`read_page`."""
    for page in fetch_pages(start, skipped, follow, max_pages, delay, advance, headers, client, public_only, report):
        document = read_page(page, skipped)
        if document is not None:
            yield document


def fetch_pages(start: str, skipped: list[str], follow: bool = True, max_pages: int = DEFAULT_MAX_PAGES,
                delay: float = DEFAULT_DELAY, advance: Callable[[str], None] | None = None,
                headers: dict[str, str] | None = None, client: Any = None, public_only: bool = False,
                report: CrawlReport | None = None) -> Iterator[FetchedPage]:
    """The pages and files at ``start`` and, ``follow``, at the pages it links to under its folder,
    breadth first, at most ``max_pages`` fetched (module docstring), each fetched whole and of a type
    convrag reads. What is not fetched is recorded in ``skipped`` ("address: reason"); ``advance`` is
    called with each address fetched. Document ids are the pages' paths under the start page's folder
    ("install/linux"; "index" for the folder itself), made distinct with "-2", "-3"... A page whose
    bytes are those of one fetched already ("guide/" and "guide/index.html") is not given again.
    ``headers`` go with each request (an intranet's ``Authorization`` or ``Cookie``: no request leaves
    the start page's site, and none but robots.txt and the sitemaps leaves its folder; a start the
    site moves to https, to its "www." host or to its folder's "/" is crawled from where it moved). ``public_only``:
    no request goes to a host that is not on the public internet (:func:`not_public`), as a service
    fetching addresses its users give must not read what only it can reach. ``client``: an
    ``httpx.Client`` (tests give their own).
    ``report``, when given, is filled with how the crawl ended (:class:`CrawlReport`)."""
    import httpx

    start = urldefrag(start.strip())[0]
    parts = urlsplit(start)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise DataFormatError(start, "not a web address (http:// or https://)")
    report = report if report is not None else CrawlReport()
    for field in dataclasses.fields(report):  # a report given again starts anew: it counts the pages this crawl fetches
        setattr(report, field.name, field.default)
    own = client is None
    client = client or httpx.Client(timeout=TIMEOUT_SECONDS, headers={**(headers or {}), "User-Agent": USER_AGENT})
    try:
        start, first, robots, unread = _settled(client, start, public_only)
        scope = _folder_of(start)
        report.section = _section(scope)
        asked = robots.crawl_delay(USER_AGENT)  # the site's own "Crawl-delay", where longer than ours
        delay = max(delay, min(float(asked), MAX_CRAWL_DELAY)) if asked else delay
        queue, seen, ids = deque([start]), {start}, set[str]()
        read: dict[str, str] = {}  # each page's bytes by their digest, to the address first read with them
        listed = _sitemap_pages(client, robots, start, scope, skipped, public_only, delay) if follow else []
        while queue or listed:
            if not queue:  # the pages the site's sitemap lists that no page links to, after those the links reach
                queue.extend(link for link in listed if link not in seen and _inside(link, scope))
                seen.update(listed)
                listed = []
                continue
            url = queue.popleft()
            if report.fetched >= max_pages:
                skipped.append(f"{len(queue) + 1} more page(s) not fetched: the crawl stops at {max_pages} (--max-pages)")
                report.cut = True
                break
            if not robots.can_fetch(USER_AGENT, url):
                if unread:  # not known to be gone: the site did not answer
                    skipped.append(f"{url}: not fetched, as the site's robots.txt could not be read ({unread})")
                    report.passing += 1
                else:
                    skipped.append(f"{url}: disallowed by the site's robots.txt")
                continue
            if report.fetched and delay > 0:
                time.sleep(delay)
            report.fetched += 1
            report.pending = len(queue) + sum(link not in seen for link in listed)
            if advance is not None:
                advance(url)
            page = first if url == start and first is not None else _fetch(client, url, scope, public_only)
            if page.reason:
                skipped.append(f"{url}: {page.reason}")
                report.passing += page.passing
                continue
            suffix = _suffix(page)
            if suffix is None:
                skipped.append(f"{url}: not a type convrag reads ({page.content_type or 'no content type'})")
                continue
            index, links = True, []
            if suffix == ".html":
                index, follows, links = _page_links(page)
                links = links if follows else []
            if follow:
                for link in links:
                    if link not in seen and _inside(link, scope):
                        seen.add(link)
                        queue.append(link)
            if not index:
                skipped.append(f"{url}: the page asks not to be indexed (robots noindex)")
                continue
            digest = hashlib.sha256(page.body).hexdigest()
            if digest in read:  # "guide/" and "guide/index.html", a page redirected to one read: read once, under its first address
                continue
            read[digest] = page.url
            yield FetchedPage(page.url, suffix, page.body, page.charset, _unique(_page_id(page.url, scope), ids), report.section)
    finally:
        if own:
            client.close()


def _settled(client: Any, start: str, public_only: bool) -> tuple[str, _Page | None, urllib.robotparser.RobotFileParser, str]:
    """The start address as its site gives it, the start page fetched there (None where robots.txt
    disallows it), and that site's robots.txt with why it could not be read (:func:`_robots`). The
    page is fetched first to learn its address: "http://docs.example.com/guide", which the site sends
    on to "https://docs.example.com/guide/", is crawled as that folder, under that site's robots.txt,
    not as the whole site the address as given is a page of (:func:`_moved`)."""
    robots, unread = _robots(client, _robots_address(start), public_only)
    if not robots.can_fetch(USER_AGENT, start):
        return start, None, robots, unread
    first = _fetch(client, start, _folder_of(start), public_only, moves=True)
    if first.url == start or not _moved(start, first.url):
        return start, first, robots, unread
    if _robots_address(first.url) != _robots_address(start):
        robots, unread = _robots(client, _robots_address(first.url), public_only)
    return first.url, first, robots, unread


#: the most sitemaps read for one crawl (a sitemap index names the others)
MAX_SITEMAPS = 20
_SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _sitemap_pages(client: Any, robots: urllib.robotparser.RobotFileParser, start: str, scope: str, skipped: list[str],
                   public_only: bool, delay: float) -> list[str]:
    """The pages under ``scope`` that the site's sitemaps list (those its robots.txt names, else its
    /sitemap.xml; a sitemap index's sitemaps, at most :data:`MAX_SITEMAPS`; gzipped or not), in their
    order. A documentation site whose menu a script draws links to few of its pages in its HTML, and
    lists them all there. A site without one lists none; a sitemap that cannot be read is named. Each
    is asked for ``delay`` seconds after the request before it, as a page is."""
    from lxml import etree

    parts = urlsplit(start)
    host = f"{parts.scheme.lower()}://{parts.netloc.lower()}/"
    maps = deque(robots.site_maps() or [f"{host}sitemap.xml"])
    named = bool(robots.site_maps())
    pages: list[str] = []
    read = 0
    while maps and read < MAX_SITEMAPS:
        address = maps.popleft()
        read += 1
        if not _inside(address, host):  # a request's headers, a token among them, go to this site alone
            skipped.append(f"{address}: the sitemap is on another site, not read")
            continue
        if delay > 0:
            time.sleep(delay)
        page = _fetch(client, address, host, public_only)
        if page.reason:
            if named:  # a sitemap robots.txt names but cannot be had; an absent /sitemap.xml is no news
                skipped.append(f"{address}: the sitemap was not read ({page.reason})")
            continue
        try:
            root = parse_xml(_gunzipped(page.body) if page.body[:2] == b"\x1f\x8b" else page.body)
        except (zlib.error, etree.XMLSyntaxError, ValueError) as exc:
            if named:  # a /sitemap.xml nobody named may be a site's "not found" page, served as a page
                skipped.append(f"{address}: the sitemap was not read ({type(exc).__name__})")
            continue
        for loc in root.iter(f"{_SITEMAP}loc"):
            link = urldefrag((loc.text or "").strip())[0]
            if root.tag == f"{_SITEMAP}sitemapindex":
                maps.append(link)
            elif _inside(link, scope):
                pages.append(link)
    return list(dict.fromkeys(pages))


def _gunzipped(body: bytes) -> bytes:
    """A gzipped sitemap unpacked, refused past :data:`MAX_RESPONSE_BYTES` (a few kilobytes can unpack to gigabytes)."""
    unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
    data = unpacker.decompress(body, MAX_RESPONSE_BYTES)
    if unpacker.unconsumed_tail:
        raise ValueError(f"it unpacks past {MAX_RESPONSE_BYTES >> 20} MB")
    return data


def site_doc_id(page: FetchedPage) -> str:
    """The id of a fetched page among documents from many places: the crawl's host and folder before
    its id under that folder ("docs.example.org/guide/install"), so that fetching the same pages again,
    or the same section from another of its pages, gives them the same ids."""
    return page.section + page.doc_id


def _folder_of(url: str) -> str:
    """The folder an address is in, as the crawl's scope: "https://docs.example.org/guide/" of ".../guide/install"."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path[:parts.path.rfind('/') + 1] or '/'}"


def _section(scope: str) -> str:
    """A scope as the ids of its pages begin: its host and folder ("docs.example.org/guide/")."""
    parts = urlsplit(scope)
    return readable_name(f"{parts.netloc}{unquote(parts.path)}")


def _robots(client: Any, address: str, public_only: bool) -> tuple[urllib.robotparser.RobotFileParser, str]:
    """The site's robots.txt, as RFC 9309 has a crawler read it: through up to five redirects, to
    another site too (a site's rules kept on its CDN; the request's own headers, a token among them,
    go to no other site), none (a 404) allowing every page, and one the site could not give (a 5xx, a
    timeout, a refused connection) allowing none, as the site may have been saying "no" when it
    failed; and then why, else ""."""
    robots = urllib.robotparser.RobotFileParser(address)
    page = _fetch(client, address, address.removesuffix("robots.txt"), public_only, moves=True, anywhere=True)
    robots.parse(page.body.decode("utf-8", "replace").splitlines() if not page.reason else [])
    if page.reason and page.passing:
        robots.disallow_all = True
        return robots, page.reason
    return robots, ""


#: the most redirects followed for one address
MAX_REDIRECTS = 5


#: the headers a request keeps when it leaves the site it was made for: httpx's own, none a user gave
_BARE_HEADERS = frozenset({"host", "accept", "accept-encoding", "connection", "user-agent"})


def _get(client: Any, url: str, bare: bool) -> Any:
    """A streamed GET of ``url``; ``bare``: without the headers a user gave the crawl (its token or
    cookie for one site goes to no other)."""
    if not bare:
        return client.stream("GET", url)
    request = client.build_request("GET", url)
    for name in [name for name in request.headers if name.lower() not in _BARE_HEADERS]:
        del request.headers[name]
    return contextlib.closing(client.send(request, stream=True))


def _same_site(url: str, other: str) -> bool:
    """Whether two addresses are on one site: the same host, with or without "www."."""
    return (urlsplit(url).hostname or "").removeprefix("www.") == (urlsplit(other).hostname or "").removeprefix("www.")


def _fetch(client: Any, url: str, scope: str, public_only: bool = False, moves: bool = False, anywhere: bool = False) -> _Page:
    """One response, read whole up to :data:`MAX_RESPONSE_BYTES`, through redirects that stay under
    ``scope`` (one that leaves it is not followed: nothing is asked of another section or site, and the
    request's headers, a token among them, go nowhere else); a failure is a page with its reason.
    ``public_only``: each address, a redirect's too, must name a public host (:func:`not_public`), and
    the server answering must be at a public address (a name that resolves to a public address when
    checked and to a private one when fetched, DNS rebinding, is caught there). ``moves``: a redirect
    that moves the address to its site's own form (:func:`_moved`) is followed out of ``scope`` too.
    ``anywhere``: redirects are followed to any site (robots.txt's, as RFC 9309 has it), and a request
    to another site than the first address's goes without the headers a user gave (:func:`_get`)."""
    import httpx

    first = url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            if public_only and (refused := not_public(url)):
                return _Page(url, "", b"", refused)
            with _get(client, url, bare=not _same_site(url, first)) as response:
                if public_only and (refused := _private_peer(response, url)):
                    return _Page(url, "", b"", refused)
                kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if response.is_redirect:
                    target = urldefrag(urljoin(url, response.headers["location"]))[0]
                    if not anywhere and not _inside(target, scope) and not (moves and _moved(url, target)):
                        return _Page(target, kind, b"", f"redirected to {target}, outside {scope}")
                    url = target
                    continue
                if response.status_code != 200:
                    return _Page(url, kind, b"", f"HTTP {response.status_code} {response.reason_phrase}".strip(),
                                 passing=response.status_code >= 500 or response.status_code == 429)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                    return _Page(url, kind, b"", f"larger than {MAX_RESPONSE_BYTES >> 20} MB")
                body = bytearray()
                deadline = time.monotonic() + MAX_RESPONSE_SECONDS
                for block in response.iter_bytes():
                    body += block
                    if len(body) > MAX_RESPONSE_BYTES:
                        return _Page(url, kind, b"", f"larger than {MAX_RESPONSE_BYTES >> 20} MB")
                    if time.monotonic() > deadline:  # each read within the timeout, the whole far past it: a server trickling bytes
                        return _Page(url, kind, b"", f"not received whole within {MAX_RESPONSE_SECONDS:g} s", passing=True)
                return _Page(url, kind, bytes(body), charset=(response.charset_encoding or "").lower())
        return _Page(url, "", b"", f"more than {MAX_REDIRECTS} redirects")
    except httpx.TimeoutException:
        return _Page(url, "", b"", f"no answer within {TIMEOUT_SECONDS:.0f} s", passing=True)
    except httpx.HTTPError as exc:  # refused, unreachable, a TLS error
        return _Page(url, "", b"", f"not fetched ({type(exc).__name__}: {exc})", passing=True)


#: what a refused address is told: how a service's operator lets it read an intranet
_NOT_PUBLIC = ("{host} is at {address}, not a public address: this server reads only public web addresses "
               "(its operator can allow private ones with allow_private_web)")


def _public(address: str) -> bool:
    """Whether an IP address is on the public internet: not loopback, private, link-local (a cloud's
    metadata service, 169.254.169.254), shared, multicast or reserved; an IPv6 address mapping an IPv4
    one is judged by that one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def not_public(url: str) -> str:
    """Why a web address may not be fetched for somebody else, else "": its host is, or resolves to, an
    address that is not public (:func:`_public`), so that a user of a service cannot make it read what
    only the server can reach (an admin page on localhost, a cloud's metadata, an intranet). A host
    that does not resolve is left to the fetch, which names the error."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        addresses = {info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (OSError, ValueError, UnicodeError):
        return ""
    refused = sorted(address for address in addresses if not _public(address))
    return _NOT_PUBLIC.format(host=host, address=refused[0]) if refused else ""


def _private_peer(response: Any, url: str) -> str:
    """Why a response may not be read for somebody else, else "": the server that answered is at an
    address that is not public. Through a proxy the peer is the proxy, and the host was judged by
    its name (:func:`not_public`) alone."""
    parts, proxies = urlsplit(url), urllib.request.getproxies()  # the environment's, which httpx uses as well
    if (parts.scheme.lower() in proxies or "all" in proxies) and not urllib.request.proxy_bypass(parts.hostname or ""):
        return ""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if not peer or _public(str(peer[0])):
        return ""
    return _NOT_PUBLIC.format(host=parts.hostname, address=peer[0])


def _robots_address(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}/robots.txt"


def _moved(url: str, target: str) -> bool:
    """Whether a redirect moves an address to its site's own form of it, the same page: from http to
    https, to the host with or without "www.", a folder's address to the one ending in its "/" (and
    no further: another path, a port, another site, are not the same page)."""
    a, b = urlsplit(url), urlsplit(target)
    schemes = a.scheme.lower() == b.scheme.lower() or (a.scheme.lower(), b.scheme.lower()) == ("http", "https")
    ports = a.port == b.port or (a.port is None and b.port is None)
    same = (b.path in (a.path, f"{a.path}/") or (not a.path and b.path == "/")) and a.query == b.query
    return _same_site(url, target) and schemes and ports and same and (url != target)


def _inside(url: str, scope: str) -> bool:
    """Whether an address is under the crawl's folder on its host (scheme and host compared in lower case)."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}".startswith(scope)


def _suffix(page: _Page) -> str | None:
    """The suffix a response is read as: its content type's, else (no type, or a generic one) its
    address's own where convrag reads it; None where neither is a type convrag reads."""
    if page.content_type in _CONTENT_TYPES:
        return _CONTENT_TYPES[page.content_type]
    own = document_suffix(PurePosixPath(unquote(urlsplit(page.url).path)).name)
    if page.content_type in _UNTYPED or page.content_type.startswith("text/"):
        return own if own in SUFFIXES else None
    return None


def _page_links(page: _Page) -> tuple[bool, bool, list[str]]:
    """Whether an HTML page may be indexed and its links followed (its ``<meta name="robots">``), and
    the addresses it links to (``<a href>``, against its ``<base href>``), without their fragments,
    in the page's order. Its navigation's links are kept: a site's menu is how a crawler finds its pages."""
    from bs4 import BeautifulSoup

    try:
        soup = BeautifulSoup(page_text(page.body, Path("page.html"), page.charset), "html.parser")
    except DataFormatError:
        return True, False, []
    rules = " ".join(str(meta.get("content", "")) for meta in soup.find_all("meta")
                     if str(meta.get("name", "")).lower() in ("robots", "convrag")).lower()
    base = soup.find("base", href=True)
    here = urljoin(page.url, str(base["href"])) if base is not None else page.url
    links: list[str] = []
    for anchor in soup.find_all("a", href=True):
        if "nofollow" in str(anchor.get("rel", "")).lower():
            continue
        link = urldefrag(urljoin(here, str(anchor["href"]).strip()))[0]
        if urlsplit(link).scheme.lower() in ("http", "https"):
            links.append(link)
    return "noindex" not in rules and "none" not in rules, "nofollow" not in rules and "none" not in rules, links


def _page_id(url: str, scope: str) -> str:
    """A page's document id: its path under the crawl's folder, without an HTML page's suffix, its query
    kept ("guide/install", "news?page=2"); "index" for the folder itself."""
    parts = urlsplit(url)
    path = unquote(parts.path)[len(unquote(urlsplit(scope).path)):].strip("/")
    path = re.sub(r"(?:^|/)index\.html?$", "", path, flags=re.IGNORECASE)
    path = re.sub(r"\.html?$", "", path, flags=re.IGNORECASE) or "index"
    return readable_name(f"{path}?{parts.query}" if parts.query else path)


def _unique(doc_id: str, ids: set[str]) -> str:
    candidate, n = doc_id, 1
    while candidate in ids:
        n += 1
        candidate = f"{doc_id}-{n}"
    ids.add(candidate)
    return candidate


def read_page(page: FetchedPage, skipped: list[str]) -> Document | None:
    """A fetched page or file read as the file it is, under its own address; what cannot be read, or
    reads as no text, is recorded in ``skipped``."""
    try:
        document = read_bytes(page.body, page.file_name, doc_id=page.doc_id, url=page.url, charset=page.charset)
    except DataFormatError as exc:
        skipped.append(f"{page.url}: {exc.reason}")
        return None
    if not document.text.strip():
        skipped.append(f"{page.url}: no text")
        return None
    return document
