"""Crash-safe file writes: write aside, flush to disk, then rename into place.

``os.replace`` is atomic on POSIX and Windows when source and target share a
folder, so a reader sees either the old file or the new one, never a torn one.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np


def fsync_dir(path: Path) -> None:
    """Make a rename inside ``path`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, created with mode 0666 so that the OS applies the umask,
    as it does to a plain ``open(path, "w")`` (which keeps an existing file's mode: :func:`atomic_open`
    gives the new file that mode). mkstemp makes its file 0600, and the rename kept that, so every
    index, manifest and result file was readable by its owner alone: a service running as another
    user could not take on the collections ``convrag index`` had built, nor a colleague read an
    eval's results."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:  # another writer's name: draw again
            continue
    return fd, tmp


@contextmanager
def atomic_open(path: Path) -> Iterator[IO[bytes]]:
    """Open a temporary file beside ``path``; on success it replaces ``path``, on error it is removed.
    The new file gets the permissions a plain write would give it (:func:`_create_beside`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            if path.exists():
                os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    with atomic_open(path) as handle:
        handle.write(text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: Iterable[Any]) -> None:
    write_text(path, "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows))


def save_npy(path: Path, array: np.ndarray) -> None:
    with atomic_open(path) as handle:
        np.save(handle, array, allow_pickle=False)
