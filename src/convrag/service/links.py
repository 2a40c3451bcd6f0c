"""Which source links the service hands its clients.

A passage's ``url`` is where its document came from. For a document uploaded to the service it
is the service's own ``/api/.../file`` route; for one that ``convrag index`` read from disk and
the service took on, it is a ``file://`` URI of the server's file system. Such a link is of no use
to a client on another machine and tells it how the server's disk is laid out, so everything the
service returns (search hits, citations, traces, the passage route, exports of the turns) carries
only links a client can follow: web links and the service's own routes (turns stored before
it did are mended once, when the service's database is opened). The web page already
refused to show any other; the API and the exports did not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ..retrieve.base import Retriever
from ..types import Hit


def served_url(url: str) -> str:
    """``url`` if a client of the service can follow it (http, https, or a path of this service's
    API), else the empty string: a passage without a link, as an MT-RAG passage without one."""
    if url.startswith("/api/"):
        return url
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket) is no link either
        return ""
    return url if scheme in ("http", "https") else ""


class ServedLinks:
    """A collection's retriever whose hits carry only :func:`served_url` links. The service wraps
    every retriever of its pipelines in one, so that a hit leaves the retriever already fit to be
    returned, cited, traced and stored, whichever route then shows it."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner
        self.name = inner.name

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        return [[h._replace(url=served_url(h.url)) for h in hits] for hits in self.inner.search(queries, k)]


def served_links(value: Any) -> Any:
    """``value`` (a stored turn's citations or trace, as JSON) with every ``url`` it holds made a
    :func:`served_url`: turns stored before the service kept such links from its hits hold
    ``file://`` URIs, emptied once when the service's database is opened (:class:`.store.Store`)."""
    if isinstance(value, dict):
        return {k: served_url(v) if k == "url" and isinstance(v, str) else served_links(v) for k, v in value.items()}
    if isinstance(value, list):
        return [served_links(v) for v in value]
    return value
