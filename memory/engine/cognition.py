"""The cognition filter (SPEC §6.3): its grammar and its matching, in one place.

A record matches when at least one of its cognition entries satisfies every requirement; a
record without cognition (absent or `[]`) never matches. Times compare as instants (a time value
must carry an offset); numbers must be finite and booleans are not numbers; a missing member
never satisfies a requirement. `in` takes 1..256 strings."""

from __future__ import annotations

import math
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


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


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


def grammar_error(cognition_filter: dict) -> int | None:
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


def _lookup(entry: dict, dimension: str) -> Any:
    node: Any = entry
    for part in dimension.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _satisfies(entry: dict, req: dict) -> bool:
    dimension, op, value = req["dimension"], req["op"], req["value"]
    kind = GRAMMAR[dimension][1]
    actual = _lookup(entry, dimension)
    if actual is None:
        return False
    if kind == "string":
        return actual == value if op == "eq" else actual in value
    if kind == "number":
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return False
        return actual >= value if op == "gte" else actual <= value
    got, want = parse_time(actual), parse_time(value)
    if got is None or want is None:
        return False
    return got >= want if op == "gte" else got < want


def entry_matches(entry: Any, cognition_filter: dict) -> bool:
    return isinstance(entry, dict) and all(
        _satisfies(entry, r) for r in cognition_filter["require"]
    )


def content_matches(content: dict, cognition_filter: dict | None) -> bool:
    """Does this content pass the filter? No filter passes everything."""
    if cognition_filter is None:
        return True
    entries = content.get("cognition")
    if not entries:
        return False
    return any(entry_matches(e, cognition_filter) for e in entries)
