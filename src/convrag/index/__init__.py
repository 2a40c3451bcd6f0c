"""On-disk indexes of a collection: BM25 (bm25s) and dense (exact inner product)."""
