"""HEIC photos (an iPhone's), decoded in a child process.

Pillow does not open HEIF; pi-heif (the decoding-only build of pillow-heif, with libheif and libde265)
does. Its libheif (1.23.0) crashed the process on one damaged photo in 200 (a segmentation fault,
found by ``tests/ingest/test_documents.py``'s damaged copies), and a crash is not an exception: it
would end ``convrag index`` of a whole folder, or the service. So a HEIC file is decoded by a child
Python process into a PNG, which the parent opens as any picture; a crash there is the file's error.
The child costs about a tenth of a second (0.09 s for the test photo), against a second or so of OCR.

    python -m convrag.ingest.heif photo.heic out.png
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from ..errors import DataFormatError

#: the longest one photo is decoded for
DECODE_SECONDS = 120.0
#: the child's exit status for a file no decoder knows (its message would name the file's path, a
#: temporary one for a photo attached to a mail)
UNKNOWN = 3


def to_png(source: Path, target: Path) -> None:
    """Decode the HEIF picture ``source`` into the PNG ``target`` in a child process; a
    :class:`DataFormatError` for ``source`` where it cannot be decoded, the child's crash included."""
    try:
        run = subprocess.run([sys.executable, "-m", __name__, str(source), str(target)], capture_output=True,
                             timeout=DECODE_SECONDS)
    except subprocess.TimeoutExpired:
        raise DataFormatError(source, f"not a readable picture: decoding it took more than {DECODE_SECONDS:.0f} s") from None
    if run.returncode < 0:
        name = signal.Signals(-run.returncode).name if -run.returncode in signal.valid_signals() else str(-run.returncode)
        raise DataFormatError(source, f"not a readable picture: the HEIC decoder (libheif) crashed on it ({name}); it looks damaged")
    if run.returncode == UNKNOWN:
        raise DataFormatError(source, "not a readable picture: neither pi-heif nor Pillow knows a picture format that starts as "
                                      "it does (damaged, or another kind of file)")
    if run.returncode != 0:
        said = [line for line in run.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise DataFormatError(source, f"not a readable picture: it looks damaged ({said[-1][:200] if said else run.returncode})")


def _decode(source: str, target: str) -> None:
    """The child's work: open ``source`` with pi-heif (turned as its rotation says) and save it as PNG."""
    import pi_heif
    from PIL import Image, UnidentifiedImageError

    pi_heif.register_heif_opener()
    try:
        opened = Image.open(source)
    except UnidentifiedImageError:
        sys.exit(UNKNOWN)
    with opened as picture:
        picture.save(target, format="PNG", compress_level=1)


if __name__ == "__main__":
    _decode(sys.argv[1], sys.argv[2])
