"""A stored conversation as a Markdown document: what a user keeps or shares (the JSON export has everything)."""

from __future__ import annotations

import datetime as dt
from typing import Any


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _one_line(text: str) -> str:
    """``text`` on one line: a heading or a list item ends at a line break, and a question asked over
    several lines (or a PDF's title) carried the rest of it out of its heading into the body."""
    return " ".join(str(text).split())


def conversation_markdown(conversation: dict[str, Any]) -> str:
    """Title, collections, then each question and answer with its numbered sources."""
    lines = [f"# {_one_line(conversation['title'])}", "",
             f"Collections: {', '.join(conversation['collections'])} · strategy: {conversation['strategy']} · "
             f"started {_when(conversation['created'])}", ""]
    for number, turn in enumerate(conversation.get("turns", []), start=1):
        lines += [f"## {number}. {_one_line(turn['question'])}", "", f"*{_when(turn['created'])}*", "", turn["answer"], ""]
        trace = turn.get("trace") or {}
        warning = (trace.get("answer") or {}).get("warning")
        if warning:  # as the page shows it under the answer
            lines += [f"*Caution: {warning}*", ""]
        for name, why in ((trace.get("search") or {}).get("failures") or {}).items():
            lines += [f"*Caution: the collection {name} could not be searched ({why})*", ""]
        if turn["citations"]:
            lines.append("Sources:")
            for c in turn["citations"]:
                where = f" <{c['url']}>" if c.get("url") else ""
                mark = " (matched, not cited by the model)" if c.get("inferred") else ""
                lines.append(f"- [{c['number']}] {_one_line(c.get('title') or c['passage_id'])} — {c['collection']}{where}{mark}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
