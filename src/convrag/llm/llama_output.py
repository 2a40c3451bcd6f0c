"""llama.cpp's log goes to convrag's log, and loading a model leaves the terminal alone.

llama-cpp-python quiets a model's load (``verbose=False``) by pointing the process's file
descriptors 1 and 2 at /dev/null for its seconds. They are the whole process's, not the loading
thread's: what any other thread wrote meanwhile was lost. The model loads in the background (the
chat and the service read the next prompt ahead as soon as they start), so in ``convrag chat`` the
answer to a command typed in those seconds, or a warning, or a traceback, went nowhere; in the
service, the log lines of other requests.

:func:`quiet_llama` makes that redirection a no-op and quiets llama.cpp at its source instead:
its log callback sends every line to the ``convrag.llm.llama_cpp`` logger at debug level (shown by
``convrag serve --log-level debug``). llama-cpp-python's own callback would not do: it maps the
log levels of an older llama.cpp, so it let warnings through to stderr as errors.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from typing import Any

log = logging.getLogger("convrag.llm.llama_cpp")

_LOCK = threading.Lock()
_CALLBACK: Any = None  # the ctypes callback llama.cpp holds: kept alive as long as the process


def _streams_left_alone(disable: bool = True) -> contextlib.nullcontext[None]:
    """Stands in for llama-cpp-python's ``suppress_stdout_stderr``: redirects nothing."""
    return contextlib.nullcontext()


def _to_log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    line = text.decode("utf-8", errors="replace").rstrip()
    if line:
        log.debug("%s", line)


def quiet_llama() -> None:
    """Route llama.cpp's log to :data:`log` and keep model loads from redirecting the process's
    output (module docstring). Idempotent; call before a model is loaded."""
    global _CALLBACK
    import llama_cpp
    from llama_cpp import _internals, llama

    with _LOCK:
        if _CALLBACK is not None:
            return
        _CALLBACK = llama_cpp.llama_log_callback(_to_log)
        llama_cpp.llama_log_set(_CALLBACK, ctypes.c_void_p(0))
        for module in (_internals, llama):  # each imported the name for itself
            if hasattr(module, "suppress_stdout_stderr"):
                module.suppress_stdout_stderr = _streams_left_alone
