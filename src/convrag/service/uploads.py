"""Uploaded files: safe names, distinct document ids, early content checks, and bounded writes.

A client-supplied filename is reduced to a plain basename that keeps letters and digits of every
script (``日本.md`` stays ``日本.md``) and replaces only what a file system or a URL path could
misread, so that no name ("../../etc/passwd", "C:\\evil", ".hidden") can place a file outside
the upload folder. Cleaning can still map two names to one (``a?b.md`` and ``a_b.md``), so the
document id is chosen by :func:`assign_doc_ids`: an upload replaces a document only when the
user's own name is identical; any other clash gets a distinct id.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath

from ..errors import DataFormatError
from ..ingest.documents import SUFFIXES, decode_text, document_stem, document_suffix
from ..ingest.msdoc import OLE_MAGIC

# Letters and digits of any script, and a few harmless marks; everything else becomes "_".
_UNSAFE = re.compile(r"[^\w .,()+&'@=~-]+", re.UNICODE)
MAX_NAME_BYTES = 200
#: how many bytes of a file are read to check that it is what its suffix says
SNIFF_BYTES = 64 * 1024


class UploadError(ValueError):
    """A rejected upload; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400, code: str = "invalid_upload") -> None:
        super().__init__(message)
        self.status, self.code = status, code


_SEPARATORS = re.compile(r"[\\/]")
_DRIVE = re.compile(r"[A-Za-z]:")


def original_name(name: str) -> str:
    """The user's own name for a file, Unicode-normalized (NFC): with its folders where it is a path
    inside a folder uploaded whole ("guides/index.md", as the web page sends a dropped folder's files),
    so that the many index.md of a documentation folder stay apart and one uploaded again replaces its
    own; "." and ".." parts are dropped. An absolute path (some clients send the file's whole local
    path) is cut to the file's name. The name is only shown and compared: files are stored under
    :func:`safe_filename`, which keeps the last part alone."""
    text = unicodedata.normalize("NFC", name or "").strip()
    drive = _DRIVE.match(text)
    absolute = bool(drive) or text.startswith(("/", "\\"))
    parts = [part.strip() for part in _SEPARATORS.split(text[2:] if drive else text)]
    parts = [part for part in parts if part not in ("", ".", "..")]
    return "/".join(parts[-1:] if absolute else parts)


def file_part(name: str) -> str:
    """The file's own name, the last part of :func:`original_name`'s path."""
    return PurePosixPath(original_name(name)).name


def _clip(text: str, max_bytes: int) -> str:
    while len(text.encode("utf-8")) > max_bytes:
        text = text[:-1]
    return text


def safe_filename(name: str) -> str:
    """A basename that cannot escape a folder: path parts, control and unsafe characters removed."""
    base = file_part(name)
    base = "".join(c for c in base if unicodedata.category(c)[0] != "C")  # control and format characters
    base = _UNSAFE.sub("_", base).strip(" .")
    if not base or base in {".", ".."}:
        raise UploadError(f"invalid file name {name!r}")
    suffix = document_suffix(base)
    stem = document_stem(base)
    if not stem or suffix not in SUFFIXES:
        raise UploadError(f"unsupported file type for {name!r} (accepted: {', '.join(sorted(SUFFIXES))})", 415,
                          "unsupported_file_type")
    return f"{_clip(stem, MAX_NAME_BYTES)}{suffix}"


def assign_doc_ids(originals: Iterable[str], existing: Mapping[str, str]) -> dict[str, str]:
    """Document ids for the files of one upload, keyed by the user's name.

    ``existing`` maps each stored document id to the user's name it was uploaded under. A file
    whose name equals a stored one replaces that document (same id); any other file gets the
    stem of its safe name, made distinct with ``-2``, ``-3``... when that id is taken.
    """
    by_name = {name: doc_id for doc_id, name in existing.items()}
    taken = set(existing)
    out: dict[str, str] = {}
    for original in originals:
        if original in by_name:
            out[original] = by_name[original]
            continue
        stem = document_stem(safe_filename(original))
        candidate, n = stem, 1
        while candidate in taken:
            n += 1
            candidate = f"{stem}-{n}"
        taken.add(candidate)
        out[original] = candidate
    return out


#: files that are zip packages: what each is called, and the older binary format it replaced (None: none);
#: Office's macro-enabled packages, templates and slide shows (.docm, .ppsx, ...) as their documents
_PACKAGES = {".docx": ("a Word", ".doc"), ".pptx": ("a PowerPoint", ".ppt"), ".xlsx": ("an Excel", ".xls"), ".epub": ("an EPUB", None),
             ".odt": ("an OpenDocument text", ".sxw"), ".ods": ("an OpenDocument spreadsheet", ".sxc"),
             ".odp": ("an OpenDocument presentation", ".sxi")}
_PACKAGES |= {suffix: _PACKAGES[f".{kind}"] for suffix, kind in SUFFIXES.items() if kind in ("docx", "pptx", "xlsx")}
#: files in Office's binary formats (OLE compound files): what each is called, and its newer zip package
_OLE = {".doc": ("a Word 97-2003", ".docx"), ".xls": ("an Excel 97-2003", ".xlsx"), ".ppt": ("a PowerPoint 97-2003", ".pptx"),
        ".msg": ("an Outlook message", None)}


def _starts(*signatures: bytes) -> Callable[[bytes], bool]:
    """Whether a file's first bytes are one of ``signatures``."""
    return lambda head: head.startswith(signatures)


#: HEIF's brands, in the ``ftyp`` box its first bytes hold: an iPhone's photo (.heic) and its like, and AVIF
_HEIF_BRANDS = (b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1", b"avif", b"avis")


def _picture(head: bytes) -> bool:
    """Whether a file starts as a picture read by OCR does (PNG, JPEG, WebP, BMP, GIF, HEIF, AVIF),
    whatever its suffix among theirs: Pillow opens a picture by its bytes (a phone's JPEG renamed .png
    is a picture)."""
    return (head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"RIFF", b"BM", b"GIF87a", b"GIF89a"))
            or (head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS))


def _tar(head: bytes) -> bool:
    """Whether a file starts as a tar archive does: compressed by gzip, bzip2 or xz (:func:`tarfile.open`
    reads each whatever its suffix among a tar's), or a POSIX or GNU tar's "ustar" at byte 257."""
    return head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")) or head[257:262] == b"ustar"


#: files known by their first bytes: whether a file's first bytes are right, what it is called, the error's code
_SIGNED: dict[str, tuple[Callable[[bytes], bool], str, str]] = {
    ".zip": (_starts(b"PK\x03\x04", b"PK\x05\x06"), "a zip archive", "not_a_zip"),
    ".tif": (_starts(b"II*\x00", b"MM\x00*"), "a TIFF picture", "not_a_tiff"),
    ".tiff": (_starts(b"II*\x00", b"MM\x00*"), "a TIFF picture", "not_a_tiff"),
    **{suffix: (_picture, "a picture (PNG, JPEG, WebP, BMP, GIF, AVIF or HEIC)", "not_a_picture")
       for suffix, kind in SUFFIXES.items() if kind == "picture"},
    **{suffix: (_tar, "a tar archive", "not_a_tar") for suffix, kind in SUFFIXES.items() if kind == "tar"},
    **{suffix: (_starts(b"\x28\xb5\x2f\xfd"), "a zstd tar archive", "not_a_tar") for suffix, kind in SUFFIXES.items()
       if kind == "tar.zst"},
    ".7z": (_starts(b"7z\xbc\xaf\x27\x1c"), "a 7z archive", "not_a_7z"),
    ".rar": (_starts(b"Rar!\x1a\x07\x00", b"Rar!\x1a\x07\x01\x00"), "a RAR archive", "not_a_rar"),
    # a mailbox's first line, as its reader requires: a text file named .mbox was taken, then refused by the job
    ".mbox": (_starts(b"From "), "a mailbox", "not_a_mbox")}
#: the first header of a mail saved as text (.eml): "From: ...", "Received: ...", "Subject: ..."
_MAIL_HEAD = re.compile(rb"[A-Za-z][A-Za-z0-9-]*: \S")


def check_content(filename: str, head: bytes, size: int) -> None:
    """Refuse, at upload time, a file that cannot be indexed: empty, a "PDF", "Word", "PowerPoint", "Excel", "EPUB" or "OpenDocument" file
    that is not one, or bytes that are not text (read at most :data:`SNIFF_BYTES` of it).

    Text is judged by :func:`convrag.ingest.documents.decode_text`, the reading the indexing job
    uses, so that the service takes what ``convrag index`` takes: a Windows-1252 or UTF-16 file
    saved by an editor on Windows, not only UTF-8."""
    if size == 0:
        raise UploadError(f"{filename!r} is empty", 422, "empty_file")
    suffix = document_suffix(filename)
    if suffix == ".pdf":
        if not head.lstrip()[:5] == b"%PDF-":
            raise UploadError(f"{filename!r} is not a PDF file (it does not start with %PDF-)", 415, "not_a_pdf")
        return
    if suffix in _PACKAGES:  # a zip package; an old binary .doc or .ppt renamed is not one
        if not head.startswith(b"PK\x03\x04"):
            what, old = _PACKAGES[suffix]
            readable = old in _OLE and head.startswith(OLE_MAGIC)
            advice = f"; it is an old {old} file: name it {old}" if readable else f"; save an old {old} as {suffix}" if old else ""
            raise UploadError(f"{filename!r} is not {what} {suffix} file (not a zip package{advice})", 415,
                              f"not_a_{suffix[1:]}")
        return
    if suffix in _SIGNED:
        right, what, code = _SIGNED[suffix]
        if not right(head):
            raise UploadError(f"{filename!r} is not {what} (it does not start as one)", 415, code)
        return
    if suffix in _OLE:
        if not head.startswith(OLE_MAGIC):
            what, newer = _OLE[suffix]
            advice = (f"; it is a {newer} package: name it {newer}" if newer and head.startswith(b"PK\x03\x04")
                      else "; it is an e-mail saved as text: name it .eml" if not newer and _MAIL_HEAD.match(head) else "")
            raise UploadError(f"{filename!r} is not {what} {suffix} file (not an OLE compound file{advice})", 415,
                              f"not_a_{suffix[1:]}")
        return
    try:
        text = decode_text(head, Path(filename), whole=size <= len(head))
    except DataFormatError as exc:
        raise UploadError(f"{filename!r} is {exc.reason}", 415, "not_text") from None
    if size <= len(head) and not text.strip():
        raise UploadError(f"{filename!r} has no text", 422, "empty_file")


def inside(folder: Path, name: str) -> Path:
    """``folder / name``, refusing anything that resolves elsewhere (defence in depth)."""
    target = (folder / name).resolve()
    if target.parent != folder.resolve():
        raise UploadError(f"invalid file name {name!r}")
    return target
