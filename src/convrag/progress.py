"""Progress reporting that library code can use without depending on a terminal.

Library functions take a :class:`Reporter`; the CLI passes one that draws rich
progress bars, tests and the Python API get the silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

Advance = Callable[[int], None]


class Reporter(Protocol):
    def stage(self, description: str, total: int | None = None) -> AbstractContextManager[Advance]:
        """A context manager yielding ``advance(n)`` for a unit of work of ``total`` steps."""
        ...


class NullReporter:
    """Reports nothing."""

    @contextmanager
    def stage(self, description: str, total: int | None = None) -> Iterator[Advance]:
        yield lambda n=1: None


SILENT = NullReporter()
