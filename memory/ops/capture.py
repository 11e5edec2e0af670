"""memory.capture: raw material comes in as pending candidates, one per item, in item order
(docs/protocol.md#ops). The capture scope is fixed here and never changes; classification is advisory."""

from django.conf import settings

from memory.access import access_subject, gate_space_writable, gate_subject_writable
from memory.context import OpContext
from memory.engine.classify import classify
from memory.ids import new_id
from memory.models import Candidate
from memory.ops.signatures import op
from memory.services.content import check_content_at
from memory.services.mutation import MutationScope, Outcome
from memory.services.record_store import Placement
from memory.services.refs import candidate_ref
from memory.wire import types as t


@op("memory.capture")
def capture(ctx: OpContext, req: t.CaptureRequest, scope: MutationScope) -> Outcome:
    capture_scope = req["capture_scope"]
    placement = Placement.of(capture_scope["placement"])
    cov = scope.coverage(req["space_id"], subject_id=req["subject_id"])
    subject = access_subject(cov, req["subject_id"])
    cov.require("capture", subject.subject_id, placement.scope, placement.context_id)
    gate_space_writable(cov.space)
    gate_subject_writable(subject, placement.scope, placement.context_id)
    for index, item in enumerate(req["items"]):
        check_content_at(item["content"], item_index=index)
    policy = settings.SPOKE_MEMORY_ENGINE
    ids = sorted(new_id("candidate") for _ in req["items"])  # ascending: ties keep item order
    candidates = []
    for candidate_id, item in zip(ids, req["items"], strict=True):
        proposed: dict[str, object] = {"content": item["content"]}
        if "kind_hint" in item:
            proposed = {"kind": item["kind_hint"], **proposed}
        candidates.append(
            Candidate(
                space=cov.space,
                subject=subject,
                candidate_id=candidate_id,
                scope_placement_scope=placement.scope,
                scope_context_id=placement.context_id,
                source_context_id=capture_scope.get("source_context_id"),
                proposed=proposed,
                classification=classify(item["content"], policy),
                captured_by_principal_id=ctx.principal.principal_id,
                captured_at=ctx.at,
                extensions=req.get("extensions", {}),
            )
        )
    Candidate.objects.bulk_create(candidates)
    scope.touch(subject)
    return Outcome(refs=[candidate_ref(c) for c in candidates])
