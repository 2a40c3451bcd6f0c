"""The README's Python API runs as written: what a new user copies first must not drift from the code."""

import gzip
import json
import re
from pathlib import Path

import pytest

from tests.helpers import ScriptedLLM

README = Path(__file__).resolve().parents[1] / "README.md"


def python_api_blocks() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_python_api_section_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import convrag.llm

    blocks = python_api_blocks()
    assert len(blocks) == 2  # retrieval, then a conversation turn answered
    with gzip.open(tmp_path / "fiqa.jsonl.gz", "wt", encoding="utf-8") as corpus:
        for row in ({"_id": "d1", "title": "Index funds", "text": "An index fund tracks a market index and has low fees."},
                    {"_id": "d2", "title": "Bonds", "text": "A bond is a loan to a government or a company."}):
            corpus.write(json.dumps(row) + "\n")
    monkeypatch.chdir(tmp_path)
    # the snippet loads the local model; a scripted one stands in, so this checks the API, not the model
    llm = ScriptedLLM(rewrite=["What are the fees of an index fund?"] * 2, answer=["Index funds have low fees [1]."])
    monkeypatch.setattr(convrag.llm, "make_llm", lambda *args, **kwargs: llm)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 (the README's own code)
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("1 d1 ") and "Index funds" in out.splitlines()[0]
    assert "Index funds have low fees [1]." in out and "1 fiqa d1 Index funds" in out
    assert "'strategy': {" in out  # the trace
