"""One module per aggregate. Principal ids inside memory objects (authors, reviewers, capturers)
are kept as strings, not foreign keys: an import keeps them from another provider (docs/protocol.md#ops)."""

from .candidates import Candidate
from .embeddings import PendingEmbedding, RecordEmbedding, VectorGeneration
from .grants import Grant
from .principals import ApiToken, Principal, WireSession
from .profiles import ProfileDocument
from .receipts import IdempotencyKey, Job, JobHeartbeat, Receipt
from .records import Record, RecordRevision
from .reflections import Reflection
from .spaces import Space, Subject
from .terms import RecordTerm
from .transfer import Export, ExportChunk, Import, ImportChunk

__all__ = [
    "ApiToken",
    "Candidate",
    "Export",
    "ExportChunk",
    "Grant",
    "IdempotencyKey",
    "Import",
    "ImportChunk",
    "Job",
    "JobHeartbeat",
    "PendingEmbedding",
    "Principal",
    "ProfileDocument",
    "Receipt",
    "Record",
    "RecordEmbedding",
    "RecordRevision",
    "RecordTerm",
    "Reflection",
    "Space",
    "Subject",
    "VectorGeneration",
    "WireSession",
]
