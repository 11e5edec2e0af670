"""memory.profile.get / .update (docs/protocol.md#model-profiledocument, #ops): honest empty, create-only without a revision,
CAS with one, the subject's state gates, and capability coverage without placement."""

import pytest
from django.test import override_settings

from memory.models import ProfileDocument, Receipt, Space, Subject
from memory.wire.validation import catalog, schema_errors

pytestmark = pytest.mark.django_db


@pytest.fixture
def profile(api, admin, update):
    def get(body=None, who=None, expect=200):
        answer = api(
            who or admin,
            "memory.profile.get",
            {"space_id": "s1", "subject_id": "u1", **(body or {})},
        )
        assert answer.status == expect, answer.body
        if expect == 200:
            assert (
                schema_errors(catalog().ops["memory.profile.get"].response_validator, answer.body)
                == []
            )
        return answer

    return get


@pytest.fixture
def update(api, admin, ensure_subject):
    ensure_subject("u1")

    def put(kind="preferences", text="Prefers email.", who=None, expect=200, **extra):
        body = {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": kind,
            "content": {"text": text},
            **extra,
        }
        answer = api(who or admin, "memory.profile.update", body)
        assert answer.status == expect, answer.body
        return answer

    return put


def test_nothing_yet_is_an_honest_empty(profile):
    assert profile().body == {"profile": {"subject_id": "u1", "documents": [], "absent_kinds": []}}
    asked = profile({"kinds": ["personality", "preferences"]}).body["profile"]
    assert asked == {
        "subject_id": "u1",
        "documents": [],
        "absent_kinds": ["personality", "preferences"],
    }


@override_settings(SPOKE_MEMORY_REQUIRED_PROFILE_KINDS=["personality", "preferences"])
def test_default_kinds_are_present_plus_required(profile, update):
    update(kind="hobbies", text="Chess")
    body = profile().body["profile"]
    assert [d["kind"] for d in body["documents"]] == ["hobbies"]
    assert body["absent_kinds"] == ["personality", "preferences"]


def test_create_then_read_back(profile, update, admin, space):
    before = (Subject.objects.get(subject_id="u1").revision, Space.objects.get(pk="s1").revision)
    receipt = update(text="Prefers email.", idempotency_key="k1").receipt
    assert receipt["status"] == "committed"
    assert receipt["refs"] == [{"type": "profile_document", "id": "preferences", "revision": 1}]
    assert Subject.objects.get(subject_id="u1").revision == before[0] + 1
    assert Space.objects.get(pk="s1").revision == before[1] + 1
    body = profile({"kinds": ["preferences", "personality"]}).body["profile"]
    doc = body["documents"][0]
    assert doc["kind"] == "preferences" and doc["content"] == {"text": "Prefers email."}
    assert (
        doc["revision"] == 1 and doc["author_principal_id"] == admin.id and doc["space_id"] == "s1"
    )
    assert body["absent_kinds"] == ["personality"]


def test_create_over_an_existing_document_conflicts(update):
    update()
    answer = update(text="again", expect=409)
    assert answer.code == "REVISION_CONFLICT" and answer.error["details"]["current_revision"] == 1
    assert ProfileDocument.objects.get().content == {"text": "Prefers email."}


def test_update_is_compare_and_set(update, profile, persona_factory, grant_to):
    update()
    writer, _ = grant_to(capabilities=["profile_write"])
    receipt = update(text="Prefers phone.", expected_revision=1, who=writer).receipt
    assert receipt["refs"] == [{"type": "profile_document", "id": "preferences", "revision": 2}]
    stale = update(text="lost", expected_revision=1, expect=409)
    assert stale.code == "REVISION_CONFLICT" and stale.error["details"]["current_revision"] == 2
    doc = profile().body["profile"]["documents"][0]
    assert doc["content"] == {"text": "Prefers phone."} and doc["revision"] == 2
    assert doc["author_principal_id"] == writer.id


def test_update_of_a_missing_document_is_not_found(update):
    answer = update(expected_revision=1, expect=404)
    assert answer.error["details"]["resource"] == "profile_document"
    assert not ProfileDocument.objects.exists()


def test_profile_content_takes_no_cognition_member_and_has_a_byte_budget(
    api, admin, update, settings
):
    cognition = api(
        admin,
        "memory.profile.update",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "personality",
            "content": {"text": "t", "cognition": []},
        },
    )
    assert cognition.status == 400 and cognition.error["details"]["reason"] == "schema"
    with override_settings(
        SPOKE_MEMORY_LIMITS={**settings.SPOKE_MEMORY_LIMITS, "max_content_bytes": 50}
    ):
        big = update(text="x" * 100, expect=413, idempotency_key="k-big")
    assert big.code == "CONTENT_TOO_LARGE" and big.error["details"]["limit"] == 50
    assert not ProfileDocument.objects.exists()
    assert not Receipt.objects.filter(op="memory.profile.update").exists()
    update(text="ok", idempotency_key="k-big")  # the failed request consumed nothing


def test_structured_content_round_trips(api, admin, profile):
    content = {"text": "t", "structured": {"tone": "dry", "n": [1, 2]}}
    answer = api(
        admin,
        "memory.profile.update",
        {"space_id": "s1", "subject_id": "u1", "kind": "style", "content": content},
    )
    assert answer.status == 200
    assert profile({"kinds": ["style"]}).body["profile"]["documents"][0]["content"] == content


@pytest.mark.parametrize(
    "state, code", [(Subject.FENCED, "SUBJECT_FENCED"), (Subject.ARCHIVED, "SUBJECT_ARCHIVED")]
)
def test_fenced_or_archived_subject_blocks_update_not_read(profile, update, state, code):
    update()
    Subject.objects.filter(subject_id="u1").update(state=state)
    assert update(text="new", expected_revision=1, expect=409).code == code
    assert profile().body["profile"]["documents"][0]["revision"] == 1


def test_frozen_space_blocks_update(profile, update):
    Space.objects.filter(pk="s1").update(state=Space.FROZEN)
    assert update(expect=409).code == "SPACE_FROZEN"
    assert not ProfileDocument.objects.exists()


def test_context_fence_does_not_apply_to_profiles(profile, update):
    Subject.objects.filter(subject_id="u1").update(fenced_context_ids=["c1"])
    update()
    assert ProfileDocument.objects.count() == 1


def test_capabilities_cover_the_subject_regardless_of_placement(
    profile, update, grant_to, outsider
):
    update()
    reader, _ = grant_to(capabilities=["profile_read"], context_ids=["c9"], subject_ids=["u1"])
    assert [d["kind"] for d in profile(who=reader).body["profile"]["documents"]] == ["preferences"]
    denied = update(text="x", expected_revision=1, who=reader, expect=403)
    assert (
        denied.code == "PERMISSION_DENIED"
        and denied.error["details"]["capability"] == "profile_write"
    )
    recaller, _ = grant_to(capabilities=["recall"])
    assert profile(who=recaller, expect=403).error["details"]["capability"] == "profile_read"
    other, _ = grant_to(capabilities=["profile_read", "profile_write"], subject_ids=["u2"])
    assert profile(who=other, expect=404).error["details"]["resource"] == "subject"
    assert update(who=other, kind="x", expect=404).error["details"]["resource"] == "subject"
    assert profile(who=outsider, expect=404).error["details"]["resource"] == "space"


def test_subject_never_ensured_is_not_found(api, admin):
    get = api(admin, "memory.profile.get", {"space_id": "s1", "subject_id": "ghost"})
    assert get.status == 404 and get.error["details"]["resource"] == "subject"
    put = api(
        admin,
        "memory.profile.update",
        {"space_id": "s1", "subject_id": "ghost", "kind": "k", "content": {"text": "t"}},
    )
    assert put.status == 404 and put.error["details"]["resource"] == "subject"


def test_idempotent_replay_returns_the_same_receipt(update):
    first = update(idempotency_key="same").receipt
    second = update(idempotency_key="same").receipt
    assert first == second and ProfileDocument.objects.count() == 1
    assert update(text="other", idempotency_key="same", expect=409).code == "IDEMPOTENCY_KEY_REUSED"
