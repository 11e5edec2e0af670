"""My recent actions (from the moderator's own receipts) and Undo of a promote within its
window: the produced records are deleted with a reason naming the undo; a drop or dismiss says
it cannot be undone."""

from datetime import timedelta

import pytest

from memory.models import Candidate, Receipt, Record
from tests.reviews.conftest import logged_in

pytestmark = pytest.mark.django_db


def promote(client, cid, key="k-promote"):
    return client.post(
        f"/console/s/s1/candidates/{cid}/review/", {"action": "promote", "idempotency_key": key}
    )


def receipt_of(cid) -> Receipt:
    return Receipt.objects.get(op="memory.candidates.review", refs__0__id=cid)


def test_panel_lists_my_actions_with_their_records(mod, capture, ops):
    a, b, c = capture("Ada prefers tea.", "two", "three")
    promote(mod, a)
    mod.post(f"/console/s/s1/candidates/{b}/review/", {"action": "drop", "idempotency_key": "kd"})
    ops("memory.candidates.dismiss", {"space_id": "s1", "candidate_id": c})  # also mine
    response = mod.get("/console/s/s1/recent/")
    items = {i["candidate_id"]: i for i in response.context["items"]}
    assert items[a]["action"] == "promote" and items[a]["undoable"]
    assert items[b]["action"] == "drop" and not items[b]["undoable"]
    assert items[c]["action"] == "dismiss"
    html = response.content.decode()
    record = Record.objects.get(prov_candidate_id=a).record_id
    assert f'href="/console/s/s1/records/{record}/"' in html
    assert html.count("cannot be undone") >= 2 and 'class="undo-button"' in html


def test_panel_shows_only_my_own_receipts(mod, capture, stranger, give):
    (a,) = capture("x")
    promote(mod, a)
    give(stranger, "candidates_read", "review", "records_read", shared_access=True)
    assert logged_in(stranger).get("/console/s/s1/recent/").context["items"] == []


def test_undo_deletes_the_record_with_a_reason_naming_the_undo(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    promote(mod, cid)
    rid = receipt_of(cid).receipt_id
    record = Record.objects.get(prov_candidate_id=cid)
    done = mod.post(
        f"/console/s/s1/recent/{rid}/undo/", {"idempotency_key": "u1", "label": "fact"}, follow=True
    )
    assert done.redirect_chain[-1][0] == "/console/s/s1/queue/?label=fact"
    assert f"is no longer a memory (deleted {record.record_id})".encode() in done.content
    assert "Undone: “".encode() in done.content  # the memory named by its words first
    record.refresh_from_db()
    assert record.deleted_at is not None
    delete = Receipt.objects.get(op="memory.records.delete")
    assert delete.refs[0]["id"] == record.record_id
    reason = record.delete_reason
    assert reason.startswith(f"undo: promote of {cid}") and rid in reason
    assert Candidate.objects.get(candidate_id=cid).state == "promoted"
    # a double submit does one thing; the panel then says undone
    again = mod.post(f"/console/s/s1/recent/{rid}/undo/", {"idempotency_key": "u1"}, follow=True)
    assert b"Already undone" in again.content
    assert Receipt.objects.filter(op="memory.records.delete").count() == 1
    items = mod.get("/console/s/s1/recent/").context["items"]
    assert items[0]["undone"] and not items[0]["undoable"]


def test_undo_after_the_window_is_refused(mod, capture):
    (cid,) = capture("x")
    promote(mod, cid)
    receipt = receipt_of(cid)
    Receipt.objects.filter(pk=receipt.pk).update(
        created_at=receipt.created_at - timedelta(minutes=6)
    )
    assert not mod.get("/console/s/s1/recent/").context["items"][0]["undoable"]
    response = mod.post(
        f"/console/s/s1/recent/{receipt.receipt_id}/undo/", {"idempotency_key": "u"}, follow=True
    )
    assert b"The undo window (5 minutes) has passed" in response.content
    assert Record.objects.get(prov_candidate_id=cid).deleted_at is None


def test_undo_of_a_drop_says_nothing_can_be_undone(mod, capture):
    (cid,) = capture("x")
    mod.post(f"/console/s/s1/candidates/{cid}/review/", {"action": "drop", "idempotency_key": "d"})
    rid = receipt_of(cid).receipt_id
    response = mod.post(f"/console/s/s1/recent/{rid}/undo/", {"idempotency_key": "u"}, follow=True)
    assert b"there is nothing to undo" in response.content
    assert not Receipt.objects.filter(op="memory.records.delete").exists()


def test_undo_of_someone_elses_receipt_is_not_found(mod, capture, stranger, give):
    (cid,) = capture("x")
    promote(mod, cid)
    give(stranger, "review", "records_write", "records_read", shared_access=True)
    rid = receipt_of(cid).receipt_id
    response = logged_in(stranger).post(
        f"/console/s/s1/recent/{rid}/undo/", {"idempotency_key": "u"}
    )
    assert response.status_code == 404
    assert Record.objects.get(prov_candidate_id=cid).deleted_at is None


def test_undo_without_a_key_changes_nothing(mod, capture):
    (cid,) = capture("x")
    promote(mod, cid)
    rid = receipt_of(cid).receipt_id
    response = mod.post(f"/console/s/s1/recent/{rid}/undo/", {}, follow=True)
    assert b"The form is incomplete" in response.content
    assert Record.objects.get(prov_candidate_id=cid).deleted_at is None


def test_outsider_sees_no_panel(stranger):
    assert logged_in(stranger).get("/console/s/s1/recent/").status_code == 404
