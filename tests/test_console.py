"""The terminal's progress reporter (convrag/console.py)."""

import io

import pytest
from rich.console import Console

from convrag import console
from convrag.console import RichReporter


def test_a_note_says_what_the_current_step_does_until_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "err_console", Console(file=io.StringIO(), force_terminal=True))
    reporter = RichReporter()
    reporter.note("nothing on show")  # outside a stage: nothing to say it on, and no error
    with reporter.stage("reading documents", total=2) as advance:
        live = reporter._live
        assert live is not None
        progress, task, _ = live
        reporter.note("page 3 of 40 read by OCR")
        assert progress.tasks[0].description == "reading documents (page 3 of 40 read by OCR)"
        advance(1)
        assert progress.tasks[0].description == "reading documents" and progress.tasks[0].completed == 1
    assert reporter._live is None
