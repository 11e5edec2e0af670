"""Admission: the one path every caller's request takes before an op's handler runs, whoever
the caller is (the HTTP edge, the console, management commands, benchmarks, the in-process
MemoryPort). The body arrives already parsed (the HTTP edge parses and size-checks it, gate 3's
first half); admission judges, in docs/protocol.md#dispatch's order:

  3. storability: no U+0000, no lone surrogate, no number outside I-JSON's exact range;
  4. capability: the op's flag (and `spoke-cognition` for a cognition filter) is negotiated;
  5. the op's request schema, and the range of every time the request carries (docs/protocol.md#identifiers: a
     grant's `expires_at`, the times of each content's cognition records, a cognition filter's
     time values), all `400 invalid_input` with `reason: "schema"`;
  6. the cognition grammar;
then the one judgement of the operations layer that needs no stored state and applies to every
op alike: each `extensions` map within `limits.max_extensions_bytes` (`422 INVALID_INPUT`).

Nothing reaches a handler that one caller would have refused and another accepted."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from itertools import accumulate
from typing import Any

from django.conf import settings

from memory.engine.cognition import TIME_DIMENSIONS, grammar_error, time_out_of_range
from memory.flags import COGNITION
from memory.observability.observe import refused_at_admission
from memory.wire.canonical import canonical
from memory.wire.error_codes import BadRequestDetailsErrorsItem as SchemaError
from memory.wire.errors import BadRequest, CapabilityMissing, WireError, invalid
from memory.wire.validation import (
    OpSpec,
    catalog,
    component_paths,
    request_errors,
    values_at,
)

TIME_MESSAGE = "must be an RFC 3339 time within 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z"


def capability_missing(required: str, negotiated: Iterable[str]) -> WireError:
    return CapabilityMissing(
        f"This request needs the '{required}' capability, which this session has not negotiated.",
        required=required,
        negotiated=sorted(negotiated),
    )


def admit(op: str, body: Mapping[str, Any], negotiated: Collection[str]) -> None:
    """Gates 3 (storability) to 6 for an op's parsed request body; raises the first WireError
    (counted in `memory_admission_refusals`, by op and code)."""
    try:
        _admit(op, body, negotiated)
    except WireError as exc:
        refused_at_admission(op, exc)
        raise


def _admit(op: str, body: Mapping[str, Any], negotiated: Collection[str]) -> None:
    depth = check_storable(body)
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
    check_depth(spec, body, depth)
    check_extensions(spec, body)


def time_errors(spec: OpSpec, body: Mapping[str, Any]) -> list[SchemaError]:
    """The client times of a schema-valid request that denote no instant in docs/protocol.md#identifiers's range
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
    """docs/protocol.md#identifiers: every extensions map of a request (its own and each item's) is at most
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


def check_storable(body: Mapping[str, Any]) -> int:
    """Gate 3's second half: refuse a body no store could hold (see `unstorable`), or one nested
    deeper than any request needs (`ENVELOPE_DEPTH` past limits.max_json_depth). Returns the
    body's depth. Nearly every body is judged from its JSON text at C speed (`_shape`); one
    that text cannot clear is walked (iteratively: no depth a parser accepts costs a recursion
    here or below) to find the first value to refuse."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_json_depth"]
    depth = _shape(body)
    if depth is not None and depth <= limit + ENVELOPE_DEPTH:
        return depth
    found = unstorable(body, limit + ENVELOPE_DEPTH, DEPTH_MESSAGE.format(limit=limit))
    if found is not None:
        path, message = found
        raise schema_error(path, message)
    return depth_of(body)


# JSON text: a string literal (unrolled, so the regex engine does not backtrack per character),
# a NUL as json.dumps escapes it, a number that may lie outside ±(2**53-1) (16 digits in a row,
# or an exponent), the brackets of a text without its strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_SUSPECT_TEXT = re.compile("\\\\u0000|[\ud800-\udfff]")
_SUSPECT_NUMBER = re.compile(r"[0-9]{16}|[0-9.][eE]")
_BRACKETS = re.compile(r"[\[\]{}]")


def _shape(body: Any) -> int | None:
    """The depth of a body whose JSON text shows no string or number `unstorable` would refuse,
    or None when the text cannot tell (then the walk decides). False alarms only cost the walk."""
    try:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None
    if _SUSPECT_TEXT.search(text):
        return None
    bare = _STRING.sub("", text)
    if _SUSPECT_NUMBER.search(bare):
        return None
    steps = (1 if c in "[{" else -1 for c in _BRACKETS.findall(bare))
    return max(accumulate(steps), default=0)


def schema_error(path: str, message: str) -> WireError:
    return BadRequest(
        "The request does not match the op's schema.",
        reason="schema",
        errors=[{"path": path, "message": message}],
    )


# How many levels a request's own structure may wrap a free-form value: the deepest is an import
# chunk's record (body, chunk, objects, item, data, content), 6 levels; the rest is slack.
ENVELOPE_DEPTH = 16
DEPTH_MESSAGE = "nests deeper than limits.max_json_depth ({limit}) allows"


def check_depth(spec: OpSpec, body: Mapping[str, Any], depth: int) -> None:
    """limits.max_json_depth: every content object (text, structured, cognition) and every
    extensions map of a request nests at most that many levels, itself counted as one (so
    `structured` and an extension's value may nest one level less). What a write stores must
    still export and import: an export wraps it six levels deeper, within ENVELOPE_DEPTH."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_json_depth"]
    if depth <= limit:
        return  # nothing inside is deeper than the whole (nearly every request)
    for name in ("Content", "ProfileContent", "Extensions"):
        for path in component_paths(spec, name):
            for pointer, value in values_at(body, path):
                check_value_depth(value, pointer, limit)


def check_value_depth(value: Any, pointer: str, limit: int) -> None:
    message = DEPTH_MESSAGE.format(limit=limit)
    found = unstorable(value, limit, message)
    if found is not None and found[1] == message:
        inner = "" if found[0] == "/" else found[0]
        raise schema_error((pointer.rstrip("/") + inner) or "/", message)


def depth_of(node: Any) -> int:
    """Levels of nesting: a scalar 0, an object or array 1 + its deepest member (iterative)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Iterable[Any] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if level > deepest:
            deepest = level
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


MAX_SAFE_INTEGER = 2**53 - 1
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def _bad_string(value: str) -> str | None:
    match = _BAD_CHARS.search(value)
    if match is None:
        return None
    if match.group() == "\x00":
        return "must not contain the NUL character (U+0000)"
    return "must not contain a lone surrogate (U+D800-U+DFFF)"


def _scalar_problem(node: Any) -> str | None:
    if isinstance(node, str):
        return _bad_string(node)
    if isinstance(node, bool) or node is None:
        return None
    if isinstance(node, float):
        if node != node or node in (float("inf"), float("-inf")):  # only in-process callers
            return "must be a finite number"
        if abs(node) > MAX_SAFE_INTEGER:
            return "must be a number within ±(2**53-1)"
        return None
    if isinstance(node, int) and abs(node) > MAX_SAFE_INTEGER:
        return "must be an integer within ±(2**53-1)"
    return None


def _pointer(parents: list[Any], at: int) -> str:
    keys = []
    while at >= 0:
        at, key = parents[at]
        keys.append(str(key))
    return "/" + "/".join(reversed(keys)) if keys else "/"


def unstorable(
    node: Any, max_depth: int | None = None, depth_message: str = ""
) -> tuple[str, str] | None:
    """The first value no store (PostgreSQL text/jsonb) or RFC 8785 can hold: U+0000 or a lone
    surrogate in a string or member name, a number outside I-JSON's exact integer range (RFC
    7493) whatever its spelling: PostgreSQL's jsonb keeps 1e20 as the numeric
    100000000000000000000, which reads back as an integer RFC 8785 refuses. With `max_depth`,
    also the first object or array nested deeper than that. Refused at the edge on every
    database, so both stores stay identical. Returns (pointer, why). Iterative, depth first in
    document order; a pointer is built only for the value it reports."""
    # parents[i] = (index of the parent's entry, this value's key); -1 is the root
    parents: list[tuple[int, object]] = []
    stack: list[tuple[object, int, int]] = [(node, -1, 1)]  # (value, entry index, level)
    while stack:
        value, at, level = stack.pop()
        if isinstance(value, dict):
            if max_depth is not None and level > max_depth:
                return (_pointer(parents, at), depth_message)
            items = list(value.items())
            for key, _ in items:
                why = _bad_string(key)
                if why is not None:
                    return (_pointer(parents, at), why)
        elif isinstance(value, list):
            if max_depth is not None and level > max_depth:
                return (_pointer(parents, at), depth_message)
            items = list(enumerate(value))
        else:
            why = _scalar_problem(value)
            if why is not None:
                return (_pointer(parents, at), why)
            continue
        for key, child in reversed(items):
            if isinstance(child, (dict, list)) or _scalar_problem(child) is not None:
                parents.append((at, key))
                stack.append((child, len(parents) - 1, level + 1))
    return None
