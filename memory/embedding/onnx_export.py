"""Make the int8 ONNX form of the bundled all-MiniLM-L6-v2 from its own weights:
`python -m memory.embedding.onnx_export DEST` (memory.embedding.embed_onnx runs it in a subprocess, so
the serving process never imports torch; docs/recall-quality.md "The int8 ONNX form").

1. The bundled model (transformers' BertModel, eager attention) wrapped with exactly what the
   sentence-transformers pipeline adds after it: mean pooling over the attention mask and L2
   normalisation, exported by torch's TorchScript-based ONNX exporter (`dynamo=False`: it needs
   nothing beyond torch; the dynamo exporter needs `onnxscript`), opset 17, batch and sequence
   axes dynamic.
2. Quantized by ONNX Runtime's `quantize_dynamic` with its default operators: int8 weights, per
   output channel, for every MatMul with a constant weight (their activations quantized per
   call; the attention's query·key and weights·value products multiply two activations and
   stay float32) and the embedding tables (dequantized on lookup). Per-tensor weights lost 1.3
   points of held-out recall; leaving the embedding tables float32 changed nothing measurable
   and made the file 2.5× larger (docs/recall-quality.md "The int8 ONNX form").
3. DEST gets `model.onnx` (the int8 graph), `tokenizer.json` (the bundled tokenizer) and
   `recipe.json` (the recipe, the sequence length, the source digest and the tool versions).

Same inputs and tool versions → the same bytes (tests/memory/hybrid/test_onnx_embedder.py
exports twice and compares), which is what keeps the model's identity (a digest of DEST's
files) the same across restarts and re-exports."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
from pathlib import Path


def export(dest: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    from memory.embedding import embed, embed_onnx

    torch.set_num_threads(1)
    source = embed.bundled_dir()
    bert = AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()

    class SentenceEmbedding(torch.nn.Module):
        """BertModel → mean pooling over the mask → L2 normalisation (sentence-transformers'
        Transformer, Pooling(mean) and Normalize modules, in their own arithmetic)."""

        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).expand(tokens.size()).to(tokens.dtype)
            pooled = torch.sum(tokens * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    wrapped = SentenceEmbedding(bert).eval()
    ids = torch.tensor([[101, 7592, 2088, 102]])
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    dest.mkdir(parents=True, exist_ok=True)
    fp32 = dest / "float32.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapped,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            dynamo=False,
            input_names=list(inputs),
            output_names=["sentence_embedding"],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in inputs},
            opset_version=17,
            do_constant_folding=True,
        )
    quantize_dynamic(
        str(fp32),
        str(dest / embed_onnx.MODEL_FILE),
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    fp32.unlink()
    shutil.copyfile(source / "tokenizer.json", dest / "tokenizer.json")
    max_length = json.loads((source / "sentence_bert_config.json").read_text())["max_seq_length"]
    (dest / "recipe.json").write_text(
        json.dumps(
            {
                "recipe": embed_onnx.RECIPE,
                "max_seq_length": max_length,
                "source": {"name": embed.BUNDLED_NAME, "digest": embed.files_digest(source)},
                "tools": embed_onnx.tool_versions(),
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )


if __name__ == "__main__":
    export(Path(sys.argv[1]))
