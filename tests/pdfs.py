"""A minimal real PDF with a text layer, written byte by byte (no PDF writer in the dependencies)."""

from __future__ import annotations


def make_pdf(lines: list[str], title: str = "", in_form: bool = False, to_unicode: dict[str, str] | None = None) -> bytes:
    """One page, Helvetica, one line of ``lines`` per row; ``title`` goes into the document info.
    ``in_form``: the page paints a form XObject that holds the text, as a page's reused header does.
    ``to_unicode``: the font's ToUnicode map, character code to UTF-16BE, both in hex (``{"41": "D800"}``)."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    text = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({esc(line)}) '" for line in lines) + " ET"
    stream = "/Fm1 Do" if in_form else text
    form = (f"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
            f"/Length {len(text)} >>\nstream\n{text}\nendstream")
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 7 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica" + (" /ToUnicode 8 0 R" if to_unicode else "") + " >>",
        f"<< /Title ({esc(title)}) >>",
        form,
    ]
    if to_unicode:
        cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Map def 1 begincodespacerange "
                f"<00> <FF> endcodespacerange {len(to_unicode)} beginbfchar "
                + " ".join(f"<{code}> <{target}>" for code, target in to_unicode.items())
                + " endbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
        objects.append(f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream")
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
