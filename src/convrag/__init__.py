"""convrag: conversational retrieval-augmented generation, measured on MT-RAG.

The package is laid out by concept: ``data`` reads the benchmark's files,
``ingest`` turns raw documents into passages, ``index`` stores a collection's
indexes on disk, ``retrieve`` searches them, ``fusion`` combines ranked lists,
``queries`` turns a conversation turn into a query, and ``eval`` scores runs the
way the benchmark's official scorer does.
"""

__version__ = "0.1.0"
