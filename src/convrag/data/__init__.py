"""Readers for the MT-RAG benchmark's files and for BEIR-format corpora, queries and qrels."""
