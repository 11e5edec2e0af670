"""Storage side of the hybrid recall engine (hybrid/1): the derived embeddings of record content
and the per-subject vector cache recall scores against. Not pure like the rest of `engine/`
(it reads and writes RecordEmbedding rows); the policy itself is `memory.engine.hybrid`.

- `install()` (from MemoryConfig.ready) registers the eraser always — embeddings left by an
  earlier hybrid run must still go when their content is deleted — and the writer only when
  `SPOKE_MEMORY_ENGINE` is hybrid/1 (then the semantic extra must be installed, or start-up
  fails loudly rather than recall quietly degrading).
- Embeddings are made off the write path: a write queues a PendingEmbedding row (record,
  revision) in its own transaction, and after COMMIT a worker task (`memory.tasks.drain_derived`)
  embeds the backlog in batches (several times cheaper per text than one at a time) and removes
  the rows it covered. Until a record's vector for its current revision exists, recall ranks it
  lexically only (as one written while another engine was set); the answer is still a function
  of the stored state (which vectors exist). The backlog is shown in /readyz. The beat sweep
  drains it too, in case a broker message was lost; `backfill()` embeds a subject's records that
  have no vector (written before the switch to hybrid/1).
- Recall reads a subject's vectors through a per-process cache keyed on Subject.revision (which
  moves on every change to the subject's records) and on the subject's stored vectors (count and
  newest id, one index-only range), so the same stored state gives the same matrix."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Count, F, Max, Q

from memory.engine import ENGINE_POLICIES, embed, hybrid, hybrid2
from memory.models import PendingEmbedding, Record, RecordEmbedding, Subject
from memory.services import derived
from memory.tasks import DRAINS

CACHE_SUBJECTS = 16


HYBRID = (hybrid.VERSION, hybrid2.VERSION)


def enabled() -> bool:
    """A hybrid policy (hybrid/1 or hybrid/2) is the configured engine."""
    return settings.SPOKE_MEMORY_ENGINE in HYBRID


def write_embeddings(records: Iterable[Record]) -> None:
    """Derived-copy writer: queue each record's current revision for its vector (none for empty
    text); a worker embeds it after the write commits."""
    if not enabled():
        return
    records = [r for r in records if r.text]
    if not records:
        return
    PendingEmbedding.objects.bulk_create(
        [PendingEmbedding(record=r, revision=r.revision) for r in records],
        update_conflicts=True,
        unique_fields=["record"],
        update_fields=["revision"],
    )
    transaction.on_commit(_kick, robust=True)


def _kick() -> None:
    from memory.tasks import drain_derived

    drain_derived.delay()


def backlog() -> int:
    """Records waiting for their vector."""
    return PendingEmbedding.objects.count()


def drain(batch: int = 64) -> int:
    """Embed the backlog, `batch` texts at a time, until it is empty; returns how many records
    got a vector. Holds no lock while it embeds: a record changed meanwhile keeps (or gets) its
    pending row for the newer revision, a record deleted meanwhile gets no vector (`embed_now`
    re-checks under the delete's lock), and two drains racing only write the same vector twice
    (ignored)."""
    done = 0
    last_pk = 0
    while True:
        rows = list(
            PendingEmbedding.objects.filter(record_id__gt=last_pk)
            .order_by("record_id")
            .values_list("record_id", "revision")[:batch]
        )
        if not rows:
            return done
        last_pk = rows[-1][0]
        records = list(
            Record.objects.filter(pk__in=[pk for pk, _ in rows], deleted_at__isnull=True).only(
                "pk", "subject_id", "revision", "text"
            )
        )
        texts = [r for r in records if r.text]
        vectors = embed.embed([r.text for r in texts]) if texts else []
        with transaction.atomic():
            erased = len(texts) - store_live_vectors(texts, vectors)
            covered = Q(pk__in=[])
            current = {r.pk: r.revision for r in records}
            for pk, revision in rows:
                # a deleted or emptied record needs no vector; a newer revision stays queued
                covered |= Q(record_id=pk, revision__lte=current.get(pk, revision))
            PendingEmbedding.objects.filter(covered).delete()
        done += len(records) - erased


def embed_now(records: list[Record]) -> None:
    """A vector for each record's current revision, now, in one batch (none for a record
    deleted while the batch was embedded)."""
    if records:
        vectors = embed.embed([r.text for r in records])
        with transaction.atomic():
            store_live_vectors(records, vectors)


def store_live_vectors(records: list[Record], vectors) -> int:
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
    live = set(
        Record.objects.select_for_update(no_key=True)
        .filter(pk__in=[r.pk for r in records], deleted_at__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    kept = [(r, v) for r, v in zip(records, vectors, strict=True) if r.pk in live]
    if kept:
        store_vectors([r for r, _ in kept], [v for _, v in kept])
    return len(kept)


def store_vectors(records: list[Record], vectors) -> None:
    """Store `vectors` (one unit vector per record, in order) as the records' current revisions'
    vectors. A revision's content never changes, so a vector already there for it is the same
    one (kept)."""
    RecordEmbedding.objects.bulk_create(
        [
            RecordEmbedding(
                record=r,
                subject_id=r.subject_id,
                revision=r.revision,
                model_id=embed.MODEL_ID,
                dim=embed.DIM,
                vector=embed.to_bytes(v),
            )
            for r, v in zip(records, vectors, strict=True)
        ],
        batch_size=2000,
        ignore_conflicts=True,
    )


def erase_embeddings(records: Iterable[Record]) -> None:
    """Derived-copy eraser: every revision's vector goes with the content."""
    RecordEmbedding.objects.filter(record__in=list(records)).delete()


def install() -> None:
    if settings.SPOKE_MEMORY_ENGINE not in ENGINE_POLICIES:
        raise ImproperlyConfigured(
            f"SPOKE_MEMORY_ENGINE must be one of {', '.join(ENGINE_POLICIES)}, "
            f"not {settings.SPOKE_MEMORY_ENGINE!r}"
        )
    if erase_embeddings not in derived.ERASERS:
        derived.ERASERS.append(erase_embeddings)
    if not enabled():
        return
    if not embed.available():
        raise ImproperlyConfigured(
            f"SPOKE_MEMORY_ENGINE={settings.SPOKE_MEMORY_ENGINE} needs the semantic extra: "
            "pip install '.[semantic]'"
        )
    if write_embeddings not in derived.WRITERS:
        derived.WRITERS.append(write_embeddings)
    if drain not in DRAINS:
        DRAINS.append(drain)


def backfill(subject: Subject, batch: int = 256) -> int:
    """Embed the live records of a subject that have no vector for their current revision."""
    missing = list(
        Record.objects.filter(subject=subject, deleted_at__isnull=True)
        .exclude(embeddings__revision=F("revision"))
        .order_by("record_id")
    )
    for i in range(0, len(missing), batch):
        embed_now([r for r in missing[i : i + batch] if r.text])
    return len(missing)


@dataclass(frozen=True)
class SubjectVectors:
    revision: tuple[int, int, int]  # the subject's revision, its vectors' count and newest id
    ids: list[str]  # record_id, ascending
    matrix: object  # numpy (len(ids), DIM) float32


_cache: OrderedDict[int, SubjectVectors] = OrderedDict()
_cache_lock = threading.Lock()


def subject_vectors(subject: Subject) -> SubjectVectors:
    """The vectors of the subject's live records at their current revision, at the subject's
    current revision (the caller reads `subject` in the same request)."""
    import numpy as np

    # Vectors are added by drains (ids are not committed in order: two drains may commit out of
    # order, hence the count beside the newest id) and erased with their record's content
    # (records.delete, which moves the subject's revision). One index-only range of
    # record_embedding_subject, no join.
    stored = RecordEmbedding.objects.filter(subject=subject).aggregate(
        n=Count("pk"), newest=Max("pk")
    )
    key = (subject.revision, stored["n"], stored["newest"] or 0)
    with _cache_lock:
        hit = _cache.get(subject.pk)
        if hit is not None and hit.revision == key:
            _cache.move_to_end(subject.pk)
            return hit
    rows = (
        RecordEmbedding.objects.filter(
            subject=subject, record__deleted_at__isnull=True, revision=F("record__revision")
        )
        .order_by("record__record_id")
        .values_list("record__record_id", "vector")
    )
    ids, blobs = [], []
    for record_id, blob in rows.iterator(chunk_size=2000):
        ids.append(record_id)
        blobs.append(bytes(blob))
    matrix = (
        np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), embed.DIM)
        if ids
        else np.zeros((0, embed.DIM), dtype=np.float32)
    )
    vectors = SubjectVectors(key, ids, matrix)
    with _cache_lock:
        _cache[subject.pk] = vectors
        _cache.move_to_end(subject.pk)
        while len(_cache) > CACHE_SUBJECTS:
            _cache.popitem(last=False)
    return vectors


def semantic_ranking(
    subject: Subject,
    query_text: str,
    eligible_ids,
    top_n: int = hybrid.SEMANTIC_TOP_N,
    min_cosine: float = hybrid.MIN_COSINE,
) -> list[tuple[str, float]]:
    """The hybrid/1 cosine ranking of the subject's records that are in `eligible_ids` (a callable
    taking a list of record ids and returning the eligible subset: authorization ∩ filters),
    at most SEMANTIC_TOP_N, each at least MIN_COSINE from the query."""
    vectors = subject_vectors(subject)
    if not vectors.ids or not query_text.strip():
        return []
    query = embed.embed([query_text])[0]
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


install()


def _eligible_ids(eligible, flt, pks: dict[str, int]):
    """A callable: the eligible subset of some record ids (authorization ∩ filters), noting
    each one's pk in `pks`."""
    from memory.selectors.selection import matching

    def eligible_ids(ids: list[str]) -> list[str]:
        qs = eligible.filter(record_id__in=ids)
        if flt.cognition is None:
            rows = list(qs.values_list("record_id", "pk"))
        else:
            rows = [(r.record_id, r.pk) for r in matching(qs.only("record_id", "content"), flt)]
        pks.update(rows)
        return [record_id for record_id, _ in rows]

    return eligible_ids


def fused_ranking(
    subject: Subject, query_text: str, lexical: list[tuple[str, float]], eligible, flt
):
    """hybrid/1 for memory.recall: the lexical ranking (record_id, score) of engine/1 fused with
    the cosine ranking over `eligible` (the queryset of authorized ∩ filtered records of the
    subject, before any lexical narrowing). Returns the fused ranking and record_id → pk of the
    records the semantic side added."""
    pks: dict[str, int] = {}
    semantic = semantic_ranking(subject, query_text, _eligible_ids(eligible, flt, pks))
    return hybrid.fuse(lexical, semantic), pks


def fused_ranking_2(
    subject: Subject,
    query_text: str,
    lexical: list[tuple[str, float]],
    terms: list[str],
    eligible,
    flt,
):
    """hybrid/2 for memory.recall: the head of the engine/2 ranking fused with the cosine
    ranking over `eligible`. Returns the fused ranking, record_id → pk of the records the
    semantic side brought, and how many of those are not lexical matches (to add to the
    lexical total: eligible = lexical matches ∪ the semantic side)."""
    from memory.models import RecordTerm

    pks: dict[str, int] = {}
    semantic = semantic_ranking(
        subject,
        query_text,
        _eligible_ids(eligible, flt, pks),
        top_n=hybrid2.SEMANTIC_TOP_N,
        min_cosine=hybrid2.MIN_COSINE,
    )
    in_head = {record_id for record_id, _ in lexical}
    outside = [pks[record_id] for record_id, _ in semantic if record_id not in in_head]
    matched = (
        set(
            RecordTerm.objects.filter(record_id__in=outside, term__in=terms).values_list(
                "record_id", flat=True
            )
        )
        if outside
        else set()
    )
    extra = sum(1 for pk in outside if pk not in matched)
    return hybrid2.fuse2(lexical, semantic), pks, extra
