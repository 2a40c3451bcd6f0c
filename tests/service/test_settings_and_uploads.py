from pathlib import Path

import pytest

from convrag.errors import ConfigError
from convrag.service.settings import ServiceSettings
from convrag.service.uploads import UploadError, doc_id_for, inside, safe_filename


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
])
def test_safe_filenames(name: str, expected: str) -> None:
    assert safe_filename(name) == expected


@pytest.mark.parametrize("name", ["", "..", ".", "../", "noext", "virus.exe", ".txt"])
def test_unsafe_or_unsupported_names_are_refused(name: str) -> None:
    with pytest.raises(UploadError):
        safe_filename(name)


def test_inside_refuses_escapes(tmp_path: Path) -> None:
    assert inside(tmp_path, "a.txt") == (tmp_path / "a.txt").resolve()
    with pytest.raises(UploadError):
        inside(tmp_path, "../a.txt")
    assert doc_id_for("report final.pdf") == "report_final"
