"""memory.subjects.ensure, .get, .fence."""

from memory.access import access_subject, gate_space_writable
from memory.context import OpContext
from memory.models import Subject
from memory.models.records import CONTEXT
from memory.ops.signatures import op
from memory.services.mutation import MutationScope, Outcome
from memory.services.refs import subject_ref
from memory.wire import types as t
from memory.wire.errors import InvalidInput, SubjectArchived, SubjectKindConflict, permission_denied


@op("memory.subjects.ensure")
def ensure(ctx: OpContext, req: t.SubjectsEnsureRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"])
    subject_id = req["subject_id"]
    # docs/protocol.md#authorization: coverage of a subject is decided from its id, before looking it up, so
    # the answer never tells an uncovered caller whether the subject exists
    cov.require("subjects_write", subject_id)
    existing = Subject.objects.filter(space=cov.space, subject_id=subject_id).first()
    gate_space_writable(cov.space)
    if existing is not None:
        if req.get("kind") is not None and existing.kind != req["kind"]:
            raise SubjectKindConflict(
                "The subject exists with a different kind.",
                current_kind=existing.kind,
            )
        return Outcome(refs=[subject_ref(existing)])
    subject = Subject.objects.create(
        space=cov.space,
        subject_id=subject_id,
        kind=req.get("kind"),
        created_at=ctx.at,
        updated_at=ctx.at,
        extensions=req.get("extensions", {}),
    )
    return Outcome(refs=[subject_ref(subject)])


@op("memory.subjects.get")
def get(ctx: OpContext, req: t.SubjectsGetRequest) -> t.SubjectsGetResponse:
    from memory.access import coverage_for

    cov = coverage_for(req["space_id"], ctx.principal, ctx.at, subject_id=req["subject_id"])
    subject = access_subject(cov, req["subject_id"])  # loaded with the coverage: one query
    return {"subject": subject.to_wire()}


@op("memory.subjects.fence")
def fence(ctx: OpContext, req: t.SubjectsFenceRequest, scope: MutationScope) -> Outcome:
    action, context_id = req["action"], req.get("context_id")
    cov = scope.coverage(req["space_id"])
    subject = access_subject(cov, req["subject_id"], lock=True)
    placed = None if context_id is None else CONTEXT
    if not cov.administers_subject(subject.subject_id, placed, context_id):
        raise permission_denied("space_admin")
    gate_space_writable(cov.space)
    if action == "archive" and context_id is not None:
        raise InvalidInput(
            "Archive applies to the whole subject and takes no context_id.",
            reason="archive_with_context",
            field="context_id",
        )
    if subject.state == Subject.ARCHIVED:
        raise SubjectArchived("The subject is archived: archive is terminal.")
    fields = ["fenced_context_ids"] if context_id is not None else ["state"]
    if context_id is not None:
        fenced = set(subject.fenced_context_ids)
        fenced.add(context_id) if action == "fence" else fenced.discard(context_id)
        subject.fenced_context_ids = sorted(fenced)
    else:
        subject.state = {
            "fence": Subject.FENCED,
            "unfence": Subject.ACTIVE,
            "archive": Subject.ARCHIVED,
        }[action]
    subject.save(update_fields=fields)
    scope.touch(subject)
    return Outcome(refs=[subject_ref(subject)])
