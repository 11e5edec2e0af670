"""Times on the wire are RFC 3339 UTC with `Z` and millisecond precision (SPEC §2.1).
Stored times are truncated to the millisecond when made, so what a client reads back, what an
export carries and what a cursor orders by are the same value."""

from datetime import UTC, datetime

from django.utils import timezone


def now() -> datetime:
    t = timezone.now()
    return t.replace(microsecond=(t.microsecond // 1000) * 1000)


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def parse(value: str) -> datetime:
    """Parse an RFC 3339 time (any offset, any fraction) to an aware UTC datetime, truncated to
    the millisecond. Raises ValueError on anything else."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        raise ValueError("time without an offset")
    parsed = parsed.astimezone(UTC)
    return parsed.replace(microsecond=(parsed.microsecond // 1000) * 1000)
