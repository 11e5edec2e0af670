"""Issue 26 items 1 and 10, from the console as a logged-in operator: an operator of one space
must never get a credential that reaches a space it does not operate, never take the
management of another space's principal away from its operators, and a token's clear value
must never be stored (not even in django_session until the next page view).

Who manages a principal (docs/operators.md "Who manages a principal"): the operators of its
home space, the space whose Operate page made it. They revoke its tokens; they issue new ones
only while every space it holds a grant in is one they operate, and never for a principal
linked to another console user (that is a person: a token would let the operator act as them).
Principals made outside the console have no home: the console issues them no token."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from guardian.shortcuts import assign_perm

from memory.models import ApiToken, Grant, Principal
from memory.models.principals import TOKEN_PREFIX, hash_token
from memory.ops.base import call
from memory.services import operators
from tests.conftest import make_space
from tests.reviews.conftest import logged_in, make_user

pytestmark = pytest.mark.django_db


def operator(name: str, *spaces):
    user = get_user_model().objects.create_user(name, is_staff=True)
    for space in spaces:
        assign_perm("memory.operate_space", user, space)
    return logged_in(user), user


@pytest.fixture
def world(db):
    a, b = make_space("sA"), make_space("sB")
    b_admin = Principal.objects.create(display_name="B admin")
    operators.issue_root_grant(b, b_admin)
    op_a, _ = operator("op-a", a)
    op_b, _ = operator("op-b", b)
    return {"a": a, "b": b, "b_admin": b_admin, "op_a": op_a, "op_b": op_b}


def create(client, space_id: str, name: str, **extra) -> Principal:
    client.post(f"/console/operate/{space_id}/principals/", {"display_name": name, **extra})
    return Principal.objects.get(display_name=name)


def issue(client, space_id: str, principal: Principal):
    return client.post(
        f"/console/operate/{space_id}/tokens/", {"principal_id": principal.principal_id}
    )


def grant_in_b(world, principal: Principal) -> None:
    """B's admin grants the principal in B, over the ops layer (as it would over the wire)."""
    call(
        world["b_admin"],
        "memory.grants.grant",
        {
            "space_id": "sB",
            "grantee_principal_id": principal.principal_id,
            "capabilities": ["records_read"],
            "shared_access": True,
        },
    )


def tokens(principal: Principal) -> int:
    return ApiToken.objects.filter(principal=principal).count()


def test_an_operator_gets_no_token_for_a_principal_it_did_not_make(world):
    """The finding: A's Operate page listed every principal with no grants (console users
    included); A's operator issued a token for one, B's admin later granted it in B, and A's
    operator read B."""
    made_by_b = create(world["op_b"], "sB", "B app")  # its one token went to B's operator
    loose = operators.create_principal("Made by manage.py")  # no home, no grants
    _, person = make_user("carol")  # a console user of B, not granted yet
    page = world["op_a"].get("/console/operate/sA/")
    listed = {p.principal_id for p in page.context["principals"]}
    for principal in (made_by_b, loose, person):
        assert principal.principal_id not in listed
        before = tokens(principal)
        refused = issue(world["op_a"], "sA", principal)
        assert refused.status_code == 302 and tokens(principal) == before
        grant_in_b(world, principal)
    assert tokens(made_by_b) == 1 and tokens(loose) == 0 and tokens(person) == 0


def test_linking_a_console_user_gives_the_operator_no_token_for_that_person(world):
    get_user_model().objects.create_user("dave")
    response = world["op_a"].post(
        "/console/operate/sA/principals/",
        {"display_name": "Dave", "kind": "user", "username": "dave"},
    )
    dave = Principal.objects.get(display_name="Dave")
    assert dave.user.username == "dave" and dave.home_space_id == "sA"
    assert tokens(dave) == 0 and TOKEN_PREFIX not in response.content.decode()
    issue(world["op_a"], "sA", dave)
    assert tokens(dave) == 0
    page = world["op_a"].get("/console/operate/sA/").content.decode()
    row = page[page.index(f'id="{dave.principal_id}"') :]
    assert "Issue token" not in row[: row.index("</tr>")]


def test_an_operator_may_link_itself_and_take_its_own_token(world):
    client, user = operator("op-self", world["a"])
    response = client.post(
        "/console/operate/sA/principals/",
        {"display_name": "Me", "kind": "user", "username": "op-self"},
    )
    me = Principal.objects.get(display_name="Me")
    assert me.user == user and tokens(me) == 1
    assert TOKEN_PREFIX in response.content.decode()


def test_an_operator_cannot_root_grant_another_spaces_principal(world):
    """The reverse takeover: A's operator root-granted B's service principal, so B's operator
    could no longer revoke that principal's tokens."""
    b_app = create(world["op_b"], "sB", "B app", root_grant="on")
    legacy = operators.create_principal("Legacy B service")  # made by manage.py, granted in B
    operators.issue_root_grant(world["b"], legacy)
    legacy.issue_token("legacy")
    for principal in (b_app, legacy):
        world["op_a"].post(
            "/console/operate/sA/root-grants/", {"principal_id": principal.principal_id}
        )
        assert not Grant.objects.filter(grantee=principal, space_id="sA").exists()
        token = ApiToken.objects.get(principal=principal)
        world["op_b"].post(
            "/console/operate/sB/tokens/revoke/", {"token_pk": token.pk, "confirmed": "1"}
        )
        token.refresh_from_db()
        assert token.revoked_at is not None


def test_a_grant_elsewhere_stops_new_tokens_but_never_revocation_by_the_home_operator(world):
    a_app = create(world["op_a"], "sA", "A app", root_grant="on")
    grant_in_b(world, a_app)  # B trusts A's principal: a choice of B's admin
    issue(world["op_a"], "sA", a_app)
    assert tokens(a_app) == 1  # no new credential reaching B for A's operator
    token = ApiToken.objects.get(principal=a_app)
    world["op_a"].post(
        "/console/operate/sA/tokens/revoke/", {"token_pk": token.pk, "confirmed": "1"}
    )
    token.refresh_from_db()
    assert token.revoked_at is not None
    both, _ = operator("op-both", world["a"], world["b"])
    issue(both, "sA", a_app)
    assert ApiToken.objects.filter(principal=a_app, revoked_at__isnull=True).count() == 1


def sessions_hold_a_token() -> bool:
    return any(TOKEN_PREFIX in str(s.get_decoded()) for s in Session.objects.all())


def test_a_new_token_is_shown_in_the_answer_and_never_stored_in_the_session(world):
    """Item 10: the clear token sat in django_session after "Issue token" until the next page
    view. It is rendered in the POST's own answer (not cacheable) and stored nowhere."""
    op_a = world["op_a"]
    made = op_a.post("/console/operate/sA/principals/", {"display_name": "A app"})
    assert not sessions_hold_a_token()
    app = Principal.objects.get(display_name="A app")
    issued = issue(op_a, "sA", app)
    assert not sessions_hold_a_token()
    for response in (made, issued):
        assert response.status_code == 200 and "no-store" in response["Cache-Control"]
        value = response.context["new_token"]["token"]
        assert ApiToken.objects.filter(principal=app, token_hash=hash_token(value)).exists()
        assert value in response.content.decode()
    assert TOKEN_PREFIX not in op_a.get("/console/operate/sA/").content.decode()
    assert not sessions_hold_a_token()
