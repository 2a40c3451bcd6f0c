import json
import os
import stat
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


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_written_file_has_the_permissions_a_plain_write_gives(tmp_path: Path, umask: int, mode: int) -> None:
    """Every file written aside and renamed into place kept mkstemp's 0600: indexes, manifests and
    eval results were readable by their owner alone, so a service running as another user could not
    take on the collections `convrag index` had built."""
    previous = os.umask(umask)
    try:
        write_json(tmp_path / "new.json", {"v": 1})
        save_npy(tmp_path / "new.npy", np.zeros(2, dtype=np.float32))
        kept = tmp_path / "kept.json"
        kept.write_text("{}")
        kept.chmod(0o604)
        write_json(kept, {"v": 2})  # an existing file keeps its own permissions, as open(path, "w") leaves them
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "new.npy").stat().st_mode) == mode
    assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and json.loads(kept.read_text()) == {"v": 2}
