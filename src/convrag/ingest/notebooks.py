"""Jupyter notebooks (.ipynb) made into the Markdown a reader of the notebook sees: its Markdown
cells as they are (their headings are the notebook's sections), its code cells as code blocks, and
what the code printed beneath each, as text.

A notebook is JSON (nbformat 4, and the worksheets of nbformat 3); read as a text file, it was its
JSON, escaped quotes and base64 pictures included. It is read here with the standard library:
nbformat, Jupyter's own reader, would add its schema validator and five packages for a walk over
lists that a damaged notebook's error message needs anyway.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import DataFormatError

#: the most characters of one output kept: a cell that prints a whole table or a training log
#: would fill the notebook's passages with it
MAX_OUTPUT_CHARS = 2000
_BACKTICKS = re.compile(r"`{3,}")
#: a terminal's colour codes, in the text of an error an IPython kernel reports
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def to_markdown(raw: str, path: Path) -> str:
    """The Markdown of the notebook ``raw`` (its JSON text); a file that is no notebook is a
    :class:`DataFormatError` naming ``path``."""
    try:
        notebook = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not a readable Jupyter notebook: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(notebook, dict):
        raise DataFormatError(path, "not a readable Jupyter notebook: its JSON is no notebook (no cells)")
    cells = notebook.get("cells")
    if cells is None:  # nbformat 3: the cells of its worksheets
        sheets = notebook.get("worksheets")
        cells = [cell for sheet in sheets if isinstance(sheet, dict) for cell in _listed(sheet.get("cells"))] if isinstance(sheets, list) else None
    if not isinstance(cells, list):
        raise DataFormatError(path, "not a readable Jupyter notebook: its JSON is no notebook (no cells)")
    language = _language(notebook.get("metadata"))
    blocks = [_cell(cell, language) for cell in cells if isinstance(cell, dict)]
    return "\n\n".join(block for block in blocks if block.strip())


def _cell(cell: dict[str, Any], language: str) -> str:
    """One cell as Markdown: a Markdown cell as written; a code cell (nbformat 3 names its source
    ``input``) fenced, then each of its outputs fenced as text; a raw cell as text."""
    kind = cell.get("cell_type")
    if kind in ("markdown", "heading"):  # nbformat 3 had heading cells, with their level
        text = _text(cell.get("source"))
        level = cell.get("level")
        return f"{'#' * min(level, 6)} {text}" if kind == "heading" and isinstance(level, int) and level > 0 else text
    if kind == "code":
        blocks = [_fenced(_text(cell.get("source", cell.get("input"))), language)]
        blocks += [_fenced(shown, "text") for output in _listed(cell.get("outputs")) if (shown := _output(output))]
        return "\n\n".join(block for block in blocks if block)
    return _fenced(_text(cell.get("source")), "text") if kind == "raw" else ""


def _output(output: Any) -> str:
    """The text an output shows: what the code printed, its result's plain text (a table's too), an
    error's name and message (not its traceback); pictures and HTML have no text here. At most
    :data:`MAX_OUTPUT_CHARS`."""
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        text = _text(output.get("text"))
    elif kind in ("execute_result", "display_data", "pyout"):
        data = output.get("data")
        text = _text(data.get("text/plain") if isinstance(data, dict) else output.get("text"))
    elif kind in ("error", "pyerr"):
        text = _ANSI.sub("", f"{_text(output.get('ename'))}: {_text(output.get('evalue'))}")
    else:
        text = ""
    text = text.rstrip().lstrip("\n") if text.strip() else ""  # a table's first line keeps its indentation
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS].rstrip() + " [...]"


def _fenced(text: str, language: str) -> str:
    """``text`` as a fenced code block, its fence longer than any run of backticks in it."""
    if not text.strip():
        return ""
    fence = "`" * max([3] + [len(run) + 1 for run in _BACKTICKS.findall(text)])
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _language(metadata: Any) -> str:
    """The notebook's programming language, as a code block's info names it ("python"), else ""."""
    if not isinstance(metadata, dict):
        return ""
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        found = metadata.get(key)
        if isinstance(found, dict) and isinstance(found.get(field), str) and re.fullmatch(r"[\w+#.-]{1,30}", found[field]):
            return found[field]
    return ""


def _text(value: Any) -> str:
    """A notebook's text, which it writes as one string or as a list of lines."""
    if isinstance(value, str):
        return value
    return "".join(part for part in value if isinstance(part, str)) if isinstance(value, list) else ""


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
