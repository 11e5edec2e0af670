"""Worker jobs of the transfer family: build an export from one consistent snapshot, verify a
staged import, activate a verified import. Each runs inside the one transaction that also
completes its receipt (memory.tasks.execute), so an export's chunks, its `ready` state and the
committed receipt appear together, and an activation is all or nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, Q
from django.db.models.functions import Collate

from memory import statements
from memory.access import Coverage, coverage_for
from memory.engine import transfer as policy
from memory.engine.reflect import coverage_includes
from memory.models import (
    Candidate,
    Export,
    ExportChunk,
    Import,
    ImportChunk,
    Job,
    Principal,
    ProfileDocument,
    Record,
    Reflection,
    Space,
    Subject,
)
from memory.services import table_stats
from memory.services import transfer_load as load
from memory.services.erasure import withdraw_exports
from memory.services.refs import export_ref, import_ref
from memory.services.transfer_codec import canonical as fast_canonical
from memory.services.transfer_verify import COUNTS_MISMATCH, BundleChecker, reject
from memory.tasks import RunAgain, job_handler
from memory.timeutil import iso, now
from memory.wire import types as t
from memory.wire.canonical import digest_bytes
from memory.wire.errors import ImportStateConflict, PermissionDenied

EXPORT, VERIFY, ACTIVATE = "export.create", "import.verify", "import.activate"
BATCH = 2000


def _by_id(field: str) -> Collate | F:
    """Order by id in codepoint order, the order the engine verifies (PostgreSQL collations
    other than C may order punctuation differently)."""
    return Collate(field, "C") if connection.vendor == "postgresql" else F(field)


def _snapshot() -> None:
    """One repeatable-read snapshot for the whole export (PostgreSQL). Only possible as the
    first statement of the outermost transaction; nested in an enclosing transaction (a test's)
    the export reads that transaction's snapshot instead."""
    if connection.vendor == "postgresql" and len(connection.atomic_blocks) == 1:
        statements.execute(statements.REPEATABLE_READ)


def export_coverage(export: Export) -> Coverage:
    """The export principal's coverage now (the job's), which decides what the export holds."""
    principal = Principal.objects.get(pk=export.principal_id)
    return coverage_for(export.space_id, principal, now())


def export_objects(export: Export, cov: Coverage) -> Iterator[dict[str, Any]]:
    """Every object the export's principal may export, in the protocol order, streamed."""
    grants = cov.with_capability("export")
    if not grants:
        raise PermissionDenied("The export capability was withdrawn.", capability="export")
    subject_q = Q()
    if all(g.subject_ids is not None for g in grants):
        subject_q = Q(subject_id__in=sorted({s for g in grants for s in g.subject_ids or ()}))
    if export.subject_ids:
        subject_q &= Q(subject_id__in=export.subject_ids)
    subjects = Subject.objects.filter(space_id=export.space_id).filter(subject_q)
    by_subject = Q(subject__in=subjects)

    for s in subjects.order_by(_by_id("subject_id")).iterator(chunk_size=BATCH):
        yield {"type": "subject", "data": s.to_wire(include_space=False)}
    records = (
        Record.objects.filter(space_id=export.space_id)
        .filter(by_subject)
        .filter(cov.placement_q(["export"]))
    )
    for r in (
        records.select_related("subject")
        .filter(subject__space_id=export.space_id)
        .order_by(_by_id("record_id"))
        .iterator(chunk_size=BATCH)
    ):
        yield {"type": "record", "data": r.to_wire(r.subject.subject_id, include_space=False)}
    candidates = (
        Candidate.objects.filter(space_id=export.space_id)
        .filter(by_subject)
        .filter(
            cov.placement_q(
                ["export"], scope_field="scope_placement_scope", context_field="scope_context_id"
            )
        )
    )
    for c in (
        candidates.select_related("subject")
        .filter(subject__space_id=export.space_id)
        .order_by(_by_id("candidate_id"))
        .iterator(chunk_size=BATCH)
    ):
        yield {"type": "candidate", "data": c.to_wire(c.subject.subject_id, include_space=False)}
    profiles = ProfileDocument.objects.filter(space_id=export.space_id).filter(by_subject)
    for p in (
        profiles.select_related("subject")
        .filter(subject__space_id=export.space_id)
        .order_by(_by_id("subject__subject_id"), _by_id("kind"))
        .iterator(chunk_size=BATCH)
    ):
        yield {
            "type": "profile_document",
            "data": p.to_wire(p.subject.subject_id, include_space=False),
        }
    views: dict[str, dict[str, Any]] = {}
    reflections = Reflection.objects.filter(space_id=export.space_id).filter(by_subject)
    for f in (
        reflections.select_related("subject")
        .filter(subject__space_id=export.space_id)
        .order_by(_by_id("reflection_id"))
        .iterator(chunk_size=BATCH)
    ):
        sid = f.subject.subject_id
        if sid not in views:
            views[sid] = cov.subject_view(["export"], sid)
        # Derived data never leaks past grants: only reflections whose pinned coverage the
        # exporter's own coverage includes.
        if coverage_includes(views[sid], f.basis["coverage"]):
            data = f.to_wire(sid, stale=False, include_space=False)
            data.pop("stale")
            yield {"type": "reflection", "data": data}


@job_handler(
    EXPORT,
    on_failure=lambda job, failure: Export.objects.filter(
        space_id=job.space_id, pk=job.params["export_id"], state=Export.PENDING
    ).update(state=Export.FAILED),
)
def run_export(job: Job) -> list[t.Ref]:
    _snapshot()  # the first statement of the job's transaction
    # Not locked here: a delete marks pending exports while this runs (memory.services.erasure);
    # the final conditional update below is where a stale snapshot is caught.
    export = Export.objects.get(space_id=job.space_id, pk=job.params["export_id"])
    ref = [export_ref(export.export_id)]
    if export.state != Export.PENDING:
        return ref  # a redelivery: done (or withdrawn) already
    cov = export_coverage(export)
    space = Space.objects.get(pk=export.space_id)
    limit = settings.SPOKE_MEMORY_LIMITS["export_chunk_bytes"]
    pause = float(getattr(settings, "SPOKE_MEMORY_EXPORT_CHUNK_PAUSE_S", 0) or 0)
    counts = policy.empty_counts()

    def counted() -> Iterator[dict[str, Any]]:
        for obj in export_objects(export, cov):
            counts[obj["type"]] += 1
            yield obj

    digests: list[str] = []
    for ordinal, (_objects, body) in enumerate(policy.partition(counted(), limit, fast_canonical)):
        d = digest_bytes(body)
        ExportChunk.objects.create(
            space_id=export.space_id,
            export=export,
            ordinal=ordinal,
            objects_json=body.decode("utf-8"),
            digest=d,
        )
        digests.append(d)
        if pause:
            time.sleep(pause)  # operators' throttle: spreads a large export's database load
    bundle = {
        "schema_version": 1,
        "export_id": export.export_id,
        "space_id": space.space_id,
        "format_version": policy.FORMAT_VERSION,
        "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
        "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        "authority_generation": space.authority_generation,
        "space_revision": space.revision,
        "created_at": iso(export.created_at),
        "chunk_count": len(digests),
        "object_counts": counts,
        "chunk_digests": digests,
        "bundle_digest": policy.bundle_digest(
            export.export_id, space.space_id, policy.FORMAT_VERSION, digests, counts
        ),
        "extensions": {},
    }
    published = Export.objects.filter(
        space_id=export.space_id, pk=export.pk, state=Export.PENDING, erasures=export.erasures
    ).update(
        state=Export.READY,
        bundle=bundle,
        coverage=cov.footprint("export"),
        committed_at=now(),
    )
    if not published:
        raise RunAgain("A record was erased in the space while this export was being built.")
    return ref


def _reject_import(job: Job, failure: dict[str, Any]) -> None:
    Import.objects.filter(
        space_id=job.space_id, pk=job.params["import_id"], state="verifying"
    ).update(state="rejected", failure=failure, updated_at=now())


def staged_objects(imp: Import) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The staged chunks' objects, one chunk at a time, digest-checked against the chunk and the
    bundle, translated to the current format. The chunks must be exactly the bundle's: ordinals
    0 to chunk_count - 1, each present (a chunk lost between verification and activation
    rejects, raised when the gap is reached or, for missing last chunks, once the last staged one
    is consumed: a consumer must exhaust this generator before trusting what it read)."""
    bundle = imp.bundle
    expected = 0
    chunks = ImportChunk.objects.filter(space_id=imp.space_id, imp=imp).order_by("ordinal")
    for chunk in chunks.iterator(chunk_size=4):
        if chunk.ordinal != expected:
            raise reject(f"Chunk {expected} of {bundle['chunk_count']} is not staged.")
        expected += 1
        if chunk.ordinal >= bundle["chunk_count"]:
            raise reject(f"Chunk {chunk.ordinal} is past the bundle's chunk_count.")
        computed = digest_bytes(chunk.objects_json.encode("utf-8"))
        if computed != chunk.digest or computed != bundle["chunk_digests"][chunk.ordinal]:
            raise reject(
                f"Chunk {chunk.ordinal}: its digest does not match its objects or the bundle."
            )
        objects = json.loads(chunk.objects_json)
        try:
            objects = [policy.translate(o, bundle["format_version"]) for o in objects]
        except policy.UnsupportedFormat:
            raise reject("The bundle's format_version is not supported.")
        yield chunk.ordinal, objects
    if expected != bundle["chunk_count"]:
        raise reject(
            f"{expected} of the bundle's {bundle['chunk_count']} chunks are staged: "
            f"chunk {expected} is not."
        )


def check_bundle(b: dict[str, Any]) -> None:
    """The bundle's own consistency: its chunk digests number its chunk_count, and its digest is
    the digest of its members."""
    if len(b["chunk_digests"]) != b["chunk_count"]:
        raise reject("The bundle's chunk_digests do not match its chunk_count.")
    if (
        policy.bundle_digest(
            b["export_id"],
            b["space_id"],
            b["format_version"],
            b["chunk_digests"],
            b["object_counts"],
        )
        != b["bundle_digest"]
    ):
        raise reject("The bundle digest does not match the bundle.")


def declared_counts(b: dict[str, Any]) -> dict[str, int]:
    if set(b["object_counts"]) - set(policy.TYPE_ORDER):
        raise reject(COUNTS_MISMATCH)
    return {kind: b["object_counts"].get(kind, 0) for kind in policy.TYPE_ORDER}


@job_handler(VERIFY, on_failure=_reject_import)
def run_verify(job: Job) -> list[t.Ref]:
    imp = Import.objects.select_for_update().get(space_id=job.space_id, pk=job.params["import_id"])
    ref = [import_ref(imp.import_id)]
    if imp.state != "verifying":
        raise ImportStateConflict("The import is not being verified.", state=imp.state)
    b = imp.bundle
    check_bundle(b)
    checker = BundleChecker(b["object_counts"])
    for ordinal, objects in staged_objects(imp):
        for index, obj in enumerate(objects):
            checker.check(f"Chunk {ordinal}, object {index}", obj)
    if checker.counts != declared_counts(b):
        raise reject(COUNTS_MISMATCH)
    imp.state, imp.updated_at = "verified", now()
    imp.save(update_fields=["state", "updated_at"])
    return ref


def activation_accepted(space: Space) -> None:
    """`memory.imports.activate` accepted an activation of this space (inside its transaction,
    under the space lock): until it ends, the space takes only the mutations a frozen space
    takes (memory.access.gate_space_writable answers SPACE_FROZEN, reason import_activating),
    because the activation replaces the space's memory with the import's and a write committed
    meanwhile would be silently replaced. A write whose gates passed before this commits is
    re-decided at its own commit (the space bump re-checks `activation_pending`)."""
    space.activation_pending = True
    Space.objects.filter(pk=space.pk).update(activation_pending=True)


def activation_ended(space_id: str) -> None:
    """An activation committed or failed: the space takes writes again unless another import
    of it is still activating."""
    Space.objects.filter(pk=space_id).update(
        activation_pending=Exists(Import.objects.filter(space_id=space_id, state="activating"))
    )


def _activation_failed(job: Job, failure: dict[str, Any]) -> None:
    """The activation changed nothing. The import is `verified` again (activate it again), unless
    its staged data proved not to be the verified bundle any more (INVALID_INPUT: a chunk
    missing or altered, objects not adding up to object_counts): then it is `rejected`, as
    verification would have left it (discard it and stage the bundle again)."""
    imp = Import.objects.filter(space_id=job.space_id, pk=job.params["import_id"]).first()
    state = "rejected" if failure["code"] == "INVALID_INPUT" else "verified"
    Import.objects.filter(
        space_id=job.space_id, pk=job.params["import_id"], state="activating"
    ).update(state=state, failure=failure, updated_at=now())
    if imp is not None:
        activation_ended(imp.space_id)


@job_handler(ACTIVATE, on_failure=_activation_failed)
def run_activate(job: Job) -> list[t.Ref]:
    space = Space.objects.select_for_update().get(pk=job.space_id)
    imp = Import.objects.select_for_update().get(space_id=job.space_id, pk=job.params["import_id"])
    if imp.state != "activating":
        raise ImportStateConflict("The import is not being activated.", state=imp.state)
    # Verification passed once, but the staged rows are read again here: only the whole bundle
    # is loaded (every chunk, digests and object_counts checked again while streaming; any
    # mismatch rejects and the job's transaction rolls the clear and the load back).
    b = imp.bundle
    check_bundle(b)
    declared = declared_counts(b)
    staged = ImportChunk.objects.filter(space_id=imp.space_id, imp=imp).count()
    if staged != b["chunk_count"]:
        raise reject(f"{staged} of the bundle's {b['chunk_count']} chunks are staged.")
    written = load.clear_space(space)
    counts = policy.empty_counts()
    with load.checked_once(space):  # foreign keys checked set-wise, once per batch (PostgreSQL)
        loader = load.Loader(space)
        for _ordinal, objects in staged_objects(imp):
            for obj in objects:
                counts[obj["type"]] += 1
            loader.add(objects)
        loader.flush()
    if counts != declared:
        raise reject(COUNTS_MISMATCH)
    # The planner's statistics of the tables the load filled, before the receipt commits: the
    # first recall after an import must not be planned for the empty tables they were.
    filled = table_stats.analyze_grown(written + loader.written, space.pk)
    # and their visibility maps once it has committed (index-only scans skip the heap)
    table_stats.vacuum_after_commit(filled)
    at = now()
    Space.objects.filter(pk=space.pk).update(
        authority_generation=F("authority_generation") + 1,
        revision=F("revision") + 1,
        updated_at=at,
    )
    imp.state, imp.updated_at = "activated", at
    imp.save(update_fields=["state", "updated_at"])
    ImportChunk.objects.filter(space_id=imp.space_id, imp=imp).delete()
    activation_ended(space.pk)
    return [import_ref(imp.import_id)]


@shared_task(name="memory.tasks.sweep_exports")
def sweep_exports() -> dict[str, Any]:
    """Beat (every SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S): withdraw the exports committed more
    than limits.export_retention_s ago (chunks deleted; memory.exports.get already answers
    NOT_FOUND for them before this runs). One short transaction per batch."""
    retention = settings.SPOKE_MEMORY_LIMITS["export_retention_s"]
    cutoff = now() - timedelta(seconds=retention)
    withdrawn = 0
    while True:
        # The scan reads across spaces without locking (a FOR UPDATE over every shard is refused
        # by Citus); each space's batch is then locked and re-checked in its own transaction.
        found = list(
            Export.objects.filter(state=Export.READY, committed_at__lte=cutoff).values_list(
                "space_id", "pk"
            )[:100]
        )
        if not found:
            return {"withdrawn": withdrawn}
        by_space: dict[str, list[str]] = {}
        for space_id, pk in found:
            by_space.setdefault(space_id, []).append(pk)
        for space_id, ids in sorted(by_space.items()):
            with transaction.atomic():
                due = list(
                    Export.objects.select_for_update()
                    .filter(space_id=space_id, pk__in=ids)
                    .filter(state=Export.READY, committed_at__lte=cutoff)
                    .values_list("pk", flat=True)
                )
                if due:
                    withdrawn += withdraw_exports(space_id, due)


@shared_task(name="memory.tasks.sweep_imports")
def sweep_imports() -> dict[str, Any]:
    """Beat (every SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S, beside sweep_exports): discard the
    imports left in `staging` with no chunk for SPOKE_MEMORY_IMPORT_STAGING_TTL_S (chunks
    deleted, state `discarded`, `failure` saying why), as `memory.imports.discard` would; a
    later chunk then answers IMPORT_STATE_CONFLICT. One short transaction per batch."""
    cutoff = now() - timedelta(seconds=settings.SPOKE_MEMORY_IMPORT_STAGING_TTL_S)
    failure = {
        "code": "IMPORT_STATE_CONFLICT",
        "message": "The import was abandoned in staging: no chunk came within "
        f"{settings.SPOKE_MEMORY_IMPORT_STAGING_TTL_S} s.",
    }
    discarded = 0
    skipped: set[str] = set()  # locked by a chunk in flight: the next sweep looks again
    while True:
        # As sweep_exports: an unlocked scan across spaces, then each space's batch locked
        # (skipping rows a chunk in flight holds) and re-checked in its own transaction.
        found = [
            row
            for row in Import.objects.filter(state="staging", updated_at__lte=cutoff)
            .exclude(pk__in=sorted(skipped))
            .values_list("space_id", "pk")[:100]
        ]
        if not found:
            return {"discarded": discarded}
        by_space: dict[str, list[str]] = {}
        for space_id, pk in found:
            by_space.setdefault(space_id, []).append(pk)
        for space_id, ids in sorted(by_space.items()):
            with transaction.atomic():
                due = list(
                    Import.objects.select_for_update(skip_locked=True)
                    .filter(space_id=space_id, pk__in=ids)
                    .filter(state="staging", updated_at__lte=cutoff)
                    .values_list("pk", flat=True)
                )
                skipped.update(set(ids) - set(due))
                if not due:
                    continue
                ImportChunk.objects.filter(space_id=space_id, imp_id__in=due).delete()
                discarded += Import.objects.filter(
                    space_id=space_id, pk__in=due, state="staging"
                ).update(state="discarded", failure=failure, updated_at=now())
