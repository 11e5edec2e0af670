"""memory.candidates.list, .get, .dismiss, .review (docs/protocol.md#ops "Review decision").

Review is the only candidate-to-record path. Consuming the candidate and creating its records
happen in one transaction with the candidate row locked, so two racing reviews cannot both
consume it: the second waits for the row, sees a non-pending state and answers
CANDIDATE_CONSUMED. (Writers of one space run concurrently and meet only at the commit's space
revision bump, so this row lock is what makes the race safe.) Records inherit the capture scope's placement verbatim."""

from collections.abc import Mapping
from typing import Any

from memory.access import (
    Coverage,
    access_candidate,
    access_subject,
    coverage_for,
    gate_space_writable,
    gate_subject_writable,
    require_read,
)
from memory.context import OpContext
from memory.models import Candidate
from memory.ops.signatures import op
from memory.selectors import cursors
from memory.selectors.selection import check_selection, selection_q
from memory.services.content import check_content_at
from memory.services.mutation import MutationScope, Outcome
from memory.services.record_store import Placement, Provenance, create_records
from memory.services.refs import candidate_ref, record_ref
from memory.wire import types as t
from memory.wire.errors import CandidateConsumed, WireError

READ = ["candidates_read", "review"]
# Classification labels that are also sensible record kinds; `cognition` and `noise` describe
# the material, not a kind of memory, and fall through to `note` (docs/placement-and-review.md).
LABEL_KINDS = {"preference", "fact", "event", "plan"}
OUTCOME_STATE = {
    "promote": "promoted",
    "fragment": "fragmented",
    "drop": "dropped",
    "dismiss": "dismissed",
}


def consumed() -> WireError:
    return CandidateConsumed("The candidate is no longer pending.")


@op("memory.candidates.get")
def get(ctx: OpContext, req: t.CandidatesGetRequest) -> t.CandidatesGetResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    candidate = access_candidate(cov, req["candidate_id"])
    return {"candidate": candidate.to_wire(candidate.subject.subject_id)}


@op("memory.candidates.list")
def candidates_list(ctx: OpContext, req: t.CandidatesListRequest) -> t.CandidatesListResponse:
    """Selection (on the capture scope's placement), labels and states narrow after
    authorization and before the count and the page; the cursor is bound to all of them."""
    selection = check_selection(req.get("selection"))
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    qs = Candidate.objects.filter(space_id=cov.space_id)
    revision, subject = cov.space.revision, None
    if "subject_id" in req:
        subject = access_subject(cov, req["subject_id"])
        qs, revision = qs.filter(subject=subject), subject.revision
    require_read(cov, READ, subject)
    placement = {"scope_field": "scope_placement_scope", "context_field": "scope_context_id"}
    covered = (
        cov.placement_q(READ, **placement)
        if subject is None
        else cov.subject_q(READ, subject.subject_id, **placement)
    )
    qs = qs.filter(covered).filter(selection_q(selection, **placement))
    qs = qs.filter(state__in=req.get("states", [Candidate.PENDING]))
    if "labels" in req:
        qs = qs.filter(classification__label__in=req["labels"])
    total = qs.count()
    newest = req.get("order", "oldest") == "newest"
    keyset = cursors.Keyset("captured_at", "candidate_id", descending=newest)
    items, next_cursor = cursors.keyset_page(
        ctx,
        req,
        revision,
        cov,
        qs.select_related("subject").filter(subject__space_id=cov.space_id),
        keyset,
        lambda c: c.to_wire(c.subject.subject_id),
    )
    return {
        "candidates": items,
        "total_authorized": total,
        "next_cursor": next_cursor,
    }


def _consume(
    candidate: Candidate, ctx: OpContext, action: str, record_ids: list[str], reason: str | None
) -> None:
    outcome: dict[str, Any] = {"action": action, "record_ids": record_ids}
    if reason is not None:
        outcome["reason"] = reason
    candidate.state = OUTCOME_STATE[action]
    candidate.consumed_at, candidate.consumed_by_principal_id = ctx.at, ctx.principal.principal_id
    candidate.outcome = outcome
    candidate.revision += 1
    candidate.save(
        update_fields=["state", "consumed_at", "consumed_by_principal_id", "outcome", "revision"]
    )


def _open(
    scope: MutationScope, req: Mapping[str, Any], capabilities: list[str]
) -> tuple[Coverage, Candidate, Placement]:
    """Steps (a)-(c) of docs/protocol.md#authorization shared by dismiss and review: lookup with the row lock, op
    coverage of the capture scope, state gates."""
    cov = scope.coverage(req["space_id"])
    candidate = access_candidate(cov, req["candidate_id"], lock=True)
    placement = Placement(candidate.scope_placement_scope, candidate.scope_context_id)
    subject_id = candidate.subject.subject_id
    for capability in capabilities:
        cov.require(capability, subject_id, placement.scope, placement.context_id)
    gate_space_writable(cov.space)
    gate_subject_writable(candidate.subject, placement.scope, placement.context_id)
    if candidate.state != Candidate.PENDING:
        raise consumed()
    return cov, candidate, placement


@op("memory.candidates.dismiss")
def dismiss(ctx: OpContext, req: t.CandidatesDismissRequest, scope: MutationScope) -> Outcome:
    _, candidate, _ = _open(scope, req, ["review"])
    _consume(candidate, ctx, "dismiss", [], req.get("reason"))
    scope.touch(candidate.subject)
    return Outcome(refs=[candidate_ref(candidate)])


def default_kind(candidate: Candidate, chosen: str | None) -> str:
    """Decision kind, else kind_hint, else the classification label when it names a kind of
    memory, else `note`."""
    if chosen is not None:
        return chosen
    if "kind" in candidate.proposed:
        return str(candidate.proposed["kind"])
    label = candidate.classification.get("label")
    return label if label in LABEL_KINDS else "note"


def decided_items(
    candidate: Candidate, decision: Mapping[str, Any]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The (kind, content) of each record the decision makes, content already admitted."""
    action = decision["action"]
    if action == "drop":
        return []
    if action == "promote":
        content = decision.get("content_override")
        if content is not None:
            check_content_at(content)
        else:
            content = candidate.proposed["content"]
        return [(default_kind(candidate, decision.get("kind")), content)]
    items = []
    for index, fragment in enumerate(decision["fragments"]):
        check_content_at(fragment["content"], fragment_index=index)
        items.append((default_kind(candidate, fragment.get("kind")), fragment["content"]))
    return items


@op("memory.candidates.review")
def review(ctx: OpContext, req: t.CandidatesReviewRequest, scope: MutationScope) -> Outcome:
    decision = req["decision"]
    cov, candidate, placement = _open(scope, req, ["review", "records_write"])
    items = decided_items(candidate, decision)
    provenance = Provenance(
        source="capture",
        author_principal_id=candidate.captured_by_principal_id,
        source_context_id=candidate.source_context_id,
        candidate_id=candidate.candidate_id,
        reviewer_principal_id=ctx.principal.principal_id,
        captured_at=candidate.captured_at,
    )
    records = (
        create_records(cov.space, candidate.subject, items, placement, provenance, ctx.at)
        if items
        else []
    )
    _consume(
        candidate,
        ctx,
        decision["action"],
        [r.record_id for r in records],
        decision["reason"] if decision["action"] == "drop" and "reason" in decision else None,
    )
    scope.touch(candidate.subject)
    return Outcome(refs=[candidate_ref(candidate), *(record_ref(r) for r in records)])
