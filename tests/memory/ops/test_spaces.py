"""memory.describe and memory.spaces.* (docs/protocol.md#model-memoryspace, #ops, #authorization): what a space publishes, who sees it,
freezing, and the space revision moving by one per mutation."""

import pytest

from memory.models import Space

pytestmark = pytest.mark.django_db


def test_describe_publishes_limits_and_engine(api, admin, settings):
    provider = api(admin, "memory.describe", {}).body["provider"]
    assert provider["protocol_version"] == "1"
    assert provider["limits"] == settings.SPOKE_MEMORY_LIMITS
    assert provider["engine_policy_version"] == settings.SPOKE_MEMORY_ENGINE
    assert provider["served_capabilities"] == sorted(settings.SPOKE_MEMORY_SERVED_CAPABILITIES)


def test_spaces_list_shows_only_spaces_with_an_effective_grant(api, admin, outsider, space):
    from tests.conftest import make_space

    make_space("other")
    spaces = api(admin, "memory.spaces.list", {}).body["spaces"]
    assert [s["space_id"] for s in spaces] == ["s1"]
    assert spaces[0]["pending_receipts"] == 0
    assert spaces[0]["authority_generation"] == 1
    assert api(outsider, "memory.spaces.list", {}).body == {"spaces": []}


def test_freeze_blocks_mutations_and_unfreeze_reopens(api, admin, space):
    r = api(admin, "memory.spaces.freeze", {"space_id": "s1", "reason": "migration"})
    assert r.receipt["status"] == "committed"
    assert r.receipt["refs"][0]["type"] == "space"
    listed = api(admin, "memory.spaces.list", {}).body["spaces"][0]
    assert listed["state"] == "frozen" and listed["freeze_reason"] == "migration"
    blocked = api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    assert (blocked.status, blocked.code) == (409, "SPACE_FROZEN")
    again = api(admin, "memory.spaces.freeze", {"space_id": "s1"})
    assert again.code == "SPACE_FROZEN"
    assert api(admin, "memory.spaces.unfreeze", {"space_id": "s1"}).status == 200
    assert (
        api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).status == 200
    )


def test_freeze_needs_space_admin(api, grant_to, ensure_subject):
    narrow, _ = grant_to(capabilities=["records_read"])
    answer = api(narrow, "memory.spaces.freeze", {"space_id": "s1"})
    assert (answer.status, answer.code) == (403, "PERMISSION_DENIED")
    assert answer.error["details"]["capability"] == "space_admin"


def test_unknown_space_and_ungranted_space_look_the_same(api, admin, outsider, space):
    a = api(outsider, "memory.spaces.freeze", {"space_id": "s1"})
    b = api(admin, "memory.spaces.freeze", {"space_id": "nope"})
    assert a.status == b.status == 404
    assert a.body == b.body


def test_every_mutation_moves_space_revision_by_one(api, admin, space):
    start = Space.objects.get(pk="s1").revision
    r1 = api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).receipt
    r2 = api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u2"}).receipt
    assert (r1["space_revision"], r2["space_revision"]) == (start + 1, start + 2)
    assert Space.objects.get(pk="s1").revision == start + 2
