"""Console personas: Django users linked to principals. `moderator` holds a root grant on s1
(the suite's `space`); `stranger` is a logged-in user whose principal has no grant there."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from memory.models import Principal
from memory.ops.base import call
from memory.services.operators import issue_root_grant

PASSWORD = "correct horse battery staple"  # noqa: S105


def make_user(username: str, staff: bool = False, superuser: bool = False) -> tuple:
    user = get_user_model().objects.create_user(
        username, password=PASSWORD, is_staff=staff or superuser, is_superuser=superuser
    )
    principal = Principal.objects.create(
        display_name=username.title(), kind=Principal.USER, user=user
    )
    return user, principal


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def moderator(space):
    user, principal = make_user("moderator")
    issue_root_grant(space, principal)
    return user


@pytest.fixture
def mod(moderator) -> Client:
    return logged_in(moderator)


@pytest.fixture
def stranger(space):
    return make_user("stranger")[0]


@pytest.fixture
def ops(moderator):
    """Call an op as the moderator (test data goes through the ops layer)."""

    def run(op: str, body: dict) -> dict:
        return call(moderator.principal, op, body)

    return run


SHARED = {"scope": "shared"}


def ctx(context_id: str) -> dict:
    return {"scope": "context", "context_id": context_id}


@pytest.fixture
def capture(ops):
    """Capture items for a subject (ensured first); returns the candidate ids in item order."""

    def run(*texts: str, subject: str = "u1", placement: dict | None = None, **item) -> list[str]:
        ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": subject})
        ids: list[str] = []
        for start in range(0, len(texts), 32):  # max_capture_items per call
            receipt = ops(
                "memory.capture",
                {
                    "space_id": "s1",
                    "subject_id": subject,
                    "capture_scope": {"placement": placement or SHARED},
                    "items": [{"content": {"text": t}, **item} for t in texts[start : start + 32]],
                },
            )["receipt"]
            ids += [r["id"] for r in receipt["refs"] if r["type"] == "candidate"]
        return ids

    return run


@pytest.fixture
def record(ops):
    """Author a record (subject ensured first); returns its id."""

    def make(
        text: str, kind: str = "fact", subject: str = "u1", placement: dict | None = None
    ) -> str:
        ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": subject})
        receipt = ops(
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": subject,
                "kind": kind,
                "placement": placement or SHARED,
                "content": {"text": text},
            },
        )["receipt"]
        return (
            receipt["refs"][0]["id"]
            if receipt["refs"][0]["type"] == "record"
            else receipt["refs"][-1]["id"]
        )

    return make


@pytest.fixture
def give(ops):
    """Issue a grant from the moderator to a console user; returns the grant id."""

    def issue(user, *capabilities: str, **grant) -> str:
        body = {
            "space_id": "s1",
            "grantee_principal_id": user.principal.principal_id,
            "capabilities": list(capabilities),
            **grant,
        }
        return ops("memory.grants.grant", body)["receipt"]["refs"][0]["id"]

    return issue
