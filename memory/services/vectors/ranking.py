"""The cosine side of the hybrid engines (memory.services.recall_engines.fused): the query's
nearest records among those the caller may read, from the subject's cached vectors
(memory.services.vectors.cache), and its fusion with the lexical head. The policy itself is
`memory.engine.hybrid3` (its cosine ranking `memory.engine.hybrid`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

from memory.embedding import embed
from memory.engine import hybrid
from memory.models import (
    Subject,
)
from memory.selectors import recall as reads
from memory.services.vectors.cache import SubjectVectors, subject_vectors

log = logging.getLogger("memory.embeddings")


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
