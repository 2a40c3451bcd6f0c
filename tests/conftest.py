"""Shared fixtures. Everything runs on real parts: the bundled MT-RAG sample, the real
all-MiniLM-L6-v2 model from its registry package, real indexes on disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

# pymilvus configures logging when imported (dictConfig), which closes every handler there is.
# rouge-score's absl handler holds the sys.stderr of the test that imported it, pytest's capture
# file, and closes that stream when closed: a later test importing pymilvus then broke pytest's
# own capture ("I/O operation on closed file"). Imported here, before any test, nothing is closed.
import pymilvus  # noqa: F401
import pytest

from convrag.data.layout import MTRAGData, sample_root
from convrag.embeddings import Embedder, load_embedder
from convrag.eval.runner import BenchmarkIndexes
from convrag.index.collection import Collection
from convrag.types import Passage
from tests.helpers import TINY, Served, served_site


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep tests from reading or writing the user's real convrag folder."""
    monkeypatch.setenv("CONVRAG_HOME", str(tmp_path / "convrag-home"))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return load_embedder()


@pytest.fixture(scope="session")
def sample() -> MTRAGData:
    return MTRAGData.discover(sample_root())


@pytest.fixture
def tiny_passages() -> list[Passage]:
    return list(TINY)


@pytest.fixture(scope="session")
def tiny_collection(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Collection:
    return Collection.build(tmp_path_factory.mktemp("tiny") / "tiny", TINY, embedder=embedder)


@pytest.fixture(scope="session")
def sample_indexes(tmp_path_factory: pytest.TempPathFactory, sample: MTRAGData) -> BenchmarkIndexes:
    """The bundled sample indexed for real (BM25 + dense), once per test session."""
    indexes = BenchmarkIndexes(sample, tmp_path_factory.mktemp("sample-indexes"))
    for domain in sample.domains:
        indexes.collection(domain)
    return indexes




# The real default model is joined once into the user's convrag folder (outside the per-test
# CONVRAG_HOME), like any installed artifact: a test session must not copy 1.1 GB per test.
_REAL_HOME = Path(os.environ.get("CONVRAG_HOME", "~/.cache/convrag")).expanduser()


@pytest.fixture(scope="session")
def model_path() -> Path:
    from convrag.llm.model_files import ensure_default_model

    return ensure_default_model(_REAL_HOME)


@pytest.fixture(scope="session")
def local_llm(model_path: Path):  # type: ignore[no-untyped-def]
    from convrag.llm.local import LocalLLM

    return LocalLLM(model_path, n_ctx=2048, slots=2)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A small documentation site served on 127.0.0.1 (:func:`tests.helpers.served_site`)."""
    with served_site(tmp_path) as site:
        yield site
