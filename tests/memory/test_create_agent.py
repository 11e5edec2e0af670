"""Issue 41, item 2: an agent's principal that cannot review. `manage.py spoke create-agent SPACE
[--subjects ...]`, the demo's agent (var/demo.json `agent`), and the same on the console's
Operate page: a token and one grant to capture, recall, read records and profiles and create
subjects; review, candidates, grants and every write beside capture are refused."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import ApiToken, Candidate, Grant, Principal, Subject
from memory.models.principals import hash_token
from memory.services.operators import AGENT_CAPABILITIES

pytestmark = pytest.mark.django_db


def run(*args) -> dict:
    out = StringIO()
    call_command("spoke", *args, stdout=out)
    return json.loads(out.getvalue())


def op(api, token: str, name: str, body: dict):
    return api.raw(f"/v1/ops/{name}", json.dumps(body), token=token)


def capture(subject_id: str = "user:new") -> dict:
    return {
        "space_id": "s1",
        "subject_id": subject_id,
        "capture_scope": {"placement": {"scope": "shared"}},
        "items": [{"content": {"text": "Noor prefers mornings."}}],
    }


def test_create_agent_makes_a_principal_that_captures_but_cannot_review(api, space, admin):
    made = run("create-agent", "s1", "--name", "Support bot")
    principal = Principal.objects.get(pk=made["principal_id"])
    assert principal.display_name == "Support bot" and principal.home_space_id == "s1"
    assert ApiToken.objects.get(principal=principal).token_hash == hash_token(made["token"])
    grant = Grant.objects.get(pk=made["grant_id"], grantee=principal)
    assert (
        grant.capabilities == list(AGENT_CAPABILITIES) and "space_admin" not in grant.capabilities
    )
    assert (grant.subject_ids, grant.context_ids, grant.shared_access) == (None, None, True)

    token = made["token"]
    assert (
        op(
            api, token, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:new"}
        ).status
        == 200
    )
    captured = op(api, token, "memory.capture", capture())
    assert captured.status == 200, captured.body
    cid = next(r["id"] for r in captured.body["receipt"]["refs"] if r["type"] == "candidate")
    review = {"space_id": "s1", "candidate_id": cid, "decision": {"action": "promote"}}
    refused = op(api, token, "memory.candidates.review", review)
    # it cannot read candidates, so the candidate is not even visible to it
    assert (refused.status, refused.code) == (404, "NOT_FOUND")
    assert Candidate.objects.get(candidate_id=cid).state == "pending"
    listed = op(api, token, "memory.candidates.list", {"space_id": "s1"})
    assert listed.code == "PERMISSION_DENIED"
    grant_body = {
        "space_id": "s1",
        "grantee_principal_id": made["principal_id"],
        "capabilities": ["review"],
    }
    assert op(api, token, "memory.grants.grant", grant_body).code == "PERMISSION_DENIED"


def test_create_agent_narrowed_to_subjects(api, space):
    made = run("create-agent", "s1", "--subjects", "user:ada", "user:lin")
    assert Grant.objects.get(pk=made["grant_id"]).subject_ids == ["user:ada", "user:lin"]
    ok = op(
        api, made["token"], "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:lin"}
    )
    assert ok.status == 200
    other = op(
        api, made["token"], "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:zed"}
    )
    assert other.code == "PERMISSION_DENIED"
    assert not Subject.objects.filter(subject_id="user:zed").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("create-agent", "nospace"),
        ("create-agent", "s1", "--subjects", "bad id!"),
        ("create-agent", "s1", "--subjects", "x" * 129),
        ("create-agent", "s1", "--name", "   "),
    ],
)
def test_create_agent_refuses_bad_input_and_makes_nothing(space, args):
    before = (Principal.objects.count(), ApiToken.objects.count(), Grant.objects.count())
    with pytest.raises(CommandError):
        call_command("spoke", *args, stdout=StringIO())
    assert (Principal.objects.count(), ApiToken.objects.count(), Grant.objects.count()) == before


def test_the_demo_carries_an_agent_token_that_cannot_review(api, tmp_path):
    saved = tmp_path / "demo.json"
    first = run("demo", "--save", str(saved))
    agent = first["agent"]
    assert json.loads(saved.read_text())["agent"]["token"] == agent["token"]
    grant = Grant.objects.get(grantee_id=agent["principal_id"], space_id="demo")
    assert grant.capabilities == list(AGENT_CAPABILITIES)
    token = agent["token"]
    pending = op(api, token, "memory.candidates.list", {"space_id": "demo"})
    assert pending.code == "PERMISSION_DENIED"
    found = op(
        api,
        token,
        "memory.recall",
        {
            "space_id": "demo",
            "subject_id": "user:ada",
            "query": {"text": "how does Ada like answers?"},
        },
    )
    assert found.status == 200 and found.body["recall"]["results"]
    # re-run: the same agent and token, no second agent
    second = run("demo", "--save", str(saved))
    assert second["agent"] == agent
    assert Principal.objects.filter(display_name="Demo agent").count() == 1
    # its token lost (a fresh demo.json): the same agent, a new token, the old one retired
    third = run("demo")
    assert third["agent"]["principal_id"] == agent["principal_id"]
    assert third["agent"]["token"] != token
    assert op(api, token, "memory.describe", {}).status == 401
