"""RFC 8785 canonical JSON (via the `rfc8785` package) and the `sha256:` digests built on it."""

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785


def canonical(value: Any) -> bytes:
    return rfc8785.dumps(value)


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    return digest_bytes(canonical(value))


def content_bytes(content: Mapping[str, Any]) -> int:
    """Content bytes of docs/protocol.md#content: every present member counts, `"cognition": []` too."""
    return len(canonical(content))
