"""memory.profile.get and memory.profile.update (docs/protocol.md#model-profiledocument, #ops).

Profile documents are trusted author material: no cognition rules apply to their content, and
they grant nothing. Placement does not apply to them: `profile_read` / `profile_write` covering
the subject is enough. Absent kinds are an honest empty, never an error and never a fabricated
document."""

from __future__ import annotations

from django.conf import settings

from memory.access import access_subject, coverage_for, gate_space_writable, gate_subject_writable
from memory.context import OpContext
from memory.models import ProfileDocument
from memory.ops.signatures import op
from memory.services.content import check_profile_content
from memory.services.mutation import MutationScope, Outcome
from memory.services.refs import profile_ref
from memory.wire import types as t
from memory.wire.errors import RevisionConflict, not_found


@op("memory.profile.get")
def get(ctx: OpContext, req: t.ProfileGetRequest) -> t.ProfileGetResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    subject = access_subject(cov, req["subject_id"])
    cov.require("profile_read", subject.subject_id)
    docs = {
        d.kind: d
        for d in ProfileDocument.objects.filter(space_id=subject.space_id, subject=subject)
    }
    requested = (
        set(req["kinds"])
        if "kinds" in req
        else set(docs) | set(settings.SPOKE_MEMORY_REQUIRED_PROFILE_KINDS)
    )
    return {
        "profile": {
            "subject_id": subject.subject_id,
            "documents": [
                docs[k].to_wire(subject.subject_id) for k in sorted(requested) if k in docs
            ],
            "absent_kinds": sorted(k for k in requested if k not in docs),
        }
    }


@op("memory.profile.update")
def update(ctx: OpContext, req: t.ProfileUpdateRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"])
    subject = access_subject(cov, req["subject_id"], lock=True)
    cov.require("profile_write", subject.subject_id)
    gate_space_writable(cov.space)
    gate_subject_writable(subject)
    check_profile_content(req["content"])
    doc = (
        ProfileDocument.objects.select_for_update()
        .filter(space_id=subject.space_id, subject=subject, kind=req["kind"])
        .first()
    )
    expected = req.get("expected_revision")
    if expected is None and doc is not None:
        raise RevisionConflict(
            "A document of this kind exists: pass expected_revision to update it.",
            current_revision=doc.revision,
        )
    if expected is not None and doc is None:
        raise not_found("profile_document")
    if doc is None:
        doc = ProfileDocument.objects.create(
            space=cov.space,
            subject=subject,
            kind=req["kind"],
            content=req["content"],
            author_principal_id=ctx.principal.principal_id,
            created_at=ctx.at,
            updated_at=ctx.at,
        )
    else:
        if doc.revision != expected:
            raise RevisionConflict(
                "The document changed since that revision.",
                current_revision=doc.revision,
            )
        doc.content = req["content"]
        doc.revision += 1
        doc.author_principal_id = ctx.principal.principal_id
        doc.updated_at = ctx.at
        doc.save(update_fields=["content", "revision", "author_principal_id", "updated_at"])
    scope.touch(subject)
    return Outcome(refs=[profile_ref(doc)])
