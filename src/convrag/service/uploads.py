"""Uploaded files: safe names and bounded writes into the service's data folder.

A client-supplied filename is reduced to a plain basename of safe characters, so that no name
("../../etc/passwd", "C:\\evil", ".hidden") can place a file outside the upload folder.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath, PureWindowsPath

from ..ingest.documents import SUFFIXES

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


class UploadError(ValueError):
    """A rejected upload; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def safe_filename(name: str) -> str:
    """A basename that cannot escape a folder: path parts, control and unsafe characters removed."""
    base = PureWindowsPath(PurePosixPath(name or "").name).name
    base = unicodedata.normalize("NFKC", base)
    base = _UNSAFE.sub("_", base).strip(" .")
    if not base or base in {".", ".."}:
        raise UploadError(f"invalid file name {name!r}")
    stem, dot, suffix = base.rpartition(".")
    if not dot or f".{suffix.lower()}" not in SUFFIXES:
        raise UploadError(f"unsupported file type for {name!r} (accepted: {', '.join(sorted(SUFFIXES))})", 415)
    return f"{stem[:120]}.{suffix.lower()}"


def doc_id_for(filename: str) -> str:
    """The document id of an uploaded file: its safe name without the suffix (uploading the same
    name again replaces the document)."""
    return filename.rsplit(".", 1)[0].replace(" ", "_")


def inside(folder: Path, name: str) -> Path:
    """``folder / name``, refusing anything that resolves elsewhere (defence in depth)."""
    target = (folder / name).resolve()
    if target.parent != folder.resolve():
        raise UploadError(f"invalid file name {name!r}")
    return target
