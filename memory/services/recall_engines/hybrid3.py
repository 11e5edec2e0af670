"""hybrid/3 (docs/recall-quality.md): hybrid/2's engine/2 head and a deeper cosine side of the
configured embedding model, fused by min-max normalised scores and a weighted sum (CombSUM,
memory.engine.hybrid3) instead of by ranks. Same derived copies as hybrid/2 (term rows, vectors):
switching between the two needs no re-indexing."""

from __future__ import annotations

from memory.engine import hybrid3
from memory.services.recall_engines.hybrid2 import register_fused

ENGINE = register_fused(
    "hybrid/3",
    hybrid3,
    hybrid3.fuse3,
    "engine/2's head and a cosine ranking over sentence embeddings, fused by min-max "
    "normalised scores and a weighted sum (CombSUM)",
)
