"""The benchmark helpers: the machine line every report carries."""

from pathlib import Path

from convrag.bench.timing import machine_description

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx avx2 fma

processor\t: 1
cpu family\t: 99
model name\t: another
"""


def test_the_machine_line_tells_apart_hosts_that_share_a_vendor_name(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO, encoding="utf-8")
    line = machine_description(str(info))
    assert line.startswith("AMD EPYC (family 25 model 1, AVX2), ")  # the first processor's fields
    assert "cores usable, Python 3." in line
    info.write_text(CPUINFO.replace("avx2 fma", "avx2 avx512f fma"), encoding="utf-8")
    assert machine_description(str(info)).startswith("AMD EPYC (family 25 model 1, AVX-512), ")


def test_an_unreadable_cpuinfo_still_gives_a_machine_line(tmp_path: Path) -> None:
    line = machine_description(str(tmp_path / "missing"))
    assert "(" not in line.split(",")[0] and "cores usable" in line
