"""Grants (SPEC §4): the coverage matrix, non-amplification on every dimension, chains, expiry."""
from datetime import timedelta

import pytest

from memory.access import coverage_for
from memory.models import Grant
from memory.timeutil import iso, now
from memory.wire.errors import WireError

pytestmark = pytest.mark.django_db


def cov(persona, space_id="s1"):
    return coverage_for(space_id, persona.principal, now())


def test_grant_receipt_and_wire_shape(api, admin, grant_to):
    persona, grant_id = grant_to(capabilities=["records_read", "recall"], subject_ids=["u1"],
                                 context_ids=["c1"], shared_access=True)
    grants = api(persona, "memory.grants.list", {"space_id": "s1", "view": "own"}).body["grants"]
    assert len(grants) == 1
    g = grants[0]
    assert g["grant_id"] == grant_id
    assert g["issuer_principal_id"] == admin.id and g["grantee_principal_id"] == persona.id
    assert g["capabilities"] == ["recall", "records_read"]
    assert (g["subject_ids"], g["context_ids"], g["shared_access"]) == (["u1"], ["c1"], True)
    assert g["state"] == "active" and g["effective"] is True and g["revision"] == 1
    assert g["parent_grant_id"] is not None
    assert "expires_at" not in g and "revoked_at" not in g


@pytest.mark.parametrize(
    "grant, capability, subject, scope, context, covered",
    [
        ({"capabilities": ["records_read"]}, "records_read", "u1", "context", "c1", True),
        ({"capabilities": ["records_read"]}, "records_write", "u1", "context", "c1", False),
        ({"capabilities": ["records_read"], "subject_ids": ["u1"]}, "records_read", "u2", "context", "c1", False),
        ({"capabilities": ["records_read"], "context_ids": ["c1"]}, "records_read", "u1", "context", "c2", False),
        ({"capabilities": ["records_read"], "context_ids": ["c1"]}, "records_read", "u1", "context", "c1", True),
        ({"capabilities": ["records_read"]}, "records_read", "u1", "shared", None, False),
        ({"capabilities": ["records_read"], "shared_access": True}, "records_read", "u1", "shared", None, True),
        ({"capabilities": ["space_admin"], "shared_access": True}, "records_write", "u1", "shared", None, True),
    ],
)
def test_coverage_matrix(grant_to, grant, capability, subject, scope, context, covered):
    persona, _ = grant_to(**grant)
    assert cov(persona).covers(capability, subject, scope, context) is covered


def test_expired_grant_covers_nothing(grant_to):
    persona, grant_id = grant_to(capabilities=["records_read"], expires_at=iso(now() + timedelta(seconds=60)))
    assert cov(persona).covers("records_read", "u1", "context", "c1")
    Grant.objects.filter(pk=grant_id).update(expires_at=now() - timedelta(seconds=1))
    with pytest.raises(WireError) as err:
        cov(persona)
    assert err.value.code == "NOT_FOUND"


def test_revoked_grant_and_revoked_parent_cover_nothing_at_once(api, admin, grant_to):
    middle, middle_id = grant_to(capabilities=["grants_issue", "records_read"])
    leaf, _ = grant_to(capabilities=["grants_issue", "records_read"])  # a sibling holder
    child = api(middle, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": leaf.id,
                                                 "capabilities": ["records_read"]})
    child_id = child.receipt["refs"][0]["id"]
    assert Grant.objects.get(pk=child_id).parent_id == middle_id
    revoke = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": middle_id, "reason": "left"})
    assert revoke.receipt["refs"] == [{"type": "grant", "id": middle_id, "revision": 2}]
    listed = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "include_inactive": True})
    by_id = {g["grant_id"]: g for g in listed.body["grants"]}
    assert by_id[middle_id]["state"] == "revoked" and by_id[middle_id]["effective"] is False
    assert by_id[child_id]["state"] == "active" and by_id[child_id]["effective"] is False
    assert "revoked_at" in by_id[middle_id]
    active_only = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin"}).body["grants"]
    assert child_id not in {g["grant_id"] for g in active_only}
    assert middle_id not in {g["grant_id"] for g in active_only}
    with pytest.raises(WireError) as err:
        cov(middle)
    assert err.value.code == "NOT_FOUND"  # middle's only grant is revoked: the space is invisible


def test_grant_needs_grants_issue(api, grant_to, persona_factory):
    reader, _ = grant_to(capabilities=["records_read"])
    other = persona_factory("x")
    answer = api(reader, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": other.id,
                                                  "capabilities": ["records_read"]})
    assert (answer.status, answer.code) == (403, "PERMISSION_DENIED")
    assert answer.error["details"]["capability"] == "grants_issue"


@pytest.mark.parametrize(
    "parent, child, dims",
    [
        ({"capabilities": ["grants_issue", "records_read"]}, {"capabilities": ["records_write"]}, ["capabilities"]),
        ({"capabilities": ["grants_issue", "records_read"], "subject_ids": ["u1"]},
         {"capabilities": ["records_read"]}, ["subject_ids"]),
        ({"capabilities": ["grants_issue", "records_read"], "subject_ids": ["u1"]},
         {"capabilities": ["records_read"], "subject_ids": ["u1", "u2"]}, ["subject_ids"]),
        ({"capabilities": ["grants_issue", "records_read"], "context_ids": ["c1"]},
         {"capabilities": ["records_read"], "context_ids": ["c2"]}, ["context_ids"]),
        ({"capabilities": ["grants_issue", "records_read"]},
         {"capabilities": ["records_read"], "shared_access": True}, ["shared_access"]),
        ({"capabilities": ["grants_issue", "records_read"], "expires_at": "+3600"},
         {"capabilities": ["records_read"]}, ["expires_at"]),
        ({"capabilities": ["grants_issue", "records_read"], "expires_at": "+3600"},
         {"capabilities": ["records_read"], "expires_at": "+7200"}, ["expires_at"]),
        ({"capabilities": ["grants_issue", "records_read"], "context_ids": ["c1"]},
         {"capabilities": ["records_write"], "shared_access": True}, ["capabilities", "context_ids", "shared_access"]),
    ],
)
def test_non_amplification_on_each_dimension(api, grant_to, persona_factory, parent, child, dims):
    def resolve(d):
        d = dict(d)
        if "expires_at" in d:
            d["expires_at"] = iso(now() + timedelta(seconds=int(d["expires_at"])))
        return d

    issuer, _ = grant_to(**resolve(parent))
    target = persona_factory("t")
    before = Grant.objects.count()
    answer = api(issuer, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": target.id, **resolve(child)})
    assert (answer.status, answer.code) == (403, "AMPLIFICATION_DENIED")
    assert answer.error["details"]["exceeds"] == dims
    assert Grant.objects.count() == before


def test_within_coverage_succeeds_and_records_parent(api, grant_to, persona_factory):
    expiry = iso(now() + timedelta(hours=2))
    issuer, parent_id = grant_to(capabilities=["grants_issue", "records_read", "recall"], subject_ids=["u1", "u2"],
                                 context_ids=["c1", "c2"], shared_access=True, expires_at=expiry)
    target = persona_factory("t")
    answer = api(issuer, "memory.grants.grant", {
        "space_id": "s1", "grantee_principal_id": target.id, "capabilities": ["recall"],
        "subject_ids": ["u1"], "context_ids": ["c2"], "expires_at": iso(now() + timedelta(hours=1)),
        "parent_grant_id": parent_id,
    })
    assert answer.status == 200, answer.body
    g = Grant.objects.get(pk=answer.receipt["refs"][0]["id"])
    assert g.parent_id == parent_id and g.issuer_id == issuer.id


def test_named_parent_not_held_is_not_found(api, grant_to, persona_factory):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    _, foreign_id = grant_to(capabilities=["grants_issue", "records_read"])
    target = persona_factory("t")
    answer = api(issuer, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": target.id,
                                                  "capabilities": ["records_read"], "parent_grant_id": foreign_id})
    assert answer.code == "NOT_FOUND"


def test_unknown_grantee_is_not_found(api, admin, space):
    answer = api(admin, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": "prn_01HZZZZZZZZZZZZZZZZZZZZZZZ",
                                                 "capabilities": ["records_read"]})
    assert (answer.code, answer.error["details"]["resource"]) == ("NOT_FOUND", "principal")


def test_expiry_in_the_past_is_invalid_input(api, admin, persona_factory, space):
    target = persona_factory("t")
    answer = api(admin, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": target.id,
                                                 "capabilities": ["records_read"], "expires_at": "2020-01-01T00:00:00Z"})
    assert (answer.status, answer.code) == (422, "INVALID_INPUT")


def test_revoke_rules(api, admin, grant_to):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    bystander, _ = grant_to(capabilities=["records_read"])
    _, target_id = grant_to(capabilities=["records_read"])
    denied = api(bystander, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id})
    assert denied.code == "PERMISSION_DENIED"
    missing = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": "grt_01HZZZZZZZZZZZZZZZZZZZZZZZ"})
    assert missing.code == "NOT_FOUND"
    assert api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id}).status == 200
    again = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id})
    assert (again.status, again.code) == (409, "GRANT_REVOKED")


def test_issuer_can_revoke_what_it_issued(api, grant_to, persona_factory):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    target = persona_factory("t")
    made = api(issuer, "memory.grants.grant", {"space_id": "s1", "grantee_principal_id": target.id,
                                                "capabilities": ["records_read"]})
    gid = made.receipt["refs"][0]["id"]
    assert api(issuer, "memory.grants.revoke", {"space_id": "s1", "grant_id": gid}).status == 200


def test_admin_view_needs_space_admin_own_view_does_not(api, grant_to):
    reader, _ = grant_to(capabilities=["records_read"])
    assert api(reader, "memory.grants.list", {"space_id": "s1", "view": "admin"}).code == "PERMISSION_DENIED"
    assert len(api(reader, "memory.grants.list", {"space_id": "s1", "view": "own"}).body["grants"]) == 1


def test_grants_list_pages_with_cursor_and_cursor_breaks_on_change(api, admin, grant_to):
    for _ in range(5):
        grant_to(capabilities=["records_read"])
    first = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 2}).body
    assert len(first["grants"]) == 2 and first["next_cursor"]
    seen = [g["grant_id"] for g in first["grants"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 2, "cursor": cursor}).body
        seen += [g["grant_id"] for g in page["grants"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 6
    stale = first["next_cursor"]
    grant_to(capabilities=["records_read"])
    answer = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 2, "cursor": stale})
    assert (answer.status, answer.code) == (409, "CURSOR_INVALID")
    tampered = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 2,
                                                  "cursor": stale[:-3] + "abc"})
    assert tampered.code == "CURSOR_INVALID"
    other_request = api(admin, "memory.grants.list", {"space_id": "s1", "view": "own", "cursor": stale})
    assert other_request.code == "CURSOR_INVALID"
