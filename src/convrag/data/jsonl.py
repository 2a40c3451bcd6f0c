"""Line-oriented JSON reading with errors that name the file and line."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import DataFormatError


def open_text(path: Path) -> IO[str]:
    """Open a plain, ``.gz`` or ``.zip`` text file for reading, as UTF-8.

    A byte-order mark at the start is skipped ("utf-8-sig"): Windows tools (Notepad, PowerShell 5's
    ``Out-File``) write one, and it would otherwise make the first line invalid JSON or the first
    header name of a qrels file wrong. A ``.zip`` must hold exactly one non-directory member (the official MT-RAG
    ``corpora/passage_level/{domain}.jsonl.zip`` files do).
    """
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file not found")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig")
    if path.suffix == ".zip":
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise DataFormatError(path, f"not a zip archive ({exc})") from None
        members = [m for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX")]
        if len(members) != 1:
            names = ", ".join(m.filename for m in members) or "nothing"
            raise DataFormatError(path, f"expected one file inside the zip archive, found {names}")
        return io.TextIOWrapper(archive.open(members[0]), encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig")


def parse_json(text: str | bytes) -> Any:
    """:func:`json.loads`, with JSON nested deeper than Python's parser goes (about a thousand levels)
    raised as the :class:`json.JSONDecodeError` it is to a reader of the file, where it escaped as a
    RecursionError traceback."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text if isinstance(text, str) else "", 0) from None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; malformed lines raise with their number."""
    with open_text(path) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    obj = parse_json(line)
                except json.JSONDecodeError as exc:
                    raise DataFormatError(path, f"invalid JSON ({exc.msg}, column {exc.colno})", number) from None
                if not isinstance(obj, dict):
                    raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", number)
                yield number, obj
        except (EOFError, gzip.BadGzipFile, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise DataFormatError(path, f"cannot read compressed or encoded data ({exc})") from None


def require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path, line: int | None) -> Any:
    """Return ``obj[key]`` if present and of the right type, else raise a located error."""
    if key not in obj:
        raise DataFormatError(path, f"missing field {key!r}", line)
    value = obj[key]
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataFormatError(path, f"field {key!r} should be {expected}, got {type(value).__name__}", line)
    return value
