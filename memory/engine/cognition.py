"""The cognition filter (docs/protocol.md#cognition-filter): its grammar and its matching, in one place.

A record matches when at least one of its cognition entries satisfies every requirement; a
record without cognition (absent or `[]`) never matches. Times compare as instants (a time value
must carry an offset); numbers must be finite and booleans are not numbers; a missing member
never satisfies a requirement. `in` takes 1..256 strings."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

_EQ_IN = ("eq", "in")
GRAMMAR: dict[str, tuple[tuple[str, ...], str]] = {
    "type": (_EQ_IN, "string"),
    "attribution.holder": (_EQ_IN, "string"),
    "attribution.source": (_EQ_IN, "string"),
    "basis.kind": (_EQ_IN, "string"),
    "polarity": (_EQ_IN, "string"),
    "confidence": (("gte", "lte"), "number"),
    "intensity": (("gte", "lte"), "number"),
    "times.recorded_at": (("gte", "lt"), "time"),
    "times.occurred_at": (("gte", "lt"), "time"),
}


# The RFC 3339 spellings a client may send (the LooseTime schema): Z, z or a numeric offset,
# `T` or `t`, an optional fraction of 1..9 digits.
TIME_SHAPE = re.compile(
    r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
)
# docs/protocol.md#identifiers: every time a client sends denotes an instant in this range once normalized to UTC.
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def looks_like_time(value: Any) -> bool:
    """Is `value` spelled as an RFC 3339 time (whether or not it denotes a valid instant)?"""
    return isinstance(value, str) and TIME_SHAPE.fullmatch(value) is not None


def parse_time(value: Any) -> datetime | None:
    """The UTC instant a client time denotes, or None: not an RFC 3339 time with an offset, no
    such date (Feb 30, year 0), or outside EARLIEST..LATEST once normalized (an offset can push
    9999-12-31 or 0001-01-01 past what a datetime holds: that is None too, never an error)."""
    if not looks_like_time(value):
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text).astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    if not EARLIEST <= parsed <= LATEST:
        return None
    return parsed


def time_out_of_range(value: Any) -> bool:
    """Spelled as a time, but not an instant docs/protocol.md#identifiers admits (the edge's schema error)."""
    return looks_like_time(value) and parse_time(value) is None


TIME_DIMENSIONS = frozenset(d for d, (_, kind) in GRAMMAR.items() if kind == "time")


def _value_ok(kind: str, op: str, value: Any) -> bool:
    if kind == "string":
        if op == "in":
            return (
                isinstance(value, list)
                and 0 < len(value) <= 256
                and all(isinstance(v, str) for v in value)
            )
        return isinstance(value, str)
    if kind == "number":
        return (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and (isinstance(value, int) or math.isfinite(value))
        )
    return parse_time(value) is not None


def grammar_error(cognition_filter: dict[str, Any]) -> int | None:
    """Index of the first requirement this provider does not support, or None."""
    for index, req in enumerate(cognition_filter.get("require", [])):
        spec = GRAMMAR.get(req.get("dimension"))
        if (
            spec is None
            or req.get("op") not in spec[0]
            or not _value_ok(spec[1], req["op"], req.get("value"))
        ):
            return index
    return None


def _lookup(entry: dict[str, Any], dimension: str) -> Any:
    node: Any = entry
    for part in dimension.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _satisfies(entry: dict[str, Any], req: dict[str, Any]) -> bool:
    dimension, op, value = req["dimension"], req["op"], req["value"]
    kind = GRAMMAR[dimension][1]
    actual = _lookup(entry, dimension)
    if actual is None:
        return False
    if kind == "string":
        return bool(actual == value if op == "eq" else actual in value)
    if kind == "number":
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return False
        return bool(actual >= value if op == "gte" else actual <= value)
    got, want = parse_time(actual), parse_time(value)
    if got is None or want is None:
        return False
    return got >= want if op == "gte" else got < want


def entry_matches(entry: Any, cognition_filter: Mapping[str, Any]) -> bool:
    return isinstance(entry, dict) and all(
        _satisfies(entry, r) for r in cognition_filter["require"]
    )


def content_matches(content: Mapping[str, Any], cognition_filter: Mapping[str, Any] | None) -> bool:
    """Does this content pass the filter? No filter passes everything."""
    if cognition_filter is None:
        return True
    entries = content.get("cognition")
    if not entries:
        return False
    return any(entry_matches(e, cognition_filter) for e in entries)
