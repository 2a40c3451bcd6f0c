"""Bounds on concurrent pipeline runs: a full service answers 429 at once instead of queueing
requests without end behind a slow model, and a conversation answers one question at a time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Busy(RuntimeError):
    pass


class ConversationBusy(RuntimeError):
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


class OneTurnAtATime:
    """The conversations with a turn being answered. A second question to the same conversation
    is refused at once: it would be answered from a history without the first one's answer (the
    store refuses to save it anyway, after the model's time was spent). Each claim holds an event
    that :meth:`stop` sets: the user's "Stop" for the answer being written."""

    def __init__(self) -> None:
        self._busy: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def claim(self, conversation: str) -> threading.Event:
        """Mark ``conversation`` busy or raise :class:`ConversationBusy`; whoever claims must
        :meth:`release`. Returns the event that says the user asked to stop this turn."""
        with self._lock:
            if conversation in self._busy:
                raise ConversationBusy("an answer is being written in this conversation; wait for it, then ask again")
            stop = self._busy[conversation] = threading.Event()
            return stop

    def stop(self, conversation: str) -> bool:
        """Ask the turn being answered in ``conversation`` to stop; False when none is."""
        with self._lock:
            stop = self._busy.get(conversation)
        if stop is None:
            return False
        stop.set()
        return True

    def release(self, conversation: str) -> None:
        with self._lock:
            self._busy.pop(conversation, None)
