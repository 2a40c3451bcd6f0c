"""Embed MT-RAG benchmark corpora into resumable staging shards, for a build finished elsewhere.

Embedding is the slow part of building a collection: all-mpnet-base-v2 reads about two MT-RAG
passages a second on 2 CPU cores, so its three comparable pools would take 7-10 hours here and
3.5 minutes on an H100 (docs/benchmarks.md). This tool runs only the embedding step of a build
(:func:`convrag.index.collection.embed_passages`), which writes its vectors as the same staging
shards an interrupted build leaves, and times it. Copy ``OUT/<domain>/.staging`` into the
benchmark's index folder for that domain (``--print-target`` names it) and the ordinary build
there (``convrag eval --embedding-model ...``) finds every shard done: it checks the corpus hash, model name, shard size
and count recorded with the shards, and embeds afresh if any differ.

Usage (on the machine with the GPU)::

    python tools/embed_shards.py --data ../shared/mtrag --domains clapnq,cloud,fiqa \\
        --embedding-model all-mpnet-base-v2 --device cuda --out shards

then here, check a sample of the copied vectors against this machine's own embeddings of the same
passages, and print where each domain's ``.staging`` folder goes::

    python tools/embed_shards.py --data ../shared/mtrag --embedding-model all-mpnet-base-v2 --verify shards
    python tools/embed_shards.py --data ../shared/mtrag --embedding-model all-mpnet-base-v2 --print-target
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from convrag.config import benchmark_index_dir
from convrag.data.beir import read_corpus
from convrag.data.domains import parse_domains
from convrag.data.layout import MTRAGData
from convrag.embeddings import Embedder, load_embedder
from convrag.index.collection import embed_passages, staging_dir
from convrag.index.manifest import corpus_sha256
from convrag.index.windows import WindowSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the MT-RAG data folder")
    parser.add_argument("--domains", default="clapnq,cloud,fiqa")
    parser.add_argument("--embedding-model", default="all-mpnet-base-v2")
    parser.add_argument("--device", default="cpu", help="torch device for the model (cpu, cuda)")
    parser.add_argument("--batch-size", type=int, default=16, help="texts per forward pass (larger suits a GPU)")
    parser.add_argument("--out", type=Path, help="folder to write <domain>/.staging/ into")
    parser.add_argument("--print-target", action="store_true", help="print where the shards go on this machine, and stop")
    parser.add_argument("--verify", type=Path, help="a folder of shards made elsewhere: re-embed --sample passages per domain here and compare")
    parser.add_argument("--sample", type=int, default=16)
    args = parser.parse_args()

    data = MTRAGData.discover(args.data)
    domains = parse_domains(args.domains)
    if args.print_target:
        for domain in domains:
            print(domain, benchmark_index_dir(data.root, args.embedding_model) / domain)
        return
    embedder = load_embedder(args.embedding_model, device=args.device, batch_size=args.batch_size)
    if args.verify is not None:
        verify(data, domains, embedder, args.verify, args.sample)
        return
    if args.out is None:
        parser.error("--out is required unless --print-target or --verify")
    timings: dict[str, dict[str, object]] = {}
    for domain in domains:
        passages = list(read_corpus(data.corpus_path(domain)))
        started = time.perf_counter()
        # the same window settings as the benchmark's builds (BenchmarkIndexes' default)
        dense = embed_passages(args.out / domain, passages, embedder, name=domain, windows=WindowSettings())
        seconds = time.perf_counter() - started
        windows = 0 if dense.windows is None else len(dense.windows)
        timings[domain] = {"passages": len(passages), "windows": windows, "seconds": round(seconds, 1)}
        print(f"{domain}: {len(passages)} passages + {windows} windows in {seconds:.1f} s", flush=True)
    device = args.device
    if device.startswith("cuda"):
        import torch

        device = f"{device} ({torch.cuda.get_device_name(0)})"
    report = {"model": embedder.name, "device": device, "batch_size": args.batch_size, "host": platform.node(),
              "date": time.strftime("%Y-%m-%d"), "domains": timings}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "timings.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def verify(data: MTRAGData, domains: list[str], embedder: Embedder, shards: Path, sample: int) -> None:
    """Passage vectors from ``shards`` against this machine's embeddings of a random sample of passages."""
    rng = np.random.default_rng(0)
    for domain in domains:
        passages = list(read_corpus(data.corpus_path(domain)))
        folder = staging_dir(shards / domain, corpus_sha256(passages), embedder.name)
        files = sorted(folder.glob("shard-*.npy"))
        if not files:
            raise SystemExit(f"{domain}: no shards of this corpus and model under {folder}")
        vectors = np.concatenate([np.load(f, allow_pickle=False) for f in files])
        if len(vectors) != len(passages):
            raise SystemExit(f"{domain}: {len(vectors)} vectors for {len(passages)} passages")
        chosen = rng.choice(len(passages), min(sample, len(passages)), replace=False)
        started = time.perf_counter()
        here = embedder.encode([passages[i].searchable_text for i in chosen])
        seconds = time.perf_counter() - started
        cosine = (here * vectors[chosen]).sum(axis=1)
        print(f"{domain}: {len(chosen)} passages re-embedded here in {seconds:.1f} s; lowest cosine {cosine.min():.7f}, "
              f"largest difference {np.abs(here - vectors[chosen]).max():.2e}", flush=True)


if __name__ == "__main__":
    main()
