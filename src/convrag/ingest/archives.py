"""Archives (zip, tar and its compressed kinds, 7z and RAR through libarchive) read as their files,
each a section (:mod:`.contained`), all through one reader; bounded in files, bytes unpacked and
pictures read, since an archive can be a bomb, and read as far as it goes where it is cut short."""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..characters import readable_name
from ..errors import DataFormatError
from ..text import some_of
from .contained import Contained, add_sections, read_contained
from .docs_builds import build_files
from .formats import FORMAT_NAMES, PICTURE_KINDS, SUFFIXES, Heading, document_suffix

#: the most files an archive is read to, and the most bytes its files of types convrag reads unpack to
MAX_ARCHIVE_FILES = 10_000
MAX_ARCHIVE_BYTES = 1 << 30
#: the most pictures of an archive read by OCR (a second or so each: a Notion export's hundreds of
#: screenshots would keep an upload minutes longer than its documents); the others are named
MAX_ARCHIVE_PICTURES = 200


def _member_name(info: Any) -> str:
    """An archive member's name. zipfile reads a name without the UTF-8 flag as code page 437, the
    format's first encoding; macOS's Archive Utility and many other tools write UTF-8 without the
    flag, so "Gebühren.md" came out as "Geb├╝hren.md". Such a name is read as UTF-8 where its
    bytes are UTF-8."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


class _Member(NamedTuple):
    """A file in an archive, as its format lists it: its path there (readable), the bytes it claims to
    unpack to, whether a password locks it, and how to read its bytes (which raises :class:`_Unread`
    with the reason where the format knows why it cannot)."""

    name: str
    size: int
    read: Callable[[], bytes]
    locked: bool = False


class _Unread(Exception):
    """An archive's file its format cannot give, with the reason to name it by: a method Python
    cannot unpack, a password, a feature libarchive lacks."""


_TOO_MANY_FILES = "not read: it holds more than {:,} files; unpack it and index the folder"


def _listed(path: Path, what: str, listing: Iterator[_Member]) -> tuple[list[_Member], str]:
    """The files an archive lists, and where its listing broke off (a download cut short), as "its
    last file listed (the error)"; "" where it did not. An archive broken before its first file is
    refused; one that lists more than :data:`MAX_ARCHIVE_FILES` files is refused as soon as it does
    (a tar or a 7z has no count of its files to read first)."""
    members: list[_Member] = []
    try:
        for member in listing:
            members.append(member)
            if len(members) > MAX_ARCHIVE_FILES:
                raise DataFormatError(path, _TOO_MANY_FILES.format(MAX_ARCHIVE_FILES))
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:  # tar's "unexpected end of data", a compressed stream's EOFError, libarchive's ArchiveError
        if not members:
            if "encrypted" in str(exc):  # libarchive's "The archive header is encrypted": 7-Zip's "Encrypt file names"
                raise DataFormatError(path, "not read: it is locked by a password, its file names too") from None
            raise DataFormatError(path, f"not a readable {what}: it looks damaged or cut short ({_error_text(exc)})") from None
        return members, f"{members[-1].name} ({_error_text(exc)})"
    return members, ""


def _error_text(exc: BaseException) -> str:
    """An error's message for a reason: its first line, without libarchive's "(errno=84, retcode=-30, archive_p=...)"."""
    text = str(exc).split("\n", 1)[0]
    return f"{type(exc).__name__}: {text.split(' (errno=', 1)[0]}" if text else type(exc).__name__


def _archive_to_text(path: Path, members: list[_Member], cut: str = "") -> tuple[str, str, tuple[Heading, ...]]:
    """The files of an archive (zip, tar, 7z, RAR), read as a folder's are but as one document: each
    file of a type convrag reads, in path order, a section headed "File: its path" (its own headings
    a level below), then the others named with their reasons (an archive's pictures). ``members``
    come in the archive's own order, and are read in it: a compressed tar, or a 7z's solid block, is
    one stream, which a read out of its order would unpack again from its start. Hidden files and
    macOS's ``__MACOSX`` copies are left out. An archive of more than :data:`MAX_ARCHIVE_FILES`
    files, or whose readable files claim more than :data:`MAX_ARCHIVE_BYTES` unpacked (a zip bomb
    claims terabytes), is refused before anything is unpacked. ``cut``: where the archive's listing
    broke off (:func:`_listed`), named at the text's end."""
    ends = f"the archive ends early, after {cut}: any files after it are not read" if cut else ""
    try:
        text, headings = _archive_files(path, members)
    except DataFormatError as exc:
        raise DataFormatError(path, f"{exc.reason}; {ends}" if ends else exc.reason) from None
    return text + (f"\n{ends[0].upper()}{ends[1:]}." if ends else ""), "", headings


def _archive_files(path: Path, members: list[_Member]) -> tuple[str, tuple[Heading, ...]]:
    """The text and headings of :func:`_archive_to_text`, without the cut."""
    members = [member for member in members
               if not any(part.startswith(".") or part == "__MACOSX" for part in member.name.split("/"))]
    if len(members) > MAX_ARCHIVE_FILES:
        raise DataFormatError(path, _TOO_MANY_FILES.format(MAX_ARCHIVE_FILES))
    if sum(member.size for member in members if document_suffix(member.name) in SUFFIXES) > MAX_ARCHIVE_BYTES:
        raise DataFormatError(path, f"not read: its documents unpack to more than {MAX_ARCHIVE_BYTES >> 20:,} MB; "
                                    "unpack it and index the folder")
    # which files are read is decided in path order (the first pictures by path are read), then they are read in the archive's
    files: dict[int, Contained] = {}
    # a docs build's copies of its pages' sources and its index pages (Read the Docs' HTML zip): no pages of it
    position = {Path(member.name): index for index, member in enumerate(members)}
    for built in build_files(position, on_disk=False):
        files[position[built.path]] = Contained(members[position[built.path]].name, reason=f"{built.why} (a Sphinx build)")
    pictures = 0
    for index in sorted(range(len(members)), key=lambda index: members[index].name):
        name, kind = members[index].name, SUFFIXES.get(document_suffix(members[index].name))
        if kind in PICTURE_KINDS:
            pictures += 1
        if kind is None:
            files[index] = Contained(name, reason="not a type convrag reads")
        elif kind in PICTURE_KINDS and pictures > MAX_ARCHIVE_PICTURES:
            files[index] = Contained(name, reason=f"a picture past the first {MAX_ARCHIVE_PICTURES} of the archive, which OCR "
                                                  "reads at a second or so each; unpack it and index the folder")
        elif members[index].locked:
            files[index] = Contained(name, reason="locked by a password")
    for index, member in enumerate(members):
        if index in files:
            continue
        try:
            data = member.read()
        except _Unread as exc:
            files[index] = Contained(member.name, reason=str(exc))
            continue
        except MemoryError:
            raise
        except Exception as exc:  # a damaged member: a bad CRC, data zlib cannot unpack, a tar cut short in it
            files[index] = Contained(member.name, reason=f"it looks damaged ({type(exc).__name__})")
            continue
        files[index] = read_contained(member.name, data)
    ordered = [files[index] for index in sorted(files, key=lambda index: members[index].name)]
    if not ordered:
        raise DataFormatError(path, "no file in it could be read (it is empty)")
    if not any(file.text for file in ordered):
        raise DataFormatError(path, "no file in it could be read: " + some_of([f"{file.name} ({file.reason})" for file in ordered], 5))
    lines: list[str] = []
    headings: list[Heading] = []
    add_sections("File", ordered, lines, headings)
    return "\n".join(lines), tuple(headings)


def zip_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a zip archive (a Google Drive folder downloaded, a Notion or Confluence export, a
    manual's HTML pages), read by :func:`_archive_to_text`; zipfile unpacks no file past the size it
    claims."""
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(path, f"not a readable zip archive ({exc})") from None
    with archive:
        def reader(info: zipfile.ZipInfo) -> Callable[[], bytes]:
            def read() -> bytes:
                try:
                    return archive.read(info)
                except NotImplementedError:  # Deflate64 (Windows's for large files), PPMd, a method of zipfile's future
                    raise _Unread(f"packed with a method Python's zipfile cannot unpack ({info.compress_type}); "
                                  "unpack the archive and index the folder") from None
            return read

        return _archive_to_text(path, [_Member(readable_name(_member_name(info)), info.file_size, reader(info), bool(info.flag_bits & 0x1))
                                       for info in archive.infolist() if not info.is_dir()])


#: the most bytes a compressed archive without a table of its files (a compressed tar, a 7z's or a
#: RAR's solid block) is unpacked through to list them: a gzip bomb unpacks a thousandfold
MAX_STREAM_BYTES = 2 << 30
_UNPACKS_PAST = "not read: it unpacks to more than {:,} MB; unpack it and index the folder"


def tar_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a tar archive, compressed (.tar.gz, .tgz, .tar.bz2, .tar.xz) or not: a folder
    packed on Linux or macOS, a project's documentation, a GitHub release's sources; read by
    :func:`_archive_to_text`. Only its regular files are read (not its links, which name another
    file of it or one of the machine that packed it). A compressed archive that unpacks to more than
    :data:`MAX_STREAM_BYTES` is refused when it passes that size. An archive cut short (a download
    stopped) is read as far as it goes, and the cut is named."""
    import tarfile

    try:
        archive = tarfile.open(path, "r:*")
    except MemoryError:
        raise
    except Exception as exc:  # tarfile.ReadError, a compressed stream cut before its first file (EOFError)
        raise DataFormatError(path, f"not a readable tar archive ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    with archive:
        compressed = not isinstance(archive.fileobj, io.BufferedReader)

        def reader(info: tarfile.TarInfo) -> Callable[[], bytes]:
            def read() -> bytes:
                file = archive.extractfile(info)
                return file.read() if file is not None else b""
            return read

        def listing() -> Iterator[_Member]:
            passed = 0
            for info in archive:
                passed += info.size
                if compressed and passed > MAX_STREAM_BYTES:
                    raise DataFormatError(path, _UNPACKS_PAST.format(MAX_STREAM_BYTES >> 20))
                if info.isfile():
                    yield _Member(_tar_path(info.name), info.size, reader(info))

        return _archive_to_text(path, *_listed(path, "tar archive", listing()))


#: how many times a 7z or RAR archive is opened again after a file of it failed (libarchive's reader
#: stops at the first error): a locked file among open ones, a damaged archive's every file
MAX_REOPENINGS = 10


def _tar_path(name: str) -> str:
    """A member's path as a folder's: without the "./" of ``tar -C folder -czf x.tgz .`` (read by
    libarchive, a zstd tar's files were taken for hidden ones), nor a leading "/"."""
    return readable_name(name.removeprefix("./").lstrip("/"))


def libarchive_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The files of a 7z or RAR archive (7-Zip's, WinRAR's: how many Windows users pack a folder), or
    of a tar compressed by zstd (Python's tarfile reads gzip, bzip2 and xz only), read by libarchive (the C library, through libarchive-c) and then by :func:`_archive_to_text`.
    libarchive reads a file's data only while it is the current one, so the archive is opened twice:
    once to list its files, once to read those chosen, in its order. A file locked by a password is
    named so (one whose names are locked too is refused whole); what libarchive does not read (RAR
    3's solid archives past the first file, a volume of several) is named with its message. An
    archive that unpacks past :data:`MAX_STREAM_BYTES` while listed is refused."""
    try:
        import libarchive
    except Exception:  # no libarchive.so: libarchive-c fails on its first function, an AttributeError, not an ImportError
        raise DataFormatError(path, "not read: 7z, RAR and zstd tar archives are read by libarchive, which is not installed (Debian and "
                                    "Ubuntu: apt-get install libarchive13, or libarchive13t64 since Debian 13 and Ubuntu 24.04)") from None
    what = FORMAT_NAMES[SUFFIXES[document_suffix(path)]]

    def listing() -> Iterator[_Member]:
        passed = 0
        with libarchive.file_reader(str(path)) as archive:
            for ordinal, entry in enumerate(archive):
                passed += entry.size or 0
                if passed > MAX_STREAM_BYTES:
                    raise DataFormatError(path, _UNPACKS_PAST.format(MAX_STREAM_BYTES >> 20))
                if entry.isreg and not entry.islnk and not entry.issym:
                    yield _Member(_tar_path(entry.pathname), entry.size or 0, functools.partial(read, ordinal))

    with contextlib.ExitStack() as opened:
        entries: Iterator[tuple[int, Any]] | None = None
        reopenings = 0

        def read(ordinal: int) -> bytes:
            """The bytes of the archive's ``ordinal``-th entry, the reader moved forward to it."""
            nonlocal entries, reopenings
            if entries is None:
                if reopenings > MAX_REOPENINGS:
                    raise _Unread(f"not read: the archive failed more than {MAX_REOPENINGS} times before it")
                reopenings += 1
                entries = enumerate(opened.enter_context(libarchive.file_reader(str(path))))
            try:
                for index, entry in entries:
                    if index == ordinal:
                        data = bytearray()
                        for block in entry.get_blocks():
                            data += block
                            if len(data) > MAX_ARCHIVE_BYTES:
                                raise _Unread("it unpacks to more than its archive claims")
                        return bytes(data)
            except Exception as exc:  # libarchive stops at its first error: the next file is read from the archive opened again
                entries = None
                if isinstance(exc, _Unread):
                    raise
                message = _error_text(exc)
                raise _Unread("locked by a password" if "encrypted" in message else f"not read by libarchive ({message})") from None
            raise _Unread("not found when the archive was read again")

        members, cut = _listed(path, what, listing())
        return _archive_to_text(path, members, cut)
