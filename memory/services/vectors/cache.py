"""The per-process vector cache recall scores against (memory.services.vectors.ranking).

Recall reads a subject's vectors through a per-process cache keyed on Subject.revision (which
moves on every change to the subject's records), on the subject's vector generation
(memory.models.VectorGeneration: every store of its vectors adds one, every erasure ERASED, in
the same transaction, whatever order vector ids commit in; one index probe) and on the model, so
the same stored state gives the same rows (in no set order: the cosine ranking breaks ties by
record id). When the key moves the cache reads only what moved and extends or trims its
matrix (`_refresh`). It holds exactly the subject's live records' current vectors, with each
record's pk, so for a caller who may read every live record (selection.whole_subject) the
semantic side needs no eligibility statement."""

from __future__ import annotations

import gc
import logging
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from memory.embedding import embed
from memory.models import (
    Subject,
)
from memory.selectors import recall as reads
from memory.services.vectors.store import ERASED, model_key

CACHE_SUBJECTS = 16
log = logging.getLogger("memory.embeddings")


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
    docs/decisions/vector-cache-after-a-write.md."""
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
        with _collector_paused():  # one int pair per live record (as `_load`)
            now = reads.live_revision_numbers(subject)
        if now != old.live:
            removed = old.live.keys() - now.keys()
            changed = {pk for pk, _ in now.items() - old.live.items()}  # new or revised
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
    records. The rows come with the cyclic garbage collector paused: they are tuples of
    integers, strings and bytes (no cycle to find), and the tens of thousands of them would set
    off collections that walk the whole process's objects (issue 49, the first recall)."""
    dim, model = key[2]
    with _collector_paused():
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block (process-wide), back on after it unless it was
    off already; reference counting frees as ever."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
