"""The errors of the wire: `WireError` (memory/wire/error_base.py), one class per code of the
contract (generated into memory/wire/error_codes.py from memory/wire/schemas/errors.json, with
the status table), and the three raisers whose message is built from their details. Raise the
class named after the code, never a code string: `raise RevisionConflict("…", current_revision=3)`.
Messages are for people and never echo stored memory content or request content."""

from typing import Any

from memory.wire.error_base import WireError
from memory.wire.error_codes import *  # noqa: F403 - the generated class per code
from memory.wire.error_codes import (
    ERRORS,
    EVERY_OP,
    STATUS,
    InvalidInput,
    NotFound,
    PermissionDenied,
)

__all__ = ["ERRORS", "EVERY_OP", "STATUS", "WireError", "invalid", "not_found", "permission_denied"]
__all__ += [cls.__name__ for cls in ERRORS.values()]


def not_found(resource: str) -> NotFound:
    return NotFound(
        f"No such {resource.replace('_', ' ')} is visible to the caller.", resource=resource
    )


def permission_denied(capability: str) -> PermissionDenied:
    return PermissionDenied(
        f"No effective grant gives the caller '{capability}' on this object.",
        capability=capability,
    )


def invalid(reason: str, field: str, message: str, **details: Any) -> InvalidInput:
    return InvalidInput(message, reason=reason, field=field, **details)
