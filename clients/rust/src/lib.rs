//! spoke-memory-client: the `MemoryPort<P>` trait of the spoke-memory wire family (one typed
//! method per `memory.*` op, the principal explicit), its request and answer types generated
//! from the wire's JSON Schemas, and `MemoryClient`, its implementation over HTTP.
//!
//! ```no_run
//! use spoke_memory_client::prelude::*;
//!
//! let client = MemoryClient::with_options("http://127.0.0.1:8000", ClientOptions::capabilities(["spoke-memory"]));
//! let token = Token::new("spk_...");
//! let query = RecallRequestQuery::new("how does Ada like answers?");
//! let answer = client.recall(&token, &RecallRequest::new("demo", "user:ada", query))?;
//! for hit in answer.recall.results {
//!     println!("{} {}", hit.rank, hit.record.content.text);
//! }
//! # Ok::<(), SpokeError>(())
//! ```

pub mod client;
#[rustfmt::skip] // generated (tools/codegen/rust.py)
pub mod errors;
#[rustfmt::skip] // generated
pub mod port;
pub mod ports;
mod spoke_error;
#[rustfmt::skip] // generated
pub mod types;
pub mod wire;

pub use client::{new_idempotency_key, ClientOptions, MemoryClient, Token, VERSION};
pub use errors::{ErrorInfo, SpokeError};
pub use port::{MemoryPort, OpInfo, OPS};
pub use ports::{Adapter, MemoryPorts};
pub use wire::Pages;

/// Everything a caller needs: `use spoke_memory_client::prelude::*;`.
pub mod prelude {
    pub use crate::client::{ClientOptions, MemoryClient, Token};
    pub use crate::errors::*;
    pub use crate::port::MemoryPort;
    pub use crate::ports::{Adapter, MemoryPorts};
    pub use crate::types::*;
}
