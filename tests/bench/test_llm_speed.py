"""The reading-speed benchmark: its parsing of llama.cpp's build line, and one short real run."""

from __future__ import annotations

import pytest

from convrag.bench.llm_speed import build_features, measure, sample_text

SYSTEM_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
               "AVX512 = 1 | AVX512_VBMI = 0 | AVX512_VNNI = 1 | AMX_INT8 = 0 | LLAMAFILE = 1 | OPENMP = 1 | ")


def test_build_features_lists_the_vector_units_switched_on() -> None:
    assert build_features(SYSTEM_INFO) == ["AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512", "AVX512_VNNI"]
    assert build_features("") == []


def test_the_installed_build_names_at_least_avx2() -> None:
    from convrag.bench.llm_speed import llama_build

    assert "AVX2" in llama_build()  # the set-up never builds without it


def test_a_short_real_measurement(local_llm) -> None:  # type: ignore[no-untyped-def]
    llama = local_llm.open_context()
    speed = measure(llama, sample_text(), prompt_tokens=64, generated_tokens=3, runs=2)
    assert speed.prompt_tokens == 64 and speed.generated_tokens == 3
    assert len(speed.read_per_s) == len(speed.written_per_s) == 2
    assert all(rate > 0 for rate in speed.read_per_s + speed.written_per_s)
    with pytest.raises(ValueError, match="fewer than"):
        measure(llama, "Too short.", prompt_tokens=64)
