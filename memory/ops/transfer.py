"""Op family: transfer (docs/protocol.md#model-memoryexportbundle, #model-memoryexportchunk, #ops Transfer): memory.exports.create, .get,
memory.imports.stage, .activate, .discard. The pending work (building an export, verifying a
staged import, activating it) runs on the workers: memory/services/transfer_jobs.py.
Decisions in docs/transfer.md. Frozen spaces accept all of these (docs/protocol.md#authorization)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from memory.access import Coverage, access_subject, coverage_for, grant_has
from memory.context import OpContext
from memory.engine import transfer as policy
from memory.models import Export, ExportChunk, Grant, Import, ImportChunk
from memory.ops.signatures import op
from memory.services import transfer_jobs as jobs
from memory.services.mutation import MutationScope, Outcome
from memory.services.refs import export_ref, import_ref
from memory.services.transfer_codec import canonical
from memory.wire import types as t
from memory.wire.errors import (
    ExportNotReady,
    ImportOrderViolation,
    ImportStateConflict,
    invalid,
    not_found,
    permission_denied,
)


def require_export(cov: Coverage) -> None:
    if not cov.with_capability("export"):
        raise permission_denied("export")


def imports_whole_space(grants: Iterable[Grant]) -> bool:
    """`import` covering the whole space: one grant with the capability, no subject or context
    limit, and shared access (the console asks this before it reads an upload)."""
    return any(
        grant_has(g, "import")
        and g.subject_ids is None
        and g.context_ids is None
        and g.shared_access
        for g in grants
    )


def require_whole_space_import(cov: Coverage) -> None:
    if not imports_whole_space(cov.grants):
        raise permission_denied("import")


@op("memory.exports.create")
def exports_create(ctx: OpContext, req: t.ExportsCreateRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    require_export(cov)
    subject_ids = req.get("subject_ids")
    for subject_id in subject_ids or []:
        access_subject(cov, subject_id, ["export"])
    export = Export.objects.create(
        space=cov.space,
        principal=ctx.principal,
        subject_ids=sorted(subject_ids) if subject_ids else None,
        coverage=cov.footprint("export"),  # the job stores the coverage it builds with
        created_at=ctx.at,
    )
    return Outcome.pending([export_ref(export.export_id)], jobs.EXPORT, export_id=export.export_id)


def expired(export: Export, at: datetime) -> bool:
    retention = settings.SPOKE_MEMORY_LIMITS["export_retention_s"]
    return (
        export.committed_at is not None and export.committed_at + timedelta(seconds=retention) <= at
    )


def readable(export: Export, cov: Coverage) -> bool:
    """docs/protocol.md#ops: re-authorized on every call. Only the creator (the caller's lookup), only while
    its current `export` coverage includes the coverage the export was made with, and only while
    stored: not withdrawn (erasure, retention), not past its retention even before the sweeper
    withdraws it. An export with no stored coverage (made before coverage was stored) is not."""
    return (
        export.state != Export.WITHDRAWN
        and not expired(export, cov.at)
        and export.coverage is not None
        and policy.footprint_includes(cov.footprint("export"), export.coverage)
    )


@op("memory.exports.get")
def exports_get(ctx: OpContext, req: t.ExportsGetRequest) -> t.ExportsGetResponse:
    cov = coverage_for(req["space_id"], ctx.principal, ctx.at)
    export = Export.objects.filter(
        space_id=cov.space_id, export_id=req["export_id"], principal=ctx.principal
    ).first()
    if export is None or not readable(export, cov):
        raise not_found("export")
    if export.state != Export.READY:
        raise ExportNotReady("The export is not ready.", state=export.state)
    bundle = export.bundle
    assert bundle is not None  # a ready export has its bundle
    if req["ordinal"] >= bundle["chunk_count"]:
        raise invalid("ordinal", "ordinal", "The ordinal is past the export's last chunk.")
    chunk = ExportChunk.objects.get(space_id=export.space_id, export=export, ordinal=req["ordinal"])
    return {
        "bundle": bundle,
        "chunk": {
            "schema_version": 1,
            "export_id": export.export_id,
            "ordinal": chunk.ordinal,
            "chunk_count": bundle["chunk_count"],
            "objects": json.loads(chunk.objects_json),
            "digest": chunk.digest,
            "extensions": {},
        },
    }


def _open_import(ctx: OpContext, cov: Coverage, req: Mapping[str, Any]) -> Import:
    bundle = req.get("bundle")
    if bundle is None:
        raise invalid(
            "bundle", "bundle", "The first chunk (ordinal 0) opens an import and needs the bundle."
        )
    return Import.objects.create(
        space=cov.space,
        principal=ctx.principal,
        bundle=bundle,
        created_at=ctx.at,
        updated_at=ctx.at,
    )


def _continue_import(cov: Coverage, req: Mapping[str, Any]) -> Import:
    imp = (
        Import.objects.select_for_update()
        .filter(space_id=cov.space_id, import_id=req["import_id"])
        .first()
    )
    if imp is None:
        raise not_found("import")
    if imp.state != "staging":
        raise ImportStateConflict("The import is not staging chunks.", state=imp.state)
    if "bundle" in req and req["bundle"] != imp.bundle:
        raise invalid(
            "bundle", "bundle", "The bundle differs from the one this import was opened with."
        )
    return imp


@op("memory.imports.stage")
def imports_stage(ctx: OpContext, req: t.ImportsStageRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    require_whole_space_import(cov)
    chunk = req["chunk"]
    if "import_id" in req:
        imp = _continue_import(cov, req)
    elif chunk["ordinal"] == 0:
        imp = _open_import(ctx, cov, req)
    else:
        raise invalid("import_id", "import_id", "A chunk after the first names its import_id.")
    bundle = imp.bundle
    if chunk["export_id"] != bundle["export_id"]:
        raise invalid("export_id", "chunk.export_id", "The chunk belongs to another export.")
    if chunk["chunk_count"] != bundle["chunk_count"] or chunk["ordinal"] >= bundle["chunk_count"]:
        raise invalid(
            "ordinal",
            "chunk.ordinal",
            "The chunk's ordinal or chunk_count does not fit the bundle.",
        )
    if chunk["ordinal"] != imp.next_ordinal:
        raise ImportOrderViolation(
            "Chunks must be staged in strict ordinal order.",
            expected_ordinal=imp.next_ordinal,
        )
    ImportChunk.objects.create(
        space_id=imp.space_id,
        imp=imp,
        ordinal=chunk["ordinal"],
        objects_json=canonical(chunk["objects"]).decode("utf-8"),
        digest=chunk["digest"],
    )
    imp.next_ordinal += 1
    imp.updated_at = ctx.at
    final = imp.next_ordinal == bundle["chunk_count"]
    if final:
        imp.state = "verifying"
    imp.save(update_fields=["next_ordinal", "updated_at", "state"])
    refs = [import_ref(imp.import_id)]
    if final:
        return Outcome.pending(refs, jobs.VERIFY, import_id=imp.import_id)
    return Outcome(refs=refs)


def _locked_import(cov: Coverage, import_id: str) -> Import:
    imp = (
        Import.objects.select_for_update()
        .filter(space_id=cov.space_id, import_id=import_id)
        .first()
    )
    if imp is None:
        raise not_found("import")
    return imp


@op("memory.imports.activate")
def imports_activate(
    ctx: OpContext, req: t.ImportsActivateRequest, scope: MutationScope
) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    require_whole_space_import(cov)
    imp = _locked_import(cov, req["import_id"])
    if imp.state != "verified":
        raise ImportStateConflict("Only a verified import can be activated.", state=imp.state)
    imp.state, imp.updated_at = "activating", ctx.at
    imp.save(update_fields=["state", "updated_at"])
    jobs.activation_accepted(cov.space)
    return Outcome.pending([import_ref(imp.import_id)], jobs.ACTIVATE, import_id=imp.import_id)


DISCARDABLE = ("staging", "verified", "rejected")


@op("memory.imports.discard")
def imports_discard(ctx: OpContext, req: t.ImportsDiscardRequest, scope: MutationScope) -> Outcome:
    cov = scope.coverage(req["space_id"], exclusive=True)
    require_whole_space_import(cov)
    imp = _locked_import(cov, req["import_id"])
    if imp.state not in DISCARDABLE:
        raise ImportStateConflict("The import can no longer be discarded.", state=imp.state)
    ImportChunk.objects.filter(space_id=imp.space_id, imp=imp).delete()
    imp.state, imp.updated_at = "discarded", ctx.at
    imp.save(update_fields=["state", "updated_at"])
    return Outcome(refs=[import_ref(imp.import_id)])
