"""memory.describe, memory.spaces.list, .freeze, .unfreeze."""

from django.conf import settings
from django.db.models import Count

from memory.access import effective_grants
from memory.context import OpContext
from memory.models import Grant, Receipt, Space
from memory.ops.signatures import op
from memory.services.mutation import MutationScope, Outcome
from memory.services.recall_engines import registry
from memory.services.refs import space_ref
from memory.wire import types as t
from memory.wire.errors import SpaceFrozen


@op("memory.describe")
def describe(ctx: OpContext, req: t.DescribeRequest) -> t.DescribeResponse:
    limits = settings.SPOKE_MEMORY_LIMITS
    return {
        "provider": {
            "schema_version": 1,
            "protocol_version": "1",
            "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
            "served_capabilities": list(settings.SPOKE_MEMORY_SERVED_CAPABILITIES),
            "limits": {
                "max_request_bytes": limits["max_request_bytes"],
                "max_content_bytes": limits["max_content_bytes"],
                "max_capture_items": limits["max_capture_items"],
                "max_page_size": limits["max_page_size"],
                "max_recall_records": limits["max_recall_records"],
                "max_recall_bytes": limits["max_recall_bytes"],
                "export_chunk_bytes": limits["export_chunk_bytes"],
                "export_retention_s": limits["export_retention_s"],
                "max_extensions_bytes": limits["max_extensions_bytes"],
                "reflection_min_records": limits["reflection_min_records"],
                "idempotency_retention_s": limits["idempotency_retention_s"],
                "session_ttl_s": limits["session_ttl_s"],
                "max_json_depth": limits["max_json_depth"],
                "max_list_items": limits["max_list_items"],
                "max_grants_per_principal": limits["max_grants_per_principal"],
                "max_request_bytes_per_min": limits["max_request_bytes_per_min"],
            },
            "required_profile_kinds": list(settings.SPOKE_MEMORY_REQUIRED_PROFILE_KINDS),
            "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
            # a hybrid engine names its embedding model (name, digest of its files, source)
            "extensions": registry.describe_extensions(),
        }
    }


def pending_counts(space_ids: list[str]) -> dict[str, int]:
    rows = (
        Receipt.objects.filter(space_id__in=space_ids, status=Receipt.PENDING)
        .values("space_id")
        .annotate(n=Count("receipt_id"))
    )
    return {r["space_id"]: r["n"] for r in rows}


def space_wire(space: Space) -> t.MemorySpace:
    return space.to_wire(pending_counts([space.space_id]).get(space.space_id, 0))


@op("memory.spaces.list")
def spaces_list(ctx: OpContext, req: t.SpacesListRequest) -> t.SpacesListResponse:
    space_ids = sorted(
        set(
            Grant.objects.filter(grantee=ctx.principal, state=Grant.ACTIVE).values_list(
                "space_id", flat=True
            )
        )
    )
    visible = [sid for sid in space_ids if effective_grants(sid, ctx.principal, ctx.at)]
    spaces = Space.objects.filter(space_id__in=visible).order_by("space_id")
    counts = pending_counts(visible)
    return {"spaces": [s.to_wire(counts.get(s.space_id, 0)) for s in spaces]}


@op("memory.spaces.freeze")
def freeze(ctx: OpContext, req: t.SpacesFreezeRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    cov.require_admin()
    space = cov.space
    if space.state == Space.FROZEN:
        raise SpaceFrozen("The space is already frozen.")
    space.state, space.freeze_reason = Space.FROZEN, req.get("reason")
    space.save(update_fields=["state", "freeze_reason"])
    return Outcome(refs=[space_ref(space)])


@op("memory.spaces.unfreeze")
def unfreeze(ctx: OpContext, req: t.SpacesUnfreezeRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    cov.require_admin()
    space = cov.space
    # Unfreezing an active space is a committed no-op: the caller's intent (active) holds.
    space.state, space.freeze_reason = Space.ACTIVE, None
    space.save(update_fields=["state", "freeze_reason"])
    return Outcome(refs=[space_ref(space)])
