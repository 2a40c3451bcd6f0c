"""One service per data folder. A second ``convrag serve`` over the same folder would clear the
first one's uploads in flight, run its queued indexing jobs a second time and answer over the same
conversations without the one-turn-at-a-time guard; the folder's lock file refuses it at start.

The lock is the operating system's (``filelock``: ``flock`` on POSIX), so a service that crashed
leaves nothing to clean up: the lock goes with its process."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import ConfigError

LOCK_FILE = "service.lock"


def lock_data_dir(data: Path) -> FileLock:
    """The held lock of ``data`` (released by :meth:`FileLock.release`, or when the process ends);
    :class:`~convrag.errors.ConfigError` when another service holds it."""
    # not thread-local: the app is made in one thread and released by the server's, at its shutdown
    lock = FileLock(data / LOCK_FILE, timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise ConfigError(f"another convrag service is using {data}: stop it, or start this one with another --data-dir") from None
    return lock
