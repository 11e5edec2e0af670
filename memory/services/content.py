"""Content admission (docs/protocol.md#authorization d, §2.8, §6.2): cognition records are checked first, then the
byte budget over the RFC 8785 encoding of every present member."""

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from memory.engine.cognition import time_out_of_range
from memory.wire.canonical import content_bytes
from memory.wire.errors import ContentTooLarge, WireError, invalid
from memory.wire.validation import catalog, schema_errors


def check_content(content: Mapping[str, Any], field: str = "content") -> int:
    """Validate record/candidate content; returns its byte size. Raises INVALID_INPUT or
    CONTENT_TOO_LARGE. `field` names where the content sits (e.g. `decision.fragments.1.content`)."""
    cognition = content.get("cognition")
    if cognition is not None:
        validator = catalog().component_validator("CognitionRecord")
        for index, entry in enumerate(cognition):
            if schema_errors(validator, entry) or any(
                time_out_of_range(t) for t in entry["times"].values()
            ):
                raise invalid(
                    "invalid_cognition_record",
                    f"{field}.cognition",
                    "A cognition entry is not a closed record with view 'recorded_at'.",
                    index=index,
                )
    return _within_budget(content, field)


def check_profile_content(content: Mapping[str, Any]) -> int:
    """Profile content is trusted author material: no cognition rules, only the byte budget."""
    return _within_budget(content)


def _within_budget(content: Mapping[str, Any], field: str | None = None) -> int:
    """The content's byte size (docs/protocol.md#content), or CONTENT_TOO_LARGE past max_content_bytes."""
    size = content_bytes(content)
    limit = settings.SPOKE_MEMORY_LIMITS["max_content_bytes"]
    if size > limit:
        err = ContentTooLarge(
            "The content is larger than limits.max_content_bytes.", limit=limit, size=size
        )
        if field is not None:
            err.details["field"] = field
        raise err
    return size


def check_content_at(content: Mapping[str, Any], **where: int) -> None:
    """check_content with the protocol's field names (`content.cognition`), plus which item or fragment
    of the request it was (`item_index`, `fragment_index`) so a client can find it."""
    try:
        check_content(content)
    except WireError as err:
        err.details.update(where)
        raise
