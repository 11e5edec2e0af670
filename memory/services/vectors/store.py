"""The stored vectors of record content (hybrid/6's derived copy, memory.services.hybrid_store):
storing a batch under the delete's row locks, erasing them with the content, and the subject's
vector generation every store and erasure moves (`ERASED`: what an erasure adds), which the
vector cache (memory.services.vectors.cache) is keyed on. Each vector is labelled with the model
that made it (`model_key`). Also what the engine declares of the embedder: `enabled`, `needs`,
`describe`."""

from __future__ import annotations

from collections.abc import Iterable

from memory import statements
from memory.embedding import embed
from memory.models import (
    PendingEmbedding,
    Record,
    RecordEmbedding,
    Space,
    VectorGeneration,
)
from memory.models.scoped import by_space


def enabled() -> bool:
    """The configured engine ranks with embeddings (hybrid/6, or a registered engine that
    declares it)."""
    from memory import recall_contract as registry  # the served engines' table

    try:
        return registry.current().embedder
    except Exception:  # noqa: BLE001 - an unknown policy embeds nothing (start-up refuses it)
        return False


def model_key() -> str:
    return embed.identity().key


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
