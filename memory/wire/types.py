"""The wire types (a TypedDict per model, per request and per answer of every op; `OPS`;
`MemoryPort`), generated from the JSON Schemas into the Python client's distribution
(`clients/python/spoke_memory_client/types.py`, by `python -m tools.codegen.wire`) and
re-exported here, so the provider and the client type the wire with one module
(docs/decisions/generated-types-home.md). The provider declares `spoke-memory-client` as a
dependency; that module imports nothing but `typing`."""

from spoke_memory_client.types import *  # noqa: F403 (the re-export is the point)
from spoke_memory_client.types import __all__ as __all__
