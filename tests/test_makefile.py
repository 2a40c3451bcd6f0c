"""The Makefile's choice of llama.cpp build flags from the CPU's features.

The set-up builds llama-cpp-python on the machine that runs it. AVX-512 makes the local model
read prompts a third faster where the CPU has it, and crashes it with an illegal instruction where
it does not; AMX crashes it on some CPUs that have it. So the flags follow /proc/cpuinfo, and
these tests feed the Makefile made-up cpuinfo files through its CPUINFO variable.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AVX2 = "fpu sse sse2 avx avx2 fma f16c bmi2"
AVX512 = AVX2 + " avx512f avx512cd avx512vl avx512dq avx512bw"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def cmake_args(tmp_path: Path, flags: str | None) -> dict[str, str]:
    """The -D options the Makefile passes to llama-cpp-python's build for a CPU with ``flags``."""
    cpuinfo = tmp_path / "cpuinfo"
    if flags is not None:
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "llama-cmake-args", f"CPUINFO={cpuinfo}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    return dict(option.removeprefix("-D").split("=", 1) for option in out.split())


def test_an_avx2_cpu_gets_no_avx512(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, AVX2)
    assert args["GGML_AVX2"] == "ON"
    assert args["GGML_AVX512"] == args["GGML_AVX512_VNNI"] == "OFF"


def test_a_cpu_with_the_avx512_base_set_and_extensions_gets_them(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, AVX512 + " avx512vbmi avx512_vnni")
    assert args["GGML_AVX512"] == args["GGML_AVX512_VBMI"] == args["GGML_AVX512_VNNI"] == "ON"
    assert args["GGML_AVX512_BF16"] == "OFF"


def test_avx512_needs_the_whole_base_set_and_its_extensions_need_avx512(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, AVX2 + " avx512f avx512_vnni")  # no avx512bw, vl, dq, cd
    assert args["GGML_AVX512"] == args["GGML_AVX512_VNNI"] == "OFF"


def test_amx_and_native_stay_off_even_where_the_cpu_has_amx(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, AVX512 + " amx_tile amx_int8 amx_bf16 avx512_bf16")
    assert args["GGML_NATIVE"] == args["GGML_AMX_TILE"] == args["GGML_AMX_INT8"] == "OFF"
    assert args["GGML_AVX512_BF16"] == "ON"


def test_no_cpuinfo_falls_back_to_avx2(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, None)
    assert args["GGML_AVX2"] == "ON" and args["GGML_AVX512"] == "OFF"
