//! The availability probe: `MemoryPorts::as_memory(adapter)` answers the typed `MemoryPort` of an
//! adapter that serves the spoke-memory family, or `None`. An adapter serves it when its
//! manifest (the `HostCapabilityManifest` of `GET /v1/manifest`) has the role `memory-provider`
//! and the `spoke-memory` capability, and it implements the port.

use serde_json::Value;

use crate::client::{ClientOptions, MemoryClient, Token};
use crate::errors::SpokeError;
use crate::port::MemoryPort;

/// Something a host may hold that could serve the memory family.
pub trait Adapter<P: ?Sized> {
    /// The adapter's manifest: `{"manifest": {...}}` as `/v1/manifest` answers, or the inner
    /// object; `None` when it has none (then it does not serve the family).
    fn manifest(&self) -> Option<Value>;

    /// The adapter as a `MemoryPort`, when it implements one.
    fn memory_port(&self) -> Option<&dyn MemoryPort<P>> {
        None
    }
}

/// The probes of the memory family.
#[derive(Debug)]
pub struct MemoryPorts;

impl MemoryPorts {
    /// The capability flag of the family.
    pub const CAPABILITY: &'static str = "spoke-memory";
    /// The role of a memory provider's manifest.
    pub const ROLE: &'static str = "memory-provider";

    /// Whether a manifest (`{"manifest": {...}}` or the inner object) names the role
    /// `memory-provider` and the `spoke-memory` capability.
    pub fn serves(manifest: &Value) -> bool {
        let inner = manifest.get("manifest").unwrap_or(manifest);
        let role = inner.get("role").and_then(Value::as_str) == Some(Self::ROLE);
        let capable = inner
            .get("capabilities")
            .and_then(Value::as_array)
            .map_or(false, |caps| {
                caps.iter().any(|c| c.as_str() == Some(Self::CAPABILITY))
            });
        role && capable
    }

    /// The adapter's `MemoryPort` when it serves the family (its manifest says so and it
    /// implements the port), else `None`.
    pub fn as_memory<P: ?Sized>(adapter: &dyn Adapter<P>) -> Option<&dyn MemoryPort<P>> {
        let manifest = adapter.manifest()?;
        if !Self::serves(&manifest) {
            return None;
        }
        adapter.memory_port()
    }

    /// The provider at `base_url`, probed through its manifest: a client of it when it serves
    /// the family, `Ok(None)` when it answers a manifest that does not, an error when no manifest
    /// could be read.
    pub fn probe(base_url: &str, options: ClientOptions) -> Result<Option<MemoryClient>, SpokeError> {
        let client = MemoryClient::with_options(base_url, options);
        let manifest = client.manifest()?;
        Ok(if Self::serves(&manifest) {
            Some(client)
        } else {
            None
        })
    }
}

/// A client is an adapter: its manifest is the provider's (`None` when it cannot be read).
impl Adapter<Token> for MemoryClient {
    fn manifest(&self) -> Option<Value> {
        MemoryClient::manifest(self).ok()
    }

    fn memory_port(&self) -> Option<&dyn MemoryPort<Token>> {
        Some(self)
    }
}
