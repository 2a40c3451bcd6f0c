import re
from pathlib import Path

import pytest

from convrag.errors import ConfigError
from convrag.service.settings import ServiceSettings
from convrag.service.uploads import UploadError, assign_doc_ids, check_content, inside, original_name, safe_filename


def test_file_then_environment_then_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "convrag.yaml"
    config.write_text("port: 9000\nllm: openai:qwen\nlimits:\n  max_question_chars: 100\n"
                      "pipelines:\n  support:\n    collections: [docs, faq]\n    strategy: targeted\n")
    settings = ServiceSettings.load(config)
    assert settings.port == 9000 and settings.limits.max_question_chars == 100
    assert settings.pipelines["support"].collections == ["docs", "faq"] and settings.pipelines["support"].strategy == "targeted"
    monkeypatch.setenv("CONVRAG_PORT", "9100")
    monkeypatch.setenv("CONVRAG_LIMITS__MAX_QUESTION_CHARS", "200")
    settings = ServiceSettings.load(config)
    assert settings.port == 9100 and settings.limits.max_question_chars == 200 and settings.llm == "openai:qwen"
    assert ServiceSettings.load(config, port=9200).port == 9200


def test_a_folder_under_home_is_read_as_the_shell_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented `data_dir: ~/.cache/convrag/service` made a folder named `~` in the directory
    the service was started from."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "convrag.yaml"
    config.write_text("data_dir: ~/.cache/convrag/service\nindexed_store: ~/indexes\n")
    settings = ServiceSettings.load(config)
    assert settings.data_dir == tmp_path / "home" / ".cache" / "convrag" / "service"
    assert settings.indexed_store == tmp_path / "home" / "indexes"


def test_bad_config_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ServiceSettings.load(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("port: [9000\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        ServiceSettings.load(broken)
    listed = tmp_path / "list.yaml"
    listed.write_text("- port\n")
    with pytest.raises(ConfigError, match="mapping"):
        ServiceSettings.load(listed)
    latin = tmp_path / "latin.yaml"  # a UnicodeDecodeError traceback before
    latin.write_bytes("port: 9000\napi_key: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin\.yaml: not UTF-8 text \(byte 0xe9 on line 2\); save it as UTF-8"):
        ServiceSettings.load(latin)
    with pytest.raises(ConfigError, match="is a folder, not a file"):  # it said "does not exist"
        ServiceSettings.load(tmp_path)
    for port, bound in ((70000, "less than or equal to 65535"), (0, "greater than or equal to 1")):
        with pytest.raises(ConfigError, match=f"port: Input should be {bound}"):  # uvicorn's OverflowError from bind() before
            ServiceSettings.load(port=port)
    zero = tmp_path / "zero.yaml"  # the service started, then answered every question 429 "0 answers are being generated"
    zero.write_text("limits:\n  max_concurrent_generations: 0\n")
    with pytest.raises(ConfigError, match="limits.max_concurrent_generations: Input should be greater than or equal to 1"):
        ServiceSettings.load(zero)


@pytest.mark.parametrize(("pipeline", "error"), [
    ("strategy: fancy", "pipelines.support: unknown strategy 'fancy'; expected one of "),
    ("retriever: bm26", "pipelines.support: unknown retriever 'bm26'"),
    ("queries: [strategy, poem]", "pipelines.support: unknown query"),
    ("k: 0", "pipelines.support.k: Input should be greater than or equal to 1"),
    ("answer: verbose", "pipelines.support: unknown answer settings 'verbose'; expected one of default, first"),
    ("decline_below: 1.5", "pipelines.support: the decline floor is a cosine from 0 to 1; got 1.5"),
    ("answer_tokens: 20", "pipelines.support: the answer needs at least one passage and 50 tokens of budget; got 5 passages and 20 tokens"),
    ("answer_tokens: -1", "pipelines.support.answer_tokens: Input should be greater than or equal to 0"),
])
def test_a_pipeline_that_cannot_be_built_is_refused_when_the_settings_load(tmp_path: Path, pipeline: str, error: str) -> None:
    """An unknown strategy or retriever in a configured pipeline started the service; the first
    request that chose the pipeline failed."""
    config = tmp_path / "convrag.yaml"
    config.write_text(f"pipelines:\n  support:\n    collections: [docs]\n    {pipeline}\n")
    with pytest.raises(ConfigError, match=re.escape(f"invalid settings ({config}): {error}")):
        ServiceSettings.load(config)


def test_an_unknown_default_strategy_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVRAG_STRATEGY", "fancy")
    with pytest.raises(ConfigError, match=r"invalid settings \(CONVRAG_STRATEGY\): strategy: unknown strategy 'fancy'"):
        ServiceSettings.load()


def test_each_refused_setting_is_named_by_where_it_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every problem was labelled with the settings file, or "environment" without one: a refused
    `--port 70000` read as a problem of the environment, and a bad variable as one of the file."""
    config = tmp_path / "convrag.yaml"
    config.write_text("port: 70000\nstrategy: fancy\nlimits:\n  max_question_chars: 0\n")
    with pytest.raises(ConfigError) as refused:
        ServiceSettings.load(config)
    assert str(refused.value).startswith(f"invalid settings ({config}): port: ")
    monkeypatch.setenv("CONVRAG_LIMITS__MAX_QUESTION_CHARS", "many")
    with pytest.raises(ConfigError) as refused:
        ServiceSettings.load(config, port=0, strategy="last_turn")
    assert str(refused.value) == (
        "invalid settings (--port): port: Input should be greater than or equal to 1; "
        "invalid settings (CONVRAG_LIMITS__MAX_QUESTION_CHARS): limits.max_question_chars: Input should be a valid "
        "integer, unable to parse string as an integer")
    monkeypatch.setenv("CONVRAG_LIMITS", '{"max_question_chars": -1}')  # the whole group as JSON
    monkeypatch.delenv("CONVRAG_LIMITS__MAX_QUESTION_CHARS")
    with pytest.raises(ConfigError, match=r"^invalid settings \(CONVRAG_LIMITS\): limits.max_question_chars: "):
        ServiceSettings.load(config, port=8000, strategy="last_turn")


def test_the_local_model_keeps_as_many_prompts_as_the_settings_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local model's number of slots was fixed at 4 whatever the machine: each slot held a copy
    of the model then, and an operator with memory for more concurrent conversations could not say so."""
    from convrag.service.app import _make_llm

    monkeypatch.setenv("CONVRAG_LLM_SLOTS", "12")
    local = _make_llm(ServiceSettings.load(data_dir=tmp_path))  # no model is loaded until it is asked
    assert local.inner.max_slots == 12  # type: ignore[attr-defined]
    assert _make_llm(ServiceSettings.load(data_dir=tmp_path, llm="local:/models/other.gguf")).inner.max_slots == 12  # type: ignore[attr-defined]
    monkeypatch.setenv("CONVRAG_LLM_SLOTS", "0")
    with pytest.raises(ConfigError, match="llm_slots: Input should be greater than or equal to 1"):
        ServiceSettings.load()


def test_api_key_needed_off_loopback() -> None:
    ServiceSettings.load(host="127.0.0.1").check()
    ServiceSettings.load(host="::1").check()
    ServiceSettings.load(host="localhost").check()
    with pytest.raises(ConfigError, match="API key"):
        ServiceSettings.load(host="0.0.0.0").check()
    with pytest.raises(ConfigError, match="API key"):
        ServiceSettings.load(host="10.1.2.3", api_key="").check()
    ServiceSettings.load(host="0.0.0.0", api_key="secret").check()
    assert "secret" not in repr(ServiceSettings.load(api_key="secret"))


@pytest.mark.parametrize("name,expected", [
    ("notes.md", "notes.md"),
    ("../../etc/passwd.txt", "passwd.txt"),
    ("..\\..\\windows\\evil.HTML", "evil.html"),
    ("/abs/path/report final.pdf", "report final.pdf"),
    ("we<i>rd:na*me?.txt", "we_i_rd_na_me_.txt"),
    ("日本.md", "日本.md"),
    ("Über uns – Preise.HTML", "Über uns _ Preise.html"),
    ("tab\there.txt", "tabhere.txt"),
    ("guides/boats/index.md", "index.md"),
    ("Docs Export.TAR.GZ", "Docs Export.tar.gz"),  # a compressed tar is known by both suffixes (".gz" was "unsupported file type")
])
def test_safe_filenames(name: str, expected: str) -> None:
    assert safe_filename(name) == expected


@pytest.mark.parametrize("name,expected", [
    ("notes.md", "notes.md"),
    ("guides/boats/index.md", "guides/boats/index.md"),  # a folder uploaded whole: its paths keep same names apart
    ("guides\\index.md", "guides/index.md"),
    ("./guides//index.md", "guides/index.md"),
    ("../../etc/passwd.txt", "etc/passwd.txt"),  # only shown and compared: the file is stored as passwd.txt
    ("/home/ann/Desktop/report.pdf", "report.pdf"),  # a client's whole local path: the file's name alone
    ("C:\\Users\\ann\\report.pdf", "report.pdf"),
    ("C:report.pdf", "report.pdf"),
    (" Über/ uns.md ", "Über/uns.md"),
])
def test_original_names_keep_a_folders_paths_but_no_absolute_ones(name: str, expected: str) -> None:
    assert original_name(name) == expected


@pytest.mark.parametrize("name", ["", "..", ".", "../", "noext", "virus.exe", ".txt", ".tar.gz", "corpus.jsonl.gz"])
def test_unsafe_or_unsupported_names_are_refused(name: str) -> None:
    with pytest.raises(UploadError):
        safe_filename(name)


def test_inside_refuses_escapes(tmp_path: Path) -> None:
    assert inside(tmp_path, "a.txt") == (tmp_path / "a.txt").resolve()
    with pytest.raises(UploadError):
        inside(tmp_path, "../a.txt")



def test_document_ids_stay_distinct_and_replace_only_the_same_name() -> None:
    ids = assign_doc_ids(["日本.md", "中国.md", "a b.md", "a_b.md", "a?b.md", "docs.tar.gz"], {})
    assert ids == {"日本.md": "日本", "中国.md": "中国", "a b.md": "a b", "a_b.md": "a_b", "a?b.md": "a_b-2", "docs.tar.gz": "docs"}
    again = assign_doc_ids(["a?b.md", "a*b.md"], {v: k for k, v in ids.items()})
    assert again == {"a?b.md": "a_b-2", "a*b.md": "a_b-3"}  # the same name replaces; a new one is new


@pytest.mark.parametrize("name,head,size,code", [
    ("empty.md", b"", 0, "empty_file"),
    ("blank.txt", b"   \n", 4, "empty_file"),
    ("fake.pdf", b"hello", 5, "not_a_pdf"),
    ("old.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .doc renamed", 40, "not_a_docx"),
    ("old.pptx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .ppt renamed", 40, "not_a_pptx"),
    ("old.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .xls renamed", 40, "not_a_xlsx"),
    ("book.epub", b"%PDF-1.7 a PDF renamed", 40, "not_a_epub"),
    ("old.odt", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .doc renamed", 40, "not_a_odt"),
    ("old.ods", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .xls renamed", 40, "not_a_ods"),
    ("old.odp", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a binary .ppt renamed", 40, "not_a_odp"),
    ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 10, 100, "not_text"),
    ("scan.tif", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 10, 100, "not_a_tiff"),
    ("export.zip", b"Rar!\x1a\x07\x00 a RAR archive renamed", 40, "not_a_zip"),
    ("photo.jpg", b"<html>a web page saved under a picture's name</html>", 60, "not_a_picture"),
    ("photo.heic", b"\x00\x00\x00\x18ftypmp42 a video renamed", 40, "not_a_picture"),
    ("diagram.gif", b"<svg xmlns='http://www.w3.org/2000/svg'>a drawing saved under a GIF's name</svg>", 70, "not_a_picture"),
    ("docs.tar.gz", b"PK\x03\x04\x14\x00\x00\x00 a zip named as a tar", 40, "not_a_tar"),
    ("docs.tar", b"Moorings cost 40 dollars." * 20, 500, "not_a_tar"),
    ("docs.tar.zst", b"\x1f\x8b\x08\x00 a gzip named as a zstd tar", 40, "not_a_tar"),
    ("docs.7z", b"PK\x03\x04\x14\x00\x00\x00 a zip named as a 7z", 40, "not_a_7z"),
    ("docs.rar", b"7z\xbc\xaf\x27\x1c\x00\x04 a 7z named as a RAR", 40, "not_a_rar"),
    ("mail.mbox", b"Subject: Fees\n\nBoats pay 40.\n", 30, "not_a_mbox"),
])
def test_files_that_cannot_be_indexed_are_refused_at_upload(name: str, head: bytes, size: int, code: str) -> None:
    with pytest.raises(UploadError) as caught:
        check_content(name, head, size)
    assert caught.value.code == code


def test_readable_files_pass_the_content_check() -> None:
    check_content("a.pdf", b"%PDF-1.7 ...", 12)
    check_content("a.docx", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.pptx", b"PK\x03\x04\x14\x00\x06\x00", 9000)  # a deck was "unsupported file type"
    check_content("a.xlsx", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.epub", b"PK\x03\x04\x14\x00\x06\x00", 9000)  # a book was refused as "not text"
    check_content("a.odt", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.ods", b"PK\x03\x04\x14\x00\x06\x00", 9000)  # a spreadsheet and a presentation were "unsupported file type"
    check_content("a.odp", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.rtf", rb"{\rtf1\ansi {\pard Moorings cost 40 dollars.\par}}", 42)
    check_content("a.md", "# Überschrift".encode(), 14)
    check_content("a.rst", b"Fees\n====\n\nKayaks pay less.", 27)  # a Sphinx page was "unsupported file type"
    check_content("cut.txt", ("x" * 10 + "é").encode()[:-1], 100_000)  # a character cut by the sniffed block
    check_content("a.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 9000)  # Word and Excel 97-2003 files were "unsupported file type"
    check_content("a.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 9000)
    check_content("a.ppt", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 9000)
    check_content("a.msg", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 9000)  # an Outlook message was "unsupported file type"
    check_content("a.tif", b"II*\x00\x08\x00\x00\x00", 9000)  # a scan, as a scanner or a fax program saves it
    check_content("a.tiff", b"MM\x00*\x00\x00\x00\x08", 9000)
    check_content("a.zip", b"PK\x03\x04\x14\x00\x00\x00", 9000)  # a Drive folder downloaded, a Notion export
    check_content("a.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 9000)  # a screenshot, a phone's photo of a notice
    check_content("a.jpg", b"\xff\xd8\xff\xe1\x00\x18Exif", 9000)
    check_content("a.png", b"\xff\xd8\xff\xe0\x00\x10JFIF", 9000)  # a JPEG named .png is a picture all the same
    check_content("a.webp", b"RIFF\x00\x10\x00\x00WEBPVP8 ", 9000)
    check_content("a.heic", b"\x00\x00\x00\x1cftypheic\x00\x00\x00\x00mif1", 9000)  # an iPhone's photo
    check_content("a.gif", b"GIF89a\x58\x02\xc8\x00", 9000)  # a diagram saved as GIF
    check_content("a.docm", b"PK\x03\x04\x14\x00\x06\x00", 9000)  # Office's macro-enabled packages, templates, slide shows
    check_content("a.ppsx", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.xltm", b"PK\x03\x04\x14\x00\x06\x00", 9000)
    check_content("a.avif", b"\x00\x00\x00\x20ftypavif\x00\x00\x00\x00avifmif1", 9000)  # a browser's AVIF
    check_content("a.tar.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00", 9000)  # a folder packed on Linux or macOS
    check_content("a.tgz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00", 9000)
    check_content("a.tar.bz2", b"BZh91AY&SY", 9000)
    check_content("a.tar.xz", b"\xfd7zXZ\x00\x00\x04", 9000)
    check_content("a.tzst", b"\x28\xb5\x2f\xfd\x00\x58", 9000)
    check_content("a.tar", b"docs/a.md".ljust(257, b"\x00") + b"ustar\x0000", 9000)
    check_content("a.mbox", b"From MAILER-DAEMON Mon Mar  3 09:30:00 2025\nFrom: ann@harbour.example\n", 9000)
    check_content("a.7z", b"7z\xbc\xaf\x27\x1c\x00\x04", 9000)  # a folder packed by 7-Zip or WinRAR
    check_content("a.rar", b"Rar!\x1a\x07\x00\xcf\x90", 9000)
    check_content("a.rar", b"Rar!\x1a\x07\x01\x00\x33\x92", 9000)


@pytest.mark.parametrize("name, head, code, advice", [
    ("old.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a .doc renamed", "not_a_docx", "it is an old .doc file: name it .doc"),
    ("old.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a .xls renamed", "not_a_xlsx", "it is an old .xls file: name it .xls"),
    ("old.pptx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a .ppt renamed", "not_a_pptx", "it is an old .ppt file: name it .ppt"),
    ("old.ppsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a .pps renamed", "not_a_ppsx", "it is an old .ppt file: name it .ppt"),
    ("new.doc", b"PK\x03\x04\x14\x00\x06\x00 a .docx renamed", "not_a_doc", "it is a .docx package: name it .docx"),
    ("new.xls", b"PK\x03\x04\x14\x00\x06\x00 a .xlsx renamed", "not_a_xls", "it is a .xlsx package: name it .xlsx"),
    ("text.doc", b"Moorings cost 40 dollars.", "not_a_doc", "not an OLE compound file)"),
    ("mail.msg", b"From: ann@harbour.example\r\nSubject: Fees\r\n\r\nBoats pay 40.", "not_a_msg",
     "it is an e-mail saved as text: name it .eml"),
    ("mail.msg", b"PK\x03\x04\x14\x00\x06\x00 a zip", "not_a_msg", "not an OLE compound file)"),
])
def test_an_office_file_under_the_other_suffix_is_refused_saying_which_to_give_it(name: str, head: bytes, code: str, advice: str) -> None:
    with pytest.raises(UploadError) as caught:
        check_content(name, head, 9000)
    assert caught.value.code == code and advice in str(caught.value)


@pytest.mark.parametrize("name,data", [
    ("windows.txt", "Café crème à la carte, naïve résumé.".encode("cp1252")),
    ("notepad.txt", "Passport renewal costs 130 dollars.".encode("utf-16")),  # Notepad's "Unicode": a mark, then UTF-16
    ("page.html", "<p>Grüße aus Köln</p>".encode("latin-1")),
])
def test_text_the_indexer_reads_is_not_refused_for_its_encoding(name: str, data: bytes) -> None:
    """The service takes what ``convrag index`` takes (it refused every file that was not UTF-8)."""
    check_content(name, data, len(data))
    check_content(name, data[:-1], len(data))  # the sniffed block may cut a UTF-16 character in two


def test_a_pipeline_names_how_its_answers_are_written(tmp_path: Path) -> None:
    """The answer presets (e.g. ``layout``: headings and table rows on lines of their own) were open to
    ``eval-answers`` and Python only; a configured pipeline picks one."""
    config = tmp_path / "convrag.yaml"
    config.write_text("pipelines:\n  handbook:\n    collections: [docs]\n    answer: layout\n")
    assert ServiceSettings.load(config).pipelines["handbook"].spec().answer == "layout"


def test_the_service_default_answer_settings_are_checked_and_reach_its_chats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web chat and ``collection:NAME`` models take ``answer`` (e.g. layout) from the service's settings."""
    from convrag.service.pipelines import Pipelines

    config = tmp_path / "convrag.yaml"
    config.write_text("answer: layout\n")
    settings = ServiceSettings.load(config)
    assert Pipelines(settings, None, None).route("collection:docs", ["docs"]).config.spec().answer == "layout"
    monkeypatch.setenv("CONVRAG_ANSWER", "verbose")
    with pytest.raises(ConfigError, match=r"invalid settings \(CONVRAG_ANSWER\): answer: unknown answer settings 'verbose'"):
        ServiceSettings.load()


def test_the_decline_floor_is_a_setting_of_the_service_and_of_a_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate's floor reaches the web chat and ``collection:NAME`` models from the service's settings,
    a configured pipeline sets its own, and a floor the answer settings cannot use stops the start."""
    from convrag.pipeline.build import answer_settings
    from convrag.service.pipelines import Pipelines

    config = tmp_path / "convrag.yaml"
    config.write_text("decline_below: 0.3\npipelines:\n  handbook:\n    collections: [docs]\n    decline_below: 0.35\n")
    settings = ServiceSettings.load(config)
    chats = Pipelines(settings, None, None).route("collection:docs", ["docs"]).config.spec()
    assert answer_settings(chats).decline.min_relevance == 0.3  # type: ignore[union-attr]
    assert answer_settings(settings.pipelines["handbook"].spec()).decline.min_relevance == 0.35  # type: ignore[union-attr]
    assert answer_settings(ServiceSettings.load().pipeline(["docs"]).spec()).decline.min_relevance == 0.45  # type: ignore[union-attr]
    monkeypatch.setenv("CONVRAG_ANSWER", "first")
    with pytest.raises(ConfigError, match=r"the answer settings 'first' have no decline gate"):
        ServiceSettings.load(config)


def test_the_answer_budget_is_a_setting_of_the_service_and_of_a_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge's budget (1000 tokens of whole passages) could be set only from Python: the web chat
    and ``collection:NAME`` models take the service's, a configured pipeline sets its own, 0 lifts it,
    and a budget the pipeline refuses stops the start."""
    from convrag.service.pipelines import Pipelines

    config = tmp_path / "convrag.yaml"
    config.write_text("answer_tokens: 2500\npipelines:\n  handbook:\n    collections: [docs]\n    answer_tokens: 0\n")
    settings = ServiceSettings.load(config)
    assert Pipelines(settings, None, None).route("collection:docs", ["docs"]).config.spec().answer_tokens == 2500
    assert settings.pipelines["handbook"].spec().answer_tokens is None
    assert ServiceSettings.load().pipeline(["docs"]).spec().answer_tokens == 1000
    monkeypatch.setenv("CONVRAG_ANSWER_TOKENS", "20")
    with pytest.raises(ConfigError, match=r"invalid settings \(CONVRAG_ANSWER_TOKENS\): answer_tokens: the answer needs at least one passage and 50 tokens"):
        ServiceSettings.load()


def test_the_web_page_offers_every_type_convrag_reads() -> None:
    """The page's pickers list the suffixes they offer, and its uploads leave out a file of any other; the
    list was written by hand and fell behind the readers (a .text file was left out as "not a type convrag reads")."""
    import re

    from convrag.ingest.documents import SUFFIXES

    page = (Path(__file__).parents[2] / "src" / "convrag" / "service" / "static" / "index.html").read_text()
    offered = re.findall(r'accept="([^"]+)"', page)
    assert len(offered) == 2 and all(set(accept.split(",")) == set(SUFFIXES) for accept in offered)
