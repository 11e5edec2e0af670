"""hybrid/2's fusion rule, the pure function (memory.engine.hybrid2; the policy is retired and no
longer served, bench/tune_hybrid2.py still reads it): RRF over the engine/2 head and the
semantic side."""

from memory.engine import hybrid2


def test_fuse2_is_rrf_over_the_lexical_head_and_the_semantic_side():
    lexical = [("a", 1.0), ("b", 0.5), ("c", 0.2)]
    semantic = [("c", 0.9), ("d", 0.8)]
    k = hybrid2.RRF_K
    expected = {
        "a": 1 / (k + 1),
        "b": 1 / (k + 2),
        "c": 1 / (k + 3) + 1 / (k + 1),
        "d": 1 / (k + 2),
    }
    fused = hybrid2.fuse2(lexical, semantic)
    assert dict(fused) == {rid: round(v, 6) for rid, v in expected.items()}
    assert [rid for rid, _ in fused] == sorted(expected, key=lambda r: (-round(expected[r], 6), r))
