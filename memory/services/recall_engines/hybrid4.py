"""hybrid/4 (docs/recall.md, docs/recall-quality.md), the default with the semantic extra: the
engine/2 head and the cosine side fused by min-max normalised scores and a weighted sum
(CombSUM, memory.engine.hybrid3) over the vectors of the bundled model's **int8 ONNX form**
(`all-MiniLM-L6-v2-int8`, memory.embedding.embed_onnx) when SPOKE_MEMORY_EMBED_MODEL is empty."""

from __future__ import annotations

from memory.embedding import embed
from memory.engine import hybrid3
from memory.services.recall_engines.fused import register_fused

ENGINE = register_fused(
    "hybrid/4",
    hybrid3,
    hybrid3.fuse3,
    "engine/2's head and a cosine ranking over the int8 ONNX form of the bundled sentence "
    "model, fused by min-max normalised scores and a weighted sum (CombSUM)",
    embed_model=embed.INT8_NAME,
)
