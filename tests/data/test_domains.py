import pytest

from convrag.data.domains import COLLECTION_NAMES, collection_name, domain_of, parse_domains
from convrag.errors import ConfigError


def test_round_trip() -> None:
    for domain, name in COLLECTION_NAMES.items():
        assert collection_name(domain) == name
        assert domain_of(name) == domain
        assert domain_of(domain) == domain


def test_parse_domains() -> None:
    assert parse_domains("all") == ["clapnq", "cloud", "fiqa", "govt"]
    assert parse_domains("fiqa, mt-rag-govt-elser-512-100-20240611") == ["fiqa", "govt"]
    with pytest.raises(ConfigError, match="unknown MT-RAG collection 'wiki'"):
        parse_domains("wiki")
