"""Receipts and durable idempotency (docs/protocol.md#receipts, #idempotency), including the concurrent race."""

import json
import threading

import pytest
from django.db import connections

from memory.models import IdempotencyKey, Receipt, Subject
from tests.conftest import make_persona, make_space, requires_postgres

pytestmark = pytest.mark.django_db


def ensure(api, who, key=None, **extra):
    body = {"space_id": "s1", "subject_id": "u1", **extra}
    if key:
        body["idempotency_key"] = key
    return api(who, "memory.subjects.ensure", body)


def test_replay_returns_the_original_receipt_and_executes_once(api, admin, space):
    first = ensure(api, admin, key="k-1", extensions={"acme": {"v": 1}})
    revision = space.__class__.objects.get(pk="s1").revision
    second = ensure(api, admin, key="k-1", extensions={"acme": {"v": 1}})
    assert first.receipt == second.receipt
    assert Receipt.objects.count() == 1
    assert space.__class__.objects.get(pk="s1").revision == revision


def test_same_key_other_payload_is_key_reused(api, admin, space):
    ensure(api, admin, key="k-1")
    other = api(
        admin,
        "memory.subjects.ensure",
        {"space_id": "s1", "subject_id": "u2", "idempotency_key": "k-1"},
    )
    assert (other.status, other.code) == (409, "IDEMPOTENCY_KEY_REUSED")
    assert not Subject.objects.filter(subject_id="u2").exists()


def test_key_scope_is_space_principal_op(api, admin, space, grant_to):
    ensure(api, admin, key="k-1")
    fenced = api(
        admin,
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "idempotency_key": "k-1"},
    )
    assert fenced.status == 200  # another op: another key space
    other, _ = grant_to(capabilities=["subjects_write"])
    theirs = api(
        other,
        "memory.subjects.ensure",
        {"space_id": "s1", "subject_id": "u3", "idempotency_key": "k-1"},
    )
    assert theirs.status == 200  # another principal: another key space


def test_error_consumes_no_key(api, admin, space):
    api(admin, "memory.spaces.freeze", {"space_id": "s1"})
    blocked = ensure(api, admin, key="k-2")
    assert blocked.code == "SPACE_FROZEN"
    assert not IdempotencyKey.objects.filter(key="k-2").exists()
    api(admin, "memory.spaces.unfreeze", {"space_id": "s1"})
    assert ensure(api, admin, key="k-2").status == 200


def test_receipt_fields_and_no_content(api, admin, space):
    secret = "classified-subject-extension-value"
    receipt = ensure(api, admin, key="k-3", extensions={"acme": {"note": secret}}).receipt
    assert receipt["receipt_id"].startswith("rct_")
    assert receipt["op"] == "memory.subjects.ensure" and receipt["status"] == "committed"
    assert receipt["payload_digest"].startswith("sha256:") and len(receipt["payload_digest"]) == 71
    assert receipt["idempotency_key"] == "k-3" and receipt["space_id"] == "s1"
    assert "completed_at" in receipt and receipt["schema_version"] == 1
    assert secret not in json.dumps(receipt)


def test_payload_digest_ignores_the_key_and_member_order(api, admin, space):
    a = api.raw(
        "/v1/ops/memory.subjects.ensure",
        '{"space_id":"s1","subject_id":"u1","idempotency_key":"a"}',
        token=admin.token,
    )
    b = api.raw(
        "/v1/ops/memory.subjects.ensure",
        '{"subject_id":"u1","space_id":"s1","idempotency_key":"b"}',
        token=admin.token,
    )
    assert a.body["receipt"]["payload_digest"] == b.body["receipt"]["payload_digest"]


def test_receipts_get_by_id_and_by_key(api, admin, space, outsider):
    receipt = ensure(api, admin, key="k-4").receipt
    by_id = api(admin, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]})
    by_key = api(
        admin,
        "memory.receipts.get",
        {"space_id": "s1", "op": "memory.subjects.ensure", "idempotency_key": "k-4"},
    )
    assert by_id.body["receipt"] == by_key.body["receipt"] == receipt
    hidden = api(outsider, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]})
    assert hidden.code == "NOT_FOUND"
    missing = api(
        admin,
        "memory.receipts.get",
        {"space_id": "s1", "op": "memory.subjects.ensure", "idempotency_key": "nope"},
    )
    assert missing.code == "NOT_FOUND"


def test_space_admin_sees_receipts_of_others(api, admin, grant_to, space):
    writer, _ = grant_to(capabilities=["subjects_write"])
    receipt = ensure(api, writer).receipt
    assert api(admin, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]}).status == 200
    reader, _ = grant_to(capabilities=["records_read"])
    assert (
        api(reader, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]}).code
        == "NOT_FOUND"
    )


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_racing_requests_with_one_key_execute_once():
    from django.test import Client

    make_space("s1")
    from memory.services.operators import issue_root_grant

    admin = make_persona("racer")
    from memory.models import Space

    issue_root_grant(Space.objects.get(pk="s1"), admin.principal)
    body = json.dumps({"space_id": "s1", "subject_id": "u-race", "idempotency_key": "race-key"})
    results: list[dict] = []
    barrier = threading.Barrier(20)

    def worker():
        try:
            barrier.wait()
            response = Client().post(
                "/v1/ops/memory.subjects.ensure",
                data=body,
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {admin.token}",
            )
            results.append(response.json())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    receipt_ids = {r["receipt"]["receipt_id"] for r in results}
    assert len(results) == 20 and len(receipt_ids) == 1
    assert Receipt.objects.filter(op="memory.subjects.ensure").count() == 1
    assert IdempotencyKey.objects.filter(key="race-key").count() == 1
