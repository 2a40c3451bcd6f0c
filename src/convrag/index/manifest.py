"""The manifest that describes one built version of a collection.

It records what the indexes were built from (a hash of the passages) and with
what (the embedding model, its dimension and a probe embedding, the BM25
settings), so that opening a collection with a different model or a changed
corpus is detected instead of returning silently wrong results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CollectionDamaged, CollectionError
from ..types import Passage

FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class Manifest:
    name: str
    passage_count: int
    corpus_sha256: str
    created: str
    convrag_version: str
    bm25: dict[str, Any] = field(default_factory=dict)
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    embedding_probe: list[float] | None = None
    source: str = ""
    #: Wall-clock seconds the build took (BM25 + embedding), for the benchmark report.
    build_seconds: float | None = None
    #: Extra dense windows for passages longer than the model reads: {"size", "stride", "count"}; None without.
    dense_windows: dict[str, int] | None = None
    format_version: int = FORMAT_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest of the version ``folder``. A missing or unreadable one is
        :class:`CollectionDamaged`, named from the version folder: the message reaches a service's
        clients, which are not shown the server's own folders."""
        path = folder / MANIFEST_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CollectionDamaged(f"{folder.name}/{MANIFEST_FILE} is missing") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CollectionDamaged(f"{folder.name}/{MANIFEST_FILE} is corrupt ({exc})") from None
        if not isinstance(raw, dict):
            raise CollectionDamaged(f"{folder.name}/{MANIFEST_FILE} is corrupt (not a JSON object)")
        if raw.get("format_version") != FORMAT_VERSION:
            raise CollectionError(
                f"{path}: collection format {raw.get('format_version')!r} is not supported "
                f"(this convrag reads format {FORMAT_VERSION}); rebuild it"
            )
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in raw.items() if k in known})


def corpus_sha256(passages: Iterable[Passage]) -> str:
    """A hash of the passages' ids, titles, texts and urls, in order, independent of the file format."""
    digest = hashlib.sha256()
    for passage in passages:
        digest.update(json.dumps([passage.doc_id, passage.title, passage.text, passage.url], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()
