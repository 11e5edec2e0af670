"""The embedding queue of the hybrid engines (hybrid/6's derived copy `VECTORS`, declared in
memory.services.hybrid_store): the backlog of records waiting for their vector, the worker's
drain that embeds it, and the embeddings made now (`embed_now`, `backfill`). The vectors are
stored through memory.services.vectors.store.

- Embeddings are made off the write path: a write queues a PendingEmbedding row (record,
  revision) in its own transaction, and after COMMIT a worker task (`memory.tasks.drain_derived`)
  embeds the backlog in batches (several times cheaper per text than one at a time) and removes
  the rows it covered. Until a record's vector for its current revision exists, recall ranks it
  lexically only (as one written while another engine was set); the answer is still a function
  of the stored state (which vectors exist). The backlog is shown in /readyz. The beat sweep
  drains it too, in case a broker message was lost.
- Each vector is labelled with the model that made it (`embed.identity().key`). When a worker
  first drains under a model (after a model change, or a switch from a lexical engine), it
  queues every live record that has no vector of that model for its current revision
  (`requeue_missing`), and logs its progress; recall reads only the configured model's vectors.
- An embeddings server that cannot answer (`embed.EmbedUnavailable`) leaves the backlog as it is
  (the next drain or sweep tries again) and recall ranks lexically."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from memory.embedding import embed
from memory.models import (
    PendingEmbedding,
    Record,
    RecordEmbedding,
    Space,
    Subject,
)
from memory.recall_contract import Insert, LoadedRecord
from memory.services import table_stats
from memory.services.mutation import defer_rows
from memory.services.vectors.store import enabled, model_key, store_live_vectors

log = logging.getLogger("memory.embeddings")


PENDING_FIELDS = ("space_id", "record_id", "revision")


def write_embeddings(records: Iterable[Record]) -> None:
    """Derived-copy writer: queue each record's current revision for its vector (none for empty
    text); a worker embeds it after the write commits."""
    if not enabled():
        return
    records = [r for r in records if r.text]
    if not records:
        return
    columns: list[list] = [
        [r.space_id for r in records],
        [r.pk for r in records],
        [r.revision for r in records],
    ]
    # in a mutation, the commit-tail statement inserts them (one round trip fewer per write);
    # the conflict target is the backlog's primary key, (record_id, space_id) on PostgreSQL
    # (migration 0022: on Citus a unique key must hold the distribution column)
    key = ("record", "space") if connection.vendor == "postgresql" else ("record",)
    if not defer_rows(PendingEmbedding, PENDING_FIELDS, columns, key, ("revision",)):
        PendingEmbedding.objects.bulk_create(
            [PendingEmbedding(space_id=r.space_id, record=r, revision=r.revision) for r in records],
            update_conflicts=True,
            unique_fields=list(key),
            update_fields=["revision"],
        )
    transaction.on_commit(_kick, robust=True)


def bulk_write_embeddings(records: list[LoadedRecord], insert: Insert) -> None:
    """Bulk writer (import activation): the same backlog rows, set-wise."""
    if not enabled():
        return
    rows = [(r.space_pk, r.pk, r.revision) for r in records if r.text]
    if rows:
        insert(PendingEmbedding, ["space_id", "record", "revision"], rows)
        # Called once per batch: one kick at COMMIT for the whole activation, not one each.
        if not any(entry[1] is _kick for entry in connection.run_on_commit):
            transaction.on_commit(_kick, robust=True)


def _kick() -> None:
    """Wake the worker's drain after COMMIT: one broker message per burst of writes in this
    process (`memory.tasks.wake_drain`), not one per write."""
    from memory.tasks import wake_drain

    wake_drain()


def backlog() -> int:
    """Records waiting for their vector, in every space (/readyz, the drain's log lines)."""
    return PendingEmbedding.objects.count()


def backlog_spaces() -> list[str]:
    """The spaces with records waiting for their vector: the drain's one scan across spaces
    (docs/scaling.md); the work is then done space by space."""
    return list(
        PendingEmbedding.objects.order_by("space_id").values_list("space_id", flat=True).distinct()
    )


def drain(batch: int = 64) -> int:
    """Embed the backlog, `batch` texts at a time, until it is empty; returns how many records
    got a vector. Holds no lock while it embeds: a record changed meanwhile keeps (or gets) its
    pending row for the newer revision, a record deleted meanwhile gets no vector
    (`store_live_vectors` re-checks under the delete's lock), and two drains racing only write
    the same vector twice (ignored). An embeddings server that cannot answer stops the drain with
    the backlog kept. Space by space: every statement of a space's batch names it."""
    done = 0
    key = model_key()
    for space_id in backlog_spaces():
        last_pk = 0
        while True:
            rows = list(
                PendingEmbedding.objects.filter(space_id=space_id, record_id__gt=last_pk)
                .order_by("record_id")
                .values_list("record_id", "revision")[:batch]
            )
            if not rows:
                break
            last_pk = rows[-1][0]
            records = list(
                Record.objects.filter(
                    space_id=space_id, pk__in=[pk for pk, _ in rows], deleted_at__isnull=True
                ).only("pk", "space_id", "subject_id", "revision", "text")
            )
            texts = [r for r in records if r.text]
            try:
                vectors = embed.embed([r.text for r in texts]) if texts else []
            except embed.EmbedUnavailable as err:
                log.warning("embeddings unavailable (%s); %d records keep waiting", err, backlog())
                return done
            with transaction.atomic():
                erased = len(texts) - store_live_vectors(texts, vectors, key)
                covered = Q(pk__in=[])
                current = {r.pk: r.revision for r in records}
                for pk, revision in rows:
                    # a deleted or emptied record needs no vector; a newer revision stays queued
                    covered |= Q(record_id=pk, revision__lte=current.get(pk, revision))
                PendingEmbedding.objects.filter(Q(space_id=space_id) & covered).delete()
            done += len(records) - erased
            if done >= batch * 16 and done % (batch * 16) < batch:
                log.info("embedding backlog: %d embedded by this drain, %d left", done, backlog())
    return done


_caught_up: str | None = None


def requeue_missing(key: str | None = None) -> int:
    """Queue every live record with text that has no vector of the model `key` (default: the
    configured one) for its current revision: after a model change, or a switch from a lexical
    engine. Set-wise, in pages, space by space (the list of spaces is its one read across
    them); returns how many were queued."""
    key = key or model_key()
    spaces = Space.objects.order_by("space_id").values_list("space_id", flat=True)
    return sum(_requeue_space(space_id, key) for space_id in list(spaces))


def _requeue_space(space_id: str, key: str) -> int:
    has_vector = RecordEmbedding.objects.filter(
        space_id=space_id, record=OuterRef("pk"), revision=OuterRef("revision"), model_id=key
    )
    queued = PendingEmbedding.objects.filter(space_id=space_id, record=OuterRef("pk"))
    missing = (
        Record.objects.filter(space_id=space_id, deleted_at__isnull=True)
        .exclude(text="")
        .filter(~Exists(has_vector), ~Exists(queued))
        .values_list("pk", "revision")
    )
    n = 0
    page: list[PendingEmbedding] = []
    for pk, revision in missing.iterator(chunk_size=2000):
        page.append(PendingEmbedding(space_id=space_id, record_id=pk, revision=revision))
        if len(page) == 2000:
            PendingEmbedding.objects.bulk_create(page, ignore_conflicts=True)
            n, page = n + len(page), []
    PendingEmbedding.objects.bulk_create(page, ignore_conflicts=True)
    return n + len(page)


def drain_backlog() -> int:
    """The worker's drain (memory.tasks.drain_derived): the first time this process drains under
    a model, it queues the live records that have no vector of it; then it drains, logging its
    progress."""
    global _caught_up
    key = model_key()
    if _caught_up != key:
        queued = requeue_missing(key)
        _caught_up = key
        if queued:
            log.info(
                "embedding model %s: %d live records queued for a vector of it",
                embed.identity().name,
                queued,
            )
            table_stats.analyze_grown({PendingEmbedding: queued})
    done = drain()
    # A big backlog drained (an import's): the vectors' statistics now, not when autovacuum
    # comes round (memory.services.table_stats); the first recall plans its vector load on them.
    table_stats.analyze_grown({RecordEmbedding: done, PendingEmbedding: done})
    if done:
        log.info(
            "embedding backlog: %d records embedded with %s, %d left",
            done,
            embed.identity().name,
            backlog(),
        )
    return done


def embed_now(records: list[Record]) -> None:
    """A vector for each record's current revision, now, in one batch (none for a record
    deleted while the batch was embedded)."""
    if records:
        vectors = embed.embed([r.text for r in records])
        with transaction.atomic():
            store_live_vectors(records, vectors)


def backfill(subject: Subject, batch: int = 256) -> int:
    """Embed the live records of a subject that have no vector of the configured model for their
    current revision."""
    key = model_key()
    missing = list(
        Record.objects.filter(space_id=subject.space_id, subject=subject, deleted_at__isnull=True)
        .exclude(
            Exists(
                RecordEmbedding.objects.filter(
                    space_id=subject.space_id,
                    record=OuterRef("pk"),
                    revision=OuterRef("revision"),
                    model_id=key,
                )
            )
        )
        .order_by("record_id")
    )
    for i in range(0, len(missing), batch):
        embed_now([r for r in missing[i : i + batch] if r.text])
    table_stats.analyze_grown({RecordEmbedding: len(missing)})
    return len(missing)
