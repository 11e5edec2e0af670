"""Reflections (docs/protocol.md#model-reflection, #ops): the pinned basis and its digest, the admission gates, synthesis
from pinned revisions, staleness at read time, coverage-gated visibility, exact filter match."""

import pytest
from django.conf import settings

from memory.engine.reflect import basis_digest
from memory.models import Job, Receipt, Reflection, Space, Subject
from tests.memory.jobs import delete_record, make_profile, make_record, subject_row, update_record

pytestmark = pytest.mark.django_db

BELIEF = {
    "view": "recorded_at",
    "type": "belief",
    "proposition": "tea is good",
    "attribution": {"holder": "self", "source": "self_report"},
    "basis": {"kind": "stated"},
    "times": {"recorded_at": "2026-01-01T00:00:00.000Z"},
}
BELIEF_FILTER = {"require": [{"dimension": "type", "op": "eq", "value": "belief"}]}


@pytest.fixture
def subject(space, admin):
    return subject_row("s1", "u1")


@pytest.fixture
def three(subject):
    return [
        make_record(subject, "prefers green tea", kind="preference"),
        make_record(subject, "lives in Lisbon", kind="fact", context_id=None),
        make_record(subject, "plans a trip to Porto", kind="plan", context_id="c2"),
    ]


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


def state(api, who, session, **extra):
    answer = api(
        who, "memory.reflections.state", {"space_id": "s1", "subject_id": "u1", **extra}, session
    )
    assert answer.status == 200, answer.body
    return answer.body["state"]


def generate(api, who, session, **extra):
    return api(
        who, "memory.reflections.generate", {"space_id": "s1", "subject_id": "u1", **extra}, session
    )


def generated(api, who, session, run_job_now, **extra) -> Reflection:
    answer = generate(api, who, session, **extra)
    assert answer.status == 200, answer.body
    assert answer.receipt["status"] == "pending"
    receipt = run_job_now(answer.receipt["receipt_id"])
    assert receipt.status == "committed", receipt.failure
    return Reflection.objects.get(reflection_id=receipt.refs[0]["id"])


def test_state_digest_is_sha256_of_the_canonical_basis(api, admin, sess, three):
    st = state(api, admin, sess)
    refs = sorted(
        ({"record_id": r.record_id, "revision": 1} for r in three), key=lambda r: r["record_id"]
    )
    basis = {
        "record_refs": refs,
        "profile_refs": [],
        "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        "selection": {"mode": "all"},
        "coverage": {"all_contexts": True, "context_ids": [], "shared": True},
    }
    assert st["state_digest"] == basis_digest(basis)
    assert st["record_count"] == 3
    assert st["data_sufficiency"] == {"sufficient": True, "record_count": 3, "minimum_records": 3}
    assert st["missing_required_kinds"] == [] and st["latest_reflection"] is None
    assert "cognition_filter" not in st


def test_selection_and_filter_narrow_the_basis_and_are_echoed(api, admin, sess, subject, three):
    make_record(subject, "believes tea is good", cognition=[BELIEF])
    assert state(api, admin, sess, selection={"mode": "shared"})["record_count"] == 1
    st = state(api, admin, sess, cognition_filter=BELIEF_FILTER)
    assert st["record_count"] == 1 and st["cognition_filter"] == BELIEF_FILTER
    assert st["data_sufficiency"]["sufficient"] is False


def test_tombstoned_records_are_not_eligible(api, admin, sess, three):
    delete_record(three[0])
    assert state(api, admin, sess)["record_count"] == 2


def test_generate_commits_a_readable_reflection_with_references(
    api, admin, sess, three, run_job_now
):
    reflection = generated(api, admin, sess, run_job_now)
    assert not Receipt.objects.filter(status="pending").exists()
    text = reflection.content["text"]
    assert "Prefers:" in text and "prefers green tea" in text and three[0].record_id in text
    assert "Holds:" in text and "Plans:" in text
    listed = api(
        admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess
    ).body
    [wire] = listed["reflections"]
    assert wire["reflection_id"] == reflection.reflection_id and wire["stale"] is False
    assert wire["basis"]["state_digest"] == state(api, admin, sess)["state_digest"]
    assert wire["basis"]["record_refs"] == sorted(
        ({"record_id": r.record_id, "revision": 1} for r in three), key=lambda r: r["record_id"]
    )
    assert state(api, admin, sess)["latest_reflection"] == {
        "reflection_id": reflection.reflection_id,
        "stale": False,
    }


def test_pending_receipt_counts_on_the_space_until_the_job_ends(
    api, admin, sess, three, run_job_now
):
    answer = generate(api, admin, sess)
    space = api(admin, "memory.spaces.list", {}, sess).body["spaces"][0]
    assert space["pending_receipts"] == 1
    run_job_now(answer.receipt["receipt_id"])
    assert api(admin, "memory.spaces.list", {}, sess).body["spaces"][0]["pending_receipts"] == 0


def test_worker_synthesizes_from_pinned_revisions_not_current_content(
    api, admin, sess, three, run_job_now
):
    answer = generate(api, admin, sess)
    update_record(three[0], "now prefers coffee")
    receipt = run_job_now(answer.receipt["receipt_id"])
    reflection = Reflection.objects.get(reflection_id=receipt.refs[0]["id"])
    assert "prefers green tea" in reflection.content["text"]
    assert "coffee" not in reflection.content["text"]
    assert f"{three[0].record_id}@1" in reflection.content["text"]


def test_a_pinned_record_deleted_before_synthesis_is_left_out(
    api, admin, sess, subject, three, run_job_now
):
    make_record(subject, "secret to forget")
    answer = generate(api, admin, sess)
    doomed = subject.records.get(text="secret to forget")
    delete_record(doomed)
    receipt = run_job_now(answer.receipt["receipt_id"])
    assert receipt.status == "committed"
    reflection = Reflection.objects.get(reflection_id=receipt.refs[0]["id"])
    assert (
        "secret" not in reflection.content["text"]
        and doomed.record_id not in reflection.content["text"]
    )


def test_deletes_below_the_minimum_fail_the_receipt_without_content(
    api, admin, sess, three, run_job_now
):
    answer = generate(api, admin, sess)
    delete_record(three[0])
    receipt = run_job_now(answer.receipt["receipt_id"])
    assert receipt.status == "failed" and receipt.failure["code"] == "INSUFFICIENT_DATA"
    assert "tea" not in receipt.failure["message"]
    assert not Reflection.objects.exists()


def test_stale_once_the_basis_moves(api, admin, sess, subject, three, run_job_now):
    reflection = generated(api, admin, sess, run_job_now)
    update_record(three[1], "lives in Porto")
    assert state(api, admin, sess)["latest_reflection"] == {
        "reflection_id": reflection.reflection_id,
        "stale": True,
    }
    [wire] = api(
        admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess
    ).body["reflections"]
    assert wire["stale"] is True


def test_switching_the_engine_makes_it_stale(
    api, admin, sess, subject, three, run_job_now, settings
):
    made_under, new_engine = "engine/2", "hybrid/6"  # the two served engines
    settings.SPOKE_MEMORY_ENGINE = made_under
    reflection = generated(api, admin, sess, run_job_now)
    assert reflection.basis["engine_policy_version"] == made_under
    assert state(api, admin, sess)["latest_reflection"]["stale"] is False
    settings.SPOKE_MEMORY_ENGINE = new_engine
    assert state(api, admin, sess)["latest_reflection"]["stale"] is True
    settings.SPOKE_MEMORY_ENGINE = made_under
    assert state(api, admin, sess)["latest_reflection"]["stale"] is False


@pytest.mark.parametrize(
    "retired", ["engine/1", "hybrid/1", "hybrid/2", "hybrid/3", "hybrid/4", "hybrid/5"]
)
def test_a_reflection_pinned_to_a_retired_engine_reads_stale(
    api, admin, sess, subject, three, run_job_now, settings, retired
):
    """A reflection a provider made while it served a policy now retired (issues 42, 44), on this
    very state: its basis pins that policy, which no served engine is, so it reads stale (through
    state and list alike) and nothing else about it changes."""
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    reflection = generated(api, admin, sess, run_job_now)
    basis = {k: v for k, v in reflection.basis.items() if k != "state_digest"}
    assert state(api, admin, sess)["latest_reflection"]["stale"] is False
    basis["engine_policy_version"] = retired
    reflection.basis = {"state_digest": basis_digest(basis), **basis}
    reflection.save()
    assert state(api, admin, sess)["latest_reflection"] == {
        "reflection_id": reflection.reflection_id,
        "stale": True,
    }
    [wire] = api(
        admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, sess
    ).body["reflections"]
    assert wire["stale"] is True
    assert wire["basis"]["engine_policy_version"] == retired


def test_a_new_profile_revision_makes_it_stale(api, admin, sess, subject, three, run_job_now):
    doc = make_profile(subject)
    generated(api, admin, sess, run_job_now)
    doc.revision = 2
    doc.save()
    assert state(api, admin, sess)["latest_reflection"]["stale"] is True


def test_required_profile_missing_rejects_and_changes_nothing(
    api, admin, sess, subject, three, settings
):
    settings.SPOKE_MEMORY_REQUIRED_PROFILE_KINDS = ["personality", "preferences"]
    make_profile(subject, "preferences")
    before = Space.objects.get(pk="s1").revision
    answer = generate(api, admin, sess, idempotency_key="k1")
    assert answer.status == 409 and answer.code == "REQUIRED_PROFILE_MISSING"
    assert answer.error["details"]["missing_kinds"] == ["personality"]
    assert state(api, admin, sess)["missing_required_kinds"] == ["personality"]
    assert (
        not Receipt.objects.filter(op="memory.reflections.generate").exists()
        and not Job.objects.exists()
    )
    assert Space.objects.get(pk="s1").revision == before
    make_profile(subject, "personality")
    assert generate(api, admin, sess, idempotency_key="k1").receipt["status"] == "pending"


def test_insufficient_data_rejects(api, admin, sess, subject):
    make_record(subject, "only one")
    answer = generate(api, admin, sess)
    assert answer.status == 409 and answer.code == "INSUFFICIENT_DATA"
    assert not Job.objects.exists()


def test_gates_not_found_permission_frozen_fenced(api, admin, sess, outsider, grant_to, three):
    assert generate(api, outsider, api.connect(outsider)).code == "NOT_FOUND"
    reader, _ = grant_to(capabilities=["reflections_read"], shared_access=True)
    answer = generate(api, reader, api.connect(reader))
    assert (
        answer.code == "PERMISSION_DENIED"
        and answer.error["details"]["capability"] == "reflections_generate"
    )
    other, _ = grant_to(capabilities=["records_read"], shared_access=True)
    assert (
        api(
            other,
            "memory.reflections.state",
            {"space_id": "s1", "subject_id": "u1"},
            api.connect(other),
        ).code
        == "PERMISSION_DENIED"
    )
    assert (
        api(
            admin, "memory.reflections.state", {"space_id": "s1", "subject_id": "nobody"}, sess
        ).code
        == "NOT_FOUND"
    )
    Subject.objects.filter(subject_id="u1").update(state="fenced")
    assert generate(api, admin, sess).code == "SUBJECT_FENCED"
    Subject.objects.filter(subject_id="u1").update(state="active")
    Space.objects.filter(pk="s1").update(state="frozen")
    assert generate(api, admin, sess).code == "SPACE_FROZEN"
    assert not Job.objects.exists()


def test_a_reader_whose_coverage_does_not_include_the_pinned_one_never_sees_it(
    api, admin, sess, grant_to, three, run_job_now
):
    reflection = generated(api, admin, sess, run_job_now)
    narrow, _ = grant_to(capabilities=["reflections_read"], context_ids=["c1"])
    nsess = api.connect(narrow)
    body = {"space_id": "s1", "subject_id": "u1"}
    assert api(narrow, "memory.reflections.list", body, nsess).body["reflections"] == []
    assert (
        api(narrow, "memory.reflections.state", body, nsess).body["state"]["latest_reflection"]
        is None
    )
    wide, _ = grant_to(capabilities=["reflections_read"], shared_access=True)
    wsess = api.connect(wide)
    [seen] = api(wide, "memory.reflections.list", body, wsess).body["reflections"]
    assert seen["reflection_id"] == reflection.reflection_id


def test_a_narrow_generator_pins_its_own_coverage(api, admin, grant_to, three, run_job_now):
    narrow, _ = grant_to(
        capabilities=["reflections_read", "reflections_generate"], context_ids=["c1", "c2"]
    )
    nsess = api.connect(narrow)
    assert (
        generate(api, narrow, nsess).code == "INSUFFICIENT_DATA"
    )  # the shared record is not covered
    make_record(subject_row(), "attended a concert", kind="event", context_id="c1")
    reflection = generated(api, narrow, nsess, run_job_now)
    assert reflection.basis["coverage"] == {
        "all_contexts": False,
        "context_ids": ["c1", "c2"],
        "shared": False,
    }
    assert "Lisbon" not in reflection.content["text"]
    [seen] = api(
        admin, "memory.reflections.list", {"space_id": "s1", "subject_id": "u1"}, api.connect(admin)
    ).body["reflections"]
    assert seen["reflection_id"] == reflection.reflection_id


def test_list_matches_the_pinned_filter_exactly(api, admin, sess, subject, three, run_job_now):
    for i in range(3):
        make_record(subject, f"belief {i}", cognition=[BELIEF])
    plain = generated(api, admin, sess, run_job_now)
    filtered = generated(api, admin, sess, run_job_now, cognition_filter=BELIEF_FILTER)
    body = {"space_id": "s1", "subject_id": "u1"}
    assert [
        r["reflection_id"]
        for r in api(admin, "memory.reflections.list", body, sess).body["reflections"]
    ] == [plain.reflection_id]
    got = api(
        admin, "memory.reflections.list", {**body, "cognition_filter": BELIEF_FILTER}, sess
    ).body["reflections"]
    assert [r["reflection_id"] for r in got] == [filtered.reflection_id]
    assert (
        got[0]["cognition_filter"] == BELIEF_FILTER
        and got[0]["basis"]["cognition_filter"] == BELIEF_FILTER
    )
    other = {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]}
    assert (
        api(admin, "memory.reflections.list", {**body, "cognition_filter": other}, sess).body[
            "reflections"
        ]
        == []
    )
    st = state(api, admin, sess, cognition_filter=BELIEF_FILTER)
    assert st["latest_reflection"]["reflection_id"] == filtered.reflection_id


def test_list_pages_newest_first_with_a_bound_cursor(api, admin, sess, three, run_job_now):
    made = [generated(api, admin, sess, run_job_now).reflection_id for _ in range(3)]
    body = {"space_id": "s1", "subject_id": "u1", "page_size": 2}
    first = api(admin, "memory.reflections.list", body, sess).body
    second = api(
        admin, "memory.reflections.list", {**body, "cursor": first["next_cursor"]}, sess
    ).body
    ids = [r["reflection_id"] for r in first["reflections"] + second["reflections"]]
    assert ids == sorted(
        made,
        key=lambda rid: (Reflection.objects.get(reflection_id=rid).generated_at, rid),
        reverse=True,
    )
    assert second["next_cursor"] is None
    generated(api, admin, sess, run_job_now)  # the subject moved: the cursor is stale
    again = api(admin, "memory.reflections.list", {**body, "cursor": first["next_cursor"]}, sess)
    assert again.code == "CURSOR_INVALID"


def test_replayed_task_does_no_second_effect(api, admin, sess, three, run_job_now):
    from memory.tasks import run_job

    receipt = generate(api, admin, sess).receipt
    run_job_now(receipt["receipt_id"])
    run_job(receipt["receipt_id"])
    assert Reflection.objects.count() == 1


def fake_synthesizer(*, subject_id, records, profiles, engine_policy_version):
    return {
        "text": f"{len(records)} records about {subject_id}",
        "structured": {"ids": [r["record_id"] for r in records]},
    }


def bad_synthesizer(**_kw):
    return {"summary": "wrong shape"}


def test_the_synthesizer_hook_names_a_callable(api, admin, sess, three, run_job_now, settings):
    settings.SPOKE_MEMORY_REFLECTION_SYNTHESIZER = (
        "tests.memory.ops.test_reflections.fake_synthesizer"
    )
    reflection = generated(api, admin, sess, run_job_now)
    assert reflection.content["text"] == "3 records about u1"
    settings.SPOKE_MEMORY_REFLECTION_SYNTHESIZER = (
        "tests.memory.ops.test_reflections.bad_synthesizer"
    )
    receipt = run_job_now(generate(api, admin, sess).receipt["receipt_id"])
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
