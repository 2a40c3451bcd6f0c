"""Where convrag keeps its files. ``CONVRAG_HOME`` (default ``~/.cache/convrag``) moves all of them."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("CONVRAG_HOME", "~/.cache/convrag")).expanduser()


def default_store() -> Path:
    """Collections built with ``convrag index`` when no ``--store`` is given."""
    return home() / "collections"


def benchmark_index_dir(data_root: Path, embedding_model: str) -> Path:
    """Per-domain collections built from an MT-RAG data folder, one set per folder and embedding model."""
    resolved = str(Path(data_root).resolve())
    key = hashlib.sha1(f"{resolved}|{embedding_model}".encode()).hexdigest()[:10]
    return home() / "mtrag-indexes" / f"{Path(resolved).name}-{key}"
