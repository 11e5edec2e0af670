"""Exports and staged imports (docs/protocol.md#model-memoryexportbundle, #model-memoryexportchunk, #ops transfer). Chunk bodies are stored as the
canonical JSON text of their objects, so digests are computed over exactly what is served."""

from django.db import models

from memory.ids import new_export_id, new_import_id

from .scoped import SpaceScoped, copied_space


class Export(SpaceScoped):
    """`coverage` is the creator's `export` coverage the export was made with (its footprint,
    memory.access.Coverage.footprint): exports.get answers only while the creator's current
    coverage includes it. `committed_at` starts the retention clock (limits.export_retention_s).
    `erasures` counts records erased in the space while the export was pending: a job whose
    snapshot predates one does not publish (memory.services.erasure). A withdrawn export (expired
    or erased) keeps its row, without chunks, and answers NOT_FOUND."""

    PENDING, READY, FAILED, WITHDRAWN = "pending", "ready", "failed", "withdrawn"

    export_id = models.CharField(primary_key=True, max_length=40, default=new_export_id)
    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="exports")
    principal = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="exports"
    )
    subject_ids = models.JSONField(null=True, blank=True)
    state = models.CharField(
        max_length=16,
        default=PENDING,
        choices=[(s, s) for s in (PENDING, READY, FAILED, WITHDRAWN)],
    )
    bundle = models.JSONField(null=True, blank=True)
    coverage = models.JSONField(null=True, blank=True)
    erasures = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    committed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "committed_at"], name="export_retention")]


class ExportChunk(SpaceScoped):
    space_parent = "export"
    space = copied_space()
    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    objects_json = models.TextField()
    digest = models.CharField(max_length=71)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["export", "ordinal", "space"], name="export_chunk_unique"
            )
        ]


class Import(SpaceScoped):
    STATES = [
        "staging",
        "verifying",
        "verified",
        "rejected",
        "activating",
        "activated",
        "discarded",
    ]

    import_id = models.CharField(primary_key=True, max_length=40, default=new_import_id)
    space = models.ForeignKey("memory.Space", on_delete=models.CASCADE, related_name="imports")
    principal = models.ForeignKey(
        "memory.Principal", on_delete=models.CASCADE, related_name="imports"
    )
    state = models.CharField(max_length=16, default="staging", choices=[(s, s) for s in STATES])
    bundle = models.JSONField()
    next_ordinal = models.PositiveIntegerField(default=0)
    failure = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()


class ImportChunk(SpaceScoped):
    space_parent = "imp"
    space = copied_space()
    imp = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    objects_json = models.TextField()
    digest = models.CharField(max_length=71)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["imp", "ordinal", "space"], name="import_chunk_unique")
        ]
