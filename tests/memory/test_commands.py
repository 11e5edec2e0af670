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


def test_set_rate_is_the_principals_own_limit(api):
    from django.core.cache import cache

    cache.clear()
    made = run("create-principal", "app")
    other = run("create-principal", "other")
    assert run("set-rate", made["principal_id"], "2/min") == {
        "principal_id": made["principal_id"],
        "rate": "2/min",
    }
    assert Principal.objects.get(pk=made["principal_id"]).rate == "2/min"
    statuses = [
        api.raw("/v1/ops/memory.describe", b"{}", token=made["token"]).status for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
    limited = api.raw("/v1/ops/memory.describe", b"{}", token=made["token"])
    assert limited.code == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    # another principal keeps the server's default
    assert api.raw("/v1/ops/memory.describe", b"{}", token=other["token"]).status == 200
    assert run("set-rate", made["principal_id"], "default")["rate"] == "default"
    assert Principal.objects.get(pk=made["principal_id"]).rate is None
    assert api.raw("/v1/ops/memory.describe", b"{}", token=made["token"]).status == 200
    cache.clear()


@pytest.mark.parametrize("rate", ["0/min", "ten/min", "5/fortnight", "5", "-1/s", ""])
def test_set_rate_refuses_a_bad_rate_and_changes_nothing(rate):
    made = run("create-principal", "app")
    with pytest.raises(CommandError):
        run("set-rate", made["principal_id"], rate)
    assert Principal.objects.get(pk=made["principal_id"]).rate is None


def test_set_rate_of_an_unknown_principal_is_an_error():
    with pytest.raises(CommandError):
        run("set-rate", "prn_nobody", "10/s")
