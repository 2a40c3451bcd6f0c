"""The four MT-RAG domains and the collection names the benchmark uses for them.

The benchmark's files name a domain two ways: short (``clapnq``) in folder and
file names, and by its Elasticsearch collection (``mt-rag-clapnq-elser-512-100-20240503``)
inside ``conversations.json`` and result files. The official scorer picks qrels by
the collection name, so result files must carry it exactly.
"""

from __future__ import annotations

from ..errors import ConfigError

COLLECTION_NAMES: dict[str, str] = {
    "clapnq": "mt-rag-clapnq-elser-512-100-20240503",
    "cloud": "mt-rag-ibmcloud-elser-512-100-20240502",
    "fiqa": "mt-rag-fiqa-beir-elser-512-100-20240501",
    "govt": "mt-rag-govt-elser-512-100-20240611",
}
DOMAINS: tuple[str, ...] = tuple(COLLECTION_NAMES)

#: Domains whose pooled corpora hold the strong distractors, so their figures are
#: comparable to published full-corpus numbers. govt's pool is tiny (829 passages).
COMPARABLE_DOMAINS: tuple[str, ...] = ("clapnq", "cloud", "fiqa")

_BY_COLLECTION = {name: domain for domain, name in COLLECTION_NAMES.items()}


def collection_name(domain: str) -> str:
    """The benchmark's collection name for a short domain name."""
    try:
        return COLLECTION_NAMES[domain]
    except KeyError:
        raise ConfigError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}") from None


def domain_of(name: str) -> str:
    """The short domain for a collection name or a domain name (either spelling is accepted)."""
    if name in COLLECTION_NAMES:
        return name
    if name in _BY_COLLECTION:
        return _BY_COLLECTION[name]
    raise ConfigError(
        f"unknown MT-RAG collection {name!r}; expected a domain ({', '.join(DOMAINS)}) "
        f"or one of {', '.join(_BY_COLLECTION)}"
    )


def parse_domains(spec: str | None) -> list[str]:
    """Parse a ``--domains`` option: comma-separated names, ``all`` or empty for every domain."""
    if not spec or spec.strip().lower() == "all":
        return list(DOMAINS)
    return [domain_of(part.strip()) for part in spec.split(",") if part.strip()]
