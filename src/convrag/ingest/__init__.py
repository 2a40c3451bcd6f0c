"""Turning raw documents (plain text, Markdown, HTML) into passages for a collection."""
