"""E-mail: .eml (MIME), Outlook's .msg and mailboxes (.mbox), read as their header fields, their body
and their attachments, each attachment read as the file it is (:mod:`.contained`); Outlook's
winmail.dat (TNEF) unpacked; pictures a body shows in place (logos, banners) not read by OCR."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..characters import whole_characters
from ..errors import DataFormatError
from .contained import Contained, add_sections, read_contained
from .formats import PICTURE_KINDS, SUFFIXES, Heading, document_suffix
from .html_pages import html_to_text
from .rtf import rtf_text
from .typesetting import typeset_letters, unwrap_lines

#: the header fields an e-mail's text opens with: who wrote to whom, and when
_MAIL_FIELDS = ("From", "To", "Cc", "Date")


def _attached_mail(part: Any) -> bytes:
    """The bytes of a mail attached to a mail (a message/rfc822 part). RFC 2046 has it sent plain, and
    the parser makes it a message part; some writers, aspose's .msg export among them, send it in
    base64, which the parser takes for a mail of no headers whose body is that base64."""
    import base64
    import quopri

    payload = part.get_payload()
    if not isinstance(payload, list):
        return part.get_payload(decode=True) or b""
    if not payload:
        return b""
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if encoding == "base64":
        return base64.b64decode(payload[0].get_payload())
    if encoding == "quoted-printable":
        return quopri.decodestring(payload[0].get_payload().encode("ascii", "replace"))
    return payload[0].as_bytes()


def _attachment_name(part: Any) -> str:
    """The name an attachment goes by: its file name (the last part of a path some mailers send), an
    attached mail's subject where its name says nothing (Outlook names it by its subject; a writer
    may call it "attachment.bin"), or its content type. An attached mail's name ends in .eml, the
    format it is read in."""
    name = (part.get_filename() or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if part.get_content_type() != "message/rfc822" or name.lower().endswith(".eml"):
        return name or part.get_content_type()
    if name.lower().endswith(".msg"):  # a MIME mail whatever its name says ("Fees.msg"): read as an .eml
        return f"{Path(name).stem}.eml"
    return _mail_name(_attached_mail(part), "forwarded message")


def _mail_name(data: bytes, untitled: str) -> str:
    """The name a mail inside a file (attached to a mail, or in a mailbox) goes by: its subject,
    ``untitled`` where it has none, as a .eml, the format it is read in."""
    import email.parser
    import email.policy

    head = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)
    return f"{' '.join(str(head['Subject'] or '').split()) or untitled}.eml"


def _read_attachment(part: Any, shown: set[str]) -> Contained:
    """One attachment of an e-mail, read as the file it is (:func:`read_contained`): a mail's facts
    are often in the PDF or the spreadsheet attached to it, not its body. ``shown``: the Content-IDs
    of the pictures the mail's HTML body shows in place, which are not read (:func:`_body_picture`)."""
    try:
        name = _attachment_name(part)
        if _body_picture(part, shown):
            return Contained(name, reason="a picture shown in the mail's body (a logo, a banner), not read by OCR")
        data = _attached_mail(part) if part.get_content_type() == "message/rfc822" else part.get_payload(decode=True)
    except MemoryError:
        raise
    except Exception as exc:  # a base64 body cut short, a header no charset decodes
        return Contained(part.get_filename() or part.get_content_type(), reason=f"it looks damaged ({type(exc).__name__})")
    return read_contained(name, data or b"")


def _is_tnef(part: Any) -> bool:
    """Whether a mail's attachment is Outlook's winmail.dat (TNEF): by its type, or by its name where a
    relay sent it as bytes of no type."""
    return (part.get_content_type() in ("application/ms-tnef", "application/vnd.ms-tnef")
            or (part.get_filename() or "").strip().lower() in ("winmail.dat", "win.dat"))


#: TNEF's MAPI properties of an attachment: hidden from the list of attachments, and the content id a body shows it by
_PR_ATTACHMENT_HIDDEN, _PR_ATTACH_CONTENT_ID = 0x7FFE, 0x3712
#: a line of an RTF body made from HTML that only names the picture it showed ("cid:image003.jpg@01D2EE6A.85652C70")
_CID_LINE = re.compile(r"^cid:\S+$", re.MULTILINE)


def _tnef_parts(part: Any, path: Path, with_body: bool) -> tuple[str, list[Contained]]:
    """The files Outlook packed into a winmail.dat (TNEF; tnefparse), each read as an attachment of
    the mail, and, ``with_body``, the body it packed (HTML, else Rich Text, else plain text): a mail
    Outlook sent in Rich Text has a plain body of its own beside it, which is read instead. A picture
    the body shows (hidden from the attachments' list, or named by a content id) is not read by OCR,
    as a MIME body's pictures are not (:func:`_body_picture`). A damaged one is named with its reason."""
    import tnefparse

    name = _attachment_name(part)
    try:
        tnef = tnefparse.TNEF(part.get_payload(decode=True) or b"")
        text = ""
        if with_body:
            if tnef.htmlbody:
                html = tnef.htmlbody
                text = html_to_text(html.decode("utf-8", "replace") if isinstance(html, bytes) else html)[0]
            elif tnef.rtfbody:
                text = _CID_LINE.sub("", rtf_text(tnef.rtfbody, path)[0]).strip()
            elif tnef.body:
                plain = tnef.body.decode("cp1252", "replace") if isinstance(tnef.body, bytes) else tnef.body
                text = unwrap_lines(plain.replace("\x00", "").replace("\r\n", "\n").strip())
        files = []
        for attachment in tnef.attachments:
            file = attachment.long_filename() or "attachment"
            properties = {attribute.name: attribute.data for attribute in attachment.mapi_attrs}
            if (SUFFIXES.get(document_suffix(file)) in PICTURE_KINDS
                    and (properties.get(_PR_ATTACHMENT_HIDDEN) is True or properties.get(_PR_ATTACH_CONTENT_ID))):
                files.append(Contained(file, reason="a picture shown in the mail's body (a logo, a banner), not read by OCR"))
            else:
                files.append(read_contained(file, attachment.data or b""))
    except MemoryError:
        raise
    except Exception as exc:  # not TNEF's signature, a length past the end, an attribute tnefparse cannot decode
        return "", [Contained(name, reason=f"it looks damaged ({type(exc).__name__})")]
    return text, files


#: a picture an HTML body shows from the mail's own parts: ``<img src="cid:banner@harbour">``
_CID = re.compile(r"""cid:([^\s"'<>)]+)""", re.IGNORECASE)


def _body_picture(part: Any, shown: set[str]) -> bool:
    """Whether a mail's part is a picture its HTML body shows in place (marked inline, or named by a
    Content-ID the body links to): a newsletter's logos and banners, a signature's icons, which OCR
    would read at a second or so each and for nothing. A picture attached as a file is read."""
    if part.get_content_maintype() != "image":
        return False
    cid = str(part["Content-ID"] or "").strip().strip("<>")
    return part.get_content_disposition() == "inline" or (bool(cid) and cid in shown)


def eml_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an e-mail saved as a file (.eml, RFC 5322; what mail programs other than Outlook
    save and export threads as): its sender, recipients and date, then its body, plain text where it
    has one (lines its writer wrapped joined again), else its HTML read as a page is (an HTML mail is
    laid out in tables: :func:`.html_pages._unbox_layout_tables`), then each attachment of a type convrag reads,
    a section headed by its name (its own headings a level below), then the names of those not read,
    each with its reason. The title is its subject. Headers in RFC 2047 encoding ("=?UTF-8?B?...?=")
    read as letters."""
    import email
    import email.policy

    try:
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    except MemoryError:
        raise
    except Exception as exc:
        raise DataFormatError(path, f"not a readable e-mail ({exc or type(exc).__name__})") from None
    return _mail_to_text(message, path)


#: the largest mailbox file read: Gmail's Takeout of all mail runs to gigabytes
MAX_MAILBOX_BYTES = 1 << 30
#: a line a mailbox quoted, as it quotes every line that starts "From " in a mail (">From 1 November.")
_FROM_QUOTED = re.compile(rb"^>(>*From )", re.MULTILINE)


def mbox_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The mails of a mailbox file (.mbox: a Thunderbird folder, Gmail's Takeout, Apple Mail's export, a
    mailing list's archive), read as one document as an archive is: each mail, in the file's order, a
    section headed "Mail: its subject" and read as a mail saved as .eml is (:func:`read_contained`:
    its attachments too), its lines that start "From " unquoted. A mailbox over
    :data:`MAX_MAILBOX_BYTES` is refused before it is read."""
    import mailbox

    size = path.stat().st_size
    if size > MAX_MAILBOX_BYTES:
        raise DataFormatError(path, f"not read: it is over {MAX_MAILBOX_BYTES >> 20:,} MB; export the folders or the "
                                    "months that matter as mailboxes of their own")
    with path.open("rb") as file:
        if not file.read(5).startswith(b"From "):
            raise DataFormatError(path, 'not a mailbox (.mbox): it does not start with a "From " line')
    box = mailbox.mbox(str(path), create=False)
    files: list[Contained] = []
    try:
        for key in box.iterkeys():
            data = _FROM_QUOTED.sub(rb"\1", box.get_bytes(key))
            try:
                name = _mail_name(data, "no subject")
            except Exception:  # a header no charset decodes: the mail is read all the same
                name = "no subject.eml"
            files.append(read_contained(name, data))
    finally:
        box.close()
    if not any(file.text for file in files):
        raise DataFormatError(path, "no mail in it could be read" + (" (it holds none)" if not files else ""))
    lines: list[str] = []
    headings: list[Heading] = []
    add_sections("Mail", files, lines, headings)
    return "\n".join(lines), "", tuple(headings)


def msg_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Outlook message saved as a file (.msg, [MS-OXMSG]: what dragging a mail out of
    Outlook makes), read as the .eml it stands for (:func:`_mail_to_text`): aspose-email-foss turns
    its properties (subject, sender, recipients, delivery time, plain and HTML bodies, attachments,
    messages attached to it) into that MIME message. A body Outlook kept only as compressed RTF (a mail
    written in Rich Text, or its HTML wrapped in RTF) is decompressed (compressed-rtf) and read as an RTF
    document is; it was left out, and such a message read as its headers alone."""
    import email
    import email.policy

    import olefile
    from aspose.email_foss.msg import MapiMessage

    if not olefile.isOleFile(str(path)):
        raise DataFormatError(path, "not an Outlook message (.msg): not an OLE compound file")
    with MapiMessage.from_file(path) as mapi:  # as bytes and parsed again: an attached mail is a message part only then
        if not mapi.body and not mapi.body_html and (body := _rtf_body(mapi, path)):
            mapi.set_property(_PR_BODY, _PT_UNICODE, body)
        message = email.message_from_bytes(mapi.to_email_bytes(), policy=email.policy.default)
    return _mail_to_text(message, path)


#: an Outlook message's properties ([MS-OXPROPS]): its plain body, its body as compressed RTF, and their types
_PR_BODY, _PT_UNICODE = 0x1000, 0x001F
_PR_RTF_COMPRESSED, _PT_BINARY = 0x1009, 0x0102


def _rtf_body(mapi: Any, path: Path) -> str:
    """The text of an Outlook message's compressed RTF body ("" where it has none), or a line that says
    why it could not be read: the mail's headers and attachments are read all the same."""
    import compressed_rtf

    packed = mapi.get_property_value(_PR_RTF_COMPRESSED, _PT_BINARY)
    if not isinstance(packed, bytes | bytearray) or not packed:
        return ""
    try:
        return rtf_text(compressed_rtf.decompress(bytes(packed)), path)[0]
    except MemoryError:
        raise
    except Exception as exc:  # a damaged stream (compressed-rtf's own errors), RTF striprtf cannot read
        said = str(exc).rstrip("!.") or type(exc).__name__  # compressed-rtf raises a bare Exception with its reason
        return f"Body not read: its compressed RTF looks damaged ({said})"


def _mail_to_text(message: Any, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """An e-mail's text (:func:`eml_to_text`), from the parsed message."""
    try:
        lines = [f"{name}: {' '.join(str(message[name]).split())}" for name in _MAIL_FIELDS if message[name]]
        body = message.get_body(preferencelist=("plain", "html"))
        html = message.get_body(preferencelist=("html",))
        content = body.get_content() if body is not None else ""
        # the pictures the HTML body shows in place (the body itself where it has no plain text)
        shown = set(_CID.findall(content if html is body else html.get_content())) if html is not None else set()
        headings: list[Heading] = []
        if body is not None:
            if body.get_content_subtype() == "html":
                text, _, _, found = html_to_text(content)
                headings += found
            else:
                text = unwrap_lines(content.replace("\r\n", "\n").strip())
            lines.append(text)
        attachments: list[Contained] = []
        for part in message.iter_attachments():
            if _is_tnef(part):  # Outlook's winmail.dat: the mail's attachments, and its body in Rich Text, packed in one
                packed_body, packed = _tnef_parts(part, path, with_body=body is None)
                lines.append(packed_body)
                attachments += packed
            else:
                attachments.append(_read_attachment(part, shown))
        subject = " ".join(str(message["Subject"] or "").split())
    except MemoryError:
        raise
    except Exception as exc:  # a part whose encoding or charset cannot be decoded
        raise DataFormatError(path, f"not a readable e-mail ({exc or type(exc).__name__})") from None
    if not any(message[name] for name in (*_MAIL_FIELDS, "Subject")):
        raise DataFormatError(path, "not an e-mail (no From, To, Date or Subject header)")
    add_sections("Attachment", attachments, lines, headings)
    return (typeset_letters(whole_characters("\n".join(line for line in lines if line))), typeset_letters(subject),
            tuple(headings))
