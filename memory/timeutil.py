"""Times on the wire are RFC 3339 UTC with `Z` and millisecond precision (docs/protocol.md#identifiers).
Stored times are truncated to the millisecond when made, so what a client reads back, what an
export carries and what a cursor orders by are the same value."""

from datetime import UTC, datetime
from typing import overload

from django.utils import timezone

from memory.engine.cognition import parse_time


def now() -> datetime:
    t = timezone.now()
    return t.replace(microsecond=(t.microsecond // 1000) * 1000)


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: None) -> None: ...
@overload
def iso(value: datetime | None) -> str | None: ...
def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def parse(value: str) -> datetime:
    """Parse an RFC 3339 time (any offset, any fraction) to an aware UTC datetime, truncated to
    the millisecond. Raises ValueError on anything else, a time outside docs/protocol.md#identifiers's range
    (0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z once normalized) included."""
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError("not an RFC 3339 time within 0001-01-01..9999-12-31 UTC")
    return parsed.replace(microsecond=(parsed.microsecond // 1000) * 1000)
