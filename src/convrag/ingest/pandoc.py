"""Markup formats convrag reads through pandoc: LaTeX (a paper's source), Org (Emacs' notes), AsciiDoc
(Antora's and many a Java project's docs) and MediaWiki (a wiki's pages as exported). Not Typst:
pandoc reads it by running it, and a Typst document without the packages it imports (nearly every
paper's template) fails whole.

Each has a grammar of its own (LaTeX's macros, Org's drawers, AsciiDoc's attributes and blocks)
that pandoc parses as their own tools do; its HTML is then read as any page is
(:func:`convrag.ingest.html_pages.html_to_text`), so headings, tables and the title come out as
they do for HTML. The pandoc program comes with the pypandoc-binary package (pandoc 3.9, GPL-2,
run as a program of its own). It runs in its sandbox: nothing but the text given is read, so a
``\\input{...}``, ``#+INCLUDE`` or ``include::`` (which a service's upload could aim at the
server's files) is left out, and named at the text's end. AsciiDoc's ``include::`` lines are taken
out first, since pandoc fails the whole document on one it may not read.
"""

from __future__ import annotations

import html
import re
import subprocess
from importlib import resources
from pathlib import Path

from ..errors import DataFormatError

#: the pandoc reader of each kind of file read through pandoc, and what the kind is called
READERS = {"latex": ("latex", "LaTeX document"), "org": ("org", "Org document"), "asciidoc": ("asciidoc", "AsciiDoc document"),
           "mediawiki": ("mediawiki", "MediaWiki page")}
#: the longest pandoc may take on one file, and the memory it may use (its runtime's own bound)
MAX_SECONDS = 120
MAX_MEMORY = "1g"
#: an AsciiDoc include directive: a line of its own, and the file it names
_INCLUDE = re.compile(r"^include::(?P<file>[^\n\[]*)\[[^\n]*\][ \t]*$", re.MULTILINE)
#: pandoc's warning for a file a LaTeX ``\input`` or an Org ``#+INCLUDE`` names, which its sandbox does not read
_NOT_INCLUDED = re.compile(r"Could not load include file (?P<file>.+?) at line")
#: a citation pandoc leaves empty without a bibliography (``\cite{lee2024,kim}``, Org's ``[cite:@lee2024]``): "See and Table 1."
_EMPTY_CITATION = re.compile(r'<span class="citation" data-cites="(?P<keys>[^"]*)"></span>')
#: a footnote's number in the text, and the link back to it after the note: "costs 310 dollars.1", "Harbour office↩"
_NOTE_LINKS = re.compile(r'<a href="#fn(?:ref)?\d+" class="footnote-(?:ref|back)"[^>]*>.*?</a>', re.DOTALL)


def to_html(text: str, kind: str, path: Path) -> str:
    """The HTML pandoc makes of ``text``, a file of ``kind`` (a key of :data:`READERS`): its title in
    ``<title>``, its abstract (a LaTeX paper's) first, then its body, its notes at the end without
    their numbers (a "1" read into the sentence that calls the note), a citation as its keys. A file pandoc cannot parse, or
    one it takes more than :data:`MAX_SECONDS` or :data:`MAX_MEMORY` on, is a :class:`DataFormatError`
    naming ``path``."""
    reader, name = READERS[kind]
    left = [found["file"].strip() for found in _INCLUDE.finditer(text)] if kind == "asciidoc" else []
    if left:
        text = _INCLUDE.sub("", text)
    with resources.as_file(resources.files(__package__) / "pandoc-template.html") as template:
        command = [_program(path, name), "--sandbox", f"--template={template}", "--wrap=none", "-f", reader, "-t", "html5",
                   "+RTS", f"-M{MAX_MEMORY}", "-RTS"]
        try:
            run = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=MAX_SECONDS)
        except subprocess.TimeoutExpired:
            raise DataFormatError(path, f"not read: pandoc took more than {MAX_SECONDS} s to read this {name}") from None
    said = run.stderr.decode("utf-8", "replace")
    if run.returncode != 0:
        said = " ".join(said.split())[:300] or f"exit status {run.returncode}"
        raise DataFormatError(path, f"not a readable {name}: pandoc could not read it ({said})")
    left += [found["file"].strip() for found in _NOT_INCLUDED.finditer(said)]
    page = _NOTE_LINKS.sub("", run.stdout.decode("utf-8", "replace"))
    # a citation read as its keys ("[lee2024; kim]"), as LaTeX shows an unknown one: a sentence kept its hole
    page = _EMPTY_CITATION.sub(lambda m: f'<span class="citation">[{"; ".join(m["keys"].split())}]</span>', page)
    if not left:
        return page
    # named where the text ends, as a mail's attachments not read are: a thesis split into \input chapters read as its preamble
    shown = ", ".join(html.escape(file) for file in dict.fromkeys(left))
    return page.replace("</body>", f"<p>Included files not read: {shown} (a file is read alone; index them as documents of "
                                   f"their own)</p></body>", 1)


def _program(path: Path, name: str) -> str:
    """The pandoc program pypandoc-binary carries (or another pypandoc finds)."""
    try:
        import pypandoc

        return str(pypandoc.get_pandoc_path())
    except (ImportError, OSError):
        raise DataFormatError(path, f"a {name} is read by pandoc, which is not installed (pip install pypandoc-binary)") from None
