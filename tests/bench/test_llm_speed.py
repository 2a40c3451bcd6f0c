"""The reading-speed benchmark: one short real run."""

from __future__ import annotations

import pytest

from convrag.bench.llm_speed import measure, sample_text


def test_a_short_real_measurement(local_llm) -> None:  # type: ignore[no-untyped-def]
    llama = local_llm.open_context()
    speed = measure(llama, sample_text(), prompt_tokens=64, generated_tokens=3, runs=2)
    assert speed.prompt_tokens == 64 and speed.generated_tokens == 3
    assert len(speed.read_per_s) == len(speed.written_per_s) == 2
    assert all(rate > 0 for rate in speed.read_per_s + speed.written_per_s)
    with pytest.raises(ValueError, match="fewer than"):
        measure(llama, "Too short.", prompt_tokens=64)
