"""`convrag bench milvus`: the Milvus backend against the embedded one on all of MT-RAG.

Both backends search the same passages with the same vectors (copied from the
embedded collections), so differences come from the engines: Milvus's own BM25
(its analyzer and scoring) against bm25s, and FLAT inner product against the
embedded exact search, which should agree. Reports ingest time, metrics side by
side, top-10 overlap per query, query latency and memory (this process plus the
Milvus Lite server it starts), and the on-disk size per passage.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from ..console import RichReporter, console
from ..data.layout import MTRAGData
from ..eval.experiment import run_grid
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes, MilvusIndexes
from ..index.atomic import write_json, write_text
from .timing import latencies_ms, machine_description, percentiles

MODES = ("bm25", "dense", "hybrid")
SOURCES = ("lastturn", "rewrite")


def _rss_mb_with_children() -> float:
    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def _folder_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def run_milvus_benchmark(data_root: Path, out: Path, split: str = "test") -> dict[str, Any]:
    data = MTRAGData.discover(data_root, split)
    reporter = RichReporter()
    out = Path(out)
    db = out / "milvus" / "convrag.db"
    if db.parent.exists():
        shutil.rmtree(db.parent)  # measure a fresh ingest
    embedded = BenchmarkIndexes(data, reporter=reporter)
    for domain in data.domains:
        embedded.collection(domain)
    rss_before = _rss_mb_with_children()
    milvus = MilvusIndexes(embedded, str(db), reporter=reporter)
    for domain in data.domains:
        milvus.collection(domain)
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "machine": machine_description(), "uri": str(db)}
    report["ingest_s"] = {d: round(s, 1) for d, s in milvus.ingest_seconds.items()}
    report["passages"] = {d: len(embedded.collection(d)) for d in data.domains}
    report["disk_mb"] = round(_folder_mb(db.parent), 1)

    ours = {r.name: r for r in run_grid(embedded, data.domains, MODES, SOURCES, reporter=reporter)}
    theirs = {r.name: r for r in run_grid(milvus, data.domains, MODES, SOURCES, reporter=reporter)}
    rows = []
    for name, mine in ours.items():
        other = theirs[name]
        overlap = [
            len({h.doc_id for h in mine.hits[t][:10]} & {h.doc_id for h in other.hits.get(t, [])[:10]}) / 10
            for t in mine.hits
        ]
        rows.append(
            {
                "run": name,
                "embedded_all3_ndcg10": mine.all3.means["nDCG@10"] if mine.all3 else None,
                "milvus_all3_ndcg10": other.all3.means["nDCG@10"] if other.all3 else None,
                "embedded_all_ndcg10": mine.all.means["nDCG@10"] if mine.all else None,
                "milvus_all_ndcg10": other.all.means["nDCG@10"] if other.all else None,
                "embedded_all_r5": mine.all.means["Recall@5"] if mine.all else None,
                "milvus_all_r5": other.all.means["Recall@5"] if other.all else None,
                "top10_overlap": float(np.mean(overlap)),
                "embedded_s": round(mine.seconds, 1),
                "milvus_s": round(other.seconds, 1),
            }
        )
    report["comparison"] = rows

    queries = [q for d in data.domains for q in data.queries(d, "rewrite").values()]
    latency = {}
    for mode in MODES:
        m = milvus.retriever("fiqa", mode)
        e = embedded.retriever("fiqa", mode)
        latency[mode] = {
            "milvus": percentiles(latencies_ms(lambda q, r=m: r.search([q], 10), queries)),
            "embedded": percentiles(latencies_ms(lambda q, r=e: r.search([q], 10), queries)),
        }
    report["latency_ms_fiqa"] = latency
    report["rss_mb"] = {"before_milvus": round(rss_before), "after": round(_rss_mb_with_children())}
    milvus.store.close()

    write_json(out / "milvus.json", report)
    write_text(out / "milvus.md", render_markdown(report))
    console.out(render_markdown(report))
    return report


def render_markdown(report: dict[str, Any]) -> str:
    total = sum(report["passages"].values())
    lines = [
        f"Machine: {report['machine']}. Date: {report['date']}. Milvus Lite file: `{report['uri']}`. {total} passages in 4 collections.",
        "",
        markdown_table(
            ["run", "ALL-3 nDCG@10 embedded", "ALL-3 nDCG@10 Milvus", "ALL nDCG@10 embedded", "ALL nDCG@10 Milvus",
             "ALL R@5 embedded", "ALL R@5 Milvus", "top-10 overlap", "eval s embedded / Milvus"],
            [[r["run"], r["embedded_all3_ndcg10"], r["milvus_all3_ndcg10"], r["embedded_all_ndcg10"], r["milvus_all_ndcg10"],
              r["embedded_all_r5"], r["milvus_all_r5"], r["top10_overlap"], f"{r['embedded_s']} / {r['milvus_s']}"]
             for r in report["comparison"]],
        ),
        "",
        markdown_table(
            ["measure", "value"],
            [
                ["ingest time per collection, s (vectors copied, no embedding)", str(report["ingest_s"])],
                ["on-disk size of the Milvus Lite data, MiB", report["disk_mb"]],
                ["per passage on disk, KiB", f"{report['disk_mb'] * 1024 / total:.2f}"],
                ["memory before / after Milvus (process + Milvus Lite server), MiB",
                 f"{report['rss_mb']['before_milvus']} / {report['rss_mb']['after']}"],
                *[
                    [f"{mode} query on fiqa, ms p50 / p95 (Milvus vs embedded, incl. query embedding)",
                     f"{v['milvus']['p50']:.1f} / {v['milvus']['p95']:.1f} vs {v['embedded']['p50']:.1f} / {v['embedded']['p95']:.1f}"]
                    for mode, v in report["latency_ms_fiqa"].items()
                ],
            ],
        ),
    ]
    return "\n".join(lines) + "\n"
