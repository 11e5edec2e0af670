"""Issue 26 item 2: a `space_admin` grant narrowed to one subject or one context acted as a full
admin (it froze the space, revoked root grants it did not issue, listed every grant, read every
receipt). The reading now (docs/grants.md "Narrowed space_admin"): a narrowed space_admin
administers only what it covers. Space-level acts (freeze, unfreeze, the admin grant list,
another principal's receipts) need a space-wide admin grant (no subject or context limit, shared
access); fencing needs an admin grant covering the subject (and, for the whole subject, every
placement of it); revoking another's grant needs an admin grant that contains the target grant.
All through the HTTP edge, as the finding came."""

import pytest

from memory.models import Grant, Space, Subject
from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db

NARROWINGS = {
    "one subject": {"subject_ids": ["u1"], "shared_access": True},
    "one context": {"context_ids": ["c1"]},
    "no shared access": {},
}


@pytest.fixture
def narrowed(api, grant_to, ensure_subject):
    ensure_subject("u1")
    ensure_subject("u2")

    def make(narrowing: str):
        who, grant_id = grant_to(capabilities=["space_admin"], **NARROWINGS[narrowing])
        return who, grant_id

    return make


def root_grant_id(admin) -> str:
    return Grant.objects.get(grantee=admin.principal, parent__isnull=True).grant_id


@pytest.mark.parametrize("narrowing", NARROWINGS)
def test_a_narrowed_admin_cannot_freeze_the_space(api, narrowed, narrowing):
    who, _ = narrowed(narrowing)
    before = census()
    answer = api(who, "memory.spaces.freeze", {"space_id": "s1", "reason": "mine now"})
    assert (answer.code, answer.error["details"]) == (
        "PERMISSION_DENIED",
        {"capability": "space_admin"},
    )
    assert Space.objects.get(space_id="s1").state == Space.ACTIVE
    assert census() == before


@pytest.mark.parametrize("narrowing", NARROWINGS)
def test_a_narrowed_admin_cannot_revoke_a_root_grant_it_did_not_issue(
    api, admin, narrowed, narrowing
):
    who, _ = narrowed(narrowing)
    root = root_grant_id(admin)
    answer = api(who, "memory.grants.revoke", {"space_id": "s1", "grant_id": root})
    assert answer.code == "PERMISSION_DENIED"
    assert Grant.objects.get(grant_id=root).state == Grant.ACTIVE


def test_a_narrowed_admin_revokes_only_grants_inside_its_own_reach(api, admin, narrowed, grant_to):
    who, _ = narrowed("one subject")
    _, inside = grant_to(capabilities=["records_read"], subject_ids=["u1"])
    _, outside = grant_to(capabilities=["records_read"], subject_ids=["u2"])
    _, everyone = grant_to(capabilities=["records_read"])
    for grant_id in (outside, everyone):
        answer = api(who, "memory.grants.revoke", {"space_id": "s1", "grant_id": grant_id})
        assert answer.code == "PERMISSION_DENIED"
        assert Grant.objects.get(grant_id=grant_id).state == Grant.ACTIVE
    answer = api(who, "memory.grants.revoke", {"space_id": "s1", "grant_id": inside})
    assert answer.status == 200, answer.body
    assert Grant.objects.get(grant_id=inside).state == Grant.REVOKED


@pytest.mark.parametrize("narrowing", NARROWINGS)
def test_a_narrowed_admin_cannot_list_every_grant(api, narrowed, narrowing):
    who, grant_id = narrowed(narrowing)
    admin_view = api(who, "memory.grants.list", {"space_id": "s1", "view": "admin"})
    assert (admin_view.code, admin_view.error["details"]) == (
        "PERMISSION_DENIED",
        {"capability": "space_admin"},
    )
    own = api(who, "memory.grants.list", {"space_id": "s1", "view": "own"})
    assert [g["grant_id"] for g in own.body["grants"]] == [grant_id]


@pytest.mark.parametrize("narrowing", NARROWINGS)
def test_a_narrowed_admin_cannot_read_another_principals_receipt(
    api, admin, narrowed, ensure_subject, narrowing
):
    who, _ = narrowed(narrowing)
    receipt = ensure_subject("u3")  # the root admin's receipt
    answer = api(who, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]})
    assert (answer.status, answer.code) == (404, "NOT_FOUND")
    assert api(admin, "memory.receipts.get", {"receipt_id": receipt["receipt_id"]}).status == 200


def test_a_context_narrowed_admin_cannot_fence_the_whole_subject(api, narrowed):
    who, _ = narrowed("one context")
    answer = api(
        who, "memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", "action": "fence"}
    )
    assert answer.code == "PERMISSION_DENIED"
    assert Subject.objects.get(subject_id="u1").state == Subject.ACTIVE
    elsewhere = api(
        who,
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "c2"},
    )
    assert elsewhere.code == "PERMISSION_DENIED"
    here = api(
        who,
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "c1"},
    )
    assert here.status == 200, here.body
    assert Subject.objects.get(subject_id="u1").fenced_context_ids == ["c1"]


def test_a_subject_narrowed_admin_administers_that_subject_and_no_other(api, narrowed):
    who, _ = narrowed("one subject")
    other = api(
        who, "memory.subjects.fence", {"space_id": "s1", "subject_id": "u2", "action": "fence"}
    )
    assert other.code == "NOT_FOUND"  # u2 is outside every grant it holds
    assert Subject.objects.get(subject_id="u2").state == Subject.ACTIVE
    mine = api(
        who, "memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", "action": "fence"}
    )
    assert mine.status == 200, mine.body
    assert Subject.objects.get(subject_id="u1").state == Subject.FENCED


def test_a_narrowed_admin_still_holds_every_other_capability_inside_its_reach(api, narrowed):
    who, _ = narrowed("one subject")
    made = api(
        who,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "fact",
            "placement": {"scope": "shared"},
            "content": {"text": "Ada prefers tea."},
        },
    )
    assert made.status == 200, made.body
    outside = api(
        who,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u2",
            "kind": "fact",
            "placement": {"scope": "shared"},
            "content": {"text": "x"},
        },
    )
    assert outside.code == "NOT_FOUND"
