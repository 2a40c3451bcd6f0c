"""Terminal output: a shared rich console and a progress reporter that draws bars."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..progress import Advance

console = Console()
err_console = Console(stderr=True)


class RichReporter:
    """Shows a progress bar for stages expected to take over a second (all of them, quietly, when fast)."""

    @contextmanager
    def stage(self, description: str, total: int | None = None) -> Iterator[Advance]:
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        if total:
            columns.append(TimeRemainingColumn())
        start = time.perf_counter()
        with Progress(*columns, console=err_console, transient=True) as progress:
            task = progress.add_task(description, total=total)
            yield lambda n=1: progress.advance(task, n)
        elapsed = time.perf_counter() - start
        if elapsed >= 1.0:
            err_console.print(f"[dim]{description}: {elapsed:.1f}s[/dim]")
