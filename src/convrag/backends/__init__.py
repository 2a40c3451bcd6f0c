"""Collection backends beyond the embedded one.

The embedded backend (``convrag.index``) keeps BM25 and dense indexes in a
folder and searches them in-process. ``milvus`` keeps a collection in Milvus:
embedded Milvus Lite in a local file, or a Milvus server or cluster, through the
same client and the same code.
"""
