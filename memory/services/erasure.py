"""Erasure beyond the record's own rows (docs/protocol.md#content): when a record is deleted, every reflection
whose basis holds it loses its content, every stored export whose snapshot holds it is withdrawn,
and every staged import of this provider's bundle of the space that holds it is discarded. Runs
inside the delete's transaction, under the space lock (memory.services.record_store.erase_record).
Retention (limits.export_retention_s) withdraws exports through the same `withdraw_exports`.

Concurrent jobs (PostgreSQL; on SQLite every write transaction is BEGIN IMMEDIATE, so none
interleave):
- A reflection job reads its pinned revisions without locks, then, before it writes, waits for
  every mutation in flight in the space (hold_space_against_writers) and checks whether a record
  it read was deleted meanwhile (erased_since_read): if so its reflection is stored erased. A
  delete that starts later waits for the job's commit (the space row lock) and then erases the
  reflection like any other.
- An export job reads one repeatable-read snapshot and does not lock its Export row until its
  final conditional update. The delete bumps `erasures` on every pending export of the space: a
  job whose snapshot predates that bump cannot publish (PostgreSQL refuses its update with a
  serialization failure; elsewhere the `erasures` it read no longer matches) and runs again on a
  fresh snapshot (memory.tasks.RunAgain). A job that published first has committed chunks by the
  time the delete's next statement looks for them, and is withdrawn here."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection
from django.db.models import F

from memory import statements
from memory.models import Export, ExportChunk, Import, ImportChunk, Record, Reflection
from memory.timeutil import now
from memory.wire.canonical import canonical

ERASED = {"text": ""}
# Imports staged but not yet activating: what a delete at the bundle's origin discards.
STAGED = ("staging", "verifying", "verified", "rejected")


def record_erased(record: Record) -> None:
    """Call after `record` was tombstoned, inside the delete's transaction."""
    erase_reflections(record)
    withdraw_exports_holding(record)
    discard_imports_holding(record)


def _needle(record_id: str) -> str:
    """How a record id appears in a chunk's canonical JSON: as a JSON string. Any object naming
    the record (the record, the candidate whose outcome made it, a reflection whose basis pins it)
    holds it or material derived from it. On SQLite the match ignores ASCII case, which only ever
    withdraws more."""
    return canonical(record_id).decode("utf-8")


def erase_reflections(record: Record) -> int:
    held = [
        pk
        for pk, basis in Reflection.objects.filter(
            space_id=record.space_id, subject_id=record.subject_id
        ).values_list("pk", "basis")
        if any(ref["record_id"] == record.record_id for ref in basis["record_refs"])
    ]
    return Reflection.objects.filter(space_id=record.space_id, pk__in=held).update(
        content=dict(ERASED)
    )


def hold_space_against_writers(space_id: str) -> None:
    """For a job about to write derived data it read without locks: wait until every erasure
    in flight in the space has committed, and keep new ones waiting until this transaction ends
    that can erase (PostgreSQL FOR KEY SHARE on the space row: `records.delete`, the one op that
    erases a record, is exclusive and holds the space row FOR UPDATE across its erasure, which a
    key-share lock waits for; ordinary writers' commit-tail bumps take FOR NO KEY UPDATE and are
    not waited for, which is fine, since they erase nothing). Nothing to do on SQLite, where write
    transactions never interleave."""
    if connection.vendor != "postgresql":
        return
    statements.execute(statements.space_key_share(), [space_id])


def erased_since_read(space_id: str, record_ids: list[str]) -> bool:
    """Whether any of these records (read live by a job) is tombstoned now. Call after
    hold_space_against_writers: a delete that ran meanwhile has committed by then, and one that
    comes later waits for the job and then finds what it wrote."""
    return any(
        Record.objects.filter(
            space_id=space_id,
            record_id__in=record_ids[start : start + 1000],
            deleted_at__isnull=False,
        ).exists()
        for start in range(0, len(record_ids), 1000)
    )


def withdraw_exports(space_id: str, export_ids: Iterable[str]) -> int:
    """Withdraw exports of a space: chunks deleted, state `withdrawn` (exports.get:
    NOT_FOUND)."""
    ids = list(export_ids)
    if not ids:
        return 0
    ExportChunk.objects.filter(space_id=space_id, export_id__in=ids).delete()
    return Export.objects.filter(space_id=space_id, pk__in=ids).update(state=Export.WITHDRAWN)


def withdraw_exports_holding(record: Record) -> int:
    Export.objects.filter(space_id=record.space_id, state=Export.PENDING).update(
        erasures=F("erasures") + 1
    )
    held = (
        ExportChunk.objects.filter(
            space_id=record.space_id,
            export__space_id=record.space_id,
            export__state=Export.READY,
            objects_json__contains=_needle(record.record_id),
        )
        .values_list("export_id", flat=True)
        .distinct()
    )
    return withdraw_exports(record.space_id, set(held))


def discard_imports_holding(record: Record) -> int:
    """Staged imports (into any space) of a bundle this provider exported from the record's
    space, holding the record: their chunks are deleted and they end `discarded`. An activated
    import is the target space's own memory, not a copy in transit: it is left alone. The
    search reads across spaces (a bundle may be staged into any space: docs/scaling.md); the
    discards then name each import's space."""
    held: dict[str, set[str]] = {}
    for imp_id, space_id in ImportChunk.objects.filter(
        imp__space_id=F("space_id"),  # a co-located join (Citus refuses one on the id alone)
        imp__state__in=STAGED,
        imp__bundle__space_id=record.space_id,
        imp__bundle__provider_id=settings.SPOKE_MEMORY_PROVIDER_ID,
        objects_json__contains=_needle(record.record_id),
    ).values_list("imp_id", "space_id"):
        held.setdefault(space_id, set()).add(imp_id)
    discarded = 0
    for space_id, ids in sorted(held.items()):
        ImportChunk.objects.filter(space_id=space_id, imp_id__in=ids).delete()
        discarded += Import.objects.filter(space_id=space_id, pk__in=ids, state__in=STAGED).update(
            state="discarded",
            updated_at=now(),
            failure={
                "code": "NOT_FOUND",
                "message": "A record this import holds was erased at its origin.",
            },
        )
    return discarded
