"""Space screen: freeze/unfreeze, subject fences and archive, pending receipts."""

import pytest

from memory.models import Receipt, Space, Subject
from memory.timeutil import now
from tests.reviews.conftest import logged_in

pytestmark = pytest.mark.django_db


def test_freeze_with_reason_then_unfreeze(mod):
    response = mod.post(
        "/console/s/s1/space/freeze/", {"reason": "audit", "idempotency_key": "f1"}, follow=True
    )
    space = Space.objects.get(space_id="s1")
    assert space.state == "frozen" and space.freeze_reason == "audit"
    assert b"Space frozen" in response.content and b"audit" in response.content
    again = mod.post("/console/s/s1/space/freeze/", {"idempotency_key": "f2"}, follow=True)
    assert b"SPACE_FROZEN" in again.content
    mod.post("/console/s/s1/space/unfreeze/", {"idempotency_key": "u1"})
    assert Space.objects.get(space_id="s1").state == "active"


def test_double_submitted_freeze_is_one_receipt(mod):
    mod.post("/console/s/s1/space/freeze/", {"idempotency_key": "same"})
    response = mod.post("/console/s/s1/space/freeze/", {"idempotency_key": "same"}, follow=True)
    assert Receipt.objects.filter(op="memory.spaces.freeze").count() == 1
    assert b"SPACE_FROZEN" not in response.content


def test_fence_unfence_and_context_fence(mod, ops):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    page = mod.get("/console/s/s1/space/?subject=u1")
    assert b'id="subject-state">active' in page.content
    mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "fence", "idempotency_key": "a"},
    )
    assert Subject.objects.get(subject_id="u1").state == "fenced"
    mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "unfence", "idempotency_key": "b"},
    )
    mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "fence", "context_id": "c1", "idempotency_key": "c"},
    )
    subject = Subject.objects.get(subject_id="u1")
    assert subject.state == "active" and subject.fenced_context_ids == ["c1"]
    page = mod.get("/console/s/s1/space/?subject=u1")
    assert b'id="fenced-contexts">c1' in page.content


def test_archive_is_terminal(mod, ops):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "archive", "idempotency_key": "a", "confirmed": "1"},
    )
    assert Subject.objects.get(subject_id="u1").state == "archived"
    response = mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "unfence", "idempotency_key": "b"},
        follow=True,
    )
    assert b"SUBJECT_ARCHIVED" in response.content
    assert b'id="fence-form"' not in response.content


def test_unknown_subject_lookup_says_not_found(mod):
    response = mod.get("/console/s/s1/space/?subject=ghost")
    assert response.status_code == 200 and b"NOT_FOUND" in response.content


def test_pending_receipts_partial_polls_only_while_pending(mod, space):
    html = mod.get("/console/s/s1/space/pending/").content.decode()
    assert "0 pending receipts" in html and "hx-trigger" not in html
    Receipt.objects.create(
        space_id="s1",
        principal=space.grants.first().grantee,
        op="memory.exports.create",
        status="pending",
        payload_digest="sha256:" + "0" * 64,
        refs=[],
        created_at=now(),
    )
    html = mod.get("/console/s/s1/space/pending/").content.decode()
    assert "1 pending receipt" in html and 'hx-trigger="every 2s"' in html


def test_non_admin_cannot_freeze(ops, stranger):
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": stranger.principal.principal_id,
            "capabilities": ["review"],
        },
    )
    response = logged_in(stranger).post(
        "/console/s/s1/space/freeze/", {"idempotency_key": "x"}, follow=True
    )
    assert b"PERMISSION_DENIED" in response.content
    assert Space.objects.get(space_id="s1").state == "active"


def test_outsider_gets_not_found_everywhere(stranger):
    client = logged_in(stranger)
    assert client.get("/console/s/s1/space/").status_code == 404
    assert client.post("/console/s/s1/space/freeze/", {"idempotency_key": "x"}).status_code == 404
    assert Space.objects.get(space_id="s1").state == "active"


def test_archive_asks_once_on_the_page(mod, ops):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    html = mod.get("/console/s/s1/space/?subject=u1").content.decode()
    assert 'id="archive-confirm"' in html and "Archiving is terminal" in html
    response = mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "archive", "idempotency_key": "a"},
        follow=True,
    )
    assert b"Tick the box to archive" in response.content
    assert Subject.objects.get(subject_id="u1").state == "active"
