"""A minimal real PDF with a text layer, written byte by byte (no PDF writer in the dependencies)."""

from __future__ import annotations


def make_pdf(lines: list[str], title: str = "", in_form: bool = False, to_unicode: dict[str, str] | None = None,
             operators: str | None = None, font: str = "Helvetica", outline: list[str] | None = None) -> bytes:
    """One page, Helvetica (or ``font``), one line of ``lines`` per row; ``title`` goes into the document info.
    ``operators``: the page's text operators as written, instead of ``lines`` (font /F1 at 12 points is set).
    ``outline``: the titles of the document's bookmarks, one level.
    ``in_form``: the page paints a form XObject that holds the text, as a page's reused header does.
    ``to_unicode``: the font's ToUnicode map, character code to UTF-16BE, both in hex (``{"41": "D800"}``)."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    text = "BT /F1 12 Tf " + (operators if operators is not None else "72 720 Td 14 TL " + " ".join(f"({esc(line)}) '" for line in lines)) + " ET"
    stream = "/Fm1 Do" if in_form else text
    form = (f"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
            f"/Length {len(text)} >>\nstream\n{text}\nendstream")
    objects = [
        "<< /Type /Catalog /Pages 2 0 R" + (" /Outlines 9 0 R" if outline else "") + " >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 7 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        f"<< /Type /Font /Subtype /Type1 /BaseFont /{font}" + (" /ToUnicode 8 0 R" if to_unicode else "") + " >>",
        f"<< /Title ({esc(title)}) >>",
        form,
    ]
    objects.append("<< /Length 0 >>\nstream\n\nendstream" if not to_unicode else "")  # object 8: the ToUnicode map
    if to_unicode:
        cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Map def 1 begincodespacerange "
                f"<00> <FF> endcodespacerange {len(to_unicode)} beginbfchar "
                + " ".join(f"<{code}> <{target}>" for code, target in to_unicode.items())
                + " endbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
        objects[7] = f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream"
    if outline:  # object 9: the outline; 10 on: its entries, each pointing at the top of the page
        first, last = 10, 9 + len(outline)
        objects.append(f"<< /Type /Outlines /First {first} 0 R /Last {last} 0 R /Count {len(outline)} >>")
        for i, entry in enumerate(outline):
            links = (f" /Prev {first + i - 1} 0 R" if i else "") + (f" /Next {first + i + 1} 0 R" if first + i < last else "")
            objects.append(f"<< /Title ({esc(entry)}) /Parent 9 0 R /Dest [3 0 R /XYZ 0 792 0]{links} >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def with_form(pdf: bytes, fields: list[dict[str, object]]) -> bytes:
    """``pdf`` with a form (AcroForm) on its first page: each field a widget with the given entries
    ("/FT", "/T", "/TU", "/V", "/AS"; strings for text, names for the rest, as pypdf writes them), a
    box ("/FT": "/Btn") with the "/Yes" and "/Off" appearances a checkbox has."""
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, StreamObject, TextStringObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))

    def empty() -> object:
        stream = StreamObject()
        stream._data = b""
        return writer._add_object(stream)

    refs = []
    for i, entries in enumerate(fields):
        widget = DictionaryObject({NameObject("/Type"): NameObject("/Annot"), NameObject("/Subtype"): NameObject("/Widget"),
                                   NameObject("/Rect"): ArrayObject([FloatObject(v) for v in (100, 700 - 30 * i, 300, 720 - 30 * i)])})
        for key, value in entries.items():
            widget[NameObject(key)] = NameObject(value) if str(value).startswith("/") else TextStringObject(str(value))
        if entries.get("/FT") == "/Btn":
            widget[NameObject("/AP")] = DictionaryObject({NameObject("/N"): DictionaryObject({NameObject("/Yes"): empty(), NameObject("/Off"): empty()})})
        refs.append(writer._add_object(widget))
    writer.pages[0][NameObject("/Annots")] = ArrayObject(refs)
    writer._root_object[NameObject("/AcroForm")] = DictionaryObject({NameObject("/Fields"): ArrayObject(refs)})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
