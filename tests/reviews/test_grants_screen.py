"""Grants screen: the chain, issuing (with AMPLIFICATION_DENIED explained), revoking."""

import pytest

from memory.models import Grant, Receipt, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import logged_in, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def grantee(db):
    return make_user("grantee")


def issue(client, **fields):
    data = {
        "capabilities": ["records_read"],
        "idempotency_key": "k-" + fields.pop("key", "1"),
        **fields,
    }
    return client.post("/console/s/s1/grants/issue/", data, follow=True)


def _review_grant(ops, principal) -> str:
    """A `review` grant from the moderator to `principal`; its grant id."""
    return ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["review"],
        },
    )["receipt"]["refs"][0]["id"]


def test_admin_view_shows_the_chain(mod, ops, grantee):
    _, principal = grantee
    root = Grant.objects.get(grantee__user__username="moderator")
    receipt = ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["review"],
        },
    )["receipt"]
    child = receipt["refs"][0]["id"]
    html = mod.get("/console/s/s1/grants/").content.decode()
    assert child in html and root.grant_id in html
    assert f'parent <a href="#{root.grant_id}">' in html
    assert (
        f'<a href="#{child}"><code>{child}</code></a>' in html
    )  # listed among the root's children
    assert "effective" in html


def test_issue_a_grant(mod, grantee):
    _, principal = grantee
    response = issue(
        mod, grantee_principal_id=principal.principal_id, subject_ids="u1, u2", context_ids="c1"
    )
    assert response.status_code == 200
    grant = Grant.objects.get(grantee=principal)
    assert grant.subject_ids == ["u1", "u2"] and grant.context_ids == ["c1"]
    assert b"issued" in response.content


def test_double_submit_issues_one_grant(mod, grantee):
    _, principal = grantee
    issue(mod, grantee_principal_id=principal.principal_id, key="same")
    issue(mod, grantee_principal_id=principal.principal_id, key="same")
    assert Grant.objects.filter(grantee=principal).count() == 1


def test_amplification_is_explained_dimension_by_dimension(ops, grantee, space):
    user, principal = grantee
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["grants_issue", "records_read"],
            "subject_ids": ["u1"],
            "context_ids": ["c1"],
        },
    )
    client = logged_in(user)
    before = Receipt.objects.count()
    response = issue(
        client,
        grantee_principal_id=principal.principal_id,
        key="amp",
        capabilities=["records_read", "records_write"],
        subject_ids="u1, u2",
        context_ids="c1",
        shared_access="on",
    )
    assert response.status_code == 403
    html = response.content.decode()
    assert "AMPLIFICATION_DENIED" in html
    assert (
        "Capabilities: you asked for records_read, records_write; none of your issuing grants holds records_write"
        in html
    )
    assert "Subjects: you asked for u1, u2; your issuing grant covers u1." in html
    assert "Shared access: you asked for it" in html
    assert "Contexts:" not in html  # not exceeded, not mentioned
    assert Receipt.objects.count() == before
    assert Grant.objects.filter(grantee=principal).count() == 1


def test_issue_without_grants_issue_is_permission_denied(ops, grantee):
    user, principal = grantee
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["records_read"],
        },
    )
    response = issue(logged_in(user), grantee_principal_id=principal.principal_id)
    assert response.status_code == 403
    assert b"PERMISSION_DENIED" in response.content


def test_bad_grantee_says_not_found_without_a_404_page(mod):
    response = issue(mod, grantee_principal_id="prn_nobody")
    assert response.status_code == 404
    assert b"No such principal" in response.content
    assert b"Issue a grant" in response.content


def test_revoke_asks_for_confirmation_then_revokes(mod, ops, grantee):
    _, principal = grantee
    gid = _review_grant(ops, principal)
    page = mod.get(f"/console/s/s1/grants/{gid}/revoke/")
    assert page.status_code == 200 and b"Revoke grant" in page.content
    assert Grant.objects.get(grant_id=gid).state == "active"
    response = mod.post(
        f"/console/s/s1/grants/{gid}/revoke/",
        {"reason": "left", "idempotency_key": "r1"},
        follow=True,
    )
    assert Grant.objects.get(grant_id=gid).state == "revoked"
    assert b"revoked" in response.content
    again = mod.post(f"/console/s/s1/grants/{gid}/revoke/", {"idempotency_key": "r2"}, follow=True)
    assert b"GRANT_REVOKED" in again.content


def test_revoke_of_unknown_grant_is_not_found(mod):
    assert mod.get("/console/s/s1/grants/grt_nope/revoke/").status_code == 404


def test_non_admin_sees_only_own_grants(ops, grantee, moderator):
    user, principal = grantee
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["review"],
        },
    )
    html = logged_in(user).get("/console/s/s1/grants/").content.decode()
    assert "these are the grants you hold" in html
    root = Grant.objects.get(grantee=moderator.principal)
    assert f'<tr id="{root.grant_id}"' not in html


def test_outsider_gets_not_found(stranger):
    assert logged_in(stranger).get("/console/s/s1/grants/").status_code == 404
    assert (
        logged_in(stranger)
        .post(
            "/console/s/s1/grants/issue/", {"grantee_principal_id": "x", "capabilities": ["review"]}
        )
        .status_code
        == 404
    )


def test_console_calls_match_the_api(mod, grantee, moderator):
    """The console acts as the linked principal: the grant's issuer is the moderator's principal."""
    _, principal = grantee
    issue(mod, grantee_principal_id=principal.principal_id)
    grant = Grant.objects.get(grantee=principal)
    assert grant.issuer_id == moderator.principal.principal_id
    own = call(principal, "memory.grants.list", {"space_id": "s1", "view": "own"})
    assert [g["grant_id"] for g in own["grants"]] == [grant.grant_id]


def test_expiry_is_read_as_utc(mod, grantee):
    _, principal = grantee
    issue(
        mod, grantee_principal_id=principal.principal_id, expires_at="2030-01-31 18:00", key="exp"
    )
    grant = Grant.objects.get(grantee=principal)
    assert grant.expires_at.isoformat() == "2030-01-31T18:00:00+00:00"


def test_unparseable_form_input_calls_no_op(mod, grantee):
    _, principal = grantee
    before = Receipt.objects.count()
    response = mod.post(
        "/console/s/s1/grants/issue/",
        {
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["flying"],
            "idempotency_key": "z",
        },
    )
    assert response.status_code == 400
    assert Receipt.objects.count() == before


def test_a_revoked_grant_is_not_offered_for_revoke(mod, ops, grantee):
    _, principal = grantee
    gid = _review_grant(ops, principal)
    revoke_link = f'href="/console/s/s1/grants/{gid}/revoke/"'
    assert revoke_link in mod.get("/console/s/s1/grants/").content.decode()
    ops("memory.grants.revoke", {"space_id": "s1", "grant_id": gid})
    html = mod.get("/console/s/s1/grants/").content.decode()
    assert f'id="{gid}"' in html and revoke_link not in html
    page = mod.get(f"/console/s/s1/grants/{gid}/revoke/").content.decode()
    assert 'id="not-revocable"' in page and "already revoked" in page
    assert 'id="confirm-revoke"' not in page


def test_grantee_picker_names_the_principals_the_grants_list_shows(mod, ops, grantee):
    _, principal = grantee
    other_space = Space.objects.create(space_id="other", display_name="Other")
    _, outsider = make_user("outsider")
    issue_root_grant(other_space, outsider)
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["review"],
        },
    )
    response = mod.get("/console/s/s1/grants/")
    choices = dict(response.context["choices"])
    assert choices[principal.principal_id] == "Grantee"
    assert outsider.principal_id not in choices  # holds grants only in another space
    html = response.content.decode()
    assert f'<option value="{principal.principal_id}"' in html and 'name="grantee_pick"' in html


def test_issue_a_grant_to_a_picked_principal(mod, ops, grantee):
    _, principal = grantee
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["review"],
        },
    )
    issue(mod, grantee_pick=principal.principal_id, capabilities=["records_read"], key="pick")
    assert Grant.objects.filter(grantee=principal, capabilities=["records_read"]).count() == 1


def test_a_grant_without_a_grantee_is_refused_before_any_op(mod):
    before = (Receipt.objects.count(), Grant.objects.count())
    response = mod.post(
        "/console/s/s1/grants/issue/",
        {"capabilities": ["records_read"], "idempotency_key": "none"},
    )
    assert response.status_code == 400
    assert "Grantee: pick a principal or type its prn_… id." in response.content.decode()
    assert (Receipt.objects.count(), Grant.objects.count()) == before
