"""RFC 8785 canonical JSON of export objects, fast: the bytes memory.wire.canonical makes, from
the C JSON encoder when that is provably the same.

For JSON made only of strings, integers within ±(2**53 − 1), booleans, null, lists and objects
whose keys are ASCII, RFC 8785's serialization is exactly `json.dumps(sort_keys=True,
ensure_ascii=False, separators=(",", ":"))` in UTF-8: the same escapes (`\\"`, `\\\\`, `\\b`,
`\\f`, `\\n`, `\\r`, `\\t`, other controls as lowercase `\\u00xx`, nothing else escaped), and
ASCII keys sort the same by code point as by UTF-16 code unit. Anything else (a float, a
non-ASCII key, a tuple, a huge integer, a lone surrogate) goes to the reference implementation,
which also raises its errors. tests/memory/async/test_transfer_scale.py holds the equality."""

from __future__ import annotations

import json
from typing import Any

from memory.wire.canonical import canonical as reference

_INT_MAX = 2**53 - 1
_encode = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def _plain(value: Any) -> bool:
    """Is `value` JSON the C encoder serializes exactly as RFC 8785 does? Iterative: a value
    stored before limits.max_json_depth existed may nest hundreds of levels (issue 26)."""
    stack = [value]
    while stack:
        value = stack.pop()
        t = type(value)
        if t is str or t is bool or value is None:
            continue
        if t is int:
            if not -_INT_MAX <= value <= _INT_MAX:
                return False
        elif t is dict:
            for key, item in value.items():
                if type(key) is not str or not key.isascii():
                    return False
                t = type(item)
                if not (t is str or t is bool or item is None):
                    stack.append(item)
        elif t is list:
            stack.extend(value)
        else:
            return False
    return True


def canonical(value: Any) -> bytes:
    """memory.wire.canonical.canonical(value), the same bytes (and the same errors)."""
    if _plain(value):
        try:
            return _encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: the reference raises its own error
    return reference(value)
