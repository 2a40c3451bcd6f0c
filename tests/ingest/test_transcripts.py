"""Captions and meeting transcripts read as who said what, and when (convrag/ingest/transcripts.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import transcripts
from convrag.ingest.documents import read_document


def _vtt(*cues: tuple[str, str, str]) -> str:
    return "WEBVTT\n\nNOTE written as Teams saves a meeting's transcript\n\n" + "\n\n".join(
        f"{start} --> {end}\n{text}" for start, end, text in cues) + "\n"


def test_a_meetings_transcript_reads_as_its_speakers_turns(tmp_path: Path) -> None:
    """A transcript was "not a type convrag reads"; read as text, a sentence said over three cues was three lines among timings."""
    (tmp_path / "board.vtt").write_text(_vtt(
        ("00:00:01.000", "00:00:04.000", "<v Ann Lee>Welcome to the harbour board meeting.</v>"),
        ("00:00:04.500", "00:00:07.000", "<v Ann Lee>Today we set the winter berth fee.</v>"),
        ("00:00:07.500", "00:00:11.000", "<v Bo Chen>I propose 310 dollars\nfor the season.</v>"),
        ("00:00:20.000", "00:00:23.000", "<v Bo Chen>And the slipway closes in November.</v>"),  # after a pause: a new point
        ("01:02:03.000", "01:02:05.000", "<v Ann Lee>Agreed.</v>"),
    ))
    assert read_document(tmp_path / "board.vtt").text.split("\n") == [
        "[00:00:01] Ann Lee: Welcome to the harbour board meeting. Today we set the winter berth fee.",
        "[00:00:07] Bo Chen: I propose 310 dollars for the season.",
        "[00:00:20] Bo Chen: And the slipway closes in November.",
        "[01:02:03] Ann Lee: Agreed."]


def test_zoom_names_its_speakers_in_the_text_and_a_label_said_once_is_no_speaker(tmp_path: Path) -> None:
    (tmp_path / "zoom.vtt").write_text(_vtt(
        ("00:00:01.000", "00:00:03.000", "Ann Lee: Welcome, everyone."),
        ("00:00:03.500", "00:00:06.000", "Bo Chen: Thanks. Note: the gate code changed."),
        ("00:00:06.500", "00:00:08.000", "Ann Lee: Which one?"),
        ("00:00:08.500", "00:00:10.000", "Bo Chen: The north gate."),
        ("00:00:10.500", "00:00:12.000", "Note: minutes follow."),
    ))
    assert read_document(tmp_path / "zoom.vtt").text.split("\n") == [
        "[00:00:01] Ann Lee: Welcome, everyone.", "[00:00:03] Bo Chen: Thanks. Note: the gate code changed.",
        "[00:00:06] Ann Lee: Which one?", "[00:00:08] Bo Chen: The north gate.", "[00:00:10] Note: minutes follow."]


def test_rolling_captions_read_each_line_once(tmp_path: Path) -> None:
    """YouTube's captions roll: each cue repeats the line before it, with each word's timing inside."""
    (tmp_path / "talk.vtt").write_text(
        "WEBVTT\nKind: captions\nLanguage: en\n\n"
        "00:00:00.000 --> 00:00:02.500 align:start position:0%\n \nwelcome<00:00:00.500><c> to</c><00:00:01.000><c> the</c><c> harbour</c>\n\n"
        "00:00:02.500 --> 00:00:02.510 align:start position:0%\nwelcome to the harbour\n \n\n"
        "00:00:02.510 --> 00:00:05.000 align:start position:0%\nwelcome to the harbour\nboard<00:00:03.000><c> meeting</c>\n\n"
        "00:00:05.010 --> 00:00:08.000 align:start position:0%\nboard meeting\nwe<00:00:05.500><c> set</c><c> the</c><c> fee</c>\n")
    assert read_document(tmp_path / "talk.vtt").text == "[00:00:00] welcome to the harbour board meeting we set the fee"


def test_subrip_subtitles_read_without_their_numbers_timings_and_tags(tmp_path: Path) -> None:
    (tmp_path / "film.srt").write_text("1\n00:00:01,000 --> 00:00:04,000\nThe <i>winter</i> berths\n\n"
                                       "2\n00:00:04,500 --> 00:00:07,000\nclose on 1 November.\n")
    assert read_document(tmp_path / "film.srt").text == "[00:00:01] The winter berths close on 1 November."


def test_a_long_talk_is_parted_into_paragraphs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(transcripts, "MAX_PARAGRAPH_CHARS", 40)
    (tmp_path / "talk.vtt").write_text(_vtt(*((f"00:00:{i:02d}.000", f"00:00:{i:02d}.900", f"<v Ann>Sentence number {i} of the talk.</v>")
                                              for i in range(6))))
    lines = read_document(tmp_path / "talk.vtt").text.split("\n")
    assert lines == ["[00:00:00] Ann: Sentence number 0 of the talk. Sentence number 1 of the talk.",
                     "[00:00:02] Ann: Sentence number 2 of the talk. Sentence number 3 of the talk.",
                     "[00:00:04] Ann: Sentence number 4 of the talk. Sentence number 5 of the talk."]


@pytest.mark.parametrize("name, content, reason", [
    ("notes.vtt", "These are my notes, not captions.\n", "not readable WebVTT captions"),
    ("film.srt", "1\n00:00:01,000 --> later\nText\n", r"not readable SubRip subtitles \(no cue with a timing"),
    ("notes.srt", "hello\nworld\n", "not readable SubRip subtitles"),
])
def test_a_file_that_is_no_captions_is_named_with_its_reason(tmp_path: Path, name: str, content: str, reason: str) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(DataFormatError, match=f"{name}: {reason}"):
        read_document(tmp_path / name)


def test_captions_without_a_cue_are_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.vtt").write_text("WEBVTT\nKind: captions\n\n")
    assert read_document(tmp_path / "empty.vtt").text == ""
