"""Evaluation the way MT-RAG's official scorer does it, plus breakdowns, significance tests and writers."""
