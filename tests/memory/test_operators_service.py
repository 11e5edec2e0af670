"""memory.services.operators: the one way principals, tokens, spaces and root grants are made
(`manage.py spoke`, the console's Operate page and the demo all call it). Refused input raises
OperatorError and writes nothing."""

import pytest
from django.contrib.auth import get_user_model

from memory.models import ApiToken, Grant, Principal, Space
from memory.models.principals import hash_token
from memory.services import operators
from memory.services.operators import OperatorError, UserNotLinkable

pytestmark = pytest.mark.django_db


def counts() -> tuple[int, int, int, int]:
    return (
        Space.objects.count(),
        Principal.objects.count(),
        ApiToken.objects.count(),
        Grant.objects.count(),
    )


def test_space_principal_token_and_root_grant():
    space = operators.create_space("acme", "Acme")
    assert space.display_name == "Acme"
    revision = space.revision
    assert operators.create_space("plain").display_name == "plain"
    principal, token = operators.create_principal_with_token(
        "app", token_label="first", root_grant_in=space
    )
    stored = ApiToken.objects.get(principal=principal)
    assert (stored.token_hash, stored.label) == (hash_token(token), "first")
    grant = Grant.objects.get(grantee=principal)
    assert (grant.parent_id, grant.issuer_id, grant.capabilities) == (
        None,
        principal.principal_id,
        ["space_admin"],
    )
    space.refresh_from_db()
    assert space.revision == revision + 1  # a root grant bumps the space revision like any grant
    second = operators.issue_token(operators.get_principal(principal.principal_id), "second")
    operators.revoke_token_value(second)
    assert ApiToken.objects.get(token_hash=hash_token(second)).revoked_at is not None
    assert ApiToken.objects.get(token_hash=hash_token(token)).revoked_at is None


def test_a_principal_linked_to_a_console_user():
    user = get_user_model().objects.create_user("ada")
    principal = operators.create_principal("Ada", Principal.USER, username="ada")
    assert principal.user == user and principal.kind == Principal.USER


@pytest.mark.parametrize(
    "call",
    [
        lambda: operators.create_space("bad id!"),
        lambda: operators.create_space(""),
        lambda: operators.get_space("nospace"),
        lambda: operators.get_principal("prn_nope"),
        lambda: operators.create_principal_with_token(""),
        lambda: operators.create_principal_with_token("x", kind="robot"),
        lambda: operators.revoke_token_value("smk_nope"),
    ],
)
def test_refused_input_is_an_operator_error_and_writes_nothing(call):
    operators.create_space("acme")
    before = counts()
    with pytest.raises(OperatorError):
        call()
    assert counts() == before


def test_a_duplicate_space_is_refused():
    operators.create_space("acme", "Acme")
    with pytest.raises(OperatorError, match="already exists"):
        operators.create_space("acme", "Other")
    assert Space.objects.get(pk="acme").display_name == "Acme"


def test_an_unknown_or_already_linked_user_is_refused_and_nothing_is_written():
    get_user_model().objects.create_user("ada")
    operators.create_principal("Ada", Principal.USER, username="ada")
    before = counts()
    for username in ("nobody", "ada"):
        with pytest.raises(UserNotLinkable):
            operators.create_principal_with_token("Ada again", Principal.USER, username=username)
    assert counts() == before


def test_revoking_a_revoked_token_is_refused():
    principal, token = operators.create_principal_with_token("app")
    operators.revoke_token_value(token)
    with pytest.raises(OperatorError, match="No such active token"):
        operators.revoke_token_value(token)
    assert operators.revoke_tokens(ApiToken.objects.filter(principal=principal)) == 0


def test_a_failing_root_grant_takes_the_principal_and_token_with_it(monkeypatch):
    space = operators.create_space("acme")
    before = counts()

    def broken(space, principal):
        raise RuntimeError("grant table unavailable")

    monkeypatch.setattr(operators, "issue_root_grant", broken)
    with pytest.raises(RuntimeError):
        operators.create_principal_with_token("app", root_grant_in=space)
    assert counts() == before
