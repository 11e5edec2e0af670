"""Import verification checks each object as strictly as a write of it (SPEC §5; issue 13,
item 6): schema, cognition records (§6.2), content bytes (§2.8), references between objects.
A bundle re-signed after tampering (every digest recomputed) ends `failed` with the import
`rejected`, and nothing of it becomes visible in the target space."""

from __future__ import annotations

import copy

import pytest

from memory.engine import transfer as policy
from memory.models import Import
from memory.wire.canonical import digest

from .conftest import (
    delete_record,
    make_candidate,
    make_profile,
    make_record,
    run_pending,
    subject_row,
)
from .test_transfer import export, fresh_target, stage_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


@pytest.fixture
def source(api, admin, sess, run_job_now):
    """s1 with two subjects, history, a tombstone, a reviewed candidate (outcome and provenance
    pointing at each other), a pending candidate of u2, a profile document and a reflection whose
    basis pins records and the profile; its whole export, and an empty target s2."""
    u1, u2 = subject_row("s1", "u1"), subject_row("s1", "u2")
    records = [make_record(u1, f"note {i}", context_id="c1" if i % 2 else None) for i in range(4)]
    make_record(u2, "about u2", context_id="c2", revisions=2)
    delete_record(records[0])
    make_candidate(u2, context_id=None)
    make_profile(u1)
    reviewed = make_candidate(u1, text="to promote")
    answer = api(
        admin,
        "memory.candidates.review",
        {
            "space_id": "s1",
            "candidate_id": reviewed.candidate_id,
            "decision": {"action": "promote"},
        },
        sess,
    )
    assert answer.status == 200, answer.body
    gen = api(
        admin, "memory.reflections.generate", {"space_id": "s1", "subject_id": "u1"}, sess
    ).receipt
    assert run_job_now(gen["receipt_id"]).status == "committed"
    bundle, chunks = export(api, admin, sess, run_job_now)
    assert bundle["object_counts"]["reflection"] == 1
    fresh_target(api, admin)
    return bundle, chunks


def resigned(bundle: dict, chunks: list[dict]) -> tuple[dict, list[dict]]:
    """Every digest recomputed, as a tamperer would."""
    for c in chunks:
        c["digest"] = digest(c["objects"])
    bundle = {**bundle, "chunk_digests": [c["digest"] for c in chunks]}
    bundle["bundle_digest"] = policy.bundle_digest(
        bundle["export_id"],
        bundle["space_id"],
        bundle["format_version"],
        bundle["chunk_digests"],
        bundle["object_counts"],
    )
    return bundle, chunks


def first(chunks: list[dict], kind: str, where=lambda d: True) -> dict:
    return next(
        o["data"] for c in chunks for o in c["objects"] if o["type"] == kind and where(o["data"])
    )


def verify(api, admin, sess, bundle, chunks):
    import_id, final = stage_all(api, admin, sess, bundle, chunks)
    assert final["status"] == "pending"
    return import_id, run_pending(final["receipt_id"])


BAD_COGNITION = {"type": "hope", "confidence": "high", "extra": 1}


def _live(d):
    return "tombstone" not in d


TAMPERINGS = {
    # the issue's two examples
    "cognition with another view": lambda c: first(c, "record", _live)["content"].update(
        cognition=[{"view": "occurred_at"}]
    ),
    "cognition not a closed record": lambda c: first(c, "record", _live)["content"].update(
        cognition=[BAD_COGNITION]
    ),
    "content over max_content_bytes": lambda c: first(c, "record", _live)["content"].update(
        text="x" * 70_000
    ),
    "a tombstone that kept its content": lambda c: first(
        c, "record", lambda d: "tombstone" in d
    ).update(content={"text": "back from the dead"}),
    "candidate proposed cognition": lambda c: first(c, "candidate")["proposed"]["content"].update(
        cognition=[BAD_COGNITION]
    ),
    "candidate outcome naming a record not in the bundle": lambda c: first(
        c, "candidate", lambda d: "outcome" in d
    )["outcome"].update(record_ids=["rec_01AAAAAAAAAAAAAAAAAAAAAAAA"]),
    "record provenance naming a candidate of another subject": lambda c: first(
        c, "record", lambda d: "candidate_id" in d["provenance"]
    )["provenance"].update(
        candidate_id=first(c, "candidate", lambda d: d["subject_id"] == "u2")["candidate_id"]
    ),
    "profile content over max_content_bytes": lambda c: first(c, "profile_document")[
        "content"
    ].update(text="y" * 70_000),
    "reflection basis naming a record not in the bundle": lambda c: first(c, "reflection")["basis"][
        "record_refs"
    ].append({"record_id": "rec_01AAAAAAAAAAAAAAAAAAAAAAAA", "revision": 1}),
    "reflection basis naming a revision the record never reached": lambda c: first(c, "reflection")[
        "basis"
    ]["record_refs"][0].update(revision=99),
    "reflection basis naming a profile kind not in the bundle": lambda c: first(c, "reflection")[
        "basis"
    ]["profile_refs"].append({"kind": "personality", "revision": 1}),
    "reflection basis with a malformed selection": lambda c: first(c, "reflection")["basis"].update(
        selection={"mode": "contexts", "context_ids": []}
    ),
    "reflection state_digest not of its basis": lambda c: first(c, "reflection")["basis"].update(
        state_digest="sha256:" + "0" * 64
    ),
    "reflection pinning another filter than its basis": lambda c: first(c, "reflection").update(
        cognition_filter={"require": [{"dimension": "type", "op": "eq", "value": "belief"}]}
    ),
}


# What the request schema already refuses at the edge (400, nothing staged).
EDGE_TAMPERINGS = {
    "reflection basis with a malformed coverage": lambda c: first(c, "reflection")["basis"].update(
        coverage={"contexts": "all"}
    ),
}


@pytest.mark.parametrize("name", sorted(EDGE_TAMPERINGS))
def test_a_tampered_object_the_schema_refuses_is_not_even_staged(api, admin, sess, source, name):
    bundle, chunks = source
    chunks = copy.deepcopy(chunks)
    EDGE_TAMPERINGS[name](chunks)
    bundle, chunks = resigned(bundle, chunks)
    holding = next(
        n for n, c in enumerate(chunks) if any(o["type"] == "reflection" for o in c["objects"])
    )
    import_id = None
    for n, chunk in enumerate(chunks[: holding + 1]):
        body = {"space_id": "s2", "chunk": chunk}
        body.update({"import_id": import_id} if import_id else {"bundle": bundle})
        answer = api(admin, "memory.imports.stage", body, sess)
        if n < holding:
            import_id = answer.receipt["refs"][0]["id"]
            continue
        assert answer.status == 400 and answer.error["details"]["reason"] == "schema"
    staged = Import.objects.filter(space_id="s2")
    assert [i.next_ordinal for i in staged] == ([holding] if holding else [])


def test_an_untampered_bundle_with_every_reference_verifies_and_activates(api, admin, sess, source):
    bundle, chunks = source
    import_id, receipt = verify(api, admin, sess, bundle, chunks)
    assert receipt.status == "committed", receipt.failure
    activate = api(
        admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess
    )
    assert run_pending(activate.receipt["receipt_id"]).status == "committed"
    listed = api(admin, "memory.reflections.list", {"space_id": "s2", "subject_id": "u1"}, sess)
    assert len(listed.body["reflections"]) == 1


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_a_tampered_object_rejects_the_import_and_nothing_becomes_visible(
    api, admin, sess, source, name
):
    bundle, chunks = source
    chunks = copy.deepcopy(chunks)
    TAMPERINGS[name](chunks)
    bundle, chunks = resigned(bundle, chunks)
    import_id, receipt = verify(api, admin, sess, bundle, chunks)
    assert receipt.status == "failed", name
    assert receipt.failure["code"] in ("INVALID_INPUT", "CONTENT_TOO_LARGE")
    assert receipt.failure["message"].startswith("Chunk ")
    assert "back from the dead" not in receipt.failure["message"]
    imp = Import.objects.get(pk=import_id)
    assert imp.state == "rejected" and imp.failure == receipt.failure
    activate = api(
        admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess
    )
    assert activate.code == "IMPORT_STATE_CONFLICT"
    listed = api(admin, "memory.records.list", {"space_id": "s2"}, sess)
    assert listed.status == 200 and listed.body["records"] == []


def test_issue_13_item_6_a_malformed_cognition_record_is_never_served(api, admin, sess, source):
    """The issue's reproduction: a record whose cognition is not a closed record, every digest
    recomputed: the import is rejected, records.get does not serve it, a cognition filter
    matches nothing."""
    bundle, chunks = source
    chunks = copy.deepcopy(chunks)
    record = first(chunks, "record", _live)
    record["content"]["cognition"] = [BAD_COGNITION]
    bundle, chunks = resigned(bundle, chunks)
    import_id, receipt = verify(api, admin, sess, bundle, chunks)
    assert receipt.status == "failed" and receipt.failure["code"] == "INVALID_INPUT"
    assert "cognition" in receipt.failure["message"]
    assert Import.objects.get(pk=import_id).state == "rejected"
    got = api(
        admin, "memory.records.get", {"space_id": "s2", "record_id": record["record_id"]}, sess
    )
    assert got.code == "NOT_FOUND"
    hope = api(
        admin,
        "memory.records.list",
        {
            "space_id": "s2",
            "cognition_filter": {"require": [{"dimension": "type", "op": "eq", "value": "hope"}]},
        },
        sess,
    )
    assert hope.status == 200 and hope.body["records"] == []
