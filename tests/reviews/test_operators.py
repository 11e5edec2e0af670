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
    client.post("/console/operate/s1/principals/", {"display_name": "Billing app"})
    principal = Principal.objects.get(display_name="Billing app")
    client.post("/console/operate/s1/tokens/", {"principal_id": principal.principal_id})
    first, second = ApiToken.objects.filter(principal=principal).order_by("pk")
    client.post("/console/operate/s1/tokens/revoke/", {"token_pk": second.pk, "confirmed": "1"})
    second.refresh_from_db()
    assert second.revoked_at is not None and first.revoked_at is None
    # a console user's own principal is a person: no token for the operator to hold
    # (tests/hostile/test_operator_reach.py has the attacks this closes)
    refused = client.post(
        "/console/operate/s1/tokens/",
        {"principal_id": moderator.principal.principal_id},
        follow=True,
    )
    assert "No token issued for" in refused.content.decode()
    assert not ApiToken.objects.filter(principal=moderator.principal).exists()


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
    client = logged_in(operator)
    client.post("/console/operate/s1/principals/", {"display_name": "New admin app"})
    principal = Principal.objects.get(display_name="New admin app")
    client.post("/console/operate/s1/root-grants/", {"principal_id": principal.principal_id})
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


def test_principals_without_grants_and_all_their_active_tokens_are_listed(operator, moderator):
    client = logged_in(operator)
    client.post("/console/operate/s1/principals/", {"display_name": "Loose app", "kind": "service"})
    loose = Principal.objects.get(display_name="Loose app")
    assert not Grant.objects.filter(grantee=loose).exists()
    other = Space.objects.create(space_id="other", display_name="Other")
    _, foreign = make_user("foreign")
    issue_root_grant(other, foreign)
    foreign.issue_token("foreign's")
    response = client.get("/console/operate/s1/")
    listed = {p.principal_id for p in response.context["principals"]}
    assert loose.principal_id in listed and moderator.principal.principal_id in listed
    assert foreign.principal_id not in listed  # its grants are all in another space
    (token,) = response.context["tokens"]
    assert token.principal_id == loose.principal_id
    html = response.content.decode()
    assert f'id="token-{token.pk}"' in html and "Loose app" in html
    assert token.token_hash[:8] in html and token.token_hash not in html


def test_revoke_a_token_asks_once_and_never_shows_its_value(operator):
    client = logged_in(operator)
    first = client.post(
        "/console/operate/s1/principals/", {"display_name": "Loose app"}, follow=True
    )
    value = first.context["new_token"]["token"]
    token = ApiToken.objects.get(principal__display_name="Loose app")
    unconfirmed = client.post(
        "/console/operate/s1/tokens/revoke/", {"token_pk": token.pk}, follow=True
    )
    assert "Nothing was revoked: tick the box" in unconfirmed.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None
    html = client.get("/console/operate/s1/").content.decode()
    assert value not in html and 'name="confirmed"' in html and "cannot be undone" in html
    done = client.post(
        "/console/operate/s1/tokens/revoke/", {"token_pk": token.pk, "confirmed": "1"}, follow=True
    )
    token.refresh_from_db()
    assert token.revoked_at is not None
    html = done.content.decode()
    assert "revoked; requests with it are refused" in html and value not in html
    assert f'id="token-{token.pk}"' not in html  # no longer active: not listed
    again = client.post(
        "/console/operate/s1/tokens/revoke/", {"token_pk": token.pk, "confirmed": "1"}, follow=True
    )
    assert "No such active token" in again.content.decode()


def test_a_token_of_a_principal_also_acting_elsewhere_is_not_offered_for_revoke(operator):
    other = Space.objects.create(space_id="other", display_name="Other")
    _, both = make_user("both")
    issue_root_grant(other, both)
    issue_root_grant(Space.objects.get(space_id="s1"), both)
    both.issue_token("both's")
    token = ApiToken.objects.get(principal=both)
    client = logged_in(operator)
    html = client.get("/console/operate/s1/").content.decode()
    row = html[html.index(f'id="token-{token.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "not yours to manage" in row and "<form" not in row
    for bad in ({"token_pk": token.pk, "confirmed": "1"}, {"token_pk": "x", "confirmed": "1"}):
        response = client.post("/console/operate/s1/tokens/revoke/", bad, follow=True)
        assert "No such active token is managed by you" in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


def test_root_grant_for_a_principal_picked_by_name(operator):
    client = logged_in(operator)
    client.post("/console/operate/s1/principals/", {"display_name": "Loose app"})
    loose = Principal.objects.get(display_name="Loose app")
    html = client.get("/console/operate/s1/").content.decode()
    assert f'<option value="{loose.principal_id}"' in html and 'name="principal_pick"' in html
    done = client.post(
        "/console/operate/s1/root-grants/", {"principal_pick": loose.principal_id}, follow=True
    )
    assert Grant.objects.filter(grantee=loose, parent__isnull=True, space_id="s1").count() == 1
    assert "made for Loose app" in done.content.decode()
    before = Grant.objects.count()
    refused = client.post("/console/operate/s1/root-grants/", {"principal_pick": ""}, follow=True)
    assert "No such principal is managed by you" in refused.content.decode()
    assert Grant.objects.count() == before


def test_operator_creates_an_agent_that_cannot_review_and_sees_its_token_once(operator):
    """Issue 41: `manage.py spoke create-agent` on the Operate page."""
    from memory.services.operators import AGENT_CAPABILITIES

    client = logged_in(operator)
    page = client.get("/console/operate/s1/").content.decode()
    assert 'id="agent-form"' in page and "nothing that reviews" in page
    response = client.post(
        "/console/operate/s1/agents/",
        {"display_name": "IDE agent", "subject_ids": "user:ada, user:lin"},
        follow=True,
    )
    principal = Principal.objects.get(display_name="IDE agent")
    (grant,) = Grant.objects.filter(grantee=principal, space_id="s1")
    assert grant.capabilities == list(AGENT_CAPABILITIES)
    assert grant.subject_ids == ["user:ada", "user:lin"]
    html = response.content.decode()
    assert 'id="new-token"' in html and "smk_" in html and "cannot review" in html
    assert principal.home_space_id == "s1"
    # its MCP URL and a host configuration come with it, the token named by variable only
    config = html[html.index('<pre class="config">') : html.index("</pre>")]
    assert '"url": "http://testserver/mcp/s1"' in config
    assert "${SPOKE_MEMORY_TOKEN}" in config and "smk_" not in config
    # a person's token is not an agent's: no MCP block
    person = client.post(
        "/console/operate/s1/principals/", {"display_name": "App", "kind": "service"}
    ).content.decode()
    assert 'id="new-token"' in person and 'id="new-agent-mcp"' not in person


def test_operator_agent_form_refuses_bad_subjects_and_makes_nothing(operator):
    client = logged_in(operator)
    before = Principal.objects.count()
    response = client.post(
        "/console/operate/s1/agents/", {"subject_ids": "ok:one bad<id>"}, follow=True
    )
    assert "A subject id is" in response.content.decode()
    assert Principal.objects.count() == before
