"""Storage side of the hybrid recall engine (hybrid/6): the derived embeddings of record content
(the copy `VECTORS` it declares) and the per-subject vector cache recall scores against. The
policy itself is `memory.engine.hybrid3` (its cosine side `memory.engine.hybrid`); the model that
makes the vectors is the setting `SPOKE_MEMORY_EMBED_MODEL` (memory.embedding.embed).

The front of memory.services.vectors, which holds the code by job: `queue` (the embedding
backlog, the worker's drain, `backfill`), `store` (the stored vectors, their erasure, the vector
generation), `cache` (the per-process vector cache) and `ranking` (the cosine side and its fusion
with the lexical head). Here: `VECTORS`, which takes from both the queue and the store, and the
names callers use. A function looked up here (`drain`, …) is the one in its module: patch it
there."""

from __future__ import annotations

from memory.embedding import embed
from memory.models import PendingEmbedding, RecordEmbedding
from memory.recall_contract import DerivedCopy
from memory.services.vectors.cache import (
    CACHE_SUBJECTS,
    LOOKUP_MAX,
    SubjectVectors,
    _cache,
    _changed,
    _refresh,
    _room,
    subject_vectors,
)
from memory.services.vectors.queue import (
    backfill,
    backlog,
    backlog_spaces,
    bulk_write_embeddings,
    drain,
    drain_backlog,
    embed_now,
    requeue_missing,
    write_embeddings,
)
from memory.services.vectors.ranking import fused_head, semantic_ranking, semantic_side
from memory.services.vectors.store import (
    ERASED,
    describe,
    enabled,
    erase_embeddings,
    erase_space_embeddings,
    model_key,
    needs,
    store_live_vectors,
    store_vectors,
    vectors_changed,
)

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

__all__ = [
    "CACHE_SUBJECTS",
    "ERASED",
    "LOOKUP_MAX",
    "VECTORS",
    "SubjectVectors",
    "_cache",
    "_changed",
    "_refresh",
    "_room",
    "backfill",
    "backlog",
    "backlog_spaces",
    "bulk_write_embeddings",
    "describe",
    "drain",
    "drain_backlog",
    "embed",
    "embed_now",
    "enabled",
    "erase_embeddings",
    "erase_space_embeddings",
    "fused_head",
    "model_key",
    "needs",
    "requeue_missing",
    "semantic_ranking",
    "semantic_side",
    "store_live_vectors",
    "store_vectors",
    "subject_vectors",
    "vectors_changed",
    "write_embeddings",
]
