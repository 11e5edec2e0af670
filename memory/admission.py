"""Admission: the one path every caller's request takes before an op's handler runs, whoever
the caller is (the HTTP edge, the console, management commands, benchmarks, the in-process
MemoryPort). The body arrives already parsed (the HTTP edge parses and size-checks it, gate 3's
first half); admission judges, in SPEC §1.4's order:

  3. storability: no U+0000, no lone surrogate, no number outside I-JSON's exact range;
  4. capability: the op's flag (and `spoke-cognition` for a cognition filter) is negotiated;
  5. the op's request schema, and the range of every time the request carries (SPEC §2.1: a
     grant's `expires_at`, the times of each content's cognition records, a cognition filter's
     time values), all `400 invalid_input` with `reason: "schema"`;
  6. the cognition grammar;
then the one judgement of the operations layer that needs no stored state and applies to every
op alike: each `extensions` map within `limits.max_extensions_bytes` (`422 INVALID_INPUT`).

Nothing reaches a handler that one caller would have refused and another accepted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from memory.engine.cognition import TIME_DIMENSIONS, grammar_error, time_out_of_range
from memory.flags import COGNITION
from memory.wire.canonical import canonical
from memory.wire.errors import BadRequest, CapabilityMissing, WireError, invalid
from memory.wire.validation import (
    OpSpec,
    SchemaError,
    catalog,
    component_paths,
    request_errors,
    values_at,
)

TIME_MESSAGE = "must be an RFC 3339 time within 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z"


def capability_missing(required: str, negotiated) -> WireError:
    return CapabilityMissing(
        f"This request needs the '{required}' capability, which this session has not negotiated.",
        required=required,
        negotiated=sorted(negotiated),
    )


def admit(op: str, body: Mapping[str, Any], negotiated) -> None:
    """Gates 3 (storability) to 6 for an op's parsed request body; raises the first WireError."""
    check_storable(body)
    spec = catalog().ops[op]
    if spec.flag not in negotiated:
        raise capability_missing(spec.flag, negotiated)
    if "cognition_filter" in body and COGNITION not in negotiated:
        raise capability_missing(COGNITION, negotiated)
    errors = request_errors(spec, body) or time_errors(spec, body)
    if errors:
        raise BadRequest(
            "The request does not match the op's schema.",
            reason="schema",
            errors=errors,
        )
    cf = body.get("cognition_filter")
    if cf is not None:
        index = grammar_error(cf)
        if index is not None:
            raise BadRequest(
                "The cognition filter names a dimension, operator or value this provider does not support.",
                reason="unsupported_cognition_requirement",
                requirement_index=index,
            )
    check_extensions(spec, body)


def time_errors(spec: OpSpec, body: Mapping[str, Any]) -> list[SchemaError]:
    """The client times of a schema-valid request that denote no instant in SPEC §2.1's range
    (an offset may push 9999-12-31 or 0001-01-01 out of it; year 0, Feb 30 never were)."""
    found: list[tuple[str, object]] = []
    for path in component_paths(spec, "LooseTime"):
        found += values_at(body, path)
    for path in component_paths(spec, "Content"):
        for pointer, content in values_at(body, path):
            for index, entry in enumerate(content.get("cognition") or []):
                times = entry.get("times") if isinstance(entry, dict) else None
                if isinstance(times, dict):
                    found += [
                        (f"{pointer}/cognition/{index}/times/{name}", value)
                        for name, value in times.items()
                    ]
    cf = body.get("cognition_filter")
    if isinstance(cf, dict):
        for index, req in enumerate(cf.get("require") or []):
            if req.get("dimension") in TIME_DIMENSIONS:
                found.append((f"/cognition_filter/require/{index}/value", req.get("value")))
    return [{"path": p, "message": TIME_MESSAGE} for p, v in found if time_out_of_range(v)]


def check_extensions(spec: OpSpec, body: Mapping[str, Any]) -> None:
    """SPEC §2.1: every extensions map of a request (its own and each item's) is at most
    limits.max_extensions_bytes of RFC 8785 JSON."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_extensions_bytes"]
    for path in component_paths(spec, "Extensions"):
        for pointer, extensions in values_at(body, path):
            size = len(canonical(extensions))
            if size > limit:
                raise invalid(
                    "extensions_too_large",
                    pointer.lstrip("/").replace("/", "."),
                    "An extensions map is larger than limits.max_extensions_bytes.",
                    limit=limit,
                    size=size,
                )


def check_storable(body: Mapping[str, Any]) -> None:
    """Gate 3's second half: refuse a body no store could hold (see `unstorable`)."""
    found = unstorable(body)
    if found is not None:
        path, message = found
        raise BadRequest(
            "The request does not match the op's schema.",
            reason="schema",
            errors=[{"path": path, "message": message}],
        )


MAX_SAFE_INTEGER = 2**53 - 1
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def _bad_string(value: str) -> str | None:
    match = _BAD_CHARS.search(value)
    if match is None:
        return None
    if match.group() == "\x00":
        return "must not contain the NUL character (U+0000)"
    return "must not contain a lone surrogate (U+D800-U+DFFF)"


def unstorable(node, path: str = "") -> tuple[str, str] | None:
    """The first value no store (PostgreSQL text/jsonb) or RFC 8785 can hold: U+0000 or a lone
    surrogate in a string or member name, a number outside I-JSON's exact integer range (RFC
    7493) whatever its spelling: PostgreSQL's jsonb keeps 1e20 as the numeric
    100000000000000000000, which reads back as an integer RFC 8785 refuses. Refused at the edge
    on every database, so both stores stay identical. Returns (pointer, why)."""
    if isinstance(node, str):
        why = _bad_string(node)
        return None if why is None else (path or "/", why)
    if isinstance(node, bool) or node is None:
        return None
    if isinstance(node, float):
        if node != node or node in (float("inf"), float("-inf")):  # only in-process callers
            return (path or "/", "must be a finite number")
        if abs(node) > MAX_SAFE_INTEGER:
            return (path or "/", "must be a number within ±(2**53-1)")
        return None
    if isinstance(node, int):
        if abs(node) > MAX_SAFE_INTEGER:
            return (path or "/", "must be an integer within ±(2**53-1)")
        return None
    if isinstance(node, dict):
        for key, value in node.items():
            why = _bad_string(key)
            if why is not None:
                return (path or "/", why)
            found = unstorable(value, f"{path}/{key}")
            if found is not None:
                return found
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found = unstorable(value, f"{path}/{index}")
            if found is not None:
                return found
    return None
