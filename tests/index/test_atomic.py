from pathlib import Path

import numpy as np
import pytest

from convrag.index.atomic import atomic_open, save_npy, write_json


def test_failed_write_keeps_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_open(target) as handle:
            handle.write(b'{"v": 2')
            raise RuntimeError("crash mid-write")
    assert target.read_text().strip().startswith('{\n  "v": 1')
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"], "temporary file must be cleaned up"


def test_save_npy_round_trip(tmp_path: Path) -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    save_npy(tmp_path / "a.npy", array)
    assert np.array_equal(np.load(tmp_path / "a.npy"), array)
