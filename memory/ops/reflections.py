"""Op family: reflections (docs/protocol.md#model-reflection, #ops Reflection). memory.reflections.state, .list, .generate
and the worker job that synthesizes a reflection from its pinned basis. Decisions in
docs/reflections.md.

The basis coverage is the caller's coverage for the subject through `reflections_read`
({all_contexts, context_ids, shared}); it decides which records are eligible, it is pinned into
the basis, and a reader sees a reflection only when its own reflections_read coverage includes
the pinned one. Eligible = the subject's non-tombstoned records placed inside that coverage,
narrowed by the selection and the cognition filter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db.models import F, Q
from django.utils.module_loading import import_string

from memory.access import (
    Coverage,
    access_subject,
    coverage_for,
    gate_space_writable,
    gate_subject_writable,
    placed_q,
)
from memory.context import OpContext
from memory.engine.cognition import content_matches
from memory.engine.reflect import basis_digest, coverage_includes
from memory.ids import new_id
from memory.models import Job, ProfileDocument, Record, RecordRevision, Reflection, Subject
from memory.models.reflections import filter_key
from memory.ops.signatures import op
from memory.selectors import cursors
from memory.selectors.selection import check_selection, cognition_q, selection_q
from memory.services import erasure, rerank
from memory.services.mutation import MutationScope, Outcome
from memory.services.recall_engines import registry
from memory.services.refs import reflection_ref
from memory.tasks import job_handler
from memory.timeutil import iso, now
from memory.wire import types as t
from memory.wire.canonical import canonical
from memory.wire.errors import InsufficientData, InternalError, NotFound, RequiredProfileMissing
from memory.wire.validation import catalog, schema_errors

READ = "reflections_read"
# The extensions namespace a reflection made under a hybrid engine pins its embedding model in
# ({"embedding_model": {name, digest, source}}); another model makes it stale. Likewise the
# reranker (memory.services.rerank.identity: {"reranker": {name, digest, source}}).
PIN = "spoke-recall"
NEWEST_FIRST = cursors.Keyset("generated_at", "reflection_id", descending=True)
JOB_KIND = "reflection.generate"


def view_q(view: dict[str, Any]) -> Q:
    """Records placed inside a subject view."""
    if not view["all_contexts"] and not view["context_ids"] and not view["shared"]:
        return Q(pk__in=[])
    return placed_q(None if view["all_contexts"] else view["context_ids"], view["shared"])


def eligible_records(
    subject: Subject,
    view: dict[str, Any],
    selection: dict[str, Any],
    cognition_filter: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    qs = (
        Record.objects.filter(space_id=subject.space_id, subject=subject, deleted_at__isnull=True)
        .filter(view_q(view))
        .filter(selection_q(selection))
        .filter(cognition_q(cognition_filter))
        .order_by("record_id")
    )
    if cognition_filter is None:
        rows = qs.values_list("record_id", "revision")
        return [{"record_id": rid, "revision": rev} for rid, rev in rows]
    return [
        {"record_id": r.record_id, "revision": r.revision}
        for r in qs.only("record_id", "revision", "content")
        if content_matches(r.content, cognition_filter)
    ]


def profile_refs(subject: Subject) -> list[dict[str, Any]]:
    rows = (
        ProfileDocument.objects.filter(space_id=subject.space_id, subject=subject)
        .order_by("kind")
        .values_list("kind", "revision")
    )
    return [{"kind": k, "revision": r} for k, r in rows]


def compute_basis(
    subject: Subject,
    view: dict[str, Any],
    selection: dict[str, Any],
    cognition_filter: Mapping[str, Any] | None,
) -> dict[str, Any]:
    basis = {
        "record_refs": eligible_records(subject, view, selection, cognition_filter),
        "profile_refs": profile_refs(subject),
        "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        "selection": selection,
        "coverage": view,
    }
    if cognition_filter is not None:
        basis["cognition_filter"] = cognition_filter
    return {"state_digest": basis_digest(basis), **basis}


class Staleness:
    """`stale` at read time: the digest recomputed now over the pinned coverage, selection and
    filter differs from the pinned one. Memoized per request by what it depends on."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self.memo: dict[bytes, str] = {}

    def __call__(self, reflection: Reflection) -> bool:
        pinned = (reflection.extensions.get(PIN) or {}).get("embedding_model")
        if pinned is not None and pinned != registry.model_pin():
            return True  # made with another embedding model (docs/recall-quality.md)
        if (reflection.extensions.get(PIN) or {}).get("reranker") != rerank.identity():
            return True  # made under another reranker, or none (docs/recall.md#reranking)
        b = reflection.basis
        key = canonical([b["coverage"], b["selection"], b.get("cognition_filter")])
        if key not in self.memo:
            self.memo[key] = compute_basis(
                self.subject, b["coverage"], b["selection"], b.get("cognition_filter")
            )["state_digest"]
        return bool(self.memo[key] != b["state_digest"])


def pin(model: Any, reranker: Any) -> dict[str, Any]:
    """What a reflection pins of the policy beyond its version: the embedding model and the
    reranker it was made under (each only when there is one)."""
    said = {"embedding_model": model, "reranker": reranker}
    said = {k: v for k, v in said.items() if v}
    return {PIN: said} if said else {}


def missing_kinds(basis: dict[str, Any]) -> list[str]:
    present = {p["kind"] for p in basis["profile_refs"]}
    return sorted(set(settings.SPOKE_MEMORY_REQUIRED_PROFILE_KINDS) - present)


def _reader(ctx: OpContext, req: Mapping[str, Any]) -> tuple[Coverage, Subject, dict[str, Any]]:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    subject = access_subject(cov, req["subject_id"])
    cov.require(READ, subject.subject_id)
    return cov, subject, cov.subject_view([READ], subject.subject_id)


def visible(reader_view: dict[str, Any], reflection: Reflection) -> bool:
    return coverage_includes(reader_view, reflection.basis["coverage"])


@op("memory.reflections.state")
def state(ctx: OpContext, req: t.ReflectionsStateRequest) -> t.ReflectionsStateResponse:
    cov, subject, view = _reader(ctx, req)
    selection = check_selection(req.get("selection"))
    cf = req.get("cognition_filter")
    basis = compute_basis(subject, view, selection, cf)
    count = len(basis["record_refs"])
    minimum = settings.SPOKE_MEMORY_LIMITS["reflection_min_records"]
    latest: t.ReflectionsStateResponseStateLatestReflection1 | None = None
    stale = Staleness(subject)
    for reflection in Reflection.objects.filter(
        space_id=subject.space_id, subject=subject, filter_key=filter_key(cf)
    ).order_by("-generated_at", "-reflection_id"):
        if visible(view, reflection):
            latest = {"reflection_id": reflection.reflection_id, "stale": stale(reflection)}
            break
    out: t.ReflectionsStateResponseState = {
        "state_digest": basis["state_digest"],
        "record_count": count,
        "data_sufficiency": {
            "sufficient": count >= minimum,
            "record_count": count,
            "minimum_records": minimum,
        },
        "missing_required_kinds": missing_kinds(basis),
        "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        "latest_reflection": latest,
    }
    if cf is not None:
        out["cognition_filter"] = cf
    return {"state": out}


@op("memory.reflections.list")
def list_(ctx: OpContext, req: t.ReflectionsListRequest) -> t.ReflectionsListResponse:
    cov, subject, view = _reader(ctx, req)
    qs = Reflection.objects.filter(
        space_id=subject.space_id,
        subject=subject,
        filter_key=filter_key(req.get("cognition_filter")),
    )
    stale = Staleness(subject)
    items, next_cursor = cursors.keyset_page(
        ctx,
        req,
        subject.revision,
        cov,
        qs,
        NEWEST_FIRST,
        lambda r: r.to_wire(subject.subject_id, stale(r)),
        keep=lambda rows: (r for r in rows if visible(view, r)),
    )
    return {
        "reflections": items,
        "next_cursor": next_cursor,
    }


@op("memory.reflections.generate")
def generate(ctx: OpContext, req: t.ReflectionsGenerateRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)  # the basis is read at one revision
    subject = access_subject(cov, req["subject_id"])
    cov.require("reflections_generate", subject.subject_id)
    gate_space_writable(cov.space)
    gate_subject_writable(subject)
    selection = check_selection(req.get("selection"))
    cf = req.get("cognition_filter")
    basis = compute_basis(subject, cov.subject_view([READ], subject.subject_id), selection, cf)
    missing = missing_kinds(basis)
    if missing:
        raise RequiredProfileMissing(
            "Required profile documents are missing for this subject.",
            missing_kinds=missing,
        )
    minimum = settings.SPOKE_MEMORY_LIMITS["reflection_min_records"]
    if len(basis["record_refs"]) < minimum:
        raise InsufficientData(
            "Too few eligible records to generate a reflection.",
            record_count=len(basis["record_refs"]),
            minimum_records=minimum,
        )
    params = {
        "space_id": cov.space_id,
        "subject_id": subject.subject_id,
        "reflection_id": new_id("reflection"),
        "principal_id": ctx.principal.principal_id,
        "basis": basis,
        "model": registry.model_pin(),
        "reranker": rerank.identity(),
    }
    return Outcome.pending([], JOB_KIND, **params)


def pinned_records(space_id: str, refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pinned revisions' content from the history table. Revisions erased by a delete
    meanwhile (the record is tombstoned) are left out: deleted content never reappears."""
    wanted = {r["record_id"]: r["revision"] for r in refs}
    out = []
    ids = list(wanted)
    for start in range(0, len(ids), 1000):
        rows = (
            RecordRevision.objects.filter(
                space_id=space_id,
                record__space_id=space_id,
                record__record_id__in=ids[start : start + 1000],
            )
            .select_related("record")
            .only(
                "revision",
                "kind",
                "content",
                "created_at",
                "record__record_id",
                "record__deleted_at",
            )
        )
        for row in rows:
            rec = row.record
            if wanted.get(rec.record_id) != row.revision or rec.deleted_at is not None:
                continue
            out.append(
                {
                    "record_id": rec.record_id,
                    "revision": row.revision,
                    "kind": row.kind,
                    "content": row.content,
                    "created_at": iso(row.created_at),
                }
            )
    return sorted(out, key=lambda r: r["record_id"])


@job_handler(JOB_KIND)
def run_generate(job: Job) -> list[t.Ref]:
    p = job.params
    # No lock while reading and synthesizing (a synthesizer may be slow): the locks are taken
    # before the writes below, in the mutations' order (space, then subject).
    subject = Subject.objects.filter(space_id=p["space_id"], subject_id=p["subject_id"]).first()
    if subject is None:
        raise NotFound("The subject no longer exists.", resource="subject")
    basis = p["basis"]
    records = pinned_records(p["space_id"], basis["record_refs"])
    if len(records) < settings.SPOKE_MEMORY_LIMITS["reflection_min_records"]:
        raise InsufficientData("Pinned records were deleted before synthesis; too few remain.")
    current = {
        d.kind: d
        for d in ProfileDocument.objects.filter(space_id=subject.space_id, subject=subject)
    }
    profiles = [
        {"kind": ref["kind"], "revision": ref["revision"], "content": current[ref["kind"]].content}
        for ref in basis["profile_refs"]
        if ref["kind"] in current and current[ref["kind"]].revision == ref["revision"]
    ]
    synthesize = import_string(settings.SPOKE_MEMORY_REFLECTION_SYNTHESIZER)
    content = synthesize(
        subject_id=subject.subject_id,
        records=records,
        profiles=profiles,
        engine_policy_version=basis["engine_policy_version"],
    )
    if schema_errors(catalog().component_validator("ProfileContent"), content):
        raise InternalError("The synthesizer returned content of the wrong shape.")
    erasure.hold_space_against_writers(p["space_id"])
    if not Subject.objects.filter(
        space_id=subject.space_id, pk=subject.pk
    ).exists():  # an import replaced the space
        raise NotFound("The subject no longer exists.", resource="subject")
    if erasure.erased_since_read(p["space_id"], [r["record_id"] for r in records]):
        # docs/protocol.md#content: a record it read was deleted meanwhile
        content = dict(erasure.ERASED)
    at = now()
    Reflection.objects.create(
        space_id=p["space_id"],
        subject=subject,
        reflection_id=p["reflection_id"],
        content=content,
        basis=basis,
        cognition_filter=basis.get("cognition_filter"),
        filter_key=filter_key(basis.get("cognition_filter")),
        generated_at=at,
        generated_by_principal_id=p["principal_id"],
        extensions=pin(p.get("model"), p.get("reranker")),
    )
    Subject.objects.filter(space_id=subject.space_id, pk=subject.pk).update(
        revision=F("revision") + 1, updated_at=at
    )
    return [reflection_ref(p["reflection_id"])]
