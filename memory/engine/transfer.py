"""Transfer policy (docs/protocol.md#ops, #engine-policy): the object order of a bundle, partitioning into chunks of at
most `export_chunk_bytes` of canonical JSON, the chunk and bundle digests, and translation of
older format versions. Pure and deterministic: no Django, no I/O.

A chunk's canonical JSON is the RFC 8785 array of its objects, so its size is known from the
objects' own canonical forms: 2 brackets + the objects + one comma between each two. A single
object larger than the limit (impossible while content stays under `max_content_bytes`) goes
alone into its own chunk rather than being split."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memory.wire.canonical import canonical, digest, digest_bytes

FORMAT_VERSION = 1
TYPE_ORDER = ["subject", "record", "candidate", "profile_document", "reflection"]
TYPE_RANK = {t: i for i, t in enumerate(TYPE_ORDER)}


def object_key(obj: dict[str, Any]) -> tuple[Any, ...]:
    """The sort key of an export object: type rank, then id (codepoint order). A profile
    document's id is (subject_id, kind)."""
    data = obj["data"]
    kind = obj["type"]
    if kind == "subject":
        ident: tuple[Any, ...] = (data["subject_id"],)
    elif kind == "record":
        ident = (data["record_id"],)
    elif kind == "candidate":
        ident = (data["candidate_id"],)
    elif kind == "profile_document":
        ident = (data["subject_id"], data["kind"])
    else:
        ident = (data["reflection_id"],)
    return (TYPE_RANK[kind], ident)


_EVERY_OTHER = "*"  # stands for every id no rectangle names (ids never hold "*")
_SHARED = ("shared",)


def footprint_includes(current: list[dict[str, Any]], made: list[dict[str, Any]]) -> bool:
    """Does coverage `current` cover everything coverage `made` covers? Each is a union of
    rectangles {subject_ids, context_ids, shared} (None = every; memory.access.Coverage.footprint).
    Exact, not per grant: the subject and placement ids the rectangles name cut the space into
    finitely many classes (each named id, plus one class for every other id, plus the shared
    placement), and inclusion is decided on one point of each."""

    def named(key: str) -> set[str]:
        return {i for r in current + made for i in (r[key] or [])} | {_EVERY_OTHER}

    def covers(rect: dict[str, Any], subject: str, place: tuple[Any, ...]) -> bool:
        if rect["subject_ids"] is not None and subject not in rect["subject_ids"]:
            return False
        if place == _SHARED:
            return bool(rect["shared"])
        return rect["context_ids"] is None or place[1] in rect["context_ids"]

    places = [("context", c) for c in named("context_ids")] + [_SHARED]
    return all(
        any(covers(r, subject, place) for r in current)
        for subject in named("subject_ids")
        for place in places
        if any(covers(r, subject, place) for r in made)
    )


def partition(
    objects: Iterable[dict[str, Any]],
    limit: int,
    encode: Callable[[dict[str, Any]], bytes] = canonical,
) -> Iterator[tuple[list[dict[str, Any]], bytes]]:
    """Group objects, in the order given, into chunks whose canonical JSON is at most `limit`
    bytes. Yields (objects, canonical bytes of the objects array). Always yields at least one
    chunk (an empty export is one empty chunk: a bundle has chunk_count >= 1). `encode` is an
    implementation of `canonical` (the same bytes), e.g. a faster one."""
    batch: list[dict[str, Any]] = []
    parts: list[bytes] = []
    size = 2
    yielded = False
    for obj in objects:
        body = encode(obj)
        extra = len(body) + (1 if parts else 0)
        if parts and size + extra > limit:
            yield batch, b"[" + b",".join(parts) + b"]"
            yielded = True
            batch, parts, size = [], [], 2
            extra = len(body)
        batch.append(obj)
        parts.append(body)
        size += extra
    if parts or not yielded:
        yield batch, b"[" + b",".join(parts) + b"]"


def chunk_digest(objects: list[dict[str, Any]]) -> str:
    """`"sha256:" + hex SHA-256 of RFC 8785 of the chunk's objects`."""
    return digest(objects)


def chunk_digest_of_bytes(body: bytes) -> str:
    return digest_bytes(body)


def bundle_digest(
    export_id: str,
    space_id: str,
    format_version: int,
    chunk_digests: list[str],
    object_counts: dict[str, int],
) -> str:
    return digest(
        {
            "export_id": export_id,
            "space_id": space_id,
            "format_version": format_version,
            "chunk_digests": list(chunk_digests),
            "object_counts": dict(object_counts),
        }
    )


def empty_counts() -> dict[str, int]:
    return {t: 0 for t in TYPE_ORDER}


# format_version -> function translating one object of that version to the next version.
# Version 1 is current; a future version 2 registers TRANSLATORS[1] here, and so on.
TRANSLATORS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class UnsupportedFormat(ValueError):
    pass


def translate(obj: dict[str, Any], format_version: int) -> dict[str, Any]:
    """Bring one export object from `format_version` up to FORMAT_VERSION."""
    version = format_version
    while version < FORMAT_VERSION:
        step = TRANSLATORS.get(version)
        if step is None:
            raise UnsupportedFormat(version)
        obj = step(obj)
        version += 1
    if version != FORMAT_VERSION:
        raise UnsupportedFormat(format_version)
    return obj
