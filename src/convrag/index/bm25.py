"""BM25 over a collection, backed by bm25s (sparse matrices, Snowball stemming, English stopwords).

The tokenizer's vocabulary is saved with the index, so queries are tokenized
exactly as the corpus was; query terms the corpus never saw are dropped rather
than matched against an empty token.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

from .atomic import write_json
from .topk import top_k

PARAMS_FILE = "convrag_bm25.json"


@dataclass(frozen=True)
class BM25Params:
    """BM25 scoring and analysis settings (Lucene's IDF). ``b`` = 0.4, not the usual 0.75, discounts
    a long passage less: chosen on MT-RAG's dev half, where every k1 tried did better at b 0.3-0.5
    than at 0.75 (`tools/tune_on_dev.py bm25-params`; docs/benchmarks.md)."""

    k1: float = 1.5
    b: float = 0.4
    method: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "en"


class BM25Index:
    """A bm25s index plus the tokenizer that built it."""

    def __init__(self, model: bm25s.BM25, tokenizer: Tokenizer, params: BM25Params) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.params = params

    @staticmethod
    def _tokenizer(params: BM25Params) -> Tokenizer:
        stemmer = Stemmer.Stemmer(params.stemmer) if params.stemmer else None
        return Tokenizer(stemmer=stemmer, stopwords=params.stopwords, lower=True)

    @classmethod
    def build(cls, texts: Sequence[str], params: BM25Params = BM25Params()) -> BM25Index:
        tokenizer = cls._tokenizer(params)
        # A Tokenized (ids + vocabulary) keeps bm25s's term ids identical to the tokenizer's.
        tokenized = tokenizer.tokenize(list(texts), return_as="tuple", show_progress=False)
        model = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
        model.index(tokenized, show_progress=False)
        return cls(model, tokenizer, params)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(str(folder), show_progress=False)
        self.tokenizer.save_vocab(str(folder))
        write_json(folder / PARAMS_FILE, asdict(self.params))

    @classmethod
    def load(cls, folder: Path, mmap: bool = False) -> BM25Index:
        params = BM25Params(**json.loads((folder / PARAMS_FILE).read_text()))
        model = bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False)
        tokenizer = cls._tokenizer(params)
        tokenizer.load_vocab(str(folder))
        return cls(model, tokenizer, params)

    @property
    def size(self) -> int:
        return int(self.model.scores["num_docs"])

    def search(self, queries: Sequence[str], k: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Top-``k`` passage positions and scores per query; passages scoring 0 are left out."""
        k = min(k, self.size)
        if k <= 0 or not queries:
            return [np.zeros(0, dtype=np.int64) for _ in queries], [np.zeros(0, dtype=np.float32) for _ in queries]
        token_lists = self.tokenizer.tokenize(list(queries), return_as="ids", update_vocab=False, show_progress=False)
        # Unknown words map to the tokenizer's empty-string id; they carry no evidence.
        unknown = self.tokenizer.word_to_id.get("")
        cleaned = [[t for t in tokens if t != unknown] for tokens in token_lists]
        positions_out: list[np.ndarray] = []
        scores_out: list[np.ndarray] = []
        for tokens in cleaned:
            if not tokens:
                positions_out.append(np.zeros(0, dtype=np.int64))
                scores_out.append(np.zeros(0, dtype=np.float32))
                continue
            scores = self.model.get_scores(tokens)
            top = top_k(scores, k)
            top = top[scores[top] > 0]
            positions_out.append(top)
            scores_out.append(scores[top].astype(np.float32))
        return positions_out, scores_out

