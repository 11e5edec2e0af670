"""Sentence embeddings of record content (hybrid/1 recall engine): a derived copy of content,
one row per (record, revision) so a reflection's pinned revision keeps its vector, made by a
worker after the write commits (the write queues a PendingEmbedding row in its transaction) and
erased with the content on delete (memory.services.hybrid_store)."""

from typing import Any

from django.db import models

from .scoped import SpaceScoped, copied_space


class RecordEmbedding(SpaceScoped):
    space_parent = "record"
    space = copied_space()
    record = models.ForeignKey("memory.Record", on_delete=models.CASCADE, related_name="embeddings")
    # The record's subject, copied so recall reads a subject's vectors without a join over
    # every vector of the space (the cache's key is VectorGeneration since 0021). The index
    # holds space_id too, which every statement names (docs/scaling.md).
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    revision = models.PositiveBigIntegerField()
    model_id = models.CharField(max_length=64)
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()  # little-endian float32, unit length

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["record", "revision", "model_id", "space"], name="record_embedding_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["subject", "space", "id"], name="record_embedding_subject_space")
        ]

    def __str__(self) -> str:
        return f"{self.record_id}@{self.revision}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.subject_id is None:  # the subject is always the record's
            self.subject_id = self.record.subject_id
        super().save(*args, **kwargs)


class PendingEmbedding(SpaceScoped):
    """A record whose content (at `revision` or later) still needs its vector: the embedding
    backlog. Written in the write's transaction, removed by the worker that embeds it."""

    space_parent = "record"
    space = copied_space()

    record = models.OneToOneField(
        "memory.Record", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    revision = models.PositiveBigIntegerField()


class VectorGeneration(SpaceScoped):
    """How many times a subject's stored vectors changed: every statement that stores vectors
    (`hybrid_store.store_vectors`) adds one, one that erases them (`hybrid_store.erase_embeddings`)
    `hybrid_store.ERASED`, in its own transaction. Recall's per-process vector cache is keyed on it (with the subject's
    revision and the model): one primary-key-sized probe instead of counting the subject's
    vectors on every recall, and it moves whatever order vector ids commit in. A subject with
    no row has generation 0 (nothing stored since the row existed: a new subject)."""

    space = copied_space()
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    generation = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "space"], name="vector_generation_subject"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id}: {self.generation}"
