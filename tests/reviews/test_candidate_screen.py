"""Candidate screen: content shown as text, structured, cognition; promote/fragment/drop/dismiss;
the 'another reviewer got there first' notice."""

import pytest

from memory.models import Candidate, Record, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import logged_in, make_user

pytestmark = pytest.mark.django_db

COGNITION = [
    {
        "view": "recorded_at",
        "type": "belief",
        "proposition": "tea is better",
        "attribution": {"holder": "ada", "source": "self_report"},
        "basis": {"kind": "stated"},
        "times": {"recorded_at": "2026-01-02T03:04:05.000Z"},
        "confidence": 0.8,
    }
]


def page(client, cid):
    return client.get(f"/console/s/s1/candidates/{cid}/")


def review(client, cid, **data):
    return client.post(
        f"/console/s/s1/candidates/{cid}/review/",
        {"idempotency_key": "k-" + cid, **data},
        follow=True,
    )


def test_page_shows_content_classification_scope_and_who(mod, ops, moderator):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    receipt = ops(
        "memory.capture",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "capture_scope": {
                "placement": {"scope": "context", "context_id": "support"},
                "source_context_id": "chat",
            },
            "items": [
                {
                    "content": {
                        "text": "Ada prefers tea.",
                        "structured": {"drink": "tea"},
                        "cognition": COGNITION,
                    }
                }
            ],
        },
    )["receipt"]
    cid = receipt["refs"][0]["id"]
    html = page(mod, cid).content.decode()
    assert "Ada prefers tea." in html
    assert "&quot;drink&quot;: &quot;tea&quot;" in html  # pretty-printed, escaped
    assert "<td>tea is better</td>" in html and "<td>belief</td>" in html
    assert "context <code>support</code>, from <code>chat</code>" in html
    assert moderator.principal.principal_id in html
    assert "preference_verb" in html  # a signal of the classification


def test_untrusted_content_is_escaped(mod, capture):
    (cid,) = capture("<script>alert(1)</script><img src=x onerror=alert(2)>")
    html = page(mod, cid).content.decode()
    assert "<script>alert(1)</script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html


def test_promote_with_edited_text_and_kind(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers green tea.", kind="preference")
    record = Record.objects.get(prov_candidate_id=cid)
    assert record.content["text"] == "Ada prefers green tea." and record.kind == "preference"
    assert Candidate.objects.get(candidate_id=cid).state == "promoted"


def test_promote_as_proposed_sends_no_override(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers tea.", kind="")
    record = Record.objects.get(prov_candidate_id=cid)
    assert record.content == {"text": "Ada prefers tea."} and record.kind == "preference"


def test_fragment_into_two(mod, capture):
    (cid,) = capture("Ada prefers tea and lives in Lisbon.")
    review(
        mod,
        cid,
        action="fragment",
        fragment_text=["Ada prefers tea.", "Ada lives in Lisbon.", "  "],
        fragment_kind=["preference", "fact", ""],
    )
    records = sorted(Record.objects.filter(prov_candidate_id=cid).values_list("kind", "text"))
    assert records == [("fact", "Ada lives in Lisbon."), ("preference", "Ada prefers tea.")]


def test_fragment_with_no_text_changes_nothing(mod, capture):
    (cid,) = capture("x")
    response = review(mod, cid, action="fragment", fragment_text=[" "], fragment_kind=[""])
    assert response.status_code == 400 and b"at least one" in response.content
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_drop_with_reason_and_dismiss(mod, capture):
    a, b = capture("one", "two")
    review(mod, a, action="drop", reason="duplicate")
    review(mod, b, action="dismiss")
    assert Candidate.objects.get(candidate_id=a).outcome == {
        "action": "drop",
        "record_ids": [],
        "reason": "duplicate",
    }
    assert Candidate.objects.get(candidate_id=b).state == "dismissed"
    assert not Record.objects.exists()


def test_after_an_action_the_next_pending_candidate_opens(mod, capture):
    a, b = capture("one", "two")
    response = mod.post(
        f"/console/s/s1/candidates/{a}/review/", {"action": "drop", "idempotency_key": "x"}
    )
    assert response["Location"] == f"/console/s/s1/candidates/{b}/"
    last = mod.post(
        f"/console/s/s1/candidates/{b}/review/", {"action": "drop", "idempotency_key": "y"}
    )
    assert last["Location"] == "/console/s/s1/queue/"


def test_double_submit_promotes_once(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers tea.")
    second = review(mod, cid, action="promote", text="Ada prefers tea.")
    assert Record.objects.filter(prov_candidate_id=cid).count() == 1
    assert b"got there first" not in second.content


def test_another_reviewer_got_there_first(mod, capture, ops, space):
    (cid,) = capture("Ada prefers tea.")
    _, other = make_user("other")
    issue_root_grant(space, other)
    call(
        other,
        "memory.candidates.review",
        {"space_id": "s1", "candidate_id": cid, "decision": {"action": "drop"}},
    )
    response = review(mod, cid, action="promote", text="Ada prefers tea.")
    assert response.status_code == 200
    assert (
        f"Another reviewer got there first: {cid} was already dropped".encode() in response.content
    )
    assert not Record.objects.exists()


def test_frozen_space_blocks_review_with_a_message(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    Space.objects.filter(space_id="s1").update(state="frozen")
    response = review(mod, cid, action="promote", text="edited")
    assert response.status_code == 409
    assert b"SPACE_FROZEN" in response.content
    assert b"edited" in response.content  # the edit is kept in the form
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_bad_kind_is_explained_and_changes_nothing(mod, capture):
    (cid,) = capture("x")
    response = review(mod, cid, action="promote", kind="Not A Kind")
    assert response.status_code == 400 and b"invalid_input" in response.content
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_reviewer_without_records_write_is_denied(capture, ops, stranger):
    (cid,) = capture("x")
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": stranger.principal.principal_id,
            "capabilities": ["review"],
            "shared_access": True,
        },
    )
    response = review(logged_in(stranger), cid, action="promote")
    assert response.status_code == 403 and b"PERMISSION_DENIED" in response.content


def test_outsider_sees_not_found(capture, stranger):
    (cid,) = capture("secret")
    client = logged_in(stranger)
    assert page(client, cid).status_code == 404
    assert (
        client.post(f"/console/s/s1/candidates/{cid}/review/", {"action": "drop"}).status_code
        == 404
    )
    assert Candidate.objects.get(candidate_id=cid).state == "pending"
