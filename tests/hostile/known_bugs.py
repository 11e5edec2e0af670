"""Inputs that reach a bug already found by this suite and reported (not fixed here: the fixes
belong to `memory/dispatch` and `memory/ops`). The schemathesis sweep leaves these inputs out;
`test_known_bugs.py` reproduces each one as a strict xfail, so when a fix lands the xfail
turns into a failure and whoever fixed it removes the predicate here with it."""
from __future__ import annotations

import math

from memory.timeutil import parse

# RFC 7493 (I-JSON) §2.2: integers outside ±(2**53 - 1) are not interoperable; RFC 8785, used
# for payload digests, refuses them (IntegerDomainError), which today surfaces as a 500.
SAFE_INTEGER = 2**53 - 1

# Paths whose undocumented methods answer a 500 (DRF OPTIONS handler on the wire views) or a
# non-envelope body (plain Django views: CSRF 403 HTML, empty 405).
METHOD_BUG_PATHS = {"/v1/connect", "/v1/disconnect", "/v1/manifest", "/v1/openapi.json", "/healthz", "/readyz"}


def unsafe_number(node) -> bool:
    if isinstance(node, bool):
        return False
    if isinstance(node, int):
        return abs(node) > SAFE_INTEGER
    if isinstance(node, float):
        return not math.isfinite(node)
    if isinstance(node, dict):
        return any(unsafe_number(v) for v in node.values())
    if isinstance(node, list):
        return any(unsafe_number(v) for v in node)
    return False


def unparseable_expires_at(body) -> bool:
    value = body.get("expires_at") if isinstance(body, dict) else None
    if not isinstance(value, str):
        return False
    try:
        parse(value)
    except (ValueError, OverflowError):
        return True
    return False


def lone_surrogate(node) -> bool:
    if isinstance(node, str):
        return any("\ud800" <= ch <= "\udfff" for ch in node)
    if isinstance(node, dict):
        return any(lone_surrogate(k) or lone_surrogate(v) for k, v in node.items())
    if isinstance(node, list):
        return any(lone_surrogate(v) for v in node)
    return False


def hits_known_bug(body) -> bool:
    return unsafe_number(body) or unparseable_expires_at(body) or lone_surrogate(body)
