"""memory.records.create, .get, .update, .delete, .list, .promote (docs/protocol.md#model-retainedrecord, #ops).

Every write follows docs/protocol.md#authorization: lookup and read coverage (NOT_FOUND), op coverage
(PERMISSION_DENIED), state gates, content validation, revision CAS, then the write through
`record_store` inside `mutate`'s transaction with the record row locked. A writer sees the
records its records_write grants cover, as a reader sees those its records_read grants cover."""

from functools import partial

from memory.access import (
    access_record,
    access_subject,
    coverage_for,
    gate_space_writable,
    gate_subject_writable,
    require_read,
)
from memory.context import OpContext
from memory.models import Record, Space
from memory.ops.signatures import op
from memory.selectors import cursors
from memory.selectors.selection import matching, read_filter, records_queryset
from memory.services import record_store
from memory.services.content import check_content
from memory.services.mutation import MutationScope, Outcome
from memory.services.record_store import Placement, Provenance
from memory.services.refs import candidate_ref, record_ref
from memory.wire import types as t
from memory.wire.errors import RecordTombstoned, RevisionConflict

READ = ["records_read"]
NEWEST_FIRST = cursors.Keyset("created_at", "record_id", descending=True)
WRITE_VISIBLE = ["records_read", "records_write"]


def gate_record(record: Record, space: Space, placements: list[Placement]) -> None:
    gate_space_writable(space)
    for placement in placements:
        gate_subject_writable(record.subject, placement.scope, placement.context_id)
    if record.deleted_at is not None:
        raise RecordTombstoned("The record is deleted: it takes no further change.")


def check_revision(record: Record, expected: int) -> None:
    if record.revision != expected:
        raise RevisionConflict(
            "expected_revision is not the record's current revision.",
            current_revision=record.revision,
        )


def _here(record: Record) -> Placement:
    return Placement(record.placement_scope, record.placement_context_id)


@op("memory.records.create")
def create(ctx: OpContext, req: t.RecordsCreateRequest, scope: MutationScope) -> Outcome:
    placement = Placement.of(req["placement"])
    cov = scope.coverage(req["space_id"], subject_id=req["subject_id"])
    subject = access_subject(cov, req["subject_id"])
    cov.require("records_write", subject.subject_id, placement.scope, placement.context_id)
    gate_space_writable(cov.space)
    gate_subject_writable(subject, placement.scope, placement.context_id)
    check_content(req["content"])
    provenance = Provenance(source="authored", author_principal_id=ctx.principal.principal_id)
    [record] = record_store.create_records(
        cov.space,
        subject,
        [(req["kind"], req["content"])],
        placement,
        provenance,
        ctx.at,
        req.get("extensions"),
    )
    scope.touch(subject)
    return Outcome(refs=[record_ref(record)])


@op("memory.records.get")
def get(ctx: OpContext, req: t.RecordsGetRequest) -> t.RecordsGetResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    record = access_record(cov, req["record_id"], READ)
    return {"record": record.to_wire(record.subject.subject_id)}


@op("memory.records.update")
def update(ctx: OpContext, req: t.RecordsUpdateRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"])
    record = access_record(cov, req["record_id"], WRITE_VISIBLE, lock=True)
    here = _here(record)
    cov.require("records_write", record.subject.subject_id, here.scope, here.context_id)
    gate_record(record, cov.space, [here])
    if "content" in req:
        check_content(req["content"])
    check_revision(record, req["expected_revision"])
    record_store.update_record(record, ctx.at, content=req.get("content"), kind=req.get("kind"))
    scope.touch(record.subject)
    return Outcome(refs=[record_ref(record)])


@op("memory.records.delete")
def delete(ctx: OpContext, req: t.RecordsDeleteRequest, scope: MutationScope) -> Outcome:
    # Exclusive: a reflection job writes its reflection under the space lock, so a delete must
    # hold that lock across its erasure, or a reflection synthesized from the record's text
    # before the delete commits could be stored after the delete erased the others (§2.8).
    cov = scope.coverage(req["space_id"], exclusive=True)
    record = access_record(cov, req["record_id"], WRITE_VISIBLE, lock=True)
    here = _here(record)
    cov.require("records_write", record.subject.subject_id, here.scope, here.context_id)
    gate_record(record, cov.space, [here])
    check_revision(record, req["expected_revision"])
    candidate = record_store.erase_record(
        record, ctx.principal.principal_id, req.get("reason"), ctx.at
    )
    scope.touch(record.subject)
    refs = [record_ref(record)]
    if candidate is not None:
        refs.append(candidate_ref(candidate))
    return Outcome(refs=refs)


@op("memory.records.promote")
def promote(ctx: OpContext, req: t.RecordsPromoteRequest, scope: MutationScope) -> Outcome:
    target = Placement.of(req["placement"])
    cov = scope.coverage(req["space_id"])
    record = access_record(cov, req["record_id"], WRITE_VISIBLE, lock=True)
    here = _here(record)
    subject_id = record.subject.subject_id
    cov.require("records_write", subject_id, here.scope, here.context_id)
    cov.require("records_write", subject_id, target.scope, target.context_id)
    gate_record(record, cov.space, [here, target])
    check_revision(record, req["expected_revision"])
    record_store.move_record(record, target, ctx.at)
    scope.touch(record.subject)
    return Outcome(refs=[record_ref(record)])


@op("memory.records.list")
def records_list(ctx: OpContext, req: t.RecordsListRequest) -> t.RecordsListResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    subject = access_subject(cov, req["subject_id"]) if "subject_id" in req else None
    require_read(cov, READ, subject)
    flt = read_filter(req, include_tombstoned=req.get("include_tombstoned", False))
    revision = subject.revision if subject is not None else cov.space.revision
    qs = records_queryset(cov, READ, flt, subject)
    if flt.cognition is None:
        total, keep = qs.count(), None
    else:  # the matcher decides each record; SQL has only narrowed
        total = sum(1 for _ in matching(qs.only("content").iterator(chunk_size=2000), flt))
        keep = partial(matching, flt=flt)
    items, next_cursor = cursors.keyset_page(
        ctx,
        req,
        revision,
        cov,
        qs.select_related("subject").filter(subject__space_id=cov.space_id),
        NEWEST_FIRST,
        lambda r: r.to_wire(r.subject.subject_id),
        keep,
    )
    return {
        "records": items,
        "total_authorized": total,
        "next_cursor": next_cursor,
    }
