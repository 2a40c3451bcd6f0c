"""Grounded answers: an LLM writes the answer from merged passages, citing them as [1], [2]."""

from .answer import Answer, AnswerGenerator
from .citations import Citation

__all__ = ["Answer", "AnswerGenerator", "Citation"]
