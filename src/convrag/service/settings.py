"""Service configuration: defaults, then a YAML config file, then ``CONVRAG_*`` environment
variables, then command-line flags (each overrides the one before).

Nested values use ``__`` in the environment: ``CONVRAG_LIMITS__MAX_QUESTION_CHARS=2000``.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .. import config
from ..errors import ConfigError, not_utf8
from ..pipeline.spec import ANSWER_TOKENS, PipelineSpec, answer_budget, check_answer, check_decline_below
from ..strategies.registry import check_strategy

_CONFIG_FILE: ContextVar[Path | None] = ContextVar("convrag_config_file", default=None)


class Limits(BaseModel):
    """Bounds on what one request may ask; each exceeded limit is a 4xx with its own message. Each is
    at least 1: a 0 (or a negative) let the service start and then refused every request of its kind,
    a generation limit of 0 as "too many generations" with none running."""

    max_body_bytes: int = Field(1_000_000, ge=1)  # JSON requests
    max_upload_bytes: int = Field(50_000_000, ge=1)  # one upload request (all its files)
    max_upload_files: int = Field(2_000, ge=1)
    max_question_chars: int = Field(4_000, ge=1)
    max_history_messages: int = Field(100, ge=1)
    max_concurrent_generations: int = Field(8, ge=1)  # pipeline runs at once; more get 429
    max_search_k: int = Field(100, ge=1)
    max_web_pages: int = Field(500, ge=1)  # pages one crawl of a site may fetch
    max_web_bytes: int = Field(500_000_000, ge=1)  # what one crawl may store, all its pages and files together


@contextmanager
def _as_settings_error() -> Iterator[None]:
    """A :class:`ConfigError` raised inside a validator, as the ValueError pydantic reports with the
    setting's location (``pipelines.support: unknown strategy ...``)."""
    try:
        yield
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


class PipelineConfig(BaseModel):
    """A named pipeline, selectable as an OpenAI ``model`` (the fields of a
    :class:`~convrag.pipeline.PipelineSpec`). ``multi_query: true`` is short for
    ``queries: [strategy, summary]``."""

    collections: list[str]
    strategy: str = "progressive"
    queries: list[str] = Field(default_factory=lambda: ["strategy"])
    retriever: str = "auto"
    merge: str = "enhanced"
    k: int = Field(10, ge=1, le=100)
    multi_query: bool = False
    #: how answers are written: a name in convrag.generate.answer.ANSWER_PRESETS (e.g. layout)
    answer: str = "default"
    #: the decline gate's relevance floor in place of the answer settings' (PipelineSpec.decline_below)
    decline_below: float | None = None
    #: the kept passages' tokens together (PipelineSpec.answer_tokens); 0: no budget
    answer_tokens: int = Field(ANSWER_TOKENS, ge=0)
    description: str = ""

    @model_validator(mode="after")
    def _a_pipeline_it_can_build(self) -> PipelineConfig:
        """Checked when the settings load: an unknown strategy, retriever or query stage was found
        only when the first request chose the pipeline, long after `convrag serve` had started."""
        with _as_settings_error():
            self.spec()
        return self

    def spec(self, collections: list[str] | None = None, k: int | None = None) -> PipelineSpec:
        """The pipeline spec, over ``collections`` (those with documents) when given."""
        queries = tuple(self.queries)
        if self.multi_query and "summary" not in queries:
            queries += ("summary",)
        return PipelineSpec(tuple(collections if collections is not None else self.collections), strategy=self.strategy,
                            queries=queries, retriever=self.retriever, merge=self.merge, k=k or self.k, answer=self.answer,
                            decline_below=self.decline_below, answer_tokens=answer_budget(self.answer_tokens))


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONVRAG_", env_nested_delimiter="__", extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)  # checked here: out of range, uvicorn raised OverflowError from bind()
    data_dir: Path = Field(default_factory=lambda: config.home() / "service")
    api_key: SecretStr | None = None
    llm: str = "local"
    llm_url: str | None = None
    #: with llm "local": the prompts the model keeps read at once (one per conversation going on;
    #: a conversation whose prompt is kept reads only its new turn). Each is a context over the one
    #: loaded model, about 120 MiB with the default model, so a machine with memory to spare and many
    #: concurrent conversations may keep more.
    llm_slots: int = Field(4, ge=1, le=64)
    embedding_model: str = "all-MiniLM-L6-v2"
    #: where collections are kept: "embedded" (folders of indexes in data_dir) or "milvus"
    backend: Literal["embedded", "milvus"] = "embedded"
    #: the Milvus to use with backend "milvus": a Milvus Lite file (default: data_dir/milvus.db) or a
    #: server's address (http://host:19530); its token in CONVRAG_MILVUS_TOKEN
    milvus_uri: str | None = None
    milvus_token: SecretStr | None = None
    #: with backend "embedded": the folder ``convrag index`` builds collections in (its --store); a
    #: collection there is taken on, its files linked, when one of its name is created
    indexed_store: Path = Field(default_factory=config.default_store)
    strategy: str = "progressive"
    #: how answers are written where no configured pipeline says (the web chat, collection:NAME models):
    #: a name in convrag.generate.answer.ANSWER_PRESETS, e.g. layout
    answer: str = "default"
    #: the decline gate's relevance floor where no configured pipeline says (default: the answer
    #: settings', 0.45): lower it where answers are phrased far from the questions; 0 turns it off
    decline_below: float | None = None
    #: the kept passages' tokens together where no configured pipeline says, counted on whole passages
    #: (1000, chosen on MT-RAG: 2 or 3 of a document's 512-token chunks); 0 lifts it, so all 5 kept
    #: passages reach the compression (more sentences read, a slower first token)
    answer_tokens: int = Field(ANSWER_TOKENS, ge=0)
    pipelines: dict[str, PipelineConfig] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    #: after each answer (conversations API, OpenAI endpoint), read the next turn's prompt up to its
    #: passages while the user reads
    #: (the next first token then waits for the passages and the question only; pipeline/read_ahead.py)
    read_ahead: bool = True
    #: end an answer's text on the OpenAI endpoint with its sources ("Sources:" then "- [1] title
    #: (collection) url" a line), for chat front-ends that show only the text (Open WebUI, LibreChat);
    #: off, they are in the extra ``convrag`` field alone. Read back from the conversation a client sends
    openai_sources: bool = False
    #: origins besides the server's own whose pages may change things (a reverse proxy's public URL)
    allowed_origins: list[str] = Field(default_factory=list)
    #: Host header values accepted besides the bound address and localhost (names the server is reached by)
    allowed_hosts: list[str] = Field(default_factory=list)
    #: let documents be read from web addresses that are not public (an intranet's wiki, a server on
    #: localhost); off, such an address is refused, so that a user of the API cannot make the server
    #: read what only it can reach (a cloud's metadata service, an admin page)
    allow_private_web: bool = False

    @field_validator("data_dir", "indexed_store")
    @classmethod
    def _home_expanded(cls, value: Path) -> Path:
        """``~`` as the shell reads it: the documented ``data_dir: ~/.cache/convrag/service`` in a
        settings file made a folder named ``~`` in the current directory."""
        return value.expanduser()

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        with _as_settings_error():
            return check_strategy(value)

    @field_validator("answer")
    @classmethod
    def _known_answer(cls, value: str) -> str:
        with _as_settings_error():
            return check_answer(value)

    @field_validator("answer_tokens")
    @classmethod
    def _a_budget_it_can_use(cls, value: int) -> int:
        """A budget the pipeline refuses (under 50 tokens) stops the start, not the web chat's first answer."""
        with _as_settings_error():
            PipelineSpec(("any",), answer_tokens=answer_budget(value))
        return value

    @model_validator(mode="after")
    def _a_decline_floor_it_can_use(self) -> ServiceSettings:
        with _as_settings_error():
            check_decline_below(self.decline_below, self.answer)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, _YamlSource(settings_cls)

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> ServiceSettings:
        """Settings from ``config_file`` (YAML), the environment and ``overrides`` (None values ignored)."""
        if config_file is not None and not Path(config_file).is_file():
            problem = "is a folder, not a file" if Path(config_file).is_dir() else "does not exist"
            raise ConfigError(f"config file {config_file} {problem}")
        token = _CONFIG_FILE.set(Path(config_file) if config_file else None)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        except ValidationError as exc:
            given = {k for k, v in overrides.items() if v is not None}
            by_source: dict[str, list[str]] = {}
            for e in exc.errors():
                problem = f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
                by_source.setdefault(_source(e["loc"], given, config_file), []).append(problem)
            raise ConfigError("; ".join(f"invalid settings ({source}): {'; '.join(problems)}"
                                        for source, problems in by_source.items())) from None
        finally:
            _CONFIG_FILE.reset(token)

    def pipeline(self, collections: list[str], strategy: str | None = None) -> PipelineConfig:
        """A pipeline over ``collections`` with the service's defaults: ``strategy`` (a conversation's
        own) where given, else the service's, and the service's answer settings."""
        return PipelineConfig(collections=collections, strategy=strategy or self.strategy, answer=self.answer,
                              decline_below=self.decline_below, answer_tokens=self.answer_tokens)

    @property
    def milvus_target(self) -> str:
        """The Milvus of backend "milvus": ``milvus_uri``, else a Milvus Lite file in the data folder."""
        return self.milvus_uri or str(Path(self.data_dir) / "milvus.db")

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def check(self) -> None:
        """Refuse settings that would expose the service: any non-loopback address needs an API key."""
        if not self.loopback and (self.api_key is None or not self.api_key.get_secret_value()):
            raise ConfigError(
                f"refusing to listen on {self.host} without an API key: set CONVRAG_API_KEY (clients send it as "
                "'Authorization: Bearer <key>'), or bind to 127.0.0.1"
            )


def _source(loc: tuple[int | str, ...], given: set[str], config_file: Path | None) -> str:
    """Where the value at ``loc`` came from, in the order the sources override each other: a
    command-line flag, a ``CONVRAG_*`` variable (named, nested ones by their ``__`` path), else the
    settings file. Every problem was labelled with the settings file (or "environment" without one),
    so a refused ``--port 70000`` was reported as the environment's."""
    if not loc:
        return str(config_file) if config_file else "environment"
    if loc[0] in given:
        return f"--{str(loc[0]).replace('_', '-')}"
    variables = {name.upper(): name for name in os.environ}
    for depth in range(len(loc), 0, -1):  # CONVRAG_LIMITS__MAX_QUESTION_CHARS, else CONVRAG_LIMITS as JSON
        name = "CONVRAG_" + "__".join(str(part) for part in loc[:depth]).upper()
        if name in variables:
            return variables[name]
    return str(config_file) if config_file else "environment"


class _YamlSource(PydanticBaseSettingsSource):
    """The config file named by :meth:`ServiceSettings.load`."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = _CONFIG_FILE.get()
        if path is None:
            return {}
        try:
            data = yaml.safe_load(path.read_bytes().decode("utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({exc})") from None
        except UnicodeDecodeError as exc:  # a settings file saved as Latin-1 or cp1252
            raise ConfigError(f"{path}: {not_utf8(exc)}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of settings at the top level")
        return data
