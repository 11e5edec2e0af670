"""hybrid/4 (docs/recall.md, docs/recall-quality.md): hybrid/3's ranking — the engine/2 head and
the cosine side fused by min-max normalised scores (memory.engine.hybrid3) — over the vectors of
the bundled model's **int8 ONNX form** (`all-MiniLM-L6-v2-int8`, memory.engine.embed_onnx) when
SPOKE_MEMORY_EMBED_MODEL is empty. Its own policy version because its vectors differ from the
torch model's: hybrid/1–hybrid/3 keep answering byte for byte as they did with theirs."""

from __future__ import annotations

from memory.engine import embed, hybrid3
from memory.services.recall_engines.hybrid2 import register_fused

ENGINE = register_fused(
    "hybrid/4",
    hybrid3,
    hybrid3.fuse3,
    "hybrid/3's fusion (engine/2's head and a cosine ranking, min-max normalised scores, "
    "weighted sum) over the int8 ONNX form of the bundled sentence model",
    embed_model=embed.INT8_NAME,
)
