"""memory.candidates.list/.get/.dismiss/.review (docs/protocol.md#ops "Review decision", §2.6, §2.7): coverage
of the capture scope, the kind rule, inherited placement, capture provenance, atomic consumption
(and the race on PostgreSQL), content rules on overrides and fragments."""

import json
import threading

import pytest
from django.db import connections

from memory.models import Candidate, Receipt, Record
from memory.services import derived
from tests.conftest import make_persona, make_space, requires_postgres
from tests.memory.ops.capture_world import C1, C2, SHARED, cognition_entry, state, world_fixture  # noqa: F401
from tests.memory.ops.state_gates import STATE_GATES

pytestmark = pytest.mark.django_db


def body(cid, **extra):
    return {"space_id": "s1", "candidate_id": cid, **extra}


# ---- get / list -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grant, visible",
    [
        ({"capabilities": ["candidates_read"]}, True),
        ({"capabilities": ["review"], "context_ids": ["c1"]}, True),
        ({"capabilities": ["records_read", "capture"]}, False),
        ({"capabilities": ["candidates_read"], "context_ids": ["c2"]}, False),
        ({"capabilities": ["candidates_read"], "subject_ids": ["u2"]}, False),
    ],
)
def test_candidate_get_coverage(world, api, grant_to, grant, visible):
    [cid] = world.candidate_ids()
    who, _ = grant_to(**grant)
    answer = api(who, "memory.candidates.get", body(cid))
    if visible:
        assert answer.body["candidate"]["candidate_id"] == cid
    else:
        assert (answer.status, answer.code, answer.error["details"]) == (
            404,
            "NOT_FOUND",
            {"resource": "candidate"},
        )


def test_candidate_get_absent_and_shared_access(world, api, grant_to):
    [shared] = world.candidate_ids(placement=SHARED)
    assert api(world.admin, "memory.candidates.get", body("cnd_nope")).code == "NOT_FOUND"
    no_shared, _ = grant_to(capabilities=["candidates_read"])
    with_shared, _ = grant_to(
        capabilities=["candidates_read"], shared_access=True, context_ids=["zz"]
    )
    assert api(no_shared, "memory.candidates.get", body(shared)).code == "NOT_FOUND"
    assert api(with_shared, "memory.candidates.get", body(shared)).status == 200


def test_list_is_oldest_first_pending_by_default_and_counts_the_authorized_set(
    world, api, grant_to
):
    a = world.candidate_ids(texts=["one", "two"], placement=C1)
    b = world.candidate_ids(texts=["three"], placement=C2)
    c = world.candidate_ids(texts=["four"], placement=SHARED, subject="u2")
    world.api(world.admin, "memory.candidates.dismiss", body(a[1]))
    listed = api(world.admin, "memory.candidates.list", {"space_id": "s1"}).body
    assert [x["candidate_id"] for x in listed["candidates"]] == [a[0], *b, *c]
    assert listed["total_authorized"] == 3 and listed["next_cursor"] is None
    every = api(
        world.admin,
        "memory.candidates.list",
        {"space_id": "s1", "states": ["pending", "dismissed"]},
    ).body
    assert [x["candidate_id"] for x in every["candidates"]] == [*a, *b, *c]
    dismissed = api(
        world.admin, "memory.candidates.list", {"space_id": "s1", "states": ["dismissed"]}
    ).body
    assert [x["candidate_id"] for x in dismissed["candidates"]] == [a[1]]
    narrow, _ = grant_to(capabilities=["candidates_read"], context_ids=["c1"])
    theirs = api(narrow, "memory.candidates.list", {"space_id": "s1"}).body
    assert [x["candidate_id"] for x in theirs["candidates"]] == [a[0]] and theirs[
        "total_authorized"
    ] == 1
    u2 = api(world.admin, "memory.candidates.list", {"space_id": "s1", "subject_id": "u2"}).body
    assert [x["candidate_id"] for x in u2["candidates"]] == c


def test_list_pages_with_cursors_and_cursor_invalidation(world, api, admin, grant_to):
    ids = world.candidate_ids(texts=[f"item {i}" for i in range(5)])
    req = {"space_id": "s1", "subject_id": "u1", "page_size": 2}
    seen, cursor = [], None
    while True:
        page = api(
            admin, "memory.candidates.list", {**req, **({"cursor": cursor} if cursor else {})}
        ).body
        assert page["total_authorized"] == 5
        seen += [c["candidate_id"] for c in page["candidates"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids
    first = api(admin, "memory.candidates.list", req).body["next_cursor"]
    assert (
        api(admin, "memory.candidates.list", {**req, "cursor": first[:-2] + "xx"}).code
        == "CURSOR_INVALID"
    )
    assert (
        api(
            admin,
            "memory.candidates.list",
            {**req, "states": ["pending", "dropped"], "cursor": first},
        ).code
        == "CURSOR_INVALID"
    )
    # a capture into another subject moves the space, not u1: the subject-bound cursor holds
    world.capture(subject="u2")
    assert api(admin, "memory.candidates.list", {**req, "cursor": first}).status == 200
    world.capture()
    assert api(admin, "memory.candidates.list", {**req, "cursor": first}).code == "CURSOR_INVALID"


def test_list_of_an_invisible_subject_is_not_found(world, api, grant_to):
    who, _ = grant_to(capabilities=["candidates_read"], subject_ids=["u2"])
    assert (
        api(who, "memory.candidates.list", {"space_id": "s1", "subject_id": "u1"}).code
        == "NOT_FOUND"
    )


def test_list_without_a_read_capability_is_permission_denied(world, api, grant_to):
    who, _ = grant_to(capabilities=["capture"], subject_ids=["u1"])
    for body in ({"space_id": "s1", "subject_id": "u1"}, {"space_id": "s1"}):
        answer = api(who, "memory.candidates.list", body)
        assert (answer.code, answer.error["details"]) == (
            "PERMISSION_DENIED",
            {"capability": "candidates_read"},
        )
    reader, _ = grant_to(capabilities=["review"], subject_ids=["u2"])
    assert api(reader, "memory.candidates.list", {"space_id": "s1"}).body["candidates"] == []


def listed(api, who, **req):
    answer = api(who, "memory.candidates.list", {"space_id": "s1", **req})
    assert answer.status == 200, answer.body
    return [c["candidate_id"] for c in answer.body["candidates"]], answer.body


def test_list_selection_applies_to_the_capture_placement_and_counts_the_filtered_set(
    world, api, admin, grant_to
):
    c1 = world.candidate_ids(texts=["a", "b"], placement=C1)
    c2 = world.candidate_ids(texts=["c"], placement=C2)
    shared = world.candidate_ids(texts=["d"], placement=SHARED, subject="u2")
    for selection, expected in [
        ({"mode": "all"}, c1 + c2 + shared),
        ({"mode": "contexts", "context_ids": ["c1"]}, c1),
        ({"mode": "contexts", "context_ids": ["c2", "c1"]}, c1 + c2),
        ({"mode": "shared"}, shared),
        ({"mode": "contexts_and_shared", "context_ids": ["c2"]}, c2 + shared),
        ({"mode": "contexts", "context_ids": ["nowhere"]}, []),
    ]:
        got, page = listed(api, admin, selection=selection, page_size=1)
        assert page["total_authorized"] == len(expected)
        assert got == expected[:1]
    # a selection narrows the grants and never widens them
    narrow, _ = grant_to(capabilities=["candidates_read"], context_ids=["c1"])
    assert listed(api, narrow, selection={"mode": "contexts", "context_ids": ["c2"]})[0] == []
    assert listed(api, narrow, selection={"mode": "shared"})[1]["total_authorized"] == 0
    assert listed(api, narrow, selection={"mode": "all"})[0] == c1


def test_list_labels_filter_the_classification_label(world, api, admin):
    texts = ["I prefer tea over coffee.", "Ada works at Acme.", "lol ok", "Bob works at Initech."]
    ids = world.candidate_ids(texts=texts)
    labels = {
        c["candidate_id"]: c["classification"]["label"]
        for c in api(admin, "memory.candidates.list", {"space_id": "s1"}).body["candidates"]
    }
    assert [labels[i] for i in ids] == ["preference", "fact", "noise", "fact"]
    got, page = listed(api, admin, labels=["fact"])
    assert got == [ids[1], ids[3]] and page["total_authorized"] == 2
    got, page = listed(api, admin, labels=["noise", "preference"], subject_id="u1")
    assert got == [ids[0], ids[2]] and page["total_authorized"] == 2
    assert listed(api, admin, labels=["plan"])[1]["total_authorized"] == 0
    both = listed(api, admin, labels=["fact"], selection={"mode": "shared"})[1]
    assert both["total_authorized"] == 0  # world.candidate_ids captures into c1


def test_list_order_newest_pages_backwards_with_its_own_cursor(world, api, admin):
    ids = world.candidate_ids(texts=[f"item {i}" for i in range(3)])
    ids += world.candidate_ids(texts=[f"later {i}" for i in range(2)])
    assert listed(api, admin)[0] == ids
    assert listed(api, admin, order="oldest")[0] == ids
    seen, cursor = [], None
    while True:
        got, page = listed(
            api, admin, order="newest", page_size=2, **({"cursor": cursor} if cursor else {})
        )
        assert page["total_authorized"] == 5
        seen += got
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]


def test_list_cursor_is_bound_to_selection_labels_and_order(world, api, admin):
    world.candidate_ids(
        texts=["Ada works at Acme.", "Bob works at Initech.", "Cy works at Globex."]
    )
    req = {"labels": ["fact"], "selection": {"mode": "contexts", "context_ids": ["c1"]}}
    _, page = listed(api, admin, page_size=1, **req)
    cursor = page["next_cursor"]
    assert listed(api, admin, page_size=1, cursor=cursor, **req)[1]["total_authorized"] == 3
    for changed in (
        {**req, "labels": ["fact", "plan"]},
        {**req, "selection": {"mode": "all"}},
        {k: v for k, v in req.items() if k != "labels"},
        {**req, "order": "newest"},
    ):
        answer = api(
            admin,
            "memory.candidates.list",
            {"space_id": "s1", "page_size": 1, "cursor": cursor, **changed},
        )
        assert answer.code == "CURSOR_INVALID"


@pytest.mark.parametrize(
    "extra, status, code, details",
    [
        ({"selection": {"mode": "contexts"}}, 422, "INVALID_INPUT", "selection"),
        ({"selection": {"mode": "contexts_and_shared"}}, 422, "INVALID_INPUT", "selection"),
        (
            {"selection": {"mode": "shared", "context_ids": ["c1"]}},
            422,
            "INVALID_INPUT",
            "selection",
        ),
        ({"selection": {"mode": "contexts", "context_ids": []}}, 422, "INVALID_INPUT", "selection"),
        ({"selection": {"mode": "nearby"}}, 400, "invalid_input", None),
        ({"labels": []}, 400, "invalid_input", None),
        ({"labels": ["Fact!"]}, 400, "invalid_input", None),
        ({"labels": ["fact", "fact"]}, 400, "invalid_input", None),
        ({"order": "random"}, 400, "invalid_input", None),
    ],
)
def test_list_bad_filters_are_refused(world, api, admin, extra, status, code, details):
    world.candidate_ids()
    answer = api(admin, "memory.candidates.list", {"space_id": "s1", **extra})
    assert (answer.status, answer.code) == (status, code)
    if details:
        assert answer.error["details"] == {"reason": "selection", "field": "selection.context_ids"}


# ---- dismiss ----------------------------------------------------------------------------------


def test_dismiss_consumes_without_a_record(world, api, grant_to):
    [cid] = world.candidate_ids()
    who, _ = grant_to(capabilities=["review"], context_ids=["c1"])
    answer = api(who, "memory.candidates.dismiss", body(cid, reason="duplicate"))
    assert answer.receipt["refs"] == [{"type": "candidate", "id": cid, "revision": 2}]
    got = world.candidate(cid)
    assert (
        got["state"] == "dismissed"
        and got["consumed_by_principal_id"] == who.id
        and "consumed_at" in got
    )
    assert got["outcome"] == {"action": "dismiss", "record_ids": [], "reason": "duplicate"}
    assert got["capture_scope"] == {"placement": C1}
    assert Record.objects.count() == 0
    again = api(who, "memory.candidates.dismiss", body(cid))
    assert (again.status, again.code) == (409, "CANDIDATE_CONSUMED")


@pytest.mark.parametrize(
    "grant, code",
    [
        ({"capabilities": ["candidates_read"]}, "PERMISSION_DENIED"),
        ({"capabilities": ["review"], "context_ids": ["c2"]}, "NOT_FOUND"),
        ({"capabilities": ["candidates_read", "review"], "context_ids": ["c2"]}, "NOT_FOUND"),
    ],
)
def test_dismiss_coverage(world, api, grant_to, grant, code):
    [cid] = world.candidate_ids()
    who, _ = grant_to(**grant)
    before = state()
    assert api(who, "memory.candidates.dismiss", body(cid, idempotency_key="d")).code == code
    assert state() == before


@pytest.mark.parametrize(
    "setup, code",
    STATE_GATES,
)
def test_dismiss_state_gates(world, api, admin, setup, code):
    [cid] = world.candidate_ids()
    assert api(admin, setup["op"], {"space_id": "s1", **setup["body"]}).status == 200
    before = state()
    assert api(admin, "memory.candidates.dismiss", body(cid)).code == code
    assert state() == before and world.candidate(cid)["state"] == "pending"


# ---- review -----------------------------------------------------------------------------------


def test_promote_makes_one_record_with_the_capture_scope_and_capture_provenance(
    world, api, admin, grant_to
):
    capturer, _ = grant_to(capabilities=["capture"])
    [cid] = world.candidate_ids(
        capturer,
        texts=[{"content": {"text": "Ada prefers tea.", "cognition": []}}],
        placement=C2,
        scope_extra={"source_context_id": "chat-9"},
    )
    reviewer, _ = grant_to(
        capabilities=["review", "records_write", "records_read"], context_ids=["c2"]
    )
    answer = world.review(reviewer, cid, {"action": "promote"})
    assert answer.status == 200, answer.body
    refs = answer.receipt["refs"]
    assert refs[0] == {"type": "candidate", "id": cid, "revision": 2}
    assert [r["type"] for r in refs] == ["candidate", "record"] and refs[1]["revision"] == 1
    record = world.record(refs[1]["id"])
    assert record["placement"] == C2 and record["kind"] == "preference"  # the classification label
    assert record["content"] == {"text": "Ada prefers tea.", "cognition": []}
    prov = record["provenance"]
    assert (
        prov["source"] == "capture"
        and prov["candidate_id"] == cid
        and prov["source_context_id"] == "chat-9"
    )
    assert (
        prov["author_principal_id"] == capturer.id and prov["reviewer_principal_id"] == reviewer.id
    )
    assert prov["captured_at"] == world.candidate(cid)["captured_at"]
    got = world.candidate(cid)
    assert got["state"] == "promoted" and got["outcome"] == {
        "action": "promote",
        "record_ids": [refs[1]["id"]],
    }
    assert got["consumed_by_principal_id"] == reviewer.id


@pytest.mark.parametrize(
    "item, decision, kind",
    [
        (
            {"content": {"text": "Ada prefers tea."}, "kind_hint": "fact"},
            {"action": "promote", "kind": "event"},
            "event",
        ),
        (
            {"content": {"text": "Ada prefers tea."}, "kind_hint": "fact"},
            {"action": "promote"},
            "fact",
        ),
        ({"content": {"text": "Ada prefers tea."}}, {"action": "promote"}, "preference"),
        ({"content": {"text": "hm"}}, {"action": "promote"}, "note"),  # label noise
        (
            {"content": {"text": "x y", "cognition": [cognition_entry()]}},
            {"action": "promote"},
            "note",
        ),  # cognition
    ],
)
def test_review_kind_rule(world, item, decision, kind):
    [cid] = world.candidate_ids(texts=[item])
    rid = world.review(None, cid, decision).receipt["refs"][1]["id"]
    assert world.record(rid)["kind"] == kind


def test_promote_with_content_override(world):
    [cid] = world.candidate_ids(texts=["raw words from chat"])
    override = {"text": "Ada prefers green tea.", "structured": {"drink": "tea"}}
    rid = world.review(None, cid, {"action": "promote", "content_override": override}).receipt[
        "refs"
    ][1]["id"]
    assert world.record(rid)["content"] == override
    assert world.candidate(cid)["proposed"]["content"] == {"text": "raw words from chat"}


def test_fragment_makes_n_records_in_order_with_own_kinds(world):
    [cid] = world.candidate_ids(texts=["Ada likes tea and moved to Porto."], placement=SHARED)
    fragments = [
        {"content": {"text": "Ada likes tea."}, "kind": "preference"},
        {"content": {"text": "Ada moved to Porto."}},
    ]
    refs = world.review(None, cid, {"action": "fragment", "fragments": fragments}).receipt["refs"]
    ids = [r["id"] for r in refs[1:]]
    assert len(ids) == 2
    records = [world.record(i) for i in ids]
    assert [r["content"]["text"] for r in records] == ["Ada likes tea.", "Ada moved to Porto."]
    assert (
        records[0]["kind"] == "preference" and records[1]["kind"] == "preference"
    )  # label of the candidate
    assert all(r["placement"] == SHARED for r in records)
    assert world.candidate(cid)["outcome"] == {"action": "fragment", "record_ids": ids}
    assert world.candidate(cid)["state"] == "fragmented"


def test_drop_consumes_and_keeps_the_reason(world):
    [cid] = world.candidate_ids()
    answer = world.review(None, cid, {"action": "drop", "reason": "not useful"})
    assert answer.receipt["refs"] == [{"type": "candidate", "id": cid, "revision": 2}]
    assert world.candidate(cid)["outcome"] == {
        "action": "drop",
        "record_ids": [],
        "reason": "not useful",
    }
    assert world.candidate(cid)["state"] == "dropped" and Record.objects.count() == 0


@pytest.mark.parametrize(
    "decision, status, code",
    [
        ({"action": "fragment", "fragments": []}, 400, "invalid_input"),
        ({"action": "fragment"}, 400, "invalid_input"),
        ({"action": "promote", "fragments": [{"content": {"text": "a"}}]}, 400, "invalid_input"),
        ({"action": "explode"}, 400, "invalid_input"),
        (
            {
                "action": "promote",
                "content_override": {"text": "x", "cognition": [{"view": "valid_time"}]},
            },
            422,
            "INVALID_INPUT",
        ),
        (
            {"action": "promote", "content_override": {"text": "x" * 65_600}},
            413,
            "CONTENT_TOO_LARGE",
        ),
        (
            {
                "action": "fragment",
                "fragments": [
                    {"content": {"text": "fine"}},
                    {"content": {"text": "bad", "cognition": [cognition_entry(), 3]}},
                ],
            },
            422,
            "INVALID_INPUT",
        ),
    ],
)
def test_bad_decisions_change_nothing(world, decision, status, code):
    [cid] = world.candidate_ids()
    before = state()
    answer = world.review(None, cid, decision, idempotency_key="r-bad")
    assert (answer.status, answer.code) == (status, code), answer.body
    assert state() == before
    assert world.candidate(cid)["state"] == "pending"


def test_bad_fragment_names_its_index(world):
    [cid] = world.candidate_ids()
    decision = {
        "action": "fragment",
        "fragments": [
            {"content": {"text": "fine"}},
            {"content": {"text": "bad", "cognition": [cognition_entry(), 3]}},
        ],
    }
    details = world.review(None, cid, decision).error["details"]
    assert details == {
        "reason": "invalid_cognition_record",
        "field": "content.cognition",
        "index": 1,
        "fragment_index": 1,
    }


@pytest.mark.parametrize(
    "grant, code, capability",
    [
        ({"capabilities": ["review"]}, "PERMISSION_DENIED", "records_write"),
        ({"capabilities": ["records_write", "candidates_read"]}, "PERMISSION_DENIED", "review"),
        ({"capabilities": ["review", "records_write"], "context_ids": ["c2"]}, "NOT_FOUND", None),
        (
            {
                "capabilities": ["review", "candidates_read"],
                "context_ids": ["c1"],
                "subject_ids": ["u1"],
            },
            "PERMISSION_DENIED",
            "records_write",
        ),
    ],
)
def test_review_needs_review_and_records_write_covering_the_capture_scope(
    world, grant_to, grant, code, capability
):
    [cid] = world.candidate_ids()
    who, _ = grant_to(**grant)
    before = state()
    answer = world.review(who, cid, {"action": "promote"})
    assert answer.code == code
    if capability:
        assert answer.error["details"]["capability"] == capability
    assert state() == before


def test_review_with_two_grants_each_covering(world, grant_to):
    [cid] = world.candidate_ids(placement=SHARED)
    who, _ = grant_to(capabilities=["review"], shared_access=True)
    grant_to(who, capabilities=["records_write"], shared_access=True, subject_ids=["u1"])
    assert world.review(who, cid, {"action": "promote"}).status == 200


def test_records_write_on_another_context_does_not_cover_the_capture_scope(world, grant_to):
    [cid] = world.candidate_ids(placement=C1)
    who, _ = grant_to(capabilities=["review"], context_ids=["c1"])
    grant_to(who, capabilities=["records_write"], context_ids=["c2"])
    assert world.review(who, cid, {"action": "promote"}).code == "PERMISSION_DENIED"


def test_second_review_is_candidate_consumed(world):
    [cid] = world.candidate_ids()
    assert world.review(None, cid, {"action": "promote"}).status == 200
    before = state()
    again = world.review(None, cid, {"action": "drop"})
    assert (again.status, again.code) == (409, "CANDIDATE_CONSUMED")
    assert state() == before


@pytest.mark.parametrize(
    "setup, code",
    STATE_GATES,
)
def test_review_state_gates(world, admin, setup, code):
    [cid] = world.candidate_ids()
    assert world.api(admin, setup["op"], {"space_id": "s1", **setup["body"]}).status == 200
    before = state()
    assert world.review(None, cid, {"action": "promote"}).code == code
    assert state() == before


def test_state_gate_comes_before_candidate_consumed(world, admin):
    [cid] = world.candidate_ids()
    world.review(None, cid, {"action": "drop"})
    world.api(admin, "memory.spaces.freeze", {"space_id": "s1"})
    assert world.review(None, cid, {"action": "drop"}).code == "SPACE_FROZEN"


def test_failure_mid_review_leaves_the_candidate_pending_and_no_record(world, monkeypatch):
    [cid] = world.candidate_ids()
    before = state()

    def broken_index(records):
        assert Record.objects.filter(
            record_id__in=[r.record_id for r in records]
        ).exists()  # really mid-way
        raise RuntimeError("derived index unavailable")

    monkeypatch.setattr(derived, "WRITERS", [broken_index])
    answer = world.review(
        None, cid, {"action": "fragment", "fragments": [{"content": {"text": "a"}}]}
    )
    assert answer.status == 500 and answer.code == "internal_error"
    assert state() == before and Candidate.objects.get(candidate_id=cid).state == "pending"


def test_review_receipt_carries_no_content(world):
    secret = "override-secret-text-0042"
    [cid] = world.candidate_ids(texts=["captured-secret-0041"])
    receipt = world.review(
        None, cid, {"action": "promote", "content_override": {"text": secret}}
    ).receipt
    dumped = json.dumps(receipt)
    assert secret not in dumped and "captured-secret-0041" not in dumped


def test_pending_candidate_confers_no_authority(world, api, grant_to):
    capturer, _ = grant_to(capabilities=["capture", "candidates_read"])
    world.candidate_ids(capturer)
    listed = api(capturer, "memory.records.list", {"space_id": "s1"})
    assert (listed.code, listed.error["details"]) == (
        "PERMISSION_DENIED",
        {"capability": "records_read"},
    )
    assert world.list_records().body["records"] == []


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_racing_reviews_one_wins_the_other_is_consumed():
    from django.test import Client

    from memory.models import Space, Subject
    from memory.ops.base import call
    from memory.services.operators import issue_root_grant

    make_space("s1")
    admin = make_persona("racer")
    issue_root_grant(Space.objects.get(pk="s1"), admin.principal)
    call(admin.principal, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    receipt = call(
        admin.principal,
        "memory.capture",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "capture_scope": {"placement": C1},
            "items": [{"content": {"text": "race me"}}],
        },
    )
    cid = receipt["receipt"]["refs"][0]["id"]
    decisions = [
        {"action": "promote"},
        {
            "action": "fragment",
            "fragments": [{"content": {"text": "a"}}, {"content": {"text": "b"}}],
        },
        {"action": "drop"},
    ] * 2
    results: list[tuple[int, dict]] = []
    barrier = threading.Barrier(len(decisions))

    def worker(decision):
        try:
            barrier.wait()
            response = Client().post(
                "/v1/ops/memory.candidates.review",
                data=json.dumps({"space_id": "s1", "candidate_id": cid, "decision": decision}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {admin.token}",
            )
            results.append((response.status_code, response.json()))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(d,)) for d in decisions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [b for s, b in results if s == 200]
    losses = [b for s, b in results if s != 200]
    assert len(wins) == 1 and len(losses) == len(decisions) - 1
    assert {b["error"]["code"] for b in losses} == {"CANDIDATE_CONSUMED"}
    candidate = Candidate.objects.get(candidate_id=cid)
    assert candidate.revision == 2
    made = wins[0]["receipt"]["refs"][1:]
    assert sorted(candidate.outcome["record_ids"]) == sorted(r["id"] for r in made)
    assert Record.objects.count() == len(made)
    assert Receipt.objects.filter(op="memory.candidates.review").count() == 1
    assert Subject.objects.get(subject_id="u1").revision == 3  # capture + one review


def test_a_retried_review_with_its_key_replays_instead_of_consuming_twice(world):
    [cid] = world.candidate_ids()
    first = world.review(None, cid, {"action": "promote"}, idempotency_key="rev-1")
    again = world.review(None, cid, {"action": "promote"}, idempotency_key="rev-1")
    assert again.status == 200 and again.receipt == first.receipt
    assert Record.objects.count() == 1
    other = world.review(None, cid, {"action": "drop"}, idempotency_key="rev-1")
    assert other.code == "IDEMPOTENCY_KEY_REUSED"
