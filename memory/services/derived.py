"""Derived copies of record content (search vectors, embeddings) are written and erased here, so
every write path (records ops, review, import activation) keeps them in step with the content.
Engines that keep derived data register a writer and an eraser; the default lexical engine
needs none (PostgreSQL's full-text index is an expression index over Record.text)."""

from collections.abc import Callable, Iterable

from memory.models import Record

WRITERS: list[Callable[[Iterable[Record]], None]] = []
ERASERS: list[Callable[[Iterable[Record]], None]] = []


def content_written(records: Iterable[Record]) -> None:
    """Call after records' content was created or changed, inside the write's transaction."""
    records = list(records)
    for writer in WRITERS:
        writer(records)


def content_erased(records: Iterable[Record]) -> None:
    """Call when records' content is erased (delete), inside the write's transaction."""
    records = list(records)
    for eraser in ERASERS:
        eraser(records)
