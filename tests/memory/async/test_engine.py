"""The pure policies: transfer partitioning, digests and translation; reflection coverage and
assembly. No database."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.engine import transfer as policy
from memory.engine.reflect import assemble, basis_digest, coverage_includes
from memory.wire.canonical import canonical, digest


def obj(i: int, size: int) -> dict:
    return {"type": "record", "data": {"record_id": f"rec_{i:06d}", "text": "é" * size}}


@given(
    st.lists(st.integers(min_value=0, max_value=300), max_size=60),
    st.integers(min_value=64, max_value=2000),
)
def test_partition_keeps_order_and_bounds_every_chunk(sizes, limit):
    objects = [obj(i, s) for i, s in enumerate(sizes)]
    chunks = list(policy.partition(iter(objects), limit))
    assert [o for batch, _ in chunks for o in batch] == objects
    assert len(chunks) >= 1
    for batch, body in chunks:
        assert body == canonical(batch)
        assert len(body) <= limit or len(batch) == 1
        assert policy.chunk_digest_of_bytes(body) == policy.chunk_digest(batch)


def test_an_empty_export_is_one_empty_chunk():
    assert list(policy.partition(iter([]), 100)) == [([], b"[]")]


def test_chunks_fill_up_to_the_limit_exactly():
    objects = [obj(i, 10) for i in range(10)]
    one = len(canonical(objects[0]))
    limit = 2 + 3 * one + 2  # room for exactly three objects and two commas
    assert [len(b) for b, _ in policy.partition(iter(objects), limit)] == [3, 3, 3, 1]


def test_bundle_digest_is_over_the_five_members():
    d = policy.bundle_digest("exp_1", "s1", 1, ["sha256:aa"], {"record": 1})
    assert d == digest(
        {
            "export_id": "exp_1",
            "space_id": "s1",
            "format_version": 1,
            "chunk_digests": ["sha256:aa"],
            "object_counts": {"record": 1},
        }
    )


def test_object_order_is_type_then_id():
    a = {"type": "subject", "data": {"subject_id": "z"}}
    b = {"type": "record", "data": {"record_id": "a"}}
    p1 = {"type": "profile_document", "data": {"subject_id": "u1", "kind": "b"}}
    p2 = {"type": "profile_document", "data": {"subject_id": "u2", "kind": "a"}}
    assert sorted([p2, b, p1, a], key=policy.object_key) == [a, b, p1, p2]


def test_translation_of_unknown_versions_is_refused(monkeypatch):
    assert policy.translate({"x": 1}, 1) == {"x": 1}
    with pytest.raises(policy.UnsupportedFormat):
        policy.translate({"x": 1}, 2)
    with pytest.raises(policy.UnsupportedFormat):
        policy.translate({"x": 1}, 0)
    monkeypatch.setitem(policy.TRANSLATORS, 0, lambda o: {**o, "upgraded": True})
    assert policy.translate({"x": 1}, 0) == {"x": 1, "upgraded": True}


@pytest.mark.parametrize(
    "outer, inner, included",
    [
        (
            {"all_contexts": True, "context_ids": [], "shared": True},
            {"all_contexts": True, "context_ids": [], "shared": True},
            True,
        ),
        (
            {"all_contexts": True, "context_ids": [], "shared": False},
            {"all_contexts": False, "context_ids": [], "shared": True},
            False,
        ),
        (
            {"all_contexts": False, "context_ids": ["c1"], "shared": True},
            {"all_contexts": True, "context_ids": [], "shared": False},
            False,
        ),
        (
            {"all_contexts": False, "context_ids": ["c1", "c2"], "shared": False},
            {"all_contexts": False, "context_ids": ["c2"], "shared": False},
            True,
        ),
        (
            {"all_contexts": False, "context_ids": ["c1"], "shared": False},
            {"all_contexts": False, "context_ids": ["c1", "c2"], "shared": False},
            False,
        ),
    ],
)
def test_coverage_inclusion(outer, inner, included):
    assert coverage_includes(outer, inner) is included


def test_basis_digest_ignores_the_digest_member():
    basis = {"record_refs": [], "selection": {"mode": "all"}}
    assert (
        basis_digest(basis) == basis_digest({**basis, "state_digest": "sha256:00"}) == digest(basis)
    )


def test_assemble_is_deterministic_and_sectioned():
    records = [
        {
            "record_id": "rec_a",
            "revision": 2,
            "kind": "preference",
            "content": {"text": "likes tea"},
            "created_at": "2026-01-02T00:00:00.000Z",
        },
        {
            "record_id": "rec_b",
            "revision": 1,
            "kind": "note",
            "content": {"text": "believes X", "cognition": [{"type": "belief"}]},
            "created_at": "2026-01-01T00:00:00.000Z",
        },
        {
            "record_id": "rec_c",
            "revision": 1,
            "kind": "event",
            "content": {"text": "ran\n a  race"},
            "created_at": "2026-01-03T00:00:00.000Z",
        },
    ]
    out = assemble(subject_id="u1", records=records, profiles=[], engine_policy_version="engine/2")
    assert out == assemble(
        subject_id="u1",
        records=list(reversed(records)),
        profiles=[],
        engine_policy_version="engine/2",
    )
    assert "Prefers:\n- likes tea [rec_a@2]" in out["text"]
    assert "Holds:\n- believes X [rec_b@1]" in out["text"]
    assert "Recently did:\n- ran a race [rec_c@1]" in out["text"]
    assert out["structured"]["sections"]["prefers"] == [{"record_id": "rec_a", "revision": 2}]
