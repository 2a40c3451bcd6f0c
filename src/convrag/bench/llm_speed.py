"""`convrag bench llm`: how fast the local model reads a prompt and writes tokens on this machine.

Every latency target of the answer path (first token, whole answer, a rewrite's cost) is set by
two rates: prompt tokens read per second, which the answer's first token waits for, and tokens
written per second. Both depend on the host (two "AMD EPYC" hosts here read at 45 and 95 tokens/s)
and on how llama.cpp was built for it (the set-up builds AVX-512 kernels where the CPU has them).
This benchmark measures both rates with the backend's own settings, once with each of llama.cpp's
attention kernels (the fused "flash" one is the default: about 5 % faster to read on the host
measured), and names the build, so that a latency in docs/benchmarks.md can be read against the
speed of the host it came from. Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import datetime as dt
import itertools
import statistics
import time
from pathlib import Path
from typing import Any, NamedTuple

from ..console import console
from ..data.beir import read_corpus
from ..data.layout import MTRAGData, sample_root
from ..eval.report import markdown_table
from ..index.atomic import write_json, write_text
from ..llm.local import FLASH_ATTN, LocalLLM, llama_build
from .timing import machine_description


class Speed(NamedTuple):
    """One measurement: tokens per second, one value per run."""

    prompt_tokens: int
    read_per_s: list[float]
    generated_tokens: int
    written_per_s: list[float]


def sample_text() -> str:
    """Real prose to read: the bundled MT-RAG sample's passages, the same on every run."""
    data = MTRAGData.discover(sample_root())
    return "\n\n".join(p.text for domain in data.domains for p in itertools.islice(read_corpus(data.corpus_path(domain)), 40))


def measure(llama: Any, text: str, prompt_tokens: int = 500, generated_tokens: int = 64, runs: int = 3) -> Speed:
    """Read the first ``prompt_tokens`` tokens of ``text`` from an empty context ``runs`` times,
    then write ``generated_tokens`` greedily after a 200-token prompt, ``runs`` times.
    One untimed read first loads the weights into memory (they are memory-mapped)."""
    tokens = llama.tokenize(text.encode("utf-8"))[:prompt_tokens]
    if len(tokens) < prompt_tokens:
        raise ValueError(f"the text has {len(tokens)} tokens, fewer than the {prompt_tokens} to read")
    llama.reset()
    llama.eval(tokens[:64])
    read, written = [], []
    for _ in range(runs):
        llama.reset()
        start = time.perf_counter()
        llama.eval(tokens)
        read.append(len(tokens) / (time.perf_counter() - start))
    for _ in range(runs):
        llama.reset()
        llama.eval(tokens[:200])
        start = time.perf_counter()
        for _ in range(generated_tokens):
            llama.eval([llama.sample(temp=0.0)])
        written.append(generated_tokens / (time.perf_counter() - start))
    return Speed(len(tokens), read, generated_tokens, written)


def run_llm_speed_benchmark(out: Path, prompt_tokens: int = 500, generated_tokens: int = 64, runs: int = 3) -> dict[str, Any]:
    """Measure the default local model on this machine with each attention kernel (llama.cpp's plain
    one and its fused "flash" one), one after the other; write ``report.json`` and ``report.md``.
    Both are timed because which reads faster depends on the CPU and the build."""
    text = sample_text()
    speeds: dict[str, Speed] = {}
    for flash_attn in (False, True):
        llm = LocalLLM(flash_attn=flash_attn)
        speeds["flash" if flash_attn else "plain"] = measure(llm.open_context(), text, prompt_tokens, generated_tokens, runs)
    default = "flash" if FLASH_ATTN else "plain"
    report = {
        "date": dt.date.today().isoformat(),
        "machine": machine_description(),
        "model": llm.model,
        "threads": llm.n_threads,
        "llama_cpp_build": llama_build(),
        "default_attention": default,
        **speeds[default]._asdict(),
        "attention": {name: speed._asdict() for name, speed in speeds.items()},
    }
    write_json(out / "report.json", report)
    rows = []
    for name, speed in speeds.items():
        kernel = f"{name} attention" + (" (the default)" if name == default else "")
        rows += [
            [f"prompt read, {kernel}", f"{prompt_tokens} tokens, empty context", f"{statistics.median(speed.read_per_s):.1f}",
             ", ".join(f"{v:.1f}" for v in speed.read_per_s)],
            [f"tokens written, {kernel}", f"{generated_tokens} tokens, greedy", f"{statistics.median(speed.written_per_s):.1f}",
             ", ".join(f"{v:.1f}" for v in speed.written_per_s)],
        ]
    markdown = "\n".join([
        f"Local model {llm.model}, {llm.n_threads} threads; {report['llama_cpp_build']}.",
        f"Machine: {report['machine']}; date {report['date']}.",
        "",
        markdown_table(["what", "how", "tokens/s (median)", "runs"], rows),
    ])
    write_text(out / "report.md", markdown + "\n")
    console.out(markdown)
    return report
