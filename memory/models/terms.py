"""Stored term statistics of record text (engine/2 and hybrid/2 recall, memory.engine.lexical):
one row per (record, term) of the record's current text — the term frequency, the record's token
count and its creation time (both copied so the ranking query reads the term index alone).
A derived copy of content: written in the same transaction as every write that changes text,
erased with it on delete (memory.services.term_store). Only the current revision has rows:
recall ranks current text only. Per-subject counts (N, Σ|d|, df) are not stored: the ranking
query aggregates them from these rows over the caller's eligible records, so concurrent writers
never update a shared row."""

from django.db import models

from .scoped import SpaceScoped, copied_space


class RecordTerm(SpaceScoped):
    space_parent = "record"
    space = copied_space()
    # db_index=False: record_term_unique's index (record, term) serves lookups by record.
    record = models.ForeignKey(
        "memory.Record", on_delete=models.CASCADE, related_name="terms", db_index=False
    )
    subject = models.ForeignKey(
        "memory.Subject", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    term = models.CharField(max_length=200)
    tf = models.PositiveIntegerField()
    length = models.PositiveIntegerField()  # the record's token count
    created_ms = models.BigIntegerField()  # the record's created_at, ms since the epoch

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["record", "term", "space"], name="record_term_unique"),
        ]
        indexes = [
            # The ranking query: one index range per query term, covering (PostgreSQL) what it
            # reads, space included (every statement names it), so it never visits the heap.
            models.Index(
                fields=["subject", "space", "term"],
                include=["record", "tf", "length", "created_ms"],
                name="record_term_lookup_space",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.record_id}:{self.term}"
