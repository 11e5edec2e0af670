"""memory.subjects.* (docs/protocol.md#model-subject, #ops, #authorization): ensure as get-or-create, reads under coverage, fences,
archive, and the subject state gates."""

import pytest

from memory.models import Subject

pytestmark = pytest.mark.django_db


def test_ensure_is_get_or_create_with_kind_check(api, admin, space):
    body = {"space_id": "s1", "subject_id": "u1", "kind": "acme:user"}
    first = api(admin, "memory.subjects.ensure", body).receipt
    second = api(admin, "memory.subjects.ensure", body).receipt
    assert first["refs"] == second["refs"] == [{"type": "subject", "id": "u1", "revision": 1}]
    assert Subject.objects.count() == 1
    conflict = api(admin, "memory.subjects.ensure", {**body, "kind": "acme:bot"})
    assert (conflict.status, conflict.code) == (409, "SUBJECT_KIND_CONFLICT")


def test_ensure_rejects_a_malformed_kind(api, admin, space):
    answer = api(
        admin,
        "memory.subjects.ensure",
        {"space_id": "s1", "subject_id": "u1", "kind": "NoNamespace"},
    )
    assert answer.code == "invalid_input"


def test_subjects_get_and_never_ensured_subject(api, admin, ensure_subject):
    ensure_subject("u1", kind="acme:user", extensions={"acme": {"tier": "gold"}})
    subject = api(admin, "memory.subjects.get", {"space_id": "s1", "subject_id": "u1"}).body[
        "subject"
    ]
    assert subject["kind"] == "acme:user" and subject["state"] == "active"
    assert subject["extensions"] == {"acme": {"tier": "gold"}}
    assert subject["fenced_context_ids"] == []
    missing = api(admin, "memory.subjects.get", {"space_id": "s1", "subject_id": "ghost"})
    assert (missing.status, missing.code, missing.error["details"]["resource"]) == (
        404,
        "NOT_FOUND",
        "subject",
    )


def test_subject_outside_grant_scope_is_not_found(api, grant_to, ensure_subject):
    ensure_subject("u1")
    ensure_subject("u2")
    narrow, _ = grant_to(capabilities=["records_read"], subject_ids=["u1"])
    assert api(narrow, "memory.subjects.get", {"space_id": "s1", "subject_id": "u1"}).status == 200
    hidden = api(narrow, "memory.subjects.get", {"space_id": "s1", "subject_id": "u2"})
    assert hidden.code == "NOT_FOUND"


def test_ensure_needs_subjects_write_covering_the_subject(api, grant_to, space):
    writer, _ = grant_to(capabilities=["subjects_write"], subject_ids=["u1"])
    assert (
        api(writer, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).status == 200
    )
    denied = api(writer, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u9"})
    assert denied.code == "PERMISSION_DENIED"


def test_fence_unfence_archive_and_context_fences(api, admin, ensure_subject):
    ensure_subject("u1")

    def fence(**kw):
        return api(admin, "memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", **kw})

    r = fence(action="fence")
    assert r.receipt["refs"] == [{"type": "subject", "id": "u1", "revision": 2}]
    blocked = api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    assert blocked.status == 200  # ensure of an existing subject changes nothing
    assert fence(action="unfence").status == 200
    assert fence(action="fence", context_id="c1").status == 200
    subject = Subject.objects.get(subject_id="u1")
    assert subject.state == "active" and subject.fenced_context_ids == ["c1"]
    assert subject.revision == 4
    assert fence(action="unfence", context_id="c1").status == 200
    assert Subject.objects.get(subject_id="u1").fenced_context_ids == []
    assert fence(action="archive", context_id="c1").code == "INVALID_INPUT"
    assert fence(action="archive").status == 200
    again = fence(action="unfence")
    assert again.code == "SUBJECT_ARCHIVED"


def test_fence_needs_space_admin(api, grant_to, ensure_subject):
    ensure_subject("u1")
    narrow, _ = grant_to(capabilities=["records_write"])
    answer = api(
        narrow, "memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", "action": "fence"}
    )
    assert answer.code == "PERMISSION_DENIED"


def test_state_gates_unit():
    from memory.access import gate_subject_writable
    from memory.wire.errors import WireError

    archived = Subject(state="archived")
    fenced = Subject(state="fenced")
    ctx_fenced = Subject(state="active", fenced_context_ids=["c1"])
    for subject, scope, ctx, code in [
        (archived, None, None, "SUBJECT_ARCHIVED"),
        (fenced, None, None, "SUBJECT_FENCED"),
        (ctx_fenced, "context", "c1", "CONTEXT_FENCED"),
    ]:
        with pytest.raises(WireError) as err:
            gate_subject_writable(subject, scope, ctx)
        assert err.value.code == code
    gate_subject_writable(ctx_fenced, "context", "c2")
    gate_subject_writable(ctx_fenced, "shared", None)
