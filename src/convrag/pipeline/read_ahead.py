"""Reading the next turn's prompt ahead, while the user reads the answer just given.

On a CPU the answer's first token waits for the model to read its prompt (about 95 tokens/s on two
cores). Of that prompt, the instructions, the worked examples and the conversation so far are
known as soon as an answer is stored; only the passages and the question are not.
:meth:`convrag.pipeline.Pipeline.prefill` reads the known part into the model's context, so the
next question waits for the rest alone.

``convrag serve`` (the conversations API and the OpenAI-compatible endpoint, whose client sends
the history and the answer back with its next question) and ``convrag chat`` read ahead after
every answer. One worker thread, latest request first: when answers come faster than they can be
read ahead, the older requests are dropped (each would be overwritten by the next anyway). Reading ahead shares the
model with answering: a question that arrives meanwhile stops the read at the end of the piece in
progress (:data:`convrag.llm.local.READ_AHEAD_CHUNK` tokens). A question of another conversation
then waits for one piece instead of a read that is of no use to it; one of the same conversation
finds what was read so far in the model's cache and reads the rest itself. A failure is logged and
costs nothing but the saving.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..types import Message
from .core import Pipeline

log = logging.getLogger("convrag.pipeline")


class ReadAhead:
    """Runs :meth:`Pipeline.prefill` in the background, the latest request only."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._pending: tuple[Pipeline | Callable[[], Pipeline], list[Message]] | None = None
        self._busy = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        #: the record of the last read (tokens and seconds, or why nothing was read), for the logs and tests
        self.last: dict[str, Any] | None = None

    def submit(self, pipeline: Pipeline | Callable[[], Pipeline], messages: Sequence[Message]) -> None:
        """Read ahead for the turn after ``messages``: they end with the answer just stored, or
        are empty for a conversation's first question (its prompt's instructions and examples are
        read while the user types it). ``pipeline`` may be a function that makes it, called on the
        worker, so that a caller who has not built it yet does not wait for that."""
        if not self.enabled:
            return
        with self._cond:
            if self._stopped:
                return
            self._pending = (pipeline, list(messages))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="convrag-read-ahead", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                assert self._pending is not None
                (pipeline, messages), self._pending = self._pending, None
                self._busy = True
            try:
                record = (pipeline() if callable(pipeline) else pipeline).prefill(messages)
            except Exception as exc:  # never let a background read take the worker down
                record = {"error": f"{type(exc).__name__}: {exc}"}
            log.info("read ahead for %s: %s", "a new conversation's first question" if not messages else
                     f"the question after {len(messages)} message(s)", record)
            with self._cond:
                self.last, self._busy = record, False
                self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is pending or being read (tests, shutdown); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending is None and not self._busy, timeout)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._pending = None
            self._cond.notify_all()
