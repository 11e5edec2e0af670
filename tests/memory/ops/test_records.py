"""memory.records.* (docs/protocol.md#model-retainedrecord, #ops, #authorization-§2.8): authored writes, reads under coverage, CAS on
update/delete/promote (and the lost-update race on PostgreSQL), erasure on delete, state gates."""

import json
import threading

import pytest
from django.apps import apps
from django.db import connection, connections, models
from django.test.utils import CaptureQueriesContext

from memory.models import Candidate, Record, RecordRevision, Subject
from memory.services import derived
from tests.conftest import make_persona, make_space, requires_postgres
from tests.memory.ops.capture_world import C1, C2, SHARED, cognition_entry, state, world_fixture  # noqa: F401
from tests.memory.ops.state_gates import STATE_GATES

pytestmark = pytest.mark.django_db


def rbody(rid, **extra):
    return {"space_id": "s1", "record_id": rid, **extra}


# ---- create / get -----------------------------------------------------------------------------


def test_create_returns_revision_one_with_authored_provenance(world, admin):
    answer = world.create(
        text="Ada works at Acme.", kind="fact", placement=C1, extensions={"acme": {"x": 1}}
    )
    ref = answer.receipt["refs"][0]
    assert ref["type"] == "record" and ref["id"].startswith("rec_") and ref["revision"] == 1
    record = world.record(ref["id"])
    assert record["content"] == {"text": "Ada works at Acme."} and record["kind"] == "fact"
    assert record["placement"] == C1 and record["subject_id"] == "u1" and record["space_id"] == "s1"
    assert record["provenance"]["source"] == "authored"
    assert record["provenance"]["author_principal_id"] == admin.id
    assert set(record["provenance"]) == {"source", "author_principal_id", "created_at"}
    assert (
        record["revision"] == 1
        and "tombstone" not in record
        and record["extensions"] == {"acme": {"x": 1}}
    )
    assert (
        RecordRevision.objects.filter(
            space_id="s1", record__space_id="s1", record__record_id=ref["id"]
        ).count()
        == 1
    )


def test_cognition_absent_vs_empty_round_trips(world):
    absent = world.record_id(content={"text": "a"})
    empty = world.record_id(content={"text": "a", "cognition": []})
    full = world.record_id(content={"text": "a", "cognition": [cognition_entry()]})
    assert "cognition" not in world.record(absent)["content"]
    assert world.record(empty)["content"]["cognition"] == []
    assert world.record(full)["content"]["cognition"] == [cognition_entry()]


@pytest.mark.parametrize(
    "grant, placement, code",
    [
        ({"capabilities": ["records_read"]}, C1, "PERMISSION_DENIED"),
        ({"capabilities": ["records_write"], "context_ids": ["c2"]}, C1, "PERMISSION_DENIED"),
        ({"capabilities": ["records_write"]}, SHARED, "PERMISSION_DENIED"),
        ({"capabilities": ["records_write"], "subject_ids": ["u2"]}, C1, "NOT_FOUND"),
        ({"capabilities": ["records_write"], "context_ids": ["c1"]}, C1, None),
        (
            {"capabilities": ["records_write"], "shared_access": True, "context_ids": ["c9"]},
            SHARED,
            None,
        ),
    ],
)
def test_create_coverage(world, grant_to, grant, placement, code):
    who, _ = grant_to(**grant)
    before = state()
    answer = world.create(who, placement=placement)
    if code is None:
        assert answer.status == 200
    else:
        assert answer.code == code and state() == before


@pytest.mark.parametrize(
    "change, status, code",
    [
        ({"subject": "never"}, 404, "NOT_FOUND"),
        ({"content": {"text": "x", "cognition": [{"view": "valid_time"}]}}, 422, "INVALID_INPUT"),
        ({"content": {"text": "x" * 65_600}}, 413, "CONTENT_TOO_LARGE"),
        ({"content": {"structured": {}}}, 400, "invalid_input"),
        ({"kind": "Fact!"}, 400, "invalid_input"),
        ({"placement": {"scope": "context"}}, 400, "invalid_input"),
    ],
)
def test_bad_create_writes_nothing(world, change, status, code):
    before = state()
    answer = world.create(idempotency_key="c-bad", **change)
    assert (answer.status, answer.code) == (status, code), answer.body
    assert state() == before


@pytest.mark.parametrize(
    "setup, code",
    STATE_GATES,
)
def test_create_state_gates(world, admin, setup, code):
    world.api(admin, setup["op"], {"space_id": "s1", **setup["body"]})
    before = state()
    assert world.create(placement=C1).code == code
    assert state() == before


@pytest.mark.parametrize(
    "grant, visible",
    [
        ({"capabilities": ["records_read"]}, True),
        ({"capabilities": ["records_write"]}, False),  # reads need records_read
        ({"capabilities": ["records_read"], "context_ids": ["c2"]}, False),
        ({"capabilities": ["records_read"], "subject_ids": ["u2"]}, False),
        ({"capabilities": ["recall", "candidates_read"]}, False),
    ],
)
def test_get_coverage(world, api, grant_to, grant, visible):
    rid = world.record_id(placement=C1)
    who, _ = grant_to(**grant)
    answer = api(who, "memory.records.get", rbody(rid))
    if visible:
        assert answer.body["record"]["record_id"] == rid
    else:
        assert (answer.code, answer.error["details"]) == ("NOT_FOUND", {"resource": "record"})
    assert api(world.admin, "memory.records.get", rbody("rec_absent")).code == "NOT_FOUND"


def test_get_shared_needs_shared_access(world, api, grant_to):
    rid = world.record_id(placement=SHARED)
    plain, _ = grant_to(capabilities=["records_read"])
    shared, _ = grant_to(capabilities=["records_read"], shared_access=True, context_ids=["c9"])
    assert api(plain, "memory.records.get", rbody(rid)).code == "NOT_FOUND"
    assert api(shared, "memory.records.get", rbody(rid)).status == 200


# ---- update -----------------------------------------------------------------------------------


def test_update_content_and_kind_with_cas_and_history(world, api, admin):
    rid = world.record_id(text="first")
    one = api(
        admin, "memory.records.update", rbody(rid, expected_revision=1, content={"text": "second"})
    )
    assert one.receipt["refs"] == [{"type": "record", "id": rid, "revision": 2}]
    two = api(admin, "memory.records.update", rbody(rid, expected_revision=2, kind="preference"))
    assert two.receipt["refs"][0]["revision"] == 3
    record = world.record(rid)
    assert record["content"] == {"text": "second"} and record["kind"] == "preference"
    assert record["placement"] == C1 and record["revision"] == 3
    history = list(
        RecordRevision.objects.filter(space_id="s1", record__space_id="s1", record__record_id=rid)
        .order_by("revision")
        .values_list("revision", "kind", "content")
    )
    assert history == [
        (1, "fact", {"text": "first"}),
        (2, "fact", {"text": "second"}),
        (3, "preference", {"text": "second"}),
    ]
    assert Record.objects.get(record_id=rid).text == "second"
    stale = api(
        admin,
        "memory.records.update",
        rbody(rid, expected_revision=2, kind="fact", idempotency_key="u"),
    )
    assert (stale.status, stale.code, stale.error["details"]) == (
        409,
        "REVISION_CONFLICT",
        {"current_revision": 3},
    )


def test_update_needs_content_or_kind_and_cannot_move_the_record(world, api, admin):
    rid = world.record_id()
    assert (
        api(admin, "memory.records.update", rbody(rid, expected_revision=1)).code == "invalid_input"
    )
    moved = api(admin, "memory.records.update", rbody(rid, expected_revision=1, placement=C2))
    assert moved.code == "invalid_input"


def test_content_validation_comes_before_cas(world, api, admin):
    rid = world.record_id()
    bad = {"text": "x", "cognition": [{"view": "nope"}]}
    answer = api(admin, "memory.records.update", rbody(rid, expected_revision=9, content=bad))
    assert (
        answer.code == "INVALID_INPUT"
        and answer.error["details"]["reason"] == "invalid_cognition_record"
    )


@pytest.mark.parametrize(
    "grant, code",
    [
        ({"capabilities": ["records_read"]}, "PERMISSION_DENIED"),
        ({"capabilities": ["records_write"], "context_ids": ["c2"]}, "NOT_FOUND"),
        ({"capabilities": ["records_read", "records_write"], "context_ids": ["c2"]}, "NOT_FOUND"),
        (
            {"capabilities": ["records_read"], "context_ids": ["c1"], "subject_ids": ["u1"]},
            "PERMISSION_DENIED",
        ),
        (
            {"capabilities": ["records_write"], "context_ids": ["c1"]},
            None,
        ),  # a writer sees what it may write
    ],
)
def test_update_coverage(world, api, grant_to, grant, code):
    rid = world.record_id(placement=C1)
    who, _ = grant_to(**grant)
    before = state()
    answer = api(who, "memory.records.update", rbody(rid, expected_revision=1, kind="plan"))
    if code is None:
        assert answer.status == 200
    else:
        assert answer.code == code and state() == before


@pytest.mark.parametrize(
    "op, extra",
    [
        ("memory.records.update", {"kind": "plan"}),
        ("memory.records.delete", {}),
        ("memory.records.promote", {"placement": SHARED}),
    ],
)
@pytest.mark.parametrize(
    "setup, code",
    STATE_GATES,
)
def test_write_state_gates(world, api, admin, op, extra, setup, code):
    rid = world.record_id(placement=C1)
    world.api(admin, setup["op"], {"space_id": "s1", **setup["body"]})
    before = state()
    answer = api(admin, op, rbody(rid, expected_revision=1, idempotency_key="g", **extra))
    assert (answer.status, answer.code) == (409, code)
    assert state() == before


@pytest.mark.parametrize(
    "op, extra",
    [
        ("memory.records.update", {"kind": "plan"}),
        ("memory.records.delete", {}),
        ("memory.records.promote", {"placement": SHARED}),
    ],
)
def test_tombstoned_records_take_no_change(world, api, admin, op, extra):
    rid = world.record_id()
    api(admin, "memory.records.delete", rbody(rid, expected_revision=1))
    before = state()
    answer = api(admin, op, rbody(rid, expected_revision=2, **extra))
    assert (answer.status, answer.code) == (409, "RECORD_TOMBSTONED")
    # the tombstone gate comes before CAS: a stale revision still says tombstoned
    assert api(admin, op, rbody(rid, expected_revision=1, **extra)).code == "RECORD_TOMBSTONED"
    assert state() == before


# ---- delete -----------------------------------------------------------------------------------


def all_stored_text() -> str:
    """Every text and JSON column of every row of every model, as one string."""
    chunks = []
    for model in apps.get_models():
        fields = [
            f.attname
            for f in model._meta.concrete_fields
            if isinstance(f, (models.TextField, models.CharField, models.JSONField))
        ]
        if fields:
            chunks += [json.dumps(row, default=str) for row in model.objects.values_list(*fields)]
    return "\n".join(chunks)


def test_delete_erases_every_stored_copy_and_keeps_a_tombstone(world, api, admin):
    secret = "Ada-secret-diagnosis-31337"
    [cid] = world.candidate_ids(
        texts=[
            {
                "content": {
                    "text": f"{secret} (raw)",
                    "structured": {"s": secret},
                    "cognition": [cognition_entry(proposition=secret)],
                }
            }
        ]
    )
    override = {"text": secret, "structured": {"s": secret}}
    rid = world.review(None, cid, {"action": "promote", "content_override": override}).receipt[
        "refs"
    ][1]["id"]
    api(
        admin,
        "memory.records.update",
        rbody(rid, expected_revision=1, content={"text": f"{secret} v2"}),
    )
    erased = []
    derived.ERASERS.append(lambda records: erased.extend(r.record_id for r in records))
    try:
        answer = api(
            admin,
            "memory.records.delete",
            rbody(rid, expected_revision=2, reason="user asked", idempotency_key="del-1"),
        )
    finally:
        derived.ERASERS.pop()
    assert answer.status == 200, answer.body
    assert answer.receipt["refs"] == [
        {"type": "record", "id": rid, "revision": 3},
        {"type": "candidate", "id": cid, "revision": 3},
    ]
    assert erased == [rid]
    assert secret not in all_stored_text()
    record = world.record(rid)
    assert record["content"] == {"text": ""} and record["revision"] == 3
    assert (
        record["tombstone"]["deleted_by_principal_id"] == admin.id
        and record["tombstone"]["reason"] == "user asked"
    )
    assert "deleted_at" in record["tombstone"]
    assert record["provenance"]["candidate_id"] == cid  # the tombstone keeps provenance
    history = list(
        RecordRevision.objects.filter(space_id="s1", record__space_id="s1", record__record_id=rid)
        .order_by("revision")
        .values_list("revision", "content")
    )
    assert history == [(1, {"text": ""}), (2, {"text": ""}), (3, {"text": ""})]
    assert Candidate.objects.get(candidate_id=cid).proposed == {"content": {"text": ""}}


def test_deleted_fragment_erases_the_shared_source_but_not_sibling_records(world, api, admin):
    [cid] = world.candidate_ids(texts=["alpha-text and beta-text"])
    refs = world.review(
        None,
        cid,
        {
            "action": "fragment",
            "fragments": [{"content": {"text": "alpha-text"}}, {"content": {"text": "beta-text"}}],
        },
    ).receipt["refs"]
    alpha, beta = refs[1]["id"], refs[2]["id"]
    api(admin, "memory.records.delete", rbody(alpha, expected_revision=1))
    assert "alpha-text" not in all_stored_text()
    assert world.record(beta)["content"] == {"text": "beta-text"}


def test_delete_cas_and_coverage(world, api, grant_to):
    rid = world.record_id()
    stale = api(world.admin, "memory.records.delete", rbody(rid, expected_revision=5))
    assert (stale.code, stale.error["details"]) == ("REVISION_CONFLICT", {"current_revision": 1})
    reader, _ = grant_to(capabilities=["records_read"])
    before = state()
    assert (
        api(reader, "memory.records.delete", rbody(rid, expected_revision=1)).code
        == "PERMISSION_DENIED"
    )
    assert (
        api(world.admin, "memory.records.delete", rbody("rec_gone", expected_revision=1)).code
        == "NOT_FOUND"
    )
    assert state() == before


def test_delete_receipt_carries_no_content(world, api, admin):
    rid = world.record_id(text="delete-me-secret-99")
    receipt = api(
        admin, "memory.records.delete", rbody(rid, expected_revision=1, reason="r")
    ).receipt
    assert "delete-me-secret-99" not in json.dumps(receipt)


# ---- promote ----------------------------------------------------------------------------------


def test_promote_changes_placement_and_keeps_provenance(world, api, admin):
    [cid] = world.candidate_ids(placement=C1, scope_extra={"source_context_id": "chat"})
    rid = world.review(None, cid, {"action": "promote"}).receipt["refs"][1]["id"]
    before = world.record(rid)
    answer = api(admin, "memory.records.promote", rbody(rid, expected_revision=1, placement=SHARED))
    assert answer.receipt["refs"] == [{"type": "record", "id": rid, "revision": 2}]
    after = world.record(rid)
    assert after["placement"] == SHARED and after["provenance"] == before["provenance"]
    assert after["content"] == before["content"]
    assert (
        RecordRevision.objects.get(
            space_id="s1", record__space_id="s1", record__record_id=rid, revision=2
        ).placement_scope
        == "shared"
    )
    stale = api(admin, "memory.records.promote", rbody(rid, expected_revision=1, placement=C2))
    assert (stale.code, stale.error["details"]) == ("REVISION_CONFLICT", {"current_revision": 2})


@pytest.mark.parametrize(
    "grant, code",
    [
        (
            {"capabilities": ["records_read", "records_write"], "context_ids": ["c1"]},
            "PERMISSION_DENIED",
        ),
        ({"capabilities": ["records_read", "records_write"], "context_ids": ["c2"]}, "NOT_FOUND"),
        ({"capabilities": ["records_read", "records_write"], "context_ids": ["c1", "c2"]}, None),
    ],
)
def test_promote_needs_coverage_of_old_and_new_placement(world, api, grant_to, grant, code):
    rid = world.record_id(placement=C1)
    who, _ = grant_to(**grant)
    before = state()
    answer = api(who, "memory.records.promote", rbody(rid, expected_revision=1, placement=C2))
    if code is None:
        assert answer.status == 200 and world.record(rid)["placement"] == C2
    else:
        assert answer.code == code and state() == before


def test_promote_with_two_grants_one_per_placement(world, api, grant_to):
    rid = world.record_id(placement=C1)
    who, _ = grant_to(capabilities=["records_write"], context_ids=["c1"])
    grant_to(who, capabilities=["records_write"], shared_access=True, context_ids=["c9"])
    assert (
        api(who, "memory.records.promote", rbody(rid, expected_revision=1, placement=SHARED)).status
        == 200
    )


def test_promote_into_or_out_of_a_fenced_context(world, api, admin):
    out_of = world.record_id(placement=C1)
    into = world.record_id(placement=SHARED)
    world.api(
        admin,
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "c1"},
    )
    assert (
        api(admin, "memory.records.promote", rbody(out_of, expected_revision=1, placement=C2)).code
        == "CONTEXT_FENCED"
    )
    assert (
        api(admin, "memory.records.promote", rbody(into, expected_revision=1, placement=C1)).code
        == "CONTEXT_FENCED"
    )
    assert (
        api(admin, "memory.records.promote", rbody(into, expected_revision=1, placement=C2)).status
        == 200
    )


def test_writes_move_subject_and_space_revisions(world, api, admin):
    rid = world.record_id()
    subject_rev = Subject.objects.get(subject_id="u1").revision
    answer = api(admin, "memory.records.update", rbody(rid, expected_revision=1, kind="plan"))
    assert Subject.objects.get(subject_id="u1").revision == subject_rev + 1
    assert (
        answer.receipt["space_revision"]
        == world.api(admin, "memory.spaces.list", {}).body["spaces"][0]["revision"]
    )


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_cannot_lose_an_update():
    from django.test import Client

    from memory.models import Space
    from memory.ops.base import call
    from memory.services.operators import issue_root_grant

    make_space("s1")
    admin = make_persona("writer")
    issue_root_grant(Space.objects.get(pk="s1"), admin.principal)
    call(admin.principal, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    created = call(
        admin.principal,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "fact",
            "content": {"text": "v1"},
            "placement": C1,
        },
    )
    rid = created["receipt"]["refs"][0]["id"]
    n = 16
    results: list[tuple[int, dict, str]] = []
    barrier = threading.Barrier(n)

    def worker(i):
        try:
            barrier.wait()
            text = f"writer-{i}"
            response = Client().post(
                "/v1/ops/memory.records.update",
                data=json.dumps(
                    {
                        "space_id": "s1",
                        "record_id": rid,
                        "expected_revision": 1,
                        "content": {"text": text},
                    }
                ),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {admin.token}",
            )
            results.append((response.status_code, response.json(), text))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [text for status, _, text in results if status == 200]
    losses = [b for status, b, _ in results if status != 200]
    assert len(wins) == 1 and len(losses) == n - 1
    assert all(
        b["error"]["code"] == "REVISION_CONFLICT" and b["error"]["details"]["current_revision"] == 2
        for b in losses
    )
    record = Record.objects.get(record_id=rid)
    assert record.revision == 2 and record.content == {"text": wins[0]}
    assert RecordRevision.objects.filter(record=record).count() == 2


# ---- memory.records.list ------------------------------------------------------------------------
# memory.records.list (docs/protocol.md#selection, #cursors, #cognition-filter): newest first, total_authorized over the whole
# filtered authorized set, selection × provenance × kinds × cognition, keyset cursors bound to the
# caller, the request, the subject (or space) revision and the grant state.


def ids(answer) -> list[str]:
    assert answer.status == 200, answer.body
    return [r["record_id"] for r in answer.body["records"]]


def test_newest_first_ties_by_record_id_desc(world):
    first = world.record_id(text="first")
    [cid] = world.candidate_ids(texts=["a and b"])
    refs = world.review(
        None,
        cid,
        {
            "action": "fragment",
            "fragments": [{"content": {"text": "a"}}, {"content": {"text": "b"}}],
        },
    ).receipt["refs"]
    frag = [r["id"] for r in refs[1:]]
    last = world.record_id(text="last")
    assert ids(world.list_records(subject_id="u1")) == [last, frag[1], frag[0], first]


def test_total_authorized_counts_the_whole_filtered_set_across_pages(world):
    made = [world.record_id(text=f"r{i}", kind="fact" if i % 2 else "plan") for i in range(7)]
    seen, cursor = [], None
    req = {"subject_id": "u1", "kinds": ["fact"], "page_size": 2}
    while True:
        page = world.list_records(**req, **({"cursor": cursor} if cursor else {}))
        assert page.body["total_authorized"] == 3
        seen += ids(page)
        cursor = page.body["next_cursor"]
        if cursor is None:
            break
    assert seen == [made[5], made[3], made[1]]


def test_tombstoned_only_on_request(world, api, admin):
    keep = world.record_id()
    gone = world.record_id()
    api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": gone, "expected_revision": 1},
    )
    assert ids(world.list_records()) == [keep]
    both = world.list_records(include_tombstoned=True)
    assert ids(both) == [gone, keep] and both.body["total_authorized"] == 2
    assert (
        both.body["records"][0]["content"] == {"text": ""}
        and "tombstone" in both.body["records"][0]
    )


@pytest.fixture
def spread(world, api, grant_to):
    """Four records: authored in c1 (admin), authored shared (writer), captured in c2 from
    context chat (capturer), captured shared from context web (admin)."""
    writer, _ = grant_to(capabilities=["records_write"], shared_access=True)
    capturer, _ = grant_to(capabilities=["capture"], shared_access=True)
    r = {
        "c1_authored": world.record_id(placement=C1, kind="fact"),
        "shared_authored": world.record_id(writer, placement=SHARED, kind="plan"),
    }
    [a] = world.candidate_ids(capturer, placement=C2, scope_extra={"source_context_id": "chat"})
    [b] = world.candidate_ids(placement=SHARED, scope_extra={"source_context_id": "web"})
    r["c2_captured"] = world.review(None, a, {"action": "promote", "kind": "fact"}).receipt["refs"][
        1
    ]["id"]
    r["shared_captured"] = world.review(None, b, {"action": "promote", "kind": "event"}).receipt[
        "refs"
    ][1]["id"]
    r["writer"], r["capturer"] = writer.id, capturer.id
    return r


@pytest.mark.parametrize(
    "selection, provenance, kinds, expected",
    [
        (None, None, None, {"c1_authored", "shared_authored", "c2_captured", "shared_captured"}),
        ({"mode": "shared"}, None, None, {"shared_authored", "shared_captured"}),
        ({"mode": "contexts", "context_ids": ["c1"]}, None, None, {"c1_authored"}),
        (
            {"mode": "contexts_and_shared", "context_ids": ["c2"]},
            None,
            None,
            {"shared_authored", "c2_captured", "shared_captured"},
        ),
        (None, {"sources": ["capture"]}, None, {"c2_captured", "shared_captured"}),
        ({"mode": "shared"}, {"sources": ["authored"]}, None, {"shared_authored"}),
        (None, {"source_context_ids": ["chat"]}, None, {"c2_captured"}),
        ({"mode": "shared"}, {"source_context_ids": ["chat"]}, None, set()),
        (None, {"principal_ids": ["writer"]}, None, {"shared_authored"}),
        (None, {"principal_ids": ["capturer"], "sources": ["capture"]}, None, {"c2_captured"}),
        (None, {"principal_ids": ["capturer"], "sources": ["authored"]}, None, set()),
        (
            {"mode": "contexts_and_shared", "context_ids": ["c1", "c2"]},
            {"sources": ["capture", "authored"]},
            ["fact"],
            {"c1_authored", "c2_captured"},
        ),
        ({"mode": "all"}, {"sources": ["import"]}, None, set()),
    ],
)
def test_selection_provenance_and_kinds_combine_by_and(
    world, spread, selection, provenance, kinds, expected
):
    body = {}
    if selection:
        body["selection"] = selection
    if provenance:
        provenance = {
            k: [spread.get(x, x) for x in v] if k == "principal_ids" else v
            for k, v in provenance.items()
        }
        body["provenance_filter"] = provenance
    if kinds:
        body["kinds"] = kinds
    answer = world.list_records(**body)
    assert set(ids(answer)) == {spread[k] for k in expected}
    assert answer.body["total_authorized"] == len(expected)


def test_selection_narrows_grants_and_never_widens_them(world, spread, grant_to):
    who, _ = grant_to(capabilities=["records_read"], context_ids=["c1"])
    assert set(ids(world.list_records(who))) == {spread["c1_authored"]}
    assert ids(world.list_records(who, selection={"mode": "contexts", "context_ids": ["c2"]})) == []
    assert ids(world.list_records(who, selection={"mode": "shared"})) == []
    assert world.list_records(who).body["total_authorized"] == 1


@pytest.mark.parametrize(
    "selection, status, code",
    [
        ({"mode": "contexts"}, 422, "INVALID_INPUT"),
        ({"mode": "contexts_and_shared"}, 422, "INVALID_INPUT"),
        ({"mode": "all", "context_ids": ["c1"]}, 422, "INVALID_INPUT"),
        ({"mode": "shared", "context_ids": ["c1"]}, 422, "INVALID_INPUT"),
        # docs/protocol.md#selection: an empty context_ids is a bad selection, not a schema error (issue 13)
        ({"mode": "contexts", "context_ids": []}, 422, "INVALID_INPUT"),
        ({"mode": "contexts_and_shared", "context_ids": []}, 422, "INVALID_INPUT"),
        ({"mode": "all", "context_ids": []}, 422, "INVALID_INPUT"),
    ],
)
def test_bad_selection(world, selection, status, code):
    answer = world.list_records(selection=selection)
    assert (answer.status, answer.code) == (status, code)
    if status == 422:
        assert answer.error["details"] == {"reason": "selection", "field": "selection.context_ids"}


def test_list_without_records_read_is_permission_denied(world, grant_to):
    who, _ = grant_to(capabilities=["capture", "records_write"], subject_ids=["u1"])
    for body in ({"subject_id": "u1"}, {}):
        answer = world.list_records(who, **body)
        assert (answer.code, answer.error["details"]) == (
            "PERMISSION_DENIED",
            {"capability": "records_read"},
        )
    elsewhere, _ = grant_to(capabilities=["records_read"], subject_ids=["u2"])
    assert world.list_records(elsewhere).body["records"] == []


def test_subject_not_visible_is_not_found(world, grant_to):
    who, _ = grant_to(capabilities=["records_read"], subject_ids=["u2"])
    assert world.list_records(who, subject_id="u1").code == "NOT_FOUND"
    assert world.list_records(subject_id="never").error["details"] == {"resource": "subject"}


def test_cognition_filter_matches_one_entry_on_all_requirements(world, api, admin):
    session = api.connect(admin)
    goal = world.record_id(
        content={"text": "g", "cognition": [cognition_entry(type="goal", confidence=0.9)]}
    )
    split = world.record_id(
        content={
            "text": "s",
            "cognition": [
                cognition_entry(type="goal", confidence=0.1),
                cognition_entry(type="belief", confidence=0.9),
            ],
        }
    )
    world.record_id(content={"text": "none"})
    world.record_id(content={"text": "empty", "cognition": []})
    flt = {
        "require": [
            {"dimension": "type", "op": "eq", "value": "goal"},
            {"dimension": "confidence", "op": "gte", "value": 0.5},
        ]
    }
    answer = world.list_records(session=session, cognition_filter=flt)
    assert ids(answer) == [goal] and answer.body["total_authorized"] == 1
    either = {"require": [{"dimension": "type", "op": "in", "value": ["goal", "belief"]}]}
    page = world.list_records(session=session, cognition_filter=either, page_size=1)
    assert ids(page) == [split] and page.body["total_authorized"] == 2
    rest = world.list_records(
        session=session, cognition_filter=either, page_size=1, cursor=page.body["next_cursor"]
    )
    assert ids(rest) == [goal] and rest.body["next_cursor"] is None
    # the filter binds the cursor
    other = world.list_records(
        session=session, cognition_filter=flt, page_size=1, cursor=page.body["next_cursor"]
    )
    assert other.code == "CURSOR_INVALID"


def test_cognition_filter_needs_the_capability(world):
    flt = {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]}
    assert world.list_records(cognition_filter=flt).code == "capability_missing"


@pytest.fixture
def paged(world):
    for i in range(3):
        world.record_id(text=f"r{i}")
    first = world.list_records(subject_id="u1", page_size=1)
    return first.body["next_cursor"]


def test_cursor_survives_an_unrelated_read(world, paged):
    world.list_records(subject_id="u1")
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).status == 200
    assert (
        world.list_records(subject_id="u1", page_size=2, cursor=paged).status == 200
    )  # page_size is free


def test_cursor_invalid_after_a_write_to_the_subject(world, paged):
    world.record_id(subject="u2")  # another subject: the subject-bound cursor holds
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).status == 200
    world.record_id()
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).code == "CURSOR_INVALID"


def test_space_wide_cursor_is_bound_to_the_space_revision(world):
    for i in range(3):
        world.record_id(text=f"r{i}")
    cursor = world.list_records(page_size=1).body["next_cursor"]
    world.record_id(subject="u2")
    assert world.list_records(page_size=1, cursor=cursor).code == "CURSOR_INVALID"


def test_cursor_invalid_after_a_grant_change(world, api, admin, grant_to):
    who, grant_id = grant_to(capabilities=["records_read"])
    for i in range(3):
        world.record_id(text=f"r{i}")
    cursor = world.list_records(who, subject_id="u1", page_size=1).body["next_cursor"]
    assert world.list_records(who, subject_id="u1", page_size=1, cursor=cursor).status == 200
    grant_to(who, capabilities=["recall"])
    assert (
        world.list_records(who, subject_id="u1", page_size=1, cursor=cursor).code
        == "CURSOR_INVALID"
    )


def test_cursor_tampered_foreign_or_for_another_request(world, paged, grant_to):
    assert (
        world.list_records(subject_id="u1", page_size=1, cursor=paged[:-3] + "abc").code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", page_size=1, cursor="not-a-cursor").code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", kinds=["fact"], page_size=1, cursor=paged).code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", include_tombstoned=True, cursor=paged).code
        == "CURSOR_INVALID"
    )
    other, _ = grant_to(capabilities=["records_read"])
    assert (
        world.list_records(other, subject_id="u1", page_size=1, cursor=paged).code
        == "CURSOR_INVALID"
    )


def test_a_later_page_costs_the_same_queries_as_the_first(world):
    for i in range(12):
        world.record_id(text=f"r{i}")
    with CaptureQueriesContext(connection) as page_one:
        first = world.list_records(subject_id="u1", page_size=3)
    cursor = first.body["next_cursor"]
    for _ in range(2):
        cursor = world.list_records(subject_id="u1", page_size=3, cursor=cursor).body["next_cursor"]
    with CaptureQueriesContext(connection) as page_four:
        last = world.list_records(subject_id="u1", page_size=3, cursor=cursor)
    assert len(ids(last)) == 3 and last.body["next_cursor"] is None
    assert len(page_four.captured_queries) == len(page_one.captured_queries)


def test_an_integral_float_page_size_pages_like_the_integer(world):
    """JSON has one number type and the schema's "integer" admits 2.0: it once crashed the slice
    (500). Found by tests/hostile/test_record_model.py."""
    made = [world.record_id(text=f"r{i}") for i in range(3)]
    first = world.list_records(subject_id="u1", page_size=2.0)
    assert first.status == 200, first.body
    assert ids(first) == made[:0:-1] and first.body["next_cursor"] is not None
    rest = world.list_records(subject_id="u1", page_size=2.0, cursor=first.body["next_cursor"])
    assert ids(rest) == [made[0]] and rest.body["next_cursor"] is None


@pytest.mark.parametrize(
    "op, extra",
    [
        ("memory.candidates.list", {}),
        ("memory.grants.list", {"view": "admin"}),
        ("memory.reflections.list", {"subject_id": "u1"}),
    ],
)
def test_every_list_takes_an_integral_float_page_size(world, api, admin, op, extra):
    body = {"space_id": "s1", "page_size": 1.0, **extra}
    answer = api(admin, op, body, session=api.connect(admin))
    assert answer.status == 200, answer.body
    assert len(next(v for v in answer.body.values() if isinstance(v, list))) <= 1
