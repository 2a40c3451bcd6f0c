"""Breakdowns of per-query scores and their Markdown rendering."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..types import Task
from .metrics import PerQuery

TURN_BUCKETS = ("1", "2", "3-5", "6+")


def turn_bucket(turn: int) -> str:
    """Position of a turn in its conversation: 1, 2, 3-5 or 6+."""
    if turn <= 1:
        return "1"
    if turn == 2:
        return "2"
    return "3-5" if turn <= 5 else "6+"


def _first(labels: tuple[str, ...]) -> str:
    return labels[0] if labels else "unlabeled"


#: Named ways of grouping tasks, each a function of the task.
GROUPINGS: dict[str, Callable[[Task], str]] = {
    "turn": lambda t: turn_bucket(t.turn),
    "multi_turn": lambda t: _first(t.enrichments.multi_turn),
    "answerability": lambda t: _first(t.enrichments.answerability),
}


def breakdown(
    scores: PerQuery, tasks: Mapping[str, Task], key: Callable[[Task], str], metrics: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Mean of each metric per group, plus ``count``; groups in a stable order."""
    groups: dict[str, list[dict[str, float]]] = {}
    for task_id, values in scores.items():
        if task_id in tasks:
            groups.setdefault(key(tasks[task_id]), []).append(values)
    order = sorted(groups, key=lambda g: (TURN_BUCKETS.index(g) if g in TURN_BUCKETS else len(TURN_BUCKETS), g))
    return {
        group: {"count": float(len(groups[group])), **{m: sum(v[m] for v in groups[group]) / len(groups[group]) for m in metrics}}
        for group in order
    }


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table; floats are shown with 4 decimals."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
