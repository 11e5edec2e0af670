"""spoke-memory-client: a typed Python client of the spoke-memory wire family.

from spoke_memory_client import MemoryClient
with MemoryClient("http://127.0.0.1:8000", token, capabilities=["spoke-memory"]) as client:
    client.describe()
"""

from spoke_memory_client import errors, types
from spoke_memory_client._client import AsyncMemoryClient, MemoryClient, new_idempotency_key
from spoke_memory_client._extra import ReceiptTimeout
from spoke_memory_client.errors import *  # noqa: F403  (SpokeError and one class per code)
from spoke_memory_client.errors import ERRORS, SpokeError

__all__ = [
    "AsyncMemoryClient",
    "ERRORS",
    "MemoryClient",
    "ReceiptTimeout",
    "SpokeError",
    "errors",
    "new_idempotency_key",
    "types",
    *(cls.__name__ for cls in ERRORS.values()),
]
__version__ = "0.1.0"
