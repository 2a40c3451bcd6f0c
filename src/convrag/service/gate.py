"""A bound on concurrent pipeline runs: a full service answers 429 at once instead of queueing
requests without end behind a slow model."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Busy(RuntimeError):
    pass


class GenerationGate:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit)

    def acquire(self) -> None:
        """Take a slot or raise :class:`Busy`; whoever takes one must :meth:`release` it."""
        if not self._sem.acquire(blocking=False):
            raise Busy(f"{self.limit} answers are being generated; retry shortly")

    def release(self) -> None:
        self._sem.release()

    @contextmanager
    def slot(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()
