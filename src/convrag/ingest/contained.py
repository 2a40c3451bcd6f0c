"""Files inside files (an archive's members, a mail's attachments): each read as the file it is,
bounded in nesting depth, and written as sections headed by its name, so that a passage is cited by
the file it came from; what is not read is named with its reason."""

from __future__ import annotations

import contextvars
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from ..errors import DataFormatError
from .formats import SUFFIXES, Heading, document_suffix, no_text_reason

#: how deep files inside files are read (a mail attached to a mail, an archive in an archive): a
#: forwarded thread is a few deep, a crafted file thousands
MAX_NESTING = 3
_NESTING: contextvars.ContextVar[int] = contextvars.ContextVar("convrag_nesting", default=0)
#: the files that hold files
_CONTAINERS = {".eml": "a mail", ".msg": "a mail", ".mbox": "a mailbox",
               **{suffix: "an archive" for suffix, kind in SUFFIXES.items() if kind in ("zip", "tar", "tar.zst", "7z", "rar")}}


class Contained(NamedTuple):
    """A file inside a file (an e-mail's attachment, an archive's member) read as the file it is: its
    name, and its text and headings as :func:`~.documents.read_document` reads them; ``reason`` instead says why
    it was not read."""

    name: str
    text: str = ""
    headings: tuple[Heading, ...] = ()
    reason: str = ""


def read_contained(name: str, data: bytes) -> Contained:
    """A file inside a file, read as the file it is when convrag reads its type: it is written to a
    private temporary file under its own suffix (the format follows the suffix, as for any file). A
    type convrag does not read, a damaged file, and a mail or an archive nested past
    :data:`MAX_NESTING` are named with the reason, not read, and do not stop the other files."""
    suffix = document_suffix(name)
    if suffix not in SUFFIXES:
        return Contained(name, reason="not a type convrag reads")
    if not data:
        return Contained(name, reason="empty")
    if suffix in _CONTAINERS and _NESTING.get() >= MAX_NESTING:
        return Contained(name, reason=f"{_CONTAINERS[suffix]} nested more than {MAX_NESTING} deep")
    from .documents import read_bytes  # the reader of every format, archives and mail among them

    token = _NESTING.set(_NESTING.get() + 1)
    try:
        document = read_bytes(data, name)
    except DataFormatError as exc:
        return Contained(name, reason=exc.reason)
    finally:
        _NESTING.reset(token)
    if not document.text.strip():  # a blank file, a photo without words: named with why, not as "name ()"
        return Contained(name, reason=no_text_reason(Path(name)))
    return Contained(name, document.text, document.headings)


def add_sections(label: str, files: list[Contained], lines: list[str], headings: list[Heading]) -> None:
    """Each file read, as a section headed "{label}: its name" (its own headings a level below),
    added to ``lines`` and ``headings``; then one line that names the others, each with its reason
    (counted by reason where there are many: an archive's hundred pictures)."""
    for file in files:
        if file.text:
            lines += [f"{label}: {file.name}", file.text]
            headings += [Heading(1, f"{label}: {file.name}", part=True), *(Heading(h.level + 1, h.text, h.part) for h in file.headings)]
    unread = [file for file in files if not file.text]
    if len(unread) > 10:
        counted = Counter(file.reason for file in unread)
        lines.append(f"{label}s not read: {len(unread)} (" + "; ".join(f"{n} {reason}" for reason, n in counted.most_common()) + ")")
    elif unread:
        lines.append(f"{label}s not read: " + ", ".join(f"{file.name} ({file.reason})" for file in unread))
