"""E-mail, Outlook messages and mailboxes, with their attachments (convrag/ingest/mail.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import mail
from convrag.ingest.documents import Heading, read_document
from tests.ingest.makers import FIXTURES


def test_an_email_reads_as_its_sender_date_and_body_titled_by_its_subject(tmp_path: Path) -> None:
    """An e-mail saved as a file (.eml: what mail programs save and export threads as) was "not read"."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Date"] = "Ann Lee <ann@harbour.example>", "crew@harbour.example", "Mon, 3 Mar 2025 09:30:00 +0000"
    mail["Subject"] = "Winter mooring fees f\u00fcr Boote"  # sent RFC 2047-encoded, read as its letters
    mail.set_content("Hello crew,\n\nFrom 1 November, boats pay 4 dollars a night and kayaks\n2 dollars.\n")
    mail.add_alternative("<p>HTML copy: boats pay 4 dollars.</p>", subtype="html")
    mail.add_attachment(b"%PDF-1.4 x", maintype="application", subtype="pdf", filename="fees.pdf")
    (tmp_path / "fees.eml").write_bytes(bytes(mail))
    assert b"=?utf-8?" in (tmp_path / "fees.eml").read_bytes()
    document = read_document(tmp_path / "fees.eml")
    assert document.title == "Winter mooring fees f\u00fcr Boote"
    assert document.text.split("\n") == [  # the plain body, its wrapped line joined; the attachment named, not read
        "From: Ann Lee <ann@harbour.example>", "To: crew@harbour.example", "Date: Mon, 03 Mar 2025 09:30:00 +0000",
        "Hello crew,", "", "From 1 November, boats pay 4 dollars a night and kayaks 2 dollars.",
        "Attachments not read: fees.pdf (not a readable PDF (Failed to load document (PDFium: Data format error).))"]
    # a mail of HTML alone is read as a page, laid out in a table as HTML mail is
    html = EmailMessage()
    html["Subject"], html["From"] = "Fees", "ann@harbour.example"
    html.set_content("<table width=600><tr><td><h1>Winter fees</h1><p>Boats pay 4 dollars.</p><table><tr><th>Boat</th>"
                     "<th>Fee</th></tr><tr><td>Kayak</td><td>2</td></tr></table></td></tr></table>", subtype="html")
    (tmp_path / "html.eml").write_bytes(bytes(html))
    document = read_document(tmp_path / "html.eml")
    assert document.text.split("\n") == ["From: ann@harbour.example", "Winter fees", "Boats pay 4 dollars.", "Boat: Kayak | Fee: 2"]
    assert [h.text for h in document.headings] == ["Winter fees"]
    (tmp_path / "notes.eml").write_text("Just some notes, no headers.\n")
    with pytest.raises(DataFormatError, match="notes.eml: not an e-mail"):
        read_document(tmp_path / "notes.eml")


def test_an_emails_attachments_are_read_as_sections_headed_by_their_names(tmp_path: Path) -> None:
    """A mail's facts are often in what it carries: the manual as a PDF, the prices in a forwarded mail's
    table. Attachments were only named, so a question about them found nothing. Each of a type convrag
    reads is now read as the file it is; the others are named with their reasons."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "The heat pump"
    mail.set_content("The manual is attached.\n")
    mail.add_attachment((FIXTURES / "made_by_pandoc" / "heatpump-manual.docx").read_bytes(), maintype="application",
                        subtype="octet-stream", filename="C:\\Users\\ann\\manual.docx")  # a path, as some mailers send
    mail.add_attachment(b"<svg xmlns='http://www.w3.org/2000/svg'/>", maintype="image", subtype="svg+xml", filename="unit.svg")
    forwarded = EmailMessage()
    forwarded["From"], forwarded["Subject"] = "bob@harbour.example", "Winter prices"
    forwarded.set_content("Prices below.\n")
    forwarded.add_attachment(b"Boat,Fee\nKayak,2\n", maintype="text", subtype="csv", filename="prices.csv")
    mail.add_attachment(forwarded)
    (tmp_path / "pump.eml").write_bytes(bytes(mail))
    document = read_document(tmp_path / "pump.eml")
    manual = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx")
    lines = document.text.split("\n")
    start = lines.index("Attachment: manual.docx")
    assert lines[:start] == ["From: ann@harbour.example", "The manual is attached."]
    assert "\n".join(lines[start + 1:]).startswith(manual.text + "\n")  # the Word file read as it is alone
    assert lines[-6:] == ["Attachment: Winter prices.eml", "From: bob@harbour.example", "Prices below.",
                          "Attachment: prices.csv", "Boat: Kayak | Fee: 2",
                          "Attachments not read: unit.svg (not a type convrag reads)"]
    assert document.headings == (Heading(1, "Attachment: manual.docx", part=True),
                                 *(Heading(h.level + 1, h.text) for h in manual.headings),
                                 Heading(1, "Attachment: Winter prices.eml", part=True), Heading(2, "Attachment: prices.csv", part=True))
    assert "E21" in document.text and document.title == "The heat pump"


def test_outlooks_winmail_dat_is_read_as_the_attachments_and_body_it_packs(tmp_path: Path) -> None:
    """Outlook sends a mail written in Rich Text as a MIME mail whose attachments and formatted body are packed
    into one attachment, winmail.dat (TNEF): the mail's attachments read as "winmail.dat (not a type convrag
    reads)". Its files are read as the mail's own attachments (a picture the body shows, hidden in it, is not
    read by OCR); its body is read where the mail has none of its own. A damaged one is named with its reason."""
    from email.message import EmailMessage

    packed = (FIXTURES / "made_by_outlook" / "winmail-umlaut.dat").read_bytes()
    mail = EmailMessage()
    mail["From"], mail["Subject"] = "ann@harbour.example", "Umlauts"
    mail.set_content("The test file is attached.\n")
    mail.add_attachment(packed, maintype="application", subtype="ms-tnef", filename="winmail.dat")
    (tmp_path / "rich.eml").write_bytes(bytes(mail))
    lines = read_document(tmp_path / "rich.eml").text.split("\n")
    # its files are the mail's: a team's photo read by OCR (no words in it), the picture the body shows left unread,
    # and a text file of 14 bytes in Windows-1252 whose encoding no reading can tell
    assert lines == ["From: ann@harbour.example", "The test file is attached.",
                     "Attachments not read: TBZ PARIV GmbH.jpg (no text (no words OCR could read in it)), image003.jpg (a picture "
                     "shown in the mail's body (a logo, a banner), not read by OCR), UmlautAnhang-\u00e4\u00fc\u00f6.txt (not text "
                     "(binary data, or an encoding that could not be recognised))"]
    bodyless = EmailMessage()
    bodyless["From"], bodyless["Subject"] = "ann@harbour.example", "Umlauts"
    bodyless.add_attachment(packed, maintype="application", subtype="octet-stream", filename="WINMAIL.DAT")
    (tmp_path / "bodyless.eml").write_bytes(bytes(bodyless))
    lines = read_document(tmp_path / "bodyless.eml").text.split("\n")  # its Rich Text body, without the picture's "cid:" name
    assert lines[:2] == ["From: ann@harbour.example", "TEST \u00e4\u00f6\u00fc +-*/~"] and lines[2].startswith("Attachments not read: ")
    damaged = EmailMessage()
    damaged["From"], damaged["Subject"] = "ann@harbour.example", "Umlauts"
    damaged.set_content("The test file is attached.\n")
    damaged.add_attachment(b"XXXX" + packed[4:], maintype="application", subtype="ms-tnef", filename="winmail.dat")  # no TNEF signature
    (tmp_path / "damaged.eml").write_bytes(bytes(damaged))
    assert read_document(tmp_path / "damaged.eml").text.split("\n")[-1] == "Attachments not read: winmail.dat (it looks damaged (ValueError))"


def test_an_outlook_message_reads_as_the_mail_it_stands_for(tmp_path: Path) -> None:
    """A mail dragged out of Outlook is a .msg file (MS-OXMSG, an OLE compound file of properties), "not a
    type convrag reads" before. It reads as the same mail saved as .eml would: sender, recipients, date,
    body, and its attachments, a mail attached to it included (aspose's export sends that one in base64,
    which had left it a mail of no headers)."""
    document = read_document(FIXTURES / "made_by_aspose" / "harbour-mail.msg")
    manual = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx")
    assert document.title == "The heat pump manual"
    lines = document.text.split("\n")
    start = lines.index("Attachment: heatpump-manual.docx")
    assert lines[:start] == ["From: Ann Lee <ann@harbour.example>", "To: Crew <crew@harbour.example>",
                             "Date: Mon, 03 Mar 2025 09:30:00 +0000", "Hello crew,", "",
                             "the manual for the new heat pump is attached. Fault E21 is the water pressure."]
    assert "\n".join(lines[start + 1:]).startswith(manual.text + "\n")
    assert lines[-7:] == ["Attachment: Winter prices.eml", "From: Bob Hart <bob@harbour.example>", "Prices below.",
                          "Attachment: prices.csv", "Boat: Kayak | Fee: 2", "Boat: Dinghy | Fee: 3",
                          "Attachments not read: unit.png (not a readable picture: Pillow knows no picture format that "
                          "starts as it does (damaged, or another kind of file))"]
    assert document.headings[0] == Heading(1, "Attachment: heatpump-manual.docx", part=True)
    assert document.headings[-2:] == (Heading(1, "Attachment: Winter prices.eml", part=True), Heading(2, "Attachment: prices.csv", part=True))
    (tmp_path / "mail.msg").write_bytes(b"From: ann@harbour.example\r\nSubject: Fees\r\n\r\nBoats pay 40.")
    with pytest.raises(DataFormatError, match="mail.msg: not an Outlook message"):
        read_document(tmp_path / "mail.msg")


def test_an_outlook_message_whose_body_is_only_compressed_rtf_reads_its_body(tmp_path: Path) -> None:
    """Outlook keeps a mail written in Rich Text, or its HTML wrapped in RTF, as compressed RTF alone: such a
    message read as its sender and attachments, without a word of its body."""
    import olefile

    rtf_mail = FIXTURES / "made_by_aspose" / "harbour-rtf-mail.msg"
    assert read_document(rtf_mail).text.split("\n") == [
        "From: Ann Lee <ann@harbour.example>", "Hello crew,", "a winter berth costs 310 dollars this season, paid at the caf\u00e9.",
        "Attachment: prices.csv", "Boat: Kayak | Fee: 2"]
    damaged = tmp_path / "damaged.msg"
    damaged.write_bytes(rtf_mail.read_bytes())
    with olefile.OleFileIO(str(damaged), write_mode=True) as ole:  # the stream's bytes changed, its size kept
        size = ole.get_size("__substg1.0_10090102")
        ole.write_stream("__substg1.0_10090102", b"\xff" * size)
    assert read_document(damaged).text.split("\n")[:2] == [
        "From: Ann Lee <ann@harbour.example>", "Body not read: its compressed RTF looks damaged (Unknown type of RTF compression)"]


def test_mails_nested_in_mails_are_read_three_deep_then_named(tmp_path: Path) -> None:
    """A crafted mail nests mails thousands deep; each level is a file read again. Past three the
    nested mail is named with its reason, and the levels above are kept."""
    from email.message import EmailMessage

    from convrag.ingest.contained import MAX_NESTING

    mail = EmailMessage()
    mail["Subject"] = "level 6"
    mail.set_content("deepest")
    for level in range(5, -1, -1):
        outer = EmailMessage()
        outer["Subject"] = f"level {level}"
        outer.set_content(f"text of level {level}")
        outer.add_attachment(mail)
        mail = outer
    (tmp_path / "deep.eml").write_bytes(bytes(mail))
    text = read_document(tmp_path / "deep.eml").text
    assert [f"text of level {n}" in text for n in range(7)] == [n <= MAX_NESTING for n in range(7)]
    assert f"Attachments not read: level {MAX_NESTING + 1}.eml (a mail nested more than {MAX_NESTING} deep)" in text


def _mailbox(path: Path) -> Path:
    """A mailbox as a mail program exports a folder: three mails, one with an attachment, one whose
    body has a line starting "From " (which mbox writes as ">From ")."""
    import mailbox
    from email.message import EmailMessage

    box = mailbox.mbox(str(path))
    for subject, body, attachment in (("Winter berths", "A winter berth costs 310 dollars.\nFrom 1 November.\n", None),
                                      ("=?utf-8?q?Caf=C3=A9_hours?=", "The caf\u00e9 opens at 8.\n", None),
                                      ("Prices", "Prices attached.\n", b"Boat,Fee\nKayak,2\n")):
        mail = EmailMessage()
        mail["From"], mail["Subject"], mail["Date"] = "Ann Lee <ann@harbour.example>", subject, "Mon, 3 Mar 2025 09:30:00 +0000"
        mail.set_content(body)
        if attachment:
            mail.add_attachment(attachment, maintype="text", subtype="csv", filename="prices.csv")
        box.add(mail)
    box.flush()
    box.close()
    return path


def test_a_mailbox_reads_as_its_mails_each_a_section(tmp_path: Path) -> None:
    """A Thunderbird folder, Gmail's Takeout or a mailing list's archive is a .mbox file: "not a type convrag reads"."""
    document = read_document(_mailbox(tmp_path / "harbour.mbox"))
    assert document.text.split("\n") == [
        "Mail: Winter berths.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000",
        "A winter berth costs 310 dollars.", "From 1 November.",
        "Mail: Caf\u00e9 hours.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000", "The caf\u00e9 opens at 8.",
        "Mail: Prices.eml", "From: Ann Lee <ann@harbour.example>", "Date: Mon, 03 Mar 2025 09:30:00 +0000", "Prices attached.",
        "Attachment: prices.csv", "Boat: Kayak | Fee: 2"]
    assert [h.text for h in document.headings] == ["Mail: Winter berths.eml", "Mail: Caf\u00e9 hours.eml", "Mail: Prices.eml",
                                                   "Attachment: prices.csv"]


def test_what_is_no_mailbox_or_too_large_a_one_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.mbox").write_text("These are notes, not mail.\n")
    with pytest.raises(DataFormatError, match='notes.mbox: not a mailbox \\(.mbox\\): it does not start with a "From " line'):
        read_document(tmp_path / "notes.mbox")
    monkeypatch.setattr(mail, "MAX_MAILBOX_BYTES", 100)
    with pytest.raises(DataFormatError, match="harbour.mbox: not read: it is over 0 MB"):
        read_document(_mailbox(tmp_path / "harbour.mbox"))
