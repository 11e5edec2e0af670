"""The cosine ranking of the hybrid engines' semantic side (pure; needs numpy, part of the
semantic extra)."""

import pytest

from memory.engine import hybrid

np = pytest.importorskip(
    "numpy", reason="numpy is part of the semantic extra (pip install .[semantic])"
)


def _unit(rows):
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_cosine_ranking_orders_by_similarity_and_applies_the_floor():
    ids = ["rec_a", "rec_b", "rec_c"]
    matrix = _unit([[1, 0], [0.6, 0.8], [-1, 0]])
    ranked = hybrid.cosine_ranking(
        np.array([1, 0], dtype=np.float32), ids, matrix, top_n=10, min_cosine=0.2
    )
    assert [rid for rid, _ in ranked] == ["rec_a", "rec_b"]
    assert ranked[1][1] == pytest.approx(0.6, abs=1e-6)


def test_cosine_ranking_keeps_top_n_and_ties_by_id():
    ids = ["rec_d", "rec_c", "rec_b", "rec_a"]
    matrix = _unit([[1, 0], [1, 0], [1, 0], [0.8, 0.6]])
    ranked = hybrid.cosine_ranking(np.array([1, 0], dtype=np.float32), ids, matrix, top_n=2)
    assert [rid for rid, _ in ranked] == ["rec_b", "rec_c"]


def test_cosine_ranking_of_nothing_is_empty():
    assert hybrid.cosine_ranking(np.array([1, 0], dtype=np.float32), [], np.zeros((0, 2))) == []
