"""Operator pages: guardian's memory.operate_space per space, with no implicit superuser pass."""

import pytest
from guardian.shortcuts import assign_perm

from memory.models import ApiToken, Grant, Principal, Space
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import logged_in, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(space):
    user, _ = make_user("operator", staff=True)
    assign_perm("memory.operate_space", user, space)
    return user


def test_operator_creates_a_principal_with_a_root_grant_and_sees_its_token_once(operator):
    client = logged_in(operator)
    response = client.post(
        "/console/operate/s1/principals/",
        {"display_name": "Billing app", "kind": "service", "root_grant": "on"},
        follow=True,
    )
    principal = Principal.objects.get(display_name="Billing app")
    assert Grant.objects.filter(grantee=principal, parent__isnull=True, space_id="s1").count() == 1
    html = response.content.decode()
    assert 'id="new-token"' in html and "smk_" in html
    assert 'id="new-token"' not in client.get("/console/operate/s1/").content.decode()


def test_operator_issues_and_revokes_a_token(operator, moderator):
    client = logged_in(operator)
    principal = moderator.principal
    client.post("/console/operate/s1/tokens/", {"principal_id": principal.principal_id})
    token = ApiToken.objects.get(principal=principal)
    client.post("/console/operate/s1/tokens/revoke/", {"token_pk": token.pk})
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_operator_cannot_touch_principals_of_other_spaces(operator):
    other = Space.objects.create(space_id="other", display_name="Other")
    _, foreign = make_user("foreign")
    issue_root_grant(other, foreign)
    client = logged_in(operator)
    response = client.post(
        "/console/operate/s1/tokens/", {"principal_id": foreign.principal_id}, follow=True
    )
    assert b"No such principal is managed by you" in response.content
    assert not ApiToken.objects.filter(principal=foreign).exists()


def test_root_grant_form(operator):
    _, principal = make_user("newadmin")
    logged_in(operator).post(
        "/console/operate/s1/root-grants/", {"principal_id": principal.principal_id}
    )
    grant = Grant.objects.get(grantee=principal)
    assert grant.parent_id is None and grant.capabilities == ["space_admin"]


def test_operator_of_one_space_is_not_operator_of_another(operator):
    Space.objects.create(space_id="other", display_name="Other")
    client = logged_in(operator)
    assert client.get("/console/operate/other/").status_code == 404
    assert (
        client.post("/console/operate/other/root-grants/", {"principal_id": "x"}).status_code == 404
    )


def test_non_staff_with_the_permission_is_not_an_operator(space):
    user, _ = make_user("clerk")
    assign_perm("memory.operate_space", user, space)
    assert logged_in(user).get("/console/operate/s1/").status_code == 404


def test_superuser_is_not_silently_an_operator(space):
    user, _ = make_user("root", superuser=True)
    client = logged_in(user)
    assert client.get("/console/operate/s1/").status_code == 404
    assign_perm("memory.operate_space", user, space)
    assert client.get("/console/operate/s1/").status_code == 200


def test_space_admin_has_guardian_object_permissions(space):
    user, _ = make_user("root", superuser=True)
    client = logged_in(user)
    page = client.get(f"/admin/memory/space/{space.pk}/permissions/")
    assert page.status_code == 200
    assert b"Object permissions" in page.content


def test_grants_are_read_only_in_the_admin(moderator):
    user, _ = make_user("root", superuser=True)
    client = logged_in(user)
    grant = Grant.objects.first()
    assert client.get("/admin/memory/grant/add/").status_code == 403
    page = client.get(f"/admin/memory/grant/{grant.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content


def test_operate_page_shows_each_principals_rate(operator, moderator):
    client = logged_in(operator)
    principal = moderator.principal
    assert "<td>default</td>" in client.get("/console/operate/s1/").content.decode()
    principal.rate = "120/s"
    principal.save(update_fields=["rate"])
    assert "<td>120/s</td>" in client.get("/console/operate/s1/").content.decode()


def test_a_refused_principal_writes_nothing_and_says_why(operator):
    client = logged_in(operator)
    before = (Principal.objects.count(), ApiToken.objects.count(), Grant.objects.count())
    for data, message in [
        ({"display_name": "", "kind": "service"}, "needs a display name"),
        ({"display_name": "x", "kind": "robot"}, "needs a display name"),
        ({"display_name": "x", "kind": "user", "username": "nobody"}, "does not exist or is"),
        ({"display_name": "x", "kind": "user", "username": "operator"}, "does not exist or is"),
    ]:
        response = client.post("/console/operate/s1/principals/", data, follow=True)
        assert message in response.content.decode()
    assert (Principal.objects.count(), ApiToken.objects.count(), Grant.objects.count()) == before
