"""``convrag``: the command line. Importing the command-group modules registers their commands
on the one Typer app (:mod:`convrag.cli.app`)."""

from __future__ import annotations

from . import answers, bench, collections, demo, evaluate, service  # noqa: F401 - they register the commands
from .app import app, main

__all__ = ["app", "main"]
