"""reStructuredText pages of a Sphinx project (convrag/ingest/restructuredtext.py)."""

from pathlib import Path

from convrag.ingest.documents import read_document


def test_a_restructuredtext_page_of_a_sphinx_project_is_read(tmp_path: Path) -> None:
    """A .rst (a Sphinx project's pages) was "not read ... of other types". Sphinx's directives,
    which docutils does not know, are left out; its roles read as their text; and nothing outside
    the file is read: an upload's ``.. include:: /etc/passwd`` or ``.. raw::`` is no text of it."""
    (tmp_path / "secret.txt").write_text("The harbour safe code is 4711.")
    page = f"""
==================
Solenne HX-9 guide
==================

Pairing
=======

.. autofunction:: solenne.pair

Hold MODE and DOWN for five seconds, then call :func:`solenne.pair` (see :ref:`safety`, :doc:`the guide </guide>`
and :meth:`~solenne.Pump.reset`).

.. note::
   Pair within two minutes.

.. include:: {tmp_path / "secret.txt"}

.. raw:: html

   <p>Raw text.</p>

Fees
----

========  =========
Plan      Price
========  =========
Lite      Free
Pro       9 dollars
========  =========
"""
    (tmp_path / "guide.rst").write_text(page)
    document = read_document(tmp_path / "guide.rst")
    assert document.title == "Solenne HX-9 guide"
    assert [(h.level, h.text) for h in document.headings] == [(1, "Solenne HX-9 guide"), (2, "Pairing"), (3, "Fees")]
    assert document.text.split("\n") == ["Solenne HX-9 guide", "Pairing",
                                         "Hold MODE and DOWN for five seconds, then call solenne.pair (see safety, the guide and "
                                         "reset).",
                                         "Note", "Pair within two minutes.", "Fees", "Plan: Lite | Price: Free", "Plan: Pro | Price: 9 dollars"]
