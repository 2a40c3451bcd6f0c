"""Jupyter notebooks read as a reader of the notebook sees them (convrag/ingest/notebooks.py)."""

import json
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document
from convrag.ingest.notebooks import MAX_OUTPUT_CHARS

_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _notebook(cells: list[dict], **metadata: object) -> str:
    """A notebook as Jupyter writes it (nbformat 4.5, indented by one space)."""
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                                     **metadata}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "m", "metadata": {}, "source": text.splitlines(keepends=True)}


def _code(source: str, *outputs: dict) -> dict:
    return {"cell_type": "code", "execution_count": 1, "id": "c", "metadata": {}, "outputs": list(outputs),
            "source": source.splitlines(keepends=True)}


def test_a_notebook_reads_as_its_cells_and_what_its_code_printed(tmp_path: Path) -> None:
    """A notebook was "not a type convrag reads"; read as text it would be its JSON, base64 pictures and all."""
    (tmp_path / "berths.ipynb").write_text(_notebook([
        _markdown("# Winter berth occupancy\n\nWe count the boats kept over winter."),
        _code("import pandas as pd\nberths = pd.read_csv('berths.csv')\nprint(len(berths), 'boats')",
              {"output_type": "stream", "name": "stdout", "text": ["118 boats\n"]}),
        _code("berths.describe()",
              {"output_type": "execute_result", "execution_count": 2, "metadata": {},
               "data": {"text/plain": ["       length\n", "mean   9.4"], "text/html": ["<table>...</table>"]}},
              {"output_type": "display_data", "metadata": {}, "data": {"image/png": _PNG, "text/plain": ["<Figure size 640x480>"]}}),
        _markdown("## Findings\n\nThe north pier is full by October."),
        _code("berths.loc['pier']",
              {"output_type": "error", "ename": "KeyError", "evalue": "'pier'",
               "traceback": ["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m"]}),
        {"cell_type": "raw", "id": "r", "metadata": {}, "source": ["Exported for the harbour board."]},
        _code(""),
    ], language_info={"name": "python"}))
    document = read_document(tmp_path / "berths.ipynb")
    assert document.title == "Winter berth occupancy"
    assert [h.text for h in document.headings] == ["Winter berth occupancy", "Findings"]
    assert document.text.split("\n") == [
        "Winter berth occupancy", "We count the boats kept over winter.",
        "import pandas as pd", "berths = pd.read_csv('berths.csv')", "print(len(berths), 'boats')", "118 boats",
        "berths.describe()", "       length", "mean   9.4", "<Figure size 640x480>",
        "Findings", "The north pier is full by October.",
        "berths.loc['pier']", "KeyError: 'pier'", "Exported for the harbour board."]
    assert _PNG not in document.text


def test_a_long_output_is_cut_and_code_with_fences_stays_one_block(tmp_path: Path) -> None:
    log = "".join(f"epoch {i}: loss 0.{i:04d}\n" for i in range(2000))
    (tmp_path / "train.ipynb").write_text(_notebook([
        _code("print(log)", {"output_type": "stream", "name": "stdout", "text": log}),
        _code('doc = """\n```\nnot a fence of the notebook\n```\n"""'),
    ]))
    text = read_document(tmp_path / "train.ipynb").text
    assert "epoch 0: loss 0.0000" in text and "epoch 1999" not in text and len(text) < MAX_OUTPUT_CHARS + 200
    assert text.endswith('doc = """\n```\nnot a fence of the notebook\n```\n"""')


def test_an_old_notebook_reads_from_its_worksheets(tmp_path: Path) -> None:
    """nbformat 3 (IPython 1 and 2) kept its cells in worksheets, code in ``input``, and heading cells."""
    (tmp_path / "old.ipynb").write_text(json.dumps({"nbformat": 3, "metadata": {"name": ""}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "source": ["Tide tables"]},
        {"cell_type": "code", "language": "python", "input": ["high_water('Dover')"],
         "outputs": [{"output_type": "pyout", "text": ["'06:12'"]}]},
    ]}]}))
    document = read_document(tmp_path / "old.ipynb")
    assert (document.title, document.text.split("\n")) == ("Tide tables", ["Tide tables", "high_water('Dover')", "'06:12'"])


@pytest.mark.parametrize("content, reason", [
    ('{"cells": [', "not JSON (Expecting value at line 1)"),
    ("[1, 2]", "its JSON is no notebook (no cells)"),
    ('{"metadata": {}}', "its JSON is no notebook (no cells)"),
])
def test_a_damaged_notebook_is_named_with_its_reason(tmp_path: Path, content: str, reason: str) -> None:
    (tmp_path / "broken.ipynb").write_text(content)
    with pytest.raises(DataFormatError, match=rf"broken.ipynb: not a readable Jupyter notebook: {reason.replace('(', '[(]').replace(')', '[)]')}"):
        read_document(tmp_path / "broken.ipynb")


def test_odd_cells_and_outputs_are_passed_over(tmp_path: Path) -> None:
    """Whatever a tool wrote where a list or a string belongs is no text, not a crash."""
    (tmp_path / "odd.ipynb").write_text(json.dumps({"cells": [
        "a string", {"cell_type": "code", "source": 12, "outputs": "none"}, {"cell_type": "code", "source": ["x = 1"], "outputs": [7, {}]},
        {"cell_type": "markdown", "source": ["Berths ", None, "fill up."]}], "metadata": {"language_info": {"name": "py thon!"}}}))
    assert read_document(tmp_path / "odd.ipynb").text.split("\n") == ["x = 1", "Berths fill up."]
