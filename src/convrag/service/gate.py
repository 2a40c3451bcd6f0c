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

    @contextmanager
    def slot(self) -> Iterator[None]:
        if not self._sem.acquire(blocking=False):
            raise Busy(f"{self.limit} answers are being generated; retry shortly")
        try:
            yield
        finally:
            self._sem.release()
