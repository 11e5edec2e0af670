"""The operators' commands of SPEC §8: one JSON object on stdout, non-zero on bad input."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import ApiToken, Grant, Principal, Space
from memory.models.principals import hash_token

pytestmark = pytest.mark.django_db


def run(*args) -> dict:
    out = StringIO()
    call_command("spoke", *args, stdout=out)
    return json.loads(out.getvalue())


def test_space_principal_token_root_grant_flow(api):
    assert run("create-space", "acme", "--display-name", "Acme") == {"space_id": "acme"}
    assert Space.objects.get(pk="acme").display_name == "Acme"
    made = run("create-principal", "app")
    principal = Principal.objects.get(pk=made["principal_id"])
    assert ApiToken.objects.get(principal=principal).token_hash == hash_token(made["token"])
    assert made["token"] not in {t.token_hash for t in ApiToken.objects.all()}
    grant = run("root-grant", "acme", made["principal_id"])
    g = Grant.objects.get(pk=grant["grant_id"])
    assert (g.parent_id, g.capabilities, g.shared_access) == (None, ["space_admin"], True)
    second = run("issue-token", made["principal_id"])["token"]
    answer = api.raw("/v1/ops/memory.spaces.list", b"{}", token=second)
    assert [s["space_id"] for s in answer.body["spaces"]] == ["acme"]
    assert run("revoke-token", second) == {"revoked": True}
    assert api.raw("/v1/ops/memory.spaces.list", b"{}", token=second).status == 401


@pytest.mark.parametrize(
    "args",
    [
        ("create-space", "bad id!"),
        ("issue-token", "prn_nope"),
        ("revoke-token", "smk_nope"),
        ("root-grant", "nospace", "prn_nope"),
        ("create-principal", "x", "--user", "nobody"),
    ],
)
def test_bad_input_is_a_command_error(args):
    with pytest.raises(CommandError):
        call_command("spoke", *args, stdout=StringIO())


def test_duplicate_space_is_an_error():
    run("create-space", "acme")
    with pytest.raises(CommandError):
        run("create-space", "acme")


def test_demo_prints_console_login_and_token(api):
    demo = run("demo")
    assert demo["console"]["username"] == "moderator" and demo["console"]["password"]
    answer = api.raw(
        "/v1/ops/memory.subjects.get",
        json.dumps({"space_id": "demo", "subject_id": "user:ada"}),
        token=demo["api"]["token"],
    )
    assert answer.status == 200 and answer.body["subject"]["kind"] == "acme:user"
