"""Turning raw documents (plain text, Markdown, HTML, PDF, Word) into passages for a collection."""
