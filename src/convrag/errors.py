"""Errors that convrag reports to users as one clear line.

Everything a user can cause (a malformed file, an unknown collection, a model
that does not match an index) raises a subclass of :class:`ConvragError`; the
CLI prints its message and exits non-zero instead of showing a traceback.
"""

from .characters import readable_name


class ConvragError(Exception):
    """Base class for user-facing errors."""


class DataFormatError(ConvragError):
    """A data file is malformed. The message names the file and, where known, the line."""

    def __init__(self, path: object, message: str, line: int | None = None) -> None:
        where = readable_name(f"{path}:{line}" if line is not None else f"{path}")  # a Latin-1 name's bytes as \xe9
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.reason = message


class CollectionError(ConvragError):
    """A collection is missing, incomplete, or does not match what the caller asked for."""


class CollectionReplaced(CollectionError):
    """The version of a collection a reader opened was replaced by a newer build (and removed) before
    the reader loaded all of it; opening the collection again gives the new version."""


class CollectionDamaged(CollectionError):
    """A collection's files cannot be read: missing, truncated or overwritten (a disk fault, a
    copy cut short, a hand edit). Not the caller's doing; building the collection again repairs it.
    A pipeline over several collections answers from the others and names this one."""


class BackendUnavailable(CollectionError):
    """The search backend (a Milvus server) failed or cannot be reached. Neither the caller's doing
    nor the collection's: it usually passes, so the service answers 503 (try again later) and an
    indexing job waits and tries again instead of failing at once."""

    def __init__(self, message: str, public: str | None = None) -> None:
        super().__init__(message)
        #: the message without the backend's address, for the service's clients
        self.public = public or message


class ConfigError(ConvragError):
    """An option or setting has an unusable value."""


def not_utf8(exc: UnicodeDecodeError) -> str:
    """The reason a file that failed to decode as UTF-8 gives its user: the byte and its line, so
    that a Latin-1 "café" can be found (a bare UnicodeDecodeError names neither the file nor a line).
    ``exc`` must come from decoding the file's bytes in one piece, so that its offset is the file's."""
    line = exc.object[: exc.start].count(b"\n") + 1
    return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line {line}); save it as UTF-8"
