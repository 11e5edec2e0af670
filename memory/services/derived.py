"""Derived copies of record content (search vectors, embeddings) are written and erased here, so
every write path (records ops, review, import activation) keeps them in step with the content.
Engines that keep derived data register a writer and an eraser (memory.services.recall_engines:
engine/2's term rows, hybrid/6's term rows and vectors)."""

from collections.abc import Callable, Iterable

from memory.models import Record

Hook = Callable[[Iterable[Record]], None]

# In registration order; `register_writer` / `register_eraser` add to them (each hook once).
WRITERS: list[Hook] = []
ERASERS: list[Hook] = []


def register_writer(writer: Hook) -> None:
    """Keep `writer`'s copy in step with every content write from now on (once however often it
    is registered)."""
    if writer not in WRITERS:
        WRITERS.append(writer)


def register_eraser(eraser: Hook) -> None:
    """Erase `eraser`'s copy with every content erasure from now on (once however often it is
    registered)."""
    if eraser not in ERASERS:
        ERASERS.append(eraser)


def writes(writer: Hook) -> bool:
    """Whether `writer` is registered (its copy is kept up to date)."""
    return writer in WRITERS


def content_written(
    records: Iterable[Record], done: Iterable[Callable[[Iterable[Record]], None]] = ()
) -> None:
    """Call after records' content was created or changed, inside the write's transaction.
    `done`: writers whose rows the caller already wrote with the records (on PostgreSQL a new
    record's term rows go in the record's own statement: record_store.create_records)."""
    records, skip = list(records), set(done)
    for writer in WRITERS:
        if writer not in skip:
            writer(records)


def content_erased(records: Iterable[Record]) -> None:
    """Call when records' content is erased (delete), inside the write's transaction."""
    records = list(records)
    for eraser in ERASERS:
        eraser(records)
