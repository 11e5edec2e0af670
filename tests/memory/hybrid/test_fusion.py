"""Fusion and cosine functions (memory.engine.hybrid: reciprocal rank fusion, which hybrid/2 used
and the benches read; the cosine ranking every hybrid engine's semantic side uses): pure, no
database."""

import random

import pytest

from memory.engine import hybrid


def test_fusion_puts_a_record_both_rankings_hold_first():
    lexical = [("rec_a", 9.0), ("rec_b", 5.0), ("rec_c", 1.0)]
    semantic = [("rec_d", 0.9), ("rec_b", 0.8), ("rec_e", 0.7)]
    fused = [rid for rid, _ in hybrid.fuse(lexical, semantic)]
    assert fused[0] == "rec_b"
    assert set(fused) == {"rec_a", "rec_b", "rec_c", "rec_d", "rec_e"}


def test_fusion_scores_are_reciprocal_ranks_rounded():
    fused = dict(hybrid.fuse([("rec_a", 3.0), ("rec_b", 2.0)], [("rec_b", 0.5)], k=60))
    assert fused["rec_a"] == round(1 / 61, 6)
    assert fused["rec_b"] == round(1 / 62 + 1 / 61, 6)


def test_fusion_uses_only_the_order_of_input_scores():
    a = hybrid.fuse([("rec_a", 100.0), ("rec_b", 1.0)], [("rec_b", 0.9), ("rec_a", 0.1)])
    b = hybrid.fuse([("rec_a", 2.0), ("rec_b", 1.9)], [("rec_b", 0.31), ("rec_a", 0.30)])
    assert a == b


def test_equal_fused_scores_tie_by_record_id():
    # rec_z first lexically, rec_a first semantically: same fused score, so record_id decides.
    fused = hybrid.fuse([("rec_z", 1.0), ("rec_a", 0.5)], [("rec_a", 1.0), ("rec_z", 0.5)])
    assert [rid for rid, _ in fused] == ["rec_a", "rec_z"]
    assert fused[0][1] == fused[1][1]


def test_equal_input_scores_rank_by_record_id():
    fused = hybrid.fuse([("rec_b", 1.0), ("rec_a", 1.0)], [])
    assert [rid for rid, _ in fused] == ["rec_a", "rec_b"]
    assert fused[0][1] > fused[1][1]


def test_fusion_is_deterministic_whatever_the_input_order():
    lexical = [(f"rec_{i:03d}", float(i % 7)) for i in range(60)]
    semantic = [(f"rec_{i:03d}", (i * 37 % 11) / 11) for i in range(20, 90)]
    expected = hybrid.fuse(lexical, semantic)
    rng = random.Random(8)  # noqa: S311 (a fixed shuffle, not a secret)
    for _ in range(5):
        lx, sm = lexical[:], semantic[:]
        rng.shuffle(lx)
        rng.shuffle(sm)
        assert hybrid.fuse(lx, sm) == expected


def test_a_duplicate_id_counts_once_at_its_best_rank():
    fused = dict(hybrid.fuse([("rec_a", 1.0), ("rec_b", 0.5), ("rec_a", 0.1)], []))
    k = hybrid.RRF_K
    assert fused == {"rec_a": round(1 / (k + 1), 6), "rec_b": round(1 / (k + 2), 6)}


def test_empty_rankings_fuse_to_nothing():
    assert hybrid.fuse([], []) == []


def test_fusion_refuses_a_nonpositive_constant():
    with pytest.raises(ValueError):
        hybrid.fuse([("rec_a", 1.0)], [], k=0)
