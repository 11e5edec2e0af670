"""The int8 encoder's products are exact on every x86 CPU (memory.embedding.embed_onnx): on a CPU
without VNNI, ONNX Runtime's AVX2/AVX-512 int8 kernels saturate 16-bit pair sums unless the
session asks for `session.x64quantprecision`; the golden answers (tests/memory/recall/golden)
differed between two machines by that much. The option is set exactly where it is needed, and on
a CPU that computes exactly already it changes no bit of a vector (so which path a machine takes
cannot change an answer)."""

from __future__ import annotations

import numpy as np
import pytest

from memory.embedding import embed, embed_onnx

from .conftest import needs_semantic

pytestmark = [
    needs_semantic,
    pytest.mark.skipif(not embed_onnx.installed(), reason="the semantic extra without onnxruntime"),
]

TEXTS = [
    "dog",
    "The dog loves chasing tennis balls in the park",
    "東京に行きたい",
    "running runs runner ran",
    "The meeting moved to 9:30 on Tuesday, room B-12; bring the Q3 figures. " * 20,
]


@pytest.mark.parametrize(
    ("machine", "flags", "needed"),
    [
        ("x86_64", {"avx2", "avx512f", "avx512bw"}, True),  # saturating kernels
        ("x86_64", {"avx2"}, True),
        ("x86_64", set(), True),  # flags unknown: the safe side
        ("x86_64", {"avx2", "avx512f", "avx512_vnni"}, False),
        ("AMD64", {"avx2", "avx_vnni"}, False),
        ("aarch64", set(), False),  # ARM's dot products accumulate in 32 bits
        ("arm64", {"asimd"}, False),
    ],
)
def test_the_option_is_asked_for_exactly_where_products_would_saturate(machine, flags, needed):
    assert embed_onnx.exact_products_need_option(machine, flags) is needed


def test_the_sessions_options_carry_it_when_asked():
    assert (
        embed_onnx.session_options(True).get_session_config_entry("session.x64quantprecision")
        == "1"
    )
    plain = embed_onnx.session_options(False)
    with pytest.raises(Exception, match="x64quantprecision"):
        plain.get_session_config_entry("session.x64quantprecision")  # not set


def test_the_option_changes_no_bit_where_products_are_exact_already():
    import onnxruntime as ort

    directory = embed_onnx.ensure()
    _, tokenizer = embed_onnx._session(str(directory))
    model = str(directory / embed_onnx.MODEL_FILE)
    out = {}
    for exact in (False, True):
        session = ort.InferenceSession(
            model, embed_onnx.session_options(exact), providers=["CPUExecutionProvider"]
        )
        rows = []
        for text in TEXTS:
            ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            rows.append(session.run(None, feeds)[0][0])
        out[exact] = np.asarray(rows)
    # With the option the products are exact: the vectors stay the float model's, to int8's
    # own rounding (saturated sums would not be asked to).
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(embed.bundled_dir()), device="cpu").encode(
        TEXTS, normalize_embeddings=True
    )
    assert (out[True] * reference).sum(1).min() > 0.97
    if not embed_onnx.exact_products_need_option():
        assert np.array_equal(out[False], out[True])
