"""Storage side of the hybrid recall engine (hybrid/4): the derived embeddings of record content
(the copy `VECTORS` it declares) and the per-subject vector cache recall scores against. The
policy itself is `memory.engine.hybrid3` (its cosine side `memory.engine.hybrid`); the model that
makes the vectors is the setting `SPOKE_MEMORY_EMBED_MODEL` (memory.embedding.embed).

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
  (the next drain or sweep tries again) and recall ranks lexically.
- Recall reads a subject's vectors through a per-process cache keyed on Subject.revision (which
  moves on every change to the subject's records), on the subject's vector generation
  (memory.models.VectorGeneration: every store of its vectors adds one, every erasure ERASED, in
  the same transaction, whatever order vector ids commit in; one index probe) and on the model, so
  the same stored state gives the same rows (in no set order: the cosine ranking breaks ties by
  record id). When the key moves the cache reads only what moved and extends or trims its
  matrix (`_refresh`). It holds exactly the subject's live records' current vectors, with each
  record's pk, so for a caller who may read every live record (selection.whole_subject) the
  semantic side needs no eligibility statement."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from memory import statements
from memory.embedding import embed
from memory.engine import hybrid
from memory.models import (
    PendingEmbedding,
    Record,
    RecordEmbedding,
    Space,
    Subject,
    VectorGeneration,
)
from memory.models.scoped import by_space
from memory.recall_contract import DerivedCopy, Insert, LoadedRecord
from memory.selectors import recall as reads
from memory.services import table_stats
from memory.services.mutation import defer_rows

CACHE_SUBJECTS = 16
log = logging.getLogger("memory.embeddings")


def enabled() -> bool:
    """The configured engine ranks with embeddings (hybrid/4, or a registered engine that
    declares it)."""
    from memory import recall_contract as registry  # the served engines' table

    try:
        return registry.current().embedder
    except Exception:  # noqa: BLE001 - an unknown policy embeds nothing (start-up refuses it)
        return False


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


def model_key() -> str:
    return embed.identity().key


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


def store_live_vectors(records: list[Record], vectors, key: str | None = None) -> int:
    """Store the vectors (embedded without a lock) of the records still live, deciding which are
    under the record row locks a delete takes (`memory.records.delete` locks the record FOR
    UPDATE before it erases the derived copies): a delete that committed while the batch was
    embedded is seen (PostgreSQL re-reads a row it waited for, and the tombstone no longer
    matches), and one that comes later waits for this transaction and then erases what it
    stored. Rows are locked in pk order, as every drain takes them. Call inside a transaction
    (on SQLite a write transaction is BEGIN IMMEDIATE: no delete can interleave). Returns how
    many it stored."""
    if not records:
        return 0
    live: set[int] = set()
    for space_id, rows in by_space(records).items():
        live.update(
            Record.objects.select_for_update(no_key=True)
            .filter(space_id=space_id, pk__in=[r.pk for r in rows], deleted_at__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    kept = [(r, v) for r, v in zip(records, vectors, strict=True) if r.pk in live]
    if kept:
        store_vectors([r for r, _ in kept], [v for _, v in kept], key)
    return len(kept)


def store_vectors(records: list[Record], vectors, key: str | None = None) -> None:
    """Store `vectors` (one unit vector per record, in order) as the records' current revisions'
    vectors of the model `key` (default: the configured one). A revision's content never
    changes, so a vector already there for it is the same one (kept)."""
    key = key or model_key()
    RecordEmbedding.objects.bulk_create(
        [
            RecordEmbedding(
                space_id=r.space_id,
                record=r,
                subject_id=r.subject_id,
                revision=r.revision,
                model_id=key,
                dim=len(v),
                vector=embed.to_bytes(v),
            )
            for r, v in zip(records, vectors, strict=True)
        ],
        batch_size=2000,
        ignore_conflicts=True,
    )
    vectors_changed(records, added_only=True)


# What an erasure (or any change but an addition) adds to the vector generation: a store adds
# one, so the cache tells from the generation alone whether it needs to look for vectors gone.
ERASED = 1 << 32


def vectors_changed(records: Iterable[Record], *, added_only: bool = False) -> None:
    """Move the vector generation of the records' subjects (the vector cache's key): in the
    transaction that stores or erases their vectors. One statement, subjects in pk order.
    `added_only`: vectors were only added (a store): one step; otherwise ERASED steps."""
    subjects = sorted({(r.subject_id, r.space_id) for r in records})
    if subjects:
        statements.execute(
            statements.vector_generation_bump(len(subjects), 1 if added_only else ERASED),
            [value for subject in subjects for value in subject],
        )


def erase_embeddings(records: Iterable[Record]) -> None:
    """Derived-copy eraser: every revision's vector (of every model) goes with the content, and
    the record leaves the backlog."""
    records = list(records)
    for space_id, rows in by_space(records).items():
        pks = [r.pk for r in rows]
        RecordEmbedding.objects.filter(space_id=space_id, record_id__in=pks).delete()
        PendingEmbedding.objects.filter(space_id=space_id, record_id__in=pks).delete()
    vectors_changed(records)


def erase_space_embeddings(space: Space) -> None:
    """Whole-space eraser (import activation's clear), set-wise."""
    record_pks = Record.objects.filter(space=space).values("pk")
    for model in (RecordEmbedding, PendingEmbedding):
        qs = model.objects.filter(space_id=space.pk, record_id__in=record_pks)
        qs._raw_delete(qs.db)
    # the space's subjects go next (activation makes new ones): their generations with them
    generations = VectorGeneration.objects.filter(space_id=space.pk)
    generations._raw_delete(generations.db)


def needs(engine_model: str = embed.BUNDLED_NAME) -> str | None:
    """Why a hybrid engine whose own model is `engine_model` cannot run here, or None (the
    configured SPOKE_MEMORY_EMBED_MODEL, when set, is the one it would embed with)."""
    return embed.unavailable(embed.config().model or engine_model)


def describe() -> dict:
    return {"embedding_model": embed.identity().wire()}


VECTORS = DerivedCopy(
    name="vectors",
    write=write_embeddings,
    bulk_write=bulk_write_embeddings,
    erase=erase_embeddings,
    erase_space=erase_space_embeddings,
    tables=(RecordEmbedding, PendingEmbedding),
    drain=drain_backlog,
    backlog=backlog,
)


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


@dataclass(frozen=True)
class SubjectVectors:
    revision: tuple  # the subject's revision, its vector generation, the model
    ids: list[str]  # the record_id of each row of `matrix` (rows in no particular order)
    matrix: object  # numpy (len(ids), dim) float32: the first rows of `buffer`
    pks: dict[str, int]  # record_id → pk of every record in `ids`
    record_ids: dict[int, str]  # the other way
    # What the matrix was made from, so the next key reads only what changed:
    live: dict[int, int] = field(default_factory=dict)  # pk → revision, every live record
    rows: dict[int, int] = field(default_factory=dict)  # pk → its row of the matrix
    lacking: frozenset[int] = frozenset()  # the live records without a row (no vector yet)
    buffer: object = None  # the matrix's storage, with room for rows added later
    tip: list[int] = field(default_factory=list)  # [rows of `buffer` in use], shared by its users


_cache: OrderedDict[int, SubjectVectors] = OrderedDict()
_cache_lock = threading.Lock()

# A refresh looks up the vectors of at most this many records without one, each by its unique
# index; more (an import's backlog draining) are found in one range of the subject's vectors.
LOOKUP_MAX = 512


def subject_vectors(subject: Subject) -> SubjectVectors:
    """The configured model's vectors of the subject's live records at their current revision,
    at the subject's current revision (the caller reads `subject` in the same request).

    Kept current by generation, not reloaded: when the key moved since the cached matrix, only
    what moved is read again (`_refresh`), and the matrix is extended or trimmed, not rebuilt.
    docs/decisions/vector-cache-by-generation.md."""
    # Vectors are added by drains and erased with their record's content (records.delete, which
    # moves the subject's revision too); each moves the generation in its own transaction, and
    # the generation is read before the vectors, so a matrix is never older than its key.
    # The model's dimension is part of the model's key: only vectors of that dimension are read
    # (one of another, stored by a server that changed its dimension, is never mixed in; an
    # unknown dimension, 0, uses none: recall is lexical).
    key = (subject.revision, reads.vector_marker(subject), (embed.dimension() or 0, model_key()))
    with _cache_lock:
        hit = _cache.get(subject.pk)
        if hit is not None and hit.revision == key:
            _cache.move_to_end(subject.pk)
            return hit
    vectors = _refresh(subject, key, hit if hit is not None and hit.revision[2] == key[2] else None)
    with _cache_lock:
        _cache[subject.pk] = vectors
        _cache.move_to_end(subject.pk)
        while len(_cache) > CACHE_SUBJECTS:
            _cache.popitem(last=False)
    return vectors


def _refresh(subject: Subject, key: tuple, old: SubjectVectors | None) -> SubjectVectors:
    """The subject's vectors at `key`, reading from the database only what `old` (the cached
    matrix of an earlier key, same model; None: read everything) does not already tell.

    The subject's revision moved (a write): its live records' (pk, revision), two integers a
    row, compared with `old.live` to find the records that changed (their rows leave the
    matrix, they join `lacking`). The vector generation moved (a drain, an erasure): the vectors
    of the records in `lacking` only, each by its unique index. A vector is erased only with its
    record's content (records.delete: the record leaves the live ones), so a row held for a
    record's current revision stays right until the record changes; any other change to the
    stored vectors (an erasure without a delete, a repair) moves the generation by ERASED, and
    the rows held are checked against the stored vectors' (pk, revision) pairs."""
    import numpy as np

    dim, model = key[2]
    if not dim:
        return SubjectVectors(key, [], np.zeros((0, embed.DIM), dtype=np.float32), {}, {})
    if old is None:
        return _load(subject, key)
    live, lacking, drop = old.live, old.lacking, frozenset[int]()
    if old.revision[0] != key[0]:
        now = dict(reads.live_revision_numbers(subject))
        if now != old.live:
            removed = old.live.keys() - now.keys()
            changed = {pk for pk, revision in now.items() if old.live.get(pk) != revision}
            drop = frozenset(pk for pk in removed | changed if pk in old.rows)
            lacking = (old.lacking - removed) | changed
            live = now
    if key[1] // ERASED != old.revision[1] // ERASED:
        # vectors were erased or changed (not only added): those of the rows held still stored
        present = {
            (pk, revision)
            for _, pk, revision, _ in reads.stored_vectors(subject, model, dim, with_vectors=False)
        }
        gone = {pk for pk in old.rows if pk not in drop and (pk, live.get(pk)) not in present}
        if gone:
            drop = drop | gone
            lacking = lacking | (gone & live.keys())
    added: list[tuple[int, str, bytes]] = []
    if old.revision[1] != key[1] and lacking:
        added = _lacking_vectors(subject, model, dim, live, lacking)
        lacking = lacking - {pk for pk, _, _ in added}
    log.debug(
        "vector cache of subject %s: %d vectors, %d read now (by generation)",
        subject.pk,
        len(old.ids) - len(drop) + len(added),
        len(added),
    )
    return _changed(old, key, live, frozenset(lacking), drop, added)


def _load(subject: Subject, key: tuple) -> SubjectVectors:
    """Everything: the subject's stored vectors of the model (one statement) and its live
    records."""
    dim, model = key[2]
    stored = reads.stored_vectors(subject, model, dim)
    live_rows = reads.live_revisions(subject)
    live = {pk: revision for pk, _, revision in live_rows}
    names = {pk: record_id for pk, record_id, _ in live_rows}
    current = [
        (pk, names[pk], blob) for _, pk, revision, blob in stored if live.get(pk) == revision
    ]
    buffer = _room(len(current), dim)
    if current:
        buffer[: len(current)] = _block([blob for _, _, blob in current], dim)
    ids = [record_id for _, record_id, _ in current]
    pks = {record_id: pk for pk, record_id, _ in current}
    log.debug(
        "vector cache of subject %s: %d vectors, %d read now (full load)",
        subject.pk,
        len(current),
        len(current),
    )
    return SubjectVectors(
        key,
        ids,
        buffer[: len(current)],
        pks,
        {pk: record_id for record_id, pk in pks.items()},
        live,
        {pk: i for i, (pk, _, _) in enumerate(current)},
        frozenset(live.keys() - pks.values()),
        buffer,
        [len(current)],
    )


def _lacking_vectors(
    subject: Subject, model: str, dim: int, live: dict[int, int], lacking: Collection[int]
) -> list[tuple[int, str, bytes]]:
    """(pk, record_id, vector bytes) of the records in `lacking` that now have a vector for
    their revision in `live`."""
    if len(lacking) <= LOOKUP_MAX:
        return [
            row
            for row in reads.current_vectors(subject.space_id, sorted(lacking), model, dim)
            if row[0] in live
        ]
    # Many (a drain of an import's backlog under way): the ids of the subject's vectors, then
    # the bytes of those wanted, from the lowest wanted id on.
    wanted = {
        vid: pk
        for vid, pk, revision, _ in reads.stored_vectors(subject, model, dim, with_vectors=False)
        if pk in lacking and live.get(pk) == revision
    }
    if not wanted:
        return []
    names = {pk: record_id for pk, record_id, _ in reads.live_revisions(subject)}
    return [
        (wanted[vid], names[wanted[vid]], bytes(blob))
        for vid, _, _, blob in reads.stored_vectors(subject, model, dim, from_id=min(wanted))
        if vid in wanted and wanted[vid] in names
    ]


def _room(n: int, dim: int) -> Any:
    """A matrix buffer for n rows and some more (the rows later writes add)."""
    import numpy as np

    return np.empty((n + max(64, n // 16), dim), dtype=np.float32)


def _block(blobs: list[bytes], dim: int) -> Any:
    import numpy as np

    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)


def _changed(
    old: SubjectVectors,
    key: tuple,
    live: dict[int, int],
    lacking: frozenset[int],
    drop: frozenset[int],
    added: list[tuple[int, str, bytes]],
) -> SubjectVectors:
    """`old` without the rows of `drop` and with the rows `added`. Nothing dropped: the new rows
    go after the old ones in the same buffer when `old` is its newest user (a matrix already
    handed out is never written: its rows are the buffer's first ones), so no row is copied."""
    from dataclasses import replace

    if not drop and not added:
        return replace(old, revision=key, live=live, lacking=lacking)
    dim = key[2][0]
    n, k = len(old.ids), len(added)
    block = _block([blob for _, _, blob in added], dim) if added else None
    new_ids = [record_id for _, record_id, _ in added]
    new_pks = {record_id: pk for pk, record_id, _ in added}
    buffer: Any = old.buffer
    if not drop:
        with _cache_lock:
            claimed = old.tip == [n] and buffer is not None and buffer.shape[0] >= n + k
            if claimed:
                old.tip[0] = n + k
        if claimed:
            tip = old.tip
        else:
            buffer, tip = _room(n + k, dim), [n + k]
            buffer[:n] = old.matrix
        buffer[n : n + k] = block
        ids = old.ids + new_ids
        pks = {**old.pks, **new_pks}
        record_ids = {**old.record_ids, **{pk: record_id for record_id, pk in new_pks.items()}}
        rows = {**old.rows, **{pk: n + i for i, (pk, _, _) in enumerate(added)}}
    else:
        import numpy as np

        keep = np.ones(n, dtype=bool)
        keep[[old.rows[pk] for pk in drop]] = False
        m = n - len(drop)
        buffer, tip = _room(m + k, dim), [m + k]
        buffer[:m] = old.matrix[keep]  # type: ignore[index]
        if block is not None:
            buffer[m : m + k] = block
        ids = [record_id for record_id, kept in zip(old.ids, keep.tolist(), strict=True) if kept]
        ids += new_ids
        pks = {record_id: old.pks[record_id] for record_id in ids[:m]} | new_pks
        record_ids = {pk: record_id for record_id, pk in pks.items()}
        rows = {pks[record_id]: i for i, record_id in enumerate(ids)}
    return SubjectVectors(
        key, ids, buffer[: len(ids)], pks, record_ids, live, rows, lacking, buffer, tip
    )


def semantic_ranking(
    subject: Subject,
    query_text: str,
    eligible_ids,
    top_n: int = hybrid.SEMANTIC_TOP_N,
    min_cosine: float = hybrid.MIN_COSINE,
    vectors: SubjectVectors | None = None,
) -> list[tuple[str, float]]:
    """The cosine ranking of the subject's records that are in `eligible_ids` (a callable
    taking a list of record ids and returning the eligible subset: authorization ∩ filters),
    at most SEMANTIC_TOP_N, each at least MIN_COSINE from the query. Empty when the embeddings
    server cannot embed the query (recall is then lexical). `vectors`: the subject's, when the
    caller already read them."""
    if vectors is None:
        vectors = subject_vectors(subject)
    if not vectors.ids or not query_text.strip():
        return []
    try:
        query = embed.embed([query_text])[0]
    except embed.EmbedUnavailable as err:
        log.warning("embeddings unavailable (%s); this recall is lexical", err)
        return []
    matrix: Any = vectors.matrix
    if query.shape != (matrix.shape[1],):  # a local model of another dimension
        log.warning("query vector of dimension %d; this recall is lexical", len(query))
        return []
    step = top_n * 4
    ranked = hybrid.cosine_ranking(
        query, vectors.ids, vectors.matrix, top_n=step, min_cosine=min_cosine
    )
    ok = set(eligible_ids([rid for rid, _ in ranked]))
    out = [item for item in ranked if item[0] in ok]
    if len(out) < top_n and len(ranked) == step:
        # Filters left too few of the nearest eligible: walk the rest of the ranking, window by
        # window (the order is the same; only how far we read changes).
        rest = hybrid.cosine_ranking(
            query, vectors.ids, vectors.matrix, top_n=len(vectors.ids), min_cosine=min_cosine
        )[step:]
        for start in range(0, len(rest), step):
            window = rest[start : start + step]
            ok = set(eligible_ids([rid for rid, _ in window]))
            out.extend(item for item in window if item[0] in ok)
            if len(out) >= top_n:
                break
    return out[:top_n]


def _eligible_ids(eligible, flt, pks: dict[str, int]):
    """A callable: the eligible subset of some record ids (authorization ∩ filters), noting
    each one's pk in `pks`."""

    def eligible_ids(ids: list[str]) -> list[str]:
        rows = reads.eligible_pks(eligible, flt, ids)
        pks.update(rows)
        return [record_id for record_id, _ in rows]

    return eligible_ids


def _every_id(vectors: SubjectVectors, pks: dict[str, int]):
    """The `eligible_ids` of a caller who may read every live record of the subject
    (selection.whole_subject): the cached vectors are exactly those of the subject's live records
    (the cache is keyed on the subject's revision, which every delete moves, and on its vector
    generation, which every store and erasure of a vector moves), so every id is eligible and
    its pk is in the cache. No statement: the eligibility check it replaces answered the same
    ids."""

    def eligible_ids(ids: list[str]) -> list[str]:
        pks.update((record_id, vectors.pks[record_id]) for record_id in ids)
        return ids

    return eligible_ids


def semantic_side(
    vectors: SubjectVectors,
    subject: Subject,
    query_text: str,
    eligible,
    flt,
    *,
    whole: bool,
    top_n: int,
    min_cosine: float,
) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """The hybrid engines' cosine side: the `top_n` records of `eligible` nearest the query
    at `min_cosine` or more (`whole`: `eligible` is every live record of the subject,
    selection.whole_subject, and is not read; `vectors`: the subject's, read by the caller with
    subject_vectors in this request), and record_id → pk of each."""
    pks: dict[str, int] = {}
    semantic = semantic_ranking(
        subject,
        query_text,
        _every_id(vectors, pks) if whole else _eligible_ids(eligible, flt, pks),
        top_n=top_n,
        min_cosine=min_cosine,
        vectors=vectors,
    )
    return semantic, pks


def fused_head(
    lexical: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    pks: dict[str, int],
    matched: Callable[[list[int]], Collection[int]],
    fuse: Callable[[list[tuple[str, float]], list[tuple[str, float]]], list[tuple[str, float]]],
) -> tuple[list[tuple[str, float]], int]:
    """The hybrid engines for memory.recall: the head of the engine/2 ranking fused by `fuse`
    with the cosine side (`semantic_side`: its ranking and record_id → pk). Returns the fused
    ranking and how many of the semantic side's records are not lexical matches (to add to the
    lexical total: eligible = lexical matches ∪ the semantic side); `matched(pks)`: those of
    the pks (the semantic side's records outside the lexical head) that hold a query term."""
    in_head = {record_id for record_id, _ in lexical}
    outside = [pks[record_id] for record_id, _ in semantic if record_id not in in_head]
    held = matched(outside) if outside else ()
    extra = sum(1 for pk in outside if pk not in held)
    return fuse(lexical, semantic), extra
