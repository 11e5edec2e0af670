"""Issue 26 items 3 and 9, from the console as a logged-in user: the record page's revision
history showed old revisions placed in contexts the reader does not cover, and a space admin
could Undo another reviewer's promote. The screens' own tests are beside them
(tests/reviews/test_records_screen.py, test_recent_actions.py); these are the attacks."""

import pytest

from memory.models import Receipt, Record
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import logged_in, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def moderator(space):
    user, principal = make_user("moderator")
    issue_root_grant(space, principal)
    return user


def as_moderator(moderator, op: str, body: dict) -> dict:
    return call(moderator.principal, op, {"space_id": "s1", **body})


def grant(moderator, user, *capabilities: str, **narrowing) -> None:
    as_moderator(
        moderator,
        "memory.grants.grant",
        {
            "grantee_principal_id": user.principal.principal_id,
            "capabilities": list(capabilities),
            **narrowing,
        },
    )


def test_history_hides_revisions_placed_where_the_reader_has_no_coverage(moderator):
    """A record written in c2, then promoted to c1: a reader of c1 saw its c2-only text."""
    as_moderator(moderator, "memory.subjects.ensure", {"subject_id": "u1"})
    made = as_moderator(
        moderator,
        "memory.records.create",
        {
            "subject_id": "u1",
            "kind": "fact",
            "placement": {"scope": "context", "context_id": "c2"},
            "content": {"text": "c2 only: the draft"},
        },
    )
    rid = made["receipt"]["refs"][-1]["id"]
    as_moderator(
        moderator,
        "memory.records.update",
        {"record_id": rid, "expected_revision": 1, "content": {"text": "said in c2, later moved"}},
    )
    as_moderator(
        moderator,
        "memory.records.promote",
        {
            "record_id": rid,
            "expected_revision": 2,
            "placement": {"scope": "context", "context_id": "c1"},
        },
    )
    reader, _ = make_user("reader")
    grant(moderator, reader, "records_read", context_ids=["c1"])
    page = logged_in(reader).get(f"/console/s/s1/records/{rid}/")
    assert page.status_code == 200
    shown = [h["revision"] for h in page.context["history"]]
    assert shown == [3]  # the promote's revision, placed in c1
    assert "c2 only: the draft" not in page.content.decode()
    everything = logged_in(moderator).get(f"/console/s/s1/records/{rid}/")
    assert [h["revision"] for h in everything.context["history"]] == [3, 2, 1]


def test_a_space_admin_cannot_undo_another_reviewers_promote(moderator):
    """docs/console.md: someone else's receipt has no Undo (a not-found page)."""
    reviewer, _ = make_user("rita")
    grant(
        moderator,
        reviewer,
        "candidates_read",
        "review",
        "records_read",
        "records_write",
        shared_access=True,
    )
    as_moderator(moderator, "memory.subjects.ensure", {"subject_id": "u1"})
    captured = as_moderator(
        moderator,
        "memory.capture",
        {
            "subject_id": "u1",
            "capture_scope": {"placement": {"scope": "shared"}},
            "items": [{"content": {"text": "Ada prefers tea."}}],
        },
    )
    cid = captured["receipt"]["refs"][-1]["id"]
    rita = logged_in(reviewer)
    rita.post(
        f"/console/s/s1/candidates/{cid}/review/", {"action": "promote", "idempotency_key": "p"}
    )
    receipt = Receipt.objects.get(op="memory.candidates.review")
    assert receipt.principal_id == reviewer.principal.principal_id
    record = Record.objects.get(prov_candidate_id=cid)
    undo = logged_in(moderator).post(
        f"/console/s/s1/recent/{receipt.receipt_id}/undo/", {"idempotency_key": "u"}
    )
    assert undo.status_code == 404
    record.refresh_from_db()
    assert record.deleted_at is None
    assert not Receipt.objects.filter(op="memory.records.delete").exists()
    # the reviewer's own Undo still works
    rita.post(f"/console/s/s1/recent/{receipt.receipt_id}/undo/", {"idempotency_key": "u2"})
    record.refresh_from_db()
    assert record.deleted_at is not None
