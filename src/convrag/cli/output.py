"""Terminal output shared by the command groups: snippets and the results table."""

from __future__ import annotations

from rich.table import Table

from ..console import console


def snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def print_results_table(results, baseline: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """nDCG@10 per domain, ALL-3 and ALL for each run, with R@5 and the paired p-value vs the baseline."""
    from ..eval.experiment import significance

    domains = list(dict.fromkeys(d for r in results for d in r.domains))
    tests = {t["run"]: t for t in significance(results, baseline)} if baseline else {}
    table = Table(title="nDCG@10 (official MT-RAG scoring)", show_lines=False)
    table.add_column("run", no_wrap=True)
    for d in domains:
        table.add_column(d, justify="right")
    for name in ("ALL-3", "ALL"):
        table.add_column(name, justify="right")
    table.add_column("ALL R@5", justify="right")
    if tests:
        table.add_column(f"p vs {baseline}", justify="right")
    for r in results:
        cells = [f"{r.domains[d].means['nDCG@10']:.4f}" if d in r.domains else "-" for d in domains]
        cells.append(f"{r.all3.means['nDCG@10']:.4f}" if r.all3 else "-")
        cells.append(f"{r.all.means['nDCG@10']:.4f}" if r.all and r.all.means else "-")
        cells.append(f"{r.all.means['Recall@5']:.4f}" if r.all and r.all.means else "-")
        if tests:
            cells.append(f"{tests[r.name]['p_randomization']:.3g}" if r.name in tests else "(baseline)")
        table.add_row(r.name, *cells)
    console.print(table)
