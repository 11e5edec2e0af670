"""One module per op family; importing this package registers every handler."""

from memory.ops import (  # noqa: F401
    candidates,
    capture,
    grants,
    profile,
    recall,
    receipts,
    records,
    reflections,
    spaces,
    subjects,
    transfer,
)
