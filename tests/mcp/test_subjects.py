"""Issue 41, item 1: subjects for agents. An agent's first conversation is with someone new: a
`remember` about a subject never seen before ensures it first when the caller's grants hold
`subjects_write` for it (the ensure op through the same edge, its own receipt, idempotent);
otherwise the answer names the missing grant, and a caller whose grants do not cover the id at
all gets the same NOT_FOUND as for a forbidden subject. The reads (recall, list_memories,
get_profile) of a never-seen subject the caller could ensure answer empty. The SDK's own client
against gunicorn, as in test_tools.py."""

from __future__ import annotations

import pytest

from memory.models import Candidate, IdempotencyKey, Receipt, Subject
from tests.mcp.test_tools import AGENT_CAPS, promote_over_rest

pytestmark = pytest.mark.django_db(transaction=True)

ENSURING = [*AGENT_CAPS, "subjects_write"]


def counts() -> tuple[int, int, int, int]:
    return (
        Subject.objects.count(),
        Candidate.objects.count(),
        Receipt.objects.count(),
        IdempotencyKey.objects.count(),
    )


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_remember_about_a_new_subject_ensures_it_then_captures(
    transport, connect, api, admin, space, grant_to
):
    agent_p, _ = grant_to(capabilities=ENSURING, shared_access=True)
    agent = connect(agent_p, transport)
    assert not Subject.objects.filter(subject_id="user:new").exists()

    # reads first: a subject this caller could ensure answers empty, creating nothing
    before = counts()
    found = agent.ok("recall", subject_id="user:new", query="anything about them?")
    assert found["results"] == [] and found["total_eligible"] == 0
    assert agent.ok("list_memories", subject_id="user:new")["memories"] == []
    profile = agent.ok("get_profile", subject_id="user:new", kinds=["preferences"])
    assert profile == {
        "subject_id": "user:new",
        "documents": [],
        "absent_kinds": ["preferences"],
        "untrusted_fields": ["documents[].content"],
    }
    assert counts() == before

    first = agent.ok("remember", subject_id="user:new", text="Noor prefers mornings.")
    subject = Subject.objects.get(space=space, subject_id="user:new")
    ensured = Receipt.objects.get(receipt_id=first["subject_created_receipt_id"])
    assert ensured.principal_id == agent_p.id and ensured.op == "memory.subjects.ensure"
    assert Candidate.objects.get(candidate_id=first["candidate_id"]).subject_id == subject.pk

    # the second remember finds the subject: no second ensure
    second = agent.ok("remember", subject_id="user:new", text="Noor has a cat named Fig.")
    assert second["subject_created_receipt_id"] is None
    assert Subject.objects.filter(subject_id="user:new").count() == 1

    promote_over_rest(api, admin, first["candidate_id"])
    found = agent.ok("recall", subject_id="user:new", query="when does Noor prefer?")
    assert [r["text"] for r in found["results"]] == ["Noor prefers mornings."]


def test_a_retried_remember_with_one_key_ensures_and_captures_once(connect, grant_to):
    agent_p, _ = grant_to(capabilities=ENSURING, shared_access=True)
    agent = connect(agent_p)
    args = {"subject_id": "user:kai", "text": "Kai is vegetarian.", "idempotency_key": "k-kai-1"}
    first = agent.ok("remember", **args)
    again = agent.ok("remember", **args)
    assert again["candidate_id"] == first["candidate_id"]
    assert Subject.objects.filter(subject_id="user:kai").count() == 1
    assert Candidate.objects.filter(subject=Subject.objects.get(subject_id="user:kai")).count() == 1


def test_without_subjects_write_remember_names_the_missing_grant(connect, api, grant_to):
    """The caller covers the id (so it may learn the subject does not exist), but no grant of it
    holds subjects_write: PERMISSION_DENIED naming subjects_write, nothing written."""
    agent_p, _ = grant_to(capabilities=AGENT_CAPS, shared_access=True)
    agent = connect(agent_p)
    before = counts()
    error = agent.error("remember", subject_id="user:new", text="x")
    assert error["code"] == "PERMISSION_DENIED"
    assert error["details"] == {"capability": "subjects_write"}
    assert "subjects_write" in error["message"] and "x" not in error["message"].split()
    # reads: it does not exist yet, said so (this caller could see it if it existed)
    error = agent.error("recall", subject_id="user:new", query="x")
    assert error["code"] == "NOT_FOUND" and "subjects_write" in error["message"]
    assert counts() == before


def test_a_caller_whose_grant_does_not_cover_the_id_learns_nothing(
    connect, api, ensure_subject, grant_to
):
    """Absent and forbidden still look the same: a grant narrowed to u1, holding subjects_write,
    asks about u2 (existing) and u3 (absent) and gets the ops' one NOT_FOUND for both."""
    ensure_subject("u2")
    narrow, _ = grant_to(capabilities=ENSURING, subject_ids=["u1"], shared_access=True)
    agent = connect(narrow)
    before = counts()
    answers = []
    for subject_id in ("u2", "u3"):
        for tool, args in (
            ("remember", {"text": "x"}),
            ("recall", {"query": "x"}),
            ("list_memories", {}),
            ("get_profile", {}),
        ):
            error = agent.error(tool, subject_id=subject_id, **args)
            answers.append((subject_id, tool, error))
    assert {(e["code"], e["message"]) for _, _, e in answers} == {
        ("NOT_FOUND", "No such subject is visible to the caller.")
    }
    assert counts() == before
    # and the subject it does cover comes into being on its remember
    agent.ok("remember", subject_id="u1", text="Ada likes jazz.")
    assert Subject.objects.filter(subject_id="u1").exists()


def test_a_read_without_its_capability_is_refused_even_for_a_new_subject(connect, grant_to):
    agent_p, _ = grant_to(capabilities=["capture", "subjects_write"], shared_access=True)
    agent = connect(agent_p)
    error = agent.error("recall", subject_id="user:new", query="x")
    assert (error["code"], error["details"]) == ("PERMISSION_DENIED", {"capability": "recall"})


def test_the_tool_descriptions_say_what_a_subject_is(connect, grant_to):
    agent_p, _ = grant_to(capabilities=ENSURING, shared_access=True)
    agent = connect(agent_p)
    tools = {t.name: t for t in agent.portal.call(agent.client.list_tools).tools}
    remember = tools["remember"]
    assert "subjects_write" in remember.description
    assert "stable id" in remember.input_schema["properties"]["subject_id"]["description"]
    assert "never seen before" in tools["recall"].description
