"""Retrievers: one interface (``search(queries, k) -> ranked hits``), one module per method."""

from .base import Retriever
from .registry import RETRIEVERS, make_retriever

__all__ = ["RETRIEVERS", "Retriever", "make_retriever"]
