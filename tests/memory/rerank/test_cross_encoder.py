"""The local cross-encoder plug-in (SPOKE_MEMORY_RERANK_MODEL, sentence-transformers' CrossEncoder
loaded offline from a folder). No cross-encoder weights can be downloaded on this network, so the
test builds a tiny randomly initialised one (a 2-layer BERT of width 32, seeded, with the bundled
MiniLM's tokenizer files) and saves it to a temporary folder: it proves the plumbing — the answer
follows the model's scores, computed here independently with transformers, only the pool is
scored, a folder that is not a model gives the unreranked answer — not any quality gain."""

from __future__ import annotations

import logging
import os
import shutil

import pytest

from memory.services import rerank
from tests.memory.hybrid.conftest import needs_semantic

from .conftest import ids
from .test_rerank_server import QUERY, TEXTS

pytestmark = [pytest.mark.django_db, needs_semantic]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from memory.embedding import embed

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(embed.bundled_dir()))
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.5,  # scores spread over [0, 1], not all ~0.5
    )
    BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def model_scores(folder, query: str, texts: list[str]) -> list[float]:
    """The model's relevance of each pair, computed without sentence-transformers: the logit of
    its one label through a sigmoid."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    out = []
    with torch.no_grad():
        for text in texts:
            batch = tokenizer(query, text, truncation=True, max_length=128, return_tensors="pt")
            out.append(float(torch.sigmoid(model(**batch).logits[0, 0])))
    return out


@pytest.fixture
def notes(write) -> dict[str, str]:
    return {write(text): text for text in TEXTS}


def test_the_answer_follows_the_models_scores(tiny_cross_encoder, reranker, notes, recall):
    pool = ids(recall(QUERY, budget={"max_records": 50}))
    reranker(model=str(tiny_cross_encoder))
    answer = recall(QUERY, budget={"max_records": 3})
    scores = model_scores(tiny_cross_encoder, QUERY, [notes[rid] for rid in pool])
    want = sorted(zip(pool, scores, strict=True), key=lambda p: -p[1])[:3]
    assert ids(answer) == [rid for rid, _ in want]
    for result, (_, score) in zip(answer["results"], want, strict=True):
        assert result["score"] == pytest.approx(score, abs=1e-4)
        assert 0 <= result["score"] <= 1
    assert ids(answer) != pool[:3]  # the model's order, not the engine's


def test_only_the_pool_is_scored(tiny_cross_encoder, reranker, notes, recall):
    engine_top = ids(recall(QUERY, budget={"max_records": 3}))
    reranker(model=str(tiny_cross_encoder), pool=3)
    answer = recall(QUERY, budget={"max_records": 3})
    assert set(ids(answer)) == set(engine_top)
    scores = model_scores(tiny_cross_encoder, QUERY, [notes[rid] for rid in engine_top])
    assert ids(answer) == [
        rid for _, rid in sorted(zip(scores, engine_top, strict=True), reverse=True)
    ]


def test_a_folder_that_is_not_a_model_gives_the_unreranked_answer(
    tmp_path, reranker, notes, recall, caplog
):
    plain = recall(QUERY, budget={"max_records": 3})
    (tmp_path / "config.json").write_text("{not json")
    for folder in (tmp_path, tmp_path / "missing"):
        caplog.clear()
        reranker(model=str(folder))
        with caplog.at_level(logging.INFO):
            assert recall(QUERY, budget={"max_records": 3}) == plain
        [line] = [r.getMessage() for r in caplog.records if r.name == "memory.rerank"]
        assert line.startswith("rerank: cross-encoder: ") and "apple" not in line


def test_its_identity_is_its_folders_digest(tiny_cross_encoder, tmp_path, reranker):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_cross_encoder, copy)
    reranker(model=str(tiny_cross_encoder))
    first = rerank.identity()
    reranker(model=str(copy))
    assert rerank.identity() == {**first, "name": "copy"}  # the same files, the same digest
    assert first is not None and first["source"] == "local"
    rerank._folder_digest.cache_clear()
    with (copy / "config.json").open("a") as f:
        f.write("\n")
    assert rerank.identity()["digest"] != first["digest"]
