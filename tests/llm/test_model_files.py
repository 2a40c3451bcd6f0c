import pytest

from convrag.llm.base import LLMError
from convrag.llm.model_files import DEFAULT_MODEL_SIZE, part_paths, verify


def test_all_parts_are_installed_in_order():
    parts = part_paths()
    assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in parts) == DEFAULT_MODEL_SIZE


def test_verify_rejects_a_wrong_file(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(LLMError, match="bytes"):
        verify(bad)
    with pytest.raises(LLMError, match="SHA-256"):
        verify(bad, size=104)


def test_the_joined_default_model_is_verified(model_path):
    assert model_path.stat().st_size == DEFAULT_MODEL_SIZE
    assert model_path.with_suffix(".verified").is_file()
