"""The availability probe of the memory family: `MemoryPorts.as_memory(adapter)` answers the
adapter as the typed `MemoryPort` when it serves spoke-memory, else None (as
`MemoryPorts.asMemory()` in the TypeScript client and `MemoryPorts::as_memory()` in the Rust
crate). An adapter serves the family when its manifest (the `HostCapabilityManifest` of
`GET /v1/manifest`) has the role `memory-provider` and the `spoke-memory` capability, and it has
every method of the port (`records_get`, `recall`, ... one per op)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack, cast

import httpx

from spoke_memory_client._client import MemoryClient, Options
from spoke_memory_client.errors import ConnectionFailed, error_from
from spoke_memory_client.types import OPS, MemoryPort

# MemoryPort's methods: memory.records.get -> records_get.
PORT_METHODS = tuple("_".join(name.split(".")[1:]) for name in OPS)


class MemoryPorts:
    """The probes of the memory family (static methods only)."""

    CAPABILITY = "spoke-memory"
    ROLE = "memory-provider"

    @staticmethod
    def serves(manifest: object) -> bool:
        """Whether a manifest (`{"manifest": {...}}` as /v1/manifest answers, or the inner
        object) names the role `memory-provider` and the `spoke-memory` capability."""
        if isinstance(manifest, dict) and isinstance(manifest.get("manifest"), dict):
            manifest = manifest["manifest"]
        if not isinstance(manifest, dict):
            return False
        capabilities = manifest.get("capabilities")
        return (
            manifest.get("role") == MemoryPorts.ROLE
            and isinstance(capabilities, list)
            and MemoryPorts.CAPABILITY in capabilities
        )

    @staticmethod
    def as_memory(adapter: object, manifest: object = None) -> MemoryPort[Any] | None:
        """`adapter` as a `MemoryPort` when it serves the family, else None. Its manifest is
        `manifest` when given, else the adapter's own `manifest` (an attribute, or a method taking
        no argument); an adapter without one does not serve the family. It must also have every
        method of the port."""
        if manifest is None:
            own = getattr(adapter, "manifest", None)
            manifest = own() if callable(own) else own
        if not MemoryPorts.serves(manifest):
            return None
        if not all(callable(getattr(adapter, name, None)) for name in PORT_METHODS):
            return None
        return cast(MemoryPort[Any], adapter)

    @staticmethod
    def manifest(base_url: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """The provider's manifest (`GET /v1/manifest`, no token): `{"manifest": {...}}`."""
        try:
            response = httpx.get(base_url.rstrip("/") + "/v1/manifest", timeout=timeout)
        except httpx.TransportError as exc:
            name = type(exc).__name__
            raise ConnectionFailed(
                "connection_failed", None, f"no answer from the provider ({name})"
            ) from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict):
            raise error_from(response.status_code, body)
        return cast(dict[str, Any], body)

    @staticmethod
    def probe(
        base_url: str,
        token: str,
        capabilities: Iterable[str] | None = None,
        **options: Unpack[Options],
    ) -> MemoryClient | None:
        """A client of the provider at `base_url` when its manifest says it serves the family,
        None when it does not; raises when no manifest could be read."""
        if not MemoryPorts.serves(MemoryPorts.manifest(base_url)):
            return None
        return MemoryClient(base_url, token, capabilities, **options)
