"""Captions and meeting transcripts (WebVTT .vtt, SubRip .srt), read as what was said: a paragraph
per speaker's turn, or per stretch of speech between pauses, each opened by when it began.

A meeting recorded by Teams or Zoom, a talk's or a video's captions, are saved as cues of a line or
two, each with its timings; read as text, a sentence said over three cues was three lines among
timestamps. The cues are parsed by webvtt-py; here they are joined into what a reader of a
transcript wants: who said what, and when ("[00:12:30] Ann Lee: I propose 310 dollars for the
season."), so that a passage holds whole turns and an answer can say where in the recording.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import DataFormatError

#: a pause this long (seconds) between two cues of one speaker starts a new paragraph: a new point
PAUSE_SECONDS = 3.0
#: a paragraph is ended at a cue's end past this many characters, so one long talk is not one line
MAX_PARAGRAPH_CHARS = 1500
#: a speaker's name opening a cue, as Zoom writes its transcripts: "Ann Lee: Welcome ..."
_NAMED = re.compile(r"(?P<name>[^\W\d_][\w.'\u2019-]*(?: [^\W\d_][\w.'\u2019-]*){0,3}): (?=\S)")


class _Cue(NamedTuple):
    """A caption as said: when (seconds), by whom ("" where no one is named), and its new lines."""

    start: float
    end: float
    speaker: str
    lines: list[str]


def to_text(raw: str, path: Path) -> str:
    """The text of the captions ``raw`` (WebVTT, or SubRip for a .srt ``path``): a paragraph a turn."""
    import webvtt
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    kind = "srt" if path.suffix.lower() == ".srt" else "vtt"
    name = "SubRip subtitles" if kind == "srt" else "WebVTT captions"
    try:
        captions = list(webvtt.from_buffer(io.StringIO(raw), format=kind))
    except (MalformedFileError, MalformedCaptionError) as exc:
        raise DataFormatError(path, f"not readable {name} ({exc or type(exc).__name__})") from None
    if not captions and kind == "srt" and raw.strip():  # webvtt-py passes over SubRip cues it cannot read
        raise DataFormatError(path, f"not readable {name} (no cue with a timing that could be read)")
    return "\n".join(_paragraphs(_spoken(captions)))


def _spoken(captions: list[Any]) -> list[_Cue]:
    """The cues with their speaker (a ``<v Name>`` voice, or a name that opens at least two cues) and
    the lines not said before: captions that roll (YouTube's) repeat the line before them."""
    named = Counter(found["name"] for caption in captions if not caption.voice and (found := _NAMED.match(caption.text.strip())))
    cues: list[_Cue] = []
    said: list[str] = []
    for caption in captions:
        text, speaker = caption.text.strip(), caption.voice or ""
        if not speaker and (found := _NAMED.match(text)) and named[found["name"]] >= 2:
            speaker, text = found["name"], text[found.end():]
        lines = [" ".join(line.split()) for line in text.split("\n") if line.strip()]
        while lines and said and lines[0] == said[-1]:
            lines.pop(0)
        if lines:
            said = lines
            cues.append(_Cue(caption.start_in_seconds, caption.end_in_seconds, speaker, lines))
    return cues


def _paragraphs(cues: list[_Cue]) -> list[str]:
    """A paragraph per speaker's turn, parted where the speaker pauses or the paragraph grows long."""
    out: list[str] = []
    words: list[str] = []
    opened: _Cue | None = None
    last_end = 0.0
    for cue in cues:
        if opened is not None and (cue.speaker != opened.speaker or cue.start - last_end >= PAUSE_SECONDS
                                   or sum(map(len, words)) >= MAX_PARAGRAPH_CHARS):
            out.append(_paragraph(opened, words))
            opened, words = None, []
        opened = opened or cue
        words += cue.lines
        last_end = cue.end
    if opened is not None:
        out.append(_paragraph(opened, words))
    return out


def _paragraph(opened: _Cue, lines: list[str]) -> str:
    seconds = int(opened.start)
    when = f"[{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}]"
    return f"{when} {opened.speaker + ': ' if opened.speaker else ''}{' '.join(lines)}"
